"""compress: head / middle / tail compaction with a structured handoff summary.

The four phases of Hermes's ``ContextCompressor.compress()``:

1. prune old tool output (:mod:`hermesctx.stages.prune`);
2. boundaries: the head (system prompt + ``protect_first_n``), the tail (a token budget walked
   back from the end, never splitting a tool group, anchored on the latest user and assistant
   messages), the middle in between;
3. summarize the middle (:mod:`hermesctx.summary.prompt`, a :class:`~hermesctx.summary.Summarizer`);
4. assemble head + summary + tail, then repair tool pairs (:mod:`hermesctx.stages.sanitize`).

Stateless: a summary already in the transcript is found and updated, never stacked. Where
Hermes can lose information hermesctx does not: the latest real user message is never
summarized away, nothing-to-compress returns the input, a failed summarizer falls back to the
extractive one and then to Hermes's deterministic fallback, and a result larger than the input
is not emitted.
"""

from __future__ import annotations

from hermesctx import registry, tokens
from hermesctx.budgets import summary_budget
from hermesctx.errors import UpstreamError
from hermesctx.messages import (
    IMAGE_PART_TYPES,
    check_messages,
    last_compaction,
    messages_of,
    part_type,
    with_messages,
)
from hermesctx.options import BudgetOptions, flags, option
from hermesctx.record import record
from hermesctx.redact import redact
from hermesctx.stages.pairs import anthropic_blocks_apply, calls_tools, holds_results
from hermesctx.summary.text import (
    END_MARKER,
    MERGED_DELIMITER,
    MERGED_HEADER,
    NOTE_BASE,
    compaction_note,
    find_latest_summary,
    is_hermes_transcript,
    is_summary_content,
    text_view,
    with_summary_prefix,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MIN_TAIL_FLOOR = 8
IMAGE_STRIPPED = "[Attached image — stripped after compression]"
LOW_SAVINGS_PCT = 10.0
AUTONOMOUS_MIN_TURNS = 4  # a latest ask is moved after the summary only with more turns than this after it


# --- phase 2: boundaries -------------------------------------------------------------------

def head_size(messages: list, protect_first_n: int) -> int:
    return (1 if messages and messages[0].get("role") == "system" else 0) + protect_first_n


def align_forward(messages: list, idx: int) -> int:
    """Past any tool results (``tool`` messages, Anthropic turns of ``tool_result`` blocks): a
    middle never starts with a result whose call is in the head."""
    while idx < len(messages) and (messages[idx].get("role") == "tool" or holds_results(messages[idx])):
        idx += 1
    return idx


def align_backward(messages: list, idx: int) -> int:
    """Back to the assistant whose tool calls the results at ``idx`` answer (a group stays whole)."""
    if idx <= 0 or idx >= len(messages):
        return idx
    k = idx - 1
    while k >= 0 and (messages[k].get("role") == "tool" or holds_results(messages[k])):
        k -= 1
    if k >= 0 and calls_tools(messages[k]):
        return k
    return idx


def _last_user(messages: list, head_end: int) -> int:
    for i in range(len(messages) - 1, head_end - 1, -1):
        if messages[i].get("role") == "user" and not is_summary_content(messages[i].get("content")) \
                and not holds_results(messages[i], only=True):  # (an Anthropic turn of tool results)
            return i
    return -1


def _turn_pair_end(messages: list, u: int) -> int:
    i = u + 1
    if i >= len(messages) or messages[i].get("role") != "assistant":
        return i
    i += 1
    while i < len(messages) and (messages[i].get("role") == "tool" or holds_results(messages[i])):
        i += 1
    return i


def _has_text(content: Any) -> bool:
    if isinstance(content, str):
        return bool(content.strip())
    if isinstance(content, list):
        for part in content:
            if isinstance(part, dict):
                text = part.get("text") or part.get("content")
                if isinstance(text, str) and text.strip():
                    return True
    return False


def _last_assistant(messages: list, head_end: int) -> int:
    newest = -1
    for i in range(len(messages) - 1, head_end - 1, -1):
        if messages[i].get("role") != "assistant":
            continue
        if newest < 0:
            newest = i
        if _has_text(messages[i].get("content")):
            return i
    return newest


def tail_cut(messages: list, head_end: int, budget: int, protect_last_n: int = 20, anchor_user: bool = True) -> int:
    """Index where the tail starts, as Hermes finds it: a walk back under a soft ceiling of 1.5 x the
    budget, at least ``min(protect_last_n, 8)`` messages, tool groups kept whole, and the latest
    user and text-bearing assistant messages anchored in the tail. ``anchor_user=False`` (a long
    autonomous run, whose ask moves after the summary): no user anchor, and the walk stops at the
    budget itself, not at the soft ceiling."""
    n = len(messages)
    # an Anthropic transcript is walked as the OpenAI messages it stands for: its blocks counted by
    # what they hold (Hermes's rule sees only text), and a turn of k tool results counted as k
    # messages toward the floor
    blocks = anthropic_blocks_apply(messages)
    estimate = _tail_estimate(messages, blocks)
    after = _counts_after(messages) if blocks else range(n, -1, -1)  # messages from i on
    available = after[head_end + 1] if head_end + 1 <= n else 0
    floor = max(3, min(protect_last_n, MIN_TAIL_FLOOR))
    min_tail = min(floor, max(3, available - 2), available) if available > 1 else 0
    soft = int(budget * 1.5) if anchor_user else budget

    def walk(limit: int, overflow_in_tail: bool) -> tuple[int, int]:
        total, cut = 0, n
        for i in range(n - 1, head_end - 1, -1):
            cost = estimate(messages[i])
            if total + cost > limit and after[i] >= min_tail:
                return total, (i if overflow_in_tail else cut)
            total += cost
            cut = i
        return total, cut

    total, cut = walk(soft, False)
    if cut <= head_end and 0 < total <= soft:
        _, cut = walk(budget, True)  # everything fit under the soft ceiling: cut at the raw budget
    fallback = n
    while fallback > 0 and after[fallback] < min_tail:  # (n - min_tail for OpenAI messages)
        fallback -= 1
    cut = min(cut, fallback)
    if cut <= head_end:
        cut = max(fallback, head_end + 1)
    cut = align_backward(messages, cut)
    u = _last_user(messages, head_end) if anchor_user else -1
    if 0 <= u < cut:
        cut = max(_turn_pair_end(messages, u), head_end + 1) if u <= head_end else u
    a = _last_assistant(messages, head_end)
    if 0 <= a < cut:
        cut = max(align_backward(messages, a), head_end + 1)
    return align_forward(messages, max(cut, head_end + 1))


def _tail_estimate(messages: list, blocks: bool | None = None):
    """The tail walk's count of one message: Hermes's, or for an Anthropic transcript each message
    counted as the OpenAI messages it stands for (``blocks``: whether it is one, when known)."""
    if blocks is None:
        blocks = anthropic_blocks_apply(messages)
    return tokens.block_tail_tokens if blocks else tokens.tail_tokens


def _autonomous(messages: list, start: int, u: int, end: int) -> bool:
    """Whether the latest ask at ``u`` sits early in the compressible span, so that ending the middle
    at it would leave the bulk of the run uncompressed: more of the span's tokens lie after it
    than before it (counted as the tail walk counts them)."""
    estimate = _tail_estimate(messages)
    after = sum(estimate(m) for m in messages[u + 1:end])
    return end - u > AUTONOMOUS_MIN_TURNS and after > sum(estimate(m) for m in messages[start:u])


def _cut_edits(messages: list, pruned: list, kept: range) -> list:
    """The kept turns whose calls prune cut, as they were, each with its results: a file's last
    change may be in one, and the summary's file states cover it."""
    out = []
    for i in kept:
        if pruned[i] is not messages[i] and pruned[i].get("tool_calls") != messages[i].get("tool_calls"):
            out += messages[i:align_forward(messages, i + 1)]
    return out


def _counts_after(messages: list) -> list:
    """For each index i (and len(messages)), how many OpenAI messages ``messages[i:]`` stands
    for: a user turn of tool results is one ``tool`` message per result (and a user message
    for the rest), any other message one."""
    after = [0] * (len(messages) + 1)
    for i in range(len(messages) - 1, -1, -1):
        msg = messages[i]
        count = 1
        if holds_results(msg):
            results = sum(1 for b in msg["content"] if isinstance(b, dict) and b.get("type") == "tool_result")
            count = results + (results < len(msg["content"]))
        after[i] = after[i + 1] + count
    return after


# --- phase 4: assembly ---------------------------------------------------------------------

def _fresh(msg: dict) -> dict:
    return {k: v for k, v in msg.items() if k != "_db_persisted"}


def _append_text(content: Any, text: str, *, prepend: bool = False) -> Any:
    """``text`` added at the end (or the start) of a content; in a block list it goes after the
    leading thinking blocks (the API rejects text before thinking)."""
    if content is None:
        return text
    if isinstance(content, str):
        return text + content if prepend else content + text
    if isinstance(content, list):
        block = {"type": "text", "text": text}
        if not prepend:
            return [*content, block]
        at = 0
        while at < len(content) and part_type(content[at]) in ("thinking", "redacted_thinking"):
            at += 1
        return [*content[:at], block, *content[at:]]
    return text + str(content) if prepend else str(content) + text


def _with_note(msg: dict, hermes: bool) -> dict:
    content = msg.get("content")
    if NOTE_BASE in text_view(content):
        return msg
    note = compaction_note(hermes)
    note = "\n\n" + note if isinstance(content, str) and content else note
    return {**msg, "content": _append_text(content, note)}


def summary_role(messages: list, start: int, end: int) -> tuple[str, bool]:
    """``(role, merge)`` for the summary, as Hermes picks it: never two same-role neighbours; merge
    into the tail's first message when no role fits."""
    n = len(messages)
    last_head = messages[start - 1].get("role", "user") if start > 0 else "user"
    first_tail = messages[end].get("role", "user") if end < n else "user"
    force_user = last_head == "system" or not any(
        m.get("role") == "user" for m in messages[:start] + messages[end:])
    role = "user" if last_head in ("assistant", "tool") or force_user else "assistant"
    if role == first_tail:
        other = "assistant" if role == "user" else "user"
        if other != last_head and not force_user:
            return other, False
        return role, True
    return role, False


def assemble(messages: list, start: int, end: int, summary: str, *, extra: dict | None = None,
             hermes_note: bool = True, pinned: bool = False) -> list:
    """Head (note on a leading system prompt) + summary + tail, as Hermes assembles them, before repair. The
    summary carries no flag: it is found by its text, as Hermes finds it. ``pinned``: the tail opens with the
    latest ask, which must stay the message after the summary: when no role fits between them, the summary
    goes at the start of the ask's message, before it (not after it, as a merge does)."""
    out = []
    for i in range(start):
        msg = _fresh(messages[i])
        out.append(_with_note(msg, hermes_note) if i == 0 and msg.get("role") == "system" else msg)
    role, merge = summary_role(messages, start, end)
    if merge and end >= len(messages):
        merge = False  # nothing to merge into (Hermes would drop it); keep the summary as its own message
    if not merge:
        out.append({"role": role, "content": summary + "\n\n" + END_MARKER, **(extra or {})})
    for i in range(end, len(messages)):
        msg = _fresh(messages[i])
        if merge and i == end and pinned:
            msg = {k: v for k, v in msg.items() if k != "api_content"}
            msg["content"] = _append_text(msg.get("content", ""), summary + "\n\n" + END_MARKER + "\n\n",
                                          prepend=True)
            msg.update(extra or {})
        elif merge and i == end:
            suffix = "\n\n" + MERGED_DELIMITER + "\n\n" + summary + "\n\n" + END_MARKER
            content = _append_text(_append_text(msg.get("content", ""), suffix), MERGED_HEADER + "\n", prepend=True)
            msg = {k: v for k, v in msg.items() if k != "api_content"}
            msg["content"] = content
            msg.update(extra or {})
        out.append(msg)
    return out


def _images(messages: list) -> int:
    return sum(part_type(p) in IMAGE_PART_TYPES for m in messages if isinstance(m.get("content"), list)
               for p in m["content"])


def strip_historical_media(messages: list) -> list:
    """Images before the newest image-bearing user turn become a text placeholder."""
    def has_images(content: Any) -> bool:
        return isinstance(content, list) and any(part_type(p) in IMAGE_PART_TYPES for p in content)
    anchor = next((i for i in range(len(messages) - 1, -1, -1)
                   if messages[i].get("role") == "user" and has_images(messages[i].get("content"))), -1)
    if anchor <= 0:
        return messages
    out = []
    for i, msg in enumerate(messages):
        if i < anchor and has_images(msg.get("content")):
            parts = [{"type": "text", "text": IMAGE_STRIPPED}
                     if part_type(p) in IMAGE_PART_TYPES else p for p in msg["content"]]
            msg = {k: v for k, v in msg.items() if k != "api_content"}
            msg["content"] = parts
        out.append(msg)
    return out


# --- the stage -----------------------------------------------------------------------------

_MARK = "\0hermesctx-summary"


def _note_archive(out: list, note: dict) -> list:
    """Say in the new summary's own text where the compacted turns are (before the end marker),
    and take the placeholder key off it: nothing but text marks the summary."""
    from hermesctx.archive import note_line

    line = redact(note_line(note))  # the note leaves with the transcript (the archive file does not)
    tail = "\n\n" + END_MARKER

    def noted(m: dict) -> dict:
        m = {k: v for k, v in m.items() if k != _MARK}
        content = m.get("content")
        if isinstance(content, str) and content.endswith(tail):
            m["content"] = content[:-len(tail)] + "\n\n" + line + tail
        elif isinstance(content, list) and content and isinstance(content[-1], dict) \
                and isinstance(content[-1].get("text"), str) and content[-1]["text"].endswith(tail):
            last = content[-1]
            m["content"] = [*content[:-1], {**last, "text": last["text"][:-len(tail)] + "\n\n" + line + tail}]
        else:
            m["content"] = _append_text(content, "\n\n" + line)
        return m
    return [noted(m) if _MARK in m else m for m in out]


def feedback(before: list, after: list, before_tokens: int, after_tokens: int, *,
             fallback: bool = False, dropped: int | None = None, reason: str | None = None) -> dict:
    """Hermes's report lines."""
    noop = after == before
    n, m = len(before), len(after)
    if fallback:
        headline = f"Compressed with fallback: {n} → {m} messages"
    elif noop:
        headline = f"No changes from compression: {n} messages"
    else:
        headline = f"Compressed: {n} → {m} messages"
    if noop and before_tokens == after_tokens:
        token_line = f"Approx request size: ~{before_tokens:,} tokens (unchanged)"
    else:
        token_line = f"Approx request size: ~{before_tokens:,} → ~{after_tokens:,} tokens"
    note = None
    if fallback:
        k = dropped if isinstance(dropped, int) and not isinstance(dropped, bool) else max(n - m, 0)
        note = f"Summary generation failed; Hermes used limited fallback context and removed {k} message(s)."
        if reason and reason.strip():
            note += " Reason: " + redact(reason.strip(), force=True)
    elif not noop and m < n and after_tokens > before_tokens:
        note = ("Note: fewer messages can still raise this estimate when compression rewrites the transcript "
                "into denser summaries.")
    return {"noop": noop, "headline": headline, "token_line": token_line, "note": note}


def _nothing(messages: list, reason: str, base: dict) -> tuple[list, dict]:
    size = tokens.rough_messages(messages)
    return messages, {**base, **feedback(messages, messages, size, size), "compressed": False, "reason": reason,
                      "summarizer": None, "messages_before": len(messages), "messages_after": len(messages),
                      "tokens_before": size, "tokens_after": size, "dropped_without_summary": 0}


class _NoCompaction(Exception):
    """Why a transcript has nothing to compact (the report's ``reason``)."""


def _boundaries(pruned: list, first_n: int, tail_token_budget: int, protect_last_n: int,
                base: dict) -> tuple[int, int, int | None]:
    """The middle ``[start, end)`` and the index of a latest ask moved after the summary (or None).
    The latest real user message is kept verbatim, never summarized away (Hermes may lose it)."""
    n = len(pruned)
    start = align_forward(pruned, head_size(pruned, first_n))
    if start >= n:
        raise _NoCompaction("only tool results after the head")
    end = tail_cut(pruned, start, tail_token_budget, protect_last_n)
    u = _last_user(pruned, start)
    pinned = None  # an early latest ask moved after the summary (a long autonomous run)
    if u > start and u == end:  # the tail starts at the latest ask: does a long run follow it?
        free = tail_cut(pruned, start, tail_token_budget, protect_last_n, anchor_user=False)
        if u < free and _autonomous(pruned, start, u, free):
            end = free
    if 0 <= u < end:
        base["latest_user_kept"] = u
        if u > start and _autonomous(pruned, start, u, end):
            pinned = u
            base["latest_user_moved"] = True
        elif u > start:
            end = u
        else:  # it opens the middle: keep it at the end of the head, compress what follows
            start = align_forward(pruned, u + 1)
            if start >= n:
                raise _NoCompaction("only the latest user turn and its tool results are compressible")
            end = max(tail_cut(pruned, start, tail_token_budget, protect_last_n), start)
            if end <= start:
                raise _NoCompaction("nothing between the head and the protected tail")
    return start, end, pinned


def _summarize(request, turns: list, previous: str | None, summarizers: tuple) -> dict:
    """The summary (prefixed) by the first summarizer that succeeds, else Hermes's static fallback:
    ``summary``, ``used`` (its name), the ``errors`` of those that failed, the last failure's
    ``reason`` (None unless the fallback wrote it) and the provider's ``usage``."""
    from hermesctx.summary import SummarizerError
    from hermesctx.summary.fallback import failure_reason, static_fallback_summary
    from hermesctx.summary.prompt import clean_response, ground_snapshot

    errors, reasons = [], []
    for candidate in summarizers:
        if candidate is None:
            continue
        try:
            text = clean_response(candidate.summarize(request))
            if not text:
                raise SummarizerError("the summarizer returned empty content", kind="empty")
            return {"summary": with_summary_prefix(ground_snapshot(text, turns)), "used": candidate.name,
                    "errors": errors, "reason": None,
                    "usage": getattr(candidate, "last_usage", None)}  # input, output, cache read/write
        except SummarizerError as err:
            reasons.append(failure_reason(err))
            errors.append({"summarizer": candidate.name, "kind": err.kind, "error": redact(reasons[-1], force=True)})
        except Exception as err:  # noqa: BLE001 - a summarizer bug must not lose the middle either
            reasons.append(failure_reason(f"{type(err).__name__}: {err}"))
            errors.append({"summarizer": candidate.name, "kind": "internal", "error": redact(reasons[-1], force=True)})
    reason = reasons[-1] if reasons else None
    return {"summary": static_fallback_summary(turns, reason=reason, had_previous=bool(previous)),
            "used": "static-fallback", "errors": errors, "reason": reason, "usage": None}


def _assembled(pruned: list, start: int, end: int, pinned: int | None, summary: str, marked: bool,
               hermes_note: bool) -> tuple[list, int]:
    """Head, summary, tail (a pinned ask right after the summary), orphans stripped, old images
    replaced: ``(messages, images stripped)``."""
    from hermesctx.stages.sanitize import strip_orphans

    extra = {_MARK: True} if marked else None
    if pinned is not None:  # the summary covers the turns on both sides of the ask, which follows it
        order = [i for i in range(len(pruned)) if i != pinned]
        order.insert(end - 1, pinned)
        out = assemble([pruned[i] for i in order], start, end - 1, summary, extra=extra, hermes_note=hermes_note,
                       pinned=True)
    else:
        out = assemble(pruned, start, end, summary, extra=extra, hermes_note=hermes_note)
    kept = strip_orphans(out)[0]
    out = strip_historical_media(kept)
    stripped = _images(kept) - _images(out) if out is not kept else 0
    return [{k: v for k, v in m.items() if k != "_db_persisted"} if "_db_persisted" in m else m for m in out], stripped


def compress_messages(messages: list, *, summarizer, fallback_summarizer=None, protect_first_n: int = 3,
                      protect_last_n: int = 20, tail_token_budget: int = 20_000,
                      max_summary_tokens: int = 10_000, focus: str | None = None,
                      today: str | None = None, archive=None,
                      hermes_note: bool | None = None, allow_fallback: bool = True,
                      top: dict | None = None) -> tuple[list, dict]:
    """Compress a message list: ``(new_list, report)``. The input is never mutated.

    A summarizer that fails is replaced by ``fallback_summarizer`` and then by Hermes's static
    fallback; the report's ``fallback`` says which was asked for, which wrote the summary and
    why (the error redacted). ``allow_fallback=False``: the first failure raises
    :class:`~hermesctx.errors.UpstreamError` (exit 4) instead.

    ``hermes_note``: whether the note on the system prompt keeps Hermes's sentence about its
    memory files (None: only for a Hermes transcript, see :func:`is_hermes_transcript`).
    ``top``: the body's ``system`` and ``tools`` (an Anthropic body's), sent before the live
    prefix of a provider summarizer's request (:func:`hermesctx.summary.prompt.live_request`).

    The steps: boundaries, the previous summary, the summary (with its fallbacks), assembly, the
    archive note, the measures and the drop ledger."""
    base: dict = {"protect_first_n": protect_first_n, "protect_last_n": protect_last_n,
                  "tail_token_budget": tail_token_budget}
    compacted_before = any(i > 0 or m.get("role") != "system" for i, m in enumerate(messages)
                           if is_summary_content(m.get("content")))
    first_n = 0 if compacted_before else protect_first_n
    base["protect_first_n_applied"] = first_n
    n = len(messages)
    if n <= head_size(messages, first_n) + 4:
        return _nothing(messages, "too few messages", base)
    # what a compaction needs, loaded only when there is one to make (a tiny file in a shell
    # loop starts without it)
    from hermesctx.stages.prune import prune_messages
    from hermesctx.summary import SummaryRequest
    from hermesctx.summary.ledger import extract
    from hermesctx.summary.prompt import auto_focus_topic, build_prompt, live_request, serialize_turns

    pruned, prune_report = prune_messages(messages, protect_tail_count=protect_last_n,
                                          protect_tail_tokens=tail_token_budget)
    base["pruned"] = prune_report["pruned"]
    try:
        start, end, pinned = _boundaries(pruned, first_n, tail_token_budget, protect_last_n, base)
    except _NoCompaction as why:
        return _nothing(messages, str(why), base)
    base.update(start=start, end=end)

    search_from = 1 if pruned[0].get("role") == "system" else 0
    idx, previous = find_latest_summary(pruned, search_from, end)

    def middle(source: list) -> list:
        skip = {pinned, idx if idx is not None and idx >= start else None}
        # turns before the old summary count too (not lost, as in Hermes); a pinned ask stays whole
        return [source[i] for i in range(start, end) if i not in skip]

    turns = middle(pruned)
    previous = previous or None
    if previous:  # its archive notes stay behind: the new summary gets a note of its own
        from hermesctx.archive import without_notes

        previous = without_notes(previous)
    base["previous_summary"] = idx is not None

    topic = focus or auto_focus_topic(pruned)
    budget = summary_budget(tokens.rough_messages(turns), max_summary_tokens)
    original, after = middle(messages), messages[end:]
    request = SummaryRequest(prompt=build_prompt(serialize_turns(turns), budget=budget, previous_summary=previous,
                                                 focus=topic, today=today),
                             budget_tokens=budget, turns=original, previous_summary=previous, focus=topic,
                             ledgers=extract(original, after),
                             cut_before=_cut_edits(messages, pruned, range(start)),
                             cut_after=_cut_edits(messages, pruned, range(end, n)), after=after,
                             **live_request(messages, start, end, top=top, budget=budget, previous_summary=previous,
                                            focus=topic, today=today))
    attempt = _summarize(request, turns, previous,
                         (summarizer, fallback_summarizer) if allow_fallback else (summarizer,))
    errors = attempt["errors"]
    if errors and not allow_fallback:
        raise UpstreamError(f"the {errors[0]['summarizer']} summarizer failed ({errors[0]['kind']}): "
                            f"{errors[0]['error']}; no fallback (--no-fallback)")
    summary = attempt["summary"]
    if hermes_note is None:
        hermes_note = is_hermes_transcript(messages)
    if not hermes_note:  # Hermes's memory files are named to a Hermes agent only, as in the note
        summary = with_summary_prefix(summary, hermes=False)
    out, stripped = _assembled(pruned, start, end, pinned, summary, bool(archive), hermes_note)
    compaction = {"summary": summary, "start": start, "end": end}
    note = None
    if archive:  # the note now, the archive written only once the result is kept (below)
        compaction["compressed_length"] = len(out)
        note = archive.note(messages, **compaction)
        out = _note_archive(out, note)
    attempt.update(budget=budget, focus=topic)  # (what it was asked for: said in the report)
    return _measured(messages, out, base, request.turns, attempt, compaction, archive, note, stripped, request.ledgers)


def _measured(messages: list, out: list, base: dict, turns: list, attempt: dict, compaction: dict, archive,
              note: dict | None, stripped: int, ledgers) -> tuple[list, dict]:
    """The report of a compaction (Hermes's lines, the drop ledger, warnings), and the input kept
    instead when the output would not be smaller (``ledgers``: those of ``turns``, extracted once
    for the summary and the drop ledger)."""
    from hermesctx.summary.drops import drop_ledger

    n, start, end = len(messages), compaction["start"], compaction["end"]
    used, errors, usage = attempt["used"], attempt["errors"], attempt["usage"]
    fallback, reason = used == "static-fallback", attempt["reason"]
    before_tokens = tokens.rough_messages(messages)
    after_tokens = tokens.rough_messages(out)
    report = {**base, "compressed": True, "summarizer": used, "summarizer_errors": errors,
              "fallback": {"requested": errors[0]["summarizer"], "used": used, "kind": errors[0]["kind"],
                           "error": errors[0]["error"]} if errors else None,
              "middle_messages": end - start, "summarized_messages": len(turns),
              "dropped_without_summary": 0, "messages_before": n, "messages_after": len(out),
              "tokens_before": before_tokens, "tokens_after": after_tokens, "summary_budget": attempt["budget"],
              "focus": attempt["focus"]}
    # the facts of the compacted region that survive nowhere in the output (D16)
    report["drop_ledger"] = drop_ledger(turns, out, archive=(note.get("span") or note.get("path")) if note else None,
                                        kept=messages[:start] + messages[end:], ledgers=ledgers)
    if usage:
        report["summary_usage"] = usage
    if after_tokens >= before_tokens:
        return _nothing(messages, f"compression would not shrink the request (~{before_tokens:,} -> "
                                  f"~{after_tokens:,} tokens); input kept", base)
    if archive:
        archive(messages, **compaction)
    savings = (before_tokens - after_tokens) / before_tokens * 100 if before_tokens else 0.0
    report["savings_pct"] = round(savings, 1)
    if savings < LOW_SAVINGS_PCT:
        report["warning"] = f"compression saved only {savings:.1f}% of the request"
    if stripped:  # (said, not silent: kept head and tail messages lose these too, as in Hermes)
        report["images_stripped"] = stripped
        report["warning"] = "; ".join(filter(None, (report.get("warning"), (
            f"{stripped} image(s) before the newest image-bearing user turn became a placeholder, "
            "in kept messages too"))))
    report.update(feedback(messages, out, before_tokens, after_tokens, fallback=fallback,
                           dropped=end - start if fallback else None, reason=reason if fallback else None))
    return out, report


def compress(doc: Any, *, summarizer, fallback_summarizer=None, protect_first_n: int = 3,
             protect_last_n: int = 20, tail_token_budget: int = 20_000, max_summary_tokens: int = 10_000,
             focus: str | None = None, today: str | None = None, archive=None,
             hermes_note: bool | None = None, allow_fallback: bool = True) -> tuple[Any, dict]:
    """The ``compress`` stage on a document: ``(new_doc, report)``."""
    messages = messages_of(doc)
    check_messages(messages)
    # a provider's compaction block is never summarized, split or merged: what follows its
    # message is compressed, it and what precedes it (which its API drops) stay as they are
    kept = last_compaction(messages) + 1
    rest = messages[kept:] if kept else messages
    new, report = compress_messages(rest, summarizer=summarizer, fallback_summarizer=fallback_summarizer,
                                    protect_first_n=protect_first_n, protect_last_n=protect_last_n,
                                    tail_token_budget=tail_token_budget, max_summary_tokens=max_summary_tokens,
                                    focus=focus, today=today, archive=archive, hermes_note=hermes_note,
                                    allow_fallback=allow_fallback,
                                    top={k: doc[k] for k in ("system", "tools") if k in doc} if isinstance(doc, dict) else None)
    if kept:
        report["kept_through_provider_compaction"] = kept
        if new is rest:
            return doc, report
        new = [*messages[:kept], *new]
    return (doc if new is messages else with_messages(doc, new)), report


def fallback_warning(report: dict) -> str | None:
    """The warning a fallback deserves: which summarizer failed, why, and who stood in."""
    info = report.get("fallback")
    if not info:
        return None
    return (f"the {info['requested']} summarizer failed ({info['kind']}: {info['error']}); "
            f"the summary was written by {info['used']} instead (--no-fallback makes this an error)")


def describe(report: dict) -> str:
    if "expanded" in report:  # a report of --expand (hermesctx.archive.expand / expand_store)
        span = f" (span {report['span']})" if report.get("span") else ""
        return (f"restored {report['restored']} messages from {report['archive']}{span}" if report["expanded"]
                else report["reason"])
    if not report.get("compressed"):
        return f"{report['headline']}: {report['reason']}"
    who = report.get("summarizer") or f"engine {report.get('engine')}"
    line = f"{report['headline']} ({who}); {report['token_line']}"
    if report.get("note"):
        line += f"; {report['note']}"
    if report.get("warning"):
        line += f"; warning: {report['warning']}"
    return line


@record(frozen=True)
class Options(BudgetOptions):
    summarizer: str | None = option(
        flag="--summarizer", metavar="NAME",
        help=f"Who writes the summary: {', '.join(registry.names(registry.SUMMARIZERS))} or an installed plugin "
             "summarizer (default: config summarizer.name / auxiliary.compression.provider, else "
             "extractive: offline, no model).")
    summary_model: str | None = option(flag="--summary-model", key="auxiliary.compression.model",
                                       help="Model of the summarizer (config auxiliary.compression.model).")
    base_url: str | None = option(flag="--base-url", key="auxiliary.compression.base_url",
                                  help="Summarizer endpoint, e.g. any OpenAI-compatible server (env OPENAI_BASE_URL).")
    api_key: str | None = option(flag="--api-key", key="auxiliary.compression.api_key",
                                 help="Summarizer API key (env ANTHROPIC_API_KEY / OPENAI_API_KEY).")
    timeout: float | None = option(
        flag="--timeout", kind=float, low=0, open_low=True, key="auxiliary.compression.timeout",
        help="Deadline in seconds for each whole summarizer request, not per read "
             "(config auxiliary.compression.timeout).")
    fallback: bool | None = option(
        flag="--fallback/--no-fallback", kind=bool, key="summarizer.fallback",
        help="When the requested summarizer fails (no key, dead endpoint, circuit open), let the "
             "extractive summarizer stand in, with a warning naming the error (default; config "
             "summarizer.fallback); --no-fallback: exit 4 instead.")
    focus: str | None = option(flag="--focus", help="Topic that gets 60-70% of the summary budget.")
    protect_first_n: int | None = option(flag="--protect-first-n", kind=int, low=0,
                                         key="compression.protect_first_n",
                                         help="Messages after the system prompt always kept (default 3).")
    protect_last_n: int | None = option(
        flag="--protect-last-n", kind=int, low=1, key="compression.protect_last_n",
        help="Minimum of recent messages kept (default 20, at most 8 count toward the tail floor).")
    tail_tokens: int | None = option(
        flag="--tail-tokens", kind=int, low=1,
        help="Token budget of the protected tail (default: threshold x target ratio of the model).")
    if_needed: bool = option(False, flag="--if-needed", kind=bool,
                             help="Only compress transcripts at or over the threshold.")
    archive_dir: str | None = option(
        flag="--archive", key="archive.path", metavar="PATH",
        help="Keep the compacted-away transcript for --expand and `hermesctx recall`: PATH ending "
             ".sqlite/.db (or an existing SQLite file) is the archive store, one span per compaction, "
             "searchable; a directory holds one JSON Lines file per compaction (config archive.path, "
             "or archive.dir). Both hold the messages verbatim, secrets included (keep them private); "
             "the note naming the archive in the summary is redacted.")
    session: str | None = option(
        flag="--session", metavar="NAME",
        help="The store session the compaction belongs to (default: the session of the span the "
             "previous summary names, else the document's session_id/id, else a hash of its system "
             "prompt and first four messages).")
    expand: bool = option(False, flag="--expand", kind=bool,
                          help="Reverse the newest compaction made with --archive, reading only from that "
                               "PATH (the store, or the directory).")
    explain: bool = option(False, flag="--explain", kind=bool,
                           help="Print the drop ledger on stderr: the facts of the compacted region (error and "
                                "outcome lines, values read, last changes, decisions, constraints) that survive "
                                "nowhere in the output, with their count over the total.")
    # --- issue 34: the cost of a compaction and the minimum-gain gate (hermesctx.cost) ---
    min_gain: int | None = option(
        flag="--min-gain", kind=int, low=0, key="compression.min_gain", metavar="TOKENS",
        help="Decline a compaction that saves fewer than TOKENS tokens per later request or would not "
             "repay the prompt cache it breaks within the requests expected (as many as since the last "
             "compaction); the input is kept, the reason reported, exit 0 (config compression.min_gain).")
    min_saving_usd: float | None = option(
        flag="--min-saving-usd", kind=float, low=0, key="compression.min_saving_usd", metavar="USD",
        help="The gate in money: decline a compaction whose net saving over the requests expected is "
             "under USD (config compression.min_saving_usd).")
    hermes_note: bool | None = option(
        flag="--hermes-note/--no-hermes-note", kind=bool, key="compression.hermes_note",
        help="Keep Hermes's sentences about its memory files (MEMORY.md, USER.md) in the note "
             "added to the system prompt and in the summary's prefix (config compression.hermes_note; "
             "default: only when the system prompt mentions those files, i.e. a Hermes transcript).")


def _under_threshold(doc: Any, budgets) -> dict | None:
    """The report of ``--if-needed`` on a transcript under the threshold, else None."""
    size = tokens.rough_messages(messages_of(doc))
    if size < budgets.threshold_tokens:
        return {"compressed": False, "headline": "Not compressed",
                "reason": f"~{size:,} tokens is under the threshold of {budgets.threshold_tokens:,}"}
    return None


def _engine_stage(name: str, options: Options, ctx, settings, summarizer, directory):
    """The stage when config ``context.engine`` names a plugin engine (:mod:`hermesctx.plugins`):
    the same ``--if-needed`` rule and budgets, the engine in place of :func:`compress`."""
    from hermesctx import plugins
    from hermesctx.errors import UsageError

    if directory:  # the archive is written by the built-in compressor, from its own middle
        raise UsageError(f"--archive (archive.path, archive.dir) works with the built-in compressor, not the engine {name!r}",
                         hint="set context.engine: compressor, or leave the archive to the engine")
    plugin, engine = plugins.engine(name, settings["auxiliary.compression.timeout"])

    def run(doc):
        budgets = ctx.budgets(settings, doc)[0]
        if options.if_needed and (skipped := _under_threshold(doc, budgets)) is not None:
            return doc, skipped
        messages = messages_of(doc)
        check_messages(messages)
        context = plugins.EngineContext(
            context_length=budgets.context_length, threshold_tokens=budgets.threshold_tokens,
            tail_token_budget=options.tail_tokens or budgets.tail_token_budget,
            max_summary_tokens=budgets.max_summary_tokens,
            protect_first_n=settings["compression.protect_first_n"],
            protect_last_n=settings["compression.protect_last_n"], focus=options.focus,
            summarizer=summarizer, settings=settings, warn=ctx.env.warn)
        new, report = plugins.run_engine(plugin, engine, messages, context)
        return (doc if new == messages else with_messages(doc, new)), report

    return run


def _is_store(path: str) -> bool:
    from hermesctx.store import is_store_path

    return is_store_path(path)


def build(options: Options, ctx):
    """The stage as a function of one document, ``doc -> (doc, report)``; with ``expand`` the
    reverse, reading only from the archive directory."""
    settings = ctx.settings_with(flags(options))
    directory = settings["archive.path"] or settings["archive.dir"]
    store = bool(directory) and _is_store(directory)
    if options.expand:
        from functools import partial

        from hermesctx.archive import expand, expand_store
        from hermesctx.errors import UsageError

        if not directory:
            raise UsageError("--expand reads archives only from the configured archive: "
                             "give --archive PATH (or archive.path in the config)")
        return partial(expand_store, path=directory) if store else partial(expand, directory=directory)
    from hermesctx.summary import choose

    primary = choose(settings, name=options.summarizer, environ=ctx.env.environ, warn=ctx.env.warn)
    engine_name = settings["context.engine"] or "compressor"
    if engine_name != "compressor":
        return _engine_stage(engine_name, options, ctx, settings, primary, directory)
    allow_fallback = settings["summarizer.fallback"]
    fallback = None if primary.name == "extractive" or not allow_fallback else choose(settings, name="extractive")
    archiver = None
    if directory:
        from hermesctx.archive import Archiver, StoreArchiver

        archiver = StoreArchiver(directory, options.session) if store else Archiver(directory)

    def run(doc):
        budgets = ctx.budgets(settings, doc)[0]
        if options.if_needed and (skipped := _under_threshold(doc, budgets)) is not None:
            return doc, skipped
        out, report = compress(doc, summarizer=primary, fallback_summarizer=fallback,
                               protect_first_n=settings["compression.protect_first_n"],
                               protect_last_n=settings["compression.protect_last_n"],
                               tail_token_budget=options.tail_tokens or budgets.tail_token_budget,
                               max_summary_tokens=budgets.max_summary_tokens, focus=options.focus,
                               archive=archiver.for_doc(doc) if store else archiver,  # (its session)
                               hermes_note=settings["compression.hermes_note"],
                               allow_fallback=allow_fallback)
        if report.get("compressed"):
            out, report = _priced(doc, out, report, ctx, settings, budgets)
        for warning in (report.get("warning"), fallback_warning(report)):
            if warning:
                ctx.env.warn(warning)
        if options.explain and report.get("drop_ledger"):
            from hermesctx.summary.drops import explain

            ctx.env.info(explain(report["drop_ledger"]))
        return out, report

    return run


def _priced(doc, out, report: dict, ctx, settings, budgets) -> tuple:
    """Issue 34's hook: the compaction's cost (``report["cost"]``) and the minimum-gain gate,
    which keeps the input when the compaction would not repay the cache it breaks."""
    from decimal import Decimal

    from hermesctx.cost import compress_cost

    usd = settings["compression.min_saving_usd"]
    cost, reason = compress_cost(messages_of(doc), messages_of(out), report, model=ctx.model(settings, doc)["model"],
                                 provider=settings["model.provider"], summary_model=settings["auxiliary.compression.model"],
                                 window=budgets.context_length, min_gain=settings["compression.min_gain"],
                                 min_saving_usd=None if usd is None else Decimal(str(usd)))
    if reason is None:
        return out, {**report, "cost": cost}
    size = report["tokens_before"]
    return doc, {**report, **feedback(messages_of(doc), messages_of(doc), size, size), "compressed": False,
                 "declined": True, "reason": f"declined by the minimum-gain gate: {reason}; input kept",
                 "tokens_after": size, "messages_after": report["messages_before"], "cost": cost}
