"""Gemini CLI chat sessions (``~/.gemini/tmp/<project>/chats/session-*.json``) -> one transcript.

A session is one JSON object (``sessionId``, ``projectHash``, ``startTime``, ``lastUpdated``,
``messages``; ``kind`` ``main`` / ``subagent``), each message a ``type`` (``user``, ``gemini``,
or the CLI's own ``info`` / ``error`` / ``warning`` lines, which the model never saw) and a
``content`` (a string, or Gemini API parts: ``{"text"}``, ...). A ``gemini`` message holds the
model's text, its ``thoughts`` (``subject`` / ``description``: kept as the turn's reasoning), its
``tokens`` (``input`` = the prompt, ``cached`` in it, ``output``, ``thoughts``, ``tool``, ``total``)
and its ``toolCalls``, each with its result inline (``result``: ``functionResponse`` parts whose
``response`` is ``{"output"}`` or ``{"error"}``): the calls are the assistant message's, their
results the tool messages after it. A call with no result recorded (cancelled) stays a call
without one. A user message made only of ``functionResponse`` parts repeats results already
read (newer releases write them there too) and is read as those results when their calls have
none yet.

The CLI's ``logs.json`` beside the chats holds only the prompts typed: refused, naming the file
to pass.
"""

from __future__ import annotations

from hermesctx.errors import InputError
from hermesctx.formats._common import bump
from hermesctx.formats._logs import session_body
from hermesctx.jsonio import dumps_like_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "gemini"
PLAIN = False  # read as OpenAI chat
LOG = False  # a document, not a session log

TYPES = ("user", "gemini", "info", "error", "warning")
UI_TYPES = ("info", "error", "warning")  # the CLI's own lines: never sent to the model


def _is_message(value: Any) -> bool:
    return isinstance(value, dict) and "role" not in value and value.get("type") in TYPES


def is_prompt_log(doc: Any) -> bool:
    """The CLI's ``logs.json``: a list of ``{sessionId, messageId, type, message, timestamp}``."""
    return (isinstance(doc, list) and bool(doc)
            and all(isinstance(e, dict) and "sessionId" in e and "messageId" in e and "message" in e
                    for e in doc))


def detect(doc: Any) -> bool:
    """A Gemini CLI session (an object whose ``messages`` are typed ``user`` / ``gemini`` / ...,
    none with a ``role``), or its ``logs.json`` (refused when read)."""
    if is_prompt_log(doc):
        return True
    if not isinstance(doc, dict):
        return False
    messages = doc.get("messages")
    return (isinstance(messages, list) and bool(messages) and all(map(_is_message, messages))
            and ("projectHash" in doc or "sessionId" in doc or any(m.get("type") == "gemini" for m in messages)))


def read(doc: Any, lost: dict) -> dict:
    """The session -> ``{"messages": [...], "model": ...}``."""
    if is_prompt_log(doc):
        raise InputError(f"a Gemini CLI logs.json ({len(doc)} prompts typed, no reply or tool call): "
                         "not the transcript", hint="pass the session's chats/session-*.json "
                         "in the same project folder")
    messages: list[dict] = []
    answered: set = set()  # the calls whose result was read
    pending: set = set()  # the calls read without a result so far
    model = None
    for msg in doc.get("messages") or ():
        kind = msg.get("type")
        if kind in UI_TYPES:
            bump(lost, f"{kind} messages (the CLI's own, never sent to the model)")
            continue
        content = msg.get("content")
        if kind == "user":
            results = _responses(content)
            if results is not None:  # the results again (or the only record of them)
                for call_id, text in results:
                    if call_id not in answered:  # (one whose call is not here: user text, below)
                        pending.discard(call_id)
                        answered.add(call_id)
                        messages.append({"role": "tool", "tool_call_id": call_id, "content": text})
                continue
            messages.append({"role": "user", "content": _text(content, lost)})
            continue
        if isinstance(msg.get("model"), str):
            model = msg["model"]
        out: dict = {"role": "assistant", "content": _text(content, lost) or None}
        thoughts = [f"{t.get('subject') or ''}: {t.get('description') or ''}".strip(": ")
                    for t in msg.get("thoughts") or () if isinstance(t, dict)]
        if any(thoughts):
            out["reasoning"] = "\n".join(t for t in thoughts if t)
        calls = [c for c in msg.get("toolCalls") or () if isinstance(c, dict)]
        results = []
        for call in calls:
            call_id = str(call.get("id") or "")
            args = call.get("args")
            out.setdefault("tool_calls", []).append({
                "id": call_id, "type": "function",
                "function": {"name": str(call.get("name") or ""),
                             "arguments": dumps_like_json(args if isinstance(args, dict) else {},
                                                          ensure_ascii=False)}})
            text = _result(call.get("result"), lost)
            if text is None:
                pending.add(call_id)
            else:
                answered.add(call_id)
                results.append({"role": "tool", "tool_call_id": call_id, "content": text})
        if out["content"] is None and "tool_calls" not in out:
            out["content"] = ""
        messages.append(out)
        messages.extend(results)
    return session_body(messages, model)


def usage(doc: Any) -> dict | None:
    """The last ``gemini`` message's ``tokens``: ``input`` is the whole prompt, ``cached`` the
    part of it read from the cache; the thoughts count as output."""
    messages = doc.get("messages") if isinstance(doc, dict) else None
    for msg in reversed(messages or ()):
        tokens = msg.get("tokens") if isinstance(msg, dict) and msg.get("type") == "gemini" else None
        if isinstance(tokens, dict) and isinstance(tokens.get("input"), int) and tokens.get("total"):
            cached = tokens.get("cached") if isinstance(tokens.get("cached"), int) else 0
            return {"input_tokens": tokens["input"] - cached, "cache_read_input_tokens": cached,
                    "output_tokens": (tokens.get("output") or 0) + (tokens.get("thoughts") or 0)}
    return None


def _text(content: Any, lost: dict) -> str:
    """A message's content (a string, or Gemini parts) as its text."""
    if isinstance(content, str):
        return content
    texts = []
    for part in content if isinstance(content, list) else ():
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            if not part.get("thought"):
                texts.append(part["text"])
        elif isinstance(part, dict):
            bump(lost, f"{next(iter(part), 'empty')} parts")
    return "\n".join(texts)


def _responses(content: Any) -> list | None:
    """``[(call id, text)]`` of a user message made only of ``functionResponse`` parts, else None."""
    if not isinstance(content, list) or not content:
        return None
    out = []
    for part in content:
        response = part.get("functionResponse") if isinstance(part, dict) else None
        if not isinstance(response, dict):
            return None
        out.append((str(response.get("id") or ""), _response_text(response)))
    return out


def _response_text(response: dict) -> str:
    body = response.get("response")
    if isinstance(body, dict):
        if isinstance(body.get("output"), str):
            return body["output"]
        if isinstance(body.get("error"), str):
            return f"Error: {body['error']}"
        return dumps_like_json(body, ensure_ascii=False)
    return body if isinstance(body, str) else ""


def _result(result: Any, lost: dict) -> str | None:
    """A tool call's inline ``result`` as the text of its tool message (None: none recorded)."""
    if result is None:
        return None
    if isinstance(result, str):
        return result
    if isinstance(result, dict):
        result = [result]
    if not isinstance(result, list) or not result:
        return None
    texts = []
    for part in result:
        if isinstance(part, dict) and isinstance(part.get("functionResponse"), dict):
            texts.append(_response_text(part["functionResponse"]))
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif isinstance(part, str):
            texts.append(part)
        else:
            bump(lost, "tool result parts that are no text (images, files)")
    return "\n".join(texts)
