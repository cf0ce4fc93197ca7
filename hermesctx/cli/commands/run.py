from __future__ import annotations

import sys
import time

import click

from hermesctx import io
from hermesctx.cli.options import config_options, input_options, output_options, report_options
from hermesctx.cli.runner import ReportSink, documents, get_env
from hermesctx.config import load_settings
from hermesctx.errors import HermesctxError, InputError, UsageError
from hermesctx.exit import EXIT_STATUS_HELP


@click.command(epilog=EXIT_STATUS_HELP)
@input_options
@click.option("--pipeline", "pipeline_text", default=None, metavar="STAGE,STAGE,...",
              help="Stages to run, overriding the config's pipeline (e.g. prune,compress,sanitize).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True,
              help="Worker processes for a JSONL batch (output stays in input order).")
@output_options
@report_options
@config_options
def command(input, jsonl, pipeline_text, jobs, pretty, report, config_path):
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
        if jobs > 1:
            results = _parallel(env, input, jsonl, entries, config_path, jobs, pretty)
        else:
            results = ((doc, *_located(doc, pipeline.run_document, stages, doc.data))
                       for doc in documents(env, input, jsonl))
        for doc, out, reports in results:
            env.stdout.write(out if isinstance(out, bytes) else io.dumps(out, pretty=pretty))
            env.stdout.flush()
            for rep in reports:
                describe = next((s.describe for s in stages if s.name == rep["stage"]), None)
                sink.add(doc, rep, f"{rep['stage']}: {describe(rep)}" if describe and not report else None)
            progress.tick()
        ok = True
    finally:
        progress.done()
        sink.close(ok)


def _located(doc, fn, *args):
    """``fn(*args)``, with an error located at the document (``line 3: messages[7]: ...``)."""
    try:
        return fn(*args)
    except HermesctxError as err:
        raise (err.located(doc.where) if doc is not None and doc.where else err) from None


def _worker_factory(entries, config_path, environ, pretty):
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
            out, reports = pipeline.run_document(stages, io.loads(raw))
        except HermesctxError as err:
            raise err.located(f"line {line_no}") from None
        return line_no, io.dumps(out, pretty=pretty), reports

    return run


def _raw_lines(env, path, jsonl):
    """``(line_no, raw)`` for every JSON line of the input, unparsed; ``None`` first when the
    input is one (pretty-printed) document rather than JSON Lines. Detection, blank lines and
    the BOM are handled as io.read_documents handles them."""
    from hermesctx.cli.runner import open_input

    with open_input(env, path) as stream:
        line_no, first = 0, b""
        for raw in stream:
            line_no += 1
            if raw.strip():
                first = raw
                break
        if not first:
            raise InputError("empty input", hint="expected a JSON document or JSON Lines")
        if line_no == 1 and first.startswith(io._BOM):
            first = first[len(io._BOM):]
        if jsonl is None:
            try:
                io.loads(first)
            except HermesctxError:
                yield None  # not JSON Lines: the whole input is one document
                yield first + stream.read()
                return
        yield line_no, first
        for raw in stream:
            line_no += 1
            if not raw.isspace():
                yield line_no, raw


def _parallel(env, path, jsonl, entries, config_path, jobs, pretty):
    from hermesctx.cli import pipeline
    from hermesctx.parallel import ordered_map

    lines = _raw_lines(env, path, jsonl) if jsonl is not False else None
    first = next(lines) if lines is not None else None
    if first is None:  # one document, not JSON Lines: nothing to share out
        doc = io._whole(next(lines) if lines is not None else _read_all(env, path))
        enabled = load_settings(config_path, env=env.environ)["compression.enabled"]
        stages = pipeline.build(entries, env, config_path=config_path, enabled=enabled)
        yield (doc, *pipeline.run_document(stages, doc.data))
        return

    def items():
        yield first
        yield from lines

    factory_args = (entries, config_path, dict(env.environ), pretty)
    results = ordered_map(_worker_factory, factory_args, items(), jobs=jobs)
    for index, (line_no, raw_out, reports) in enumerate(results):
        yield io.Document(None, index, line_no), raw_out, reports


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
