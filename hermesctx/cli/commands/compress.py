from __future__ import annotations

from hermesctx.cli.params import rewriting
from hermesctx.cli.runner import click_command, run_stage
from hermesctx.stages import compress as stage

PARAMS = rewriting(stage)


def body(**params):
    """What `hermesctx compress` runs: click's path (:func:`declare`) and the fast one
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
        """Compact the middle of a transcript into a structured handoff summary.

        Head (system prompt + first messages) and tail (recent messages within the token budget)
        stay as they are; the middle becomes one summary message with the sections Hermes uses
        (task snapshot, goal, completed actions, active state, files, ...). Old tool output is
        pruned first and tool pairs are repaired after. A summary already in the transcript is
        updated, not stacked. Nothing is ever dropped silently: if the summarizer fails, the
        extractive summarizer and then a deterministic fallback take over.

        \b
        Examples:
            hermesctx compress examples/coding-session.json --protect-last-n 6 --tail-tokens 400 > small.json
            hermesctx compress --summarizer openai --summary-model gpt-4o-mini < examples/coding-session.json
            hermesctx compress --summarizer openai --base-url http://localhost:11434/v1 --summary-model llama3.1 examples/coding-session.json
            hermesctx compress --if-needed --model claude-sonnet-4-5 --jsonl < examples/batch.jsonl > out.jsonl
            hermesctx compress --archive .hermesctx/archive examples/coding-session.json | hermesctx compress --expand --archive .hermesctx/archive
        """
        return body(**params)

    return command


__getattr__ = click_command(declare)
