from __future__ import annotations

from hermesctx.cli.params import INPUT, TRANSCRIPT, flag, stage_params
from hermesctx.cli.runner import click_command, input_documents, past_failures, run_stage
from hermesctx.stages import sanitize as stage
from hermesctx.transcripts import report_problems

PARAMS = (*INPUT, *stage_params(stage.Options),
          flag("--check", "check", "Change nothing: list every tool-pairing problem `hermesctx validate` finds "
               "(OA-TOOL-*, AN-TOOL-*) on stderr, exit 1 if there is any."),
          *TRANSCRIPT)


def body(check, **params):
    """What `hermesctx sanitize` runs: click's path (:func:`declare`) and the fast one
    (:mod:`hermesctx.cli.fast`) call it with the same params."""
    if check:
        env, docs, keep_going = input_documents(params)
        return past_failures(report_problems(env, docs, stage.check), keep_going)
    return run_stage(stage, params)


def declare():
    """The click command (built when a command line goes through click)."""
    import click

    from hermesctx.cli.options import click_params
    from hermesctx.exit import EXIT_STATUS_HELP

    @click.command(epilog=EXIT_STATUS_HELP)
    @click_params(PARAMS)
    def command(**params):
        """Repair orphaned tool_call / tool_result pairs so no API rejects the transcript.

        By default (Hermes's compressor repair) a result whose call is missing is removed, and a
        call whose result is missing is removed from its assistant message, which says
        "(tool call removed)" if nothing else is left. With --stub the call stays and a result
        "[Result unavailable — see context summary above]" is inserted right after it.
        Anthropic tool_use / tool_result blocks are repaired the same way in a
        transcript without OpenAI tool messages.

        \b
        Examples:
            hermesctx sanitize examples/coding-session.json > fixed.json
            hermesctx sanitize --stub < examples/anthropic-session.json > fixed.json
            hermesctx sanitize --check --jsonl < examples/batch.jsonl   # CI: exit 1 on any orphan
        """
        return body(**params)

    return command


__getattr__ = click_command(declare)
