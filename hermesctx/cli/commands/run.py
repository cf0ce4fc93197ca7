from __future__ import annotations

import io as _io
import sys
import time

import click

from hermesctx import formats, jsonio
from hermesctx.cli.options import (
    config_options,
    format_kwargs,
    format_options,
    input_options,
    output_options,
    report_options,
    target_options,
)
from hermesctx.cli.runner import ReportSink, documents, get_env, write_back
from hermesctx.config import load_settings
from hermesctx.errors import HermesctxError, UsageError
from hermesctx.exit import EXIT_STATUS_HELP


@click.command(epilog=EXIT_STATUS_HELP)
@input_options
@click.option("--pipeline", "pipeline_text", default=None, metavar="STAGE,STAGE,...",
              help="Stages to run, overriding the config's pipeline (e.g. prune,compress,sanitize).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True,
              help="Worker processes for a JSONL batch (output stays in input order).")
@format_options
@target_options
@output_options
@report_options
@config_options
def command(input, jsonl, pipeline_text, jobs, pretty, report, config_path, **params):
    """Run the pipeline of a config file on a transcript or a JSONL batch, in one process.

    The config's `pipeline:` lists stages with their options, e.g.
    [spill, prune, {compress: {if_needed: true}}, sanitize, {cache-mark: {ttl: 1h}}].
    The output is exactly what the same stages give when piped one into the next. Without a
    `pipeline:` (a Hermes config.yaml as it is) the stages are Hermes's turn:
    [{compress: {if_needed: true}}, cache-mark].

    \b
    Examples:
        hermesctx run --config hermesctx.yaml < session.json > out.json
        hermesctx run --pipeline prune,sanitize examples/coding-session.json
        hermesctx run --config hermesctx.yaml --jobs 2 --report reports.jsonl batch.jsonl > out.jsonl
    """
    from hermesctx.cli import pipeline

    env = get_env()
    fmt = format_kwargs(params)
    settings = load_settings(config_path, env=env.environ)
    entries = [s.strip() for s in pipeline_text.split(",") if s.strip()] if pipeline_text else settings["pipeline"]
    if not entries:
        raise UsageError("no pipeline: give --pipeline or a config file with a `pipeline:` list",
                         hint="e.g. hermesctx run --pipeline prune,compress,sanitize")
    config_path = settings.path
    # built (and validated) before any input is read
    stages = pipeline.build(entries, env, config_path=config_path, enabled=settings["compression.enabled"])
    sink = ReportSink(env, report, to_stderr=not env.quiet)
    progress = _Progress(env)
    ok = False
    try:
        if jobs > 1 and fmt["source"] not in formats.LOG_FORMATS:
            results = _parallel(env, input, jsonl, entries, config_path, jobs, pretty, fmt)
        else:
            results = _sequential(env, input, jsonl, stages, fmt)
        for doc, out, reports in results:
            env.stdout.write(out if isinstance(out, bytes) else jsonio.dumps(out, pretty=pretty))
            env.stdout.flush()
            for rep in reports:
                describe = next((s.describe for s in stages if s.name == rep["stage"]), None)
                sink.add(doc, rep, f"{rep['stage']}: {describe(rep)}" if describe and not report else None)
            progress.tick()
        ok = True
    finally:
        progress.done()
        sink.close(ok)


def _sequential(env, path, jsonl, stages, fmt, stream=None):
    """``(doc, output, reports)`` for every document, one after the other in this process."""
    from hermesctx.cli import pipeline

    docs = (documents(env, path, jsonl, **fmt) if stream is None else
            formats.read_documents(stream, source=fmt["source"], jsonl=jsonl, warn=env.warn,
                                   include_sidechains=fmt["include_sidechains"],
                                   all_segments=fmt["all_segments"]))
    for doc in docs:
        wire = pipeline.wire_format(getattr(doc, "info", None), fmt["target"])
        out, reports = _located(doc, pipeline.run_document, stages, doc.data, wire)
        yield doc, write_back(env, doc, out, fmt["target"]), reports


def _located(doc, fn, *args):
    """``fn(*args)``, with an error located at the document (``line 3: messages[7]: ...``)."""
    try:
        return fn(*args)
    except HermesctxError as err:
        raise (err.located(doc.where) if doc is not None and doc.where else err) from None


def _worker_factory(entries, config_path, environ, pretty, source="auto", target=None):
    """Runs in each worker: the pipeline built once, then one raw JSON line at a time (parsed,
    run and serialized here, so the parent only moves bytes)."""
    from hermesctx.cli import pipeline
    from hermesctx.cli.runner import Env

    env = Env(sys.stdin.buffer, sys.stdout.buffer, sys.stderr, environ=environ, quiet=True)
    enabled = load_settings(config_path, env=environ)["compression.enabled"]
    stages = pipeline.build(entries, env, config_path=config_path, enabled=enabled)

    def run(item):
        line_no, raw = item
        try:
            from hermesctx.wire import send

            data, info = formats.prepare(jsonio.loads(raw), source)
            out, reports = pipeline.run_document(stages, data, pipeline.wire_format(info, target))
            lost, wire = dict(info["lost"]), {}
            out = formats.write_back(out, info, target, lost, wire)
        except HermesctxError as err:
            raise err.located(f"line {line_no}") from None
        lines = [*formats.describe_lost(lost, formats.output_format(info, target)), *send.describe(wire)]
        return line_no, jsonio.dumps(out, pretty=pretty), reports, lines

    return run


def _raw_lines(env, path, jsonl, log_check=False):
    """``(line_no, raw)`` for every JSON line of the input, unparsed; ``None`` first when the
    input is one (pretty-printed) document rather than JSON Lines. Detection, blank lines and
    the BOM are handled as jsonio.read_documents handles them."""
    from hermesctx.cli.runner import open_input

    with open_input(env, path) as stream:
        head, first = jsonio.first_line(stream)
        line_no = len(head)
        if jsonl is None or log_check:
            try:
                value = jsonio.loads(first)
            except HermesctxError:
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


def _parallel(env, path, jsonl, entries, config_path, jobs, pretty, fmt):
    from hermesctx.cli import pipeline
    from hermesctx.parallel import ordered_map

    lines = _raw_lines(env, path, jsonl, fmt["source"] == "auto") if jsonl is not False else None
    first = next(lines) if lines is not None else None
    if first is None or first == "log":  # one document: nothing to share out
        enabled = load_settings(config_path, env=env.environ)["compression.enabled"]
        stages = pipeline.build(entries, env, config_path=config_path, enabled=enabled)
        if first == "log":
            yield from _sequential(env, path, jsonl, stages, fmt, stream=next(lines))
            return
        raw = next(lines) if lines is not None else _read_all(env, path)
        yield from _sequential(env, path, jsonl, stages, fmt, stream=_io.BytesIO(raw))
        return

    def items():
        yield first
        yield from lines

    factory_args = (entries, config_path, dict(env.environ), pretty, fmt["source"], fmt["target"])
    results = ordered_map(_worker_factory, factory_args, items(), jobs=jobs, label=lambda item: f"line {item[0]}")
    for index, (line_no, raw_out, reports, lost) in enumerate(results):
        for line in lost:
            env.warn(f"line {line_no}: {line}")
        yield jsonio.Document(None, index, line_no), raw_out, reports


def _read_all(env, path):
    from hermesctx.cli.runner import open_input

    with open_input(env, path) as stream:
        return stream.read()


class _Progress:
    """`N transcripts` on stderr, refreshed at most 5 times a second, on a terminal only."""

    def __init__(self, env):
        self.env, self.count, self.last = env, 0, 0.0
        self.on = env.stderr_isatty and not env.quiet

    def tick(self):
        self.count += 1
        now = time.monotonic()
        if self.on and now - self.last > 0.2:
            self.last = now
            self.env.stderr.write(f"\r{self.count:,} transcripts")
            self.env.stderr.flush()

    def done(self):
        if self.on and self.count:
            self.env.stderr.write(f"\r{self.count:,} transcripts\n")
            self.env.stderr.flush()
