"""The one document loop: read any format, run a stage on each document, write it back.

Every command and ``run`` go through here (``run --jobs`` workers and the Dask runner parse
single lines and share :func:`hermesctx.pipeline.run_document`): input from one or several
files or stdin (gzip too), documents one at a time (memory does not grow with a batch), errors located
(``line 3: messages[7]: ...``), outputs through the send path of their format, reports on
stderr and in ``--report FILE``, ``--in-place`` (atomic, ``--backup``) and the ``--check``
modes (:func:`report_problems`). No click here: the command line only parses options.
"""

from __future__ import annotations

import io as _stdio
import os
import stat
import sys

from hermesctx import jsonio
from hermesctx.context import Env, plural
from hermesctx.errors import FileIOError, HermesctxError, UsageError
from hermesctx.exit import ExitStatus

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence
    from typing import Any, BinaryIO
    Transform = Callable[[Any], tuple[Any, dict | None]]
    Paths = str | Sequence[str]

_READ_BUFFER = 4 << 20  # long JSONL lines (transcripts of 100s of KB) split ~2x faster than through 1 MiB
# a regular file up to this size is read with one read(2), not through a buffered reader (which
# costs five more system calls: a shell glob of 1,000 small transcripts in one call pays it 1,000 times)
_SMALL_FILE = 256 << 10


class open_input:
    """``with open_input(env, path) as stream``: ``-`` is stdin (refused when it is a terminal:
    nothing was piped); else the named file. Gzip-compressed input is decompressed as it is
    read (:func:`jsonio.decompressed`). The file is closed when the block ends."""

    def __init__(self, env: Env, path: str):
        self.env, self.path = env, path
        self.handle: BinaryIO | None = None  # what the end of the block closes

    def __enter__(self) -> BinaryIO:
        stream, self.handle = _opened(self.env, self.path)
        return stream

    def __exit__(self, *exc: Any) -> None:
        if self.handle is not None:
            self.handle.close()


def _opened(env: Env, path: str) -> tuple[BinaryIO, BinaryIO | None]:
    """What :class:`open_input` reads, and the handle it closes afterwards (None: nothing)."""
    if path == "-":
        if env.stdin_isatty:
            raise UsageError("no input: pipe a transcript in or name a file",
                             hint="e.g. hermesctx estimate examples/coding-session.json")
        if env.stdin is getattr(sys.stdin, "buffer", None):
            # the process's own stdin, not read yet: through a 4 MiB buffer (long JSONL lines
            # split several times faster than through the default 8 KiB one)
            _tune_for(os.fstat(sys.stdin.fileno()).st_size)  # (a pipe's size is 0: not tuned)
            return _watched(env, open(sys.stdin.fileno(), "rb", buffering=_READ_BUFFER, closefd=False))
        return jsonio.decompressed(env.stdin, env.input_cap), None
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            info = os.fstat(fd)  # (the open file's: no second path lookup)
            _tune_for(info.st_size)
            data = None
            if info.st_size <= _SMALL_FILE and env.progress is None and stat.S_ISREG(info.st_mode):
                data = os.read(fd, info.st_size + 1)  # a byte more: all of it gives just its size
                if len(data) != info.st_size:  # it grew or shrank since, or its size says nothing
                    data = None                # (/proc): read as a stream, from the start
                    os.lseek(fd, 0, os.SEEK_SET)
            raw = open(fd, "rb", buffering=0) if data is None else None  # (refuses a directory)
            if raw is not None:
                raw.name = path  # (not the descriptor: a reader finds the files beside it)
        except OSError:
            os.close(fd)
            raise
        if data is not None:
            os.close(fd)
    except IsADirectoryError:
        return _directory(path), None
    except OSError as exc:
        raise FileIOError(f"cannot read {path}: {exc.strerror}", path=path) from None
    if data is not None:
        return _small_file(data, path, env), None
    return _watched(env, _stdio.BufferedReader(raw, _READ_BUFFER))


def _watched(env: Env, handle: BinaryIO) -> tuple[BinaryIO, BinaryIO]:
    """A buffered input, its progress watched, decompressed if it is gzip (closed on failure)."""
    try:
        if env.progress is not None:
            env.progress.watch(handle.fileno())
        return jsonio.decompressed(handle, env.input_cap), handle
    except BaseException:
        handle.close()
        raise


def _directory(path: str) -> BinaryIO:
    """A directory argument: an agent's storage tree (OpenCode's), as the JSON of what it holds."""
    from hermesctx.formats import opencode

    stream = _stdio.BytesIO(jsonio.dumps(opencode.load_tree(path)))
    stream.name = path
    return stream


def _small_file(data: bytes, path: str, env: Env) -> BinaryIO:
    """A small file read at once, as a stream of its bytes named as the file is (a session log
    finds its subagent files beside it); gzip too."""
    stream = _stdio.BytesIO(data)
    stream.name = path
    return jsonio.decompressed(stream, env.input_cap) if data[:2] == jsonio.GZIP_MAGIC else stream


def _tune_for(size: int) -> None:
    """A long input keeps the memory each document frees for the next one
    (:func:`jsonio.keep_freed_memory`), and is read by orjson from its first line
    (:func:`jsonio.expect_input`); called before its read buffer is allocated."""
    jsonio.expect_input(size)
    if size > jsonio.LONG_INPUT:
        jsonio.keep_freed_memory()




def paths_of(path: Paths) -> list[str]:
    """The FILE arguments of a command as a list (none: stdin, ``-``); a directory that is not
    an agent's storage tree stands for the files in it (:func:`files_in`). Several: their sizes
    added up tell jsonio whether orjson should read them from the start."""
    paths = [one for given in ([path] if isinstance(path, str) else list(path) or ["-"]) for one in files_in(given)]
    if len(paths) > 1:
        jsonio.expect_files(paths)
    return paths


def files_in(path: str) -> list[str]:
    """``[path]``, or for a folder of transcripts (a directory that is not an OpenCode storage
    tree) the files in it, in name order (not those in its subdirectories, nor hidden ones)."""
    if path == "-" or not os.path.isdir(path):
        return [path]
    from hermesctx.formats.opencode import is_tree

    if is_tree(path):
        return [path]
    try:
        names = sorted(name for name in os.listdir(path) if not name.startswith("."))
    except OSError:
        return [path]  # (said when it is read)
    return [os.path.join(path, name) for name in names if os.path.isfile(os.path.join(path, name))] or [path]


_PRETTY_ONE = ("--pretty indents one document, and {what}: indented, they could not be read back",
               "leave --pretty out to write one compact document per line")


def pretty_files(pretty: bool, paths: Sequence[str], in_place: bool = False) -> None:
    """``--pretty`` is for one document: several FILEs into one stream are refused (exit 2)."""
    if pretty and len(paths) > 1 and not in_place:
        message, hint = _PRETTY_ONE
        raise UsageError(message.format(what=f"{len(paths)} FILEs go to one stream"), hint=hint)


def one_when_pretty(docs: Iterable[Any], pretty: bool, records: bool = False) -> Iterator[Any]:
    """``docs`` as they are; with ``pretty``, an input of more than one document (JSON Lines) is
    refused (exit 2) before anything of it is written: a second document is looked for first.
    ``records``: the records of one JSON array, written back as one array (``--in-place``), pass."""
    if not pretty:
        yield from docs
        return
    docs = iter(docs)
    first = next(docs, None)
    if first is None:
        return
    second = next(docs, None)
    if records and getattr(second, "record", None) is not None:
        yield first
        yield second
        yield from docs
        return
    if second is not None:
        message, hint = _PRETTY_ONE
        raise UsageError(message.format(what="the input holds several (JSON Lines)"), hint=hint)
    yield first


def from_file(docs: Iterable[jsonio.Document], file: str | None) -> Iterator[jsonio.Document]:
    """The documents of one of several FILE arguments, located by its name (``b.jsonl: line 3``;
    None: the only input, named by line alone)."""
    for doc in docs:
        doc.file = file
        yield doc


def documents_past_failures(env: Env, path: Paths, jsonl: bool | None, keep_going: KeepGoing | None,
                            **kwargs: Any) -> Iterator[jsonio.Document]:
    """:func:`documents`, where with ``keep_going`` and several FILEs a FILE that fails as it is read
    (unreadable, not JSON, no transcript) is said and skipped, the batch going on; it ends with the
    summary line of :class:`KeepGoing` (said by the caller, after its own last line:
    :func:`hermesctx.cli.runner.past_failures`)."""
    paths = paths_of(path)
    if keep_going is None or len(paths) == 1:
        yield from documents(env, path, jsonl, **kwargs)
        return
    keep_going.several = True
    for one in paths:
        done = 0
        try:
            for doc in documents(env, one, jsonl, file=one, **kwargs):
                done += 1
                yield doc
        except HermesctxError as err:
            keep_going.file_failed(env, in_file(err, one))
            continue
        keep_going.file_done(done)


def documents(env: Env, path: Paths, jsonl: bool | None, *,
              keep_raw: bool = False, source: str | None = None, target: str | None = None,
              file: str | None = None, **format_kwargs: Any) -> Iterator[jsonio.Document]:
    """The documents of one input, or of several FILE arguments one after the other (each
    located by its file name: ``b.jsonl: line 3``; ``file``: the name one input's documents
    carry, a FILE of several read one at a time). ``source=None``: plain JSON / JSON Lines
    as always. With a format name (``auto`` included) see :func:`format_documents`
    (``target`` is for the writer: ignored here)."""
    paths = paths_of(path)
    several = len(paths) > 1
    for one in paths:
        if several:
            file = one
        try:
            if source is not None:
                yield from format_documents(env, one, jsonl, keep_raw=keep_raw, source=source, file=file,
                                            **format_kwargs)
                continue
            with open_input(env, one) as stream:
                yield from from_file(jsonio.read_documents(stream, jsonl=jsonl, keep_raw=keep_raw), file)
        except HermesctxError as err:  # raised while reading (not by the consumer)
            in_file(err, file)
            raise


def entries(env: Env, path: Paths) -> Iterator[tuple[Any, str]]:
    """``(value, where)`` for the entries of a JSON Lines dataset read as Hermes reads one
    (:func:`jsonio.read_entries`: a line that is not JSON is skipped with a warning), of one
    input or of several FILEs one after the other (``b.jsonl: line 3``)."""
    paths = paths_of(path)
    several = len(paths) > 1
    for one in paths:
        file = one if several else None
        try:
            with open_input(env, one) as stream:
                for value, where in jsonio.read_entries(stream, warner(env, file)):
                    yield value, (f"{one}: {where}" if several else where)
        except HermesctxError as err:
            raise in_file(err, file) from None


def in_file(err: HermesctxError, file: str | None) -> HermesctxError:
    """``err`` located in ``file`` (once: an error located by its document, or one that says
    the file cannot be read, names it already; None, the only input: as it is)."""
    if (file is not None and err.where != file and not (err.where or "").startswith(f"{file}: ")
            and getattr(err, "path", None) != file):
        err.located(file)
    return err


def format_documents(env: Env, path: str, jsonl: bool | None, *, keep_raw: bool = False,
                     source: str = "auto", include_sidechains: bool = False,
                     all_segments: bool = False, convert_documents: bool = True,
                     file: str | None = None) -> Iterator[jsonio.Document]:
    """Documents in any format :mod:`hermesctx.formats` reads: a Claude Code / Codex session
    log (one file, one transcript, folded event by event), Responses items or ShareGPT become
    OpenAI messages; OpenAI and Anthropic bodies pass through. Each has ``.info`` (the format
    read, what was lost, usage recorded in a log) and ``.file`` (``file``: one of several FILE
    arguments, named in its warnings)."""
    with open_input(env, path) as stream:
        yield from format_stream(env, stream, jsonl, keep_raw=keep_raw, source=source,
                                 include_sidechains=include_sidechains, all_segments=all_segments,
                                 convert_documents=convert_documents, file=file)


def format_stream(env: Env, stream: BinaryIO, jsonl: bool | None, *, keep_raw: bool = False,
                  source: str = "auto", include_sidechains: bool = False, all_segments: bool = False,
                  convert_documents: bool = True, file: str | None = None) -> Iterator[jsonio.Document]:
    """:func:`format_documents` of an input opened already (``run --jobs`` reads a log or a
    single document itself before it knows there is nothing to share out)."""
    from hermesctx import formats

    for doc in formats.read_documents(
            stream, source=source, jsonl=jsonl, keep_raw=keep_raw,
            include_sidechains=include_sidechains, all_segments=all_segments,
            convert_documents=convert_documents, warn=warner(env, file)):
        doc.file = file
        if convert_documents:
            warn_lost(env, doc)
        yield doc


def warner(env: Env, file: str | None) -> Callable[[str], None]:
    """``env.warn`` for what a reader says of ``file`` (one of several FILEs: named first)."""
    if file is None:
        return env.warn
    return lambda message: env.warn(f"{file}: {message}")


def warn_lost(env: Env, doc: jsonio.Document) -> None:
    """A warning per kind of what reading ``doc`` into OpenAI messages left out (named as lost
    from what is written by default: OpenAI, or Responses for Responses input)."""
    from hermesctx import formats

    lines = [*formats.describe_lost(doc.info.get("lost") or {}, formats.output_format(doc.info, None)),
             *segments_left_out(doc.info)]
    for line in lines:
        env.warn(f"{doc.where}: {line}" if doc.where else line)


def segments_left_out(info: dict) -> list[str]:
    """What a session log left out of the transcript, said rather than lost silently: what came
    before its last compaction boundary (by default only the context the model saw after it is
    read), and the branches a rewind left (the user went back and asked again: the model never
    saw them after that)."""
    lines = []
    dropped = info.get("dropped_before_compaction")
    if dropped:
        lines.append(f"{plural(dropped, 'message event')} before the session's last compaction boundary not "
                     "read (the context the model saw after it); --all-segments reads them")
    abandoned = info.get("abandoned_branch_entries")
    if abandoned:
        lines.append(f"{plural(abandoned, 'entry', 'entries')} on branches a rewind left not read (the user went "
                     "back and asked again: the transcript is the branch the session went on with)")
    return lines


def write_back(env: Env, doc: jsonio.Document, result: Any, target: str | None,
               wire: dict | None = None, ready: str | None = None) -> Any:
    """A stage's result for a document read by :func:`format_documents`, in the format the
    command writes (the input's own: OpenAI / Anthropic bodies are as they came; else
    ``target``, else OpenAI), as it goes on the wire (:mod:`hermesctx.wire.send`). What that
    format cannot hold, and what the send path changed (also counted in ``wire``), is warned
    about. ``ready``: the format whose send path need not check ``result``'s messages again
    (:data:`hermesctx.wire.send.READY`)."""
    from hermesctx import formats
    from hermesctx.wire import send

    info = getattr(doc, "info", None)
    if info is None:
        from hermesctx.messages import detect_format

        info = {"format": detect_format(result)}
    lost: dict = {}
    wire = {} if wire is None else wire
    out = formats.write_back(result, info, target, lost, wire, ready)
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
            from hermesctx.redact import redact_strings

            report = redact_strings(report)
            if doc.line is not None:
                report = {"line": doc.line, **report}
            if doc.file is not None:
                report = {"file": doc.file, **report}
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




def located(docs: Iterable[jsonio.Document], fn: Callable[[jsonio.Document], Any], *,
            keep_going: KeepGoing | None = None, env: Env | None = None,
            stdout: Any = None) -> Iterator[tuple[jsonio.Document, Any]]:
    """``(doc, fn(doc))`` for every document; an error names where it happened
    (``line 3: messages[7]: ...``). The one place errors get their document's location.
    With ``keep_going`` (documents from :meth:`KeepGoing.documents`) a JSON line that fails is
    said on ``env``'s stderr and written unchanged to ``stdout`` (or left out), not yielded."""
    for doc in docs:
        try:
            if isinstance(doc, _Bad):
                raise doc.error
            try:
                result = fn(doc)
            except HermesctxError as err:
                raise (err.located(doc.where) if doc.where else err) from None
        except HermesctxError as err:
            if keep_going is None or doc.raw is None:
                raise
            keep_going.failed(env, err, doc.raw, stdout)
            continue
        yield doc, result


def transform_stream(env: Env, path: Paths, fn: Transform, *, jsonl: bool | None, pretty: bool,
                     report: str | None, describe: Callable[[dict], str] | None = None,
                     emit: bool = True, in_place: bool = False, backup: bool = False,
                     formats: dict | None = None, keep_going: KeepGoing | None = None) -> int:
    """Run ``fn(document) -> (output, report)`` on every document of one input or of several
    FILE arguments, writing each output as soon as it is ready (one document at a time:
    memory does not grow with the batch).

    Errors are located (``line 3: messages[7]: …``, with the file name when there are several);
    nothing of a failing document is written. ``in_place`` writes the output over each FILE
    atomically (temp file in the same directory, fsync, rename; ``backup`` keeps the original
    as FILE.bak); on any error that FILE is left untouched. ``formats`` (the format options:
    ``source``, ``target``, ...) reads any transcript format and writes each result back with
    :func:`write_back`. Every output goes through the send path of its format
    (:func:`write_back`). ``keep_going``: a bad line does not end the input
    (:class:`KeepGoing`). Returns how many documents were processed.
    """
    paths = paths_of(path)
    if in_place and "-" in paths:
        raise UsageError("--in-place needs a FILE argument, not stdin")
    pretty_files(pretty and emit, paths, in_place)
    sink = ReportSink(env, report)
    ok = False
    count = 0
    progress = Progress.start(env)
    try:
        # --in-place: one output per FILE; else one stream over all of them
        per_file = in_place or keep_going is not None  # one output / one line reader per FILE
        if not per_file:
            count = _transform(env, paths if len(paths) > 1 else paths[0], fn, sink, pretty=pretty,
                               describe=describe, emit=emit, in_place=False, backup=False, jsonl=jsonl,
                               formats=formats)
        for one in paths if per_file else ():
            name = one if len(paths) > 1 else None  # what its documents, errors and warnings name
            if keep_going is not None:
                keep_going.file = name
            try:
                done = _transform(env, one, fn, sink, pretty=pretty, describe=describe, emit=emit,
                                  in_place=in_place, backup=backup, jsonl=jsonl, formats=formats,
                                  keep_going=keep_going, file=name)
            except HermesctxError as err:
                in_file(err, name)
                if keep_going is None or len(paths) == 1:
                    raise
                keep_going.file_failed(env, err)  # a file that fails as a whole: the next one goes on
                continue
            count += done
            if keep_going is not None:
                keep_going.file_done(done)
        if keep_going is not None and len(paths) > 1:
            keep_going.summary(env)
        ok = True
    finally:
        progress.done()
        sink.close(ok)
    return count


def _transform(env: Env, path: Paths, fn: Transform, sink: ReportSink, *, pretty: bool, describe, emit: bool,
               in_place: bool, backup: bool, jsonl: bool | None, formats: dict | None,
               keep_going: KeepGoing | None = None, file: str | None = None) -> int:
    out = _InPlace(path) if in_place else None
    stdout = out.handle if out else env.stdout
    if out is not None and out.pretty_layout():
        pretty = True  # a file rewritten keeps its own layout
    count = 0
    ok = False
    target = (formats or {}).get("target")
    records = _Records(stdout) if in_place else None  # a JSON array of records stays an array
    docs = one_when_pretty(documents(env, path, jsonl, file=file, **(formats or {})) if keep_going is None
                           else keep_going.documents(env, path, jsonl, formats or {}), pretty and emit,
                           records=in_place)
    try:
        for doc in docs:
            try:
                if isinstance(doc, _Bad):
                    raise doc.error
                if emit and in_place and count == 0 and formats:
                    _same_format(doc, target)
                try:
                    result, rep = fn(doc.data)
                    ready, rep = _ready_of(rep)
                    if emit:  # (what the stage's own send path changed is said with the rest)
                        wire: dict = dict(rep.get("wire") or {}) if isinstance(rep, dict) else {}
                        if not (isinstance(rep, dict) and rep.get("as_is")):  # (spill --restore's original)
                            result = write_back(env, doc, result, target, wire, ready)
                        if out is not None and not out.changed:
                            out.changed = result != doc.data
                        if wire:
                            rep = {**rep, "wire": wire}
                        data = jsonio.dumps(result, pretty=pretty)
                except HermesctxError as err:  # (the stage's, or the send path's)
                    raise (err.located(doc.where) if doc.where else err) from None
            except HermesctxError as err:
                if keep_going is None or doc.raw is None:
                    raise
                keep_going.failed(env, err, doc.raw, stdout if emit else None)
                continue
            if emit:
                if records is not None:
                    data = records.frame(getattr(doc, "record", None), data)
                stdout.write(data)
                if out is None:
                    stdout.flush()
            if rep is not None:
                sink.add(doc, rep, describe(rep) if describe else None)
            count += 1
            if env.progress is not None:
                env.progress.tick()
        if records is not None:
            records.frame(None, b"")
        ok = True
    finally:
        if out is not None:
            out.close(ok, backup=backup)
    return count


def _ready_of(report: Any) -> tuple[str | None, Any]:
    """:func:`hermesctx.wire.send.ready_of`, without importing the send path for a report that
    says nothing of it."""
    if type(report) is not dict or len(report) == 0:
        return None, report
    from hermesctx.wire import send

    return send.ready_of(report)


class _Records:
    """The records of a JSON array (ShareGPT records, read one transcript each) written back as
    one array, not as JSON Lines."""

    def __init__(self, stdout: Any):
        self.stdout = stdout
        self.open = False

    def frame(self, record: int | None, data: bytes) -> bytes:
        """``data`` (one output, newline-terminated) for record ``record`` (1-based; None: no
        record, or the end), closing the array before and opening or continuing it."""
        if self.open and (record is None or record == 1):
            self.stdout.write(b"]\n")
            self.open = False
        if record is None:
            return data
        data = (b"[" if record == 1 else b",") + data[:-1]
        self.open = True
        return data


class _Bad:
    """A line that is not a transcript, for :class:`KeepGoing`."""

    def __init__(self, error: HermesctxError, raw: bytes):
        self.error, self.raw, self.where = error, raw, None


class KeepGoing:
    """``--keep-going``: a JSON line that fails (not JSON, not a transcript, refused by the
    stage) is reported on stderr with its line number and written through unchanged
    (``pass``) or left out (``skip``); the other lines go on. ``failures`` counts them."""

    def __init__(self, mode: str = "pass"):
        self.mode = mode
        self.failures = 0
        self.file: str | None = None  # the FILE being read, when there are several
        self.files_done = self.files_failed = self.documents_done = 0
        self.several = False  # several FILEs read past failures: the summary line is owed at the end

    def file_done(self, documents: int) -> None:
        """A FILE read to its end, with ``documents`` done."""
        self.files_done += 1
        self.documents_done += documents

    def file_failed(self, env: Env, err: HermesctxError) -> None:
        """A FILE that failed as a whole (unreadable, no transcript, refused): said, nothing of it
        written, and the batch goes on with the next FILE."""
        self.failures += 1
        self.files_failed += 1
        text = str(err).replace("\n", " ")
        env.stderr.write(f"hermesctx: error: {text} (file skipped)\n")
        env.stderr.flush()

    def summary(self, env: Env) -> None:
        """The batch's closing line: files and documents done, failed."""
        lines = self.failures - self.files_failed
        env.stderr.write(f"hermesctx: {plural(self.files_done + self.files_failed, 'file')}: {self.files_done:,} done "
                         f"({plural(self.documents_done, 'document')}), {self.files_failed:,} failed"
                         + (f"; {plural(lines, 'line')} failed inside them" if lines else "") + "\n")
        env.stderr.flush()

    def documents(self, env: Env, path: str, jsonl: bool | None, formats: dict) -> Iterator:
        """The documents of ``path``, one line at a time; a line that cannot be read comes as
        a :class:`_Bad` instead of ending the input. One document (not JSON Lines) or a
        session log: read as without the flag."""
        from hermesctx import formats as registry

        source = formats.get("source")
        lines = raw_lines(env, path, jsonl, source == "auto") if jsonl is not False else None
        first = next(lines, None) if lines is not None else None
        if first is None or first == "log":
            yield from documents(env, path, jsonl, keep_raw=True, file=self.file, **formats)
            return
        index = 0
        for line_no, raw in _chain(first, lines):
            try:
                value = jsonio.loads(raw)
                data, info = registry.prepare(value, source) if source is not None else (value, None)
            except HermesctxError as err:
                yield _Bad(err.located(f"line {line_no}"), raw)
                continue
            doc = jsonio.Document(data, index, line_no, raw, self.file)
            if info is not None:
                doc.info = info  # what write_back needs to write it in its own format
                warn_lost(env, doc)
            yield doc
            index += 1

    def failed(self, env: Env, err: HermesctxError, raw: bytes, stdout) -> None:
        self.failures += 1
        text = str(in_file(err, self.file)).replace("\n", " ")
        env.stderr.write(f"hermesctx: error: {text} ({'written unchanged' if self.mode == 'pass' else 'skipped'})\n")
        env.stderr.flush()
        if self.mode == "pass" and stdout is not None:
            stdout.write(raw if raw.endswith(b"\n") else raw + b"\n")


def _chain(first, rest):
    yield first
    yield from rest


def raw_lines(env, path, jsonl, log_check=False):
    """``(line_no, raw)`` for every JSON line of the input, unparsed; ``None`` first when the
    input is one (pretty-printed) document rather than JSON Lines. Detection, blank lines and
    the BOM are handled as jsonio.read_documents handles them."""
    from hermesctx import formats

    with open_input(env, path) as stream:
        head, first = jsonio.first_line(stream)
        line_no = len(head)
        if jsonl is None or log_check:
            try:
                value = jsonio.try_loads(first)
            except HermesctxError as err:  # (one JSON value, refused: a key twice)
                raise err.located(f"line {line_no}") from None
            if value is jsonio.INVALID:
                if jsonl is None:
                    yield None  # not JSON Lines: the whole input is one document
                    yield first + stream.read()
                    return
                value = None
            if log_check and formats.detect_line(value) is not None:
                yield "log"  # a session log: one transcript, read by the caller from here
                yield formats.Rest([first], stream)
                return
        yield line_no, first
        for raw in stream:
            line_no += 1
            if not raw.isspace():
                yield line_no, raw


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
        self.changed = False  # whether any document's output differs from it: else FILE is left as it is

    def pretty_layout(self) -> bool:
        """Whether FILE is one JSON document written over several indented lines (rewritten the same way)."""
        import stat

        try:
            if not stat.S_ISREG(os.stat(self.path).st_mode):  # (a FIFO's bytes are the input's)
                return False
            with open(self.path, "rb") as f:
                head = f.read(4096)
        except OSError:
            return False
        first, _, rest = head.lstrip().partition(b"\n")
        return first in (b"[", b"{") or (first[:1] in (b"[", b"{") and rest[:1] in (b" ", b"\t"))

    def close(self, ok: bool, *, backup: bool) -> None:
        import shutil

        bak = None
        ok_and_changed = ok and self.changed
        try:
            if ok:
                self.handle.flush()
                os.fsync(self.handle.fileno())
            self.handle.close()
            if ok_and_changed:
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


def doc_target(doc: Any, target: str | None) -> str:
    """The API a document is checked against: ``target``, else its own format (OpenAI and
    Anthropic bodies detected one by one, everything else read to OpenAI)."""
    if target:
        return target
    info = getattr(doc, "info", None)
    if info is not None and info.get("format") == "responses":  # (its own items and parameters)
        return "responses"
    if info is not None and info.get("format") not in ("openai", "anthropic"):
        return "openai"
    from hermesctx.wire.rules import target_of

    return target_of(doc.data)


def report_problems(env: Env, docs: Iterable, checker: Callable[[Any, str, int | None], list], *,
                    target: str | None = None, as_json: bool = False) -> ExitStatus:
    """Check each document, one line per problem on stderr (or JSON Lines on stdout), then a
    summary line; exit 1 when a counted problem was found. Shared by ``validate`` and
    ``sanitize --check``."""
    from hermesctx.redact import redact  # (a problem quotes values of the input: a key in a role too)

    counted = shown = transcripts = bad = 0
    uncounted: dict[str, int] = {}
    for doc, found in located(docs, lambda doc: checker(doc.data, doc_target(doc, target), doc.line)):
        transcripts += 1
        if (getattr(doc, "info", None) or {}).get("empty_log"):  # a session log gave no message
            from hermesctx.wire.rules import Problem

            found = [Problem("messages", "EMPTY-LOG", "reject",
                             "the log holds events but no message"), *found]
        where = f"{doc.where}: " if doc.where else ""
        any_counted = False
        for problem in found:
            shown += 1
            if problem.counted:
                counted += 1
                any_counted = True
            else:
                uncounted[problem.severity] = uncounted.get(problem.severity, 0) + 1
            if as_json:
                row = {"line": doc.line, "transcript": transcripts, **problem.as_dict(),
                       "counted": problem.counted}
                row["message"] = redact(row["message"]) if isinstance(row.get("message"), str) else row.get("message")
                env.stdout.write(jsonio.dumps(row))
            else:
                tag = "" if problem.severity == "reject" else f" ({problem.severity})"
                env.stderr.write(redact(f"{where}{problem.path}: {problem.rule}{tag}: {problem.message}") + "\n")
        bad += any_counted
    if as_json:
        env.stdout.flush()
    extra = ", ".join(f"{n} {severity}" for severity, n in sorted(uncounted.items()))

    found_line = (f"{plural(counted, 'problem')} in {bad:,} of {plural(transcripts, 'transcript')}" if counted
                  else f"no problems in {plural(transcripts, 'transcript')}")
    env.stderr.write(found_line + (f" ({extra} not counted)" if extra else "") + "\n")
    env.stderr.flush()
    return ExitStatus.CHECK_FAILED if counted else ExitStatus.OK


def report_each(env: Env, docs: Iterable[jsonio.Document],
                fn: Callable[[jsonio.Document], tuple[bytes, str | None, Any]],
                finish: Callable[[], bytes] | None = None) -> ExitStatus:
    """A command that reports on each document instead of rewriting it (``estimate``,
    ``cache-mark --check``): ``fn(doc) -> (stdout bytes, stderr text or None, failure)``; a
    failure that is a text is said on stderr with the document's line; exit 1 when any
    document failed. ``finish()``: what is written after the last document (a table of them all)."""
    failed = False
    progress = Progress.start(env)
    try:
        for doc, (out, err, failure) in located(docs, fn):
            failed = failed or bool(failure)
            env.stdout.write(out)
            if err is not None:
                env.stderr.write(err)
            if isinstance(failure, str):
                env.info(f"{doc.where}: {failure}" if doc.where else failure)
            progress.tick()
    finally:
        progress.done()
    if finish is not None:
        env.stdout.write(finish())
    return ExitStatus.CHECK_FAILED if failed else ExitStatus.OK


def _amount(size: float) -> str:
    """A number of bytes for a person: ``740 kB``, ``12.5 MB``."""
    return f"{size / 1e6:,.1f} MB" if size >= 1e6 else f"{size / 1e3:,.0f} kB"


class Progress:
    """A progress line on stderr while a batch runs, when stderr is a terminal (and not
    ``--quiet``): transcripts done, MB read, rate and, for a regular file, the time left;
    refreshed at most 5 times a second. Costs one call per document."""

    def __init__(self, env: Env):
        self.env, self.count, self.last, self.t0 = env, 0, 0.0, 0.0
        self.fd: int | None = None
        self.size = 0
        self.base = 0  # bytes of the files finished before the current one
        self.pos = 0  # the current file's offset when last seen (its fd is closed by the end)

    @classmethod
    def start(cls, env: Env) -> Progress | _NoProgress:
        if not env.stderr_isatty or env.quiet or env.progress is not None:
            return _NoProgress()
        import time

        env.progress = progress = cls(env)
        progress.t0 = time.monotonic()
        return progress

    def watch(self, fd: int) -> None:
        """The input file being read (its offset is how far we are)."""
        if self.fd is not None:
            self.base += self._position()
        self.fd, self.pos = fd, 0
        import stat

        try:
            info = os.fstat(fd)
            self.size = info.st_size if stat.S_ISREG(info.st_mode) else 0
        except OSError:
            self.size = 0

    def _position(self) -> int:
        if self.fd is not None:
            try:
                self.pos = os.lseek(self.fd, 0, os.SEEK_CUR)
            except OSError:  # (closed: what was read is the last offset seen)
                pass
        return self.pos

    def tick(self) -> None:
        import time

        self.count += 1
        now = time.monotonic()
        if now - self.last > 0.2:
            self.last = now
            self.env.stderr.write("\r" + self.line(now))
            self.env.stderr.flush()

    def line(self, now: float, final: bool = False) -> str:
        elapsed = max(now - self.t0, 1e-6)
        position = self.pos if final else self._position()
        done = self.base + position
        text = f"{plural(self.count, 'transcript')}, {_amount(done)}, {_amount(done / elapsed)}/s"
        if self.size and position and self.size > position:
            left = (self.size - position) / (position / elapsed if not self.base else (self.base + position) / elapsed)
            text += f", {int(left) // 60}:{int(left) % 60:02d} left"
        return text + "   "

    def done(self) -> None:
        import time

        if self.env.progress is self:
            self.env.progress = None
        if self.count:
            self.env.stderr.write("\r" + self.line(time.monotonic(), final=True) + "\n")
            self.env.stderr.flush()


class _NoProgress:
    count = 0

    def tick(self) -> None:
        pass

    def done(self) -> None:
        pass
