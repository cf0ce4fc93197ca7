"""Transcript formats: detection and readers that turn each into OpenAI chat messages.

Two kinds of input:

* documents (``openai``, ``anthropic``, ``responses``, ``sharegpt``): a JSON document, or JSON
  Lines with one transcript per line;
* session logs (``claude-code``, ``codex``): one JSONL *file* that is one transcript, one event
  per line. They are told apart from a batch by the first line's shape, and folded one event at
  a time (memory holds the converted messages, never the raw log).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from hermesctx import io
from hermesctx.errors import InputError
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
TARGETS = (OPENAI, ANTHROPIC, SHAREGPT)


@dataclass
class FormatDocument(io.Document):
    """A document read through a format reader: ``data`` is an OpenAI-format transcript (or the
    original body for ``openai``/``anthropic`` input); ``info`` says what was read and lost."""

    info: dict = field(default_factory=dict)


def detect_line(value: Any) -> str | None:
    """The log format a first JSONL line belongs to, or None (a document / batch line)."""
    from hermesctx.formats import claude_code, codex

    if claude_code.looks_like(value):
        return CLAUDE_CODE
    if codex.looks_like(value):
        return CODEX
    return None


def detect_document(doc: Any) -> str:
    from hermesctx.formats import responses, sharegpt

    if sharegpt.is_sharegpt(doc):
        return SHAREGPT
    if responses.is_items(doc):
        return RESPONSES
    if isinstance(doc, dict) and "messages" not in doc and (
            responses.is_items(doc.get("input")) or responses.is_items(doc.get("output"))):
        return RESPONSES
    if detect_line(doc) is not None:
        return detect_line(doc)  # type: ignore[return-value]
    return _chat_format(doc)


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
    if fmt in LOG_FORMATS:
        return read_log(iter([(doc, "line 1")]), fmt)[0]
    raise InputError(f"unknown format {fmt!r}")


def from_openai(doc: Any, target: str, lost: dict) -> Any:
    from hermesctx.formats import anthropic, sharegpt

    if isinstance(doc, list):
        doc = {"messages": doc}
    if target == OPENAI:
        return doc
    if target == ANTHROPIC:
        return anthropic.to_anthropic(doc, lost)
    if target == SHAREGPT:
        return sharegpt.from_openai(doc, lost)
    raise InputError(f"cannot write format {target!r}", hint=f"one of {', '.join(TARGETS)}")


def read_log(events, fmt: str, **kwargs) -> tuple[dict, dict]:
    from hermesctx.formats import claude_code, codex

    module = claude_code if fmt == CLAUDE_CODE else codex
    return module.read(events, **kwargs)


class _Rest:
    """A stream with its first line given back (for :func:`io.read_documents`)."""

    def __init__(self, first: bytes, stream: BinaryIO):
        self.first = first
        self.stream = stream

    def __iter__(self):
        if self.first:
            first, self.first = self.first, b""
            yield first
        yield from self.stream

    def read(self, *args) -> bytes:
        first, self.first = self.first, b""
        return first + self.stream.read()


def _events(first: bytes, first_no: int, stream: BinaryIO,
            warn: Callable[[str], None]) -> Iterator[tuple[Any, str]]:
    line_no = first_no
    pending: tuple[bytes, int] | None = (first, first_no)
    iterator = iter(stream)
    while pending is not None:
        raw, no = pending
        nxt = next(iterator, None)
        line_no += 1
        while nxt is not None and nxt.isspace():
            nxt = next(iterator, None)
            line_no += 1
        pending = (nxt, line_no) if nxt is not None else None
        try:
            value = io.loads(raw)
        except InputError:
            if pending is None and not raw.endswith(b"\n"):
                warn(f"line {no}: the log is cut off mid-line; the partial event was skipped")
            else:
                warn(f"line {no}: not JSON; skipped")
            continue
        yield value, f"line {no}"


def read_documents(stream: BinaryIO, *, fmt: str = AUTO, jsonl: bool | None = None,
                   keep_raw: bool = False, include_sidechains: bool = False,
                   all_segments: bool = False, convert_documents: bool = True,
                   warn: Callable[[str], None] = lambda m: None) -> Iterator[FormatDocument]:
    """Yield the transcripts of ``stream`` in format ``fmt`` (``auto``: detected).

    Session logs give one document (``line`` None) holding the whole log folded into OpenAI
    messages. Other documents are converted to OpenAI messages unless they are ``openai`` or
    ``anthropic`` already, or ``convert_documents`` is false (then only logs are converted).
    ``info["format"]`` is the format read.
    """
    if fmt not in (AUTO, *FORMATS):
        raise InputError(f"unknown format {fmt!r}", hint=f"one of auto, {', '.join(FORMATS)}")
    first = b""
    line_no = 0
    if jsonl is not False:
        for raw in stream:
            line_no += 1
            if raw.strip():
                first = raw
                break
        if not first:
            raise InputError("empty input", hint="expected a JSON document or JSON Lines")
        if line_no == 1 and first.startswith(b"\xef\xbb\xbf"):
            first = first[3:]
        log = fmt if fmt in LOG_FORMATS else None
        if log is None and fmt == AUTO:
            try:
                log = detect_line(io.loads(first))
            except InputError:
                log = None
        if log is not None:
            doc, info = read_log(_events(first, line_no, stream, warn), log,
                                 include_sidechains=include_sidechains,
                                 all_segments=all_segments, warn=warn)
            for what, n in info.get("lost", {}).items():
                warn(f"{what}: {n} not kept in the OpenAI form")
            yield FormatDocument(doc, 0, None, None, info=info)
            return
        source = _Rest(first, stream)
        if line_no > 1:
            line_offset = line_no - 1
        else:
            line_offset = 0
    else:
        source = stream
        line_offset = 0
    for doc in io.read_documents(source, jsonl=jsonl, keep_raw=keep_raw):
        line = doc.line + line_offset if doc.line is not None else None
        found = fmt if fmt != AUTO else detect_document(doc.data)
        lost: dict = {}
        data = doc.data
        if convert_documents and found not in (OPENAI, ANTHROPIC):
            data = to_openai(doc.data, found, lost)
        for what, n in lost.items():
            warn(f"{what}: {n} not kept in the OpenAI form")
        yield FormatDocument(data, doc.index, line, doc.raw, info={"format": found, "lost": lost})
