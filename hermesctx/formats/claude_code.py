"""Claude Code session logs (``~/.claude/projects/<p>/<session>.jsonl``) -> one OpenAI transcript.

One event per line. ``user`` / ``assistant`` events carry an Anthropic ``message``; every event
has a ``uuid`` and a ``parentUuid`` (``system``, ``progress``, ``attachment`` and other
bookkeeping events sit in the chain too, but never decide what belongs to the transcript).

**The API message is the unit.** The parent chain that ends at the last main-thread message only
chooses the branch: branches left by "redo from here" (rewinds) are off it and left out, and
counted (``abandoned_branch_entries``). Every main-thread entry that shares a ``message.id`` with
an assistant entry on the chain belongs to the transcript: an API message is written as one
entry per content block, and when it makes several tool calls (2.1.x) the entries form a chain
of their own with ``progress`` entries between them, each ``tool_result`` entry hangs off its own
``tool_use`` entry (``sourceToolAssistantUUID``), and the next turn continues from only one of
them. So every ``tool_use`` block of a kept message gets the result entry that answers it,
wherever that entry hangs. The blocks fold back into one assistant message followed by its
results.

Genuine 2.x files are not always in order: an entry may be written before its parent (the walk
then finds the parent later in the file), a tool result before the call it answers (it waits
for the call), and a line may be missing from a file someone edited (the chain is joined to the
entry before it in the file, with a warning, when that entry leads back to a root of the file;
a group hanging off another file's entries, as the reminders at the head of a compaction
agent's file, stays detached).

A ``system`` event with ``subtype: compact_boundary`` starts a new segment (``parentUuid`` null,
the old chain reachable through ``logicalParentUuid``); the next user event
(``isCompactSummary``) holds the summary. Only the last segment is the context the model saw,
so by default only it is read (what came before is counted in ``dropped_before_compaction``);
``all_segments`` follows the logical link, or, when it names an entry absent from the file,
the last main-thread message before the boundary (with a warning). ``summary`` events are
session titles.

**Subagents.** A file whose conversation events are all sidechain events (``isSidechain``, one
``agentId``: ``<session>/subagents/agent-<id>.jsonl`` in 2.1, ``agent-<id>.jsonl`` beside the
session in 2.0) is read as that agent's transcript, with a notice. In a session, sidechain
events are left out unless ``include_sidechains``; then each subagent's transcript (its prompt
as a user message, its assistant messages, tool calls and results, as OpenAI messages) is
inserted right after the tool results of the assistant message whose ``Task`` call ran it, so
the output stays a valid request: the 2.x agent file named by the Task result's
``toolUseResult.agentId`` (found beside the session file; a missing file is a warning), or the
1.0.x inline sidechain events (no ``agentId``) grouped by their root entry and matched to the
Task call by its prompt. A log that holds events but gives no message is bad input (exit 3),
as a rollout without response items is; under ``--lenient`` a warning (``empty_log`` in the info).

Memory: the first pass keeps a few bytes per event (the uuid hashes, where the parent is not the
previous event, the kind and the ``message.id`` hash) and 16 bytes per tool call and result
(id hashes), never contents; the second pass holds one API message and its results.
"""

from __future__ import annotations

import os

from hermesctx import lazyre
from hermesctx.context import plural
from hermesctx.errors import InputError
from hermesctx.formats import anthropic
from hermesctx.formats._common import quiet
from hermesctx.formats._logs import LogReader, events, fix_orphans, read_event
from hermesctx.messages import is_lenient

TYPE_CHECKING = False
if TYPE_CHECKING:
    from array import array
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any

# events that are not part of the conversation: skipped without a warning
QUIET_TYPES = frozenset({"file-history-snapshot", "queue-operation", "progress", "custom-title",
                         "agent-name", "tag", "pr-link", "last-prompt", "summary", "system",
                         "attachment", "permission-mode", "ai-title", "worktree-state",
                         "bridge-session", "mode"})
_EVENT_TYPE = lazyre.compile(r"[a-z]+(?:-[a-z]+)*")  # a bookkeeping event's type: `permission-mode`
SYNTHETIC_MODEL = "<synthetic>"
TASK_TOOLS = frozenset({"Task", "Agent"})  # the tools that run a subagent
# the first pass's kind of each event with a uuid
_USER, _ASSISTANT, _SIDE = 1, 2, 4


NAME = "claude-code"
PLAIN = False  # read as OpenAI chat
LOG = True  # a session log: one file, one transcript, one event per line


def detect(event: Any) -> bool:
    if not isinstance(event, dict):
        return False
    kind = event.get("type")
    if kind in ("user", "assistant", "system"):
        return "uuid" in event and ("parentUuid" in event or "sessionId" in event)
    if kind == "summary":
        return "leafUuid" in event
    if not isinstance(kind, str) or "messages" in event or "role" in event:
        return False
    # a bookkeeping event, or one of a type newer than this reader, of a session
    return kind in QUIET_TYPES or (isinstance(event.get("sessionId"), str) and bool(_EVENT_TYPE.fullmatch(kind)))


def _blocks(message: dict) -> list:
    content = message.get("content")
    return content if isinstance(content, list) else ()


class _Thread:
    """Folds one thread's events (the main thread, or one subagent) into OpenAI messages. The
    open assistant reply and the tool results logged after it wait in memory until the next
    reply or user message shows the reply is complete."""

    def __init__(self, lost: dict, duplicates: list, later_calls: frozenset = frozenset()):
        self.lost = lost
        self.duplicates = duplicates
        self.open_id: Any = None
        self.blocks: list | None = None  # the open reply's content blocks
        self.results: list[dict] = []  # tool results logged after it
        # a result logged before its call (2.1 writes some entries before their parent) waits
        # for it: ``later_calls`` holds the hashes of the file's call ids
        self.later_calls = later_calls
        self.called: set = set()
        self.early: dict = {}  # call id -> its result

    def assistant(self, message: dict) -> list[dict]:
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
        msg_id = message.get("id")
        if self.blocks is not None and msg_id and msg_id == self.open_id:
            self.blocks.extend(blocks)  # another block of the same reply
            return []
        out = self.flush()
        self.open_id, self.blocks = msg_id, list(blocks)
        return out

    def user(self, message: dict) -> tuple[list[dict], bool]:
        """-> (complete messages, whether this event starts a new turn)."""
        converted = anthropic.message_to_openai(
            {"role": "user", "content": message.get("content", "")}, self.lost)
        results = [m for m in converted if m.get("role") == "tool"]
        rest = [m for m in converted if m.get("role") != "tool"]
        if self.blocks is not None:
            self.results.extend(results)
            if not rest:
                return [], False
            return self.flush() + rest, True
        return [m for m in converted if not self._early(m)], bool(rest)

    def _early(self, result: dict) -> bool:
        """Whether ``result`` answers a call logged later in the file (it then waits for it)."""
        call_id = result.get("tool_call_id") if result.get("role") == "tool" else None
        if isinstance(call_id, str) and call_id not in self.called and hash(call_id) in self.later_calls:
            self.early.setdefault(call_id, result)
            return True
        return False

    def flush(self) -> list[dict]:
        out: list[dict] = []
        results = self.results
        if self.blocks is not None:
            out = anthropic.message_to_openai({"role": "assistant", "content": self.blocks}, self.lost)
            calls = [b.get("id") for b in self.blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
            self.called.update(calls)
            results = [r for r in results if r.get("tool_call_id") in calls or not self._early(r)]
            results += [self.early.pop(c) for c in calls if c in self.early]
        answered: set = set()
        for result in results:  # one result per call: a copy logged twice is left out
            call_id = result.get("tool_call_id")
            if call_id in answered:
                self.duplicates[0] += 1
                continue
            answered.add(call_id)
            out.append(result)
        self.open_id, self.blocks, self.results = None, None, []
        return out

    def finish(self) -> list[dict]:
        """The last messages: the open reply, then any result whose call never came (kept, as
        the orphan it is)."""
        out, self.results = self.flush(), list(self.early.values())
        self.early = {}
        return out + self.flush()

    def messages(self, kind: str, message: dict) -> list[dict]:
        return self.assistant(message) if kind == "assistant" else self.user(message)[0]


class _Inline:
    """A 1.0.x inline subagent: the sidechain events under one root entry."""

    def __init__(self, lost: dict, duplicates: list):
        self.thread = _Thread(lost, duplicates)
        self.prompt: str | None = None
        self.messages: list[dict] = []

    def add(self, kind: str, message: dict) -> None:
        if self.prompt is None and kind == "user":
            content = message.get("content")
            self.prompt = content if isinstance(content, str) else "\n".join(
                b.get("text", "") for b in _blocks(message) if isinstance(b, dict))
        self.messages.extend(self.thread.messages(kind, message))

    def done(self) -> list[dict]:
        return self.messages + self.thread.flush()


class Reader(LogReader):
    format = NAME

    def __init__(self, *, include_sidechains: bool = False, all_segments: bool = False,
                 warn: Callable[[str], None] = lambda m: None, path: str | None = None,
                 subagent: bool = False):
        self.include_sidechains = include_sidechains
        self.all_segments = all_segments
        self.warn = warn
        self.path = path  # of the session file: subagent files are found beside it
        self.subagent = subagent  # read as the subagent file a session named (no notice)
        self.lost: dict = {}
        # first pass
        self.start = 0  # index of the first event read (after the last compaction boundary)
        self.keep = bytearray()  # by position of the events with a uuid: 1 if in the transcript
        self.chained = False  # whether a chain was found (else every event is kept)
        self.agent: Any = None  # the agent whose file this is (all events are its sidechain)
        self.agent_file = False
        self.segments = 1
        self.dropped = 0
        self.abandoned = 0
        self.detached = 0
        self.call_hashes: frozenset = frozenset()
        self.events = 0
        # second pass
        self.usage: dict | None = None
        self.model: str | None = None
        self.session: str | None = None
        self.titles: list[str] = []
        self.skipped: dict[str, int] = {}
        self.sidechain_events = 0
        self.orphans = [0]
        self.duplicates = [0]
        self.count = 0
        self.subagents = {"inserted": 0, "missing": 0}
        self._agent_ids: dict[Any, Any] = {}  # Task call id -> agentId (2.x)
        self._prompts: dict[Any, str] = {}  # Task call id -> prompt (1.0 inline)
        self._inline: dict[str, _Inline] = {}  # root uuid -> its subagent (1.0 inline)
        self._roots: dict[str, str] = {}  # sidechain uuid -> root uuid

    # -- first pass: which events make the transcript ------------------------------------

    def scan(self, events: Iterable[tuple[Any, str]]) -> None:
        """Find the last segment, the parent chain that ends at the last message of the main
        thread (of the agent in an agent's own file), and the entries of its API messages.

        By position of the events with a uuid, in file order: the uuid hashes (``array``), the
        parents only where a parent is not the event just before (branch points, roots), the
        kind, the hash of an assistant entry's ``message.id``; and the id hashes of every tool
        call and result (16 bytes each)."""
        from array import array

        hashes, msgs, kinds = array("q"), array("q"), bytearray()
        links: dict[int, int | None] = {}  # position -> parent hash, where not the previous event
        fallback: dict[int, int] = {}  # boundary position -> last main message before it
        call_ids, call_msgs = array("q"), array("q")  # tool_use id hash, its message.id hash
        result_pos, result_ids = array("q"), array("q")  # position of a result entry, its call
        leaf = side_leaf = -1
        main_events = 0
        agents: set = set()
        for index, (event, _) in enumerate(events):
            if not isinstance(event, dict):
                continue
            self.events += 1
            side = bool(event.get("isSidechain"))
            uuid = event.get("uuid")
            kind = event.get("type")
            parent = event.get("parentUuid")
            if not side and kind == "system" and event.get("subtype") == "compact_boundary":
                self.segments += 1
                if not self.all_segments:
                    self.start, leaf, side_leaf = index + 1, -1, -1
                    hashes, msgs, kinds, links = array("q"), array("q"), bytearray(), {}
                    call_ids, call_msgs, result_pos, result_ids = array("q"), array("q"), array("q"), array("q")
                    self.dropped += main_events
                    main_events = 0
                    continue
                logical = event.get("logicalParentUuid")
                if not parent and isinstance(logical, str):
                    parent = logical
                    fallback[len(hashes)] = leaf
            message = event.get("message")
            convo = kind in ("user", "assistant") and isinstance(message, dict)
            if convo and not side:
                main_events += 1
            if not isinstance(uuid, str):
                continue
            position = len(hashes)
            link = hash(parent) if isinstance(parent, str) else None
            if not hashes or link != hashes[-1]:
                links[position] = link
            hashes.append(hash(uuid))
            msg_hash = 0
            flags = _SIDE if side else 0
            if convo:
                if side:
                    side_leaf = position
                    agents.add(event.get("agentId"))
                else:
                    leaf = position
                if kind == "assistant":
                    flags |= _ASSISTANT
                    msg_id = message.get("id")
                    msg_hash = hash(msg_id) if isinstance(msg_id, str) else 0
                    for block in _blocks(message):
                        if isinstance(block, dict) and block.get("type") == "tool_use" \
                                and isinstance(block.get("id"), str):
                            call_ids.append(hash(block["id"]))
                            call_msgs.append(msg_hash)
                else:
                    flags |= _USER
                    for block in _blocks(message):
                        if isinstance(block, dict) and block.get("type") == "tool_result" \
                                and isinstance(block.get("tool_use_id"), str):
                            result_pos.append(position)
                            result_ids.append(hash(block["tool_use_id"]))
            kinds.append(flags)
            msgs.append(msg_hash)
        if leaf < 0 and side_leaf >= 0:  # no main thread: a subagent's own file
            self.agent_file, leaf = True, side_leaf
            self.agent = next(iter(agents)) if len(agents) == 1 else None
            if not self.subagent:
                who = f"agent {self.agent}" if self.agent else "subagents"
                self.warn(f"every conversation event is a sidechain: read as the transcript of {who}")
        chain = self._chain(hashes, links, fallback, leaf)
        self.call_hashes = frozenset(call_ids)
        self.keep = self._members(chain, kinds, msgs, call_ids, call_msgs, result_pos, result_ids,
                                  hashes, links)

    def _chain(self, hashes: array, links: dict, fallback: dict, leaf: int) -> bytearray:
        """The positions on the parent chain that ends at ``leaf``."""
        chain = bytearray(len(hashes))
        self.chained = leaf >= 0
        position = leaf
        later: dict | None = None  # hash -> position, built once a parent is written after its child
        rejoined, rooted = 0, {}
        while position >= 0 and not chain[position]:
            chain[position] = 1
            if position not in links:
                position -= 1
                continue
            link, origin = links[position], position
            position -= 1
            while position >= 0 and (link is None or hashes[position] != link):
                position = -1 if link is None else position - 1
            if position >= 0 or link is None:
                continue
            if origin in fallback:  # (2.1 names the copy of the last message it keeps after the boundary)
                position = fallback[origin]
                self.warn("a compaction boundary's logicalParentUuid names no entry before it in "
                          "the log: the segment before it is joined at its last message")
                continue
            if later is None:
                later = {h: p for p, h in enumerate(hashes)}
            position = later.get(link, -1)  # 2.1 writes some entries before their parent
            if position < 0 and origin > 0 and self._rooted(origin - 1, hashes, links, later, fallback, rooted):
                position = origin - 1  # a line left out of the file (not the head of a detached group)
                rejoined += 1
        if rejoined:
            self.warn(f"{plural(rejoined, 'entry', 'entries')} on the way to the last message "
                      f"{'names a parent' if rejoined == 1 else 'name parents'} absent from the log: "
                      "joined to the entry before in the file, not cut there")
        return chain

    @staticmethod
    def _rooted(position: int, hashes: array, links: dict, where: dict, fallback: dict, known: dict) -> bool:
        """Whether the entries before ``position`` lead back to a root (an entry with no parent)
        of this file, past lines left out of it: the rest of the session, not a group hanging off
        entries of another file (the reminders at the head of a compaction agent's file).
        ``known`` (shared by the calls of one walk) keeps each entry's answer: linear overall."""
        seen: dict = {}  # (a dict: ordered, and a set)
        answer = False
        while position >= 0:
            if position in known:
                answer = known[position]
                break
            seen[position] = None
            if position not in links:
                position -= 1
                continue
            link = links[position]
            if link is None:
                answer = True
                break
            parent = where.get(link, -1)
            position = parent if parent >= 0 else fallback.get(position, position - 1)
            if position in seen:
                break
        for p in seen:
            known[p] = answer
        return answer

    def _members(self, chain: bytearray, kinds: bytearray, msgs: array, call_ids: array,
                 call_msgs: array, result_pos: array, result_ids: array, hashes: array,
                 links: dict) -> bytearray:
        """The entries of the transcript: the chain, the other entries of its API messages, and
        the results that answer their calls. Only entries off the chain are looked at twice."""
        if not self.chained:
            return bytearray()
        side = _SIDE if self.agent_file else 0
        keep = bytearray(chain)
        off = [p for p, flags in enumerate(kinds) if not chain[p] and flags & (_USER | _ASSISTANT)
               and flags & _SIDE == side]
        if off:
            off_msgs = {msgs[p] for p in off if kinds[p] & _ASSISTANT and msgs[p]}
            off_set = set(off)
            off_results: dict[int, list[int]] = {}
            for p, call in zip(result_pos, result_ids):
                if p in off_set:
                    off_results.setdefault(p, []).append(call)
            wanted = {call for calls in off_results.values() for call in calls}
            wanted_msgs = {m for c, m in zip(call_ids, call_msgs) if c in wanted and m}
            look = off_msgs | wanted_msgs
            on_chain = {msgs[p] for p, flags in enumerate(kinds)
                        if chain[p] and flags & _ASSISTANT and msgs[p] in look}
            for p in off:
                if kinds[p] & _ASSISTANT and msgs[p] in on_chain:
                    keep[p] = 1
            answered = {c for c, m in zip(call_ids, call_msgs) if c in wanted and m in on_chain}
            for p, calls in off_results.items():
                if any(call in answered for call in calls):
                    keep[p] = 1
            self._count_dropped([p for p in off if not keep[p]], hashes, links)
        return keep

    def _count_dropped(self, dropped: list[int], hashes: array, links: dict) -> None:
        """Entries off the transcript: on an abandoned branch (their branch leaves the chain
        somewhere in the file), or detached (their parent is not in the file, as the reminders
        at the head of a compaction agent's file, and what hangs under them)."""
        parents = {p: (links[p] if p in links else hashes[p - 1]) for p in dropped}
        wanted = {h for h in parents.values() if h is not None}
        where = {h: p for p, h in enumerate(hashes) if h in wanted} if wanted else {}
        detached: set[int] = set()
        for p in dropped:  # in file order: a parent before its children
            parent = parents[p]
            if parent is not None and (parent not in where or where[parent] in detached):
                detached.add(p)
        self.detached = len(detached)
        self.abandoned = len(dropped) - len(detached)

    # -- second pass: fold -----------------------------------------------------------------

    def messages(self, events: Iterable[tuple[Any, str]]) -> Iterator[dict]:
        for msg in fix_orphans(self._with_subagents(self._fold(events)), set(), self.orphans):
            self.count += 1
            yield msg
        if not self.count and self.events:
            what = ("only session titles (summary events)" if self.titles and not self.skipped
                    else f"{self.events} events")
            if not is_lenient():  # no provider API takes an empty message list
                raise InputError(f"the log holds {what} but no message: nothing to read",
                                 hint="--lenient reads it as an empty transcript")
            self.warn(f"the log holds {what} but no message: nothing to convert")

    def _fold(self, events: Iterable[tuple[Any, str]]) -> Iterator[dict]:
        main = _Thread(self.lost, self.duplicates, self.call_hashes)
        position = -1  # of the event with a uuid, as counted by scan
        for index, (event, where) in enumerate(events):
            if index < self.start:
                continue
            if not isinstance(event, dict):
                self._skip("lines that are not JSON objects", where)
                continue
            if isinstance(event.get("uuid"), str):
                position += 1
            kind = event.get("type")
            if kind not in ("user", "assistant"):
                if kind == "summary" and isinstance(event.get("summary"), str):
                    self.titles.append(event["summary"])
                elif kind not in QUIET_TYPES:
                    self._skip(f"events of unknown type {kind!r}", where)
                continue
            message = event.get("message")
            if not isinstance(message, dict):
                self._skip(f"{kind} events without a message", where)
                continue
            if bool(event.get("isSidechain")) != self.agent_file:
                self.sidechain_events += 1
                if self.include_sidechains:
                    self._inline_event(event, kind, message)
                continue
            if self.chained and isinstance(event.get("uuid"), str) and not self.keep[position]:
                continue
            self.session = self.session or event.get("sessionId")
            if kind == "assistant":
                model = message.get("model")
                if model != SYNTHETIC_MODEL:
                    if isinstance(model, str):
                        self.model = model
                    if isinstance(message.get("usage"), dict):
                        self.usage = message["usage"]
                if self.include_sidechains:
                    self._note_tasks(message)
                yield from main.assistant(message)
                continue
            if self.include_sidechains:
                self._note_agent(event, message)
            yield from main.user(message)[0]
        yield from main.finish()

    def _skip(self, what: str, where: str) -> None:
        count = self.skipped.get(what, 0)
        self.skipped[what] = count + 1
        if not count:  # once per kind: a log can hold thousands
            self.warn(f"{where}: skipped {what} (first of them)")

    # -- subagents ---------------------------------------------------------------------------

    def _note_tasks(self, message: dict) -> None:
        for block in _blocks(message):
            if isinstance(block, dict) and block.get("type") == "tool_use" \
                    and isinstance(block.get("input"), dict) \
                    and isinstance(block["input"].get("prompt"), str) \
                    and (block.get("name") in TASK_TOOLS or "subagent_type" in block["input"]):
                self._prompts[block.get("id")] = block["input"]["prompt"]

    def _note_agent(self, event: dict, message: dict) -> None:
        result = event.get("toolUseResult")
        agent = result.get("agentId") if isinstance(result, dict) else None
        if not isinstance(agent, str):
            return
        for block in _blocks(message):
            if isinstance(block, dict) and block.get("type") == "tool_result":
                self._agent_ids[block.get("tool_use_id")] = agent

    def _inline_event(self, event: dict, kind: str, message: dict) -> None:
        uuid, parent = event.get("uuid"), event.get("parentUuid")
        root = self._roots.get(parent, uuid) if isinstance(parent, str) else uuid
        if isinstance(uuid, str):
            self._roots[uuid] = root
        group = self._inline.get(root)
        if group is None:
            group = self._inline[root] = _Inline(self.lost, self.duplicates)
        group.add(kind, message)

    def _with_subagents(self, messages: Iterable[dict]) -> Iterator[dict]:
        """``messages`` with each subagent's transcript after the results of the assistant
        message whose Task call ran it."""
        if not self.include_sidechains:
            yield from messages
            return
        calls: list = []
        for msg in messages:
            if msg.get("role") != "tool" and calls:
                yield from self._subagents(calls)
                calls = []
            yield msg
            if msg.get("tool_calls"):
                calls = [c.get("id") for c in msg["tool_calls"] if isinstance(c, dict)]
        yield from self._subagents(calls)
        for group in self._inline.values():  # inline subagents no Task call claimed
            yield from group.done()
        self._inline = {}

    def _subagents(self, calls: list) -> Iterator[dict]:
        tasks = [c for c in calls if c in self._agent_ids or c in self._prompts]
        for call in tasks:
            if call in self._agent_ids:
                yield from self._agent_file(self._agent_ids.pop(call))
                self._prompts.pop(call, None)
                continue
            prompt = self._prompts.pop(call)
            root = next((r for r, g in self._inline.items() if g.prompt == prompt), None)
            if root is not None:
                self.subagents["inserted"] += 1
                yield from self._inline.pop(root).done()
        if tasks:  # inline subagents whose prompt matched no call: after the Task calls' turn
            for group in self._inline.values():
                yield from group.done()
            self._inline = {}

    def _agent_file(self, agent: str) -> list[dict]:
        """The transcript of subagent ``agent``, from its own file beside the session."""
        name = f"agent-{agent}.jsonl"
        found = None
        if self.path:
            folder = os.path.dirname(self.path)
            session = self.session or os.path.splitext(os.path.basename(self.path))[0]
            for candidate in (os.path.join(folder, session, "subagents", name),
                              os.path.join(folder, name)):
                if os.path.isfile(candidate):
                    found = candidate
                    break
        if found is None:
            self.subagents["missing"] += 1
            where = f"beside {self.path}" if self.path else "(the log was read from stdin)"
            self.warn(f"subagent file {name} not found {where}: its transcript is left out")
            return []
        reader = Reader(warn=lambda m: self.warn(f"{found}: {m}"), subagent=True)
        try:
            with open(found, "rb") as handle:
                reader.scan(events(handle, quiet))
            with open(found, "rb") as handle:
                out = list(reader.messages(events(handle, reader.warn)))
        except OSError as exc:
            self.subagents["missing"] += 1
            self.warn(f"cannot read subagent file {found}: {exc.strerror}")
            return []
        for what, n in reader.lost.items():
            self.lost[what] = self.lost.get(what, 0) + n
        self.subagents["inserted"] += 1
        return out

    # -- result ----------------------------------------------------------------------------

    def tail(self) -> dict:
        return {"model": self.model} if self.model else {}

    def info(self) -> dict:
        info = {"format": NAME, "session": self.session, "model": self.model,
                "segments": self.segments, "dropped_before_compaction": self.dropped,
                "abandoned_branch_entries": self.abandoned,
                "sidechain_events": self.sidechain_events,
                "orphan_tool_results": self.orphans[0], "skipped": dict(self.skipped),
                "lost": dict(self.lost), "titles": list(self.titles)}
        if self.detached:
            info["detached_entries"] = self.detached
        if self.duplicates[0]:
            info["duplicate_tool_results"] = self.duplicates[0]
        if self.agent_file:
            info["agent"] = self.agent
        if self.include_sidechains:
            info["subagents"] = dict(self.subagents)
        if not self.count and self.events:
            info["empty_log"] = True
        if self.usage is not None:
            info["usage"] = dict(self.usage)
        return info


def read(event: Any, lost: dict) -> dict:
    """One event given alone as a document, as OpenAI chat."""
    return read_event(Reader(), event, lost)
