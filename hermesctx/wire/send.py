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

from hermesctx.messages import ANTHROPIC, detect_format
from hermesctx.record import record
from hermesctx.wire import params
from hermesctx.wire.onepass import CALLED, KEYED, LISTED, answers, by_role, oa_unpaired, one_pass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
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


# --- the OpenAI rules: one row each, its repair and its one-pass test ---------------------------

# the keys of a message that needs nothing of the send path (any other key is looked at)
_PLAIN_KEYS = frozenset({"role", "content", "tool_calls", "tool_call_id", "name", "refusal"})


def _internal_key(msg: dict, role: Any = None, walk: Any = None) -> bool:
    """Whether a message holds a key the send path removes."""
    return any(
        key in _OPENAI_INTERNAL or (isinstance(key, str) and key[:1] == "_") for key in msg)


def _drop_internal_keys(msg: dict, role: Any, counts: dict) -> dict:
    out = None
    for key in msg:
        if key in _OPENAI_INTERNAL or (isinstance(key, str) and key[:1] == "_"):
            if out is None:
                out = dict(msg)
            del out[key]
            bump(counts, REASONING if key == "reasoning" else INTERNAL_KEYS)
    return msg if out is None else out


def _replayed_thinking(msg: dict, role: Any, walk: Any = None) -> bool:
    return "reasoning_details" in msg


def _drop_replayed_thinking(msg: dict, role: Any, counts: dict) -> dict:
    """Anthropic's signed thinking (``reasoning_details``): no OpenAI endpoint replays it."""
    details = msg.get("reasoning_details")
    if isinstance(details, list) and details and all(
            isinstance(d, dict) and d.get("type") in _THINKING for d in details):
        bump(counts, REASONING)
        return {k: v for k, v in msg.items() if k != "reasoning_details"}
    return msg


def _parts_to_clean(msg: dict, role: Any, walk: Any = None) -> bool:
    content = msg.get("content")
    return isinstance(content, list) and _openai_parts(content, role == "tool", {}) is not content


def _clean_parts(msg: dict, role: Any, counts: dict) -> dict:
    content = msg.get("content")
    if not isinstance(content, list):
        return msg
    parts = _openai_parts(content, role == "tool", counts)
    if parts is content:
        return msg
    return {**msg, "content": parts if parts else None if role == "assistant" else ""}


def _empty_calls(msg: dict, role: Any, walk: Any = None) -> bool:
    return role == "assistant" and msg.get("tool_calls") == []


def _drop_empty_calls(msg: dict, role: Any, counts: dict) -> dict:
    if not _empty_calls(msg, role):
        return msg
    bump(counts, EMPTY_CALLS)
    return {k: v for k, v in msg.items() if k != "tool_calls"}


def _call_internal(call: Any) -> bool:
    return isinstance(call, dict) and ("call_id" in call or "response_item_id" in call or "extra_content" in call)


def _calls_with_internals(msg: dict, role: Any, walk: Any = None) -> bool:
    calls = msg.get("tool_calls")
    if role != "assistant" or not isinstance(calls, list):
        return False
    for call in calls:
        if type(call) is dict and ("call_id" in call or "response_item_id" in call or "extra_content" in call):
            return True
    return False


def _strip_call_internals(msg: dict, role: Any, counts: dict) -> dict:
    """Internal keys off the calls; a Codex call goes out with its ``call_id`` for its id (the
    results match it by that, as in Hermes)."""
    if not _calls_with_internals(msg, role):
        return msg
    new = list(msg["tool_calls"])
    for i, call in enumerate(new):
        if _call_internal(call):
            new[i] = {k: v for k, v in call.items() if k not in _CALL_INTERNAL}
            if _codex_id(call):
                new[i]["id"] = call["call_id"]
            bump(counts, INTERNAL_KEYS)
    return {**msg, "tool_calls": new}


def _empty_assistant_message(msg: dict, role: Any, walk: Any = None) -> bool:
    return role == "assistant" and _empty_assistant(msg)


def _drop_empty_assistant(msg: dict, role: Any, counts: dict) -> dict | None:
    if not _empty_assistant_message(msg, role):
        return msg
    bump(counts, EMPTY_ASSISTANT)  # ("" is content: accepted, and Hermes sends it)
    return None


def _assistant_run(msg: dict, role: Any, walk: Any) -> bool:
    return role == "assistant" and walk.prev_role == "assistant"


def _user_run(msg: dict, role: Any, walk: Any) -> bool:
    return role == "user" and walk.prev_role == "user"


def _stray_result(msg: dict, role: Any, walk: Any) -> bool:
    """A result that answers no call of its turn (or one answered already); advances the ids a
    result may still answer, as :func:`_clean_openai` does."""
    if role == "tool":
        return not answers(msg, walk.known)
    if role == "assistant":
        calls = msg.get("tool_calls")
        walk.known = {call["id"] for call in calls if type(call) is dict and type(call.get("id")) is str} \
            if type(calls) is list else set()
    elif role == "user":
        walk.known = set()
    return False


def _odd_shape(msg: dict, role: Any, walk: Any) -> bool:
    """A message the one pass leaves to the full checks (they word it): a role that is no
    non-empty string, calls that are no list (a call that is no object with a string id: the
    pairing rule's test, :func:`~hermesctx.wire.onepass.oa_unpaired`), content of no API's shape."""
    if type(role) is not str or not role:
        return True
    calls = msg.get("tool_calls")
    if calls is not None and type(calls) is not list:
        return True
    content = msg.get("content")
    return not (content is None or content.__class__ is str or content.__class__ is list
                or (content.__class__ is dict and content.get("_multimodal")))


def openai_unchanged(messages: list) -> bool:
    """Whether :func:`openai_messages` would give ``messages`` back as they are: one cheap pass
    in which no rule of :data:`OPENAI_RULES` might apply, so the usual clean transcript is not
    rebuilt. False sends the list through the full path."""
    return one_pass(messages, _UNCHANGED_TESTS)


def openai_ready(messages: list, tests: tuple | None = None) -> bool:
    """:func:`openai_unchanged` and :func:`hermesctx.wire.rules.openai_pairs_clean` of
    ``messages`` in one pass (sanitize's pairing check and the send path's check of the usual
    clean transcript at once). True only when both are; False also for any odd input either
    would have to look at more closely (:func:`_odd_shape`): the caller then runs each in full.
    (``tests``: :func:`hermesctx.wire.onepass.by_role` of other rows, for a test of the table.)"""
    return one_pass(messages, _READY_TESTS if tests is None else tests)


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
    if _holds_opaque(prev) or _holds_opaque(msg):
        return None  # (a Responses compaction item is never merged with anything)
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


def _holds_opaque(msg: dict) -> bool:
    """Whether an assistant message holds a Responses ``compaction`` item (kept alone in it)."""
    from hermesctx.messages import opaque_compaction

    content = msg.get("content")
    return isinstance(content, list) and any(map(opaque_compaction, content))


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
    """One message through the message rules of :data:`OPENAI_RULES`, in their order."""
    for repair in _MESSAGE_REPAIRS:
        msg = repair(msg, role, counts)
        if msg is None:
            return None
    return msg


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


@record(frozen=True)
class Rule:
    """One rule of the send path: what its repair counts (a line of the report), the rules of
    :mod:`hermesctx.wire.rules` it keeps a request clear of (what ``validate`` reports), the
    repair, and ``might_apply(msg, role, walk)``: a cheap test that is True whenever the repair
    might change the message (False is a promise), asked of the messages of ``roles`` only
    (None: of every message), and with ``only`` only of a message with a key besides the plain
    ones (:data:`_PLAIN_KEYS`), content that is a list or calls (:data:`~hermesctx.wire.onepass.KEYED`,
    ``LISTED``, ``CALLED``); an Anthropic rule's test may be of a block instead (``where``,
    :func:`anthropic_tests`). The one-pass checks are built from the tests
    (:func:`hermesctx.wire.onepass.one_pass`); a rule with ``message`` set repairs one message at
    a time (``repair(msg, role, counts) -> msg | None``) in the table's order, the others are
    passes over the stream (:func:`openai_messages`)."""

    what: str
    rules: tuple
    repair: Callable
    might_apply: Callable
    roles: tuple | None = None
    only: int = 0
    paired: bool = False  # (the pairing rule's test implies this one's: openai_ready asks only that)
    message: bool = True
    where: tuple = ()  # (an Anthropic rule's: see anthropic_tests)


_ASSISTANT = ("assistant",)
OPENAI_RULES = (
    Rule(MERGED_ASSISTANT, ("OA-ASSISTANT-NO-CONTENT",), _merge_assistants, _assistant_run, _ASSISTANT,
         message=False),
    Rule(STRAY_TOOL, ("OA-TOOL-ORPHAN", "OA-TOOL-ID-MISMATCH", "OA-TOOL-DUP-ID"), _clean_openai, _stray_result,
         ("tool", "assistant", "user"), message=False, paired=True),  # (its pass renames a Codex call's results too)
    Rule(INTERNAL_KEYS, ("OA-EXTRA-KEY",), _drop_internal_keys, _internal_key, only=KEYED),
    Rule(REASONING, ("OA-EXTRA-KEY",), _drop_replayed_thinking, _replayed_thinking, only=KEYED),
    Rule(EMPTY_TEXT, ("OA-SCHEMA",), _clean_parts, _parts_to_clean, only=LISTED),
    Rule(EMPTY_CALLS, ("OA-TOOL-CALLS-EMPTY",), _drop_empty_calls, _empty_calls, _ASSISTANT, only=CALLED,
         paired=True),
    Rule(INTERNAL_KEYS, ("OA-EXTRA-KEY", "OA-TOOL-ID-MISMATCH"), _strip_call_internals, _calls_with_internals,
         _ASSISTANT, only=CALLED),
    Rule(EMPTY_ASSISTANT, ("OA-ASSISTANT-NO-CONTENT",), _drop_empty_assistant, _empty_assistant_message,
         _ASSISTANT),
    Rule(MERGED_USER, (), _merge_users, _user_run, ("user",), message=False),
)
_MESSAGE_REPAIRS = tuple(rule.repair for rule in OPENAI_RULES if rule.message)
_OPENAI_TESTS = [(rule.might_apply, rule.roles, rule.only) for rule in OPENAI_RULES]
_UNCHANGED_TESTS = by_role(_OPENAI_TESTS, _PLAIN_KEYS)
# openai_ready's: the odd shapes it leaves to the full checks, sanitize's pairing rule, and the rows
# that rule does not imply (each result answering a pending id of the open run answers a call of its
# turn once; an empty call list breaks it)
OA_READY_ROWS = [(_odd_shape, None), (oa_unpaired, None),
                 *((rule.might_apply, rule.roles, rule.only) for rule in OPENAI_RULES if not rule.paired)]
_READY_TESTS = by_role(OA_READY_ROWS, _PLAIN_KEYS)


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
    new = _rebuilt(body, messages, out, ANTHROPIC_REQUEST_KEYS, counts, top)
    if top.get("system") is _DROP and detect_format(new) != ANTHROPIC:
        # with its empty system gone nothing says Anthropic: read again, the body is an OpenAI one,
        # so it is written as that send path writes it (adjacent user texts merged, as the API
        # itself combines them), and a second pass changes nothing
        new["messages"] = list(_merge_users(new["messages"], counts))
    return new


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


# --- the Anthropic rules: one row each, its repair and its one-pass test ------------------------

class _ReadyWalk:
    """What :func:`anthropic_ready` carries: the role of the turn (consecutive same-role
    messages are one), the last assistant turn's tool ids not answered yet, every tool_use id
    so far (by hash, as :class:`AnthropicState` keeps them), whether the user turn has had a
    block but a tool_result yet (``leading``), and what the message's blocks held so far."""

    __slots__ = ("role", "pending", "used", "leading", "thinking", "other", "block_tests")

    def __init__(self, block_tests: dict) -> None:
        self.block_tests = block_tests  # (role -> kind -> tests: see anthropic_tests)
        self.role: Any = _NO_ROLE  # (the first message starts a turn)
        self.pending: set = set()
        self.used: set = set()
        self.leading = True
        self.thinking = self.other = False


_NO_ROLE = object()  # (no message has it)


def _an_extra_keys(msg: dict, role: Any, walk: _ReadyWalk) -> bool:
    return len(msg) != 2 or "role" not in msg or "content" not in msg


def _an_empty(msg: dict, role: Any, walk: _ReadyWalk) -> bool:
    """Content the send path drops (or fills, in a final assistant turn): blank text, no
    blocks; or content of no API's shape (the full checks word it)."""
    content = msg["content"]
    if type(content) is str:
        return not content or content.isspace()  # (isspace: strip()'s whitespace, no copy)
    return type(content) is not list or not content


def _an_turn(msg: dict, role: Any, walk: _ReadyWalk) -> bool:
    """Sanitize's pairing rule (AN-TOOL-*) where a turn starts: an assistant turn only once the
    last one's calls are all answered; no role but user and assistant (the full checks word it)."""
    if role != walk.role:
        if role == "assistant":
            if walk.pending:
                return True
        elif role != "user":
            return True
        walk.role = role
        walk.leading = True
    if type(msg["content"]) is str:
        walk.leading = False  # (a text block of the turn the API joins: results after it are late)
    return False


def _an_breakpoint(block: dict, walk: _ReadyWalk) -> bool:
    return "cache_control" in block  # (counted, moved or dropped: the send path's to say)


def _an_blank_text(block: dict, walk: _ReadyWalk) -> bool:
    text = block.get("text")
    return type(text) is not str or not text or text.isspace()


def _an_unsigned(block: dict, walk: _ReadyWalk) -> bool:
    return not block.get("signature" if block.get("type") == "thinking" else "data")


def _an_thinking_late(block: dict, walk: _ReadyWalk) -> bool:
    return walk.other


def _an_reused_id(block: dict, walk: _ReadyWalk) -> bool:
    """A tool_use id used before (renumbered), or none a string; else it is used from now on."""
    tool_id = block.get("id")
    if type(tool_id) is not str:
        return True
    key = hash(tool_id)
    if key in walk.used:
        return True
    walk.used.add(key)
    return False


def _an_call(block: dict, walk: _ReadyWalk) -> bool:
    """Sanitize's pairing rule for a call: its string id waits for its result."""
    tool_id = block.get("id")
    if type(tool_id) is not str:
        return True
    walk.pending.add(tool_id)
    return False


def _an_late_result(block: dict, walk: _ReadyWalk) -> bool:
    """Sanitize's pairing rule for a result: in the run at the front of its user turn,
    answering a call of the last assistant turn not answered yet."""
    if not walk.leading:
        return True
    try:
        walk.pending.remove(block["tool_use_id"])
    except (KeyError, TypeError):  # no call of the last assistant turn left with this id
        return True
    return False


def _an_result_content(block: dict, walk: _ReadyWalk) -> bool:
    """A tool_result's content the send path changes: whitespace only, or blocks it would
    (:func:`_blocks_ready` of role ``tool``); content of no API's shape too."""
    inner = block.get("content")
    if type(inner) is str:
        return inner.isspace()
    return inner is not None and (type(inner) is not list or not _blocks_ready(inner, "tool", walk))


def _an_misplaced(block: dict, walk: _ReadyWalk) -> bool:
    return True  # (a block of no place in this role: the full checks word it)


def _an_untyped(block: dict, walk: _ReadyWalk) -> bool:
    return block.get("type") is None


def _an_thinking_only(msg: dict, role: Any, walk: _ReadyWalk) -> bool:
    return walk.thinking and not walk.other


_USER, _TOOL = ("user",), ("tool",)
_AN_ASSISTANT = ("assistant",)
ANTHROPIC_RULES = (
    Rule(INTERNAL_KEYS, ("AN-SCHEMA",), _anthropic_message, _an_extra_keys),
    Rule(EMPTY_MESSAGE, ("AN-EMPTY-CONTENT",), _anthropic_message, _an_empty),
    Rule(CACHE, ("AN-CACHE-MAX4", "AN-CACHE-NESTED"), _anthropic_blocks, _an_breakpoint, where=("block", None)),
    Rule(EMPTY_TEXT, ("AN-EMPTY-TEXT", "AN-WHITESPACE-TEXT"), _anthropic_blocks, _an_blank_text,
         where=("block", ("text",))),
    Rule(EMPTY_TEXT, ("AN-WHITESPACE-TEXT",), _tool_result, _an_result_content,
         where=("block", ("tool_result",), _USER)),
    Rule(UNSIGNED, ("AN-THINK-MODIFIED",), _anthropic_blocks, _an_unsigned, where=("block", _THINKING, _AN_ASSISTANT)),
    Rule(THINKING_MOVED, ("AN-THINK-FIRST",), _anthropic_blocks, _an_thinking_late,
         where=("block", _THINKING, _AN_ASSISTANT)),
    Rule(THINKING_ONLY, ("AN-THINK-LAST",), _anthropic_blocks, _an_thinking_only, where=("end",)),
    Rule(RENUMBERED, ("AN-TOOL-DUP-ID",), _tool_use, _an_reused_id, where=("block", ("tool_use",), _AN_ASSISTANT)),
)
# what anthropic_ready asks besides: sanitize's pairing rule (AN-TOOL-*, repaired by the sanitize
# stage) and the shapes it leaves to the full checks, each in the rows' form
_AN_READY_ONLY = (
    (_an_turn, ()),
    (_an_call, ("block", ("tool_use",), _AN_ASSISTANT)),
    (_an_late_result, ("block", ("tool_result",), _USER)),
    (_an_misplaced, ("block", ("tool_result",), (*_AN_ASSISTANT, *_TOOL))),
    (_an_misplaced, ("block", ("tool_use", *_THINKING), (*_USER, *_TOOL))),
    (_an_untyped, ("block", None)),
)


def anthropic_tests(rows: list) -> tuple[tuple, dict, tuple]:
    """The tests of message, block and message-end rows (``where``: ``()`` a message, ``("block",
    kinds[, roles])`` a block of those kinds (None: any) in a message of those roles (absent:
    any), ``("end",)`` after a message's blocks): message tests, block tests by role (each by
    kind, ``None`` for a kind named by no row), end tests."""
    def block_tests(role: str) -> dict:
        rows_of = [(test, where[1]) for test, where in rows
                   if where[:1] == ("block",) and (len(where) < 3 or role in where[2])]
        kinds = {kind for _, named in rows_of for kind in named or ()}
        return {kind: tuple(t for t, named in rows_of if named is None or kind in named)
                for kind in (*kinds, None)}

    return (tuple(test for test, where in rows if where == ()),
            {role: block_tests(role) for role in ("user", "assistant", "tool")},
            tuple(test for test, where in rows if where == ("end",)))


AN_READY_ROWS = [(row.might_apply, row.where) for row in ANTHROPIC_RULES] + list(_AN_READY_ONLY)
_AN_READY_TESTS = anthropic_tests(AN_READY_ROWS)


def _blocks_ready(blocks: list, role: str, walk: _ReadyWalk) -> bool:
    """Whether no block test of :data:`ANTHROPIC_RULES` (and of sanitize's pairing rule) says
    its rule might apply to a block of ``blocks`` of a ``role`` message (``tool``: the blocks of
    a tool_result). Keeps the walk's account of the message (thinking, other blocks, leading
    results)."""
    tests = walk.block_tests[role]
    for block in blocks:
        if type(block) is not dict:
            return False
        kind = block.get("type")
        for test in tests.get(kind, tests[None]) if type(kind) is str else tests[None]:
            if test(block, walk):
                return False
        if role == "assistant":
            if kind in _THINKING:
                walk.thinking = True
            else:
                walk.other = True
        elif role == "user" and kind != "tool_result":
            walk.leading = False
    return True


def anthropic_ready(messages: list, tests: tuple = _AN_READY_TESTS) -> bool:
    """Whether :func:`anthropic_messages` gives ``messages`` back as they are (nothing counted,
    whatever the request's system and tools hold, bar a tool id) and
    :func:`hermesctx.wire.rules.check_pairing` finds nothing for Anthropic: sanitize's pairing
    check and the send path's work on the usual clean transcript in one pass, as
    :func:`openai_ready` for OpenAI, built from the tests of :data:`ANTHROPIC_RULES` and
    sanitize's pairing rule. True only when all hold; False also for anything either looks at
    more closely (a cache breakpoint, a key besides role and content, a role besides user and
    assistant, a block of no place in its role, an id that is no string): the caller then runs
    each in full. Pairing: the tool_use ids of each assistant turn, distinct and never used
    before, are each answered by a tool_result block in the run at the front of the user turn
    right after it. (``tests``: :func:`anthropic_tests` of other rows, for a test of the table.)"""
    message_tests, block_tests, end_tests = tests
    walk = _ReadyWalk(block_tests)
    for msg in messages:
        if type(msg) is not dict:
            return False
        role = msg.get("role")
        for test in message_tests:
            if test(msg, role, walk):
                return False
        content = msg["content"]
        if type(content) is list:
            walk.thinking = walk.other = False
            if not _blocks_ready(content, role, walk):
                return False
            for test in end_tests:
                if test(msg, role, walk):
                    return False
    return not walk.pending

