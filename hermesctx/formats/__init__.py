"""Transcript formats: detection, readers that turn each into OpenAI chat messages, writers back.

Two kinds of input:

* documents (``openai``, ``anthropic``, ``responses``, ``sharegpt``): a JSON document, or JSON
  Lines with one transcript per line;
* session logs (``claude-code``, ``codex``): one JSONL *file* that is one transcript, one event
  per line. They are told apart from a batch by the first line's shape.

A session log is read twice: a first pass keeps only what decides which events belong to the
transcript (the parent chain of the main thread, where the last compaction is), a second pass
folds the events into messages and yields each as soon as it is complete. Memory holds the
event ids and one turn, never the log or the transcript, so :func:`write_stream` converts a log
of any size in bounded memory. A log read from a pipe is spooled to a temporary file.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from hermesctx import jsonio
from hermesctx.errors import InputError, UsageError
from hermesctx.messages import (
    anthropic_body,
    check_convertible,
    check_messages,
    has_role,
    is_lenient,
    role_problem,
    type_name,
)
from hermesctx.messages import detect_format as _chat_format

OPENAI = "openai"
ANTHROPIC = "anthropic"
RESPONSES = "responses"
SHAREGPT = "sharegpt"
CLAUDE_CODE = "claude-code"
CODEX = "codex"
AUTO = "auto"
FORMATS = (OPENAI, ANTHROPIC, RESPONSES, SHAREGPT, CLAUDE_CODE, CODEX)
LOG_FORMATS = (CLAUDE_CODE, CODEX)
PLAIN = (OPENAI, ANTHROPIC)  # bodies every command works on as they are
TARGETS = (OPENAI, ANTHROPIC, SHAREGPT)

Warn = Callable[[str], None]


def _quiet(message: str) -> None:
    pass


@dataclass
class FormatDocument(jsonio.Document):
    """A document read through a format reader: ``data`` is an OpenAI-format transcript (or the
    original body for ``openai``/``anthropic`` input); ``info`` says what was read and lost
    (``format``, ``lost``; for a log also its session, segments, usage, ...)."""

    info: dict = field(default_factory=dict)
    record: int | None = None  # 1-based, for the records of a JSON array read as a batch

    @property
    def where(self) -> str | None:
        line = f"line {self.line}" if self.line is not None else None
        if self.record is None:
            return line
        return f"{line} record {self.record}" if line else f"record {self.record}"


# --- detection ---------------------------------------------------------------------------

def detect_line(value: Any) -> str | None:
    """The log format a first JSONL line belongs to, or None (a document / batch line)."""
    from hermesctx.formats import claude_code, codex

    if claude_code.looks_like(value):
        return CLAUDE_CODE
    if codex.looks_like(value):
        return CODEX
    return None


def detect_document(doc: Any) -> str:
    """The format of one parsed document (never a log format unless it is a lone log event).

    Raises :class:`InputError` for what is no transcript (naming what was seen): a list of
    objects none of which has a ``role``, an object with neither ``messages`` nor a known container
    of them."""
    from hermesctx.formats import responses, sharegpt

    if not isinstance(doc, (dict, list)):
        raise InputError(f"expected a JSON array of messages or a request object, got {type_name(doc)}")
    if sharegpt.is_sharegpt(doc):
        return SHAREGPT
    if isinstance(doc, dict):
        if "messages" not in doc:
            if responses.is_request(doc):
                return RESPONSES
            log = detect_line(doc)
            if log is not None:
                return log
            if container_of(doc) is None:
                raise InputError(f"{describe_value(doc)}: not a transcript",
                                 hint=_container_hint(doc))
    elif isinstance(doc, list):
        if responses.is_items(doc):
            return RESPONSES
        if sharegpt.is_records(doc):
            return SHAREGPT
        if doc and all(isinstance(item, dict) and "role" not in item for item in doc) and not is_lenient():
            raise InputError(f"{describe_value(doc)}: not chat messages", hint=_container_hint(doc))
    return detect_line(doc) or _chat_format(doc)


def detect_quick(doc: Any, raw: bytes | None = None) -> str:
    """The format of a later line of a JSON Lines batch whose first line was ``openai`` or
    ``anthropic``, cheaply: chat messages are told by their top-level keys, and their content
    blocks are looked at only when the line's bytes (``raw``) hold ``"tool_`` (an Anthropic
    ``tool_use`` / ``tool_result``, or OpenAI tool calls, found at the first one). Anything
    else goes through :func:`detect_document`."""
    if isinstance(doc, list):
        if doc and not (isinstance(doc[0], dict) and "role" in doc[0]):
            return detect_document(doc)
    elif not (isinstance(doc, dict) and "messages" in doc):
        return detect_document(doc)
    if raw is not None and b'"tool_' not in raw:
        return ANTHROPIC if anthropic_body(doc) else OPENAI
    return _chat_format(doc)


# Keys under which agent logs keep a transcript's messages (SWE-agent / mini-swe-agent .traj
# ``history``, tau-bench ``traj``, ``trajectory``), in the order they are tried.
CONTAINERS = ("history", "traj", "trajectory")


def _is_chat(value: Any) -> bool:
    return (isinstance(value, list) and bool(value)
            and all(isinstance(m, dict) for m in value) and any("role" in m for m in value))


def container_of(doc: Any) -> str | None:
    """The key of an object without ``messages`` that holds its chat messages, or None."""
    if isinstance(doc, dict) and "messages" not in doc:
        for key in CONTAINERS:
            if _is_chat(doc.get(key)):
                return key
    return None


def unwrap(doc: Any, lost: dict) -> Any:
    """A container object (see :func:`container_of`) as an OpenAI body of its messages; what
    else it held is counted in ``lost``. Anything else as it is."""
    key = container_of(doc)
    if key is None:
        return doc
    others = [k for k in doc if k != key]
    if others:
        lost[f"keys beside the {key!r} messages ({', '.join(others[:6])})"] = len(others)
    return {"messages": doc[key]}


def describe_value(value: Any) -> str:
    """What a JSON value is, for an error: ``a JSON array of 200 objects with keys task_id,
    reward, ...``."""
    def keys(objects: list) -> str:
        seen: list = []
        for obj in objects[:50]:
            for key in obj:
                if key not in seen:
                    seen.append(key)
        shown = ", ".join(str(k) for k in seen[:6])
        return f" with keys {shown}{', ...' if len(seen) > 6 else ''}" if seen else " with no keys"

    if isinstance(value, dict):
        return "an object" + keys([value])
    if isinstance(value, list):
        objects = [v for v in value if isinstance(v, dict)]
        if objects and len(objects) == len(value):
            return f"a JSON array of {len(value)} object{'s' * (len(value) != 1)}" + keys(objects)
        kinds = sorted({type(v).__name__ for v in value})
        return f"a JSON array of {len(value)} value{'s' * (len(value) != 1)} ({', '.join(kinds)})"
    return f"a JSON {type(value).__name__}"


def _container_hint(value: Any) -> str:
    records = value if isinstance(value, list) else [value]
    for record in records[:1]:
        if not isinstance(record, dict):
            continue
        for key in CONTAINERS:
            if key in record:
                if _is_chat(record[key]):
                    return (f"each record's {key!r} holds a transcript: "
                            f"jq -c '.[].{key}' FILE | hermesctx ...")
                return f"its {key!r} holds no chat messages (no role): nothing hermesctx reads"
    return ('expected a JSON array of messages (objects with "role") or an object with a '
            '"messages" array, or an agent log hermesctx reads (see --from)')


# --- documents: to OpenAI and back ----------------------------------------------------------

def to_openai(doc: Any, fmt: str, lost: dict) -> Any:
    """One document of format ``fmt`` as an OpenAI transcript (``openai`` input unchanged)."""
    from hermesctx.formats import anthropic, responses, sharegpt

    if fmt == OPENAI:
        return doc
    if fmt == ANTHROPIC:
        if isinstance(doc, list):
            return anthropic.to_openai({"messages": doc}, lost)["messages"]
        return anthropic.to_openai(doc, lost)
    if fmt == RESPONSES:
        return responses.to_openai(doc, lost)
    if fmt == SHAREGPT:
        return sharegpt.to_openai(doc, lost)
    if fmt in LOG_FORMATS:  # a lone event given as a document
        reader = log_reader(fmt)
        out = reader.document(lambda: iter([(doc, "line 1")]))
        lost.update(reader.info().get("lost", {}))
        return out
    raise InputError(f"unknown format {fmt!r}")


def from_openai(doc: Any, target: str, lost: dict) -> Any:
    """An OpenAI transcript (a list of messages or a body) in format ``target``."""
    from hermesctx.formats import anthropic, sharegpt

    doc = writable(doc, target, lost)
    if target == OPENAI:
        return doc
    if isinstance(doc, list):
        doc = {"messages": doc}
    if target == ANTHROPIC:
        return anthropic.to_anthropic(doc, lost)
    if target == SHAREGPT:
        return sharegpt.from_openai(doc, lost)
    raise UsageError(f"cannot write format {target!r}", hint=f"one of {', '.join(TARGETS)}")


def writable(doc: Any, target: str, lost: dict) -> Any:
    """``doc`` (OpenAI messages or a body) checked before a writer sees it, so no writer meets
    what it cannot write: strict input (D14) refuses a non-object message or one without a
    string role, naming where; under ``--lenient`` such items are left out and counted in
    ``lost`` (said on stderr), a role that is not a string is refused, and so is a non-empty
    list none of whose items is a message (never a silently empty document). The same object
    when there is nothing to leave out."""
    if not isinstance(doc, (dict, list)):
        raise InputError(f"expected a JSON array of messages or a request object, got {type_name(doc)}")
    messages = doc.get("messages") if isinstance(doc, dict) else doc
    if not isinstance(messages, list):
        return doc
    for i, msg in enumerate(messages):
        if isinstance(msg, dict) and (msg.get("tool_calls") or msg.get("tool_call_id") is not None):
            check_convertible(msg, f"messages[{i}]", target)
    if not is_lenient():
        check_messages(messages, lenient=False)
        return doc
    kept: list | None = None
    for i, msg in enumerate(messages):
        if isinstance(msg, dict):
            role = has_role(msg)
            if role:
                if kept is not None:
                    kept.append(msg)
                continue
            if role is None:  # a number, an array, an object
                raise InputError(f"{role_problem(msg)}: it cannot be written as {target}",
                                 where=f"messages[{i}]")
            what = "messages without a role"
        else:
            what = "non-message values in messages (numbers, strings, null, arrays)"
        if kept is None:
            kept = list(messages[:i])
        lost[what] = lost.get(what, 0) + 1
    if kept is None:
        return doc
    if not kept:
        raise InputError(f"no element of messages is a message ({describe_value(messages)})",
                         hint="expected objects with a string \"role\"")
    return kept if isinstance(doc, list) else {**doc, "messages": kept}



def prepare(value: Any, fmt: str = AUTO) -> tuple[Any, dict]:
    """One parsed document -> ``(working, info)``: OpenAI and Anthropic bodies as they are, any
    other format as OpenAI messages; ``info`` holds ``format`` (what was read) and ``lost``."""
    found = detect_document(value) if fmt == AUTO else fmt
    lost: dict = {}
    if found in PLAIN:
        value = unwrap(value, lost)
    working = value if found in PLAIN else to_openai(value, found, lost)
    return working, {"format": found, "lost": lost}


def output_format(info: dict, target: str | None) -> str:
    """What a command writes: ``target`` if given, else the input's format when it has a
    writer, else OpenAI."""
    if target:
        return target
    found = info.get("format", OPENAI)
    return found if found in TARGETS else OPENAI


def write_back(result: Any, info: dict, target: str | None, lost: dict,
               wire: dict | None = None) -> Any:
    """A stage's result (in the working format of :func:`prepare`) in the output format, as it
    goes on the wire (:mod:`hermesctx.wire.send`; what that changed is counted in ``wire``)."""
    from hermesctx.wire import send

    found = info.get("format", OPENAI)
    working = found if found in PLAIN else OPENAI
    out = output_format(info, target)
    if out != working:
        if working == ANTHROPIC:
            result = to_openai(result, ANTHROPIC, lost)
        result = from_openai(result, out, lost)
    return send.request(result, out, {} if wire is None else wire)


AS_TEXT = " (as text)"  # a ``lost`` key ending so: kept, but as text


def server_side_text(item: dict) -> str:
    """A server-side tool item or block (Responses ``web_search_call``, ``mcp_list_tools``;
    Anthropic ``server_tool_use``, ``web_search_tool_result``, ...) as the text that keeps it
    in a chat transcript: ``[server-side tool KIND] {json of the rest}``."""
    import json

    rest = {k: v for k, v in item.items() if k != "type"}
    return f"[server-side tool {item.get('type')}] {json.dumps(rest, ensure_ascii=False)}"


def describe_lost(lost: dict, target: str) -> list[str]:
    return [f"{what[:-len(AS_TEXT)]}: {n} written as text in the {target} output"
            if what.endswith(AS_TEXT) else f"{what}: {n} not kept in the {target} output"
            for what, n in lost.items()]


# --- session logs ----------------------------------------------------------------------------

class LogReader:
    """A session log reader: :meth:`scan` sees every event once (first pass), then
    :meth:`messages` folds them again (second pass) and yields OpenAI messages in order.
    :meth:`tail` (the document's keys after ``messages``) and :meth:`info` are complete once
    the messages are exhausted."""

    format = ""

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


def log_reader(fmt: str, path: str | None = None, **kwargs: Any) -> LogReader:
    """``path``: the log's file, where a Claude Code reader finds the subagent files."""
    from hermesctx.formats import claude_code, codex

    if fmt == CLAUDE_CODE:
        return claude_code.Reader(path=path, **kwargs)
    return codex.Reader(**kwargs)


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


class _Twice:
    """The lines of a stream, readable twice: the stream itself when it can seek, else a
    temporary file filled during the first pass."""

    def __init__(self, head: list[bytes], stream: BinaryIO, start: int | None):
        self.head, self.stream, self.start = head, stream, start
        self.spool: BinaryIO | None = None

    def first(self) -> Iterator[bytes]:
        if self.start is None:
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


def _events(lines: Iterable[bytes], warn: Warn) -> Iterator[tuple[Any, str]]:
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
        try:
            value = jsonio.loads(raw)
        except InputError:
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

    def __init__(self, fmt: str, lines: _Twice, warn: Warn, **kwargs: Any):
        self.fmt = fmt
        self.lines = lines
        self.reader = log_reader(fmt, warn=warn, **kwargs)
        self.warn = warn
        self._scanned = False

    def messages(self) -> Iterator[dict]:
        if not self._scanned:
            self.reader.scan(_events(self.lines.first(), _quiet))
            self._scanned = True
        try:
            yield from self.reader.messages(_events(self.lines.second(), self.warn))
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


def _tell(stream: BinaryIO) -> int | None:
    try:
        return stream.tell() if stream.seekable() else None
    except (OSError, ValueError, AttributeError):
        return None


class _Rest:
    """A stream with its first lines given back (for :func:`jsonio.read_documents`)."""

    def __init__(self, head: list[bytes], stream: BinaryIO):
        self.head = head
        self.stream = stream

    def __iter__(self):
        head, self.head = self.head, []
        yield from head
        for raw in self.stream:  # noqa: UP028 (`yield from` would close the stream early)
            yield raw

    def read(self, *args) -> bytes:
        head, self.head = self.head, []
        return b"".join(head) + self.stream.read()


def open_log(stream: BinaryIO, *, fmt: str = AUTO, jsonl: bool | None = None,
             warn: Warn = _quiet, include_sidechains: bool = False,
             all_segments: bool = False) -> LogStream | _Rest | None:
    """Look at the first line of ``stream``: a :class:`LogStream` when it is a session log (or
    ``fmt`` says so), else a stream of the same bytes for :func:`jsonio.read_documents` (None when
    ``jsonl`` is false: the stream is untouched)."""
    if fmt not in (AUTO, *FORMATS):
        raise UsageError(f"unknown format {fmt!r}", hint=f"one of auto, {', '.join(FORMATS)}")
    if jsonl is False:
        if fmt in LOG_FORMATS:
            raise UsageError(f"a {fmt} session log is JSON Lines: drop --no-jsonl")
        return None
    if fmt not in (AUTO, *LOG_FORMATS):
        return _Rest([], stream)
    start = _tell(stream)
    head, first = jsonio.first_line(stream)
    log = fmt if fmt in LOG_FORMATS else None
    if log is None:
        try:
            log = detect_line(jsonio.loads(first))
        except InputError:
            log = None
    if log is None:
        return _Rest(head, stream)
    name = getattr(stream, "name", None)  # a file's path (stdin's is a number)
    return LogStream(log, _Twice(head, stream, start), warn, path=name if isinstance(name, str) else None,
                     include_sidechains=include_sidechains, all_segments=all_segments)


def read_documents(stream: BinaryIO, *, fmt: str = AUTO, jsonl: bool | None = None,
                   keep_raw: bool = False, include_sidechains: bool = False,
                   all_segments: bool = False, convert_documents: bool = True,
                   warn: Warn = _quiet) -> Iterator[FormatDocument]:
    """Yield the transcripts of ``stream`` in format ``fmt`` (``auto``: detected).

    A session log gives one document (``line`` None) holding the whole log as OpenAI messages.
    Other documents: see :func:`documents`."""
    opened = open_log(stream, fmt=fmt, jsonl=jsonl, warn=warn,
                      include_sidechains=include_sidechains, all_segments=all_segments)
    if isinstance(opened, LogStream):
        doc = opened.document()
        yield FormatDocument(doc, 0, None, None, info=opened.info())
        return
    yield from documents(opened if opened is not None else stream, fmt=fmt, jsonl=jsonl,
                         keep_raw=keep_raw, convert_documents=convert_documents)


def documents(stream: Any, *, fmt: str = AUTO, jsonl: bool | None = None, keep_raw: bool = False,
              convert_documents: bool = True) -> Iterator[FormatDocument]:
    """The documents (not a session log) of ``stream``, converted to OpenAI messages unless they
    are ``openai`` or ``anthropic`` already, or ``convert_documents`` is false. With ``auto``,
    each document's format is detected: in a batch whose first document is ``openai`` or
    ``anthropic`` the later ones get a cheap shape test (:func:`detect_quick`) and are passed
    through as they are read when they match. A JSON array of ShareGPT records is read as a
    batch, one transcript per record; a container (``history``, ...) as its messages.
    ``info["format"]`` is the format read."""
    from hermesctx.formats import sharegpt

    docs = jsonio.read_documents(stream, jsonl=jsonl, keep_raw=keep_raw or fmt == AUTO)
    first: str | None = None
    shared: dict = {}
    index = 0
    for doc in docs:
        raw, line_raw = (doc.raw, None) if keep_raw else (None, doc.raw)
        doc.raw = None  # (a whole document's bytes are not kept while it is worked on)
        if fmt == AUTO:
            try:
                found = detect_document(doc.data) if first is None else detect_quick(doc.data, line_raw)
            except InputError as err:
                raise (err.located(doc.where) if doc.where else err) from None
            if first is None and doc.index == 0 and found in PLAIN:
                first, shared = found, {"format": found, "lost": {}}
        else:
            found = fmt
        line_raw = None
        if found == first and container_of(doc.data) is None:
            yield FormatDocument(doc.data, index, doc.line, raw, info=shared)
            index += 1
            continue
        if found == SHAREGPT and sharegpt.is_records(doc.data, loose=fmt == SHAREGPT):
            for k, record in enumerate(doc.data):
                yield _document(record, found, index, doc.line, None, convert_documents, k + 1)
                index += 1
            continue
        yield _document(doc.data, found, index, doc.line, raw, convert_documents)
        index += 1


def _document(value: Any, found: str, index: int, line: int | None, raw: bytes | None,
              convert: bool, record: int | None = None) -> FormatDocument:
    if convert:
        data, info = prepare(value, found)
    else:
        lost: dict = {}
        data = unwrap(value, lost) if found in PLAIN else value
        info = {"format": found, "lost": lost}
    return FormatDocument(data, index, line, raw, info=info, record=record)


# --- writing a transcript as it is read --------------------------------------------------------

def _chunks(messages: Iterable[dict]) -> Iterator[list[dict]]:
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


def write_stream(out: BinaryIO, messages: Iterable[dict], tail: Callable[[], dict], target: str,
                 lost: dict, *, pretty: bool = False, wire: dict | None = None) -> None:
    """Write one transcript in format ``target`` while its OpenAI ``messages`` are produced;
    ``tail()`` gives the keys written after them (e.g. ``model``). The bytes equal
    ``jsonio.dumps(send.request(from_openai({"messages": [...], **tail()}, target, lost), target),
    pretty=pretty)``: an OpenAI or Anthropic transcript goes through its send path
    (:mod:`hermesctx.wire.send`, changes counted in ``wire``) as it streams."""
    from hermesctx.formats import anthropic, sharegpt
    from hermesctx.wire import send

    wire = {} if wire is None else wire
    keys: frozenset | None = None

    chunks = _chunks(messages)
    items: Iterator[Any]
    system = None
    if target == ANTHROPIC:
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
        if parts:
            system = send.anthropic_system(anthropic.join_system(parts, lost), state, wire)

        def convert(chunk: list[dict]) -> list:
            return anthropic.to_anthropic({"messages": chunk}, lost, leading=False)["messages"]

        items = send.anthropic_messages(
            (item for chunk in _chain(pending, chunks) for item in convert(chunk)), wire, state)
        key = "messages"
        keys = send.ANTHROPIC_REQUEST_KEYS
    elif target == SHAREGPT:
        names: dict = {}
        items = (turn for chunk in chunks
                 for turn in sharegpt.from_openai({"messages": chunk}, lost, names=names)["conversations"])
        key = "conversations"
    elif target == OPENAI:
        items = send.openai_messages(messages, wire)
        key = "messages"
        keys = send.OPENAI_REQUEST_KEYS
    else:
        raise UsageError(f"cannot write format {target!r}", hint=f"one of {', '.join(TARGETS)}")
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
        if system is not None:
            write(b'  "system": ' + _dump(system, True).replace(b"\n", b"\n  ") + b",\n")
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
    if system is not None:
        write(b'"system":' + _dump(system) + b",")
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


def _chain(*iterables: Iterable) -> Iterator:
    for iterable in iterables:
        yield from iterable
