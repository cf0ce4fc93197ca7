"""OpenCode (the Go terminal agent, ``opencode-ai/opencode``) and Crush session stores -> one
transcript per session.

Both keep their sessions in a SQLite database (``.opencode/opencode.db``, ``.crush/crush.db``;
most of it in the write-ahead log ``-wal`` beside it): a ``sessions`` table (``id``,
``parent_session_id``: a sub-agent's session, whose id is the ``tool_call`` that started it;
``summary_message_id``: the summary a compaction wrote; token and cost totals) and a
``messages`` table whose ``parts`` column is a JSON array of ``{type, data}`` parts: ``text``,
``reasoning``, ``image_url``, ``binary``, ``tool_call`` (``id``, ``name``, ``input``: the
arguments as JSON text), ``tool_result`` (``tool_call_id``, ``content``, ``is_error``, in a
``tool`` row) and ``finish``. Read from the database itself (told by its magic bytes; opened
read-only with the standard library's :mod:`sqlite3` on a private copy, its WAL included), or
from a JSON export of the rows (``{"sessions": [...], "messages": [...]}``, ``parts`` parsed or
as text, or the message rows alone).

Each session is one document, in the order they were created; a compacted session starts at its
summary message (as the agent sends it: a user message), what came before is counted as dropped.
"""

from __future__ import annotations

from hermesctx.errors import InputError
from hermesctx.formats._common import bump
from hermesctx.formats._logs import session_body
from hermesctx.jsonio import dumps_like_json, loads_like_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, BinaryIO

NAME = "opencode-go"
PLAIN = False  # read as OpenAI chat
LOG = False  # a document (or a database), not a session log

MAGIC = b"SQLite format 3\x00"
PART_TYPES = ("text", "reasoning", "image_url", "binary", "tool_call", "tool_result", "finish")
_ROW_KEYS = ("session_id", "role", "parts")


def _is_row(value: Any) -> bool:
    return isinstance(value, dict) and all(k in value for k in _ROW_KEYS) and isinstance(
        value.get("parts"), (list, str))


def detect(doc: Any) -> bool:
    """A JSON export of the store (``sessions`` and ``messages`` rows), or its message rows
    alone (an array, or a ``messages`` array of rows)."""
    rows = doc.get("messages") if isinstance(doc, dict) else doc
    return isinstance(rows, list) and bool(rows) and all(_is_row(r) for r in rows)


def records(doc: Any) -> list | None:
    """The sessions of an export, one document each (None when it holds one session)."""
    rows = doc.get("messages") if isinstance(doc, dict) else doc
    sessions = doc.get("sessions") if isinstance(doc, dict) else None
    sessions = [s for s in sessions if isinstance(s, dict)] if isinstance(sessions, list) else []
    order: dict = {}
    for row in rows:
        order.setdefault(row.get("session_id"), []).append(row)
    if len(order) <= 1:
        return None
    order = {sid: rows for sid, rows in order.items() if any(_said(r) for r in rows)}  # (empty: none)
    if len(order) <= 1:
        return None if not order else [{"sessions": [s for s in sessions if s.get("id") in order],
                                        "messages": next(iter(order.values()))}]
    known = {s.get("id"): s for s in sessions}
    ids = [s.get("id") for s in sorted(sessions, key=_created) if s.get("id") in order]
    ids += [sid for sid in order if sid not in known]
    return [{"sessions": [known[sid]] if sid in known else [], "messages": order[sid]}
            for sid in ids]


_SAID = ('"text"', '"reasoning"', '"tool_call"', '"tool_result"', '"image_url"')


def _said(row: dict) -> bool:
    """Whether a row holds a part that says something (not only its finish)."""
    parts = row.get("parts")
    if isinstance(parts, str):
        return any(kind in parts for kind in _SAID)
    return any(isinstance(p, dict) and f'"{p.get("type")}"' in _SAID for p in parts)


def _created(session: dict) -> Any:
    value = session.get("created_at")
    return value if isinstance(value, (int, float)) else 0


def read(doc: Any, lost: dict) -> dict:
    """One session's rows -> ``{"messages": [...], "model": ...}`` (the first session's when
    the document holds several and is read alone)."""
    parts = records(doc)
    if parts is not None:
        doc = parts[0]
    rows = doc.get("messages") if isinstance(doc, dict) else doc
    sessions = doc.get("sessions") if isinstance(doc, dict) else None
    session = sessions[0] if isinstance(sessions, list) and sessions and isinstance(
        sessions[0], dict) else {}
    summary = session.get("summary_message_id")
    start = 0
    if summary is not None:
        for i, row in enumerate(rows):
            if row.get("id") == summary:
                start = i
                break
    if start:
        bump(lost, "messages before the session's compaction summary", start)
    out: list[dict] = []
    model = None
    for i, row in enumerate(rows[start:], start):
        where = f"messages[{i}]"
        role = row.get("role")
        parts = row.get("parts")
        if isinstance(parts, str):
            try:
                parts = loads_like_json(parts)
            except ValueError:
                raise InputError("its parts are not JSON", where=where) from None
        if not isinstance(parts, list):
            raise InputError(f"parts is {type(parts).__name__}, not a list", where=where)
        if i == start and summary is not None:
            role = "user"  # the agent sends the summary as the user's message
        if role == "assistant" and isinstance(row.get("model"), str) and row["model"]:
            model = row["model"]
        out.extend(_messages(role, parts, where, lost))
    if not out:
        raise InputError(f"an OpenCode / Crush session ({session.get('id', 'no id')}) whose "
                         "messages say nothing (only finish parts): no transcript in it")
    return session_body(out, model)


def _messages(role: Any, parts: list, where: str, lost: dict) -> list[dict]:
    texts: list[dict] = []
    reasoning: list[str] = []
    calls: list[dict] = []
    results: list[dict] = []
    for part in parts:
        if not isinstance(part, dict):
            bump(lost, "parts that are not objects")
            continue
        kind, data = part.get("type"), part.get("data")
        data = data if isinstance(data, dict) else {}
        if kind == "text":
            texts.append({"type": "text", "text": str(data.get("text") or "")})
        elif kind == "reasoning":
            reasoning.append(str(data.get("thinking") or data.get("text") or ""))
        elif kind == "image_url":
            texts.append({"type": "image_url", "image_url": {"url": data.get("url")}})
        elif kind == "tool_call":
            arguments = data.get("input")
            if not isinstance(arguments, str):
                arguments = dumps_like_json(arguments if arguments is not None else {})
            calls.append({"id": str(data.get("id") or ""), "type": "function",
                          "function": {"name": str(data.get("name") or ""),
                                       "arguments": arguments or "{}"}})
        elif kind == "tool_result":
            content = data.get("content")
            content = content if isinstance(content, str) else dumps_like_json(content)
            if data.get("is_error") is True:
                content = f"[error] {content}"
            results.append({"role": "tool", "tool_call_id": str(data.get("tool_call_id") or ""),
                            "content": content})
        elif kind == "finish":
            continue
        else:
            bump(lost, f"{kind if isinstance(kind, str) else 'untyped'} parts")
    if results:
        return results
    if role not in ("user", "assistant", "system"):
        if not texts and not calls:
            return []
        role = "user"
    msg: dict = {"role": role}
    if len(texts) == 1 and texts[0]["type"] == "text":
        msg["content"] = texts[0]["text"]
    else:
        msg["content"] = texts or ("" if role != "assistant" or not calls else None)
    if reasoning and role == "assistant":
        msg["reasoning"] = "\n".join(reasoning)
    if calls and role == "assistant":
        msg["tool_calls"] = calls
    if not texts and not calls and not reasoning:
        return []  # a row holding only its finish part (a canceled turn): nothing was said
    return [msg]


# --- the database --------------------------------------------------------------------------

def read_database(stream: BinaryIO, name: str | None) -> dict:
    """A store's database (``stream``; its write-ahead log, plain or gzipped, found beside
    ``name``) as ``{"sessions": [...], "messages": [...]}``: copied into a private temporary
    directory and opened read-only there, so the user's files are never written."""
    import os
    import shutil
    import sqlite3
    import tempfile

    with tempfile.TemporaryDirectory(prefix="hermesctx-db-") as tmp:
        path = os.path.join(tmp, "store.db")
        with open(path, "wb") as out:
            shutil.copyfileobj(stream, out)
        wal = _wal_beside(name)
        if wal is not None:
            _copy_wal(wal, path + "-wal")
        try:
            con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        except sqlite3.Error as exc:
            raise InputError(f"a SQLite database that cannot be opened: {exc}") from None
        try:
            tables = {r[0] for r in con.execute("select name from sqlite_master where type='table'")}
            if not {"sessions", "messages"} <= tables:
                shown = ", ".join(sorted(tables)[:8]) or "no tables"
                raise InputError(f"a SQLite database with tables {shown}: not an OpenCode, Crush "
                                 "or Goose session store (no sessions and messages tables)")
            messages = _rows(con, "messages")
            if not messages:
                raise InputError("an OpenCode / Crush / Goose session store without any message: no "
                                 "transcript in it", hint=None if wal else
                                 "most of a store sits in its write-ahead log: keep the -wal "
                                 "file beside the database")
            return {"sessions": _rows(con, "sessions"), "messages": messages}
        except sqlite3.Error as exc:
            raise InputError(f"a SQLite database that cannot be read: {exc}") from None
        finally:
            con.close()


def _rows(con: Any, table: str) -> list[dict]:
    """The rows of ``table`` in the order they were written (Goose's messages have no
    ``created_at``: their rowid)."""
    columns = {r[1] for r in con.execute(f"pragma table_info({table})")}
    order = "created_at, rowid" if "created_at" in columns else "rowid"
    cursor = con.execute(f"select * from {table} order by {order}")  # noqa: S608 (fixed names)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor]


def _wal_beside(name: str | None) -> str | None:
    import os

    if not name:
        return None
    base = name[:-3] if name.endswith(".gz") else name
    for candidate in (base + "-wal", base + "-wal.gz"):
        if os.path.isfile(candidate):
            return candidate
    return None


def _copy_wal(source: str, target: str) -> None:
    import gzip
    import shutil

    with open(source, "rb") as raw:
        magic = raw.read(2)
        raw.seek(0)
        handle = gzip.GzipFile(fileobj=raw) if magic == b"\x1f\x8b" else raw
        try:
            with open(target, "wb") as out:
                shutil.copyfileobj(handle, out)
        except (OSError, EOFError) as exc:
            raise InputError(f"the write-ahead log {source} cannot be read: {exc}") from None


WAL_MAGIC = (b"\x37\x7f\x06\x82", b"\x37\x7f\x06\x83")  # a write-ahead log's first bytes


def sniff(head: bytes) -> bool:
    """Whether an input's first bytes are a SQLite database's (or its write-ahead log's)."""
    return head.startswith(MAGIC) or head[:4] in WAL_MAGIC


def load(stream: BinaryIO, name: str | None) -> dict:
    """A database input as the rows :func:`read` takes (:func:`read_database`)."""
    if _peek4(stream) in WAL_MAGIC:
        raise InputError("a SQLite write-ahead log (-wal), not a database: no transcript alone",
                         hint="name the database beside it (opencode.db, crush.db): its log is read with it")
    return read_database(stream, name)


def _peek4(stream: Any) -> bytes:
    peek = getattr(stream, "peek", None)
    if peek is not None:
        return peek(4)[:4]
    start = stream.tell()
    head = stream.read(4)
    stream.seek(start)
    return head
