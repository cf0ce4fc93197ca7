"""OpenAI Responses API items -> OpenAI chat messages, and back (:func:`write`: what a command
writes for Responses input).

Items: ``message`` (``input_text``/``output_text`` parts), ``function_call`` /
``function_call_output`` paired by ``call_id``, ``custom_tool_call`` / ``custom_tool_call_output``,
``local_shell_call`` / ``local_shell_call_output``, ``reasoning`` (summary text kept as the next
assistant message's ``reasoning``; encrypted content reported). Consecutive function calls fold
into one assistant message, as parallel calls. A ``compaction`` item (opaque: only the Responses
API reads its ``encrypted_content``) is kept as it is, alone in the content of an assistant
message (:func:`compaction_message`), and written back byte for byte where it was. Items the API ran itself (``web_search_call``,
``mcp_call``, ``mcp_list_tools``, ...) open the text of the assistant's reply, as
``[server-side tool KIND] {...}`` (reported), never as calls the client would have to answer.
"""

from __future__ import annotations

from hermesctx.errors import InputError
from hermesctx.formats import params
from hermesctx.formats._common import AS_TEXT, bump, server_side_text
from hermesctx.jsonio import dumps_like_json
from hermesctx.messages import check_convertible, content_text, opaque_compaction, part_type

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

ITEM_TYPES = frozenset({"message", "function_call", "function_call_output", "reasoning",
                        "custom_tool_call", "custom_tool_call_output", "local_shell_call",
                        "local_shell_call_output", "web_search_call", "compaction",
                        "file_search_call", "computer_call", "computer_call_output", "mcp_call",
                        "item_reference", "image_generation_call", "code_interpreter_call",
                        "mcp_list_tools", "mcp_approval_request", "mcp_approval_response"})
_CALLS = ("function_call", "custom_tool_call", "local_shell_call", "computer_call")  # a tuple: unhashable input
# items the API ran itself: kept as text in the assistant's reply
SERVER_ITEMS = frozenset({"web_search_call", "mcp_call", "file_search_call", "mcp_list_tools",
                          "image_generation_call", "code_interpreter_call",
                          "mcp_approval_request", "mcp_approval_response"})
NAME = "responses"
PLAIN = False  # read as OpenAI chat
LOG = False  # a document, not a session log
TARGET = False  # written back for Responses input (:func:`write`), not offered by --to

_OUTPUTS = {"function_call_output", "custom_tool_call_output", "local_shell_call_output",
            "computer_call_output"}


_PART_TYPES = frozenset({"input_text", "output_text", "input_image", "input_file", "input_audio",
                         "refusal", "summary_text"})


def _responses_only(item: dict) -> bool:
    """An item no chat message looks like: a non-message item type, or a ``message`` whose
    content holds Responses parts (a chat message with a stray ``"type": "message"`` key and
    string content stays a chat message)."""
    kind = part_type(item)
    if kind == "message":
        content = item.get("content")
        return isinstance(content, list) and any(part_type(p) in _PART_TYPES for p in content)
    return kind in ITEM_TYPES


def _chat_only(item: dict) -> bool:
    return item.get("role") == "tool" or "tool_calls" in item or "tool_call_id" in item


def is_items(value: Any) -> bool:
    """A list of Responses input/output items (easy ``role``/``content`` messages allowed
    among them), told apart from a chat message list."""
    return (isinstance(value, list) and bool(value)
            # first what an agent's chat list shows early (a tool call or result): it ends there
            and not any(isinstance(i, dict) and _chat_only(i) for i in value)
            and all(isinstance(i, dict) and (part_type(i) in ITEM_TYPES
                                             or "role" in i and "content" in i and "type" not in i)
                    for i in value)
            and any(_responses_only(i) for i in value))


def is_request(doc: Any) -> bool:
    """A Responses request or response object: ``input`` (a string or items, plain
    ``{"role", "content"}`` ones too: a first-turn request has no typed item yet) and no
    ``messages``, or a response (``"object": "response"`` / ``output`` items)."""
    if not isinstance(doc, dict) or "messages" in doc:
        return False
    if isinstance(doc.get("input"), (str, list)) or doc.get("object") == "response":
        return True
    return is_items(doc.get("output"))


def detect(value: Any) -> bool:
    """A Responses request or response object, or a list of its items."""
    return is_request(value) if isinstance(value, dict) else is_items(value)


def _parts(content: Any, lost: dict) -> Any:
    if not isinstance(content, list):
        return content
    texts = []
    parts = []
    only_text = True
    for part in content:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind in ("input_text", "output_text", "text", "summary_text"):
            if not isinstance(part.get("text", ""), str):
                raise InputError(f"a {kind} part's text is not a string")
            texts.append(part.get("text", ""))
            parts.append({"type": "text", "text": part.get("text", "")})
        elif kind == "input_image":
            only_text = False
            parts.append({"type": "image_url", "image_url": {"url": part.get("image_url", "")}})
        elif kind == "refusal":
            texts.append(part.get("refusal", ""))
            parts.append({"type": "text", "text": part.get("refusal", "")})
        else:
            only_text = False
            bump(lost, f"{kind} message parts")
    if only_text:
        return "\n".join(texts) if len(texts) <= 1 else parts
    return parts


class Folder:
    """Folds items one at a time into OpenAI messages (used by the Codex reader too)."""

    def __init__(self, lost: dict, *, keep_opaque: bool = False):
        self.lost = lost
        # a compaction item (encrypted: only OpenAI reads it) kept as it is, an assistant
        # message of its own (:func:`compaction_message`), rather than dropped with a warning
        # (a Codex rollout's replacement history: dropped, warned)
        self.keep_opaque = keep_opaque
        self.messages: list[dict] = []  # not yet drained
        self.started = False  # whether any message was made
        self._reasoning: list[str] = []
        self._server: list[str] = []  # server-side items waiting for the assistant's reply
        self._open: dict | None = None  # the assistant message collecting calls
        # a message that came between calls and their outputs (Codex writes a developer message
        # there): held until the outputs are in, so no call is parted from its result
        self._pending: set = set()
        self._held: list[dict] = []

    def drain(self) -> list[dict]:
        """The messages that are complete (all but an assistant message still collecting
        calls), removed from the folder."""
        keep = 1 if self._open is not None and self.messages and self.messages[-1] is self._open else 0
        out = self.messages[:len(self.messages) - keep]
        del self.messages[:len(out)]
        return out

    def add(self, item: dict) -> None:
        self.started = True
        kind = item.get("type")
        if kind is None and "role" in item:
            kind = "message"
        if kind is not None and not isinstance(kind, str):
            raise InputError(f"an item's type is {type(kind).__name__}, not a string")
        role = item.get("role", "user") if kind == "message" else None
        if kind not in _OUTPUTS and kind not in _CALLS and (role is None or role == "assistant"):
            self._release()  # the next step: what was held comes before it, unanswered calls stay so
        if kind == "message":
            if role == "developer":
                role = "system"
            msg: dict = {"role": role, "content": _parts(item.get("content"), self.lost)}
            if role == "assistant":
                self._attach_server(msg)
                self._attach_reasoning(msg)
                self.messages.append(msg)
                self._open = msg
            elif self._pending:
                self._held.append(msg)
            else:
                self._flush_server()
                self.messages.append(msg)
                self._open = None
        elif kind == "reasoning":
            summary = item.get("summary") or []
            text = "\n".join(s.get("text", "") for s in summary if isinstance(s, dict))
            content = item.get("content")
            if isinstance(content, list):
                more = "\n".join(c.get("text", "") for c in content if isinstance(c, dict))
                text = "\n".join(t for t in (text, more) if t)
            if text:
                self._reasoning.append(text)
            if item.get("encrypted_content"):
                bump(self.lost, "encrypted reasoning items")
        elif kind in _CALLS:
            if kind == "function_call":
                name, args = item.get("name", ""), item.get("arguments", "")
            elif kind == "computer_call":
                name = "computer"
                args = dumps_like_json(item.get("action") or {}, ensure_ascii=False)
            elif kind == "custom_tool_call":
                name, args = item.get("name", ""), dumps_like_json({"input": item.get("input", "")},
                                                              ensure_ascii=False)
            else:
                name = "local_shell"
                args = dumps_like_json(item.get("action") or {}, ensure_ascii=False)
            call = {"id": item.get("call_id") or item.get("id", ""), "type": "function",
                    "function": {"name": name, "arguments": args if isinstance(args, str)
                                 else dumps_like_json(args, ensure_ascii=False)}}
            if self._open is None:
                msg = {"role": "assistant", "content": None}
                self._attach_server(msg)
                self._attach_reasoning(msg)
                self.messages.append(msg)
                self._open = msg
            self._open.setdefault("tool_calls", []).append(call)
            self._pending.add(call["id"])
        elif kind in _OUTPUTS:
            self._flush_server()
            output = item.get("output", "")
            if isinstance(output, dict):  # {"content": ..., "success": ...} shapes
                output = output.get("content", dumps_like_json(output, ensure_ascii=False))
            self.messages.append({"role": "tool", "tool_call_id": item.get("call_id", ""),
                                  "content": _parts(output, self.lost)})
            if self._open is not None:
                self._open = None
            self._pending.discard(item.get("call_id", ""))
            if not self._pending:
                self._release()
        elif kind in SERVER_ITEMS:
            self._server.append(server_side_text(item))
            bump(self.lost, "server-side tool items" + AS_TEXT)
            if self._open is not None:  # after the reply's text or calls: it ends the text
                text = "\n".join(self._server)
                self._server = []
                content = self._open.get("content")
                if isinstance(content, list):
                    self._open["content"] = [*content, {"type": "text", "text": text}]
                else:
                    self._open["content"] = f"{content}\n\n{text}" if content else text
        elif kind == "compaction":
            if not self.keep_opaque:
                bump(self.lost, "encrypted compaction items")
                return
            self._flush_server()
            self._attach_reasoning_alone()
            self.messages.append(compaction_message(item))
            self._open = None  # (what follows is never merged into it)
        else:
            bump(self.lost, f"{kind} items")

    def _release(self) -> None:
        """The held messages, after the outputs they came between (or before the next step)."""
        if self._held:
            self.messages += self._held
            self._held = []
            self._open = None
        self._pending = set()

    def _attach_server(self, msg: dict) -> None:
        """Server-side items before an assistant reply open its text."""
        if not self._server:
            return
        text = "\n".join(self._server)
        self._server = []
        content = msg.get("content")
        if isinstance(content, list):
            msg["content"] = [{"type": "text", "text": text}, *content]
        else:
            msg["content"] = f"{text}\n\n{content}" if content else text

    def _flush_server(self) -> None:
        """Server-side items with no assistant reply after them: an assistant message of
        their own."""
        if self._server:
            msg: dict = {"role": "assistant", "content": None}
            self._attach_server(msg)
            self._attach_reasoning(msg)
            self.messages.append(msg)
            self._open = None

    def _attach_reasoning_alone(self) -> None:
        """Reasoning with no reply before an opaque item: an empty assistant message holding it
        (the item is never merged with anything)."""
        if self._reasoning:
            self.messages.append({"role": "assistant", "content": "",
                                  "reasoning": "\n".join(self._reasoning)})
            self._reasoning = []

    def _attach_reasoning(self, msg: dict) -> None:
        if self._reasoning:
            msg["reasoning"] = "\n".join(self._reasoning)
            self._reasoning = []

    def finish(self) -> list[dict]:
        """The remaining messages (a reasoning item with no reply after it becomes an empty
        assistant message holding it)."""
        self._release()
        self._flush_server()
        self._attach_reasoning_alone()
        self._open = None
        out, self.messages = self.messages, []
        return out


def read(doc: Any, lost: dict) -> dict:
    """A list of items, or a body/response with ``input``/``output`` items (and
    ``instructions``), -> ``{"messages": [...]}`` plus the body's other keys."""
    folder = Folder(lost, keep_opaque=True)
    out: dict = {}
    if isinstance(doc, list):
        items = doc
    else:
        items = []
        instructions = doc.get("instructions")
        if isinstance(instructions, str) and instructions:
            folder.messages.append({"role": "system", "content": instructions})
        for key in ("input", "output"):
            value = doc.get(key)
            if isinstance(value, str):
                items.append({"type": "message", "role": "user", "content": value})
            elif isinstance(value, list):
                items.extend(value)
        out.update(params.responses_to_chat(
            {k: v for k, v in doc.items() if k not in ("input", "output", "instructions")}, lost))
    for item in items:
        if isinstance(item, dict):
            folder.add(item)
    out["messages"] = folder.finish()
    return out


def compaction_message(item: dict) -> dict:
    """A Responses ``compaction`` item in a chat transcript: the content of an assistant message
    of its own, the item itself (never split, merged or rewritten: stages keep what holds a
    provider's compaction as it is, :func:`hermesctx.messages.last_compaction`)."""
    return {"role": "assistant", "content": [item]}


# --- OpenAI chat -> Responses ---------------------------------------------------------------

_KEPT_KEYS = frozenset({"role", "content", "tool_calls", "tool_call_id", "name"})
_REASONING_KEYS = ("reasoning", "reasoning_content", "reasoning_details")


CACHE_MARKS = "cache_control markers (the Responses API caches prefixes by itself)"


def _input_parts(content: list, lost: dict) -> list:
    parts = []
    for part in content:
        kind = part_type(part)
        if isinstance(part, dict) and "cache_control" in part:
            bump(lost, CACHE_MARKS)
        if kind in ("text", "input_text", "output_text"):
            parts.append({"type": "input_text", "text": part.get("text", "")})
        elif kind == "image_url":
            url = part.get("image_url")
            parts.append({"type": "input_image", "image_url": url.get("url", "") if isinstance(url, dict) else url})
        elif isinstance(part, str):
            parts.append({"type": "input_text", "text": part})
        else:
            bump(lost, f"{kind} message parts")
    return parts


def items_of(messages: list, lost: dict) -> Iterator[dict]:
    """Responses input items of OpenAI chat ``messages``: each message an item (string content
    as it is), assistant text then its calls as ``function_call`` items, a tool result as
    ``function_call_output``, a kept ``compaction`` item as it came."""
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict):
            continue
        check_convertible(msg, f"messages[{i}]", NAME)
        role = msg.get("role")
        content = msg.get("content")
        for key in msg:
            if key == "cache_control":
                bump(lost, CACHE_MARKS)
            elif key in _REASONING_KEYS:
                bump(lost, "reasoning (a Responses reasoning item is replayed with its id)")
            elif key not in _KEPT_KEYS:
                bump(lost, f"message key {key!r}")
        if role == "tool":
            output = _input_parts(content, lost) if isinstance(content, list) else content_text(content)
            yield {"type": "function_call_output", "call_id": msg.get("tool_call_id", ""), "output": output}
            continue
        if role == "assistant":
            texts: list = []
            for part in content if isinstance(content, list) else ():
                if isinstance(part, dict) and "cache_control" in part:  # (cache-mark's, on chat)
                    bump(lost, CACHE_MARKS)
                    part = {k: v for k, v in part.items() if k != "cache_control"}
                if opaque_compaction(part):
                    if texts:
                        yield {"role": "assistant", "content": "\n".join(texts)}
                        texts = []
                    yield part  # as it came
                elif part_type(part) == "refusal" and isinstance(part.get("refusal"), str):
                    texts.append(part["refusal"])
                elif part_type(part) in ("text", "output_text") or isinstance(part, str):
                    text = content_text([part])
                    if text:
                        texts.append(text)
                else:
                    bump(lost, f"{part_type(part)} parts of assistant messages")
            if isinstance(content, str) and content:
                texts.append(content)
            if texts:
                yield {"role": "assistant", "content": "\n".join(texts)}
            for call in msg.get("tool_calls") or ():
                fn = call.get("function") or {}
                yield {"type": "function_call", "call_id": call.get("id", ""),
                       "name": fn.get("name", ""), "arguments": fn.get("arguments", "")}
            continue
        if isinstance(content, list):
            content = _input_parts(content, lost)
        yield {"role": "system" if role == "developer" else role, "content": content}


# the request's own parameters chat has no key for: a stage's chat send path (cache-mark's)
# would drop them, so they are kept beside the document and written back (:func:`restore`)
_OWN = ("background", "context_management", "conversation", "include", "max_tool_calls",
        "previous_response_id", "prompt", "reasoning", "text", "truncation")


def kept(doc: Any) -> dict | None:
    """The Responses-only parameters of a request (``context_management``, ``include``, ...)."""
    return {k: doc[k] for k in _OWN if k in doc} if isinstance(doc, dict) else None


def restore(out: Any, own: dict) -> Any:
    """A written request with the parameters :func:`kept` kept that it lost on the way."""
    if not isinstance(out, dict) or all(k in out for k in own):
        return out
    return {**out, **{k: v for k, v in own.items() if k not in out}}


def write(doc: Any, lost: dict) -> dict | list:
    """OpenAI chat (a body or a list of messages) -> a Responses request: a leading system
    message as ``instructions``, the messages as ``input`` items (:func:`items_of`), the
    parameters in Responses' form (:func:`hermesctx.formats.params.chat_to_responses`). Messages
    alone (what a bare list of items is read into) are written as a bare list of items."""
    if isinstance(doc, list) or list(doc) == ["messages"]:
        messages = doc if isinstance(doc, list) else doc["messages"]
        return list(items_of(params.legacy_functions(messages or [], lost), lost))
    messages = params.legacy_functions(doc.get("messages") or [], lost)
    out = params.chat_to_responses({k: v for k, v in doc.items() if k != "messages"}, lost)
    first = messages[0] if messages else None
    if isinstance(first, dict) and first.get("role") in ("system", "developer") \
            and isinstance(first.get("content"), str) and "instructions" not in out:
        out["instructions"] = first["content"]
        messages = messages[1:]
    out["input"] = list(items_of(messages, lost))
    return out
