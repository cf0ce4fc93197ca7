"""Cline, Roo Code and Kilo Code task histories (``tasks/<id>/api_conversation_history.json``)
-> one transcript.

The file is a JSON array of Anthropic messages, each with the agent's own keys beside ``role``
and ``content`` (``ts``, ``metrics``, ``conversationHistoryIndex``; Roo's ``isSummary`` on the
summary a context condensing wrote). With native tool calling the assistant's calls are
``tool_use`` blocks, but their results come back in the next user turn as text: a
``[name for 'arg'] Result:`` block (the result after it, or in the text blocks that follow), one
per call in the order of the calls, then the ``<environment_details>`` the agent appends. Each
such result is paired with its call by that order and becomes a real ``tool_result``; results
given as ``tool_result`` blocks already are kept as they are.

The task's other file, ``ui_messages.json`` (the UI's events: no call ids, no model context),
is refused with a pointer to its sibling.
"""

from __future__ import annotations

from hermesctx import lazyre
from hermesctx.errors import InputError
from hermesctx.formats import anthropic

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "cline"
PLAIN = False  # read as OpenAI chat
LOG = False  # a document, not a session log

# ``[name] Result:`` or ``[name for 'its argument'] Result:`` (the argument may hold brackets and
# newlines: a search pattern, a question's text)
_MARK = lazyre.compile(r"^\[[A-Za-z_][\w-]*(?: for '.*?')?\] Result:[ \t]*\n?", lazyre.S)
_OWN_KEYS = ("ts", "metrics", "conversationHistoryIndex", "isSummary")
_ENV = "<environment_details>"


def _marked(block: Any) -> bool:
    return (isinstance(block, dict) and block.get("type") == "text"
            and isinstance(block.get("text"), str) and _MARK.match(block["text"]) is not None)


def detect(doc: Any) -> bool:
    """A JSON array of Anthropic-like messages carrying Cline's own keys (``ts``, ``metrics``,
    ...), or whose user turns answer ``tool_use`` calls with ``[...] Result:`` text."""
    if not isinstance(doc, list) or not doc:
        return False
    if not all(isinstance(m, dict) and m.get("role") in ("user", "assistant") for m in doc):
        return False
    if any(key in m for m in doc for key in _OWN_KEYS):
        return True
    return any(m["role"] == "user" and isinstance(m.get("content"), list)
               and any(_marked(b) for b in m["content"]) for m in doc)


def is_ui_messages(doc: Any) -> bool:
    """The task's ``ui_messages.json``: UI events (``ts``, ``type`` say / ask)."""
    return (isinstance(doc, list) and bool(doc)
            and all(isinstance(e, dict) and "ts" in e and e.get("type") in ("say", "ask") for e in doc))


def refuse_ui_messages(doc: list) -> InputError:
    return InputError(f"a Cline / Roo / Kilo ui_messages.json ({len(doc)} UI events, no tool call "
                      "ids): not the transcript", hint="pass the api_conversation_history.json "
                      "beside it, in the same task folder")


def usage(doc: list) -> dict | None:
    """The last assistant turn's ``metrics.tokens`` (``prompt``, ``completion``, ``cached``)."""
    for msg in reversed(doc):
        metrics = msg.get("metrics") if isinstance(msg, dict) else None
        tokens = metrics.get("tokens") if isinstance(metrics, dict) else None
        if isinstance(tokens, dict) and isinstance(tokens.get("prompt"), int):
            return {"input_tokens": tokens["prompt"], "output_tokens": tokens.get("completion") or 0,
                    "cache_read_input_tokens": tokens.get("cached") or 0}
    return None


def read(doc: list, lost: dict) -> dict:
    """The messages -> OpenAI chat (through the Anthropic reader once the results are paired)."""
    messages: list[dict] = []
    open_calls: list[str] = []
    for msg in doc:
        content = msg.get("content")
        role = msg.get("role")
        if role == "user" and open_calls and isinstance(content, list):
            content = _pair(content, open_calls)
        open_calls = []
        if role == "assistant" and isinstance(content, list):
            open_calls = [str(b.get("id")) for b in content
                          if isinstance(b, dict) and b.get("type") == "tool_use"]
        messages.append({"role": role, "content": content})
    return anthropic.read({"messages": messages}, lost)


def _pair(content: list, calls: list[str]) -> list:
    """A user turn's blocks with the ``[...] Result:`` texts answering ``calls`` (by order) as
    ``tool_result`` blocks, first; the rest (the environment details, ...) after them."""
    if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
        return content  # answered the API's way already
    results: list[dict] = []
    rest: list = []
    current: list | None = None  # the texts of the result being gathered
    for block in content:
        if _marked(block) and len(results) < len(calls):
            text = block["text"]
            body = text[_MARK.match(text).end():]
            current = [body] if body else []
            results.append({"type": "tool_result", "tool_use_id": calls[len(results)],
                            "content": current})
            continue
        if (current is not None and isinstance(block, dict) and block.get("type") == "text"
                and isinstance(block.get("text"), str) and not block["text"].startswith(_ENV)
                and not _marked(block)):
            current.append(block["text"])
            continue
        current = None
        rest.append(block)
    for result in results:
        result["content"] = "\n".join(result["content"])
    return [*results, *rest]
