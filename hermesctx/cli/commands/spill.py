from __future__ import annotations

import click

from hermesctx.cli.options import (
    config_options,
    format_kwargs,
    input_options,
    model_kwargs,
    model_options,
    settings_from,
    transcript_options,
)
from hermesctx.cli.runner import get_env
from hermesctx.exit import EXIT_STATUS_HELP
from hermesctx.models import resolve_context_length
from hermesctx.stages import spill as stage
from hermesctx.transcripts import transform_stream


@click.command(epilog=EXIT_STATUS_HELP)
@input_options
@click.option("--dir", "directory", type=click.Path(file_okay=False), default=None,
              help="Where spilled results go (config spill.dir; default $TMPDIR/hermes-results-UID, "
                   "private: created mode 0700, refused if another user owns it).")
@click.option("--threshold", "thresholds", multiple=True, metavar="[TOOL=]CHARS",
              help="Per-result threshold, for every tool or one tool (repeatable; read_file is never "
                   "spilled by size alone).")
@click.option("--turn-budget", type=click.IntRange(min=1), default=None,
              help="Characters all results of one turn may take (default 200,000, scaled to the model).")
@click.option("--restore", is_flag=True,
              help="Reverse: put spilled results back from their files (only a file whose sha256 "
                   "DIR/.index recorded for that block).")
@click.option("--dry-run", is_flag=True, help="Report what would be spilled; write no file, output the input.")
@transcript_options
@model_options
@config_options
def command(input, jsonl, pretty, in_place, backup, report, **params):
    """Move oversized tool results to files, leaving a <persisted-output> preview.

    A result over its threshold (100,000 characters, or 15 % of the model's window in
    characters when --model/--context-length is given) is written to DIR/<call id>.txt and
    replaced by a block with its size, the path and the first lines. When the results of one
    turn together exceed the turn budget, the largest are spilled too. --restore puts them back.

    \b
    Examples:
        hermesctx spill --dir /tmp/spill --threshold 1000 examples/coding-session.json > small.json
        hermesctx spill --dir /tmp/spill --threshold terminal=500 --turn-budget 3000 examples/batch.jsonl
        hermesctx spill --dir /tmp/spill --model claude-sonnet-4-5 < examples/coding-session.json
        hermesctx spill --restore --dir /tmp/spill small.json > restored.json
    """
    env = get_env()
    fmt = format_kwargs(params)
    transform_stream(env, input, make(params, env), jsonl=jsonl, pretty=pretty, report=report,
                     describe=stage.describe, in_place=in_place, backup=backup, formats=fmt)


def make(params: dict, env):
    settings = settings_from(params, env.environ)
    named = params.get("directory") or settings["spill.dir"]
    directory = named or stage.default_dir(env.environ)
    default, overrides = _thresholds(params.get("thresholds") or (), settings)
    if "read_file" in overrides:
        env.warn("a read_file threshold is ignored: read_file is never spilled by its size alone "
                 "(only by the turn budget)")
    if params.get("restore"):
        return lambda doc: stage.restore(doc, directory=directory)
    dry_run, turn_budget = params.get("dry_run"), params.get("turn_budget")
    writer = stage.Writer(directory, dry_run=dry_run, private=not named)
    scaled = any(settings.source(key) != "default" for key in ("model.default", "model.context_length"))

    def run(doc):
        window = None
        if scaled:
            window = resolve_context_length(**model_kwargs(settings, doc)).length
        budget = stage.budget_for_window(
            window, tool_overrides=overrides,
            default_result_size=default if default is not None else _explicit(settings, "spill.default_threshold"),
            turn_budget=turn_budget if turn_budget is not None else _explicit(settings, "spill.turn_budget"))
        new, rep = stage.spill(doc, budget=budget, writer=writer)
        for path in rep["replaced"]:
            env.warn(f"{'would replace' if dry_run else 'replaced'} {path}: another result has the same "
                     "file name (Hermes replaces it too)")
        if dry_run:
            for path in rep["files"]:
                env.info(f"would write {path}")
            return doc, rep
        return new, rep

    return run


def _explicit(settings, key):
    """A config/env value, or None when only the default is there (the window then decides)."""
    return settings[key] if settings.source(key) != "default" else None


def _thresholds(values, settings) -> tuple[int | None, dict]:
    overrides = {str(k): int(v) for k, v in (settings["spill.thresholds"] or {}).items()}
    default = None
    for value in values:
        tool, _, chars = value.rpartition("=")
        try:
            number = int(chars.replace(",", "").replace("_", ""))
        except ValueError:
            raise click.BadParameter(f"expected [TOOL=]CHARS, got {value!r}", param_hint="--threshold") from None
        if number < 0:
            raise click.BadParameter("thresholds must be >= 0", param_hint="--threshold")
        if tool:
            overrides[tool] = number
        else:
            default = number
    return default, overrides
