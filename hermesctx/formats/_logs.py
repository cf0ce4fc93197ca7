"""Session logs (one JSONL file, one transcript, one event per line), read in two passes and
written as they are read.

A first pass keeps only what decides which events belong to the transcript (the parent chain of
the main thread, where the last compaction is), a second pass folds the events into messages and
yields each as soon as it is complete. Memory holds the event ids and one turn, never the log or
the transcript, so :func:`write_stream` converts a log of any size in bounded memory. A log read
from a pipe is spooled to a temporary file. Nothing here knows a format: the format modules
supply the readers (:class:`LogReader`) and the writers' ``stream`` functions.
"""

from __future__ import annotations

from hermesctx import jsonio
from hermesctx.formats._common import quiet

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any, BinaryIO

    from hermesctx.formats._common import Warn


class LogReader:
    """A session log reader: :meth:`scan` sees every event once (first pass), then
    :meth:`messages` folds them again (second pass) and yields OpenAI messages in order.
    :meth:`tail` (the document's keys after ``messages``) and :meth:`info` are complete once
    the messages are exhausted."""

    format = ""  # the name of the format read

    def __init__(self, *, warn: Warn = quiet, **_: Any):
        self.warn = warn
        self.lost: dict = {}  # what could not be kept: what -> count
        self.session: Any = None  # the log's session id

    def scan(self, events: Iterable[tuple[Any, str]]) -> None:
        raise NotImplementedError

    def messages(self, events: Iterable[tuple[Any, str]]) -> Iterator[dict]:
        raise NotImplementedError

    def tail(self) -> dict:
        return {}

    def info(self) -> dict:
        raise NotImplementedError

    def document(self, events: Callable[[], Iterable[tuple[Any, str]]]) -> dict:
        """The whole transcript as one OpenAI body (both passes)."""
        self.scan(events())
        doc = {"messages": list(self.messages(events()))}
        doc.update(self.tail())
        return doc


def read_event(reader: LogReader, event: Any, lost: dict) -> dict:
    """One event of a log given alone as a document, folded by ``reader`` (what it could not
    keep added to ``lost``)."""
    out = reader.document(lambda: iter([(event, "line 1")]))
    lost.update(reader.info().get("lost", {}))
    return out


def session_body(messages: list, model: str | None) -> dict:
    """A session read from an agent's store as a request body: its messages with orphaned calls and
    results repaired (:func:`fix_orphans`), and its model when the store names one."""
    body: dict = {"messages": list(fix_orphans(messages, set(), [0]))}
    if model:
        body["model"] = model
    return body


def fix_orphans(messages: Iterable[dict], seen: set, counter: list) -> Iterator[dict]:
    """Yield ``messages`` with every tool result that does not follow its call (the call was
    before a compaction boundary, or other messages came between) turned into user text, so
    the transcript stays valid and the text is kept; ``seen`` collects the call ids,
    ``counter[0]`` counts the results turned."""
    from hermesctx.messages import content_text

    open_calls: set = set()  # the calls of the assistant message the results now answer
    for msg in messages:
        role = msg.get("role")
        if role == "tool":
            call_id = msg.get("tool_call_id")
            if call_id not in open_calls:
                counter[0] += 1
                where = "is earlier in" if call_id in seen else "is not in"
                msg = {"role": "user", "content": f"[tool result for {call_id}, whose call {where} "
                       f"this transcript]\n{content_text(msg.get('content'))}"}
                open_calls = set()
            yield msg
            continue
        open_calls = set()
        for call in msg.get("tool_calls") or ():
            if isinstance(call, dict):
                seen.add(call.get("id"))
                open_calls.add(call.get("id"))
        yield msg


class Twice:
    """The lines of a stream, readable twice: the stream itself when it can seek, else a
    temporary file filled during the first pass."""

    def __init__(self, head: list[bytes], stream: BinaryIO, start: int | None):
        self.head, self.stream, self.start = head, stream, start
        self.spool: BinaryIO | None = None

    def first(self) -> Iterator[bytes]:
        if self.start is None:
            import tempfile  # only for a log read from a pipe: its imports cost every start ~3 ms

            self.spool = tempfile.TemporaryFile(prefix="hermesctx-log-")
            write = self.spool.write
            for raw in self.head:
                write(raw)
                yield raw
            for raw in self.stream:
                write(raw)
                yield raw
        else:
            yield from self.head
            for raw in self.stream:  # noqa: UP028 (`yield from` would close the stream early)
                yield raw

    def second(self) -> Iterator[bytes]:
        handle = self.spool if self.start is None else self.stream
        assert handle is not None, "second pass before the first"
        handle.seek(0 if self.start is None else self.start)
        for raw in handle:  # noqa: UP028
            yield raw

    def close(self) -> None:
        if self.spool is not None:
            self.spool.close()
            self.spool = None


def events(lines: Iterable[bytes], warn: Warn) -> Iterator[tuple[Any, str]]:
    """``(event, "line N")`` for every non-blank line; a line that is not JSON is skipped with
    a warning (the last one, cut off mid-line, says so)."""
    line_no = 0
    bad: tuple[int, bytes] | None = None
    for raw in lines:
        line_no += 1
        if bad is not None:
            warn(f"line {bad[0]}: not JSON; skipped")
            bad = None
        if line_no == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if raw.isspace() or not raw:
            continue
        value = jsonio.try_loads(raw)
        if value is jsonio.INVALID:
            bad = (line_no, raw)
            continue
        yield value, f"line {line_no}"
    if bad is not None:
        if bad[1].endswith(b"\n"):
            warn(f"line {bad[0]}: not JSON; skipped")
        else:
            warn(f"line {bad[0]}: the log is cut off mid-line; the partial event was skipped")


class LogStream:
    """One session log being read: the two passes over its lines, the reader folding them."""

    def __init__(self, reader: LogReader, lines: Twice, warn: Warn):
        self.reader = reader
        self.lines = lines
        self.warn = warn
        self._scanned = False

    @property
    def format(self) -> str:
        return self.reader.format

    def messages(self) -> Iterator[dict]:
        if not self._scanned:
            self.reader.scan(events(self.lines.first(), quiet))
            self._scanned = True
        try:
            yield from self.reader.messages(events(self.lines.second(), self.warn))
        finally:
            self.lines.close()

    def tail(self) -> dict:
        return self.reader.tail()

    def info(self) -> dict:
        return self.reader.info()

    def document(self) -> dict:
        doc = {"messages": list(self.messages())}
        doc.update(self.tail())
        return doc


def tell(stream: BinaryIO) -> int | None:
    try:
        return stream.tell() if stream.seekable() else None
    except (OSError, ValueError, AttributeError):
        return None


class Rest:
    """A stream with its first lines given back (for :func:`jsonio.read_documents`). With
    ``parsed`` (``(head, line, value)``: the first non-blank line, read and parsed to detect the
    format), the lines after it, so that line is not parsed twice."""

    def __init__(self, head: list[bytes], stream: BinaryIO,
                 parsed: tuple[list[bytes], bytes, Any] | None = None):
        self.head = head
        self.stream = stream
        self.parsed = parsed

    def __iter__(self):
        head, self.head = self.head, []
        yield from head
        for raw in self.stream:  # noqa: UP028 (`yield from` would close the stream early)
            yield raw

    def read(self, *args) -> bytes:
        head, self.head = self.head, []
        return b"".join(head) + self.stream.read()


# --- writing a transcript as it is read --------------------------------------------------------

def chunks(messages: Iterable[dict]) -> Iterator[list[dict]]:
    """Messages grouped so no state of a writer crosses a group: each group is one message and
    the tool results that follow it."""
    chunk: list[dict] = []
    for msg in messages:
        if chunk and msg.get("role") != "tool":
            yield chunk
            chunk = []
        chunk.append(msg)
    if chunk:
        yield chunk


def write_stream(out: BinaryIO, messages: Iterable[dict], tail: Callable[[], dict], writer: Any,
                 lost: dict, *, pretty: bool = False, wire: dict | None = None) -> None:
    """Write one transcript with format module ``writer`` while its OpenAI ``messages`` are
    produced; ``tail()`` gives the keys written after them (e.g. ``model``). The bytes equal
    ``jsonio.dumps(send.request(writer.write({"messages": [...], **tail()}, lost), name),
    pretty=pretty)``: the writer's ``stream(chunks, lost, wire)`` gives the keys written before
    the items (an Anthropic ``system``), the key of the items, the items (through the send path
    of its format, changes counted in ``wire``) and the request keys its API accepts (None: any)."""
    from hermesctx.wire import send

    wire = {} if wire is None else wire
    head, key, items, keys = writer.stream(chunks(messages), lost, wire)
    write = out.write
    if keys is not None:
        whole_tail = tail

        def tail() -> dict:
            found = whole_tail()
            extra = [k for k in found if k not in keys]
            if extra:
                send.bump(wire, send.RECORD_KEYS, len(extra))
                return {k: v for k, v in found.items() if k in keys}
            return found
    if pretty:
        write(b"{\n")
        for name, value in head.items():
            write(b"  " + _dump(name) + b": " + _dump(value, True).replace(b"\n", b"\n  ") + b",\n")
        write(b'  "' + key.encode() + b'": [')
        count = 0
        for item in items:
            write(b",\n    " if count else b"\n    ")
            write(_dump(item, True).replace(b"\n", b"\n    "))
            count += 1
        write(b"\n  ]" if count else b"]")
        for name, value in tail().items():
            write(b",\n  " + _dump(name) + b": " + _dump(value, True).replace(b"\n", b"\n  "))
        write(b"\n}\n")
        return
    write(b"{")
    for name, value in head.items():
        write(_dump(name) + b":" + _dump(value) + b",")
    write(b'"' + key.encode() + b'":[')
    count = 0
    for item in items:
        if count:
            write(b",")
        write(_dump(item))
        count += 1
    write(b"]")
    for name, value in tail().items():
        write(b"," + _dump(name) + b":" + _dump(value))
    write(b"}\n")


def _dump(value: Any, pretty: bool = False) -> bytes:
    return jsonio.dumps(value, pretty=pretty)[:-1]

