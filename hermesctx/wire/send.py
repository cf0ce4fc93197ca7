"""The send path: what a transcript becomes on the wire (decision D12).

hermesctx's stages produce the history Hermes keeps; Hermes never sends that as it is. Before
every call it strips its internal keys and repairs the message sequence (its chat transport's
``convert_messages``, ``repair_message_sequence``; its Anthropic adapter for Anthropic).
:func:`openai_request` and :func:`anthropic_request` do that for the two request formats, plus
what the providers reject (``wire-rules.md``): no ``tool_calls: []``, no assistant message
without content and calls, no empty or whitespace-only text, no image in an OpenAI tool message,
thinking first and signed, unique Anthropic tool ids, at most 4 cache breakpoints, no record
keys at the top of a request.

Pure and cheap: one pass over the messages, the input never mutated, and the very same object
back when nothing had to change (so it is idempotent and free on a clean batch). What it changed
is counted in ``counts`` (``what -> n``) for the command to report.
"""

from __future__ import annotations

from hermesctx.wire import params

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

OPENAI_REQUEST_KEYS = params.OPENAI
ANTHROPIC_REQUEST_KEYS = params.ANTHROPIC | params.ANTHROPIC_BETA

# message keys Hermes's send path removes (besides every ``_``-prefixed one); ``reasoning`` is
# its trajectory-only copy of the model's reasoning, ``finish_reason`` a response field
_OPENAI_INTERNAL = frozenset({"tool_name", "timestamp", "codex_reasoning_items",
                              "codex_message_items", "effect_disposition", "api_content",
                              "finish_reason", "reasoning"})
_CALL_INTERNAL = ("call_id", "response_item_id", "extra_content")
_THINKING = ("thinking", "redacted_thinking")  # a tuple: a block type from input may be unhashable
_IMAGE_PARTS = frozenset({"image_url", "input_image", "image"})
_VERIFY = frozenset({"verification_required", "verify_hook_continue"})
TOOL_IMAGE_PLACEHOLDER = "[image omitted: an OpenAI tool message cannot carry images]"
MAX_CACHE_BREAKPOINTS = 4

# what the counts say (one line each on stderr: "<what>: <n>")
INTERNAL_KEYS = "internal keys removed"
RECORD_KEYS = "record keys removed from the top of the request"
MERGED_ASSISTANT = "consecutive assistant messages merged"
MERGED_USER = "consecutive user messages merged"
STRAY_TOOL = "stray tool results dropped"
EMPTY_CALLS = "empty tool_calls lists removed"
EMPTY_ASSISTANT = "assistant messages without content or calls dropped"
EMPTY_TEXT = "empty or whitespace-only text parts dropped"
EMPTY_MESSAGE = "messages left without content dropped"
TOOL_IMAGES = "images in tool messages replaced by a text placeholder"
REASONING = "reasoning not replayable in this format dropped"
UNSIGNED = "unsigned thinking blocks dropped"
THINKING_MOVED = "thinking blocks moved before the text of their turn"
THINKING_ONLY = "thinking blocks dropped from turns that held nothing else"
RENUMBERED = "reused tool ids renumbered"
UNIFIED_IDS = "results renamed to their Codex call's call_id"
CACHE = "cache_control markers removed (over 4, or on thinking)"


def bump(counts: dict, what: str, n: int = 1) -> None:
    counts[what] = counts.get(what, 0) + n


def describe(counts: dict) -> list[str]:
    """One line per kind of change (for a warning)."""
    return [f"wire: {what}: {n}" for what, n in counts.items()]


# the key of a stage's report that says its output's messages passed :func:`openai_ready` or
# :func:`anthropic_ready` (its value: ``openai`` / ``anthropic``), so the send path of that format
# need not check them again; the document loop takes it out of the report (:func:`ready_of`)
READY = "_wire_ready"


def ready_of(report: Any) -> tuple[str | None, Any]:
    """``(ready, report)``: what a stage's report says its output is ready for (:data:`READY`,
    else None), and the report without that key."""
    if type(report) is not dict or READY not in report:
        return None, report
    return report[READY], {k: v for k, v in report.items() if k != READY}


def request(doc: Any, fmt: str, counts: dict | None = None, ready: str | None = None) -> Any:
    """``doc`` as a request in format ``fmt`` (``openai`` / ``anthropic``; others unchanged).
    ``ready``: the format whose ready check ``doc``'s messages are known to pass (a stage that
    checked them and handed them on unchanged: sanitize on a clean transcript), not checked again."""
    if fmt not in ("openai", "anthropic"):
        return doc
    counts = {} if counts is None else counts
    if fmt == "anthropic" or (isinstance(doc, dict) and "system" in doc):  # (an Anthropic body
        out = anthropic_request(doc, counts, ready == "anthropic")        # in an OpenAI batch)
    else:
        out = openai_request(doc, counts, ready == "openai")
    if _message_list(out) == []:  # no API takes an empty message list (D12)
        from hermesctx.messages import is_lenient

        if not is_lenient():
            from hermesctx.errors import InputError

            said = "; ".join(describe(counts))
            raise InputError("no message is left that an API accepts" if _message_list(doc)
                             else "no message to send: no API takes an empty message list",
                             hint=f"{said}; --lenient writes it" if said else "--lenient writes it")
    return out


def _rebuilt(doc: Any, messages: Any, out: list, allowed: frozenset, counts: dict,
             top: dict | None = None) -> Any:
    """``doc`` with ``out`` for its messages and only ``allowed`` top-level keys; ``doc`` itself
    when nothing differs."""
    same = out is messages or (len(out) == len(messages) and all(map(_is, out, messages)))
    if isinstance(doc, list):
        return doc if same else out
    extra = [k for k in doc if k not in allowed]
    if same and not extra and not top:
        return doc
    if extra:
        bump(counts, RECORD_KEYS, len(extra))
    new = {k: v for k, v in doc.items() if k in allowed}
    if top:
        new.update(top)
        for key in [k for k, v in top.items() if v is _DROP]:
            del new[key]
    new["messages"] = messages if same else out
    return new


def _is(a: Any, b: Any) -> bool:
    return a is b


_DROP = object()


def _message_list(doc: Any) -> list | None:
    """The messages of a body or bare list; None when ``doc`` is neither."""
    if isinstance(doc, list):
        return doc
    if isinstance(doc, dict) and isinstance(doc.get("messages"), list):
        return doc["messages"]
    return None


# --- OpenAI ----------------------------------------------------------------------------------

def openai_request(doc: Any, counts: dict | None = None, ready: bool = False) -> Any:
    """An OpenAI chat body (or bare message list) as it goes on the wire (``ready``: its
    messages are known to pass :func:`openai_ready`)."""
    counts = {} if counts is None else counts
    messages = _message_list(doc)
    if messages is None:
        return doc
    out = messages if ready or openai_unchanged(messages) else list(openai_messages(messages, counts))
    return _rebuilt(doc, messages, out, OPENAI_REQUEST_KEYS, counts)


# the keys of a message that needs nothing of the send path (any other key is looked at)
_PLAIN_KEYS = frozenset({"role", "content", "tool_calls", "tool_call_id", "name", "refusal"})


def openai_unchanged(messages: list) -> bool:
    """Whether :func:`openai_messages` would give ``messages`` back as they are: one cheap pass
    that answers True only when no rule applies (no internal key, no run of assistant or user
    turns to merge, every result answering a call of its turn once, nothing empty), so the
    usual clean transcript is not rebuilt. False sends the list through the full path."""
    prev_role = None
    known: set = set()
    for msg in messages:
        if type(msg) is not dict:
            return False
        role = msg.get("role")
        if role == prev_role and role in ("assistant", "user"):
            return False
        prev_role = role
        if not _PLAIN_KEYS.issuperset(msg) and _internal_key(msg):
            return False
        if role == "tool":
            call_id = msg.get("tool_call_id")
            if not isinstance(call_id, str) or call_id not in known:
                return False
            known.discard(call_id)
        elif role == "assistant":
            calls = msg.get("tool_calls")
            if not calls and not msg.get("function_call") and msg.get("content") in (None, []):
                return False  # (_empty_assistant, inline: one call less per turn)
            known = set()
            if isinstance(calls, list):
                if not calls:
                    return False
                for call in calls:
                    if isinstance(call, dict):
                        if "call_id" in call or "response_item_id" in call or "extra_content" in call:
                            return False
                        if isinstance(call.get("id"), str):
                            known.add(call["id"])
        elif role == "user":
            known = set()
        content = msg.get("content")
        if isinstance(content, list) and _openai_parts(content, role == "tool", {}) is not content:
            return False
    return True


_ABSENT = object()  # (a missing key)


def openai_ready(messages: list) -> bool:
    """:func:`openai_unchanged` and :func:`hermesctx.wire.rules.openai_pairs_clean` of
    ``messages`` in one pass (sanitize's pairing check and the send path's check of the usual
    clean transcript at once). True only when both are; False also for any odd input either
    would have to look at more closely (a message or call that is not an object, ``tool_calls``
    that is no list, a role that is no non-empty string): the caller then runs each in full.
    Under the pairing rule (each run of results right after its assistant, answering each of
    its distinct string ids once) every result answers a call of its turn once, so the send
    path's own result check holds too."""
    prev_role = None
    pending: set = set()  # the open assistant's ids not answered yet
    plain = _PLAIN_KEYS.issuperset
    for msg in messages:
        if type(msg) is not dict:
            return False
        role = msg.get("role")
        content = msg.get("content", _ABSENT)
        known = 1 if content is _ABSENT else 2  # how many of its keys are plain ones seen here
        if role == "tool":
            try:
                pending.remove(msg["tool_call_id"])
            except (KeyError, TypeError):  # no id, or none the open run has left to answer
                return False
            known += 1 + ("name" in msg)
        elif pending:
            return False
        elif role == "assistant":
            if prev_role == "assistant":
                return False
            calls = msg.get("tool_calls")
            if calls is None:
                if not msg.get("function_call") and content in (None, [], _ABSENT):
                    return False  # (_empty_assistant, inline: one call less per turn)
            else:
                if type(calls) is not list or not calls:
                    return False
                for call in calls:
                    if type(call) is not dict or "call_id" in call or "response_item_id" in call \
                            or "extra_content" in call:
                        return False
                    call_id = call.get("id")
                    if type(call_id) is not str or call_id in pending:
                        return False
                    pending.add(call_id)
                known += 1
        elif role == "user":
            if prev_role == "user":
                return False
        elif type(role) is not str or not role:
            return False
        prev_role = role
        if len(msg) != known and not plain(msg) and _internal_key(msg):  # (all seen: no set built)
            return False
        if isinstance(content, list):
            if _openai_parts(content, role == "tool", {}) is not content:
                return False
        elif content.__class__ is not str and content is not None and content is not _ABSENT and not (
                content.__class__ is dict and content.get("_multimodal")):
            return False  # (content of no API's shape: the caller's check words it)
    return not pending


def _internal_key(msg: dict) -> bool:
    """Whether a message holds a key the send path removes (or replayed reasoning it looks at)."""
    return any(key in _OPENAI_INTERNAL or key == "reasoning_details" or (isinstance(key, str) and key[:1] == "_")
               for key in msg)


def openai_messages(messages: Iterable[Any], counts: dict) -> Iterator[Any]:
    """The send path over a stream of OpenAI messages (a message or two held back at a time).

    Hermes's order: assistants merged, then stray results dropped, then users merged. Two
    differences make it a fixed point (the output passes through unchanged): assistant turns
    that a dropped result separated are merged too, and so are Codex interim turns (Hermes
    keeps those apart for its Responses replay; a chat request has none, and the marks that
    tell them apart are internal keys that never reach the output)."""
    merged = _merge_assistants(messages, counts)
    return _merge_users(_merge_assistants(_clean_openai(merged, counts), counts), counts)


def _merge_runs(messages: Iterable[Any], role: str, merge, what: str, counts: dict) -> Iterator[Any]:
    """Adjacent ``role`` messages folded by ``merge(prev, msg)`` (None: kept apart)."""
    prev = None
    for msg in messages:
        if prev is not None:
            if isinstance(msg, dict) and msg.get("role") == role:
                merged = merge(prev, msg)
                if merged is not None:
                    prev = merged
                    bump(counts, what)
                    continue
            yield prev
            prev = None
        if isinstance(msg, dict) and msg.get("role") == role:
            prev = msg
        else:
            yield msg
    if prev is not None:
        yield prev


def _merge_assistants(messages: Iterable[Any], counts: dict) -> Iterator[Any]:
    return _merge_runs(messages, "assistant", _merge_assistant, MERGED_ASSISTANT, counts)


def _merge_assistant(prev: dict, msg: dict) -> dict:
    """Hermes's merge of two adjacent assistant turns: a verification candidate is replaced;
    otherwise the calls are joined, plain texts joined by a newline (stripped), and a list
    content is kept as it is (the later one only fills an empty earlier one)."""
    if prev.get("finish_reason") in _VERIFY or _empty_assistant(prev):
        return msg  # (an empty turn is dropped, never merged: the rule, before Hermes's merge)
    if _empty_assistant(msg):
        return prev
    if not all(isinstance(m.get("tool_calls") or [], (list, str, dict)) for m in (prev, msg)):
        return None  # (--lenient input: calls Hermes could not join are not merged)
    out = dict(prev)
    calls = list(prev.get("tool_calls") or [])
    new_calls = list(msg.get("tool_calls") or [])
    if new_calls or calls:  # (a string or object of calls is joined as Hermes joins it: list())
        out["tool_calls"] = calls + new_calls
    old, new = prev.get("content"), msg.get("content")
    if isinstance(old, str) and isinstance(new, str):
        out["content"] = "\n".join(p for p in (old.strip(), new.strip()) if p)
    elif not old and new is not None:
        out["content"] = new
    if not prev.get("reasoning_content") and msg.get("reasoning_content"):
        out["reasoning_content"] = msg["reasoning_content"]
    return out


def _empty_assistant(msg: dict) -> bool:
    """An assistant message without content and without calls (OA-ASSISTANT-NO-CONTENT)."""
    return not msg.get("tool_calls") and not msg.get("function_call") and msg.get("content") in (None, [])


def _clean_openai(messages: Iterable[Any], counts: dict) -> Iterator[Any]:
    """Internal keys off every message; tool results that answer no call of the turn dropped
    (each call answered once); assistant messages left with nothing dropped."""
    known: set = set()
    alias: dict = {}  # a Codex call's two ids -> the one it keeps on the wire (its call_id)
    for msg in messages:
        if not isinstance(msg, dict):
            yield msg
            continue
        role = msg.get("role")
        if role == "tool":
            call_id = msg.get("tool_call_id")
            if not isinstance(call_id, str) or call_id not in known:  # "" answers a call with id ""
                bump(counts, STRAY_TOOL)
                continue
            known.discard(call_id)
            if alias and alias.get(call_id, call_id) != call_id:
                msg = {**msg, "tool_call_id": alias[call_id]}
                bump(counts, UNIFIED_IDS)
        elif role == "assistant":
            known = set()
            alias = {}
            calls = msg.get("tool_calls")
            for call in calls if isinstance(calls, list) else ():  # (--lenient input: any value)
                if isinstance(call, dict):
                    for key in ("id", "call_id"):
                        if isinstance(call.get(key), str):
                            known.add(call[key])
                    if _codex_id(call):
                        alias[call["id"]] = call["call_id"]
        elif role == "user":
            known = set()
        msg = _openai_message(msg, role, counts)
        if msg is not None:
            yield msg


def _openai_message(msg: dict, role: Any, counts: dict) -> dict | None:
    out = None
    for key in msg:
        if key in _OPENAI_INTERNAL or (isinstance(key, str) and key[:1] == "_"):
            if out is None:
                out = dict(msg)
            del out[key]
            bump(counts, REASONING if key == "reasoning" else INTERNAL_KEYS)
    details = msg.get("reasoning_details")
    if isinstance(details, list) and details and all(
            isinstance(d, dict) and d.get("type") in _THINKING for d in details):
        out = dict(msg) if out is None else out
        del out["reasoning_details"]  # Anthropic's signed thinking: no OpenAI endpoint replays it
        bump(counts, REASONING)
    content = msg.get("content")
    if isinstance(content, list):
        parts = _openai_parts(content, role == "tool", counts)
        if parts is not content:
            out = dict(msg) if out is None else out
            out["content"] = parts if parts or role == "assistant" else ""
            if not parts and role == "assistant":
                out["content"] = None
    calls = msg.get("tool_calls")
    if calls is not None and role == "assistant":
        if calls == []:
            out = dict(msg) if out is None else out
            del out["tool_calls"]
            bump(counts, EMPTY_CALLS)
        elif isinstance(calls, list):
            new = None
            for i, call in enumerate(calls):
                if isinstance(call, dict) and ("call_id" in call or "response_item_id" in call
                                               or "extra_content" in call):
                    if new is None:
                        new = list(calls)
                    new[i] = {k: v for k, v in call.items() if k not in _CALL_INTERNAL}
                    if _codex_id(call):  # results match a Codex call by its call_id (as Hermes)
                        new[i]["id"] = call["call_id"]
                    bump(counts, INTERNAL_KEYS)
            if new is not None:
                out = dict(msg) if out is None else out
                out["tool_calls"] = new
    if role == "assistant" and _empty_assistant(out if out is not None else msg):
        bump(counts, EMPTY_ASSISTANT)  # ("" is content: accepted, and Hermes sends it)
        return None
    return out if out is not None else msg


def _codex_id(call: dict) -> bool:
    """A call whose ``call_id`` (what Hermes pairs results with) differs from its ``id``."""
    call_id = call.get("call_id")
    return isinstance(call_id, str) and bool(call_id) and isinstance(call.get("id"), str) \
        and call["id"] != call_id


def _openai_parts(parts: list, tool: bool, counts: dict) -> list:
    out = None
    for i, part in enumerate(parts):
        drop = replace = False
        if isinstance(part, dict):
            kind = part.get("type")
            if kind == "text":
                text = part.get("text")
                drop = not isinstance(text, str) or not text.strip()
            elif tool and isinstance(kind, str) and kind in _IMAGE_PARTS:
                replace = True
        elif isinstance(part, str):
            drop = not part.strip()
        if drop or replace:
            if out is None:
                out = parts[:i]
            if replace:
                out.append({"type": "text", "text": TOOL_IMAGE_PLACEHOLDER})
                bump(counts, TOOL_IMAGES)
            else:
                bump(counts, EMPTY_TEXT)
        elif out is not None:
            out.append(part)
    return parts if out is None else out


def _merge_users(messages: Iterable[Any], counts: dict) -> Iterator[Any]:
    return _merge_runs(messages, "user", _merge_user, MERGED_USER, counts)


def _merge_user(prev: dict, msg: dict) -> dict | None:
    """Hermes's merge of two adjacent user turns: plain texts joined by a blank line; a list
    content (images, ...) is left apart."""
    old, new = prev.get("content", ""), msg.get("content", "")
    if not isinstance(old, str) or not isinstance(new, str):
        return None
    return {**prev, "content": old + "\n\n" + new if old and new else old or new}


# --- Anthropic -------------------------------------------------------------------------------

class AnthropicState:
    """What the Anthropic pass carries from message to message: the tool ids used so far (a
    reused one is renumbered, in its call and in the results of the next turn) and the cache
    breakpoints counted. The ids are kept as their hashes: a long log streams through in
    bounded memory (a collision would only renumber an id that needed none)."""

    def __init__(self) -> None:
        self.ids: set = set()
        self.renamed: dict = {}  # this turn's calls: old id -> [the id each call went out with]
        self.cache = 0
        self.role: Any = None  # the role of the message before

    def seen(self, tool_id: str) -> bool:
        """Whether ``tool_id`` was used before; it is used from now on."""
        key = hash(tool_id)
        if key in self.ids:
            return True
        self.ids.add(key)
        return False

    def fresh_id(self, old: str) -> str:
        n = 2
        while self.seen(f"{old}_{n}"):
            n += 1
        return f"{old}_{n}"


def anthropic_request(body: Any, counts: dict | None = None, ready: bool = False) -> Any:
    """An Anthropic Messages body (or bare message list) as it goes on the wire (``ready``: its
    messages are known to pass :func:`anthropic_ready`)."""
    counts = {} if counts is None else counts
    messages = _message_list(body)
    if messages is None:
        return body
    state = AnthropicState()
    top: dict = {}
    if isinstance(body, dict):
        for tool in body.get("tools") or ():
            if isinstance(tool, dict) and "cache_control" in tool:
                state.cache += 1
        if "cache_control" in body:
            state.cache += 1
        if "system" in body:
            system = anthropic_system(body["system"], state, counts)
            if system is not body["system"]:
                top["system"] = _DROP if system is None else system
    if ready and not state.ids:  # (a tool id in the system: walk)
        out = messages
    else:
        out = list(anthropic_messages(messages, counts, state))
    return _rebuilt(body, messages, out, ANTHROPIC_REQUEST_KEYS, counts, top)


_NO_ROLE = object()  # (no message has it)


def anthropic_ready(messages: list) -> bool:
    """Whether :func:`anthropic_messages` gives ``messages`` back as they are (nothing counted,
    whatever the request's system and tools hold, bar a tool id) and
    :func:`hermesctx.wire.rules.check_pairing` finds nothing for Anthropic: sanitize's pairing
    check and the send path's work on the usual clean transcript in one pass, as
    :func:`openai_ready` for OpenAI. True only when both hold; False also for anything either
    looks at more closely (a cache breakpoint, a key besides role and content, a role besides
    user and assistant, empty content, a block the send path would drop or move, an id that is
    no string, a result answering a call already answered): the caller then runs each in full.
    Pairing: the tool_use ids of each assistant turn (consecutive same-role messages are one
    turn), distinct and never used before, are each answered by a tool_result block in the run
    at the front of the user turn right after it."""
    prev_role: Any = _NO_ROLE  # (the first message starts a turn)
    pending: set = set()  # the last assistant turn's ids not answered yet
    used: set = set()  # every tool_use id so far, by hash (as AnthropicState keeps them)
    leading = True  # in a user turn: no block but tool_result yet
    for msg in messages:
        if type(msg) is not dict or len(msg) != 2:
            return False
        try:
            role, content = msg["role"], msg["content"]  # (len 2: no other key)
        except KeyError:
            return False
        if role != prev_role:
            if role == "assistant":
                if pending:
                    return False
            elif role != "user":
                return False
            prev_role = role
            leading = True
        if type(content) is str:
            if not content or content.isspace():  # (isspace: strip()'s whitespace, no copy)
                return False
            leading = False  # (a text block of the turn the API joins: results after it are late)
            continue
        if type(content) is not list or not content:
            return False
        if role == "assistant":
            thinking = other = False
            for block in content:
                kind = _kept_kind(block)
                if kind is None:
                    return False
                if kind == "tool_use":
                    tool_id = block.get("id")
                    if type(tool_id) is not str:
                        return False
                    key = hash(tool_id)
                    if key in used:
                        return False
                    used.add(key)
                    pending.add(tool_id)
                elif kind in _THINKING:
                    if other or not block.get("signature" if kind == "thinking" else "data"):
                        return False
                    thinking = True
                    continue
                elif kind == "tool_result":
                    return False
                other = True
            if thinking and not other:
                return False
            continue
        for block in content:
            kind = _kept_kind(block)
            if kind is None:
                return False
            if kind == "tool_result":
                if not leading:
                    return False
                try:
                    pending.remove(block["tool_use_id"])
                except (KeyError, TypeError):  # no call of the last assistant turn left with this id
                    return False
                inner = block.get("content")
                if type(inner) is str:
                    if inner.isspace():
                        return False
                elif inner is not None and (type(inner) is not list or not _inner_ready(inner)):
                    return False
                continue
            leading = False
            if kind == "tool_use" or kind in _THINKING:
                return False
    return not pending


def _kept_kind(block: Any) -> Any:
    """A block's type when the send path keeps the block as it is, as far as the block alone
    says (an object without a cache breakpoint, typed, a text not blank), else None."""
    if type(block) is not dict or "cache_control" in block:
        return None
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        if type(text) is not str or not text or text.isspace():
            return None
    return kind


def _inner_ready(blocks: list) -> bool:
    """A tool_result's blocks the send path leaves as they are (no tool id, no thinking)."""
    for block in blocks:
        kind = _kept_kind(block)
        if kind is None or kind in ("tool_use", "tool_result") or kind in _THINKING:
            return False
    return True


def anthropic_system(system: Any, state: AnthropicState, counts: dict) -> Any:
    """The ``system`` value with no empty text; None when nothing is left."""
    if isinstance(system, str):
        return system if system.strip() else None
    if not isinstance(system, list):
        return system
    blocks = _anthropic_blocks(system, "system", state, counts)
    return blocks if blocks else None


def anthropic_messages(messages: Iterable[Any], counts: dict,
                       state: AnthropicState | None = None) -> Iterator[Any]:
    """The send path over a stream of Anthropic messages (the last one is told apart: only a
    final assistant message may be empty)."""
    state = AnthropicState() if state is None else state
    prev: Any = None
    have = False
    for msg in messages:
        if have:
            out = _anthropic_message(prev, False, state, counts)
            if out is not None:
                yield out
        prev, have = msg, True
    if have:
        out = _anthropic_message(prev, True, state, counts)
        if out is not None:
            yield out


_ROLE_AND_CONTENT = frozenset({"role", "content"})


def _anthropic_message(msg: Any, last: bool, state: AnthropicState, counts: dict) -> Any:
    if not isinstance(msg, dict):
        return msg
    role = msg.get("role")
    if role == "assistant" and state.role != "assistant":  # a new turn (same-role messages are one)
        state.renamed = {}
    state.role = role
    out = None
    if not _ROLE_AND_CONTENT.issuperset(msg):  # (the usual message: no list of its keys built)
        extra = [k for k in msg if k not in ("role", "content")]
        out = {k: v for k, v in msg.items() if k in ("role", "content")}
        bump(counts, INTERNAL_KEYS, len(extra))
    content = msg.get("content")
    if isinstance(content, list):
        blocks = _anthropic_blocks(content, role, state, counts)
        if blocks is not content:
            out = dict(msg) if out is None else out
            out["content"] = blocks
        content = blocks
    empty = not content.strip() if isinstance(content, str) else (content is None or content == [])
    if empty:
        if last and role == "assistant":
            if content != "":
                out = dict(msg) if out is None else out
                out["content"] = ""
        else:
            bump(counts, EMPTY_MESSAGE)
            return None
    return out if out is not None else msg


def _anthropic_blocks(blocks: list, role: Any, state: AnthropicState, counts: dict) -> list:
    """One message's blocks: empty text and unsigned thinking dropped, thinking first (and
    never alone), cache breakpoints past the 4th dropped, reused tool ids renumbered."""
    out = None
    thinking_after = False  # a thinking block came after another block
    seen_other = False
    n_thinking = 0
    for i, block in enumerate(blocks):
        new = block
        if isinstance(block, dict):
            kind = block.get("type")
            if kind == "text":
                text = block.get("text")
                if not isinstance(text, str) or not text.strip():
                    new = None
                    bump(counts, EMPTY_TEXT)
            elif kind in _THINKING:
                signed = block.get("signature") if kind == "thinking" else block.get("data")
                if not signed:
                    new = None
                    bump(counts, UNSIGNED)
                elif "cache_control" in block:
                    new = {k: v for k, v in block.items() if k != "cache_control"}
                    bump(counts, CACHE)
            elif kind == "tool_use":
                new = _tool_use(block, state, counts)
            elif kind == "tool_result":
                new = _tool_result(block, state, counts)
            if new is not None and "cache_control" in new and new.get("type") not in _THINKING:
                if state.cache >= MAX_CACHE_BREAKPOINTS:
                    new = {k: v for k, v in new.items() if k != "cache_control"}
                    bump(counts, CACHE)
                else:
                    state.cache += 1
            if new is not None:
                if new.get("type") in _THINKING:
                    n_thinking += 1
                    thinking_after = thinking_after or seen_other
                else:
                    seen_other = True
        if new is not block and out is None:
            out = list(blocks[:i])
        if new is None and isinstance(block, dict) and "cache_control" in block:
            _move_breakpoint(out, block["cache_control"], state)
        if out is not None and new is not None:
            out.append(new)
    result = blocks if out is None else out
    if n_thinking and role == "assistant":
        if not seen_other:
            bump(counts, THINKING_ONLY, n_thinking)
            return []
        if thinking_after:
            bump(counts, THINKING_MOVED)
            result = ([b for b in result if isinstance(b, dict) and b.get("type") in _THINKING]
                      + [b for b in result if not (isinstance(b, dict) and b.get("type") in _THINKING)])
    return result


def _move_breakpoint(out: list, mark: Any, state: AnthropicState) -> None:
    """A dropped empty block's cache breakpoint goes to the block before it (the cached prefix
    ends at the same place), when there is one that can hold it."""
    prev = out[-1] if out else None
    if isinstance(prev, dict) and prev.get("type") not in _THINKING and "cache_control" not in prev \
            and state.cache < MAX_CACHE_BREAKPOINTS:
        out[-1] = {**prev, "cache_control": mark}
        state.cache += 1


def _tool_use(block: dict, state: AnthropicState, counts: dict) -> dict:
    tool_id = block.get("id")
    if not isinstance(tool_id, str):
        return block
    new_id = tool_id
    if state.seen(tool_id):
        new_id = state.fresh_id(tool_id)
        bump(counts, RENUMBERED)
    state.renamed.setdefault(tool_id, []).append(new_id)
    return block if new_id == tool_id else {**block, "id": new_id}


def _tool_result(block: dict, state: AnthropicState, counts: dict) -> dict:
    new = block
    tool_use_id = block.get("tool_use_id")
    queue = state.renamed.get(tool_use_id) if state.renamed and isinstance(tool_use_id, str) else None
    if queue:  # results answer the turn's calls of one id in their order, the last one any more
        renamed = queue.pop(0) if len(queue) > 1 else queue[0]
        if renamed != tool_use_id:
            new = {**block, "tool_use_id": renamed}
    inner = block.get("content")
    if isinstance(inner, str) and inner and not inner.strip():  # AN-WHITESPACE-TEXT; none is fine
        new = {k: v for k, v in new.items() if k != "content"}
        bump(counts, EMPTY_TEXT)
    elif isinstance(inner, list):
        kept = _anthropic_blocks(inner, "tool", state, counts)
        if kept is not inner:
            new = dict(new) if new is block else new
            if kept:
                new["content"] = kept
            else:
                del new["content"]
    return new
