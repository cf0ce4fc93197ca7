"""Repair orphaned tool_call / tool_result pairs (spec 20.3, 20.4.1; decision D6).

- :func:`strip_orphans` — Hermes's compressor repair ``_sanitize_tool_pairs``: results whose
  call is gone are removed, calls whose result is gone are removed, and an assistant message
  left with nothing visible says ``(tool call removed)``. The default of ``hermesctx sanitize``.
- :func:`stub_orphans` — Hermes's pre-API repair ``sanitize_api_messages`` (``--stub``): unknown
  roles dropped, empty ``tool_calls`` keys dropped, blank tool names repaired, orphan results
  removed, a stub result injected right after each call that lost its result, duplicate ids
  dropped.
- :func:`find_problems` — what ``--check`` reports, changing nothing.

Anthropic ``tool_use``/``tool_result`` blocks are repaired the same way in a transcript without
OpenAI tool traffic (Hermes does not); an OpenAI transcript is repaired exactly as Hermes does.
Matching is global and set-based, as in Hermes. Nothing here mutates its input.
"""

from __future__ import annotations

from typing import Any

from hermesctx.messages import check_messages, detect_format, messages_of, with_messages
from hermesctx.stages.prune import _hashable, anthropic_blocks_apply

CALL_REMOVED = "(tool call removed)"
RESULT_REMOVED = "(tool result removed)"
STUB_TEXT = "[Result unavailable — see context summary above]"
BLANK_NAME = "invalid_tool_call"
API_ROLES = frozenset({"system", "user", "assistant", "tool", "function", "developer"})


def _calls(msg: dict) -> list:
    calls = msg.get("tool_calls") or []
    return list(calls) if isinstance(calls, (list, str, dict)) else []


def _call_id(tc: Any) -> Any:
    """Compressor id: ``call_id`` if truthy, else ``id``, else ``""`` (not stripped)."""
    if not isinstance(tc, dict):
        return ""
    return _hashable(tc.get("call_id", "") or tc.get("id", "") or "")


def _strip(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _api_call_id(tc: Any) -> str:
    """Pre-API id: ``(call_id or id).strip()``."""
    if not isinstance(tc, dict):
        return ""
    return _strip(tc.get("call_id", "") or tc.get("id", "") or "")


def _is_blank(content: Any) -> bool:
    return not content or (isinstance(content, str) and not content.strip())


def _empty_report() -> dict:
    return {"results_removed": 0, "calls_removed": 0, "stubs_added": 0, "duplicates_removed": 0,
            "messages_dropped": 0, "names_repaired": 0}


# --- OpenAI shape -------------------------------------------------------------------------

def _strip_openai(messages: list) -> tuple[list, dict]:
    report = _empty_report()
    calls = {cid for m in messages if m.get("role") == "assistant" for tc in _calls(m)
             if (cid := _call_id(tc))}
    results = {_hashable(m["tool_call_id"]) for m in messages
               if m.get("role") == "tool" and m.get("tool_call_id")}
    orphan_results = results - calls
    missing = calls - results
    out = []
    for msg in messages:
        role = msg.get("role")
        if role == "tool" and orphan_results and msg.get("tool_call_id") \
                and _hashable(msg["tool_call_id"]) in orphan_results:
            report["results_removed"] += 1
            continue
        if role == "assistant" and missing and msg.get("tool_calls"):
            tcs = _calls(msg)
            kept = [tc for tc in tcs if _call_id(tc) not in missing]
            if len(kept) != len(tcs):
                report["calls_removed"] += len(tcs) - len(kept)
                msg = dict(msg)
                if kept:
                    msg["tool_calls"] = kept
                else:
                    del msg["tool_calls"]
                    if _is_blank(msg.get("content")):
                        msg["content"] = CALL_REMOVED
        out.append(msg)
    return out, report


def _api_role(msg: dict) -> bool:
    """Whether the pre-API repair keeps the message: a role the chat API accepts (a list or
    object role is simply not one, rather than a crash)."""
    role = msg.get("role")
    return isinstance(role, str) and role in API_ROLES


def _stub_openai(messages: list) -> tuple[list, dict]:
    report = _empty_report()
    msgs = []
    for msg in messages:
        if not _api_role(msg):
            report["messages_dropped"] += 1
            continue
        if msg.get("role") == "assistant" and "tool_calls" in msg \
                and not (isinstance(msg["tool_calls"], list) and msg["tool_calls"]):
            msg = {k: v for k, v in msg.items() if k != "tool_calls"}
        if msg.get("role") == "assistant" and msg.get("tool_calls"):
            tcs = list(msg["tool_calls"])
            changed = False
            for k, tc in enumerate(tcs):
                if not isinstance(tc, dict):
                    continue
                fn = tc.get("function")
                name = fn.get("name") if isinstance(fn, dict) else None
                if isinstance(name, str) and name.strip():
                    continue
                report["names_repaired"] += 1
                changed = True
                if isinstance(fn, dict):
                    tcs[k] = {**tc, "function": {**fn, "name": BLANK_NAME}}
                else:
                    tcs[k] = {**tc, "function": {"name": BLANK_NAME, "arguments": "{}"}}
            if changed:
                msg = {**msg, "tool_calls": tcs}
        msgs.append(msg)

    calls = {cid for m in msgs if m.get("role") == "assistant" for tc in _calls(m)
             if (cid := _api_call_id(tc))}
    results = {cid for m in msgs if m.get("role") == "tool" and (cid := _strip(m.get("tool_call_id") or ""))}
    orphan_results = results - calls
    missing = calls - results

    patched = []
    for msg in msgs:
        role = msg.get("role")
        if role == "tool" and _strip(msg.get("tool_call_id") or "") in orphan_results:
            report["results_removed"] += 1
            continue
        patched.append(msg)
        if role == "assistant" and missing:
            for tc in _calls(msg):
                cid = _api_call_id(tc)
                if cid in missing:
                    fn = tc.get("function") if isinstance(tc, dict) else None
                    name = (fn.get("name", "") or "") if isinstance(fn, dict) else ""
                    patched.append({"role": "tool", "name": name, "content": STUB_TEXT, "tool_call_id": cid})
                    report["stubs_added"] += 1

    seen_calls: set = set()
    seen_results: set = set()
    out = []
    for msg in patched:
        role = msg.get("role")
        if role == "assistant" and msg.get("tool_calls"):
            tcs = _calls(msg)
            kept = []
            for tc in tcs:
                cid = _api_call_id(tc)
                if cid and cid in seen_calls:
                    continue
                if cid:
                    seen_calls.add(cid)
                kept.append(tc)
            if len(kept) != len(tcs):
                report["duplicates_removed"] += len(tcs) - len(kept)
                msg = {**msg, "tool_calls": kept}
        elif role == "tool":
            cid = _strip(msg.get("tool_call_id") or "")
            if cid and cid in seen_results:
                report["duplicates_removed"] += 1
                continue
            if cid:
                seen_results.add(cid)
        out.append(msg)
    return out, report


# --- Anthropic blocks ---------------------------------------------------------------------

def _block_ids(messages: list, kind: str, key: str) -> set:
    return {_hashable(b[key]) for m in messages if isinstance(m.get("content"), list)
            for b in m["content"] if isinstance(b, dict) and b.get("type") == kind and b.get(key)}


def _repair_anthropic(messages: list, *, stub: bool) -> tuple[list, dict]:
    report = _empty_report()
    uses = _block_ids(messages, "tool_use", "id")
    results = _block_ids(messages, "tool_result", "tool_use_id")
    orphan_results = results - uses
    missing = uses - results
    out: list = []
    for msg in messages:
        if stub and not _api_role(msg):  # the pre-API role filter, as for OpenAI messages
            report["messages_dropped"] += 1
            continue
        content = msg.get("content")
        if not isinstance(content, list):
            out.append(msg)
            continue
        kept, stubs = [], []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("tool_use_id") \
                    and _hashable(block["tool_use_id"]) in orphan_results:
                report["results_removed"] += 1
                continue
            if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("id") \
                    and _hashable(block["id"]) in missing:
                if stub:
                    stubs.append({"type": "tool_result", "tool_use_id": block["id"], "content": STUB_TEXT})
                else:
                    report["calls_removed"] += 1
                    continue
            kept.append(block)
        if len(kept) != len(content):
            filler = CALL_REMOVED if msg.get("role") == "assistant" else RESULT_REMOVED
            msg = {**msg, "content": kept or [{"type": "text", "text": filler}]}
        out.append(msg)
        if stubs:
            report["stubs_added"] += len(stubs)
            out.append({"role": "user", "content": stubs})
    if stub:
        out = _merge_stub_turns(out)
    return out, report


def _merge_stub_turns(messages: list) -> list:
    """A stub turn followed by a user message with content blocks joins it (results first),
    so the user/assistant alternation Anthropic requires is kept."""
    out: list = []
    for msg in messages:
        prev = out[-1] if out else None
        if (prev is not None and prev.get("role") == "user" and msg.get("role") == "user"
                and isinstance(prev.get("content"), list) and prev["content"]
                and all(isinstance(b, dict) and b.get("type") == "tool_result" and b.get("content") == STUB_TEXT
                        for b in prev["content"])
                and len(prev) == 2):
            content = msg.get("content")
            rest = content if isinstance(content, list) else [{"type": "text", "text": content}] if content else []
            out[-1] = {**msg, "content": prev["content"] + list(rest)}
            continue
        out.append(msg)
    return out


# --- entry points -------------------------------------------------------------------------

def _both(openai_pass, messages: list, stub: bool) -> tuple[list, dict]:
    """The OpenAI repair (exactly Hermes), then the same repair of Anthropic blocks when the
    transcript is an Anthropic one (D6; see :func:`anthropic_blocks_apply`)."""
    out, report = openai_pass(messages)
    if anthropic_blocks_apply(messages):
        out, extra = _repair_anthropic(out, stub=stub)
        report = {k: report[k] + extra[k] for k in report}
    return out, report


def strip_orphans(messages: list, fmt: str | None = None) -> tuple[list, dict]:
    """Hermes ``_sanitize_tool_pairs`` (plus Anthropic blocks): ``(new_list, report)``."""
    return _both(_strip_openai, messages, False)


def stub_orphans(messages: list, fmt: str | None = None) -> tuple[list, dict]:
    """Hermes ``sanitize_api_messages`` (plus Anthropic blocks): ``(new_list, report)``."""
    return _both(_stub_openai, messages, True)


def _show(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def find_problems(messages: list, fmt: str | None = None) -> list[dict]:
    """Every orphan, in message order: ``{"index", "kind", "id", "message"}``.

    ``kind`` is ``orphan_result`` (a result whose call is missing) or ``orphan_call`` (a call
    whose result is missing); OpenAI pairs are matched as the compressor repair matches them,
    Anthropic blocks (in an Anthropic transcript) by ``tool_use`` id.
    """
    calls = {cid for m in messages if m.get("role") == "assistant" for tc in _calls(m) if (cid := _call_id(tc))}
    results = {_hashable(m["tool_call_id"]) for m in messages if m.get("role") == "tool" and m.get("tool_call_id")}
    blocks = anthropic_blocks_apply(messages)
    uses = _block_ids(messages, "tool_use", "id")
    block_results = _block_ids(messages, "tool_result", "tool_use_id")
    problems = []

    def add(i: int, kind: str, cid: Any) -> None:
        what = (f"tool result {_show(cid)} has no matching call" if kind == "orphan_result"
                else f"tool call {_show(cid)} has no result")
        problems.append({"index": i, "kind": kind, "id": cid if isinstance(cid, str) else repr(cid),
                         "message": f"messages[{i}]: {what}"})

    for i, msg in enumerate(messages):
        if msg.get("role") == "tool" and msg.get("tool_call_id") and _hashable(msg["tool_call_id"]) not in calls:
            add(i, "orphan_result", msg["tool_call_id"])
        if msg.get("role") == "assistant":
            for tc in _calls(msg):
                cid = _call_id(tc)
                if cid and cid not in results:
                    add(i, "orphan_call", cid)
        for block in msg.get("content") if blocks and isinstance(msg.get("content"), list) else ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_result" and block.get("tool_use_id") \
                    and _hashable(block["tool_use_id"]) not in uses:
                add(i, "orphan_result", block["tool_use_id"])
            if block.get("type") == "tool_use" and block.get("id") and _hashable(block["id"]) not in block_results:
                add(i, "orphan_call", block["id"])
    return problems


def sanitize(doc: Any, *, stub: bool = False) -> tuple[Any, dict]:
    """The ``sanitize`` stage on a document: ``(new_doc, report)``."""
    messages = messages_of(doc)
    check_messages(messages)
    fmt = detect_format(messages)
    new, report = (stub_orphans if stub else strip_orphans)(messages, fmt)
    report["mode"] = "stub" if stub else "strip"
    report["messages_before"] = len(messages)
    report["messages_after"] = len(new)
    return with_messages(doc, new), report


def describe(report: dict) -> str:
    parts = [f"{report['results_removed']} orphan results removed"]
    parts.append(f"{report['stubs_added']} stub results added" if report["mode"] == "stub"
                 else f"{report['calls_removed']} orphan calls removed")
    if report["duplicates_removed"]:
        parts.append(f"{report['duplicates_removed']} duplicates removed")
    if report["messages_dropped"]:
        parts.append(f"{report['messages_dropped']} messages with unknown roles dropped")
    return ", ".join(parts)
