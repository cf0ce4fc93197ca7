"""The request rules OpenAI and Anthropic enforce (``wire-rules.md``), checked on one body.

:func:`check` takes a request body (an OpenAI ``{"messages": [...], ...}`` body or a bare message
list, or an Anthropic Messages body) and the API it is meant for, and returns every
:class:`Problem`: where (``messages[7].content[1]``), which rule (``AN-TOOL-ORPHAN``), how bad
(``reject`` for every model, ``risk`` on some models or gateways, ``info`` for a parameter the
caller adds) and the error text the API returns, filled with the real index and ids.
:func:`check_pairing` is the tool-pairing subset (``OA-TOOL-*``, ``AN-TOOL-*``), what
``sanitize --check`` reports.

Every check is one pass over the body, reading it without copying it. The OpenAI per-role
message schema is hand-coded from OpenAI's OpenAPI spec (openai/openai-openapi @ f85dbe2,
``CreateChatCompletionRequest`` and the ``ChatCompletionRequest*Message`` schemas); the Anthropic
block schema from the Anthropic SDK's request types (``MessageParam`` and the block params).
Tool pairing is positional, as the APIs check it: an OpenAI ``tool`` message answers the
assistant message right before its run of tool messages; an Anthropic ``tool_result`` answers
the assistant turn right before its user turn, consecutive same-role messages being one turn.
"""

from __future__ import annotations

from hermesctx.record import record
from hermesctx.wire import params, tooldefs
from hermesctx.wire.onepass import by_role, oa_unpaired, one_pass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

OPENAI = "openai"
ANTHROPIC = "anthropic"
RESPONSES = "responses"  # a Responses request, checked in the chat form it is read into
TARGETS = (OPENAI, ANTHROPIC)

REJECT, RISK, INFO = "reject", "risk", "info"

# rule id -> severity (wire-rules.md)
RULES: dict[str, str] = {
    "OA-SCHEMA": REJECT,
    "OA-UNKNOWN-PARAM": REJECT,
    "OA-TOOL-UNANSWERED": REJECT,
    "OA-TOOL-ORPHAN": REJECT,
    "OA-TOOL-ID-MISMATCH": REJECT,
    "OA-TOOL-CALLS-EMPTY": REJECT,
    "OA-ASSISTANT-NO-CONTENT": REJECT,
    "OA-EXTRA-KEY": RISK,
    "OA-CACHE-MAX4": RISK,
    "OA-TOOL-DUP-ID": RISK,
    "OA-COMPACTION": REJECT,
    "AN-SCHEMA": REJECT,
    "AN-EMPTY-CONTENT": REJECT,
    "AN-EMPTY-TEXT": REJECT,
    "AN-WHITESPACE-TEXT": REJECT,
    "AN-TOOL-UNANSWERED": REJECT,
    "AN-TOOL-RESULT-FIRST": REJECT,
    "AN-TOOL-ORPHAN": REJECT,
    "AN-TOOL-DUP-ID": REJECT,
    "AN-BLOCK-ROLE": RISK,
    "AN-ROLE-SYSTEM": RISK,
    "AN-FIRST-USER": RISK,
    "AN-CACHE-MAX4": REJECT,
    "AN-CACHE-TTL-ORDER": REJECT,
    "AN-CACHE-EMPTY-TEXT": REJECT,
    "AN-CACHE-NESTED": RISK,
    "AN-THINK-MODIFIED": REJECT,
    "AN-THINK-FIRST": REJECT,
    "AN-THINK-LAST": REJECT,
    "AN-THINK-FINAL-TURN": RISK,
    "AN-THINK-PREFIX": RISK,
    "AN-MISSING-PARAM": INFO,
    "AN-COMPACTION": REJECT,
}
RULES.update(tooldefs.RULES)  # tool definitions and tool_choice (hermesctx.wire.tooldefs)
PAIRING_RULES = frozenset(rule for rule in RULES if rule.startswith(("OA-TOOL-", "AN-TOOL-")))


@record(frozen=True)
class Problem:
    """One broken rule: ``path`` in the body, ``rule`` id, ``severity`` (reject / risk / info),
    ``message`` (the API's error text) and ``counted`` (whether it makes the body fail: a
    reject always, a risk under ``strict``, an info never)."""

    path: str
    rule: str
    severity: str
    message: str
    counted: bool = True

    def as_dict(self) -> dict:
        return {"path": self.path, "rule": self.rule, "severity": self.severity,
                "message": self.message}


def _message_index(problem: Problem) -> int:
    path = problem.path
    if path.startswith("messages["):
        return int(path[9:path.index("]")])
    return -1


class _Sink:
    """Collects problems; ``only`` limits them to a set of rules."""

    __slots__ = ("problems", "strict", "only")

    def __init__(self, strict: bool, only: frozenset | None = None):
        self.problems: list[Problem] = []
        self.strict = strict
        self.only = only

    def add(self, path: str, rule: str, message: str, severity: str | None = None) -> None:
        if self.only is not None and rule not in self.only:
            return
        severity = severity or RULES[rule]
        counted = severity == REJECT or (severity == RISK and self.strict)
        self.problems.append(Problem(path, rule, severity, message, counted))

    def in_order(self) -> list[Problem]:
        """The problems by message (body-level ones first), each message's in found order."""
        return sorted(self.problems, key=_message_index)


class _Found(Exception):
    pass


class _FirstProblem(_Sink):
    """A sink that stops the check at the first problem it is given (:class:`_Found`)."""

    __slots__ = ()

    def add(self, path: str, rule: str, message: str, severity: str | None = None) -> None:
        if self.only is None or rule in self.only:
            raise _Found


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "an array", dict: "an object"}.get(type(value), type(value).__name__)


def id_key(value: Any) -> Any:
    """An id as a set key: strings as they are, anything else (malformed) by its repr; a
    missing id (None) matches nothing, not even another missing id."""
    if isinstance(value, str):
        return value
    return object() if value is None else ("\0", repr(value))


def _show_id(value: Any) -> str:
    return value if isinstance(value, str) else repr(value)


def _kind(obj: dict) -> str | None:
    """An object's ``type`` when it is a string (a list ``type`` is no known type, not a crash)."""
    kind = obj.get("type")
    return kind if isinstance(kind, str) else None


def _blank(value: Any) -> bool:
    return isinstance(value, str) and value != "" and not value.strip()


def target_of(doc: Any) -> str:
    """The API a body is written for: Anthropic for a top-level ``system`` (or another parameter
    only Anthropic has: ``thinking``, ``stop_sequences``, ``top_k``), else OpenAI when any
    message carries OpenAI tool traffic (a ``tool`` message, a non-empty ``tool_calls``), else
    Anthropic when any content block is Anthropic-only, else OpenAI."""
    if isinstance(doc, dict) and not _ANTHROPIC_PARAMS.isdisjoint(doc):
        return ANTHROPIC
    messages, _ = _messages(doc)
    blocks = False
    for msg in messages or ():
        if not isinstance(msg, dict):
            continue
        calls = msg.get("tool_calls")
        if msg.get("role") == "tool" or (isinstance(calls, list) and calls):
            return OPENAI
        content = msg.get("content")
        if not blocks and isinstance(content, list):
            blocks = any(isinstance(b, dict) and _kind(b) in _ANTHROPIC_ONLY for b in content)
    return ANTHROPIC if blocks else OPENAI


_ANTHROPIC_ONLY = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking"})
_ANTHROPIC_PARAMS = frozenset({"system", "thinking", "stop_sequences", "top_k"})


def _messages(doc: Any) -> tuple[list | None, dict | None]:
    if isinstance(doc, list):
        return doc, None
    if isinstance(doc, dict):
        messages = doc.get("messages")
        return (messages if isinstance(messages, list) else None), doc
    return None, None


def check(doc: Any, target: str | None = None, *, strict: bool = False,
          reference: Any = None) -> list[Problem]:
    """Every problem of ``doc`` as a request to ``target`` (default: the body's own API).

    ``strict`` makes ``risk`` problems count (:attr:`Problem.counted`); ``reference`` (the
    input the body was made from) enables the thinking-signature rules."""
    target = target or target_of(doc)
    sink = _Sink(strict)
    if target == ANTHROPIC:
        _check_anthropic(doc, sink, reference)
    else:
        _check_openai(doc, sink, responses=target == RESPONSES)
    _check_request(doc, target, sink)
    return sink.in_order()


def _check_request(doc: Any, target: str, sink: _Sink) -> None:
    """The tool definitions, then the whole body against the provider's published request
    schema (loaded only for a body with parameters: :func:`hermesctx.wire.schema.needed`)."""
    if target == RESPONSES:  # (its tools in chat's form; no published schema checked here)
        tooldefs.check(doc, OPENAI, sink)
        return
    tooldefs.check(doc, target, sink)
    from hermesctx.wire import schema

    if schema.needed(doc):
        schema.check(doc, target, sink)


def check_pairing(doc: Any, target: str | None = None, *, strict: bool = False) -> list[Problem]:
    """The tool-pairing subset of :func:`check` (``OA-TOOL-*`` / ``AN-TOOL-*``): what
    ``sanitize --check`` reports and ``sanitize`` repairs."""
    sink = _Sink(strict, PAIRING_RULES)
    _pairing(doc, target, sink)
    return sink.in_order()


def pairing_clean(doc: Any, target: str | None = None) -> bool:
    """Whether :func:`check_pairing` finds nothing, told at the first problem (sanitize asks
    no more of its input and of Hermes's repair)."""
    try:
        _pairing(doc, target, _FirstProblem(False, PAIRING_RULES))
    except _Found:
        return False
    return True


def _pairing(doc: Any, target: str | None, sink: _Sink) -> None:
    target = target or target_of(doc)
    messages, _ = _messages(doc)
    if messages is None:
        return
    if target == ANTHROPIC:
        _anthropic_pairing(messages, sink)
        _anthropic_dup_ids(messages, sink)
    elif not openai_pairs_clean(messages):
        _openai_pairing(messages, sink)


def failed(problems: list[Problem]) -> bool:
    """Whether any problem counts."""
    return any(p.counted for p in problems)


# === OpenAI ==================================================================================

OPENAI_REQUEST_PARAMS = params.OPENAI
OPENAI_ROLES = ("developer", "system", "user", "assistant", "tool", "function")
_ROLE_LIST = "'system', 'assistant', 'user', 'function', 'tool', and 'developer'"

# per role: the declared properties, the required ones, and the content part types allowed
_OA_MESSAGE_KEYS = {
    "developer": frozenset({"content", "name", "role"}),
    "system": frozenset({"content", "name", "role"}),
    "user": frozenset({"content", "name", "role"}),
    "assistant": frozenset({"audio", "content", "function_call", "name", "refusal", "role", "tool_calls"}),
    # `name` on tool messages is tolerated (wire-rules.md: tau-bench transcripts recorded live)
    "tool": frozenset({"content", "role", "tool_call_id", "name"}),
    "function": frozenset({"content", "name", "role"}),
}
_OA_REQUIRED = {
    "developer": ("content",), "system": ("content",), "user": ("content",), "assistant": (),
    "tool": ("content", "tool_call_id"), "function": ("content", "name"),
}
_OA_PART_TYPES = {
    "developer": ("text",), "system": ("text",), "tool": ("text",),
    "user": ("text", "image_url", "input_audio", "file"),
    "assistant": ("text", "refusal"),
}
# part type -> (declared keys, required keys)
_OA_PARTS = {
    "text": (frozenset({"type", "text", "prompt_cache_breakpoint"}), ("text",)),
    "image_url": (frozenset({"type", "image_url", "prompt_cache_breakpoint"}), ("image_url",)),
    "input_audio": (frozenset({"type", "input_audio", "prompt_cache_breakpoint"}), ("input_audio",)),
    "file": (frozenset({"type", "file", "prompt_cache_breakpoint"}), ("file",)),
    "refusal": (frozenset({"type", "refusal"}), ("refusal",)),
}
_OA_TOOL_CALL_KEYS = {"function": frozenset({"id", "type", "function"}),
                      "custom": frozenset({"id", "type", "custom"})}


def _oa_missing(sink: _Sink, path: str) -> None:
    sink.add(path, "OA-SCHEMA", f"Missing required parameter: '{path}'.")


def _oa_type(sink: _Sink, path: str, expected: str, value: Any) -> None:
    sink.add(path, "OA-SCHEMA",
             f"Invalid type for '{path}': expected {expected}, but got {_type_name(value)} instead.")


def _oa_value(sink: _Sink, path: str, value: Any, allowed: str) -> None:
    sink.add(path, "OA-SCHEMA",
             f"Invalid value: '{_show_id(value)}'. Supported values are: {allowed}.")


def _oa_extra(sink: _Sink, path: str, key: Any) -> None:
    sink.add(path, "OA-EXTRA-KEY",
             f"Additional properties are not allowed ('{key}' was unexpected) - '{path}'")


def _check_openai(doc: Any, sink: _Sink, *, responses: bool = False) -> None:
    """``responses``: a Responses request read into chat's form (its own parameters and its
    ``compaction`` items allowed)."""
    messages, body = _messages(doc)
    if body is not None:
        for key in body:
            if key not in OPENAI_REQUEST_PARAMS and not (responses and key in params.RESPONSES):
                sink.add(str(key), "OA-UNKNOWN-PARAM", f"Unrecognized request argument supplied: {key}")
        if "model" not in body:
            sink.add("model", "OA-SCHEMA", "Missing required parameter: 'model'.", INFO)
        if "messages" not in body:
            _oa_missing(sink, "messages")
        elif messages is None:
            _oa_type(sink, "messages", "an array", body["messages"])
    if messages is None:
        if body is None:
            _oa_type(sink, "messages", "an array", doc)
        return
    if not messages:  # the schema's minItems: 1
        sink.add("messages", "OA-SCHEMA", "Invalid 'messages': empty array. Expected an array with "
                 "minimum length 1, but got an empty array instead.")
    cache_marks = 0
    for i, msg in enumerate(messages):
        path = f"messages[{i}]"
        if not isinstance(msg, dict):
            _oa_type(sink, path, "an object", msg)
            continue
        if "cache_control" in msg:
            cache_marks += 1
        role = msg.get("role")
        if "role" not in msg:
            _oa_missing(sink, f"{path}.role")
            continue
        if not isinstance(role, str) or role not in _OA_MESSAGE_KEYS:
            _oa_value(sink, f"{path}.role", role, _ROLE_LIST)
            continue
        declared = _OA_MESSAGE_KEYS[role]
        for key in msg:
            if key not in declared:
                _oa_extra(sink, path, key)
        for key in _OA_REQUIRED[role]:
            if key not in msg:
                _oa_missing(sink, f"{path}.{key}")
        if "name" in msg and not isinstance(msg["name"], str) and role != "tool":
            _oa_type(sink, f"{path}.name", "a string", msg["name"])
        if "content" in msg:
            cache_marks += _oa_content(sink, path, role, msg["content"], responses)
        if role == "tool" and "tool_call_id" in msg and not isinstance(msg["tool_call_id"], str):
            _oa_type(sink, f"{path}.tool_call_id", "a string", msg["tool_call_id"])
        if role == "assistant":
            _oa_assistant(sink, path, msg)
    if cache_marks > 4:
        sink.add("messages", "OA-CACHE-MAX4",
                 f"A maximum of 4 blocks with cache_control may be provided. Found {cache_marks}.")
    if not openai_pairs_clean(messages):
        _openai_pairing(messages, sink)


def _oa_content(sink: _Sink, path: str, role: str, content: Any, responses: bool = False) -> int:
    """Check a message's content; return the number of cache_control marks on its parts."""
    cpath = f"{path}.content"
    if isinstance(content, str):
        return 0
    if content is None:
        if role not in ("assistant", "function"):
            _oa_type(sink, cpath, "one of a string or array of objects", content)
        return 0
    if not isinstance(content, list):
        _oa_type(sink, cpath, "one of a string or array of objects", content)
        return 0
    if not content:
        sink.add(cpath, "OA-SCHEMA",
                 f"Invalid '{cpath}': empty array. Expected an array with minimum length 1, "
                 "but got an empty array instead.")
        return 0
    if role == "function":
        _oa_type(sink, cpath, "a string", content)
        return 0
    allowed = _OA_PART_TYPES[role]
    marks = 0
    for j, part in enumerate(content):
        ppath = f"{cpath}[{j}]"
        if not isinstance(part, dict):
            _oa_type(sink, ppath, "an object", part)
            continue
        if "cache_control" in part:
            marks += 1
        kind = part.get("type")
        if "type" not in part:
            _oa_missing(sink, f"{ppath}.type")
            continue
        if kind == "compaction" and "encrypted_content" in part:
            _compaction_item(sink, ppath, part, responses and role == "assistant")
            continue
        if not isinstance(kind, str) or kind not in allowed:
            _oa_value(sink, f"{ppath}.type", kind, ", ".join(f"'{t}'" for t in allowed))
            continue
        declared, required = _OA_PARTS[kind]
        for key in part:
            if key not in declared:
                _oa_extra(sink, ppath, key)
        for key in required:
            if key not in part:
                _oa_missing(sink, f"{ppath}.{key}")
        _oa_part_value(sink, ppath, kind, part)
    return marks


# a Responses compaction item's keys: CompactionSummaryItemParam (id, type, encrypted_content)
# and, as the API returns it (CompactionBody), created_by
_COMPACTION_KEYS = ("type", "id", "encrypted_content", "created_by")


def _compaction_item(sink: _Sink, path: str, item: dict, allowed: bool) -> None:
    """OA-COMPACTION: a Responses ``compaction`` item, what server-side compaction
    (``context_management`` with ``compact_threshold``) or ``POST /responses/compact`` returns
    (https://developers.openai.com/api/docs/guides/compaction; API reference: the
    ``compaction`` input item, ``{"type": "compaction", "id": str | null, "encrypted_content":
    str}``): opaque, passed back unchanged in a Responses request's ``input`` (the items before
    it may be dropped); Chat Completions takes none (read from a Responses request, it is kept
    alone in an assistant message's content)."""
    if not allowed:
        sink.add(path, "OA-COMPACTION", "a Responses `compaction` item (encrypted_content) is sent "
                 "only in a Responses request's input, never in chat messages or another provider's")
        return
    for key in item:
        if key not in _COMPACTION_KEYS:
            sink.add(path, "OA-COMPACTION", f"Unknown parameter: '{path}.{key}'.")
    if not isinstance(item.get("encrypted_content"), str):
        sink.add(path, "OA-COMPACTION", f"Invalid type for '{path}.encrypted_content': expected a "
                 f"string, but got {_type_name(item.get('encrypted_content'))} instead.")
    if item.get("id") is not None and not isinstance(item["id"], str):
        sink.add(path, "OA-COMPACTION", f"Invalid type for '{path}.id': expected a string, but got "
                 f"{_type_name(item['id'])} instead.")


def _oa_part_value(sink: _Sink, ppath: str, kind: str, part: dict) -> None:
    if kind in ("text", "refusal"):
        if kind in part and not isinstance(part[kind], str):
            _oa_type(sink, f"{ppath}.{kind}", "a string", part[kind])
    elif kind == "image_url":
        image = part.get("image_url")
        if "image_url" not in part:
            return
        if not isinstance(image, dict):
            _oa_type(sink, f"{ppath}.image_url", "an object", image)
        elif not isinstance(image.get("url"), str):
            if "url" not in image:
                _oa_missing(sink, f"{ppath}.image_url.url")
            else:
                _oa_type(sink, f"{ppath}.image_url.url", "a string", image["url"])
        elif "detail" in image and image["detail"] not in ("auto", "low", "high"):
            _oa_value(sink, f"{ppath}.image_url.detail", image["detail"], "'auto', 'low', and 'high'")
    elif kind == "input_audio":
        audio = part.get("input_audio")
        if "input_audio" in part and not (isinstance(audio, dict) and isinstance(audio.get("data"), str)
                                          and audio.get("format") in ("wav", "mp3")):
            _oa_type(sink, f"{ppath}.input_audio", "an object with data and format 'wav' or 'mp3'", audio)
    elif kind == "file":
        if "file" in part and not isinstance(part["file"], dict):
            _oa_type(sink, f"{ppath}.file", "an object", part["file"])
    breakpoint_ = part.get("prompt_cache_breakpoint")
    if "prompt_cache_breakpoint" in part and not (isinstance(breakpoint_, dict)
                                                  and breakpoint_.get("mode") == "explicit"):
        _oa_type(sink, f"{ppath}.prompt_cache_breakpoint", "an object with mode 'explicit'", breakpoint_)


def _oa_assistant(sink: _Sink, path: str, msg: dict) -> None:
    for key in ("refusal",):
        if msg.get(key) is not None and not isinstance(msg[key], str):
            _oa_type(sink, f"{path}.{key}", "a string", msg[key])
    audio = msg.get("audio")
    if audio is not None and not (isinstance(audio, dict) and isinstance(audio.get("id"), str)):
        _oa_type(sink, f"{path}.audio", "an object with an id", audio)
    function_call = msg.get("function_call")
    if function_call is not None and not (isinstance(function_call, dict)
                                          and isinstance(function_call.get("name"), str)
                                          and isinstance(function_call.get("arguments"), str)):
        _oa_type(sink, f"{path}.function_call", "an object with name and arguments", function_call)
    calls = msg.get("tool_calls")
    has_calls = False
    if "tool_calls" in msg:
        if not isinstance(calls, list):
            _oa_type(sink, f"{path}.tool_calls", "an array", calls)
        elif calls:  # (an empty list is OA-TOOL-CALLS-EMPTY, a pairing rule)
            has_calls = True
            for k, call in enumerate(calls):
                _oa_tool_call(sink, f"{path}.tool_calls[{k}]", call)
    if msg.get("content") is None and not has_calls and function_call is None:
        sink.add(f"{path}.content", "OA-ASSISTANT-NO-CONTENT",
                 "Invalid value for 'content': expected a string, got null.")


def _oa_tool_call(sink: _Sink, tpath: str, call: Any) -> None:
    if not isinstance(call, dict):
        _oa_type(sink, tpath, "an object", call)
        return
    kind = call.get("type")
    if "type" not in call:
        _oa_missing(sink, f"{tpath}.type")
        kind = "function"
    elif not isinstance(kind, str) or kind not in _OA_TOOL_CALL_KEYS:
        _oa_value(sink, f"{tpath}.type", kind, "'function' and 'custom'")
        return
    for key in call:
        if key not in _OA_TOOL_CALL_KEYS[kind]:
            _oa_extra(sink, tpath, key)
    if "id" not in call:
        _oa_missing(sink, f"{tpath}.id")
    elif not isinstance(call["id"], str):
        _oa_type(sink, f"{tpath}.id", "a string", call["id"])
    inner = call.get(kind)
    fields = ("name", "arguments") if kind == "function" else ("name", "input")
    if kind not in call:
        _oa_missing(sink, f"{tpath}.{kind}")
    elif not isinstance(inner, dict):
        _oa_type(sink, f"{tpath}.{kind}", "an object", inner)
    else:
        for key in fields:
            if key not in inner:
                _oa_missing(sink, f"{tpath}.{kind}.{key}")
            elif not isinstance(inner[key], str):
                _oa_type(sink, f"{tpath}.{kind}.{key}", "a string", inner[key])


_PAIRING_TESTS = by_role([(oa_unpaired, None)])


def openai_pairs_clean(messages: list) -> bool:
    """True only when :func:`_openai_pairing` finds nothing (:func:`oa_unpaired` in one pass):
    the usual clean transcript is answered with no problem text built; False (also for any
    odd id) leaves the answer to the full check."""
    return one_pass(messages, _PAIRING_TESTS, odd_ok=True)


def _openai_pairing(messages: list, sink: _Sink) -> None:
    """OA-TOOL-*: the run of tool messages right after an assistant with tool_calls answers
    each of its ids; a tool message anywhere else is an orphan."""
    open_at = -1  # index of the assistant whose run is open
    expected: dict = {}  # id key -> id, of the open assistant's calls
    answered: set = set()

    def close() -> None:
        missing = [cid for key, cid in expected.items() if key not in answered]
        if missing:
            sink.add(f"messages[{open_at}]", "OA-TOOL-UNANSWERED",
                     "An assistant message with 'tool_calls' must be followed by tool messages "
                     "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                     f"response messages: {', '.join(_show_id(c) for c in missing)}")

    in_run = False
    for i, msg in enumerate(messages):
        if type(msg) is not dict:
            if in_run:
                close()
            in_run = False
            continue
        role = msg.get("role")
        if role == "tool":
            if not in_run:
                sink.add(f"messages[{i}].role", "OA-TOOL-ORPHAN",
                         "Invalid parameter: messages with role 'tool' must be a response to a "
                         "preceeding message with 'tool_calls'.")
                continue
            cid = msg.get("tool_call_id")
            key = id_key(cid)
            if key not in expected:
                sink.add(f"messages[{i}].tool_call_id", "OA-TOOL-ID-MISMATCH",
                         f"Invalid parameter: 'tool_call_id' of '{_show_id(cid)}' not found in "
                         "'tool_calls' of previous message.")
            elif key in answered:
                sink.add(f"messages[{i}].tool_call_id", "OA-TOOL-DUP-ID",
                         f"(undocumented) duplicate tool_call id: '{_show_id(cid)}' answered twice")
            else:
                answered.add(key)
            continue
        if in_run:
            close()
            in_run = False
        if role != "assistant":
            continue
        calls = msg.get("tool_calls")
        if calls is None or type(calls) is not list:
            continue
        if not calls:
            sink.add(f"messages[{i}].tool_calls", "OA-TOOL-CALLS-EMPTY",
                     f"Invalid 'messages[{i}].tool_calls': empty array. Expected an array with "
                     "minimum length 1, but got an empty array instead.")
            continue
        in_run, open_at = True, i
        expected, answered = {}, set()
        for k, call in enumerate(calls):
            cid = call.get("id") if type(call) is dict else None
            key = id_key(cid)
            if key in expected:
                sink.add(f"messages[{i}].tool_calls[{k}].id", "OA-TOOL-DUP-ID",
                         f"(undocumented) duplicate tool_call id: '{_show_id(cid)}'")
            else:
                expected[key] = cid
    if in_run:
        close()


# === Anthropic ===============================================================================

ANTHROPIC_REQUEST_PARAMS = params.ANTHROPIC
# block type -> (declared keys, required keys: type)
_AN_BLOCKS: dict[str, tuple[frozenset, dict]] = {
    "text": (frozenset({"type", "text", "cache_control", "citations"}), {"text": str}),
    "image": (frozenset({"type", "source", "cache_control"}), {"source": dict}),
    "document": (frozenset({"type", "source", "cache_control", "citations", "context", "title"}),
                 {"source": dict}),
    "search_result": (frozenset({"type", "content", "source", "title", "cache_control", "citations"}),
                      {"content": list, "source": str, "title": str}),
    "tool_use": (frozenset({"type", "id", "input", "name", "cache_control", "caller"}),
                 {"id": str, "input": dict, "name": str}),
    "tool_result": (frozenset({"type", "tool_use_id", "content", "is_error", "cache_control"}),
                    {"tool_use_id": str}),
    "thinking": (frozenset({"type", "thinking", "signature"}), {"thinking": str, "signature": str}),
    "redacted_thinking": (frozenset({"type", "data"}), {"data": str}),
}
# server-side blocks the SDK also accepts back in a request: checked for their type only
_AN_OTHER_BLOCKS = frozenset({
    "server_tool_use", "web_search_tool_result", "web_fetch_tool_result",
    "code_execution_tool_result", "bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result", "tool_search_tool_result", "container_upload",
})
# beta blocks (BetaCreateMessageParams): accepted with the anthropic-beta header, a risk
_AN_BETA_BLOCKS = frozenset({"mcp_tool_use", "mcp_tool_result"})
_AN_RESULT_CONTENT = ("text", "image", "search_result", "document")
_THINKING = ("thinking", "redacted_thinking")
_TAGS = ", ".join(f"'{t}'" for t in (*_AN_BLOCKS, *sorted(_AN_OTHER_BLOCKS)))
_PY_TYPES = {str: "a valid string", dict: "a valid dictionary", list: "a valid list"}


def _an_path(path: str) -> str:
    """``messages[3].content[1]`` as the API writes it: ``messages.3.content.1``."""
    return path.replace("[", ".").replace("]", "")


class _AnthropicWalk:
    """State of one pass over an Anthropic body: cache marks in tools, system, messages order."""

    __slots__ = ("sink", "marks", "seen_5m")

    def __init__(self, sink: _Sink):
        self.sink = sink
        self.marks = 0
        self.seen_5m = False

    def cache_control(self, path: str, value: Any) -> None:
        sink = self.sink
        self.marks += 1
        where = _an_path(path)
        if not isinstance(value, dict):
            sink.add(f"{path}.cache_control", "AN-SCHEMA",
                     f"{where}.cache_control: Input should be a valid dictionary")
            return
        for key in value:
            if key not in ("type", "ttl"):
                sink.add(f"{path}.cache_control", "AN-SCHEMA",
                         f"{where}.cache_control.{key}: Extra inputs are not permitted")
        if value.get("type") != "ephemeral":
            sink.add(f"{path}.cache_control", "AN-SCHEMA",
                     f"{where}.cache_control.type: Input should be 'ephemeral'")
        ttl = value.get("ttl", "5m")
        if ttl not in ("5m", "1h"):
            sink.add(f"{path}.cache_control", "AN-SCHEMA",
                     f"{where}.cache_control.ttl: Input should be '5m' or '1h'")
        elif ttl == "5m":
            self.seen_5m = True
        elif self.seen_5m:
            sink.add(f"{path}.cache_control", "AN-CACHE-TTL-ORDER",
                     f"{where}.cache_control.ttl: a ttl='1h' cache_control block must not come "
                     "after a ttl='5m' cache_control block. Note that blocks are processed in the "
                     "following order: `tools`, `system`, `messages`.")

    def text(self, path: str, text: Any, block: dict) -> None:
        if not isinstance(text, str):
            return
        if text == "":
            self.sink.add(path, "AN-EMPTY-TEXT", "messages: text content blocks must be non-empty")
            if "cache_control" in block:
                self.sink.add(path, "AN-CACHE-EMPTY-TEXT",
                              f"{_an_path(path)}.text: cache_control cannot be set for empty text blocks")
        elif not text.strip():
            self.sink.add(path, "AN-WHITESPACE-TEXT",
                          "messages: text content blocks must contain non-whitespace text")

    def block(self, path: str, block: Any, allowed: tuple | None = None, nested: bool = False) -> str | None:
        """Check one content block; return its type when it is a known one."""
        sink = self.sink
        where = _an_path(path)
        if not isinstance(block, dict):
            sink.add(path, "AN-SCHEMA", f"{where}: Input should be a valid dictionary")
            return None
        kind = block.get("type")
        if "cache_control" in block:
            if nested:
                sink.add(f"{path}.cache_control", "AN-CACHE-NESTED",
                         f"{where}.cache_control: cache_control may not be specified within "
                         "`tool_result.content`. Instead, place it directly on `tool_result`")
            self.cache_control(path, block["cache_control"])
        if kind == "compaction" and not allowed:
            _compaction_block(sink, path, block)
            return kind
        if not isinstance(kind, str) or kind not in _AN_BLOCKS or (allowed and kind not in allowed):
            if isinstance(kind, str) and kind in _AN_OTHER_BLOCKS and not allowed:
                return kind
            if isinstance(kind, str) and kind in _AN_BETA_BLOCKS and not allowed:
                sink.add(path, "AN-SCHEMA", f"{where}: a beta `{kind}` block: accepted by the beta "
                         "Messages API with its anthropic-beta header", RISK)
                return kind
            if "type" not in block:
                sink.add(path, "AN-SCHEMA", f"{where}.type: Field required")
            else:
                tags = ", ".join(f"'{t}'" for t in allowed) if allowed else _TAGS
                sink.add(path, "AN-SCHEMA",
                         f"{where}: Input tag '{_show_id(kind)}' found using 'type' does not match "
                         f"any of the expected tags: {tags}")
            return None
        declared, required = _AN_BLOCKS[kind]
        for key in block:
            if key not in declared:
                sink.add(path, "AN-SCHEMA", f"{where}.{kind}.{key}: Extra inputs are not permitted")
        for key, typ in required.items():
            if key not in block:
                sink.add(path, "AN-SCHEMA", f"{where}.{kind}.{key}: Field required")
            elif not isinstance(block[key], typ):
                sink.add(path, "AN-SCHEMA", f"{where}.{kind}.{key}: Input should be {_PY_TYPES[typ]}")
        if kind == "text":
            self.text(path, block.get("text"), block)
        elif kind == "image":
            self.image_source(path, block.get("source"))
        elif kind == "tool_result":
            self.result_content(path, block)
        elif kind == "search_result" and isinstance(block.get("content"), list):
            for k, inner in enumerate(block["content"]):
                self.block(f"{path}.content[{k}]", inner, ("text",), nested)
        return kind

    def image_source(self, path: str, source: Any) -> None:
        if not isinstance(source, dict):
            return
        kind = _kind(source)
        fields = {"base64": ("media_type", "data"), "url": ("url",), "file": ("file_id",)}.get(kind)
        where = f"{_an_path(path)}.image.source"
        if fields is None:
            self.sink.add(f"{path}.source", "AN-SCHEMA",
                          f"{where}: Input tag '{_show_id(kind)}' found using 'type' does not match "
                          "any of the expected tags: 'base64', 'url', 'file'")
            return
        for key in source:
            if key != "type" and key not in fields:
                self.sink.add(f"{path}.source", "AN-SCHEMA", f"{where}.{kind}.{key}: Extra inputs are not permitted")
        for key in fields:
            if not isinstance(source.get(key), str):
                self.sink.add(f"{path}.source", "AN-SCHEMA", f"{where}.{kind}.{key}: Field required")
        if kind == "base64" and source.get("media_type") not in ("image/jpeg", "image/png", "image/gif", "image/webp"):
            self.sink.add(f"{path}.source", "AN-SCHEMA",
                          f"{where}.base64.media_type: Input should be 'image/jpeg', 'image/png', "
                          "'image/gif' or 'image/webp'")

    def result_content(self, path: str, block: dict) -> None:
        content = block.get("content")
        if "is_error" in block and not isinstance(block["is_error"], bool):
            self.sink.add(path, "AN-SCHEMA", f"{_an_path(path)}.tool_result.is_error: Input should be a valid boolean")
        if content is None or isinstance(content, str):
            if "content" in block and content is None:
                self.sink.add(path, "AN-SCHEMA",
                              f"{_an_path(path)}.tool_result.content: Input should be a valid string")
            elif isinstance(content, str) and _blank(content):
                self.sink.add(path, "AN-WHITESPACE-TEXT",
                              "messages: text content blocks must contain non-whitespace text")
            return
        if not isinstance(content, list):
            self.sink.add(path, "AN-SCHEMA",
                          f"{_an_path(path)}.tool_result.content: Input should be a valid string or list")
            return
        for k, inner in enumerate(content):
            self.block(f"{path}.content[{k}]", inner, _AN_RESULT_CONTENT, nested=True)


def _compaction_block(sink: _Sink, path: str, block: dict) -> None:
    """AN-COMPACTION: a ``compaction`` block, the summary server-side compaction wrote (beta
    ``compact-2026-01-12``, https://platform.claude.com/docs/en/build-with-claude/compaction):
    ``{"type": "compaction", "content": str | null}`` (``cache_control`` allowed), passed back
    unchanged in an assistant message; the API drops every block before it."""
    where = _an_path(path)
    for key in block:
        if key not in ("type", "content", "cache_control"):
            sink.add(path, "AN-COMPACTION", f"{where}.compaction.{key}: Extra inputs are not permitted")
    if "content" not in block:
        sink.add(path, "AN-COMPACTION", f"{where}.compaction.content: Field required")
    elif block["content"] is not None and not isinstance(block["content"], str):
        sink.add(path, "AN-COMPACTION", f"{where}.compaction.content: Input should be a valid string")


def _check_anthropic(doc: Any, sink: _Sink, reference: Any) -> None:
    """Every Anthropic rule on one body (or bare message list): the request's own keys, each
    message and its blocks, then the rules across messages."""
    messages, body = _messages(doc)
    walk = _AnthropicWalk(sink)
    if body is not None:
        _an_request(body, messages, walk, sink)
    if messages is None:
        if body is None:
            sink.add("messages", "AN-SCHEMA", "messages: Input should be a valid list")
        return
    if not messages:  # reported by clients: langchain-ai/langchain#31657, Helicone/helicone#5257
        sink.add("messages", "AN-SCHEMA", "messages: at least one message is required")
    last = len(messages) - 1
    for i, msg in enumerate(messages):
        _an_message(i, msg, i == last, walk, sink)
    if body is not None and "cache_control" in body:
        walk.cache_control("", body["cache_control"])
    if walk.marks > 4:
        sink.add("messages", "AN-CACHE-MAX4",
                 f"A maximum of 4 blocks with cache_control may be provided. Found {walk.marks}.")
    _anthropic_pairing(messages, sink)
    _anthropic_dup_ids(messages, sink)
    _thinking_final_turn(doc, messages, sink, reference)
    if reference is not None:
        _thinking_reference(doc, messages, sink, reference)


def _an_request(body: dict, messages: list | None, walk: _AnthropicWalk, sink: _Sink) -> None:
    """The request's own keys: parameters, the cache breakpoints of its tools, its system."""
    for key in body:
        if key in params.ANTHROPIC_BETA:
            sink.add(str(key), "AN-SCHEMA", f"{key}: Extra inputs are not permitted "
                     "(a beta parameter: accepted with its anthropic-beta header)", RISK)
        elif key not in ANTHROPIC_REQUEST_PARAMS:
            sink.add(str(key), "AN-SCHEMA", f"{key}: Extra inputs are not permitted")
    for key in ("max_tokens", "model"):
        if key not in body:
            sink.add(key, "AN-MISSING-PARAM", f"{key}: Field required")
    tools = body.get("tools")
    if isinstance(tools, list):
        for k, tool in enumerate(tools):
            if isinstance(tool, dict) and "cache_control" in tool:
                walk.cache_control(f"tools[{k}]", tool["cache_control"])
    system = body.get("system")
    if isinstance(system, list):
        for k, block in enumerate(system):
            walk.block(f"system[{k}]", block, ("text",))
    elif system is not None and not isinstance(system, str):
        sink.add("system", "AN-SCHEMA", "system: Input should be a valid string or list")
    if "messages" not in body:
        sink.add("messages", "AN-SCHEMA", "messages: Field required")
    elif messages is None:
        sink.add("messages", "AN-SCHEMA", "messages: Input should be a valid list")


def _an_message(i: int, msg: Any, last: bool, walk: _AnthropicWalk, sink: _Sink) -> None:
    """One message: an object of role and content only, a role the API takes, content that is
    not empty (bar a final assistant message's), its blocks."""
    path = f"messages[{i}]"
    if not isinstance(msg, dict):
        sink.add(path, "AN-SCHEMA", f"messages.{i}: Input should be a valid dictionary")
        return
    role = msg.get("role")
    _an_role(i, msg, role, sink)
    if "content" not in msg:
        sink.add(path, "AN-SCHEMA", f"messages.{i}.content: Field required")
        return
    content = msg["content"]
    if content == "" or content == []:
        if not (last and role == "assistant"):
            sink.add(f"{path}.content", "AN-EMPTY-CONTENT",
                     f"messages.{i}: all messages must have non-empty content except for the "
                     "optional final assistant message")
    elif isinstance(content, str):
        if not content.strip():
            sink.add(f"{path}.content", "AN-WHITESPACE-TEXT",
                     "messages: text content blocks must contain non-whitespace text")
    elif not isinstance(content, list):
        sink.add(f"{path}.content", "AN-SCHEMA",
                 f"messages.{i}.content: Input should be a valid string or list")
    elif _an_blocks(i, role, content, walk, sink) and role == "assistant":
        _an_thinking_order(i, content, sink)


def _an_role(i: int, msg: dict, role: Any, sink: _Sink) -> None:
    """No key but role and content; a role of user or assistant, the first one user."""
    path = f"messages[{i}]"
    for key in msg:
        if key not in ("role", "content"):
            sink.add(path, "AN-SCHEMA", f"messages.{i}.{key}: Extra inputs are not permitted")
    if role == "system":
        sink.add(f"{path}.role", "AN-ROLE-SYSTEM",
                 'messages: Unexpected role "system". The Messages API accepts a top-level '
                 '`system` parameter, not "system" as an input message role.')
    elif role not in ("user", "assistant"):
        if "role" not in msg:
            sink.add(f"{path}.role", "AN-SCHEMA", f"messages.{i}.role: Field required")
        else:
            sink.add(f"{path}.role", "AN-SCHEMA",
                     f"messages.{i}.role: Input should be 'user' or 'assistant'")
    if i == 0 and role != "user":
        sink.add(f"{path}.role", "AN-FIRST-USER", 'messages: first message must use the "user" role')


def _an_blocks(i: int, role: Any, content: list, walk: _AnthropicWalk, sink: _Sink) -> bool:
    """A message's blocks, each where its role may hold it; whether one is a thinking block."""
    has_thinking = False
    for j, block in enumerate(content):
        bpath = f"messages[{i}].content[{j}]"
        kind = walk.block(bpath, block)
        if kind in _THINKING:
            has_thinking = True
        if kind == "compaction" and role != "assistant":
            sink.add(bpath, "AN-COMPACTION", f"messages.{i}.content.{j}: a `compaction` block "
                     "is only accepted in an `assistant` message")
        if (role == "user" and kind in ("tool_use", "thinking", "redacted_thinking")) \
                or (role == "assistant" and kind == "tool_result"):
            sink.add(bpath, "AN-BLOCK-ROLE",
                     f"messages.{i}.content.{j}: a `{kind}` block in a `{role}` message")
    return has_thinking


def _an_thinking_order(i: int, content: list, sink: _Sink) -> None:
    """An assistant message with thinking starts with a thinking block and does not end with one."""
    first, final = content[0], content[-1]
    first_kind = first.get("type") if isinstance(first, dict) else None
    if first_kind not in _THINKING:
        sink.add(f"messages[{i}].content[0]", "AN-THINK-FIRST",
                 f"messages.{i}.content.0: If an assistant message contains any thinking "
                 "blocks, the first block must be thinking or redacted_thinking. Found "
                 f"{_show_id(first_kind)}.")
    if isinstance(final, dict) and final.get("type") in _THINKING:
        sink.add(f"messages[{i}].content[{len(content) - 1}]", "AN-THINK-LAST",
                 f"messages.{i}: The final block in an assistant message cannot be `thinking`.")


def _turns(messages: list) -> list[tuple[Any, list[int]]]:
    """Consecutive same-role messages as one turn: ``(role, [message indexes])``."""
    turns: list[tuple[Any, list[int]]] = []
    for i, msg in enumerate(messages):
        role = msg.get("role") if isinstance(msg, dict) else None
        if turns and turns[-1][0] == role and role is not None:
            turns[-1][1].append(i)
        else:
            turns.append((role, [i]))
    return turns


def _blocks(messages: list, indexes: list[int], *, texts: bool = False):
    """``(message index, block index, block)`` of the dict blocks of these messages; with
    ``texts``, ``(i, None, None)`` for a message whose content is a non-empty string too (in the
    turn the API joins, it is a text block where it stands)."""
    for i in indexes:
        msg = messages[i]
        content = msg.get("content") if isinstance(msg, dict) else None
        if texts and isinstance(content, str) and content:
            yield i, None, None
        elif isinstance(content, list):
            for j, block in enumerate(content):
                if isinstance(block, dict):
                    yield i, j, block


def _anthropic_pairing(messages: list, sink: _Sink) -> None:
    """AN-TOOL-UNANSWERED / -RESULT-FIRST / -ORPHAN on merged turns."""
    uses: dict = {}  # id key -> (message index, id) of the previous assistant turn's tool_use
    for role, indexes in _turns(messages):
        if role == "user":
            answered: set = set()
            leading = True  # still in the leading run of tool_result blocks
            late = False
            for i, j, block in _blocks(messages, indexes, texts=True):
                if block is None or block.get("type") != "tool_result":
                    leading = False
                    continue
                key = id_key(block.get("tool_use_id"))
                if key not in uses:
                    sink.add(f"messages[{i}].content[{j}]", "AN-TOOL-ORPHAN",
                             f"messages.{i}.content.{j}: unexpected `tool_use_id` found in "
                             f"`tool_result` blocks: {_show_id(block.get('tool_use_id'))}. Each "
                             "`tool_result` block must have a corresponding `tool_use` block in the "
                             "previous message.")
                    continue
                answered.add(key)
                late = late or not leading
            if uses:
                _unanswered(uses, answered, sink)
                if late:
                    first = indexes[0]
                    sink.add(f"messages[{first}]", "AN-TOOL-RESULT-FIRST",
                             f"messages.{first}: Did not find {len(uses)} tool_result block(s) at the "
                             "beginning of this message. Messages following tool_use blocks must "
                             "begin with a matching number of tool_result blocks.")
            uses = {}
            continue
        if uses:
            _unanswered(uses, set(), sink)
        uses = {}
        if role == "assistant":
            for i, _j, block in _blocks(messages, indexes):
                if block.get("type") == "tool_use":
                    uses.setdefault(id_key(block.get("id")), (i, block.get("id")))
    if uses:
        _unanswered(uses, set(), sink)


def _unanswered(uses: dict, answered: set, sink: _Sink) -> None:
    missing = [(i, cid) for key, (i, cid) in uses.items() if key not in answered]
    if missing:
        i = missing[0][0]
        sink.add(f"messages[{i}]", "AN-TOOL-UNANSWERED",
                 f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately "
                 f"after: {', '.join(_show_id(c) for _, c in missing)}. Each `tool_use` block must "
                 "have a corresponding `tool_result` block in the next message.")


def _anthropic_dup_ids(messages: list, sink: _Sink) -> None:
    seen: set = set()
    for i, msg in enumerate(messages):
        content = msg.get("content") if isinstance(msg, dict) else None
        if not isinstance(content, list):
            continue
        for j, block in enumerate(content):
            if isinstance(block, dict) and block.get("type") == "tool_use":
                key = id_key(block.get("id"))
                if key in seen:
                    sink.add(f"messages[{i}].content[{j}]", "AN-TOOL-DUP-ID",
                             f"messages.{i}.content.{j}: `tool_use` ids must be unique")
                seen.add(key)


# --- thinking -----------------------------------------------------------------------------

def _thinking_on(doc: Any, reference: Any) -> bool:
    thinking = doc.get("thinking") if isinstance(doc, dict) else None
    if isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive"):
        return True
    if reference is None:
        return False
    ref_messages, _ = _messages(reference)
    return any(block.get("type") in _THINKING
               for _i, _j, block in _blocks(ref_messages or [], range(len(ref_messages or []))))


def _thinking_final_turn(doc: Any, messages: list, sink: _Sink, reference: Any) -> None:
    """With thinking on, a request ending inside a tool loop: the loop's assistant message must
    start with a thinking block."""
    turns = _turns(messages)
    if len(turns) < 2 or turns[-1][0] != "user" or turns[-2][0] != "assistant":
        return
    if not any(b.get("type") == "tool_result" for _i, _j, b in _blocks(messages, turns[-1][1])):
        return
    if not _thinking_on(doc, reference):
        return
    i = turns[-2][1][0]
    content = messages[i].get("content")
    first = content[0] if isinstance(content, list) and content else None
    kind = first.get("type") if isinstance(first, dict) else ("text" if isinstance(content, str) else None)
    if kind not in _THINKING:
        sink.add(f"messages[{i}].content[0]", "AN-THINK-FINAL-TURN",
                 f"messages.{i}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
                 f"`{_show_id(kind)}`. When `thinking` is enabled, a final `assistant` message must "
                 "start with a thinking block (preceeding the lastmost set of `tool_use` and "
                 "`tool_result` blocks).")


def _thinking_key(block: dict) -> Any:
    if block.get("type") == "thinking":
        return ("thinking", id_key(block.get("thinking")), id_key(block.get("signature")))
    return ("redacted", id_key(block.get("data")))


def _without_cache(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_cache(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_cache(v) for v in value]
    return value


def _as_blocks(content: Any) -> Any:
    """String content as the one text block it stands for."""
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def _prefix_digests(system: Any, messages: list) -> list[bytes]:
    """``digests[k]``: a digest of system + messages[:k], cache_control ignored and string
    content taken as its text block. Compared only with each other, in this process: any
    canonical form does (sorted keys, the stdlib's encoder: no orjson import)."""
    import hashlib

    from hermesctx.jsonio import dumps_like_json

    def canonical(value: Any) -> bytes:
        return dumps_like_json(value, ensure_ascii=False, separators=(",", ":"),
                               sort_keys=True).encode("utf-8", "surrogatepass")

    h = hashlib.sha256(canonical(_without_cache(_as_blocks(system))))
    out = [h.digest()]
    for msg in messages:
        if isinstance(msg, dict) and isinstance(msg.get("content"), str):
            msg = {**msg, "content": _as_blocks(msg["content"])}
        h.update(b"\n" + canonical(_without_cache(msg)))
        out.append(h.digest())
    return out


def _thinking_blocks(value: Any, found: dict) -> None:
    """Every thinking / redacted_thinking block anywhere in ``value`` (a session log's events
    included), keyed by :func:`_thinking_key` (index -1: no position)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if item.get("type") in _THINKING:
                found.setdefault(_thinking_key(item), -1)
            stack.extend(v for v in item.values() if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            stack.extend(v for v in item if isinstance(v, (dict, list)))


def _thinking_reference(doc: Any, messages: list, sink: _Sink, reference: Any) -> None:
    """AN-THINK-MODIFIED (every thinking block occurs unchanged in the reference, which may be
    any input: a body, a batch line, a session log's events) and AN-THINK-PREFIX (a kept signed
    block has the prefix it had in an Anthropic reference body)."""
    ref_messages, ref_body = _messages(reference)
    is_body = ref_messages is not None and (ref_body is not None or all(
        isinstance(m, dict) and "role" in m for m in ref_messages))
    where: dict = {}
    if is_body:
        for i, _j, block in _blocks(ref_messages, range(len(ref_messages))):
            if block.get("type") in _THINKING:
                where.setdefault(_thinking_key(block), i)
    else:
        _thinking_blocks(reference, where)
    found: list[tuple[int, int]] = []
    for i, j, block in _blocks(messages, range(len(messages))):
        if block.get("type") not in _THINKING:
            continue
        key = _thinking_key(block)
        if key not in where:
            sink.add(f"messages[{i}].content[{j}]", "AN-THINK-MODIFIED",
                     f"messages.{i}.content.{j}: Invalid `signature` in `thinking` block")
        elif where[key] >= 0:
            found.append((i, where[key]))
    if not found or target_of(reference) != ANTHROPIC:
        return
    try:
        ours = _prefix_digests(doc.get("system") if isinstance(doc, dict) else None, messages)
        theirs = _prefix_digests(ref_body.get("system") if ref_body else None, ref_messages)
    except (TypeError, ValueError, RecursionError):  # a value JSON cannot write: no prefix to compare
        return
    flagged: set = set()
    for i, r in found:
        if ours[i] != theirs[r] and i not in flagged:
            flagged.add(i)
            j = next(j for j, b in enumerate(messages[i]["content"])
                     if isinstance(b, dict) and b.get("type") in _THINKING)
            sink.add(f"messages[{i}].content[{j}]", "AN-THINK-PREFIX",
                     f"messages.{i}.content.{j}: Invalid `signature` in `thinking` block. The block "
                     "is bound to a different conversation. Remove the block, or set "
                     "`thinking.block_binding.prefix_mismatch_behavior` to \"drop_block\".")
