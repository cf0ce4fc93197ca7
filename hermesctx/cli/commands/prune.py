from __future__ import annotations

from hermesctx.cli.params import rewriting
from hermesctx.cli.runner import click_command, run_stage
from hermesctx.stages import prune as stage

PARAMS = rewriting(stage)


def body(**params):
    """What `hermesctx prune` runs: click's path (:func:`declare`) and the fast one
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
        """Replace old tool results by one-line stubs, drop duplicates, shrink old arguments.

        Outside the protected tail (a token budget walked back from the end, at least
        --protect-last-n messages) every tool result over 200 characters becomes a stub such as
        `[terminal] ran `npm test` -> exit 0, 47 lines output`; identical results keep only the
        newest copy; tool-call arguments over 500 characters keep the first 200 characters of
        each string, still valid JSON. No model is called.

        \b
        Examples:
            hermesctx prune examples/coding-session.json --protect-last-n 6 --tail-tokens 0
            hermesctx prune --model claude-sonnet-4-5 < examples/coding-session.json > pruned.json
            hermesctx prune --dry-run --tail-tokens 2000 examples/coding-session.json > /dev/null
            hermesctx prune --report report.jsonl examples/batch.jsonl > pruned.jsonl
        """
        return body(**params)

    return command


__getattr__ = click_command(declare)
