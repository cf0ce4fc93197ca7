"""Repair orphaned tool_call / tool_result pairs.

- :func:`strip_orphans` — Hermes's compressor repair ``_sanitize_tool_pairs``: results whose
  call is gone are removed, calls whose result is gone are removed, and an assistant message
  left with nothing visible says ``(tool call removed)``. The default of ``hermesctx sanitize``.
- :func:`stub_orphans` — Hermes's pre-API repair ``sanitize_api_messages`` (``--stub``): unknown
  roles dropped, empty ``tool_calls`` keys dropped, blank tool names repaired, orphan results
  removed, a stub result injected right after each call that lost its result, duplicate ids
  dropped.
- :func:`repair_positional` — the repair of what :func:`hermesctx.wire.rules.check_pairing`
  flags (the 400s the APIs return), where Hermes's result would still be rejected: each result moved right after
  its call, orphans and duplicates dropped, reused Anthropic ids renumbered, calls left without
  a result removed or stubbed. :func:`sanitize` uses it only then.
- :func:`find_problems` — the orphans by Hermes's set-based matching.

Anthropic ``tool_use``/``tool_result`` blocks are repaired the same way in a transcript without
OpenAI tool traffic (Hermes does not); an OpenAI transcript is repaired exactly as Hermes does.
Hermes's matching is global and set-based; the positional repair matches as the APIs do.
``sanitize --check`` is :func:`hermesctx.wire.rules.check_pairing`. Nothing here mutates its
input.
"""

from __future__ import annotations

from hermesctx.messages import check_messages, messages_of, with_messages
from hermesctx.options import option
from hermesctx.record import record
from hermesctx.stages.pairs import anthropic_blocks_apply
from hermesctx.stages.pairs import hashable as _hashable
from hermesctx.wire import send
from hermesctx.wire.rules import ANTHROPIC, check_pairing, id_key, pairing_clean, target_of

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

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


def _stub_prepare(messages: list, report: dict) -> list:
    """The first steps of Hermes's pre-API repair: unknown roles dropped, a ``tool_calls`` key
    that is not a non-empty list dropped, blank tool names repaired."""
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
    return msgs


def _stub_openai(messages: list) -> tuple[list, dict]:
    report = _empty_report()
    msgs = _stub_prepare(messages, report)

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


# --- positional repair (what validate's tool-pairing rules need: the APIs' own 400s) ----------------------

_POSITIONAL_KEYS = ("results_moved", "ids_rewritten", "ids_renumbered", "messages_joined",
                    "empty_call_lists_removed")


def _call_removed(msg: dict) -> dict:
    """An assistant message whose calls are all gone: no ``tool_calls`` key, and the filler
    text when nothing else is left."""
    out = {k: v for k, v in msg.items() if k != "tool_calls"}
    if _is_blank(out.get("content")):
        out["content"] = CALL_REMOVED
    return out


def _claim(owners: dict, answered: dict, result_id: Any, report: dict) -> tuple | None:
    """The call a result answers: ``(owner, wire id)`` of the latest earlier call with its id
    (``owners``), marked answered; None, counted, for an orphan or a second result for one call."""
    found = owners.get(id_key(result_id)) if result_id is not None else None
    if found is None:
        report["results_removed"] += 1
        return None
    owner, wire_id = found
    key = id_key(wire_id)
    if key in answered[owner]:
        report["duplicates_removed"] += 1
        return None
    answered[owner].add(key)
    return found


def _positional_openai(messages: list, stub: bool, report: dict) -> list:
    """Each tool result goes in the run right after the latest earlier assistant message that
    made its call (matched by the call's ``id``, or its Codex ``call_id``: the result then
    takes the ``id``); a result with no such call is an orphan, a second result for one call a
    duplicate. Calls left without a result are removed, or (``stub``) get a stub result."""
    owners: dict = {}  # id key -> (assistant index, wire id)
    attached: dict[int, list] = {}
    answered: dict[int, set] = {}
    run = -1  # the assistant whose run of tool messages we are in
    for i, msg in enumerate(messages):
        role = msg.get("role")
        if role == "tool":
            cid = msg.get("tool_call_id")
            found = _claim(owners, answered, cid, report)
            if found is None:
                continue
            owner, wire_id = found
            if cid != wire_id:
                msg = {**msg, "tool_call_id": wire_id}
                report["ids_rewritten"] += 1
            if owner != run:
                report["results_moved"] += 1
            attached[owner].append(msg)
            continue
        run = -1
        calls = msg.get("tool_calls")
        if role == "assistant" and isinstance(calls, list) and calls:
            run = i
            attached[i], answered[i] = [], set()
            for tc in calls:
                if not isinstance(tc, dict) or tc.get("id") is None:
                    continue
                for alias in (tc.get("call_id"), tc["id"]):  # the id wins over a call_id alias
                    if alias is not None:
                        owners[id_key(alias)] = (i, tc["id"])
    out: list = []
    for i, msg in enumerate(messages):
        role = msg.get("role")
        if role == "tool":
            continue
        if role != "assistant" or "tool_calls" not in msg:
            out.append(msg)
            continue
        calls = msg["tool_calls"]
        if i not in attached:  # tool_calls that is not a non-empty list
            report["empty_call_lists_removed"] += 1
            out.append(_call_removed(msg))
            continue
        kept, stubs, seen = [], [], set()
        for tc in calls:
            wire_id = tc.get("id") if isinstance(tc, dict) else None
            key = id_key(wire_id)
            if wire_id is not None and key in seen:
                report["duplicates_removed"] += 1
                continue
            if key in answered[i]:
                seen.add(key)
                kept.append(tc)
            elif stub and wire_id is not None:
                seen.add(key)
                kept.append(tc)
                fn = tc.get("function")
                name = (fn.get("name", "") or "") if isinstance(fn, dict) else ""
                stubs.append({"role": "tool", "name": name, "content": STUB_TEXT, "tool_call_id": wire_id})
                report["stubs_added"] += 1
            else:
                report["calls_removed"] += 1
        if not kept:
            out.append(_call_removed(msg))
        else:
            out.append(msg if len(kept) == len(calls) else {**msg, "tool_calls": kept})
        out.extend(stubs)  # right after the call, as Hermes places them
        out.extend(attached[i])
    return out


def _unique_id(base: Any, taken: set) -> str:
    n = 2
    while f"{base}_{n}" in taken:
        n += 1
    return f"{base}_{n}"


def _positional_anthropic(messages: list, stub: bool, report: dict) -> list:
    """Anthropic turns (consecutive same-role messages are one turn): every ``tool_result``
    goes to the front of the user turn right after the latest earlier assistant turn that
    made its call, results split over several user messages joined in the first one; a
    ``tool_use`` id used twice is renumbered (call and results alike); orphans and
    duplicates are dropped; calls left without a result are removed, or (``stub``) get a
    stub result."""
    roles = [msg.get("role") for msg in messages]
    turn_of = _turn_numbers(roles)
    claims = _Claims()
    for i, msg in enumerate(messages):  # pass 1: the calls' ids, and the turn each result answers
        content = msg.get("content")
        if isinstance(content, list) and roles[i] == "assistant":
            claims.calls(i, turn_of[i], content, report)
        elif isinstance(content, list) and roles[i] == "user":
            claims.results(turn_of[i], i == 0 or turn_of[i - 1] != turn_of[i], content, report)
    return _placed(messages, roles, turn_of, claims, stub, report)  # pass 2


def _turn_numbers(roles: list) -> list[int]:
    """The turn of each message: consecutive user or assistant messages share one."""
    turn_of: list[int] = []
    turn = -1
    for i, role in enumerate(roles):
        if i == 0 or role != roles[i - 1] or role not in ("user", "assistant"):
            turn += 1
        turn_of.append(turn)
    return turn_of


class _Claims:
    """Pass 1 of :func:`_positional_anthropic`: the tool_use ids (renumbered when reused) and
    the results each assistant turn gets."""

    def __init__(self) -> None:
        self.taken: set = set()
        self.renamed: dict[tuple[int, int], str] = {}  # (message, block) -> new tool_use id
        self.owners: dict = {}  # id key -> (assistant turn, wire id)
        self.slots: dict[int, list] = {}  # assistant turn -> result blocks
        self.answered: dict[int, set] = {}

    def calls(self, i: int, t: int, content: list, report: dict) -> None:
        self.slots.setdefault(t, [])
        self.answered.setdefault(t, set())
        for j, block in enumerate(content):
            if not (isinstance(block, dict) and block.get("type") == "tool_use"):
                continue
            bid = block.get("id")
            key = id_key(bid)
            wire_id = bid
            if bid is not None and key in self.taken:
                wire_id = _unique_id(bid, self.taken)
                self.renamed[(i, j)] = wire_id
                report["ids_renumbered"] += 1
            self.taken.add(id_key(wire_id))
            if bid is not None:
                self.owners[key] = (t, wire_id)

    def results(self, t: int, first_user: bool, content: list, report: dict) -> None:
        leading = True
        for block in content:
            if not (isinstance(block, dict) and block.get("type") == "tool_result"):
                leading = False
                continue
            uid = block.get("tool_use_id")
            found = _claim(self.owners, self.answered, uid, report)
            if found is None:
                continue
            owner, wire_id = found
            if uid != wire_id:
                block = {**block, "tool_use_id": wire_id}
            if owner != t - 1 or not (first_user and leading):
                report["results_moved"] += 1
            self.slots[owner].append(block)


def _placed(messages: list, roles: list, turn_of: list, claims: _Claims, stub: bool, report: dict) -> list:
    """Pass 2 of :func:`_positional_anthropic`: the calls kept, the results at the front of the
    next user turn."""
    out: list = []
    pending: list = []  # results waiting for the first message after an assistant turn
    stubs: list = []  # stub results of the current assistant turn (they go first)
    for i, msg in enumerate(messages):
        role, content = roles[i], msg.get("content")
        if pending and role != "assistant":
            if role == "user":
                out.append({**msg, "content": pending + _without_results(content)})
            else:
                out.append({"role": "user", "content": pending})
                out.append(msg)
            pending = []
            continue
        if role == "assistant":
            t = turn_of[i]
            if isinstance(content, list):
                msg = _kept_calls(i, msg, content, claims.renamed, claims.answered[t], stub, stubs, report)
            out.append(msg)
            if i + 1 == len(messages) or turn_of[i + 1] != t:
                pending = stubs + claims.slots.get(t, [])
                stubs = []
            continue
        if role == "user" and isinstance(content, list):
            msg = _user_rest(msg, content, out, report)
            if msg is None:
                continue
        out.append(msg)
    if pending:
        out.append({"role": "user", "content": pending})
    return out


def _kept_calls(i: int, msg: dict, content: list, renamed: dict, answered: set, stub: bool,
                stubs: list, report: dict) -> dict:
    """An assistant message with its calls renumbered, and those left without a result removed
    (or, ``stub``, given a stub result, added to ``stubs``)."""
    kept = []
    changed = False
    for j, block in enumerate(content):
        if not (isinstance(block, dict) and block.get("type") == "tool_use"):
            kept.append(block)
            continue
        wire_id = renamed.get((i, j), block.get("id"))
        if (i, j) in renamed:
            block = {**block, "id": wire_id}
            changed = True
        if wire_id is not None and id_key(wire_id) in answered:
            kept.append(block)
        elif stub and wire_id is not None:
            kept.append(block)
            stubs.append({"type": "tool_result", "tool_use_id": wire_id, "content": STUB_TEXT})
            report["stubs_added"] += 1
        else:
            report["calls_removed"] += 1
            changed = True
    if changed or len(kept) != len(content):
        return {**msg, "content": kept or [{"type": "text", "text": CALL_REMOVED}]}
    return msg


def _user_rest(msg: dict, content: list, out: list, report: dict) -> dict | None:
    """A user message without the results pass 1 moved (None: nothing left, joined to the user
    message before it)."""
    rest = _without_results(content)
    if len(rest) == len(content):
        return msg
    if rest:
        return {**msg, "content": rest}
    if out and out[-1].get("role") == "user":
        report["messages_joined"] += 1
        return None
    return {**msg, "content": [{"type": "text", "text": RESULT_REMOVED}]}


def _without_results(content: Any) -> list:
    """A user message's content without its tool_result blocks, as a block list."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    if not isinstance(content, list):
        return []
    return [b for b in content if not (isinstance(b, dict) and b.get("type") == "tool_result")]


def repair_positional(messages: list, target: str, *, stub: bool = False) -> tuple[list, dict]:
    """Repair ``messages`` so :func:`hermesctx.wire.rules.check_pairing` has nothing to say
    for ``target``: ``(new_list, report)``. With ``stub`` the first steps of Hermes's pre-API
    repair run first (unknown roles, blank names)."""
    report = _empty_report()
    report.update(dict.fromkeys(_POSITIONAL_KEYS, 0))
    msgs = _stub_prepare(messages, report) if stub else messages
    if target == ANTHROPIC:
        return _positional_anthropic(msgs, stub, report), report
    return _positional_openai(msgs, stub, report), report


# --- entry points -------------------------------------------------------------------------

def _both(openai_pass, messages: list, stub: bool) -> tuple[list, dict]:
    """The OpenAI repair (exactly Hermes), then the same repair of Anthropic blocks when the
    transcript is an Anthropic one (Hermes leaves blocks alone; see :func:`anthropic_blocks_apply`)."""
    out, report = openai_pass(messages)
    if anthropic_blocks_apply(messages):
        out, extra = _repair_anthropic(out, stub=stub)
        report = {k: report[k] + extra[k] for k in report}
    return out, report


def strip_orphans(messages: list) -> tuple[list, dict]:
    """Hermes ``_sanitize_tool_pairs`` (plus Anthropic blocks): ``(new_list, report)``."""
    return _both(_strip_openai, messages, False)


def stub_orphans(messages: list) -> tuple[list, dict]:
    """Hermes ``sanitize_api_messages`` (plus Anthropic blocks): ``(new_list, report)``."""
    return _both(_stub_openai, messages, True)


def _show(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def find_problems(messages: list) -> list[dict]:
    """Every orphan by Hermes's own set-based matching, in message order: ``{"index", "kind",
    "id", "message"}`` (what a Hermes repair removes; ``sanitize --check`` reports the
    positional rules instead, :func:`hermesctx.wire.rules.check_pairing`).

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


def _pairs_clean(messages: list, target: str, checked: bool = True) -> str | bool:
    """Whether ``messages`` break no tool-pairing rule of ``target``. A clean list (the usual
    input, and the usual repair) is told in one pass with the send path's own check
    (:func:`send.openai_ready`, :func:`send.anthropic_ready`): then the answer is ``target``,
    the format whose send path need not check the list again. Not yet ``checked``: the
    messages are first checked as :func:`check_messages` does (that pass answers it too: every
    message an object with a string role)."""
    if (send.anthropic_ready if target == ANTHROPIC else send.openai_ready)(messages):
        return target
    if not checked:
        check_messages(messages)
    return pairing_clean(messages, target)


def sanitize(doc: Any, *, stub: bool = False) -> tuple[Any, dict]:
    """The ``sanitize`` stage on a document: ``(new_doc, report)``; ``report["repair"]`` says
    which repair made the output:

    - ``none``: the input breaks no tool-pairing rule of its API, and its pairs are kept as
      they are (Hermes's set-based matching would delete a valid Codex pair or an exchange
      whose id an earlier turn reused); ``stub`` still applies the pre-API cleanups.
    - ``hermes``: Hermes's repair (the compressor's, or the pre-API one with ``stub``), when
      its result breaks no tool-pairing rule.
    - ``positional``: else :func:`repair_positional` of the input."""
    new_doc, report, _ready = _sanitized(doc, stub)
    return new_doc, report


def _sanitized(doc: Any, stub: bool) -> tuple[Any, dict, str | None]:
    """:func:`sanitize`, and the format whose send path need not check the output's messages
    again (they passed its ready check: :data:`send.READY`), or None."""
    messages = messages_of(doc)
    target = target_of(doc)  # (reads any list: the messages are checked in _pairs_clean)
    clean = _pairs_clean(messages, target, checked=False)
    ready = None
    if clean:
        report = _empty_report()
        new = _stub_prepare(messages, report) if stub else messages
        report["repair"] = "none"
        if not stub:  # (--stub: a new list)
            ready = clean if isinstance(clean, str) else None
    else:
        new, report = (stub_orphans if stub else strip_orphans)(messages)
        report["repair"] = "hermes"
        clean = _pairs_clean(new, target)
        ready = clean if isinstance(clean, str) else None
        if not clean:
            new, report = repair_positional(messages, target, stub=stub)
            report["repair"] = "positional"
    for key in _POSITIONAL_KEYS:
        report.setdefault(key, 0)
    report["mode"] = "stub" if stub else "strip"
    report["messages_before"] = len(messages)
    report["messages_after"] = len(new)
    if new is messages:
        return doc, report, ready
    return with_messages(doc, new), report, ready


def describe(report: dict) -> str:
    parts = [f"{report['results_removed']} orphan results removed"]
    parts.append(f"{report['stubs_added']} stub results added" if report["mode"] == "stub"
                 else f"{report['calls_removed']} orphan calls removed")
    if report["duplicates_removed"]:
        parts.append(f"{report['duplicates_removed']} duplicates removed")
    if report["messages_dropped"]:
        parts.append(f"{report['messages_dropped']} messages with unknown roles dropped")
    for key, what in (("results_moved", "results moved after their call"),
                      ("ids_rewritten", "result ids rewritten to their call's id"),
                      ("ids_renumbered", "reused tool_use ids renumbered"),
                      ("messages_joined", "split result messages joined"),
                      ("empty_call_lists_removed", "empty tool_calls lists removed")):
        if report.get(key):
            parts.append(f"{report[key]} {what}")
    return ", ".join(parts)


@record(frozen=True)
class Options:
    stub: bool = option(False, flag="--stub", kind=bool,
                        help="Inject stub results for calls that lost theirs (Hermes's pre-API repair) "
                             "instead of removing the calls.")


def build(options: Options, ctx):
    """The stage as a function of one document, ``doc -> (doc, report)``."""
    stub = bool(options.stub)

    def run(doc: Any) -> tuple[Any, dict]:
        new, report, ready = _sanitized(doc, stub)
        return new, report if ready is None else {**report, send.READY: ready}

    return run


def check(doc: Any, target: str, _line: int | None = None) -> list:
    """``sanitize --check``: the tool-pairing problems of one document (what sanitize itself
    refuses is an error, exit 3)."""
    check_messages(messages_of(doc))
    return check_pairing(doc, target)
