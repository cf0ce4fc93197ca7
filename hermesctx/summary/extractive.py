"""The extractive summarizer: no model, deterministic, offline (the default).

It fills the 13 sections of the handoff template from the ledgers of the middle turns
(:mod:`hermesctx.summary.ledger`): files with their last change, commands with their first
failure and last outcome, errors (open in Blocked, resolved in Critical Context), the user asks
verbatim, decisions, todo items and the next step.

Held to its budget: the whole summary, with the fixed prefix every summary starts with, is
measured with the tokenizer ``compress`` uses for the budget (``tokens.rough_text``). Each section
gets a share of the budget by weight; what a section leaves unused goes to the most valuable
remaining items; the lowest-value items are the ones left out. A previous summary (given, or
found among the turns) is merged by key (path, command, error), so repeated compaction converges
instead of growing. ``focus`` raises the value of the items that name its words.

The latest ask is kept whole. The task snapshot (Hermes's, grafted by ``compress`` onto every
summary) holds it verbatim only when it is short (at most ``SNAPSHOT_CHARS`` characters) and needs
no escape in its quoted form; any other latest ask (a long slash-command prompt, an ask with both
kinds of quote) is written once more, whole, under Pending User Asks, whitespace folded as the
snapshot folds it. It has room of its own: it does not take the share the middle's size allows the
ledger items (``room_cap``), only room the budget still has, and the ledger items keep the rest of
the budget. An ask longer than ``ASK_SHARE`` of the budget's room (what the budget leaves beside the
prefix, the template and the snapshot) would crowd out the ledgers or break the budget: it keeps its
head and tail, with a marker saying how many characters were left out. No ask is listed twice
among the pending asks: the first one is the goal, the latest one the snapshot's or its own line.
In the next round a previous summary's latest ask stays the latest while the new turns ask
nothing, and is an earlier ask once they do.
"""

from __future__ import annotations

from hermesctx import lazyre, tokens
from hermesctx.record import replace
from hermesctx.redact import redact
from hermesctx.summary import SummaryRequest
from hermesctx.summary.ledger import READ_ONLY, FileEntry, Ledgers, common_root, extract, longest, one_line
from hermesctx.summary.prompt import SECTIONS, SNAPSHOT_CHARS, latest_user_ask, task_snapshot
from hermesctx.summary.text import (
    IN_PROGRESS_HEADING,
    PENDING_ASKS_HEADING,
    REMAINING_WORK_HEADING,
    TASK_HEADING,
    folded,
    with_summary_prefix,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

GOAL, CONSTRAINTS, ACTIONS, STATE, BLOCKED, DECISIONS, RESOLVED, FILES, CRITICAL = (
    "## Goal", "## Constraints & Preferences", "## Completed Actions", "## Active State", "## Blocked",
    "## Key Decisions", "## Resolved Questions", "## Relevant Files", "## Critical Context")
# a section's share of the budget, and the base value of its items
WEIGHTS = {GOAL: 3, CONSTRAINTS: 5, ACTIONS: 9, STATE: 4, IN_PROGRESS_HEADING: 4, BLOCKED: 8, DECISIONS: 8,
           RESOLVED: 3, PENDING_ASKS_HEADING: 5, REMAINING_WORK_HEADING: 4, FILES: 12, CRITICAL: 9}
_NUMBERED_SECTIONS = {ACTIONS}
_SINGLE = {GOAL, IN_PROGRESS_HEADING}  # a new value replaces the previous one
_ROOT_LINE = lazyre.compile(r"^Paths are relative to `([^`]+)`")
_ITEM_MARK = lazyre.compile(r"^(?:\d+\.\s+|- )")
_NUMBER_MARK = lazyre.compile(r"^\d+\.\s+")
_FOCUS_WORD = lazyre.compile(r"[\w./-]{4,}")
_KEY = lazyre.compile(r"^(?:\d+\.\s+|- )(?:Resolved error: |\w+ )?`([^`]+)`")
_PREVIOUS_DISCOUNT = 0.8
AUTO_FOCUS_HEADER = "Recent user focus:"  # what compress's automatic topic starts with
ITEM_RATIO = 0.25  # the items take at most this share of the middle's own characters
ITEM_FLOOR = 600  # ... but never less than this many
TINY_ROOM = 400  # characters of items when the budget cannot hold even the template
_EMPTY = {"None.", "None", "Unknown.", "None recorded."}
GOAL_MIN_CHARS = 20  # a goal is a sentence: shorter replies ("2", "yes") are not one
_COMMAND_NAME = lazyre.compile(r"^[*/$!]?[\w:.-]+$")  # a bare command name (`*workflow-init`, `/review`)
SHORT_SENTENCE = 120  # a decision or constraint kept short: its head, where the claim sits
FINAL_SEPARATOR = " ⏎ "  # between the added lines of a file's last change
LATEST_ASK_LABEL = "- Latest ask, verbatim: "
ASK_SHARE = 0.75  # the latest ask whole takes at most this share of the budget's room, else it is cut
ASK_HEAD = 2 / 3  # ... keeping this share of what it may take from its start, the rest from its end


class _Item:
    __slots__ = ("section", "text", "value", "key", "short")

    def __init__(self, section: str, text: str, value: float, key: str | None = None, short: str | None = None):
        self.section, self.text, self.value, self.key = section, text, value, key or text
        self.short = short if short and len(short) < len(text) else None  # used when the full line does not fit


def _sections(summary: str | None) -> dict[str, list[str]]:
    """A summary body's sections as lists of lines (empty placeholders dropped)."""
    out: dict[str, list[str]] = {}
    current = None
    for line in (summary or "").splitlines():
        if line.startswith("## "):
            current = line.strip()
            out[current] = []
        elif current and line.strip() and line.strip() not in _EMPTY:
            out[current].append(line.rstrip())
    return out


def _item_key(line: str) -> str:
    found = _KEY.match(line)
    if found:
        return found.group(1)
    return _ITEM_MARK.sub("", line).split(" — ", 1)[0]


def _focus_words(focus: str | None) -> list[str]:
    """The words of a focus the user gave; none for compress's automatic topic (its recent asks,
    which the ledgers favour already by recency)."""
    if not focus or focus.startswith(AUTO_FOCUS_HEADER):
        return []
    return _FOCUS_WORD.findall(focus.lower())[:12]


def _rel(path: str, root: str) -> str:
    return path[len(root) + 1:] if root and path.startswith(root + "/") else path


def _by_shown_path(entries, root: str) -> list[FileEntry]:
    """One entry per path as shown: an absolute path and the same file named relative (in a
    command) are one file, their counts added, the latest change and size kept."""
    out: dict[str, FileEntry] = {}
    suffixes: dict[str, str] = {}  # a relative path -> the shown path of an absolute one ending in it
    for f in sorted(entries, key=lambda e: not e.path.startswith("/")):  # absolute ones first
        shown = _rel(f.path, root)
        if not f.path.startswith("/"):
            shown = suffixes.get(f.path, shown)
        else:
            parts = f.path.split("/")
            for k in range(max(1, len(parts) - 4), len(parts)):
                suffixes.setdefault("/".join(parts[k:]), shown)
        seen = out.get(shown)
        if seen is None:
            out[shown] = replace(f, path=shown)
            continue
        later = f if f.last >= seen.last else seen
        out[shown] = FileEntry(shown, seen.reads + f.reads, seen.edits + f.edits, seen.created or f.created,
                               later.deleted, later.change or seen.change or f.change,
                               later.size or seen.size or f.size, max(seen.last, f.last),
                               later.added if later.change else seen.added or f.added)
    return sorted(out.values(), key=lambda e: e.last)


def _items(led: Ledgers, root: str, goal_from_previous: bool) -> list[_Item]:
    """The ledgers as items; the latest ask is left to the snapshot or :func:`_latest_ask`."""
    items: list[_Item] = []
    steps = max(led.steps, 1)

    def add(section: str, text: str, bonus: float = 0.0, key: str | None = None, recency: int | None = None,
            short: str | None = None):
        value = WEIGHTS[section] + bonus + (2.0 * recency / steps if recency is not None else 0.0)
        items.append(_Item(section, text, value, key, short))

    asks = led.asks
    # each ask said once: the latest one by the snapshot or _latest_ask, the goal by the first substantive one
    said = [one_line(asks[-1][1], 400)] if asks else []
    goal = _goal(asks)
    if goal and not goal_from_previous:
        said.append(one_line(goal, 400))
        add(GOAL, said[-1], 10)
    seen = set(said)
    for pos, ask, answered in asks[:-1]:
        line = one_line(ask, 400)
        if line in seen:
            continue
        seen.add(line)
        if answered and "?" in ask:
            add(RESOLVED, f"- {line}", recency=pos)
        else:
            add(PENDING_ASKS_HEADING, f"- {line}", 1, recency=pos)
    for text in dict.fromkeys(led.constraints):
        add(CONSTRAINTS, f"- {text}", short=f"- {one_line(text, SHORT_SENTENCE)}")
    decisions = list(dict.fromkeys(led.decisions))
    for k, text in enumerate(decisions):  # the later ones first: a later diagnosis supersedes
        add(DECISIONS, f"- {text}", 2 * k / max(len(decisions), 1), short=f"- {one_line(text, SHORT_SENTENCE)}")
    said_decisions = set(decisions)
    for text in dict.fromkeys(led.reasoned):  # what only the reasoning said: no bonus for being recent
        if text not in said_decisions:
            add(DECISIONS, f"- {text}", short=f"- {one_line(text, SHORT_SENTENCE)}")
    files = _by_shown_path(led.files.values(), root)
    modified = [f for f in files if f.edits]
    for f in files:
        status = "deleted" if f.deleted else "created" if f.created else "modified" if f.edits else "read"
        counts = ", ".join(x for x in (f"{f.reads} reads" if f.reads else "", f"{f.edits} edits" if f.edits else "") if x)
        head = f"- `{f.path}` — {status}" + (f" ({counts})" if counts else "")
        text, short = head, None
        if f.added:  # its final state: the distinctive lines its last successful change added
            text = f"{head}; last change added: " + FINAL_SEPARATOR.join(f.added)
            short = f"{head}; last change added: " + one_line(longest(f.added), 160)  # its most distinctive line
        elif f.change:
            text += f"; last change: {f.change}"
        if f.size and not f.edits:
            text += f"; {f.size}"
        add(FILES, text, (6 if f.added else 2) if f.edits else -6, key=f.path, recency=f.last,
            short=short or f"- `{f.path}` — {status}")
    for c in led.commands.values():
        said_lines = [x for x in c.outcome_lines if x]
        if c.ok and not said_lines and c.first_failure == "" and READ_ONLY.match(c.command):
            continue  # what a read printed is in the facts, not in a line that names the command alone
        outcome = c.outcome.split(";", 1)[0] if said_lines else c.outcome  # the lines say the test counts
        shown = said_lines or ([c.last_line] if c.last_line else [])  # never listed without what it printed
        text = f"RUN `{c.command}` — {outcome}"
        if shown:
            text += ": " + " | ".join(f"`{x}`" for x in shown)
        if c.runs > 1:
            text += f" ({c.runs} runs)"
        add(ACTIONS, text, (3 if c.failure_line and c.ok else 1 if said_lines else -1) + (0 if c.ok else 1),
            key=c.command, recency=c.last,
            short=f"RUN `{one_line(c.command, 70)}` — {c.outcome.split(';', 1)[0]}"
                  + (f": `{one_line(shown[-1], 120)}`" if shown else ""))
    for key, failures, worked, pos in led.tried:  # what failed, then what worked: the pair
        text = f"TRIED `{key}` — failed with " + "; then ".join(f"`{x}`" for x in failures[-3:])
        add(ACTIONS, f"{text} → then worked: `{worked}`", 5, key=f"tried {key} {pos}", recency=pos,
            short=f"TRIED `{one_line(key, 70)}` — failed with `{one_line(failures[-1], 120)}` → then worked: "
                  f"`{one_line(worked, 120)}`")
    for line, pos in {line: pos for pos, line in led.facts}.items():  # each once, at its last reading
        add(CRITICAL, f"- Read: `{line}`", 0, key=line, recency=pos)
    for d in dict.fromkeys(led.delegations):
        add(ACTIONS, f"DELEGATE {d}", -1)
    for s in dict.fromkeys(led.searches):
        add(ACTIONS, f"SEARCH {s}", -6)
    for e in led.errors.values():
        if e.resolved:
            add(CRITICAL, f"- Resolved error: `{e.key}` — {e.text}", 1, key=e.key, recency=e.last,
                short=f"- Resolved error: `{one_line(e.key, 60)}` — {one_line(e.text, 70)}")
        else:
            add(BLOCKED, f"- `{e.key}` — {e.text}", 1, key=e.key, recency=e.last,
                short=f"- `{one_line(e.key, 60)}` — {one_line(e.text, 70)}")
    state = []
    if root:
        state.append(f"Paths are relative to `{root}`")
    if modified:
        names = ", ".join(f.path for f in modified[-12:])
        state.append(f"Modified files: {one_line(names, 600)}")
    if led.tests:
        state.append(f"Latest test result: {led.tests[-1]}")
    for k, line in enumerate(state):
        add(STATE, line, 5 - k, key=line.split(":", 1)[0].split("`", 1)[0])
    for text, status in led.todos.items():
        target = REMAINING_WORK_HEADING if status != "completed" else ACTIONS
        add(target, f"- [{status}] {text}" if target != ACTIONS else f"TODO done: {text}",
            1 if status == "in_progress" else -2 if status == "completed" else 0)
    if led.next_step:
        add(REMAINING_WORK_HEADING, f"- Next step: {led.next_step}", 3)
    if led.last_assistant:
        add(IN_PROGRESS_HEADING, one_line(led.last_assistant, 800), 4)
    for url in dict.fromkeys(led.urls):
        add(CRITICAL, f"- {url}", -3)
    return items


def _goal(asks: list) -> str | None:
    """The goal: the first substantive ask (a sentence, not a one-word reply or a bare command
    name such as ``2`` or ``*workflow-init``); none when no ask is one."""
    for _, ask, _ in asks:
        if _substantive(ask):
            return ask
    return None


def _substantive(ask: str) -> bool:
    text = ask.strip()
    return len(text) >= GOAL_MIN_CHARS and len(text.split()) >= 3 and not _COMMAND_NAME.match(text)


def _latest_ask(led: Ledgers, turns: list) -> str | None:
    """The latest ask, folded, when the task snapshot does not hold it verbatim (too long, quoted
    with escapes, or the snapshot quotes a later message that is no ask, such as injected text)."""
    if not led.asks:
        return None
    ask = folded(led.asks[-1][1])
    found = latest_user_ask(turns)
    if found and found[1] == ask and len(ask) <= SNAPSHOT_CHARS and repr(ask)[1:-1] == ask:
        return None
    return ask


def _ask_line(ask: str, limit: int) -> str:
    """The latest-ask line, at most ``limit`` characters: whole, or its head and tail around a
    marker when the ask alone is too big for its share of the budget."""
    line = LATEST_ASK_LABEL + ask
    if len(line) <= limit:
        return line
    marker = " …[{} characters of this ask left out: it alone is longer than the summary budget allows]… "
    keep = max(0, limit - len(LATEST_ASK_LABEL) - len(marker.format(len(ask))))
    head = int(keep * ASK_HEAD)
    tail = keep - head
    return LATEST_ASK_LABEL + ask[:head] + marker.format(len(ask) - keep) + (ask[-tail:] if tail else "")


def _previous_asks(lines: list[str], led: Ledgers) -> tuple[list[str], str | None]:
    """A previous summary's pending asks, and its latest ask while the turns ask nothing (it is
    still the latest). Once they ask, it is an earlier ask, cut as those are; an ask the turns
    ask again is left out (the snapshot or the new latest-ask line says it)."""
    again = f"- {one_line(led.asks[-1][1], 400)}" if led.asks else None
    out, latest = [], None
    for line in lines:
        if line.startswith(LATEST_ASK_LABEL):
            if not led.asks:
                latest = line[len(LATEST_ASK_LABEL):]
                continue
            line = "- " + one_line(line[len(LATEST_ASK_LABEL):], 400)
        if line != again:
            out.append(line)
    return out, latest


def _norm(key: str) -> str:
    """A merge key: its first 60 characters (a short form cuts a long command with an ellipsis)."""
    return key.rstrip("…")[:60]


def _previous_items(previous: dict[str, list[str]], current: list[_Item], succeeded: set) -> list[_Item]:
    """The previous summary's lines not superseded by a new item with the same key; a blocker whose
    command has succeeded since is kept as a resolved error."""
    keys = {(i.section if i.section != CRITICAL else BLOCKED, _norm(i.key)) for i in current}
    texts = {i.text for i in current}
    out = []
    for heading, lines in previous.items():
        if heading not in WEIGHTS or (heading in _SINGLE and any(i.section == heading for i in current)):
            continue
        for k, line in enumerate(lines):
            if heading == STATE and line.startswith(("- Modified files", "- Latest test result", "- Paths are")):
                continue
            text = _NUMBER_MARK.sub("", line) if heading in _NUMBERED_SECTIONS else line
            key = _norm(_item_key(line))
            section = heading
            if heading == BLOCKED and key in succeeded:
                section, text = CRITICAL, f"- Resolved error: {text[2:]}" if text.startswith("- ") else text
            if ((heading if heading != CRITICAL else BLOCKED), key) in keys or text in texts:
                continue
            keys.add((heading, key))
            value = WEIGHTS[section] * _PREVIOUS_DISCOUNT + (2 if heading == GOAL else 0) + k / (len(lines) * 10)
            out.append(_Item(section, text, value, key))
    return out


def _render(task: str, chosen: dict[str, list[str]]) -> str:
    parts = [f"{TASK_HEADING}\n{task}"]
    for heading, _ in SECTIONS[1:]:
        picked = chosen.get(heading) or []
        if heading in _NUMBERED_SECTIONS:
            body = "\n".join(f"{k}. {line}" for k, line in enumerate(picked, 1))
        elif heading == STATE:
            body = "\n".join(line if line.startswith("- ") else f"- {line}" for line in picked)
        else:
            body = "\n".join(picked)
        parts.append(f"{heading}\n{body or 'None.'}")
    return "\n\n".join(parts)


def fits(body: str, budget: int) -> bool:
    return tokens.rough_text(with_summary_prefix(body)) <= budget


def choose(task: str, items: list[_Item], budget: int, room_cap: int | None = None,
           latest_ask: str | None = None) -> str:
    """The summary body: the most valuable items that fit the budget, each section first within its
    share, the rest by value; never over budget (the prefix counted). ``room_cap``: at most this
    many characters of items (a small middle gets a small summary). ``latest_ask``: always kept,
    under Pending User Asks, outside ``room_cap`` (cut when over ``ASK_SHARE`` of the room)."""
    empty = _render(task, {})
    room = budget * 4 - len(with_summary_prefix(empty))
    if room <= 0:  # the template alone is over a tiny budget: a few facts anyway, the budget cannot hold
        room, budget = TINY_ROOM, 0
    ask_line = None
    if latest_ask is not None:  # its room comes from the budget, not from room_cap
        ask_line = _ask_line(latest_ask, int(room * ASK_SHARE))
        room -= len(ask_line) + 6
    if room_cap is not None:
        room = min(room, room_cap)
    total_weight = sum(WEIGHTS.values())
    ranked = sorted(items, key=lambda i: -i.value)
    by_section: dict[str, list[_Item]] = {}
    for item in ranked:
        by_section.setdefault(item.section, []).append(item)
    taken: dict = {}  # id(item) -> the line chosen for it (full, else short)
    used = 0

    def take(item: _Item, limit: int, short_first: bool = False) -> int:
        for line in (item.short, item.text) if short_first else (item.text, item.short):
            if line is not None and len(line) + 6 <= limit:
                taken[id(item)] = line
                return len(line) + 6
        return 0

    for heading, section_items in by_section.items():
        share = room * WEIGHTS[heading] // total_weight
        spent = 0
        for item in section_items:
            spent += take(item, share - spent)
        used += spent
    for item in ranked:  # what the sections left unused: first the remaining items, short where they can be
        if id(item) not in taken:
            used += take(item, room - used, short_first=True)
    for item in ranked:  # ... then full lines for the most valuable ones
        line = taken.get(id(item))
        if line is not None and line is not item.text and used + len(item.text) - len(line) <= room:
            taken[id(item)] = item.text
            used += len(item.text) - len(line)
    kept = [i for i in items if id(i) in taken]  # original (ledger) order within each section
    while True:
        chosen: dict[str, list[str]] = {}
        for item in kept:
            chosen.setdefault(item.section, []).append(taken[id(item)])
        if ask_line is not None:  # the latest ask last, after the earlier pending ones
            chosen.setdefault(PENDING_ASKS_HEADING, []).append(ask_line)
        body = redact(_render(task, chosen))
        if not budget or fits(body, budget) or not kept:
            return body
        kept.remove(min(kept, key=lambda i: i.value))


def _add_cut_files(led: Ledgers, turns: list, later: bool) -> None:
    """The files whose last change is in a kept turn that prune cut: the summary keeps their state
    (from turns after the middle it is the final one; from turns before, only for files the middle
    did not change again)."""
    if not turns:
        return
    for path, f in extract(turns).files.items():
        mine = led.files.get(path)
        if f.added and (later or mine is None or not mine.edits):
            led.files[path] = replace(f, last=led.steps if later else 0,
                                      reads=f.reads + (mine.reads if mine else 0))


class ExtractiveSummarizer:
    name = "extractive"

    def __init__(self, *, item_ratio: float = None, **_options: Any):
        self.item_ratio = ITEM_RATIO if item_ratio is None else item_ratio

    def summarize(self, request: SummaryRequest) -> str:
        led = request.ledgers if request.ledgers is not None else extract(request.turns, request.after)
        led = replace(led, files=dict(led.files))  # (the cut files are added to a copy: the ledgers are shared)
        _add_cut_files(led, request.cut_before, later=False)
        _add_cut_files(led, request.cut_after, later=True)
        previous = _sections(request.previous_summary)
        for found in led.summaries:  # a summary inside the middle: merged like a given previous one
            for heading, lines in _sections(found).items():
                previous.setdefault(heading, []).extend(lines)
            if not _sections(found):
                previous.setdefault(CRITICAL, []).append(f"- Earlier summary: {one_line(found, 600)}")
        root_line = next((_ROOT_LINE.match(ln.lstrip("- ")) for ln in previous.get(STATE, [])
                          if _ROOT_LINE.match(ln.lstrip("- "))), None)
        root = root_line.group(1) if root_line else common_root(list(led.files))
        items = _items(led, root, goal_from_previous=bool(previous.get(GOAL)))
        previous[PENDING_ASKS_HEADING], carried = _previous_asks(previous.get(PENDING_ASKS_HEADING, []), led)
        items += _previous_items(previous, items, {_norm(c.command) for c in led.commands.values() if c.ok})
        words = _focus_words(request.focus)
        if words:
            for item in items:
                low = item.text.lower()
                if any(w in low for w in words):
                    item.value *= 2
        snapshot = task_snapshot(request.turns)
        task = snapshot or "\n".join(previous.get(TASK_HEADING, [])) or "None"
        # a small middle gets a small summary; a previous summary is compact already: it counts whole
        turn_chars = sum(tokens.message_chars(m) for m in request.turns if isinstance(m, dict))
        cap = int(turn_chars * self.item_ratio) + len(request.previous_summary or "")
        latest = _latest_ask(led, request.turns) if led.asks else carried
        return choose(task, items, request.budget_tokens, max(cap, ITEM_FLOOR), latest)
