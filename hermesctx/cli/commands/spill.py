from __future__ import annotations

from hermesctx.cli.params import rewriting
from hermesctx.cli.runner import click_command, run_stage
from hermesctx.stages import spill as stage

PARAMS = rewriting(stage)


def body(**params):
    """What `hermesctx spill` runs: click's path (:func:`declare`) and the fast one
    (:mod:`hermesctx.cli.fast`) call it with the same params."""
    return run_stage(stage, params)


def declare():
    """The click command (built when a command line goes through click)."""
    import click

    from hermesctx.cli.options import click_params
    from hermesctx.exit import EXIT_STATUS_HELP

    @click.command(epilog=EXIT_STATUS_HELP)
    @click_params(PARAMS)
    def command(**params):
        """Move oversized tool results to files, leaving a <persisted-output> preview.

        A result over its threshold (100,000 characters, or 15 % of the model's window in
        characters when --model/--context-length is given) is written to DIR/<call id>.txt and
        replaced by a block with its size, the path and the first lines. When the results of one
        turn together exceed the turn budget, the largest are spilled too. --restore puts them back.

        \b
        Examples:
            hermesctx spill --dir /tmp/spill --result-threshold 1000 examples/coding-session.json > small.json
            hermesctx spill --dir /tmp/spill --result-threshold terminal=500 --turn-budget 3000 examples/batch.jsonl
            hermesctx spill --dir /tmp/spill --model claude-sonnet-4-5 < examples/coding-session.json
            hermesctx spill --restore --dir /tmp/spill small.json > restored.json
        """
        return body(**params)

    return command


__getattr__ = click_command(declare)
