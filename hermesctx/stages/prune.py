"""Phase 1 of compaction: cheap pruning of old tool output, no model call.

:func:`prune_messages` is Hermes 0.19.0's ``_prune_old_tool_results`` on OpenAI-shaped
messages: deduplicate identical tool results over the whole transcript, replace
tool results outside the protected tail by one-line stubs (:mod:`hermesctx.stubs`), shrink
long tool-call arguments outside the tail. Anthropic ``tool_use``/``tool_result`` blocks get
the same three passes in a transcript without OpenAI tool traffic (so Anthropic transcripts shrink too; Hermes leaves
them alone).

Copy-on-write: the input is never mutated; only rewritten messages are new dicts.
"""

from __future__ import annotations

from hermesctx import tokens
from hermesctx.jsonio import dumps_like_json, loads_like_json
from hermesctx.messages import (
    IMAGE_PART_TYPES,
    check_messages,
    messages_of,
    part_type,
    with_messages,
)
from hermesctx.options import BudgetOptions, flags, option
from hermesctx.record import record
from hermesctx.stages.pairs import anthropic_blocks_apply, holds_results
from hermesctx.stages.pairs import hashable as _hashable
from hermesctx.stubs import summarize_tool_result

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DUPLICATE_TEXT = "[Duplicate tool output — same content as a more recent call]"
CLEARED_PLACEHOLDER = "[Old tool output cleared to save context space]"
IMAGE_PLACEHOLDER = "[screenshot removed to save context]"
MULTIMODAL_PREFIX = "[screenshot removed] "
TRUNCATION_SUFFIX = "...[truncated]"
STUB_FLOOR = 200  # a result is stubbed when longer than this
DEDUP_FLOOR = 200  # a result takes part in dedup when at least this long
ARGS_TRIGGER = 500  # arguments longer than this are shrunk
HEAD_CHARS = 200


# --- helpers shared with compress -------------------------------------------------------

def strip_image_parts(parts: list, placeholder: str = IMAGE_PLACEHOLDER) -> list | None:
    """``parts`` with every image part replaced by a text placeholder; None if there was none."""
    found = False
    out = []
    for part in parts:
        if part_type(part) in IMAGE_PART_TYPES:
            found = True
            out.append({"type": "text", "text": placeholder})
        else:
            out.append(part)
    return out if found else None


def _shrink(value: Any) -> Any:
    if isinstance(value, str):
        return value[:HEAD_CHARS] + TRUNCATION_SUFFIX if len(value) > HEAD_CHARS else value
    if isinstance(value, dict):
        return {k: _shrink(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shrink(v) for v in value]
    return value


def _long_text(value: Any) -> bool:
    """Whether ``value`` holds a string that :func:`_shrink` cuts (at any depth)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if len(item) > HEAD_CHARS:
                return True
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def truncate_args_json(args: Any) -> Any:
    """Hermes ``_truncate_tool_call_args_json``: long string leaves cut, JSON kept valid;
    arguments that do not parse come back unchanged."""
    try:
        parsed = loads_like_json(args)
    except (ValueError, TypeError, RecursionError):
        return args
    return dumps_like_json(_shrink(parsed), ensure_ascii=False)


def tail_boundary(messages: list, protect_tail_count: int, protect_tail_tokens: int | None,
                  estimate=tokens.tail_tokens) -> int:
    """Index of the first protected message, as Hermes finds it.

    Token mode walks back while the budget holds; the message that overflows it is itself
    protected; ``protect_tail_count`` is a floor. Count mode: the last ``count`` messages.
    """
    n = len(messages)
    if protect_tail_tokens is None or protect_tail_tokens <= 0:
        return n - protect_tail_count
    floor = min(protect_tail_count, n)
    total = 0
    boundary = n
    for i in range(n - 1, -1, -1):
        cost = estimate(messages[i])
        boundary = i
        if total + cost > protect_tail_tokens and n - i >= floor:
            break
        total += cost
    return n - max(n - boundary, floor)


# --- OpenAI shape -----------------------------------------------------------------------

def _index_calls(index: dict, msg: dict) -> None:
    """Add an assistant message's calls to ``index`` (id -> the call) unless an id is there
    already: the messages are indexed from the last, so the last call of an id wins, as in
    Hermes's index built from the first. What a call holds is read only for a result that
    gets a stub (:func:`_name_and_args`)."""
    calls = msg.get("tool_calls")
    if not calls or not isinstance(calls, (list, str, dict)):
        return
    for tc in reversed(calls):
        if isinstance(tc, dict):
            key = tc.get("id", "")
            if type(key) is not str:
                key = _hashable(key)
        else:  # not a call object: Hermes files it under the empty id
            key = ""
        if key not in index:
            index[key] = tc


def _name_and_args(call: Any) -> tuple[Any, Any]:
    """A call's name and arguments as Hermes's index holds them (none: ``unknown``)."""
    if not isinstance(call, dict):
        return "unknown", ""
    fn = call.get("function")
    fn = fn if isinstance(fn, dict) else {}
    return fn.get("name", "unknown"), fn.get("arguments", "")


class _Seen:
    """The results met so far, by length first: a result whose length no other has is never
    hashed (hashing every large output cost more than comparing the few of equal length); a
    length shared by many switches to a set.

    Results are duplicates when their UTF-8 bytes are (lone surrogates replaced), as Hermes
    compares them; the key is the text itself when it is ASCII (no copy), else its bytes (as
    text again when those came out ASCII, so equal bytes always give equal keys)."""

    def __init__(self) -> None:
        self._by_len: dict = {}

    def again(self, content: Any) -> bool | None:
        """True when an equal result was met before (this one is recorded otherwise); None
        when ``content`` takes no part in deduplication."""
        if not isinstance(content, str) or len(content) < DEDUP_FLOOR:
            return None
        key = content
        if not content.isascii():
            raw = content.encode("utf-8", errors="replace")
            key = raw.decode("ascii") if raw.isascii() else raw
        bucket = self._by_len.get(len(key))
        if bucket is None:
            self._by_len[len(key)] = [key]
            return False
        if key in bucket:
            return True
        if type(bucket) is list and len(bucket) >= 8:
            bucket = self._by_len[len(key)] = set(bucket)
        if type(bucket) is set:
            bucket.add(key)
        else:
            bucket.append(key)
        return False


def _stub_content(content: Any, name: Any, args: Any) -> Any:
    """The pass-2 replacement for one tool-result content, or None to keep it."""
    if isinstance(content, list):
        return strip_image_parts(content)
    if isinstance(content, dict):
        if not content.get("_multimodal"):
            return None
        summary = content.get("text_summary") or IMAGE_PLACEHOLDER
        try:
            summary = summary[:200]
        except (TypeError, KeyError):
            summary = str(summary)[:200]
        return f"{MULTIMODAL_PREFIX}{summary}"
    if not isinstance(content, str) or not content or content == CLEARED_PLACEHOLDER:
        return None
    if content.startswith("[Duplicate tool output") or len(content) <= STUB_FLOOR:
        return None
    return summarize_tool_result(name, args, content)


def _measure(saved: list | None, msg: dict, old: Any, new: Any, rewritten: dict) -> None:
    """Add to ``saved`` ([chars, images] or None) what rewriting ``msg`` as ``rewritten`` (one
    value ``old`` replaced by ``new``) removed from the request estimate's measure. The usual
    message holds no image: only the two values are measured (:func:`tokens.printed_diff`)."""
    if saved is None:
        return
    # (a text in place of a value leaves a message without image so: the usual stub)
    if tokens.imageless(msg) and (type(new) is str or tokens.imageless(rewritten)):
        saved[0] += tokens.printed_diff(old, new)
    else:
        chars, images = tokens.saved_size(msg, rewritten)
        saved[0] += chars
        saved[1] += images


def _prune_openai(messages: list, boundary: int, saved: list | None = None) -> tuple[list, dict]:
    result = list(messages)
    report = {"pruned": 0, "deduplicated": 0, "stubbed": 0, "args_truncated": 0, "changes": []}
    changes = report["changes"]

    # from the last message: the call index and the duplicates (the most recent one is kept)
    index: dict = {}
    seen = _Seen()
    for i in range(len(result) - 1, -1, -1):
        msg = result[i]
        role = msg.get("role")
        if role == "assistant":
            _index_calls(index, msg)
        elif role == "tool":
            content = msg.get("content")
            if seen.again(content or ""):
                result[i] = new = {**msg, "content": DUPLICATE_TEXT}
                report["deduplicated"] += 1
                changes.append({"index": i, "change": "deduplicated"})
                _measure(saved, msg, content, DUPLICATE_TEXT, new)

    # outside the tail: tool results become stubs, long call arguments are cut (one pass:
    # the two rules touch different messages)
    for i in range(max(boundary, 0)):
        msg = result[i]
        role = msg.get("role")
        if role == "tool":
            cid = msg.get("tool_call_id", "")
            name, args = _name_and_args(index.get(cid if type(cid) is str else _hashable(cid)))
            content = msg.get("content", "")
            stub = _stub_content(content, name, args)
            if stub is not None:
                result[i] = new = {**msg, "content": stub}
                report["stubbed"] += 1
                changes.append({"index": i, "change": "stubbed"})
                _measure(saved, msg, content, stub, new)
            continue
        calls = msg.get("tool_calls")
        if role != "assistant" or not calls or not isinstance(calls, list):
            continue
        new_calls = []
        changed = 0
        for tc in calls:
            fn = tc.get("function") if isinstance(tc, dict) else None
            args = fn.get("arguments", "") if isinstance(fn, dict) else None
            if isinstance(args, str) and len(args) > ARGS_TRIGGER:
                shrunk = truncate_args_json(args)
                if shrunk != args:
                    tc = {**tc, "function": {**fn, "arguments": shrunk}}
                    changed += 1
            new_calls.append(tc)
        if changed:
            result[i] = new = {**msg, "tool_calls": new_calls}
            report["args_truncated"] += changed
            changes.append({"index": i, "change": "args_truncated"})
            _measure(saved, msg, calls, new_calls, new)

    report["pruned"] = report["deduplicated"] + report["stubbed"]
    return result, report


# --- Anthropic blocks (Hermes prunes none) --------------------------------------------------------------

def _blocks(msg: dict, kind: str):
    content = msg.get("content")
    if isinstance(content, list):
        for j, block in enumerate(content):
            if isinstance(block, dict) and block.get("type") == kind:
                yield j, block


def _replace_block(result: list, i: int, j: int, block: dict) -> None:
    msg = result[i]
    content = list(msg["content"])
    content[j] = block
    result[i] = {**msg, "content": content}


def _block_boundary(messages: list, protect_tail_count: int,
                    protect_tail_tokens: int | None) -> tuple[int, int | None]:
    """:func:`tail_boundary` of an Anthropic transcript walked as the OpenAI messages it stands
    for (a turn of k tool results is k ``tool`` messages, each costing its content): ``(index of
    the first protected message, first protected block of the message before it or None)``. A
    boundary inside a turn of results leaves the results before it unprotected, as it leaves
    the ``tool`` messages before it in the OpenAI form."""
    units: list[tuple[int, int | None]] = []
    costs: list[int] = []
    for i, msg in enumerate(messages):
        if holds_results(msg):
            for j, cost in tokens.result_units(msg["content"]):
                units.append((i, j))
                costs.append(cost)
        else:
            units.append((i, None))
            costs.append(tokens.block_tail_tokens(msg))
    at = tail_boundary(costs, protect_tail_count, protect_tail_tokens, int)
    if at <= 0:
        return at, None
    if at >= len(units):
        return len(messages), None
    i, j = units[at]
    if j is not None and units[at - 1][0] == i:  # inside the turn: its earlier results are not protected
        return i, j
    return i, None


def _prune_anthropic(messages: list, boundary: int, saved: list | None = None,
                     first_kept: int | None = None) -> tuple[list, dict]:
    result = list(messages)
    report = {"pruned": 0, "deduplicated": 0, "stubbed": 0, "args_truncated": 0, "changes": []}
    index = {}
    for msg in messages:
        for _, block in _blocks(msg, "tool_use"):
            # (the input is written as JSON only for a result that gets a stub)
            index[_hashable(block.get("id", ""))] = (block.get("name", "unknown"), block.get("input", {}))

    seen = _Seen()
    for i in range(len(result) - 1, -1, -1):
        for j, block in reversed(list(_blocks(result[i], "tool_result"))):
            if seen.again(block.get("content") or ""):
                _replace_block(result, i, j, {**block, "content": DUPLICATE_TEXT})
                report["deduplicated"] += 1
                report["changes"].append({"index": i, "block": j, "change": "deduplicated"})

    for i in range(max(boundary, 0) + (first_kept is not None)):
        for j, block in list(_blocks(result[i], "tool_result")):
            if i == boundary and j >= first_kept:
                break  # (the protected results of the turn the boundary cuts)
            use = index.get(_hashable(block.get("tool_use_id", "")))
            name, args = ("unknown", "") if use is None else use
            content = block.get("content", "")
            if use is not None and isinstance(content, str) and len(content) > STUB_FLOOR:
                args = dumps_like_json(args, ensure_ascii=False)
            new = _stub_content(content, name, args)
            if new is not None:
                _replace_block(result, i, j, {**block, "content": new})
                report["stubbed"] += 1
                report["changes"].append({"index": i, "block": j, "change": "stubbed"})
        for j, block in list(_blocks(result[i], "tool_use")) if i < boundary else ():
            value = block.get("input")
            # (only a text longer than HEAD_CHARS can be cut: an input without one is not
            # written out to be measured)
            if _long_text(value) and len(dumps_like_json(value, ensure_ascii=False, default=str)) > ARGS_TRIGGER:
                shrunk = _shrink(value)
                if shrunk != value:
                    _replace_block(result, i, j, {**block, "input": shrunk})
                    report["args_truncated"] += 1
                    report["changes"].append({"index": i, "block": j, "change": "args_truncated"})

    report["pruned"] = report["deduplicated"] + report["stubbed"]
    if saved is not None:  # (a turn may lose several blocks: each rewritten turn measured once)
        chars, images = tokens.saved_sizes(messages, result)
        saved[0] += chars
        saved[1] += images
    return result, report


# --- entry points -----------------------------------------------------------------------

def prune_messages(messages: list, *, protect_tail_count: int,
                   protect_tail_tokens: int | None = None) -> tuple[list, dict]:
    """Prune a message list; ``(new_list, report)``. Report keys: ``pruned`` (Hermes's count:
    deduplicated + stubbed), ``deduplicated``, ``stubbed``, ``args_truncated``, ``boundary``
    (first protected index) and ``changes`` (one entry per rewritten message or block)."""
    return _pruned(messages, protect_tail_count, protect_tail_tokens)


def _pruned(messages: list, protect_tail_count: int, protect_tail_tokens: int | None,
            saved: list | None = None) -> tuple[list, dict]:
    """:func:`prune_messages`; ``saved`` ([chars, images], when given) gains what the rewrites
    removed from the request estimate's measure, counted as each is made (the tokens saved
    without a second look at the messages)."""
    if not messages:
        return messages, {"pruned": 0, "deduplicated": 0, "stubbed": 0, "args_truncated": 0,
                          "boundary": 0, "changes": []}
    # The OpenAI passes (exactly Hermes: they touch only `tool` messages and `tool_calls`), or
    # in an Anthropic transcript, which has neither (the OpenAI passes would change nothing),
    # the same rules on its blocks (Hermes prunes none) with a tail estimate that sees inside
    # them.
    if anthropic_blocks_apply(messages):
        boundary, first_kept = _block_boundary(messages, protect_tail_count, protect_tail_tokens)
        result, report = _prune_anthropic(messages, boundary, saved, first_kept)
    else:
        boundary = tail_boundary(messages, protect_tail_count, protect_tail_tokens)
        result, report = _prune_openai(messages, boundary, saved)
    report["boundary"] = max(boundary, 0)
    return result, report


FULL = "full"  # measure=: tokens before and after (and saved)
CHANGED = "changed"  # measure=: tokens saved, measured on the changed messages only


def prune(doc: Any, *, protect_last_n: int = 20, tail_tokens: int | None = None,
          measure: bool | str = FULL) -> tuple[Any, dict]:
    """The ``prune`` stage on a document: ``(new_doc, report)``. ``measure``: ``"full"`` (or
    True) gives rough tokens before/after the whole transcript and saved; ``"changed"`` only
    the tokens saved, measured on the rewritten messages (the default report line: measuring
    the whole input costs more than pruning it); False nothing (None)."""
    messages = messages_of(doc)
    check_messages(messages)
    if protect_last_n < 0:
        from hermesctx.errors import UsageError

        raise UsageError(f"protect_last_n must be >= 0, got {protect_last_n}")
    saved = [0, 0] if measure else None  # (printed chars, images)
    new, report = _pruned(messages, protect_last_n, tail_tokens, saved)
    full = measure is True or measure == FULL
    report["tokens_before"], report["tokens_after"] = (
        tokens.rough_before_after(messages, new) if full else (None, None))
    # tokens.rough_saved(messages, new), from the sizes counted at each rewrite
    report["tokens_saved"] = None if saved is None else saved[0] // 4 + tokens.IMAGE_TOKENS * saved[1]
    report["protect_last_n"] = protect_last_n
    report["tail_tokens"] = tail_tokens
    return with_messages(doc, new), report


def _clear_thinking(doc: Any, report: dict, keep: int) -> tuple[Any, dict]:
    from hermesctx.stages.thinking import clear_thinking

    messages = messages_of(doc)
    new, cleared = clear_thinking(messages, keep)
    report = {**report, "thinking": cleared}
    if report.get("tokens_after") is not None:
        report["tokens_after"] = tokens.rough_messages(new)
    return (doc if new is messages else with_messages(doc, new)), report


def describe(report: dict) -> str:
    if report.get("thinking"):
        from hermesctx.stages.thinking import describe as thinking

        return f"{_describe(report)}; {thinking(report['thinking'])}"
    return _describe(report)


def _describe(report: dict) -> str:
    verb = "would prune" if report.get("dry_run") else "pruned"
    from hermesctx.context import plural

    line = (f"{verb} {plural(report['pruned'], 'tool result')} ({plural(report['deduplicated'], 'duplicate')}), "
            f"{plural(report['args_truncated'], 'argument')} truncated")
    if report.get("tokens_before") is not None:
        return f"{line}; ~{report['tokens_before']:,} -> ~{report['tokens_after']:,} tokens"
    if report.get("tokens_saved") is not None:
        return f"{line}; ~{report['tokens_saved']:,} tokens saved"
    return line


_VERBS = {"stubbed": "stub", "deduplicated": "deduplicate", "args_truncated": "truncate arguments"}


@record(frozen=True)
class Options(BudgetOptions):
    # Hermes's protect_tail_count may be 0 here (no floor: the token budget alone); the config
    # key keeps its own range (>= 1), so the flag is not checked as the key
    protect_last_n: int | None = option(
        flag="--protect-last-n", kind=int, low=0, key="compression.protect_last_n", own_range=True,
        help="Always protect at least the last N messages; 0: no floor "
             "(default 20, config compression.protect_last_n).")
    tail_tokens: int | None = option(
        flag="--tail-tokens", kind=int, low=0,
        help="Token budget of the protected tail (0: count only; default: from the model's budgets).")
    dry_run: bool = option(False, flag="--dry-run", kind=bool,
                           help="List what would change on stderr; output the input unchanged.")
    clear_thinking: int | None = option(
        flag="--clear-thinking", kind=int, low=0, metavar="KEEP",
        help="Also remove the thinking blocks and reasoning of all but the last KEEP assistant turns "
             "(whole blocks, never edited: signatures stay valid; the open tool-use loop keeps its own).")


def build(options: Options, ctx):
    """The stage as a function of one document, ``doc -> (doc, report)``. Measuring the whole
    transcript costs more than pruning it: the totals only when the JSON reports are read
    (``--report``, ``run``), the tokens saved on the changed messages for the line on stderr,
    nothing when nothing reads the reports."""
    settings = ctx.settings_with(flags(options))
    last_n = options.protect_last_n
    if last_n is None:
        last_n = settings["compression.protect_last_n"]

    def run(doc):
        budget = options.tail_tokens
        if budget is None:
            budget = ctx.budgets(settings, doc)[0].tail_token_budget
        measure = FULL if ctx.json_reports else ctx.reports and CHANGED
        new, rep = prune(doc, protect_last_n=last_n, tail_tokens=budget, measure=measure)
        if options.clear_thinking is not None:  # issue 34 (hermesctx.stages.thinking)
            new, rep = _clear_thinking(new, rep, options.clear_thinking)
        if options.dry_run:
            for change in rep["changes"]:
                block = f" block {change['block']}" if "block" in change else ""
                ctx.env.info(f"would {_VERBS[change['change']]}: messages[{change['index']}]{block}")
            rep["dry_run"] = True
            return doc, rep
        return new, rep

    return run
