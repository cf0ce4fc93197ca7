"""Anthropic Messages bodies <-> OpenAI chat messages (the canonical form inside hermesctx).

Both directions copy only what they rebuild; the input is never mutated. What the target cannot
hold is counted in ``lost`` (a dict ``what -> count``) so the caller can report it.
"""

from __future__ import annotations

from itertools import chain

from hermesctx.errors import InputError
from hermesctx.formats import params
from hermesctx.formats._common import AS_TEXT, bump, refuse_opaque, server_side_item, server_side_text
from hermesctx.jsonio import dumps_like_json, loads_like_json
from hermesctx.messages import check_convertible
from hermesctx.messages import detect_format as _chat_format

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

NAME = "anthropic"
PLAIN = True  # commands work on the body as it is
LOG = False  # a document, not a session log

_DATA_URL = "data:"


def detect(value: Any) -> bool:
    """An Anthropic Messages body or message list (by its blocks and request keys)."""
    return _chat_format(value) == NAME


def dumps_args(value: Any) -> str:
    return dumps_like_json(value, ensure_ascii=False)


def loads_args(text: Any, lost: dict) -> Any:
    if not isinstance(text, str):
        return text if isinstance(text, dict) else {}
    if not text.strip():
        return {}
    try:
        value = loads_like_json(text)
    except ValueError:
        bump(lost, "tool call arguments that are not JSON (kept under _raw)")
        return {"_raw": text}
    return value if isinstance(value, dict) else {"_value": value}


SERVER_BLOCKS = ("server_tool_use", "mcp_tool_use", "mcp_tool_result")  # a tuple: a type may be unhashable


def is_server_block(kind: Any) -> bool:
    """A block the API ran itself (``server_tool_use``, ``web_search_tool_result``,
    ``mcp_tool_use``, ...): kept as text in OpenAI output, never as a call."""
    return kind in SERVER_BLOCKS or isinstance(kind, str) and kind.endswith("_tool_result") \
        and kind != "tool_result"


# --- parts ---------------------------------------------------------------------------------

def image_to_openai(block: dict) -> dict:
    source = block.get("source") or {}
    if source.get("type") == "base64":
        url = f"data:{source.get('media_type', 'image/png')};base64,{source.get('data', '')}"
    else:
        url = source.get("url", "")
    return {"type": "image_url", "image_url": {"url": url}}


def image_to_anthropic(part: dict) -> dict:
    image = part.get("image_url")
    url = image.get("url", "") if isinstance(image, dict) else str(image or "")
    if url.startswith(_DATA_URL) and ";base64," in url:
        head, data = url[len(_DATA_URL):].split(";base64,", 1)
        return {"type": "image", "source": {"type": "base64", "media_type": head, "data": data}}
    return {"type": "image", "source": {"type": "url", "url": url}}


def parts_to_openai(blocks: Any, lost: dict) -> Any:
    """Anthropic text/image blocks -> OpenAI content parts (strings stay strings)."""
    if not isinstance(blocks, list):
        return blocks
    out = []
    for block in blocks:
        if not isinstance(block, dict):
            out.append(block)
            continue
        kind = block.get("type")
        if kind == "text":
            part = {"type": "text", "text": block.get("text", "")}
            if "cache_control" in block:
                part["cache_control"] = block["cache_control"]
            out.append(part)
        elif kind == "image":
            out.append(image_to_openai(block))
        else:
            bump(lost, f"{kind} blocks")
            text = block.get("text") or block.get("content")
            if isinstance(text, str) and text:
                out.append({"type": "text", "text": text})
    return out


def parts_to_anthropic(parts: Any, lost: dict) -> Any:
    if not isinstance(parts, list):
        return parts
    out = []
    for part in parts:
        if isinstance(part, str):
            out.append({"type": "text", "text": part})
        elif not isinstance(part, dict):
            continue
        elif part.get("type") in ("text", "input_text", "output_text"):
            block = {"type": "text", "text": part.get("text", "")}
            if "cache_control" in part:
                block["cache_control"] = part["cache_control"]
            out.append(block)
        elif part.get("type") in ("image_url", "input_image"):
            out.append(image_to_anthropic(part))
        else:
            bump(lost, f"{part.get('type')} content parts")
    return out


# --- anthropic -> openai -------------------------------------------------------------------

def system_to_openai(system: Any, lost: dict) -> dict | None:
    if system is None or system == "" or system == []:
        return None
    return {"role": "system", "content": parts_to_openai(system, lost)}


def message_to_openai(msg: dict, lost: dict) -> list[dict]:
    """One Anthropic message -> one or more OpenAI messages (tool results become tool messages)."""
    role = msg.get("role")
    content = msg.get("content")
    if not isinstance(content, list):
        return [{"role": role, "content": content}]
    if role == "assistant":
        texts, calls, reasoning, signed = [], [], [], []
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind in ("text", "thinking") and not isinstance(block.get(kind, ""), str):
                raise InputError(f"a {kind} block's {kind} is not a string")
            if kind == "text":
                texts.append(block.get("text", ""))
            elif kind == "tool_use":
                calls.append({"id": block.get("id", ""), "type": "function",
                              "function": {"name": block.get("name", ""),
                                           "arguments": dumps_args(block.get("input", {}))}})
            elif kind == "thinking":
                reasoning.append(block.get("thinking", ""))
                if block.get("signature"):  # kept verbatim for an Anthropic writer (as Hermes does)
                    signed.append({"type": "thinking", "thinking": block.get("thinking", ""),
                                   "signature": block["signature"]})
            elif kind == "redacted_thinking":
                if block.get("data"):
                    signed.append({"type": "redacted_thinking", "data": block["data"]})
                else:
                    bump(lost, "redacted thinking blocks")
            elif is_server_block(kind):
                texts.append(server_side_text(block))
                bump(lost, "server-side tool blocks" + AS_TEXT)
            elif kind == "compaction":
                refuse_opaque("an Anthropic compaction block (server-side compaction: the API "
                              "drops every block before it)")
                bump(lost, "Anthropic compaction blocks")
            else:
                bump(lost, f"{kind} blocks")
        out: dict = {"role": "assistant",
                     "content": "\n".join(texts) if len(texts) != 0 else (None if calls else "")}
        if len(texts) > 1:
            out["content"] = [{"type": "text", "text": t} for t in texts]
        if reasoning:
            out["reasoning"] = "\n".join(reasoning)
        if signed:
            out["reasoning_details"] = signed
        if calls:
            out["tool_calls"] = calls
        return [out]
    messages: list[dict] = []
    rest: list = []
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool_result":
            result = block.get("content", "")
            tool = {"role": "tool", "tool_call_id": block.get("tool_use_id", ""),
                    "content": parts_to_openai(result, lost) if isinstance(result, list) else result}
            if block.get("is_error"):
                bump(lost, "tool result is_error flags")
            messages.append(tool)
        else:
            rest.append(block)
    if rest:
        messages.append({"role": role, "content": parts_to_openai(rest, lost)})
    return messages


def read(doc: Any, lost: dict) -> Any:
    """An Anthropic body ``{system?, messages, tools?, ...}`` -> ``{messages, tools?, ...}``
    (OpenAI chat); a bare list of its messages -> a list of OpenAI messages."""
    if isinstance(doc, list):
        return read({"messages": doc}, lost)["messages"]
    out: dict = {}
    messages: list[dict] = []
    system = system_to_openai(doc.get("system"), lost)
    if system:
        messages.append(system)
    for msg in doc.get("messages") or []:
        if isinstance(msg, dict):
            messages.extend(message_to_openai(msg, lost))
    out["messages"] = messages
    out.update(params.to_openai(doc, lost))
    return out


# --- openai -> anthropic -------------------------------------------------------------------

def write(doc: Any, lost: dict, *, leading: bool = True) -> dict:
    """``{messages, tools?, ...}`` or a list of messages (OpenAI) -> an Anthropic body. System
    messages before the first other message become ``system`` (none when ``leading`` is false:
    a later part of a transcript written piece by piece)."""
    if isinstance(doc, list):
        doc = {"messages": doc}
    messages = params.legacy_functions(doc.get("messages") or [], lost)
    system_parts: list = []
    out_msgs: list[dict] = []
    pending_results: list[dict] = []

    def flush() -> None:
        if pending_results:
            out_msgs.append({"role": "user", "content": list(pending_results)})
            pending_results.clear()

    for i, msg in enumerate(messages):
        if not isinstance(msg, dict):
            continue
        check_convertible(msg, f"messages[{i}]")
        role = msg.get("role")
        if role == "developer":  # OpenAI's system role for reasoning models
            role = "system"
        content = msg.get("content")
        extra = set(msg) - {"role", "content", "tool_calls", "tool_call_id", "reasoning",
                            "reasoning_content", "reasoning_details"}
        for key in sorted(extra):
            bump(lost, f"message key {key!r}")
        if role == "system" and leading:
            system_parts.append(content)
            continue
        leading = False
        if role == "tool":
            result: dict = {"type": "tool_result", "tool_use_id": msg.get("tool_call_id", "")}
            result["content"] = (parts_to_anthropic(content, lost) if isinstance(content, list)
                                 else content if content is not None else "")
            pending_results.append(result)
            continue
        flush()
        if role == "system":
            bump(lost, "system messages after the first turn (sent as user text)")
            role = "user"
        if role == "assistant":
            blocks: list = _signed_thinking(msg.get("reasoning_details"))
            reasoning = msg.get("reasoning") or msg.get("reasoning_content")
            if not blocks and isinstance(reasoning, str) and reasoning:
                # unsigned: the send path drops it (and counts it); the API would reject it
                blocks.append({"type": "thinking", "thinking": reasoning})
            calls = msg.get("tool_calls") or []
            server = server_side_item(content)
            if server is not None and is_server_block(server["type"]):
                blocks.append(server)
            elif isinstance(content, list):
                blocks.extend(_server_blocks(parts_to_anthropic(content, lost)))
            elif isinstance(content, str) and (content or not calls) and (calls or blocks):
                blocks.append({"type": "text", "text": content})
            for call in calls if isinstance(calls, list) else ():
                if not isinstance(call, dict):
                    bump(lost, "tool calls that are not objects")
                    continue
                fn = call.get("function")
                fn = fn if isinstance(fn, dict) else {}
                blocks.append({"type": "tool_use", "id": call.get("id", ""),
                               "name": fn.get("name", ""),
                               "input": loads_args(fn.get("arguments"), lost)})
            if not blocks:
                out_msgs.append({"role": "assistant", "content": content if content is not None else ""})
            else:
                out_msgs.append({"role": "assistant", "content": blocks})
            continue
        out_msgs.append({"role": role, "content": parts_to_anthropic(content, lost)
                         if isinstance(content, list) else content})
    flush()
    out: dict = {}
    if system_parts:
        out["system"] = join_system(system_parts, lost)
    out["messages"] = out_msgs
    out.update(params.to_anthropic(doc, lost))
    return out


def _server_blocks(blocks: list) -> list:
    """``blocks`` with each text block that holds a server-side tool block as text (the way
    :func:`message_to_openai` keeps it in OpenAI chat) turned back into that block, so an
    Anthropic body survives a round trip through OpenAI chat. The same list when there is none."""
    out = None
    for i, block in enumerate(blocks):
        if isinstance(block, dict) and block.get("type") == "text" and set(block) == {"type", "text"}:
            server = server_side_item(block["text"])
            if server is not None and is_server_block(server["type"]):
                if out is None:
                    out = list(blocks)
                out[i] = server
    return blocks if out is None else out


def _signed_thinking(details: Any) -> list:
    """The signed thinking blocks a reader kept (``reasoning_details``, as Hermes keeps them),
    verbatim and in their order."""
    if not isinstance(details, list):
        return []
    return [dict(d) for d in details if isinstance(d, dict)
            and ((d.get("type") == "thinking" and d.get("signature"))
                 or (d.get("type") == "redacted_thinking" and d.get("data")))]


def join_system(parts: list, lost: dict) -> Any:
    """Leading system messages' contents as one ``system`` value."""
    if len(parts) == 1:
        only = parts[0]
        return parts_to_anthropic(only, lost) if isinstance(only, list) else only
    blocks: list = []
    for part in parts:
        if isinstance(part, list):
            blocks.extend(parts_to_anthropic(part, lost))
        elif part:
            blocks.append({"type": "text", "text": part})
    return blocks


def stream(chunks: Iterator[list[dict]], lost: dict, wire: dict) -> tuple[dict, str, Iterator, Any]:
    """The streaming face of :func:`write` (see :func:`hermesctx.formats._logs.write_stream`):
    the leading system messages are read first, as they become ``system``."""
    from hermesctx.wire import send

    pending: list[list[dict]] = []
    parts: list = []
    for chunk in chunks:
        if chunk[0].get("role") != "system":
            pending.append(chunk)
            break
        parts.append(chunk[0].get("content"))
        if len(chunk) > 1:  # tool results right after a system message
            pending.append(chunk[1:])
            break
    state = send.AnthropicState()
    system = send.anthropic_system(join_system(parts, lost), state, wire) if parts else None
    head = {} if system is None else {"system": system}

    def convert(chunk: list[dict]) -> list:
        return write(chunk, lost, leading=False)["messages"]

    items = send.anthropic_messages(
        (item for chunk in chain(pending, chunks) for item in convert(chunk)), wire, state)
    return head, "messages", items, send.ANTHROPIC_REQUEST_KEYS
