from __future__ import annotations

import click

from hermesctx.cli.options import format_kwargs, input_options, transcript_options
from hermesctx.cli.runner import get_env
from hermesctx.exit import EXIT_STATUS_HELP
from hermesctx.messages import check_messages, messages_of
from hermesctx.stages import sanitize as stage
from hermesctx.transcripts import documents, transform_stream


@click.command(epilog=EXIT_STATUS_HELP)
@input_options
@click.option("--stub", is_flag=True,
              help="Inject stub results for calls that lost theirs (Hermes's pre-API repair) "
                   "instead of removing the calls.")
@click.option("--check", is_flag=True,
              help="Change nothing: list every tool-pairing problem `hermesctx validate` finds "
                   "(OA-TOOL-*, AN-TOOL-*) on stderr, exit 1 if there is any.")
@transcript_options
def command(input, jsonl, stub, check, pretty, in_place, backup, report, **params):
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
    env = get_env()
    fmt = format_kwargs(params)
    if not check:
        transform_stream(env, input, make({"stub": stub}, env), jsonl=jsonl,
                         pretty=pretty, report=report, describe=stage.describe,
                         in_place=in_place, backup=backup, formats=fmt)
        return
    from hermesctx.transcripts import report_problems
    from hermesctx.wire.rules import check_pairing

    def checker(data, target, _line):
        check_messages(messages_of(data))  # what sanitize itself refuses (exit 3)
        return check_pairing(data, target)

    return report_problems(env, documents(env, input, jsonl, **fmt), checker)


def make(params: dict, env):
    stub = bool(params.get("stub"))
    return lambda doc: stage.sanitize(doc, stub=stub)
