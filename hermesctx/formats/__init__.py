"""Transcript formats: a registry of one module per format, and the face commands use.

Each format module has the same face: ``NAME``; ``detect(value)``; ``read(doc, lost)`` (one
document as OpenAI chat, what it could not keep counted in ``lost``); ``write(openai_doc, lost)``
and ``stream(chunks, lost, wire)`` when it can be written; capabilities read off the module
(``PLAIN``: commands work on its bodies as they are; ``LOG``: a session log, read with its
``Reader`` by :mod:`hermesctx.formats._logs`).

Two kinds of input:

* documents (``openai``, ``anthropic``, ``responses``, ``sharegpt``): a JSON document, or JSON
  Lines with one transcript per line;
* session logs (``claude-code``, ``codex``): one JSONL *file* that is one transcript, one event
  per line, told apart from a batch by the first line's shape and read in two passes
  (:mod:`hermesctx.formats._logs`).
"""

from __future__ import annotations

import io as _stdio

from hermesctx import jsonio, registry
from hermesctx.errors import InputError, UsageError
from hermesctx.formats import _logs, anthropic, claude_code, cline, codex, openai, responses, sharegpt
from hermesctx.formats._common import bump, describe_lost, describe_value, quiet
from hermesctx.formats._logs import LogStream, Rest, Twice, tell
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
from hermesctx.record import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from types import ModuleType
    from typing import Any, BinaryIO

    from hermesctx.formats._common import Warn

__all__ = ["LogStream", "Rest", "describe_lost", "describe_value"]  # what callers use from here

# name -> module, every format hermesctx.registry declares, in the order --from lists them
MODULES: dict[str, ModuleType] = {e.name: registry.load(e) for e in registry.entries(registry.FORMATS)}
# documents told by their own keys, tried first (ShareGPT, then agents' own documents), before
# Responses items, a log event or OpenAI / Anthropic chat is assumed
DOCUMENTS: tuple[ModuleType, ...] = tuple(MODULES[e.name] for e in registry.detection_order("document"))

OPENAI = openai.NAME
ANTHROPIC = anthropic.NAME
RESPONSES = responses.NAME
SHAREGPT = sharegpt.NAME
CLAUDE_CODE = claude_code.NAME
CODEX = codex.NAME
AUTO = "auto"
FORMATS = tuple(MODULES)
LOG_FORMATS = tuple(e.name for e in registry.detection_order("log"))  # session logs, in the order tried
PLAIN = tuple(name for name, m in MODULES.items() if m.PLAIN)  # bodies every command works on as they are
WRITTEN = tuple(name for name in FORMATS if hasattr(MODULES[name], "write"))  # what is written
TARGETS = tuple(name for name in WRITTEN if getattr(MODULES[name], "TARGET", True))  # what --to offers
_SOURCES = frozenset((AUTO, *FORMATS))  # what --from takes
_LOG_SOURCES = frozenset((AUTO, *LOG_FORMATS))  # what may be a session log


def module(name: str) -> ModuleType:
    """The module of format ``name``."""
    try:
        return MODULES[name]
    except KeyError:
        raise UsageError(f"unknown format {name!r}", hint=f"one of {', '.join(FORMATS)}") from None


def writer(target: str) -> ModuleType:
    """The module that writes format ``target``."""
    found = MODULES.get(target)
    if found is None or not hasattr(found, "write"):
        raise UsageError(f"cannot write format {target!r}", hint=f"one of {', '.join(TARGETS)}")
    return found


@record
class FormatDocument(jsonio.Document):
    """A document read through a format reader: ``data`` is an OpenAI-format transcript (or the
    original body for ``openai``/``anthropic`` input); ``info`` says what was read and lost
    (``format``, ``lost``; for a log also its session, segments, usage, ...)."""

    info: dict = field(default_factory=dict)
    record: int | None = None  # 1-based, for the records of a JSON array read as a batch

    @property
    def place(self) -> str | None:
        line = f"line {self.line}" if self.line is not None else None
        if self.record is None:
            return line
        return f"{line} record {self.record}" if line else f"record {self.record}"


# --- detection ---------------------------------------------------------------------------

def detect_line(value: Any) -> str | None:
    """The log format a first JSONL line belongs to, or None (a document / batch line)."""
    if not isinstance(value, dict):  # (a log's events are objects)
        return None
    for name in LOG_FORMATS:
        if MODULES[name].detect(value):
            return name
    return None


def detect_document(doc: Any) -> str:
    """The format of one parsed document (never a log format unless it is a lone log event).

    Raises :class:`InputError` for what is no transcript (naming what was seen): a list of
    objects none of which has a ``role``, an object with neither ``messages`` nor a known container
    of them."""
    if not isinstance(doc, (dict, list)):
        raise InputError(f"expected a JSON array of messages or a request object, got {type_name(doc)}")
    for found in DOCUMENTS:
        if found.detect(doc):
            return found.NAME
    if cline.is_ui_messages(doc):
        raise cline.refuse_ui_messages(doc)
    if isinstance(doc, dict):
        if "messages" not in doc:
            if responses.detect(doc):
                return RESPONSES
            log = detect_line(doc)
            if log is not None:
                return log
            if container_of(doc) is None:
                raise InputError(f"{describe_value(doc)}: not a transcript",
                                 hint=_container_hint(doc))
    elif isinstance(doc, list):
        if responses.detect(doc):
            return RESPONSES
        if sharegpt.is_records(doc):
            return SHAREGPT
        if doc and all(isinstance(item, dict) and "role" not in item for item in doc) and not is_lenient():
            raise InputError(f"{describe_value(doc)}: not chat messages", hint=_container_hint(doc))
    found = detect_line(doc)
    if found is None:
        _check_readable(doc)
        found = _chat_format(doc)
    return found


# what a chat message says through (a message with none of them holds nothing this project reads)
_CONTENT_KEYS = ("content", "tool_calls", "tool_call_id", "function_call")


def _check_readable(doc: Any) -> None:
    """Refuse chat messages none of which holds a key this project reads its content from
    while they hold others (``{role, parts}``, ...): read as chat, they would be written back
    as empty messages with exit 0."""
    from hermesctx.messages import is_lenient

    messages = doc.get("messages") if isinstance(doc, dict) else doc
    if not isinstance(messages, list) or not messages or is_lenient():  # (--lenient: as Hermes, D14)
        return
    others: list = []
    for msg in messages:
        if not isinstance(msg, dict):
            return
        for key in msg:
            if key in _CONTENT_KEYS:
                return
            if key not in ("role", "name") and key not in others:
                others.append(key)
    if others:
        raise InputError(f"{describe_value(messages)}: no message has a content this project "
                         f"reads (content, tool_calls); they hold {', '.join(map(str, others[:6]))}",
                         hint="not a transcript format hermesctx knows (see --from)")


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


def _container_hint(value: Any) -> str:
    records = value if isinstance(value, list) else [value]
    for item in records[:1]:
        if not isinstance(item, dict):
            continue
        for key in CONTAINERS:
            if key in item:
                if _is_chat(item[key]):
                    return (f"each record's {key!r} holds a transcript: "
                            f"jq -c '.[].{key}' FILE | hermesctx ...")
                return f"its {key!r} holds no chat messages (no role): nothing hermesctx reads"
    return ('expected a JSON array of messages (objects with "role") or an object with a '
            '"messages" array, or an agent log hermesctx reads (see --from)')


# --- documents: to OpenAI and back ----------------------------------------------------------

def to_openai(doc: Any, source: str, lost: dict) -> Any:
    """One document of format ``source`` as an OpenAI transcript (``openai`` input unchanged)."""
    return module(source).read(doc, lost)


def from_openai(doc: Any, target: str, lost: dict) -> Any:
    """An OpenAI transcript (a list of messages or a body) in format ``target``."""
    write = writer(target).write
    return write(writable(doc, target, lost), lost)


def writable(doc: Any, target: str, lost: dict) -> Any:
    """``doc`` (OpenAI messages or a body) checked before a writer sees it, so no writer meets
    what it cannot write. By default what no provider API accepts is refused (a non-object
    message or one without a string role, naming where); under ``--lenient`` such items are left out and counted in
    ``lost`` (said on stderr), a role that is not a string is refused, and so is a non-empty
    list none of whose items is a message (never a silently empty document). The same object
    when there is nothing to leave out."""
    if not isinstance(doc, (dict, list)):
        raise InputError(f"expected a JSON array of messages or a request object, got {type_name(doc)}")
    messages = doc.get("messages") if isinstance(doc, dict) else doc
    if not isinstance(messages, list):
        if isinstance(doc, dict) and "messages" in doc:  # (never a silently empty document)
            raise InputError(f"messages: expected an array, got {type_name(messages)}")
        return doc
    if target != RESPONSES:
        doc = without_opaque(doc, lost)
        messages = doc.get("messages") if isinstance(doc, dict) else doc
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



def without_opaque(doc: Any, lost: dict) -> Any:
    """``doc`` (OpenAI messages or a body) on its way to a format other than Responses: a kept
    Responses ``compaction`` item (:func:`hermesctx.formats.responses.compaction_message`) cannot
    be translated, so it is refused (exit 3, naming it), or under ``--lenient`` left out with
    its message and counted in ``lost``. The same object when it holds none."""
    from hermesctx.formats._common import refuse_opaque
    from hermesctx.messages import opaque_compaction

    messages = doc.get("messages") if isinstance(doc, dict) else doc
    if not isinstance(messages, list):
        return doc
    kept = [m for m in messages if not (isinstance(m, dict) and isinstance(m.get("content"), list)
                                        and any(map(opaque_compaction, m["content"])))]
    if len(kept) == len(messages):
        return doc
    refuse_opaque("an OpenAI compaction item (encrypted_content: only OpenAI's Responses API reads it)")
    bump(lost, "encrypted compaction items", len(messages) - len(kept))
    return kept if isinstance(doc, list) else {**doc, "messages": kept}


def prepare(value: Any, source: str = AUTO) -> tuple[Any, dict]:
    """One parsed document -> ``(working, info)``: OpenAI and Anthropic bodies as they are, any
    other format as OpenAI messages; ``info`` holds ``format`` (what was read) and ``lost``."""
    found = detect_document(value) if source == AUTO else source
    lost: dict = {}
    if found in PLAIN:
        value = unwrap(value, lost)
    working = value if found in PLAIN else to_openai(value, found, lost)
    info = {"format": found, "lost": lost}
    recorded = getattr(MODULES.get(found), "usage", None)  # an agent's record of its last call
    usage = recorded(value) if recorded is not None else None
    if usage:
        info["usage"] = usage
    keep = getattr(MODULES.get(found), "kept", None)  # what its own output gets back (Responses)
    kept = keep(value) if keep is not None else None
    if kept:
        info["kept"] = kept
    return working, info


def output_format(info: dict, target: str | None) -> str:
    """What a command writes: ``target`` if given, else the input's format when it has a
    writer, else OpenAI."""
    if target:
        return target
    found = info.get("format", OPENAI)
    return found if found in WRITTEN else OPENAI


def write_back(result: Any, info: dict, target: str | None, lost: dict,
               wire: dict | None = None, ready: str | None = None) -> Any:
    """A stage's result (in the working format of :func:`prepare`) in the output format, as it
    goes on the wire (:mod:`hermesctx.wire.send`; what that changed is counted in ``wire``).
    ``ready``: the format whose send path need not check the result's messages again."""
    from hermesctx.wire import send

    found = info.get("format", OPENAI)
    working = found if found in PLAIN else OPENAI
    out = output_format(info, target)
    if found == RESPONSES and out == working:  # (what only the Responses API reads)
        result = without_opaque(result, lost)
    if out != working:
        result = to_openai(result, working, lost)
        result = from_openai(result, out, lost)
        ready = None  # (new messages)
    if out == found and info.get("kept"):
        result = MODULES[found].restore(result, info["kept"])
        ready = None  # (items put back: not what was checked)
    return send.request(result, out, {} if wire is None else wire, ready)


# --- reading a stream -------------------------------------------------------------------

def open_log(stream: BinaryIO, *, source: str = AUTO, jsonl: bool | None = None,
             warn: Warn = quiet, include_sidechains: bool = False,
             all_segments: bool = False) -> LogStream | Rest | None:
    """Look at the first line of ``stream``: a :class:`LogStream` when it is a session log (or
    ``source`` says so), else a stream of the same bytes for :func:`jsonio.read_documents` (None
    when ``jsonl`` is false: the stream is untouched)."""
    if source not in _SOURCES:
        raise UsageError(f"unknown format {source!r}", hint=f"one of auto, {', '.join(FORMATS)}")
    if jsonl is False:
        if source in LOG_FORMATS:
            raise UsageError(f"a {source} session log is JSON Lines: drop --no-jsonl")
        return None
    loader = _byte_format(stream, source)
    if loader is not None:  # read whole: a Rest holding its value alone
        name = getattr(stream, "name", None)
        value = loader.load(stream, name if isinstance(name, str) else None)
        return Rest([], _stdio.BytesIO(), parsed=([], b"", value))
    if source not in _LOG_SOURCES:
        return Rest([], stream)
    start = tell(stream)
    head, first = jsonio.first_line(stream)
    log = source if source in LOG_FORMATS else None
    if log is None:
        try:
            value = jsonio.try_loads(first)
        except InputError as err:  # (one JSON value, refused: a key twice)
            raise err.located(f"line {len(head)}") from None
        if value is jsonio.INVALID:
            return Rest(head, stream)
        log = detect_line(value)
        if log is None:
            return Rest([], stream, parsed=(head, first, value))
    name = getattr(stream, "name", None)  # a file's path (stdin's is a number)
    reader = MODULES[log].Reader(path=name if isinstance(name, str) else None, warn=warn,
                                 include_sidechains=include_sidechains, all_segments=all_segments)
    return LogStream(reader, Twice(head, stream, start), warn)


def read_documents(stream: BinaryIO, *, source: str = AUTO, jsonl: bool | None = None,
                   keep_raw: bool = False, include_sidechains: bool = False,
                   all_segments: bool = False, convert_documents: bool = True,
                   warn: Warn = quiet) -> Iterator[FormatDocument]:
    """Yield the transcripts of ``stream`` in format ``source`` (``auto``: detected).

    A session log gives one document (``line`` None) holding the whole log as OpenAI messages;
    a file that is no JSON but an agent's own (a SQLite session store, an Aider chat) is told by
    its first bytes (:data:`BYTE_FORMATS`). Other documents: see :func:`documents`."""
    opened = open_log(stream, source=source, jsonl=jsonl, warn=warn,
                      include_sidechains=include_sidechains, all_segments=all_segments)
    if isinstance(opened, LogStream):
        doc = opened.document()
        yield FormatDocument(doc, 0, None, None, info=opened.info())
        return
    yield from documents(opened if opened is not None else stream, source=source, jsonl=jsonl,
                         keep_raw=keep_raw, convert_documents=convert_documents)


# formats read from their bytes, not as JSON: each module has ``sniff(head)`` (the first
# bytes of the input) and ``load(stream, name)`` (the value its ``detect`` and ``read`` take)
BYTE_FORMATS: tuple[ModuleType, ...] = tuple(m for m in MODULES.values() if hasattr(m, "sniff"))
_HEAD = 64


def _byte_format(stream: Any, source: str) -> ModuleType | None:
    head = _peek(stream, _HEAD)
    for candidate in BYTE_FORMATS:
        if source in (AUTO, candidate.NAME) and candidate.sniff(head):
            return candidate
    return None


def _peek(stream: Any, size: int) -> bytes:
    """The first ``size`` bytes of ``stream``, not consumed (b"" when it cannot tell)."""
    peek = getattr(stream, "peek", None)
    try:
        if peek is not None:
            return peek(size)[:size]
        if stream.seekable():
            start = stream.tell()
            head = stream.read(size)
            stream.seek(start)
            return head
    except (OSError, ValueError, AttributeError):
        pass
    return b""


def documents(stream: Any, *, source: str = AUTO, jsonl: bool | None = None, keep_raw: bool = False,
              convert_documents: bool = True) -> Iterator[FormatDocument]:
    """The documents (not a session log) of ``stream``, converted to OpenAI messages unless they
    are ``openai`` or ``anthropic`` already, or ``convert_documents`` is false. With ``auto``,
    each document's format is detected: in a batch whose first document is ``openai`` or
    ``anthropic`` the later ones get a cheap shape test (:func:`detect_quick`) and are passed
    through as they are read when they match. A JSON array of ShareGPT records is read as a
    batch, one transcript per record; a container (``history``, ...) as its messages.
    ``info["format"]`` is the format read."""
    docs = jsonio.read_documents(stream, jsonl=jsonl, keep_raw=keep_raw or source == AUTO,
                                 first=getattr(stream, "parsed", None))
    if _gzipped(stream):
        docs = _named_gzip(docs)
    first: str | None = None
    shared: dict = {}
    index = 0
    for doc in docs:
        raw, line_raw = (doc.raw, None) if keep_raw else (None, doc.raw)
        doc.raw = None  # (a whole document's bytes are not kept while it is worked on)
        if source == AUTO:
            try:
                found = detect_document(doc.data) if first is None else detect_quick(doc.data, line_raw)
            except InputError as err:
                raise (err.located(doc.where) if doc.where else err) from None
            if first is None and doc.index == 0 and found in PLAIN:
                first, shared = found, {"format": found, "lost": {}}
        else:
            found = source
        line_raw = None
        if found == first and container_of(doc.data) is None:
            yield FormatDocument(doc.data, index, doc.line, raw, info=shared)
            index += 1
            continue
        for out in _found(doc.data, found, source, index, doc.line, raw, convert_documents):
            yield out
            index += 1


def _found(value: Any, found: str, source: str, index: int, line: int | None, raw: bytes | None,
           convert: bool) -> Iterator[FormatDocument]:
    """The transcripts of one document of format ``found``: itself, or each record of it."""
    split = _records(value, found, source)
    if split is None:
        yield _document(value, found, index, line, raw, convert)
        return
    for k, one in enumerate(split):
        yield _document(one, found, index + k, line, None, convert, k + 1)


def _gzipped(stream: Any) -> bool:
    return bool(getattr(stream, "gzipped", False) or getattr(getattr(stream, "stream", None),
                                                             "gzipped", False))


def _named_gzip(docs: Iterator[jsonio.Document]) -> Iterator[jsonio.Document]:
    """``docs``, an error before the first one naming the input as gzip (what it holds is no
    transcript: a gzip of anything else is not read as text with a bare UTF-8 error)."""
    try:
        first = next(docs, None)
    except InputError as err:
        if "gzip" not in err.message:
            err.message = f"gzip-compressed input that holds no JSON transcript: {err.message}"
        raise
    if first is not None:
        yield first
        yield from docs


def _records(value: Any, found: str, source: str) -> list | None:
    """The transcripts one document of format ``found`` holds, when it holds several (a JSON
    array of ShareGPT records, the sessions of an agent's store), else None."""
    if found == SHAREGPT:
        return value if sharegpt.is_records(value, loose=source == SHAREGPT) else None
    split = getattr(MODULES.get(found), "records", None)
    return split(value) if split is not None else None


def _document(value: Any, found: str, index: int, line: int | None, raw: bytes | None,
              convert: bool, record: int | None = None) -> FormatDocument:
    if convert:
        data, info = prepare(value, found)
    else:
        lost: dict = {}
        data = unwrap(value, lost) if found in PLAIN else value
        info = {"format": found, "lost": lost}
    return FormatDocument(data, index, line, raw, info=info, record=record)


def write_stream(out: BinaryIO, messages: Iterable[dict], tail: Callable[[], dict], target: str,
                 lost: dict, *, pretty: bool = False, wire: dict | None = None) -> None:
    """Write one transcript in format ``target`` while its OpenAI ``messages`` are produced
    (:func:`hermesctx.formats._logs.write_stream`)."""
    _logs.write_stream(out, messages, tail, writer(target), lost, pretty=pretty, wire=wire)
