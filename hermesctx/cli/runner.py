"""What every command shares: the injected environment, input, output and reports.

Commands never touch ``sys.*`` directly; they get an :class:`Env` from the click context, so
tests can run them in-process with their own streams and environment.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, BinaryIO, TextIO

import click

from hermesctx import jsonio
from hermesctx.errors import FileIOError, HermesctxError, UsageError


@dataclass
class Env:
    stdin: BinaryIO
    stdout: BinaryIO
    stderr: TextIO
    environ: Mapping[str, str] = field(default_factory=dict)
    stdin_isatty: bool = False
    stderr_isatty: bool = False
    stdout_isatty: bool = False
    quiet: bool = False
    _warned: set = field(default_factory=set, repr=False)

    @classmethod
    def from_process(cls) -> Env:
        return cls(
            stdin=sys.stdin.buffer, stdout=sys.stdout.buffer, stderr=sys.stderr,
            environ=os.environ, stdin_isatty=sys.stdin.isatty(),
            stderr_isatty=sys.stderr.isatty(), stdout_isatty=sys.stdout.isatty(),
        )

    def warn(self, message: str) -> None:
        """One line on stderr; the same warning is given once per run, not once per line."""
        if message in self._warned:
            return
        self._warned.add(message)
        if not self.quiet:
            print(f"hermesctx: warning: {message}", file=self.stderr, flush=True)

    def info(self, message: str) -> None:
        if not self.quiet:
            print(message, file=self.stderr, flush=True)

    @property
    def color(self) -> bool:
        return self.stderr_isatty and "NO_COLOR" not in self.environ


def get_env() -> Env:
    ctx = click.get_current_context()
    root = ctx.find_root()
    if not isinstance(root.obj, Env):
        root.obj = Env.from_process()
    return root.obj


_READ_BUFFER = 1 << 20


@contextmanager
def open_input(env: Env, path: str) -> Iterator[BinaryIO]:
    """``-`` is stdin (refused when it is a terminal: nothing was piped); else the named file.
    Gzip-compressed input is decompressed as it is read (:func:`jsonio.decompressed`)."""
    if path == "-":
        if env.stdin_isatty:
            raise UsageError("no input: pipe a transcript in or name a file",
                             hint="e.g. hermesctx estimate examples/coding-session.json")
        if env.stdin is getattr(sys.stdin, "buffer", None):
            # the process's own stdin, not read yet: through a 1 MiB buffer (long JSONL lines
            # split several times faster than through the default 8 KiB one)
            with open(sys.stdin.fileno(), "rb", buffering=_READ_BUFFER, closefd=False) as handle:
                yield jsonio.decompressed(handle)
            return
        yield jsonio.decompressed(env.stdin)
        return
    try:
        handle = open(path, "rb", buffering=_READ_BUFFER)
    except OSError as exc:
        raise FileIOError(f"cannot read {path}: {exc.strerror}") from None
    with handle:
        yield jsonio.decompressed(handle)


def documents(env: Env, path: str, jsonl: bool | None, *,
              keep_raw: bool = False, source: str | None = None,
              target: str | None = None, **format_kwargs: Any) -> Iterator[jsonio.Document]:
    """``source=None``: plain JSON / JSON Lines as always. With a format name (``auto``
    included) see :func:`format_documents` (``target`` is for the writer: ignored here)."""
    if source is not None:
        yield from format_documents(env, path, jsonl, keep_raw=keep_raw, source=source,
                                    **format_kwargs)
        return
    with open_input(env, path) as stream:
        yield from jsonio.read_documents(stream, jsonl=jsonl, keep_raw=keep_raw)


def format_documents(env: Env, path: str, jsonl: bool | None, *, keep_raw: bool = False,
                     source: str = "auto", include_sidechains: bool = False,
                     all_segments: bool = False,
                     convert_documents: bool = True) -> Iterator[jsonio.Document]:
    """Documents in any format :mod:`hermesctx.formats` reads: a Claude Code / Codex session
    log (one file, one transcript, folded event by event), Responses items or ShareGPT become
    OpenAI messages; OpenAI and Anthropic bodies pass through. Each has ``.info`` (the format
    read, what was lost, usage recorded in a log)."""
    from hermesctx import formats

    with open_input(env, path) as stream:
        for doc in formats.read_documents(
                stream, source=source, jsonl=jsonl, keep_raw=keep_raw,
                include_sidechains=include_sidechains, all_segments=all_segments,
                convert_documents=convert_documents, warn=env.warn):
            if convert_documents:
                for line in formats.describe_lost(doc.info.get("lost") or {}, "openai"):
                    env.warn(f"{doc.where}: {line}" if doc.where else line)
            yield doc


def write_back(env: Env, doc: jsonio.Document, result: Any, target: str | None,
               wire: dict | None = None) -> Any:
    """A stage's result for a document read by :func:`format_documents`, in the format the
    command writes (the input's own: OpenAI / Anthropic bodies are as they came; else
    ``target``, else OpenAI), as it goes on the wire (:mod:`hermesctx.wire.send`). What that
    format cannot hold, and what the send path changed (also counted in ``wire``), is warned
    about."""
    from hermesctx import formats
    from hermesctx.wire import send

    info = getattr(doc, "info", None)
    if info is None:
        from hermesctx.messages import detect_format

        info = {"format": detect_format(result)}
    lost: dict = {}
    wire = {} if wire is None else wire
    out = formats.write_back(result, info, target, lost, wire)
    fmt = formats.output_format(info, target)
    for line in [*formats.describe_lost(lost, fmt), *send.describe(wire)]:
        env.warn(f"{doc.where}: {line}" if doc.where else line)
    return out


class ReportSink:
    """Per-document reports: a human line on stderr, and JSON in ``--report FILE`` too.

    The file holds one JSON value for a single document and JSON Lines for a batch; it is
    written to a temporary file beside the target and renamed into place at the end, also when
    the batch failed part-way or was interrupted (the reports of the documents done are kept;
    with none done, FILE is left as it was). A write error is exit 5, one line, no temp left.
    ``--report -`` writes the JSON to stderr instead of the human line (stdout carries the
    transcript).
    """

    def __init__(self, env: Env, path: str | None, *, to_stderr: bool = True):
        self.env = env
        self.path = path
        self.to_stderr = to_stderr
        self._tmp = None
        self._count = 0
        self._json_to_stderr = path == "-"
        if path and not self._json_to_stderr:
            directory = os.path.dirname(os.path.abspath(path))
            if not os.path.isdir(directory):
                raise FileIOError(f"cannot write report {path}: no such directory")
            name = f"{path}.{os.getpid()}.tmp"
            try:
                self._tmp = open(name, "wb")
            except OSError as exc:
                raise FileIOError(f"cannot write report {path}: {exc.strerror or exc}") from None

    def add(self, doc: jsonio.Document, report: dict, line: str | None) -> None:
        if self._tmp is not None or self._json_to_stderr:
            if doc.line is not None:
                report = {"line": doc.line, **report}
            if self._json_to_stderr:
                self.env.stderr.write(jsonio.dumps(report).decode("utf-8"))
                self.env.stderr.flush()
                return
            try:
                self._tmp.write(jsonio.dumps(report))
            except OSError as exc:
                self._discard()
                raise FileIOError(f"cannot write report {self.path}: {exc.strerror or exc}") from None
            self._count += 1
        if line and self.to_stderr:
            self.env.info(f"{doc.where}: {line}" if doc.where else line)

    def close(self, ok: bool = True) -> None:
        """Rename the reports into place; after a failure (``ok`` false) only when there are
        some, and a second error then is not raised over the first."""
        if self._tmp is None:
            return
        if not ok and not self._count:
            self._discard()
            return
        try:
            self._tmp.close()
            os.replace(self._tmp.name, self.path)
        except OSError as exc:
            self._discard()
            if ok:
                raise FileIOError(f"cannot write report {self.path}: {exc.strerror or exc}") from None
        self._tmp = None

    def _discard(self) -> None:
        if self._tmp is None:
            return
        try:
            self._tmp.close()
        except OSError:
            pass
        try:
            os.unlink(self._tmp.name)
        except OSError:
            pass
        self._tmp = None


Transform = Callable[[Any], tuple[Any, dict | None]]


def transform_stream(env: Env, path: str, fn: Transform, *, jsonl: bool | None, pretty: bool,
                     report: str | None, describe: Callable[[dict], str] | None = None,
                     emit: bool = True, in_place: bool = False, backup: bool = False,
                     formats: dict | None = None) -> int:
    """Run ``fn(document) -> (output, report)`` on every document, writing each output as soon
    as it is ready (one document at a time: memory does not grow with the batch).

    Errors are located (``line 3: messages[7]: …``); nothing of a failing document is written.
    ``in_place`` writes the output over FILE atomically (temp file in the same directory, fsync,
    rename; ``backup`` keeps the original as FILE.bak); on any error FILE is left untouched.
    ``formats`` (:func:`hermesctx.cli.options.format_kwargs`) reads any transcript format and
    writes each result back with :func:`write_back`. Every output goes through the send path
    of its format (:func:`write_back`). Returns how many documents were processed.
    """
    if in_place and path == "-":
        raise UsageError("--in-place needs a FILE argument, not stdin")
    sink = ReportSink(env, report)
    out = _InPlace(path) if in_place else None
    stdout = out.handle if out else env.stdout
    count = 0
    ok = False
    target = (formats or {}).get("target")
    records = _Records() if in_place else None
    try:
        for doc in documents(env, path, jsonl, **(formats or {})):
            try:
                result, rep = fn(doc.data)
            except HermesctxError as err:
                raise (err.located(doc.where) if doc.where else err) from None
            if emit:
                if in_place and count == 0 and formats:
                    _same_format(doc, target)
                wire: dict = {}
                result = write_back(env, doc, result, target, wire)
                if wire and isinstance(rep, dict):
                    rep = {**rep, "wire": {**(rep.get("wire") or {}), **wire}}
                data = jsonio.dumps(result, pretty=pretty)
                stdout.write(records.frame(getattr(doc, "record", None), data, pretty)
                             if records is not None else data)
                if out is None:
                    stdout.flush()
            if rep is not None:
                sink.add(doc, rep, describe(rep) if describe else None)
            count += 1
        if records is not None:
            stdout.write(records.frame(None, b"", pretty))
        ok = True
    finally:
        sink.close(ok)
        if out is not None:
            out.close(ok, backup=backup)
    return count


class _Records:
    """--in-place gives a JSON array of records (ShareGPT ones, read one transcript each) back
    as an array: :meth:`frame` puts the bracket or comma each output needs around it."""

    def __init__(self) -> None:
        self.open = False

    def frame(self, record: int | None, data: bytes, pretty: bool) -> bytes:
        """``data`` (one output, newline-ended; ``record``: 1-based in its array, None for a
        document of its own) as it is written."""
        head = b""
        if self.open and record in (None, 1):
            head, self.open = b"]\n", False
        if record is None:
            return head + data
        head += (b"[\n" if pretty else b"[") if record == 1 else (b",\n" if pretty else b",")
        self.open = True
        return head + data[:-1]


def _same_format(doc: jsonio.Document, target: str | None) -> None:
    """--in-place never turns a file into another format (a session log into JSON)."""
    from hermesctx import formats

    info = getattr(doc, "info", None) or {}
    found = info.get("format", "openai")
    out = formats.output_format(info, target)
    if out != found:
        raise UsageError(f"--in-place would rewrite a {found} file as {out}",
                         hint="write to stdout instead (without --in-place)")


class _InPlace:
    """Output that replaces ``path`` only when everything succeeded. A write error is exit 5
    (one line, the temp file removed, FILE untouched); ``backup`` keeps the original as
    FILE.bak, itself replaced atomically (a hard link to the original, renamed over the old
    .bak; a copy through a temp file where links are refused). A symbolic link stays a link:
    the file it points to is rewritten (and its .bak kept beside that file)."""

    def __init__(self, path: str):
        import tempfile

        self.path = os.path.realpath(path)
        directory = os.path.dirname(self.path)
        try:
            fd, self.tmp = tempfile.mkstemp(prefix=".hermesctx-", suffix=".tmp", dir=directory)
        except OSError as exc:
            raise FileIOError(f"cannot write beside {path}: {exc.strerror}") from None
        self.handle = _Checked(os.fdopen(fd, "wb"), path)

    def close(self, ok: bool, *, backup: bool) -> None:
        import shutil

        bak = None
        try:
            if ok:
                self.handle.flush()
                os.fsync(self.handle.fileno())
            self.handle.close()
            if ok:
                shutil.copymode(self.path, self.tmp)
                if backup:
                    bak = _temp_name(self.path + ".bak")
                    try:
                        os.link(self.path, bak, follow_symlinks=True)
                    except OSError:
                        shutil.copy2(self.path, bak)
                    os.replace(bak, self.path + ".bak")
                    bak = None
                os.replace(self.tmp, self.path)
        except OSError as exc:
            if ok:
                raise FileIOError(f"cannot write {self.path}: {exc.strerror or exc}") from None
        finally:
            for leftover in (self.tmp, bak):
                if leftover and os.path.lexists(leftover):
                    os.unlink(leftover)


def _temp_name(path: str) -> str:
    import secrets

    head, tail = os.path.split(path)
    return os.path.join(head, f".{tail}.{secrets.token_hex(4)}.tmp")


class _Checked:
    """A binary file whose write errors are :class:`FileIOError` naming ``path`` (exit 5)."""

    def __init__(self, handle: BinaryIO, path: str):
        self._handle = handle
        self.path = path

    def write(self, data: bytes) -> int:
        try:
            return self._handle.write(data)
        except OSError as exc:
            raise FileIOError(f"cannot write {self.path}: {exc.strerror or exc}") from None

    def flush(self) -> None:
        try:
            self._handle.flush()
        except OSError as exc:
            raise FileIOError(f"cannot write {self.path}: {exc.strerror or exc}") from None

    def fileno(self) -> int:
        return self._handle.fileno()

    def close(self) -> None:
        try:
            self._handle.close()
        except OSError:
            pass  # closing after a failed write: the error was raised already
