from __future__ import annotations

import click

from hermesctx.cli.options import (
    config_options,
    format_options,
    input_options,
    options_from,
    output_options,
    stage_options,
)
from hermesctx.cli.runner import get_context, input_documents
from hermesctx.exit import EXIT_STATUS_HELP
from hermesctx.stages import estimate as stage
from hermesctx.transcripts import report_each


@click.command(epilog=EXIT_STATUS_HELP)
@input_options
@stage_options(stage.Options)
@format_options
@output_options
@stage_options(stage.Options, shared=True)
@config_options
def command(pretty, config_path, **params):
    """Report how full the context window is: tokens by part and role, budgets, pressure.

    \b
    Examples:
        hermesctx estimate examples/coding-session.json --model claude-sonnet-4-5
        hermesctx estimate --method rough --format table < session.json
        cat batch.jsonl | hermesctx estimate --check --model gpt-4o   # exit 1 if over
        hermesctx estimate --tee session.json | hermesctx compress > out.json
        hermesctx estimate ~/.claude/projects/p/session.jsonl   # + the usage the log recorded
    """
    env, docs = input_documents(params, keep_raw=params["tee"])
    run = stage.build(options_from(stage.Options, params), get_context(config_path), pretty=pretty)
    return report_each(env, docs, run)
