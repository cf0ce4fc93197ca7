"""The stages of a pipeline, in one process, on parsed documents (``hermesctx run``, its
workers and the Dask runner).

A pipeline is a list from the config file (``pipeline:``), each entry a stage name or a
one-key mapping of a stage name to its options::

    pipeline:
      - spill
      - prune
      - compress: {if_needed: true}
      - sanitize
      - cache-mark: {ttl: 1h}

Options are the stage's own ``Options`` (``if_needed`` or ``if-needed``: the field or its flag),
checked as the flags are and built by the same ``build``, so ``hermesctx run`` produces exactly
what the shell pipe ``hermesctx spill | hermesctx prune | ...`` produces.
"""

from __future__ import annotations

from hermesctx import registry
from hermesctx.errors import HermesctxError, UsageError
from hermesctx.record import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

STAGES = registry.names(registry.STAGES)  # the built-in stages (declared in hermesctx.registry)


@record
class Stage:
    name: str
    options: Any  # the stage's Options
    run: Callable[[Any], tuple[Any, dict | None]]
    describe: Callable[[dict], str] | None


def stage_module(name: str):
    """A built-in stage's module, or a plugin stage (entry-point group ``hermesctx.stages``, see
    :mod:`hermesctx.plugins`) with the same face: ``Options``, ``build``, ``describe``."""
    entry = registry.find(registry.STAGES, name)
    if entry is not None:
        return registry.load(entry)
    from hermesctx import plugins

    return plugins.stage(name, STAGES)


def parse(entries: Any) -> list[tuple[str, dict]]:
    """``[(stage, options)]`` from the config's ``pipeline`` list; errors name the entry."""
    if not isinstance(entries, list) or not entries:
        raise UsageError("pipeline: expected a non-empty list of stages",
                         hint=f"e.g. pipeline: [prune, compress, sanitize]; stages: {', '.join(STAGES)}")
    out = []
    for i, entry in enumerate(entries):
        if isinstance(entry, str):
            name, options = entry, {}
        elif isinstance(entry, dict) and len(entry) == 1:
            name, options = next(iter(entry.items()))
            options = options or {}
        else:
            raise UsageError(f"pipeline[{i}]: expected a stage name or {{stage: {{options}}}}")
        if name not in STAGES and not _plugin_stage(name):
            raise UsageError(f"pipeline[{i}]: unknown stage {name!r} (choose from {', '.join(_stage_names())})")
        if not isinstance(options, dict):
            raise UsageError(f"pipeline[{i}] ({name}): options must be a mapping")
        out.append((name, options))
    return out


def _plugin_stage(name: Any) -> bool:
    from hermesctx import plugins

    return isinstance(name, str) and plugins.find(plugins.STAGES, name) is not None


def _stage_names() -> list[str]:
    """The built-in stages, then the installed plugin stages (read only for this error)."""
    from hermesctx import plugins

    return [*STAGES, *(n for n in plugins.names(plugins.STAGES) if n not in STAGES)]


def _options(entries: Any) -> list[tuple[str, Any]]:
    """``[(stage, Options)]``, every option checked."""
    from hermesctx.options import from_mapping

    return [(name, from_mapping(stage_module(name).Options, options, f"pipeline[{i}] ({name})", name))
            for i, (name, options) in enumerate(parse(entries))]


def build(entries: Any, ctx) -> list[Stage]:
    """The stages, ready to run, from one :class:`hermesctx.context.Context` (its settings
    read once for all of them). Config ``compression.enabled: false`` leaves the compress
    stages out, as Hermes does."""
    enabled = ctx.settings["compression.enabled"]
    stages = []
    for name, options in _options(entries):
        if name == "compress" and not enabled:
            continue
        module = stage_module(name)
        stages.append(Stage(name, options, module.build(options, ctx), module.describe))
    return stages


def run_document(stages: list[Stage], doc: Any, wire: str | None = None) -> tuple[Any, list[dict]]:
    """Every stage in order on one parsed document; the reports, one per stage. With ``wire``
    (a request format, see :func:`wire_format`) each stage's output goes through that send
    path, as each command's output does in the shell pipe ``hermesctx spill | hermesctx prune``."""
    from hermesctx.wire import send

    reports = []
    for stage in stages:
        doc, report = stage.run(doc)
        ready, report = send.ready_of(report)
        if wire is not None:
            counts: dict = {}
            doc = send.request(doc, wire, counts, ready)
            if counts:
                report = {**(report or {}), "wire": counts}
        reports.append({"stage": stage.name, **(report or {})})
    return doc, reports


def wire_format(info: dict | None, target: str | None) -> str | None:
    """The send path a stage's output goes through between the stages of ``run``: that of the
    working format (OpenAI, or an Anthropic body worked on as it is), when the command writes
    a request (OpenAI or Anthropic, not ShareGPT)."""
    from hermesctx import formats

    info = info or {"format": formats.OPENAI}
    if formats.output_format(info, target) not in formats.PLAIN:
        return None
    found = info.get("format", formats.OPENAI)
    return found if found in formats.PLAIN else formats.OPENAI


def check_config(path: str) -> list[str]:
    """``config check``: every problem of a config file (its keys, then its pipeline), each
    line naming the file."""
    from hermesctx.config import check_file, flatten, read_config_file

    problems = check_file(path)
    if not problems or not problems[0].startswith(("config ", "cannot ")):
        flat = flatten(read_config_file(path))[0]
        entries = flat.get("pipeline")
        if isinstance(entries, list) and entries:
            problems += validate(entries)
        problems += _plugin_problems(flat)
    return [p if p.startswith(("config ", "cannot ")) else f"{path}: {p}" for p in problems]


def _plugin_problems(flat: dict) -> list[str]:
    """The context engine and the summarizer the config names, when plugins: each must be
    installed and load (a plugin the config does not name is not its problem)."""
    from hermesctx import plugins
    from hermesctx.errors import HermesctxError
    from hermesctx.summary import NAMES

    out = []
    for key, group, builtins in (("context.engine", plugins.ENGINES, (plugins.BUILTIN_ENGINE, "")),
                                 ("summarizer.name", plugins.SUMMARIZERS, NAMES)):
        name = flat.get(key)
        if isinstance(name, str) and name not in builtins:
            try:
                plugins.load(group, name, builtins=tuple(b for b in builtins if b))
            except HermesctxError as exc:
                out.append(f"{key}: {exc}")
    return out


def validate(entries: Any) -> list[str]:
    """Problems with a pipeline list, without building its stages."""
    try:
        parsed = parse(entries)
    except UsageError as exc:
        return [str(exc)]
    problems = []
    for i, entry in enumerate(parsed):
        try:
            _options([dict([entry])])
        except UsageError as exc:
            problems.append(str(exc).replace("pipeline[0]", f"pipeline[{i}]", 1))
    return problems


# --- running a pipeline over an input (``hermesctx run``) ------------------------------------

def run(ctx, path, entries: Any, *, jsonl: bool | None = None, jobs: int = 1, pretty: bool = False,
        report: str | None = None, formats: dict | None = None, keep_going=None,
        dask: str | None = None, block_size: int | None = None) -> int:
    """The pipeline ``entries`` on every document of ``path`` (one or several FILEs): outputs in input order on
    stdout, each stage's report on stderr (``stage: ...``) or in ``report``; ``jobs`` worker
    processes for a JSON Lines batch, or the Dask cluster at ``dask`` (:mod:`hermesctx.distributed`,
    files cut into blocks of ``block_size``). ``keep_going`` (a :class:`~hermesctx.transcripts.KeepGoing`):
    a JSON line that fails is said and written unchanged, a FILE of several that fails as a whole
    is said and skipped, and the batch ends with the summary line. Returns how many documents
    were done."""
    from hermesctx import formats as format_modules
    from hermesctx.transcripts import Progress, ReportSink, in_file, paths_of, pretty_files

    env = ctx.env
    fmt = {"source": "auto", "include_sidechains": False, "all_segments": False, "target": None,
           **(formats or {})}
    if block_size is not None and not dask:
        raise UsageError("--block-size goes with --dask")
    if dask and pretty:
        raise UsageError("--pretty indents one document: not with --dask, which runs batches")
    stages = build(entries, ctx)  # built (and validated) before any input is read
    describes = {stage.name: stage.describe for stage in stages}
    paths = paths_of(path)
    pretty_files(pretty, paths)
    runner = _dask_runner(ctx, dask, paths, entries, stages, pretty, fmt, jsonl, block_size) if dask else None
    if runner is not None:
        paths = runner.paths
    sink = ReportSink(env, report, to_stderr=not env.quiet)
    progress = Progress.start(env) if runner is None else runner
    shared_out = runner is not None or jobs > 1 and fmt["source"] not in format_modules.LOG_FORMATS

    def results(one, file):
        if runner is not None:
            return runner.results(one, file, keep_going)
        if shared_out:
            return _parallel(ctx, one, jsonl, entries, stages, jobs, pretty, fmt, file, keep_going)
        return _sequential(env, one, jsonl, stages, fmt, file=file, keep_going=keep_going, pretty=pretty)

    def emit(items) -> int:
        done = 0
        for doc, out, reports in items:
            write_output(env, doc, out, reports, pretty, sink, describes, report)
            if runner is None:
                progress.tick()
            done += 1
        return done

    count = 0
    ok = False
    try:
        if keep_going is not None and len(paths) > 1:  # a FILE that fails as a whole: the next goes on
            for one in paths:
                keep_going.file = one
                try:
                    done = emit(results(one, one))
                except HermesctxError as err:
                    keep_going.file_failed(env, in_file(err, one))
                    continue
                keep_going.file_done(done)
                count += done
            keep_going.summary(env)
        elif shared_out:
            count = emit(item for one in paths for item in results(one, one if len(paths) > 1 else None))
        else:
            count = emit(results(paths if len(paths) > 1 else paths[0], None))
        ok = True
    finally:
        progress.done()  # (--dask: the cluster too)
        sink.close(ok)
    return count


def _dask_runner(ctx, address, paths, entries, stages, pretty, fmt, jsonl, block_size):
    """The :class:`hermesctx.distributed.Runner` of ``run --dask``, its cluster connected and its
    files planned (a plan that fails closes the cluster again)."""
    from hermesctx import distributed

    if "-" in paths:
        raise UsageError("--dask needs FILE arguments, not stdin")
    distributed.require()
    paths = distributed.expand(paths)
    client, cluster = distributed.connect(address)
    try:
        return distributed.Runner(ctx, client, cluster, paths, entries, stages, pretty, fmt, jsonl, block_size)
    except BaseException:
        distributed.disconnect(client, cluster)
        raise


def write_output(env, doc, out, reports: list[dict], pretty: bool, sink, describes: dict,
                 report: str | None) -> None:
    """One document's output on stdout (bytes as they are, else serialized) and its stages'
    reports (``stage: ...`` on stderr, or into ``--report``)."""
    from hermesctx import jsonio

    env.stdout.write(out if isinstance(out, bytes) else jsonio.dumps(out, pretty=pretty))
    env.stdout.flush()
    for rep in reports:
        describe = describes.get(rep["stage"])
        sink.add(doc, rep, f"{rep['stage']}: {describe(rep)}" if describe and not report else None)


def _sequential(env, path, jsonl, stages, fmt, stream=None, file=None, keep_going=None, pretty=False):
    """``(doc, output, reports)`` for every document, one after the other in this process
    (``stream``: the input, read already; ``file``: the name its documents carry; ``keep_going``:
    a JSON line that fails is said and written unchanged)."""
    from hermesctx.transcripts import documents, format_stream, located, one_when_pretty, write_back

    if stream is not None:
        docs = format_stream(env, stream, jsonl, source=fmt["source"], include_sidechains=fmt["include_sidechains"],
                             all_segments=fmt["all_segments"], file=file)
    elif keep_going is not None:
        docs = keep_going.documents(env, path, jsonl, fmt)
    else:
        docs = documents(env, path, jsonl, file=file, **fmt)

    def one(doc):
        return run_document(stages, doc.data, wire_format(getattr(doc, "info", None), fmt["target"]))

    docs = one_when_pretty(docs, pretty)
    for doc, (out, reports) in located(docs, one, keep_going=keep_going, env=env, stdout=env.stdout):
        yield doc, write_back(env, doc, out, fmt["target"]), reports


def worker(entries, config_path, environ, pretty, source="auto", target=None, errors_as_values=False):
    """Runs in each worker of ``run --jobs`` (and of ``run --dask``): the pipeline built once (the
    settings read once in this process), then one raw JSON line at a time (parsed, run and
    serialized here, so the parent only moves bytes). ``errors_as_values``: a line that fails
    gives ``(line_no, None, error, raw)`` (the error not located yet) instead of raising."""
    import sys

    from hermesctx import formats, jsonio
    from hermesctx.context import Context, Env
    from hermesctx.errors import HermesctxError
    from hermesctx.wire import send

    env = Env(sys.stdin.buffer, sys.stdout.buffer, sys.stderr, environ=environ, quiet=True)
    stages = build(entries, Context(env, config_path))

    def one(item):
        line_no, raw = item
        try:
            data, info = formats.prepare(jsonio.loads(raw), source)
            out, reports = run_document(stages, data, wire_format(info, target))
            lost, wire = dict(info["lost"]), {}
            out = formats.write_back(out, info, target, lost, wire)
        except HermesctxError as err:
            if errors_as_values:
                return line_no, None, err, raw
            raise err.located(f"line {line_no}") from None
        lines = [*formats.describe_lost(lost, formats.output_format(info, target)), *send.describe(wire)]
        return line_no, jsonio.dumps(out, pretty=pretty), reports, lines

    return one


def _parallel(ctx, path, jsonl, entries, stages, jobs, pretty, fmt, file=None, keep_going=None):
    """``(doc, output, reports)`` for every document of one input, a JSON Lines batch shared
    out line by line to ``jobs`` workers (``file``: the name its documents and errors carry)."""
    from hermesctx.transcripts import in_file

    try:
        yield from _shared_out(ctx, path, jsonl, entries, stages, jobs, pretty, fmt, file, keep_going)
    except HermesctxError as err:
        raise in_file(err, file) from None


def _shared_out(ctx, path, jsonl, entries, stages, jobs, pretty, fmt, file, keep_going):
    import io

    from hermesctx.parallel import ordered_map
    from hermesctx.transcripts import one_when_pretty, open_input, raw_lines

    env = ctx.env
    lines = raw_lines(env, path, jsonl, fmt["source"] == "auto") if jsonl is not False else None
    first = next(lines) if lines is not None else None
    if first is None or first == "log":  # one document: nothing to share out
        if first == "log":
            yield from _sequential(env, path, jsonl, stages, fmt, stream=next(lines), file=file)
            return
        if lines is not None:
            raw = next(lines)
        else:
            with open_input(env, path) as stream:
                raw = stream.read()
        yield from _sequential(env, path, jsonl, stages, fmt, stream=io.BytesIO(raw), file=file)
        return

    def items():
        yield first
        yield from lines

    if pretty:  # (one line: one document, indented; more are refused before any is run)
        (_, raw), = one_when_pretty(items(), True)
        yield from _sequential(env, path, jsonl, stages, fmt, stream=io.BytesIO(raw), file=file)
        return

    args = (entries, ctx.settings.path, dict(env.environ), pretty, fmt["source"], fmt["target"],
            keep_going is not None)
    results = ordered_map(worker, args, items(), jobs=jobs, label=lambda item: f"line {item[0]}")
    yield from from_workers(env, results, file, keep_going)


def from_workers(env, results, file: str | None, keep_going=None):
    """``(doc, output, reports)`` from what :func:`worker` gave for each line, in order; a line
    that failed (``errors_as_values``) ends the input, or with ``keep_going`` is said and written
    unchanged. What the send path changed is warned about, the line named."""
    from hermesctx import jsonio

    index = 0
    for line_no, raw_out, reports, lost in results:
        if raw_out is None:  # (the line's error, and the line)
            err = reports.located(f"line {line_no}")
            if keep_going is None:
                raise err
            keep_going.failed(env, err, lost, env.stdout)
            continue
        doc = jsonio.Document(None, index, line_no, None, file)
        index += 1
        for line in lost:
            env.warn(f"{doc.where}: {line}")
        yield doc, raw_out, reports
