"""The compacted-away turns, kept on disk so ``compress --expand`` can bring them back.

``compress --archive DIR`` writes the whole input transcript (one message per line, JSON
Lines) to ``DIR/<sha256 of its content>.jsonl`` (atomic; the same transcript twice is one
file) and names the file in the summary's own text (:func:`note_line`: path, message counts),
so the note survives every send path (a message key would not: it is internal). ``expand``
swaps a compressed transcript back for the archived one, keeping any messages that were
appended after compression; it also reads the ``_hermesctx_archive`` key older releases put on
the summary message.

A note is text in the transcript, so anyone can forge one: ``expand`` takes only its file
*name*, which must be ``<32 hex>.jsonl``, and opens that name inside the configured archive
directory (``--archive DIR`` / ``archive.dir``), never the path the note gives. The file is
opened without following a symlink and without blocking (a FIFO is refused), must be a regular
file of at most :data:`MAX_BYTES`, and its content must hash to its name. Error texts name the
note's file name only, never what another file holds.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import stat

from hermesctx import jsonio, lazyre
from hermesctx.errors import FileIOError, InputError
from hermesctx.messages import messages_of, with_messages

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_BYTES = 256 * 1024 * 1024  # the largest archive --expand reads (256 MiB)
_NAME = lazyre.compile(r"[0-9a-f]{32}\.jsonl")
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_FLAGS = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
KEY = "_hermesctx_archive"  # where releases before the wire-ready output kept the note
_LINE_PATTERN = (r"\[The (\d+) messages before this compaction are archived (?:as span (hx-[0-9a-f]{12}) )?"
                 r"in (.+?) \(compressed to (\d+) messages\); `hermesctx compress --expand` restores them\.\]")
_LINE = lazyre.compile(_LINE_PATTERN)
_NOTE_LINES = lazyre.compile(r"\n*" + _LINE_PATTERN)


def note_line(note: dict) -> str:
    """The archive note, as a line of the summary text (a store's span id first: the handle
    `hermesctx recall --expand` takes). The archive is named by its file name: its directory is the
    user's business, not the model's (``--archive`` says where to look)."""
    span = f"as span {note['span']} " if note.get("span") else ""
    name = os.path.basename(note["path"])
    return (f"[The {note['messages']} messages before this compaction are archived {span}in {name} "
            f"(compressed to {note['compressed_messages']} messages); "
            "`hermesctx compress --expand` restores them.]")


NOTE_MARK = "messages before this compaction are archived"  # every note line holds it


def without_notes(text: str) -> str:
    """A previous summary without its archive note lines: the new summary gets a note of its own,
    and the older ones stay reachable through it (the newer archive holds the older summary, a
    store span its parent), so carrying them forward would only stack a note per round."""
    if NOTE_MARK not in text:
        return text
    return _NOTE_LINES.sub("", text)


def _find_note(messages: list) -> dict | None:
    """The newest archive note: a line in a message's text, or (older releases) its key."""
    from hermesctx.summary.text import text_view

    for msg in reversed(messages):
        if not isinstance(msg, dict):
            continue
        old = msg.get(KEY)
        if isinstance(old, dict):
            counts = (old.get("messages"), old.get("compressed_messages", 0))
            if not all(type(n) is int and n >= 0 for n in counts):
                raise InputError(f"the {KEY} note's message counts are not counts")
            return old
        found = _LINE.findall(text_view(msg.get("content")))
        if found:
            count, span, path, compressed = found[-1]
            note = {"path": path, "messages": int(count), "compressed_messages": int(compressed)}
            return {**note, "span": span} if span else note
    return None


def _span_notes(messages: list) -> list:
    """Every archive note line of the transcript that names a span (or a JSON Lines file), in order."""
    from hermesctx.summary.text import text_view

    notes = []
    for msg in messages:
        if isinstance(msg, dict):
            for count, span, path, compressed in _LINE.findall(text_view(msg.get("content"))):
                notes.append({"span": span or None, "path": path, "messages": int(count),
                              "compressed_messages": int(compressed)})
    return notes


def _file_notes(notes: list) -> dict:
    """The notes that name a JSON Lines archive (no span), by its file name."""
    found = {}
    for note in notes:
        name = os.path.basename(note["path"])
        if not note["span"] and _NAME.fullmatch(name):
            found[name] = note
    return found


def _have(path: str, size: int) -> bool:
    """``path`` is already there: a regular file (not a symlink) of the right size."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_size == size


class Archiver:
    def __init__(self, directory: str):
        self.directory = os.path.abspath(directory)

    def _file(self, messages: list) -> tuple[str, bytes]:
        data = b"".join(jsonio.dumps(m) for m in messages)
        return os.path.join(self.directory, hashlib.sha256(data).hexdigest()[:32] + ".jsonl"), data

    def note(self, messages: list, compressed_length: int, **_compaction) -> dict:
        """The note naming the file the transcript will be archived in (nothing written yet)."""
        return {"path": self._file(messages)[0], "messages": len(messages), "compressed_messages": compressed_length}

    def __call__(self, messages: list, compressed_length: int, **_compaction) -> dict:
        """Write the archive of ``messages``; its note."""
        path, data = self._file(messages)
        try:
            os.makedirs(self.directory, exist_ok=True)
            if not _have(path, len(data)):
                jsonio.write_atomic(path, data, mode=0o600)  # a rename: replaces a planted symlink
        except OSError as exc:
            raise FileIOError(f"cannot write archive {path}: {exc.strerror or exc}") from None
        return {"path": path, "messages": len(messages), "compressed_messages": compressed_length}


def _read_archive(directory: str, note: dict) -> bytes:
    """The verified bytes of the archive the note names, from ``directory`` only."""
    path = note.get("path")
    name = os.path.basename(path) if isinstance(path, str) else ""
    if not _NAME.fullmatch(name):
        raise InputError("the archive note does not name an archive (<sha256>.jsonl); nothing read")
    where = os.path.join(directory, name)
    try:
        fd = os.open(where, _FLAGS)
    except OSError as exc:
        if os.path.islink(where):
            raise FileIOError(f"refusing archive {name}: a symlink in the archive directory") from None
        raise FileIOError(f"cannot read archive {name} in {directory}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)  # (before fdopen, which refuses a directory in words of its own)
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise FileIOError(f"refusing archive {name}: not a regular file")
    with os.fdopen(fd, "rb") as handle:
        if info.st_size > MAX_BYTES:
            raise FileIOError(f"refusing archive {name}: larger than {MAX_BYTES >> 20} MiB")
        data = handle.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES or hashlib.sha256(data).hexdigest()[:32] != name[:32]:
        raise FileIOError(f"refusing archive {name}: its content does not match its name")
    return data


def _newest_file_note(directory: str, messages: list, note: dict) -> tuple[dict, bytes | None]:
    """The note of the newest compaction among the JSON Lines archives the transcript names, with
    its verified bytes when they were read to decide. Place in the transcript does not tell it (an
    older summary can stay in the tail after a newer one), content does: a compaction archives its
    input, so the newest archive holds the notes of the older ones and none holds the newest's
    name (a hash of content that holds theirs). Archives that cannot be read only take no part;
    when content does not single one out, ``note`` (the last in place) stands."""
    names = _file_notes(_span_notes(messages))
    if len(names) < 2:
        return note, None
    data = {}
    for name, found in names.items():
        try:
            data[name] = _read_archive(directory, found)
        except (FileIOError, InputError):
            continue
    newest = [name for name in data
              if not any(name.encode() in other for key, other in data.items() if key != name)]
    if len(newest) != 1:
        return note, None
    return names[newest[0]], data[newest[0]]


def expand(doc: Any, *, directory: str) -> tuple[Any, dict]:
    """The transcript from before compression (plus messages added since), from its archive
    in ``directory`` (whatever path the note gives, only its name is looked up there)."""
    messages = messages_of(doc)
    note = _find_note(messages)
    if note is None:
        return doc, {"expanded": False, "reason": "no archived compaction in this transcript"}
    directory = os.path.abspath(directory)
    note, data = _newest_file_note(directory, messages, note)
    if data is None:
        data = _read_archive(directory, note)
    name = os.path.basename(note["path"])
    try:
        original = [jsonio.loads(line) for line in data.splitlines() if line.strip()]
    except (ValueError, InputError):
        raise InputError(f"archive {name} is not JSON Lines") from None
    if len(original) != note.get("messages"):
        raise InputError(f"archive {name} does not hold the {note.get('messages')} messages its note says")
    later = messages[note.get("compressed_messages", len(messages)):]
    return with_messages(doc, original + later), {"expanded": True, "archive": os.path.join(directory, name),
                                                  "restored": len(original), "kept_after": len(later)}


# --- the SQLite store (hermesctx.store): one span per compaction ------------------------------

def _linked(store, messages: list) -> dict | None:
    """The newest compaction of this store that the transcript's archive notes name (by span id,
    or by the JSON Lines archive it was migrated from), or None. Newest by the store's own order,
    not by place in the transcript: an older summary can sit in the tail after a newer one. The
    notes are only links here: nothing is read through them but the store's own records."""
    notes = _span_notes(messages)
    spans = {n["span"]: n for n in notes if n["span"]}
    sources = _file_notes(notes)
    newest = store.newest(list(spans), list(sources))
    if newest is None:
        return None
    record = store.span(newest)
    return {**record, "note": spans.get(newest) or sources.get(record["source"])}


class StoreArchiver:
    """``compress --archive FILE.sqlite``: each compaction becomes a span of the store. The span's
    session is ``session`` when given, else the session of the span the transcript's previous
    summary names (so every round of one conversation lands in one session), else the
    document's own id or a hash of its head (:func:`hermesctx.store.session_of`)."""

    def __init__(self, path: str, session: str | None = None, doc: Any = None):
        self.path = os.path.abspath(path)
        self.session = session
        self.doc = doc

    def for_doc(self, doc: Any) -> StoreArchiver:
        return StoreArchiver(self.path, self.session, doc)

    def _place(self, store, messages: list) -> tuple[str, str | None]:
        """``(session, parent span)`` of a compaction of ``messages``."""
        from hermesctx.store import session_of

        parent = _linked(store, messages)
        session = self.session or (parent["session"] if parent else None) \
            or session_of(self.doc if self.doc is not None else messages, messages)
        return session, parent["span"] if parent else None

    def _note(self, span: str, messages: list, compressed_length: int) -> dict:
        return {"path": self.path, "span": span, "messages": len(messages), "compressed_messages": compressed_length}

    def note(self, messages: list, compressed_length: int, **_compaction) -> dict:
        """The note naming the span the compaction will be stored as (nothing written yet)."""
        from hermesctx.store import Store, span_id

        with Store.open(self.path) as store:
            session, _ = self._place(store, messages)
        return self._note(span_id(session, messages), messages, compressed_length)

    def __call__(self, messages: list, compressed_length: int, *, summary: str = "",
                 start: int | None = None, end: int | None = None) -> dict:
        """Store the compaction as a span; its note."""
        from hermesctx.store import Store

        with Store.open(self.path) as store:
            session, parent = self._place(store, messages)
            span = store.add(messages, session=session, summary=summary, compressed=compressed_length,
                             start=start, end=end, parent=parent)
        return self._note(span, messages, compressed_length)


def expand_store(doc: Any, *, path: str) -> tuple[Any, dict]:
    """The transcript from before its newest compaction (plus messages added since), from the
    store at ``path`` only: the note's span id is looked up there (its file path is ignored) and
    the count of messages the compaction gave back is the store's, not the note's."""
    from hermesctx.store import Store

    messages = messages_of(doc)
    note = _find_note(messages)
    if note is None:
        return doc, {"expanded": False, "reason": "no archived compaction in this transcript"}
    with Store.open(path, create=False) as store:
        record = _linked(store, messages)
        if record is None and note.get("span") is not None:
            store.span(note["span"])  # an unknown span: InputError naming the id
        if record is None:
            raise InputError("the archive note names no span of this store (a JSON Lines archive not "
                             "migrated: `hermesctx recall --migrate DIR`); nothing read")
        original = store.expand(record["span"])
    compressed = record["compressed"] if record["compressed"] is not None else record["note"]["compressed_messages"]
    later = messages[compressed:]
    return with_messages(doc, original + later), {"expanded": True, "archive": store.path, "span": record["span"],
                                                  "restored": len(original), "kept_after": len(later)}


def unwind(doc: Any, *, path: str) -> tuple[Any, int]:
    """``doc`` with every compaction the store holds reversed, newest first (``compress --expand``
    until no note of the store is left), and how many were."""
    count = 0
    while True:
        back, report = expand_store(doc, path=path)
        if not report["expanded"]:
            return doc, count
        doc, count = back, count + 1


def migrate(directory: str, path: str) -> dict:
    """Import every ``<hash>.jsonl`` archive of ``directory`` into the store at ``path``, oldest
    first, each read with the checks of ``--expand`` (a refused file is skipped and named);
    idempotent: an archive imported before is not imported again."""
    from hermesctx.store import Store, session_of

    directory = os.path.abspath(directory)
    try:
        names = [n for n in os.listdir(directory) if _NAME.fullmatch(n)]
    except OSError as exc:
        raise FileIOError(f"cannot read archive directory {directory}: {exc.strerror or exc}") from None

    def mtime(name: str) -> float:
        try:
            return os.lstat(os.path.join(directory, name)).st_mtime
        except OSError:
            return 0.0
    names.sort(key=lambda n: (mtime(n), n))
    report: dict = {"imported": 0, "already": 0, "refused": [], "store": os.path.abspath(path)}
    with Store.open(path) as store:
        for name in names:
            if store.span_for_source(name):
                report["already"] += 1
                continue
            try:
                data = _read_archive(directory, {"path": name})
                messages = [jsonio.loads(line) for line in data.splitlines() if line.strip()]
            except (FileIOError, InputError, ValueError) as exc:
                report["refused"].append(f"{name}: {exc}")
                continue
            parent = _linked(store, messages)
            created = _dt.datetime.fromtimestamp(mtime(name), _dt.timezone.utc)
            store.add(messages, session=parent["session"] if parent else session_of(messages, messages),
                      parent=parent["span"] if parent else None, source=name,
                      created=created.strftime("%Y-%m-%dT%H:%M:%SZ"))
            report["imported"] += 1
    return report
