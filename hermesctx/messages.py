"""Helpers on message dicts: where the messages of a document are, which format they are in,
the text of a content, and the tool calls / tool results a message carries.

Two wire formats are understood everywhere:

* ``openai``: chat messages; assistant ``tool_calls`` (``id``/``call_id``,
  ``function.name``/``function.arguments``) answered by ``role: "tool"`` messages with
  ``tool_call_id``. Content is a string, ``None`` or a list of parts.
* ``anthropic``: a body with top-level ``system``; content blocks ``text``, ``tool_use``
  (``id``, ``name``, ``input``), ``tool_result`` (``tool_use_id``, ``content``), ``thinking``,
  ``image``. Tool results travel inside ``user`` messages.

Nothing here mutates its arguments.
"""

from __future__ import annotations

from contextvars import ContextVar

from hermesctx.errors import InputError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

OPENAI = "openai"
ANTHROPIC = "anthropic"

IMAGE_PART_TYPES = frozenset({"image", "image_url", "input_image"})
# content blocks no OpenAI message has (server-side tool blocks too: a body whose only
# Anthropic blocks are a web search's is still an Anthropic body)
_ANTHROPIC_ONLY_BLOCKS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking",
                                    "server_tool_use", "mcp_tool_use", "mcp_tool_result",
                                    "web_search_tool_result", "web_fetch_tool_result",
                                    "code_execution_tool_result"})


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "a number", float: "a number", str: "a string",
            list: "an array", dict: "an object"}.get(type(value), type(value).__name__)


def messages_of(doc: Any) -> list:
    """The message list of a document (an array, or an object with a ``messages`` array)."""
    if isinstance(doc, list):
        return doc
    if isinstance(doc, dict):
        if "messages" not in doc:
            keys = ", ".join(list(doc)[:8]) or "none"
            raise InputError(
                f'expected a JSON array of messages or an object with a "messages" array; '
                f"got an object with keys: {keys}"
            )
        messages = doc["messages"]
        if not isinstance(messages, list):
            raise InputError(f"messages: expected an array, got {type_name(messages)}")
        return messages
    raise InputError(
        f"expected a JSON array of messages or a request object, got {type_name(doc)}"
    )


def with_messages(doc: Any, messages: list) -> Any:
    """A new document like ``doc`` whose messages are ``messages`` (other keys kept, in order)."""
    if isinstance(doc, list):
        return messages
    out = dict(doc)
    out["messages"] = messages
    return out


# --- strict input (what Hermes would misread is an error) ---------------------------------------------------------------------

_LENIENT: ContextVar[bool] = ContextVar("hermesctx_lenient", default=False)


def is_lenient() -> bool:
    """Whether input is read as Hermes reads it (``--lenient``) rather than strictly (default)."""
    return _LENIENT.get()


class lenient_input:
    """``with lenient_input():`` within the block, :func:`check_messages`, format detection and
    usage counts accept what Hermes accepts (the library equivalent of ``--lenient``)."""

    def __init__(self, on: bool = True):
        self.on = on
        self.token: Any = None

    def __enter__(self) -> None:
        self.token = _LENIENT.set(self.on)

    def __exit__(self, *exc: Any) -> None:
        _LENIENT.reset(self.token)


def set_lenient(on: bool) -> Callable[[], None]:
    """Switch lenient input on or off until the returned function is called (the CLI flag)."""
    token = _LENIENT.set(on)
    return lambda: _LENIENT.reset(token)


def role_problem(msg: dict) -> str | None:
    """Why a message object's ``role`` is one no provider API accepts, or None: missing, null
    or empty (``message without a role``), or not a string."""
    role = msg.get("role")
    if role.__class__ is str and role:
        return None
    if role is None:
        return "message without a role"
    if role == "":
        return "message with an empty role"
    return f"role must be a string, got {type_name(role)}"


def shape_problem(msg: dict) -> str | None:
    """Why a message's ``content`` or ``tool_calls`` is of a shape no provider API accepts, or
    None: content a string, a list (of parts), Hermes's own ``_multimodal`` tool result object,
    or null/absent; tool_calls a list (or
    null/absent). Hermes reads any value (``len()`` of a number crashes it, an object counts
    its keys), so it is refused unless ``--lenient``."""
    content = msg.get("content")
    kind = content.__class__
    if kind is not str and content is not None:
        if kind is not list and not isinstance(content, list) and not (kind is dict and content.get("_multimodal")):
            return f"content must be a string or a list of parts, got {type_name(content)}"
    calls = msg.get("tool_calls")
    if calls is not None and not isinstance(calls, list):
        return f"tool_calls must be a list, got {type_name(calls)}"
    return None


def has_role(msg: dict) -> bool | None:
    """True for a string role, False for a message without one (missing, null, empty), None
    for a role that is not a string."""
    role = msg.get("role")
    if role.__class__ is str:
        return bool(role)
    return False if role is None else None


def check_messages(messages: list, *, require_tool_ids: bool = False,
                   lenient: bool | None = None) -> None:
    """Reject what no stage can work on: a message that is not an object (Hermes crashes on
    it). Strict input (the default) also rejects a message without a string ``role``;
    ``lenient`` (default: :func:`is_lenient`) lets it through as Hermes does.

    With ``require_tool_ids`` a ``tool`` message must also carry a ``tool_call_id`` (commands
    that repair pairs accept it and treat it as Hermes does).
    """
    strict = not (is_lenient() if lenient is None else lenient)
    for i, msg in enumerate(messages):
        if msg.__class__ is not dict and not isinstance(msg, dict):
            raise InputError(f"expected a message object, got {type_name(msg)}",
                             where=f"messages[{i}]")
        role = msg.get("role")
        if strict:
            if role.__class__ is not str or not role:
                raise InputError(str(role_problem(msg)), where=f"messages[{i}]", hint=_LENIENT_HINT)
            problem = shape_problem(msg)
            if problem is not None:
                raise InputError(problem, where=f"messages[{i}]", hint=_LENIENT_HINT)
        if require_tool_ids and role == "tool" and not msg.get("tool_call_id"):
            raise InputError("tool message without tool_call_id", where=f"messages[{i}]",
                             hint="`hermesctx sanitize` repairs orphaned tool messages")


_LENIENT_HINT = "no provider API accepts it (--lenient reads it as Hermes does)"


def check_strict(messages: list) -> None:
    """:func:`check_messages` when input is strict; nothing under ``--lenient`` (for commands
    that, like Hermes, measure any list: ``estimate``)."""
    if not is_lenient():
        check_messages(messages, lenient=False)


def check_convertible(msg: dict, where: str, target: str | None = None) -> None:
    """A message's role, tool calls and result id in the shape every writer reads (no API
    accepts another), else exit 3 naming where: a string ``role`` and ``tool_call_id``;
    ``tool_calls`` an array of objects with a string ``id`` and a ``function`` object whose
    ``name`` and ``arguments`` are strings. Checked before a converter hashes or calls into them."""
    def bad(what: str, value: Any, at: str) -> InputError:
        written = f": it cannot be written as {target}" if target else ""
        return InputError(f"{what}, got {type_name(value)}{written}", where=at)

    for key in ("role", "tool_call_id"):
        if msg.get(key) is not None and not isinstance(msg[key], str):
            raise bad(f"{key} must be a string", msg[key], where)
    calls = msg.get("tool_calls")
    if not calls:
        return
    if not isinstance(calls, list):
        raise bad("tool_calls must be an array", calls, f"{where}.tool_calls")
    for j, call in enumerate(calls):
        at = f"{where}.tool_calls[{j}]"
        if not isinstance(call, dict):
            raise bad("a tool call must be an object", call, at)
        if call.get("id") is not None and not isinstance(call["id"], str):
            raise bad("a tool call id must be a string", call["id"], f"{at}.id")
        fn = call.get("function")
        if fn is None:
            continue
        if not isinstance(fn, dict):
            raise bad("function must be an object", fn, f"{at}.function")
        for key in ("name", "arguments"):
            if fn.get(key) is not None and not isinstance(fn[key], str):
                raise bad(f"function.{key} must be a string", fn[key], f"{at}.function.{key}")


# request keys only the Messages API has (``thinking``/``top_k`` are left out: OpenAI-compatible
# servers take them too)
_ANTHROPIC_KEYS = ("system", "mcp_servers", "stop_sequences", "anthropic_version")


def _anthropic_tools(tools: Any) -> bool:
    """Tool definitions in Anthropic's shape: ``input_schema``, or a ``name`` at the top with
    no ``function`` (a server tool such as ``{"type": "web_search_20250305", "name": ...}``)."""
    if not isinstance(tools, list):
        return False
    for tool in tools[:1]:
        if isinstance(tool, dict):
            return "input_schema" in tool or ("name" in tool and "function" not in tool
                                               and "custom" not in tool and "parameters" not in tool)
    return False


def anthropic_body(doc: Any) -> bool:
    """Whether the top level alone says Anthropic: a key only the Messages API has
    (``system``, ``mcp_servers``, ...) or Anthropic tool definitions."""
    return isinstance(doc, dict) and (any(k in doc for k in _ANTHROPIC_KEYS)
                                      or _anthropic_tools(doc.get("tools")))


def detect_format(doc: Any) -> str:
    """``anthropic`` for a body with a top-level key only the Messages API has (``system``,
    ``mcp_servers``, ...), Anthropic tool definitions or any Anthropic-only content block,
    else ``openai``."""
    if anthropic_body(doc):
        return ANTHROPIC
    messages = doc.get("messages") if isinstance(doc, dict) else doc
    if isinstance(messages, list):
        for msg in messages:
            if not isinstance(msg, dict):
                continue
            if msg.get("role") == "tool" or msg.get("tool_calls"):
                return OPENAI
            content = msg.get("content")
            if isinstance(content, list):
                for block in content:
                    if part_type(block) in _ANTHROPIC_ONLY_BLOCKS:
                        return ANTHROPIC
    return OPENAI


# --- content -------------------------------------------------------------------------------

def part_type(part: Any) -> str | None:
    """The ``type`` of a content part, when the part is an object and its type a string (so it
    can be looked up in a set: a list or object ``type`` is no known type)."""
    kind = part.get("type") if isinstance(part, dict) else None
    return kind if isinstance(kind, str) else None


def content_text(content: Any) -> str:
    """The human-readable text of a content value in either format.

    Strings as they are; lists joined with newlines from text parts (``text``, ``input_text``,
    ``output_text``), ``thinking`` blocks, ``tool_result`` contents (recursively) and
    ``tool_use`` blocks as ``name(input-json)``; images contribute nothing.
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        if content.get("_multimodal"):
            return str(content.get("text_summary") or "")
        return _part_text(content)
    if isinstance(content, list):
        pieces = []
        for part in content:
            text = part if isinstance(part, str) else _part_text(part) if isinstance(part, dict) else ""
            if text:
                pieces.append(text)
        return "\n".join(pieces)
    return str(content)


def _part_text(part: dict) -> str:
    kind = part_type(part)
    if kind in IMAGE_PART_TYPES:
        return ""
    if kind == "tool_result":
        return content_text(part.get("content"))
    if kind == "tool_use":
        from hermesctx.jsonio import dumps_like_json

        return f"{part.get('name', '')}({dumps_like_json(part.get('input', {}), ensure_ascii=False)})"
    if kind == "thinking":
        return str(part.get("thinking") or "")
    if kind == "compaction":  # an Anthropic compaction block: its summary is what the model reads
        content = part.get("content")
        return content if isinstance(content, str) else ""
    text = part.get("text")
    return text if isinstance(text, str) else ""


def opaque_compaction(part: Any) -> bool:
    """An OpenAI Responses ``compaction`` item (``encrypted_content``: only the Responses API
    reads it), as a Responses transcript carries it in the content of an assistant message of
    its own (:func:`hermesctx.formats.responses.compaction_message`)."""
    return isinstance(part, dict) and part.get("type") == "compaction" and "encrypted_content" in part


def last_compaction(messages: list) -> int:
    """The index of the last message holding a provider's compaction block (Anthropic's
    ``compaction``: the API drops every block before it; OpenAI's Responses ``compaction``
    item: what precedes it may be dropped), or -1. Stages that restructure a
    transcript leave it and what precedes it as they are."""
    for i in range(len(messages) - 1, -1, -1):
        msg = messages[i]
        content = msg.get("content") if isinstance(msg, dict) else None
        if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "compaction"
                                             for b in content):
            return i
    return -1


# --- tool calls and results ----------------------------------------------------------------

def call_id(tool_call: Any) -> str:
    """The id a result must carry to answer an OpenAI tool call: ``call_id`` or ``id`` (Hermes)."""
    if not isinstance(tool_call, dict):
        return ""
    return tool_call.get("call_id") or tool_call.get("id") or ""


def calls_of(msg: dict) -> list:
    """The ``tool_calls`` value as Python would iterate it (a list; a string or object gives its
    characters or keys, as in Hermes), or ``[]`` for null, a number or a boolean."""
    calls = msg.get("tool_calls")
    if isinstance(calls, list):
        return calls
    return list(calls) if isinstance(calls, (str, dict)) else []


def system_text(system: Any) -> str:
    """Text of an Anthropic top-level ``system`` (a string or a list of text blocks)."""
    return content_text(system)
