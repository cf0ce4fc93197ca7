from __future__ import annotations

import click

from hermesctx.cli.options import (
    config_options,
    format_kwargs,
    format_options,
    input_options,
    output_options,
    report_options,
    target_options,
)
from hermesctx.cli.runner import get_context, past_failures
from hermesctx.errors import UsageError
from hermesctx.exit import EXIT_STATUS_HELP


@click.command(epilog=EXIT_STATUS_HELP)
@input_options
@click.option("--pipeline", "pipeline_text", default=None, metavar="STAGE,STAGE,...",
              help="Stages to run, overriding the config's pipeline (e.g. prune,compress,sanitize).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True,
              help="Worker processes for a JSONL batch (output stays in input order).")
@click.option("--dask", "dask", default=None, metavar="ADDRESS",
              help="Run on a Dask cluster: a scheduler's address (tcp://host:8786) or local[:N] (N worker "
                   "processes here); FILEs may be s3:// or gs:// globs; one stream in input order, as --jobs "
                   "writes it (pip install '.[dask]').")
@click.option("--block-size", "block_size", default=None, metavar="SIZE", callback=lambda ctx, param, value: _size(value),
              help="With --dask: cut a JSON Lines file into blocks of about SIZE on line boundaries "
                   "(bytes, or 64M, 1G; default 16M).")
@click.option("--keep-going", "keep_going", is_flag=True,
              help="A JSON line that fails is said on stderr and written through unchanged; with several "
                   "FILEs a file that fails as a whole is said and skipped, the rest go on, and one summary "
                   "line ends the batch; exit 3 at the end if any failed.")
@format_options
@target_options
@output_options
@report_options
@config_options
def command(input, jsonl, pipeline_text, jobs, dask, block_size, keep_going, pretty, report, config_path, **params):
    """Run the pipeline of a config file on a transcript or a JSONL batch, in one process.

    The config's `pipeline:` lists stages with their options, e.g.
    [spill, prune, {compress: {if_needed: true}}, sanitize, {cache-mark: {ttl: 1h}}].
    The output is exactly what the same stages give when piped one into the next. Without a
    `pipeline:` (a Hermes config.yaml as it is) the stages are Hermes's turn:
    [{compress: {if_needed: true}}, cache-mark].

    \b
    Examples:
        hermesctx run --config examples/hermesctx.yaml < examples/coding-session.json > out.json
        hermesctx run --pipeline prune,sanitize examples/coding-session.json
        hermesctx run --config examples/hermesctx.yaml --jobs 2 --report reports.jsonl examples/batch.jsonl > out.jsonl
        hermesctx run --pipeline prune,sanitize --dask local:2 examples/batch.jsonl examples/coding-session.json > out.jsonl
    """
    from hermesctx import pipeline
    from hermesctx.transcripts import KeepGoing

    ctx = get_context(config_path)
    entries = ([s.strip() for s in pipeline_text.split(",") if s.strip()] if pipeline_text
               else ctx.settings["pipeline"])
    if not entries:
        raise UsageError("no pipeline: give --pipeline or a config file with a `pipeline:` list",
                         hint="e.g. hermesctx run --pipeline prune,compress,sanitize")
    keep_going = KeepGoing() if keep_going else None
    pipeline.run(ctx, input, entries, jsonl=jsonl, jobs=jobs, pretty=pretty, report=report,
                 formats=format_kwargs(params), keep_going=keep_going, dask=dask, block_size=block_size)
    return past_failures(0, keep_going)


def _size(value: str | None) -> int | None:
    from hermesctx.jsonio import parse_size

    size = parse_size(value) if value is not None else None
    if value is not None and not size:
        raise click.BadParameter(f"{value!r} is not a size (bytes, or 64M, 1G)")
    return size
