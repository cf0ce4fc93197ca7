"""The archive store: every compaction's messages, verbatim, in one SQLite file, searchable.

``compress --archive FILE.sqlite`` adds one *span* per compaction: the whole transcript the
compaction took as input (each message stored byte for byte as :func:`hermesctx.jsonio.dumps`
writes it, with its position, role and tool name), the summary that replaced its middle, the
session the conversation belongs to and the span of the previous compaction (its *parent*), so
repeated compactions form a chain back to the raw messages. Span ids (``hx-`` + 12 hex) are a
hash of the session and the messages: the same compaction stored twice is one span.

Bounded: a distinct message is stored once (its JSON deflated, keyed by its sha256), a span
lists its messages by reference (after what it shares with the session's previous span), texts
are indexed once per session in a contentless FTS5 index, summaries are deflated: N compactions
of one session cost about one copy of its distinct content. :meth:`Store.prune` removes old
spans and sessions, then what no span refers to, and compacts the file.

Search (``recall``) covers the text of every distinct message of a session once (text parts,
tool call names and arguments, tool results), at the first span that held it, and every
summary. With FTS5 (most sqlite builds) hits are ranked by BM25; without it (or with
``fts=False``) a plain scan finds the same hits with a simpler score. A query is words; a
word is a phrase of its letters and digits (``src/app.py`` is the phrase ``src app py``), and
every word must occur. Snippets are redacted; the stored messages are not (keep the file
private: it is created mode 0600).

Safety: the path must be a regular file (a symlink or a FIFO is refused without being opened)
holding a SQLite database; writes happen in one ``BEGIN IMMEDIATE`` transaction per span with
WAL journaling and a busy timeout, so two processes can compact into one store. The schema is
versioned with ``PRAGMA user_version``.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import math
import os
import re
import sqlite3
import stat
import sys
from typing import Any

from hermesctx import jsonio
from hermesctx.errors import FileIOError, InputError, UsageError
from hermesctx.messages import call_id

SCHEMA_VERSION = 2  # 1: every span listed its messages row by row, text kept twice (migrated on open)
SPAN_ID = re.compile(r"hx-[0-9a-f]{12}")
_HEADER = b"SQLite format 3\x00"
_TOKEN = re.compile(r"[^\W_]+")  # what FTS5's unicode61 tokenizer calls a token: letters and digits
_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
# keys whose strings are not words anyone searches for: ids, block types, base64 payloads, signatures
_SKIP_KEYS = frozenset({"role", "type", "id", "call_id", "tool_call_id", "tool_use_id", "signature",
                        "data", "image_url", "source", "encrypted_content", "cache_control"})
_SNIPPET = 80  # characters of context on each side of the first matching term

# Each distinct message once (``blobs``: its sha256 and its JSON bytes, zlib-compressed); a span
# lists its messages as the ids of their blobs (``spans.blobs``: 4 bytes each, little-endian); a
# message's searchable text is indexed once per session (``texts``: where it was first seen; the
# text itself is in the contentless ``fts`` index only, and read back from the blob for snippets).
# fts rowids: texts.id for a message, -spans.n for a summary. A span's summary is deflated too, and
# a span whose messages begin as another's of its session do (the session as it grows, compacted
# again) names it (``base``) and how many (``shared``), then lists only the rest.
_SCHEMA = """
CREATE TABLE IF NOT EXISTS blobs (id INTEGER PRIMARY KEY, size INTEGER NOT NULL, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS spans (
    n INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, session TEXT NOT NULL, parent TEXT, created TEXT NOT NULL,
    messages INTEGER NOT NULL, compressed INTEGER, start INTEGER, "end" INTEGER,
    summary BLOB NOT NULL, summary_chars INTEGER NOT NULL, source TEXT,
    base INTEGER, shared INTEGER NOT NULL DEFAULT 0, blobs BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS spans_session ON spans (session);
CREATE INDEX IF NOT EXISTS spans_source ON spans (source);
CREATE TABLE IF NOT EXISTS sessions (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS texts (
    id INTEGER PRIMARY KEY, session INTEGER NOT NULL, blob INTEGER NOT NULL, span INTEGER NOT NULL,
    position INTEGER NOT NULL, role TEXT, tool TEXT, UNIQUE (session, blob));
"""
_FTS = ("CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5("
        "body, content='', columnsize=0, tokenize='unicode61 remove_diacritics 0')")
_V1_TABLES = ("blobs", "spans", "span_messages", "texts")


def _pack(ids: list) -> bytes:
    from array import array

    packed = array("q", ids)
    if sys.byteorder != "little":
        packed.byteswap()
    return packed.tobytes()


def _unpack(data: bytes) -> list:
    from array import array

    packed = array("q")
    packed.frombytes(bytes(data))
    if sys.byteorder != "little":
        packed.byteswap()
    return packed.tolist()


def _text_of(summary: bytes) -> str:
    return _inflate(summary).decode("utf-8")


def _deflate(data: bytes) -> bytes:
    import zlib

    packer = zlib.compressobj(6, zlib.DEFLATED, -15)  # raw deflate: no header or checksum per message
    return packer.compress(data) + packer.flush()


def _inflate(data: bytes) -> bytes:
    import zlib

    try:
        return zlib.decompress(data, -15)
    except zlib.error as exc:
        raise ValueError(f"a stored message is damaged ({exc})") from None


def fts5_available() -> bool:
    """Whether this Python's sqlite build has FTS5."""
    try:
        con = sqlite3.connect(":memory:")
        try:
            con.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
        finally:
            con.close()
    except sqlite3.DatabaseError:
        return False
    return True


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def timestamp(value: str, *, end: bool = False) -> str:
    """An ISO 8601 date or time as the store's UTC form; a bare date as ``end`` of that day or its start."""
    text = value.strip()
    try:
        when = _dt.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise InputError(f"not an ISO 8601 date or time: {value!r}") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.timezone.utc)
    if end and len(text) == 10:
        when += _dt.timedelta(days=1, seconds=-1)
    return when.astimezone(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


_SURROGATE = re.compile("[\ud800-\udfff]")


def sql_text(value: Any) -> Any:
    """``value`` as SQLite can take it: a string holding a lone UTF-16 surrogate (which JSON
    text may carry, and UTF-8 cannot) has it written as JSON writes it (``\\ud800``); anything
    else is itself. The messages themselves are stored as their JSON bytes, byte for byte."""
    if not isinstance(value, str):
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", value)
    return value


# --- what a message says ---------------------------------------------------------------------

def _strings(value: Any, out: list) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, list):
        for item in value:
            _strings(item, out)
    elif isinstance(value, dict):
        for key, item in value.items():
            if key in _SKIP_KEYS:
                continue
            if key == "arguments" and isinstance(item, str) and item[:1] in "{[":
                try:  # tool call arguments are JSON text: its strings, unescaped (a \n is a line break)
                    item = jsonio.loads(item)
                except (ValueError, InputError):
                    pass
            _strings(item, out)


def message_text(msg: Any) -> str:
    """The searchable text of a message: its text parts, tool call names and arguments, tool
    results (every string but ids, block types and binary payloads)."""
    out: list = []
    _strings(msg, out)
    return "\n".join(out)


def _call_names(msg: dict) -> list:
    """``[(id, name)]`` of the tool calls a message makes (OpenAI tool_calls, Anthropic tool_use)."""
    found = []
    calls = msg.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:
        if isinstance(call, dict):
            fn = call.get("function")
            name = fn.get("name") if isinstance(fn, dict) else call.get("name")
            if isinstance(name, str):
                found.append((call_id(call) or None, name))
    content = msg.get("content")
    for part in content if isinstance(content, list) else []:
        if isinstance(part, dict) and part.get("type") == "tool_use" and isinstance(part.get("name"), str):
            found.append((part.get("id"), part["name"]))
    return found


def tool_names(messages: list) -> list:
    """Per message, the tool names it calls or answers (comma-joined) or None."""
    by_id: dict = {}
    out = []
    for msg in messages:
        if not isinstance(msg, dict):
            out.append(None)
            continue
        names = []
        for ident, name in _call_names(msg):
            if isinstance(ident, str):
                by_id[ident] = name
            names.append(name)
        if msg.get("role") == "tool":
            name = msg.get("name") or msg.get("tool_name") or by_id.get(msg.get("tool_call_id"))
            if isinstance(name, str):
                names.append(name)
        content = msg.get("content")
        for part in content if isinstance(content, list) else []:
            if isinstance(part, dict) and part.get("type") == "tool_result":
                name = by_id.get(part.get("tool_use_id"))
                if isinstance(name, str):
                    names.append(name)
        out.append(",".join(dict.fromkeys(n.replace(",", " ") for n in names)) or None)
    return out


HEAD_MESSAGES = 4  # messages after the system prompt that name a conversation


def session_of(doc: Any, messages: list) -> str:
    """The session a transcript belongs to: the document's own ``session_id`` (or ``id``) when it
    keeps one, else a stable hash of its head: the system prompt (without the note compress adds
    to it) and the first :data:`HEAD_MESSAGES` messages after it. (Not just the first user
    message: agents inject the same environment or AGENTS.md text as the first one of every
    session in a project.) Only a first compaction needs it: later ones join their parent's."""
    if isinstance(doc, dict):
        for key in ("session_id", "id"):
            if isinstance(doc.get(key), str) and doc[key].strip():
                return doc[key].strip()
    digest = hashlib.sha256()
    system = next((m for m in messages if isinstance(m, dict) and m.get("role") == "system"), None)
    digest.update(jsonio.dumps(system if system is None else {**system, "content": _without_note(system.get("content"))}))
    for msg in [m for m in messages if m is not system][:HEAD_MESSAGES]:
        digest.update(jsonio.dumps(msg))
    return "s-" + digest.hexdigest()[:12]


def _without_note(content: Any) -> Any:
    """A system prompt as it was before compress added its compaction note (the session's head
    must hash the same in every round)."""
    from hermesctx.summary.text import NOTE_BASE

    if isinstance(content, str) and NOTE_BASE in content:
        return content[:content.index(NOTE_BASE)].rstrip()
    if isinstance(content, list):
        return [p for p in content if not (isinstance(p, dict) and NOTE_BASE in str(p.get("text", "")))]
    return content


def span_id(session: str, messages: list, blobs: list | None = None) -> str:
    """The id of the span holding ``messages`` in ``session``: ``hx-`` and 12 hex digits of their hash."""
    digest = hashlib.sha256(session.encode("utf-8", "surrogatepass") + b"\0")
    for blob in blobs if blobs is not None else (jsonio.dumps(m) for m in messages):
        digest.update(blob)
    return "hx-" + digest.hexdigest()[:12]


# --- queries ---------------------------------------------------------------------------------

MAX_QUERY_CHARS = 1000  # a query longer than this is a usage error (exit 2), as the agent tool's
MAX_QUERY_WORDS = 32  # every word is a phrase to match: their number bounds the work of a search
MAX_QUERY_TOKENS = 256  # letters-and-digits runs, over all words
MAX_LIMIT = 1000  # hits at most, on the command line (recall --limit)


def query_words(query: str) -> list:
    """The words of a query, each as its tokens (lower case); every word must match, as a phrase.
    A query past :data:`MAX_QUERY_CHARS`, :data:`MAX_QUERY_WORDS` or :data:`MAX_QUERY_TOKENS`
    is a :class:`UsageError` (checked first, in time linear in the query)."""
    if len(query) > MAX_QUERY_CHARS:
        raise UsageError(f"the query is {len(query):,} characters long; at most {MAX_QUERY_CHARS:,}")
    words = [toks for toks in ([t.lower() for t in _TOKEN.findall(w)] for w in query.split()) if toks]
    if len(words) > MAX_QUERY_WORDS or sum(map(len, words)) > MAX_QUERY_TOKENS:
        raise UsageError(f"the query has {len(words)} words ({sum(map(len, words))} terms); at most "
                         f"{MAX_QUERY_WORDS} words and {MAX_QUERY_TOKENS} terms")
    if not words:
        raise InputError(f"the query {query!r} has no word to search for (letters or digits)")
    return words


def _fts_query(words: list) -> str:
    return " AND ".join('"' + " ".join(toks) + '"' for toks in words)


def _scan_score(body: str, words: list) -> float:
    """0 when a word is missing, else how often the words occur over the text's length (log)."""
    tokens = [t.lower() for t in _TOKEN.findall(body)]
    total = 0
    for toks in words:
        n = len(toks)
        hits = sum(1 for i in range(len(tokens) - n + 1) if tokens[i:i + n] == toks)
        if not hits:
            return 0.0
        total += hits
    return total / (1.0 + math.log(1 + len(tokens)))


def _phrase(toks: list) -> re.Pattern:
    return re.compile(r"(?<![^\W_])" + r"[\W_]+".join(map(re.escape, toks)) + r"(?![^\W_])", re.IGNORECASE)


def snippet(body: str, words: list) -> str:
    """The text around the first matching term, redacted. Only a window of the text is redacted,
    with a margin wider than any secret on each side, so a secret cut by the window is whole
    where it is masked."""
    from hermesctx.redact import _MARGIN, redact

    phrases = [_phrase(toks) for toks in words]
    at = min((m.start() for m in (p.search(body) for p in phrases) if m), default=0)
    lo, hi = max(0, at - _SNIPPET // 2 - _MARGIN), min(len(body), at + _SNIPPET * 2 + _MARGIN)
    text = redact(body[lo:hi])
    found = [m.start() for m in (p.search(text) for p in phrases) if m]
    at = min(found) if found else min(at - lo, len(text))  # (the term itself masked: about where it was)
    start, end = max(0, at - _SNIPPET // 2), min(len(text), at + _SNIPPET * 3 // 2)
    cut = " ".join(text[start:end].split())
    return ("…" if start + lo else "") + cut + ("…" if end < len(text) or hi < len(body) else "")


# --- the store -------------------------------------------------------------------------------

def _check_path(path: str, create: bool) -> bool:
    """Refuse what is not a regular SQLite file (never following a symlink, never blocking on a
    FIFO); True when the file does not exist yet."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        if not create:
            raise FileIOError(f"no archive store at {path}") from None
        return True
    except OSError as exc:
        raise FileIOError(f"cannot read archive store {path}: {exc.strerror or exc}") from None
    if stat.S_ISLNK(info.st_mode):
        raise FileIOError(f"refusing archive store {path}: a symlink")
    if not stat.S_ISREG(info.st_mode):
        raise FileIOError(f"refusing archive store {path}: not a regular file")
    if info.st_size:
        try:
            fd = os.open(path, _FLAGS)
        except OSError as exc:
            raise FileIOError(f"cannot read archive store {path}: {exc.strerror or exc}") from None
        with os.fdopen(fd, "rb") as handle:
            if handle.read(len(_HEADER)) != _HEADER:
                raise FileIOError(f"refusing archive store {path}: not a SQLite database")
    return False


def is_store_path(path: str) -> bool:
    """Whether ``--archive PATH`` means a store (``.sqlite``/``.db``, or an existing SQLite file)
    rather than a directory of JSON Lines archives."""
    if path.endswith((".sqlite", ".sqlite3", ".db")):
        return True
    try:
        info = os.lstat(path)
    except OSError:
        return False
    if stat.S_ISDIR(info.st_mode):
        return False
    if not stat.S_ISREG(info.st_mode):
        return True  # a symlink or FIFO where a store could be: Store.open refuses it by name
    try:
        fd = os.open(path, _FLAGS)
        with os.fdopen(fd, "rb") as handle:
            return handle.read(len(_HEADER)) == _HEADER
    except OSError:
        return False


class Store:
    """One archive store file. Open with :meth:`open`; a context manager."""

    def __init__(self, con: sqlite3.Connection, path: str, fts: bool):
        self.con = con
        self.path = path
        self.fts = fts

    @classmethod
    def open(cls, path: str, *, create: bool = True, fts: bool | None = None) -> Store:
        """The store at ``path`` (created, mode 0600, when missing and ``create``); ``fts=False``
        searches by plain scan even where FTS5 exists (the fallback, for tests)."""
        path = os.path.abspath(path)
        if _check_path(path, create):
            try:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600))
            except FileExistsError:
                _check_path(path, create)  # another process made it meanwhile
            except OSError as exc:
                raise FileIOError(f"cannot create archive store {path}: {exc.strerror or exc}") from None
        use_fts = fts5_available() if fts is None else (fts and fts5_available())
        try:
            con = sqlite3.connect(path, timeout=60, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise FileIOError(f"cannot open archive store {path}: {exc}") from None
        store = cls(con, path, use_fts)
        try:
            store._setup()
        except sqlite3.DatabaseError as exc:
            con.close()
            raise FileIOError(f"cannot use archive store {path}: {exc}") from None
        except BaseException:
            con.close()
            raise
        return store

    def _setup(self) -> None:
        con = self.con
        con.execute("PRAGMA busy_timeout = 60000")
        self._journal_wal()
        version = con.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise FileIOError(f"archive store {self.path} has schema version {version}; this hermesctx "
                              f"reads up to {SCHEMA_VERSION} (upgrade hermesctx)")
        has_fts = self._has_fts()
        if version == SCHEMA_VERSION and (has_fts or not self.fts):
            return
        with self._write():
            version = con.execute("PRAGMA user_version").fetchone()[0]  # (another process may have done it)
            if version == 1:
                self._from_v1()
            for statement in _SCHEMA.split(";"):  # (executescript would commit the transaction)
                if statement.strip():
                    con.execute(statement)
            if (self.fts and not self._has_fts()) or version == 1:  # a store made without FTS5, or a v1 one
                con.execute("DROP TABLE IF EXISTS fts")
                if self.fts:
                    con.execute(_FTS)
                self._reindex()
            con.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _from_v1(self) -> None:
        """A version 1 store's spans, in the tables of version 2 (in the open transaction)."""
        con = self.con
        con.execute("DROP TABLE IF EXISTS fts")
        for table in _V1_TABLES:
            con.execute(f"ALTER TABLE {table} RENAME TO v1_{table}")
        for name in ("spans_session", "spans_source"):
            con.execute(f"DROP INDEX IF EXISTS {name}")
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                con.execute(statement)
        rows = con.execute('SELECT id, session, parent, created, messages, compressed, start, "end", summary, source '
                           "FROM v1_spans ORDER BY rowid").fetchall()
        for row in rows:
            blobs = [bytes(b) for (b,) in con.execute(
                "SELECT b.data FROM v1_span_messages m JOIN v1_blobs b ON b.hash = m.hash WHERE m.span = ? "
                "ORDER BY m.position", (row[0],))]
            self._insert_span(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], row[8] or "",
                              row[9], [self._blob(b) for b in blobs])
        for table in _V1_TABLES:
            con.execute(f"DROP TABLE v1_{table}")

    def _insert_span(self, span: str, session: str, parent: str | None, created: str, count: int,
                     compressed: int | None, start: int | None, end: int | None, summary: str,
                     source: str | None, ids: list) -> int:
        """One span row (in the open transaction), its messages listed after what they share
        with the newest span of the session; its ``n``."""
        base, shared = None, 0
        row = self.con.execute("SELECT max(n) FROM spans WHERE session = ?", (session,)).fetchone()
        if row[0] is not None:
            before = self._ids(row[0])
            while shared < min(len(before), len(ids)) and before[shared] == ids[shared]:
                shared += 1
            if shared >= 8:
                base = row[0]
            else:
                shared = 0
        return self.con.execute(
            'INSERT INTO spans (id, session, parent, created, messages, compressed, start, "end", summary, '
            "summary_chars, source, base, shared, blobs) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (span, session, parent, created, count, compressed, start, end, _deflate(summary.encode("utf-8")),
             len(summary), source, base, shared, _pack(ids[shared:]))).lastrowid

    def _unindex_summary(self, session: str) -> None:
        """Take the newest summary of ``session`` out of the search index (a contentless index is
        told the text it forgets), before a newer one of the session is added."""
        row = self.con.execute("SELECT n, summary, summary_chars FROM spans WHERE session = ? ORDER BY n DESC "
                               "LIMIT 1", (session,)).fetchone()
        if row is not None and row[2] > 0:  # (the newest span is the one whose summary is indexed)
            self.con.execute("INSERT INTO fts (fts, rowid, body) VALUES ('delete', ?, ?)",
                             (-row[0], _inflate(row[1]).decode("utf-8")))

    def _ids(self, n: int) -> list:
        """The blob ids of the messages of span ``n``, in order (following its bases)."""
        parts: list = []
        want = None
        seen = set()
        while n is not None and n not in seen:
            seen.add(n)
            row = self.con.execute("SELECT base, shared, blobs FROM spans WHERE n = ?", (n,)).fetchone()
            if row is None:
                raise ValueError(f"span {n} is missing")
            base, shared, own = row
            own = _unpack(own)
            if want is not None:  # (only the first ``want`` of this one's messages are the later span's)
                keep = want - shared
                own = own[:max(0, keep)]
            parts.append(own)
            want = shared if want is None else min(want, shared)
            n = base if shared else None
        ids: list = []
        for own in reversed(parts):
            ids += own
        return ids

    def _blob(self, blob: bytes) -> int:
        """The id of ``blob`` (a message's JSON bytes), stored once (in the open transaction): the
        first 8 bytes of its sha256 as a number, the next free one after it should another
        message hold that number (its bytes are compared: an id never names two messages)."""
        bid = int.from_bytes(hashlib.sha256(blob).digest()[:8], "little", signed=True)
        while True:
            row = self.con.execute("SELECT data FROM blobs WHERE id = ?", (bid,)).fetchone()
            if row is None:
                self.con.execute("INSERT INTO blobs (id, size, data) VALUES (?, ?, ?)", (bid, len(blob), _deflate(blob)))
                return bid
            if _inflate(row[0]) == blob:
                return bid
            bid = bid + 1 if bid < (1 << 63) - 1 else -(1 << 63)

    def _reindex(self) -> None:
        """``texts`` and the search index made again from the spans (a migrated or pruned store)."""
        con = self.con
        con.execute("DELETE FROM texts")
        con.execute("DELETE FROM sessions")
        indexed = self._has_fts()
        if indexed:
            con.execute("INSERT INTO fts (fts) VALUES ('delete-all')")
        newest = dict(con.execute("SELECT session, max(n) FROM spans GROUP BY session").fetchall())
        for n, session, summary in con.execute("SELECT n, session, summary FROM spans ORDER BY n").fetchall():
            summary = _inflate(summary).decode("utf-8")
            if indexed and summary and newest.get(session) == n:  # the session's newest summary alone
                con.execute("INSERT INTO fts (rowid, body) VALUES (?, ?)", (-n, summary))
            ids = self._ids(n)
            self._index(n, session, ids, self._messages(ids), indexed)

    def _messages(self, ids: list) -> list:
        return [jsonio.loads(b) for b in self._blobs(ids)]

    def _blobs(self, ids: list) -> list:
        """The JSON bytes of the blobs ``ids``, in their order."""
        found: dict = {}
        unique = list(dict.fromkeys(ids))
        for at in range(0, len(unique), 500):
            chunk = unique[at:at + 500]
            for bid, data in self.con.execute(
                    f"SELECT id, data FROM blobs WHERE id IN ({', '.join('?' * len(chunk))})", chunk):
                found[bid] = _inflate(data)
        return [found[i] for i in ids]

    def _index(self, span: int, session: str, ids: list, messages: list, indexed: bool) -> None:
        """The searchable text of each message of a span (``spans.n``) not seen before in its session."""
        con = self.con
        name = sql_text(session)
        con.execute("INSERT OR IGNORE INTO sessions (name) VALUES (?)", (name,))
        (sid,) = con.execute("SELECT id FROM sessions WHERE name = ?", (name,)).fetchone()
        tools = tool_names(messages)
        for position, (msg, bid) in enumerate(zip(messages, ids)):
            role = msg.get("role") if isinstance(msg, dict) and isinstance(msg.get("role"), str) else None
            cur = con.execute(
                "INSERT OR IGNORE INTO texts (session, blob, span, position, role, tool) VALUES (?, ?, ?, ?, ?, ?)",
                (sid, bid, span, position, sql_text(role), sql_text(tools[position])))
            if cur.rowcount and indexed:
                con.execute("INSERT INTO fts (rowid, body) VALUES (?, ?)", (cur.lastrowid, sql_text(message_text(msg))))

    def _journal_wal(self, wait: float = 60.0) -> None:
        """WAL journaling, set once per file. Switching to it needs the database to itself, and
        SQLite answers "locked" at once instead of waiting for the busy timeout when another
        process has the new file open (two compactions starting together): wait for it here."""
        import time

        deadline = time.monotonic() + wait
        while True:
            try:
                if self.con.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                    self.con.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.005)

    def _has_fts(self) -> bool:
        return self.con.execute("SELECT 1 FROM sqlite_master WHERE name = 'fts'").fetchone() is not None

    def _write(self):
        store = self

        class _Txn:
            def __enter__(self):
                store.con.execute("BEGIN IMMEDIATE")

            def __exit__(self, kind, exc, tb):
                store.con.execute("COMMIT" if kind is None else "ROLLBACK")
                return False
        return _Txn()

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- writing ---

    def add(self, messages: list, *, session: str, summary: str = "", compressed: int | None = None,
            start: int | None = None, end: int | None = None, parent: str | None = None,
            created: str | None = None, source: str | None = None) -> str:
        """Store one compaction (``messages``: the transcript it took as input; ``start:end`` its
        summarized middle; ``compressed``: how many messages it gave back) and return its span id.
        A ``parent`` this store does not hold is not recorded."""
        blobs = [jsonio.dumps(m) for m in messages]
        span = span_id(session, messages, blobs)
        created = created or now()
        try:
            with self._write():
                con = self.con
                indexed = self._has_fts()
                if con.execute("SELECT 1 FROM spans WHERE id = ?", (span,)).fetchone():
                    if source:  # a migrated archive the store already held as a compaction
                        con.execute("UPDATE spans SET source = COALESCE(source, ?) WHERE id = ?", (sql_text(source), span))
                    return span
                if parent is not None and not con.execute("SELECT 1 FROM spans WHERE id = ?", (parent,)).fetchone():
                    parent = None
                ids = [self._blob(blob) for blob in blobs]
                if indexed:  # the session's newest span's summary alone is searched: it supersedes
                    self._unindex_summary(sql_text(session))
                n = self._insert_span(span, sql_text(session), parent, created, len(blobs), compressed, start, end,
                                      sql_text(summary), sql_text(source), ids)
                if indexed and summary:
                    con.execute("INSERT INTO fts (rowid, body) VALUES (?, ?)", (-n, sql_text(summary)))
                self._index(n, session, ids, messages, indexed)
        except sqlite3.DatabaseError as exc:
            raise FileIOError(f"cannot write archive store {self.path}: {exc}") from None
        return span

    # --- reading ---

    def span(self, span: str) -> dict:
        """The record of one span (``{"span", "session", "parent", "created", "messages",
        "compressed", "start", "end", "summary", "source"}``); an unknown or malformed id is InputError."""
        if not isinstance(span, str) or not SPAN_ID.fullmatch(span):
            raise InputError(f"{str(span)[:40]!r} is not a span id (hx- and 12 hex digits)")
        row = self._read('SELECT id, session, parent, created, messages, compressed, start, "end", summary, source '
                         "FROM spans WHERE id = ?", (span,))
        if not row:
            raise InputError(f"unknown span {span} in {self.path}")
        keys = ("span", "session", "parent", "created", "messages", "compressed", "start", "end", "summary", "source")
        record = dict(zip(keys, row[0]))
        record["summary"] = _inflate(record["summary"]).decode("utf-8")
        return record

    def span_for_source(self, name: str) -> str | None:
        """The span migrated from the JSON Lines archive ``name`` (``<hash>.jsonl``), if any."""
        row = self._read("SELECT id FROM spans WHERE source = ? ORDER BY n LIMIT 1", (name,))
        return row[0][0] if row else None

    def newest(self, spans: list, sources: list = ()) -> str | None:
        """Of the given span ids and migrated JSON Lines names, the span stored last (None: none known)."""
        spans = [s for s in spans if isinstance(s, str) and SPAN_ID.fullmatch(s)]
        marks = ", ".join("?" * len(spans)) or "NULL"
        names = ", ".join("?" * len(sources)) or "NULL"
        row = self._read(f"SELECT id FROM spans WHERE id IN ({marks}) OR source IN ({names}) "
                         "ORDER BY n DESC LIMIT 1", (*spans, *sources))
        return row[0][0] if row else None

    def expand_bytes(self, span: str) -> list:
        """The messages of a span as their stored bytes (one JSON line each)."""
        self.span(span)
        (n,) = self._read("SELECT n FROM spans WHERE id = ?", (span,))[0]
        try:
            return self._blobs(self._ids(n))
        except (KeyError, ValueError):  # (a message missing, or damaged)
            raise FileIOError(f"archive store {self.path}: span {span} refers to a message it does not hold "
                              "whole") from None

    def expand(self, span: str) -> list:
        """The messages a span holds (the transcript its compaction replaced), in order, exactly
        as they were. An unknown id is InputError (exit 3) naming the id."""
        try:
            return [jsonio.loads(b) for b in self.expand_bytes(span)]
        except ValueError:
            raise FileIOError(f"archive store {self.path}: span {span} holds a message that is not JSON") from None

    def chain(self, span: str) -> list:
        """The span and its ancestors, newest first (a cycle is cut)."""
        out, seen = [], set()
        while span and span not in seen:
            seen.add(span)
            out.append(span)
            span = self.span(span)["parent"]
        return out

    def spans(self, *, session: str | None = None) -> list:
        """``{"span", "session", "parent", "created", "messages", "summary_chars"}`` per span, oldest first."""
        sql = "SELECT id, session, parent, created, messages, summary_chars FROM spans"
        rows = self._read(sql + (" WHERE session = ?" if session else "") + " ORDER BY n",
                          (session,) if session else ())
        keys = ("span", "session", "parent", "created", "messages", "summary_chars")
        return [dict(zip(keys, r)) for r in rows]

    def search(self, query: str, *, session: str | None = None, role: str | None = None,
               tool: str | None = None, since: str | None = None, until: str | None = None,
               limit: int = 20) -> list:
        """BM25-ranked hits (FTS5; a plain scan when the sqlite build lacks FTS5), best first. Each hit:
        ``{"span", "kind": "message" | "summary", "session", "position", "role", "tool", "created",
        "score", "snippet"}`` (snippet: the text around the terms, redacted)."""
        words = query_words(query)
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise UsageError("the limit must be a whole number")
        limit = max(0, min(limit, 1 << 62))  # (what SQLite's integers hold; the command line: MAX_LIMIT)
        since = timestamp(since) if since else None
        until = timestamp(until, end=True) if until else None
        msg_where, msg_args = ["1"], []
        # summaries: the newest of each session (it supersedes the older ones, which its span's
        # messages and their chain still hold)
        sum_where, sum_args = ["s.summary_chars > 0", "s.n = (SELECT max(n) FROM spans o WHERE o.session = s.session)"], []
        for column, value in (("session", session), ("created >= ", since), ("created <= ", until)):
            if value is None:
                continue
            op = column if column.endswith(" ") else column + " = "
            msg_where.append("s." + op + "?")  # (a message's session and time: its span's)
            msg_args.append(value)
            sum_where.append("s." + op + "?")
            sum_args.append(value)
        if role is not None:
            msg_where.append("t.role = ?")
            msg_args.append(role)
        if tool is not None:
            msg_where.append("instr(',' || t.tool || ',', ?) > 0")
            msg_args.append("," + tool + ",")
        summaries = role is None and tool is None
        found: list = []
        if self.fts and self._has_fts():
            match = _fts_query(words)
            found += [(-rank, "message", row) for *row, rank in self._read(
                "SELECT s.id, s.session, t.position, t.role, t.tool, s.created, t.blob, bm25(fts) AS rank "
                "FROM fts JOIN texts t ON t.id = fts.rowid JOIN spans s ON s.n = t.span "
                "WHERE fts MATCH ? AND fts.rowid > 0 AND "
                + " AND ".join(msg_where) + " ORDER BY rank LIMIT ?", (match, *msg_args, limit))]
            if summaries:
                found += [(-rank, "summary", row) for *row, rank in self._read(
                    "SELECT s.id, s.session, NULL, NULL, NULL, s.created, s.summary, bm25(fts) AS rank "
                    "FROM fts JOIN spans s ON -s.n = fts.rowid WHERE fts MATCH ? AND fts.rowid < 0 AND "
                    + " AND ".join(sum_where) + " ORDER BY rank LIMIT ?", (match, *sum_args, limit))]
            found.sort(key=lambda f: -f[0])
            found = [(score, kind, (*row[:6], self._body(row[6]) if kind == "message" else _text_of(row[6])))
                     for score, kind, row in found[:max(0, limit)]]
        else:
            rows = [("message", r) for r in self._read(
                "SELECT s.id, s.session, t.position, t.role, t.tool, s.created, t.blob FROM texts t "
                "JOIN spans s ON s.n = t.span WHERE "
                + " AND ".join(msg_where), tuple(msg_args))]
            if summaries:
                rows += [("summary", r) for r in self._read(
                    "SELECT s.id, s.session, NULL, NULL, NULL, s.created, s.summary FROM spans s WHERE "
                    + " AND ".join(sum_where), tuple(sum_args))]
            for kind, row in rows:
                body = self._body(row[6]) if kind == "message" else _text_of(row[6])
                score = _scan_score(body, words)
                if score:
                    found.append((score, kind, (*row[:6], body)))
        found.sort(key=lambda f: -f[0])
        return [{"span": r[0], "kind": kind, "session": r[1], "position": r[2], "role": r[3], "tool": r[4],
                 "created": r[5], "score": round(score, 4), "snippet": snippet(r[6], words)}
                for score, kind, r in found[:max(0, limit)]]

    def _body(self, blob: int) -> str:
        """The searchable text of a stored message (what its snippet is cut from)."""
        (data,) = self._blobs([blob])
        return sql_text(message_text(jsonio.loads(data)))

    # --- size ---

    def stats(self) -> dict:
        """What the store holds and what that costs: ``{"path", "bytes", "spans", "sessions",
        "messages" (over all spans), "unique_messages", "unique_bytes" (their JSON),
        "stored_bytes" (compressed), "oldest", "newest"}``."""
        spans, sessions, messages, oldest, newest = self._read(
            "SELECT count(*), count(DISTINCT session), COALESCE(sum(messages), 0), min(created), max(created) FROM spans")[0]
        unique, size, stored = self._read("SELECT count(*), COALESCE(sum(size), 0), COALESCE(sum(length(data)), 0) "
                                          "FROM blobs")[0]
        return {"path": self.path, "bytes": self.size(), "spans": spans, "sessions": sessions,
                "messages": messages, "unique_messages": unique, "unique_bytes": size, "stored_bytes": stored,
                "oldest": oldest, "newest": newest}

    def size(self) -> int:
        """The bytes the store takes on disk (its file and its write-ahead log)."""
        total = 0
        for suffix in ("", "-wal"):
            try:
                total += os.stat(self.path + suffix).st_size
            except OSError:
                pass
        return total

    def prune(self, *, before: str | None = None, keep_sessions: int | None = None) -> dict:
        """Remove the spans created before ``before`` (an ISO date or time) and those of every
        session but the ``keep_sessions`` most recently archived; then the messages no span
        refers to any more, the search index made again, and the file compacted (``VACUUM``).
        ``{"spans_removed", "sessions_removed", "messages_removed", "bytes_before", "bytes_after"}``."""
        if before is None and keep_sessions is None:
            raise UsageError("--prune needs --before DATE or --keep-sessions N")
        if keep_sessions is not None and keep_sessions < 0:
            raise UsageError("--keep-sessions must be 0 or more")
        cutoff = timestamp(before) if before else None
        size = self.size()
        con = self.con
        try:
            with self._write():
                sessions = con.execute("SELECT count(DISTINCT session) FROM spans").fetchone()[0]
                doomed = set()
                if cutoff is not None:
                    doomed |= {r[0] for r in con.execute("SELECT n FROM spans WHERE created < ?", (cutoff,))}
                if keep_sessions is not None:
                    doomed |= {r[0] for r in con.execute(
                        "SELECT n FROM spans WHERE session NOT IN (SELECT session FROM spans GROUP BY session "
                        "ORDER BY max(n) DESC LIMIT ?)", (keep_sessions,))}
                for n, base in con.execute("SELECT n, base FROM spans WHERE base IS NOT NULL").fetchall():
                    if base in doomed and n not in doomed:  # (its list, whole, before its base goes)
                        con.execute("UPDATE spans SET blobs = ?, base = NULL, shared = 0 WHERE n = ?",
                                    (_pack(self._ids(n)), n))
                for at in range(0, len(doomed), 500):
                    chunk = sorted(doomed)[at:at + 500]
                    con.execute(f"DELETE FROM spans WHERE n IN ({', '.join('?' * len(chunk))})", chunk)
                con.execute("UPDATE spans SET parent = NULL WHERE parent IS NOT NULL AND parent NOT IN (SELECT id FROM spans)")
                used = set()
                for (ids,) in con.execute("SELECT blobs FROM spans").fetchall():
                    used.update(_unpack(ids))  # (a span's own list: what it shares is its base's)
                unused = [r[0] for r in con.execute("SELECT id FROM blobs") if r[0] not in used]
                for at in range(0, len(unused), 500):
                    chunk = unused[at:at + 500]
                    con.execute(f"DELETE FROM blobs WHERE id IN ({', '.join('?' * len(chunk))})", chunk)
                left = con.execute("SELECT count(DISTINCT session) FROM spans").fetchone()[0]
                if doomed:
                    self._reindex()
            if doomed:
                con.execute("VACUUM")
                con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.DatabaseError as exc:
            raise FileIOError(f"cannot prune archive store {self.path}: {exc}") from None
        return {"spans_removed": len(doomed), "sessions_removed": sessions - left, "messages_removed": len(unused),
                "bytes_before": size, "bytes_after": self.size()}

    def _read(self, sql: str, args: tuple = ()) -> list:
        try:
            return self.con.execute(sql, tuple(sql_text(a) for a in args)).fetchall()
        except sqlite3.DatabaseError as exc:
            raise FileIOError(f"cannot read archive store {self.path}: {exc}") from None
