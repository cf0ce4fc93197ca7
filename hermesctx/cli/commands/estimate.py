from __future__ import annotations

from hermesctx.cli.params import CONFIG, FORMAT, INPUT, KEEP_GOING_FILES, OUTPUT, stage_params
from hermesctx.cli.runner import click_command, get_context, input_documents, options_from, past_failures
from hermesctx.stages import estimate as stage
from hermesctx.transcripts import report_each

PARAMS = (*INPUT, *stage_params(stage.Options), *FORMAT, *OUTPUT, *KEEP_GOING_FILES,
          *stage_params(stage.Options, shared=True), *CONFIG)


def body(pretty, config_path, **params):
    """What `hermesctx estimate` runs: click's path (:func:`declare`) and the fast one
    (:mod:`hermesctx.cli.fast`) call it with the same params."""
    env, docs, keep_going = input_documents(params, keep_raw=params["tee"])
    run = stage.build(options_from(stage.Options, params), get_context(config_path), pretty=pretty)
    return past_failures(report_each(env, docs, run, finish=getattr(run, "finish", None)), keep_going)


def declare():
    """The click command (built when a command line goes through click)."""
    import click

    from hermesctx.cli.options import click_params
    from hermesctx.exit import EXIT_STATUS_HELP

    @click.command(epilog=EXIT_STATUS_HELP)
    @click_params(PARAMS)
    def command(**params):
        """Report how full the context window is: tokens by part and role, budgets, pressure.

        \b
        Examples:
            hermesctx estimate examples/coding-session.json --model claude-sonnet-4-5
            hermesctx estimate --method rough --format table < examples/coding-session.json
            cat batch.jsonl | hermesctx estimate --check --model gpt-4o   # exit 1 if over
            hermesctx estimate --tee examples/coding-session.json | hermesctx compress > out.json
            hermesctx estimate examples/claude-code-session.jsonl   # a Claude Code log: + the usage it recorded
        """
        return body(**params)

    return command


__getattr__ = click_command(declare)
