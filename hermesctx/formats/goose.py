"""Goose session stores (``~/.local/share/goose/sessions/sessions.db``) -> one transcript per
session.

Goose keeps its sessions in a SQLite database (read as :mod:`hermesctx.formats.opencode_go`
reads one: by its magic bytes, read-only, on a private copy): a ``sessions`` table (``id``,
``model_config_json``'s ``model_name``, ``parent_session_id``) and a ``messages`` table whose
``content_json`` is an array of typed parts: ``text``, ``thinking`` (streamed, one part per
token: joined into the turn's reasoning), ``toolRequest`` (``id``, ``toolCall``: ``{"status":
"success", "value": {"name", "arguments"}}``, or ``{"status": "error", "error"}`` for a call the
model could not make) and ``toolResponse`` (``id``, ``toolResult``: ``{"status": "success",
"value": {"content": [...], "isError"}}`` or a bare content array, or ``{"status": "error",
"error"}``). ``metadata_json`` says whether the agent still sees a message (``agentVisible``:
false once a summary replaced it) and carries the usage of a reply. Also read: a JSON export of
the rows (``{"sessions": [...], "messages": [...]}``, or the message rows alone).
"""

from __future__ import annotations

from hermesctx.formats._common import bump
from hermesctx.formats._logs import session_body
from hermesctx.formats.opencode_go import load, sniff  # noqa: F401 (the database, read alike)
from hermesctx.jsonio import dumps_like_json, loads_like_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "goose"
PLAIN = False  # read as OpenAI chat
LOG = False  # a database (or an export of its rows), not a session log

_ROW_KEYS = ("session_id", "role", "content_json")


def _is_row(value: Any) -> bool:
    return isinstance(value, dict) and all(k in value for k in _ROW_KEYS)


def _rows_of(doc: Any) -> Any:
    return doc.get("messages") if isinstance(doc, dict) else doc


def detect(doc: Any) -> bool:
    """The rows of a Goose store (``sessions`` and ``messages``), or its message rows alone."""
    rows = _rows_of(doc)
    return isinstance(rows, list) and bool(rows) and all(map(_is_row, rows))


def records(doc: Any) -> list | None:
    """The sessions of a store, one document each in the order they were created (None when
    it holds one)."""
    order: dict = {}
    for row in _rows_of(doc):
        order.setdefault(row.get("session_id"), []).append(row)
    if len(order) <= 1:
        return None
    sessions = doc.get("sessions") if isinstance(doc, dict) else None
    known = {s.get("id"): s for s in sessions or () if isinstance(s, dict)}
    ids = [sid for sid in known if sid in order] + [sid for sid in order if sid not in known]
    return [{"sessions": [known[sid]] if sid in known else [], "messages": order[sid]} for sid in ids]


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return loads_like_json(value)
        except ValueError:
            return None
    return value


def read(doc: Any, lost: dict) -> dict:
    """One session's rows -> ``{"messages": [...], "model": ...}`` (the first session's when the
    document holds several and is read alone)."""
    split = records(doc)
    if split is not None:
        doc = split[0]
    sessions = doc.get("sessions") if isinstance(doc, dict) else None
    session = sessions[0] if isinstance(sessions, list) and sessions and isinstance(sessions[0], dict) else {}
    config = _json(session.get("model_config_json"))
    model = config.get("model_name") if isinstance(config, dict) else None
    messages: list[dict] = []
    for row in _rows_of(doc):
        meta = _json(row.get("metadata_json"))
        if isinstance(meta, dict) and meta.get("agentVisible") is False:
            bump(lost, "messages the agent no longer saw (replaced by a summary)")
            continue
        parts = _json(row.get("content_json"))
        if not isinstance(parts, list):
            bump(lost, "messages whose content_json is no array")
            continue
        messages.extend(_message(row.get("role"), parts, lost))
    return session_body(messages, model if isinstance(model, str) else None)


def usage(doc: Any) -> dict | None:
    """The last reply's usage (``metadata_json.usage``: ``inputTokens``, ``outputTokens``)."""
    split = records(doc)
    rows = _rows_of(split[0] if split else doc)
    for row in reversed(rows):
        meta = _json(row.get("metadata_json")) if isinstance(row, dict) else None
        counted = meta.get("usage") if isinstance(meta, dict) else None
        if isinstance(counted, dict) and isinstance(counted.get("inputTokens"), int):
            return {"input_tokens": counted["inputTokens"], "output_tokens": counted.get("outputTokens") or 0}
    return None


def _message(role: Any, parts: list, lost: dict) -> list[dict]:
    """One row's parts -> its messages: tool results first (each a tool message), then the text,
    reasoning and calls of the row."""
    texts: list[str] = []
    thinking: list[str] = []
    calls: list[dict] = []
    results: list[dict] = []
    for part in parts:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "thinking" and isinstance(part.get("thinking"), str):
            thinking.append(part["thinking"])
        elif kind == "toolRequest":
            calls.append(_call(part))
        elif kind == "toolResponse":
            results.append({"role": "tool", "tool_call_id": str(part.get("id") or ""),
                            "content": _result(part.get("toolResult"), lost)})
        else:
            bump(lost, f"{kind if isinstance(kind, str) else 'untyped'} parts")
    out: list[dict] = results
    if role == "assistant" and (texts or calls or thinking):
        msg: dict = {"role": "assistant", "content": "\n".join(texts) if texts else (None if calls else "")}
        if thinking:
            msg["reasoning"] = "".join(thinking)
        if calls:
            msg["tool_calls"] = calls
        out = [*out, msg]
    elif texts:
        out = [*out, {"role": "user" if role != "system" else "system", "content": "\n".join(texts)}]
    return out


def _call(part: dict) -> dict:
    call = part.get("toolCall")
    call = call if isinstance(call, dict) else {}
    value = call.get("value")
    if call.get("status") == "success" and isinstance(value, dict):
        name, args = value.get("name"), value.get("arguments")
    else:  # a call the model could not make: its error is what there is of it
        name, args = "invalid_tool_call", {"error": call.get("error")}
    return {"id": str(part.get("id") or ""), "type": "function",
            "function": {"name": str(name or ""), "arguments": args if isinstance(args, str)
                         else dumps_like_json(args if args is not None else {}, ensure_ascii=False)}}


def _result(result: Any, lost: dict) -> str:
    result = result if isinstance(result, dict) else {}
    if result.get("status") != "success":
        error = result.get("error")
        return f"Error: {error if isinstance(error, str) else dumps_like_json(error, ensure_ascii=False)}"
    value = result.get("value")
    content = value.get("content") if isinstance(value, dict) else value
    texts = []
    for item in content if isinstance(content, list) else ():
        if isinstance(item, dict) and isinstance(item.get("text"), str):
            texts.append(item["text"])
        else:
            bump(lost, "tool result parts that are no text (images, resources)")
    return "\n".join(texts)
