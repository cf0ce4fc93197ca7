from __future__ import annotations

import click

from hermesctx.cli.options import format_kwargs, input_options, transcript_options
from hermesctx.cli.runner import documents, get_env, transform_stream
from hermesctx.errors import HermesctxError
from hermesctx.exit import EXIT_STATUS_HELP, ExitStatus
from hermesctx.messages import check_messages, messages_of
from hermesctx.stages import sanitize as stage


@click.command(epilog=EXIT_STATUS_HELP)
@input_options
@click.option("--stub", is_flag=True,
              help="Inject stub results for calls that lost theirs (Hermes's pre-API repair) "
                   "instead of removing the calls.")
@click.option("--check", is_flag=True,
              help="Change nothing: list every orphan on stderr, exit 1 if there is any.")
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
    problems = transcripts = bad = 0
    for doc in documents(env, input, jsonl, **fmt):
        try:
            messages = messages_of(doc.data)
            check_messages(messages)
        except HermesctxError as err:
            raise (err.located(doc.where) if doc.where else err) from None
        transcripts += 1
        found = stage.find_problems(messages)
        if (getattr(doc, "info", None) or {}).get("empty_log"):  # a session log gave no message
            found = [{"message": "the log holds events but no message"}]
        where = f"transcript {transcripts}: "  # 1-based number of the transcript in the batch
        for problem in found:
            env.stderr.write(f"{where}{problem['message']}\n")
        problems += len(found)
        bad += bool(found)
    env.stderr.write(f"{problems} problem{'s' * (problems != 1)} in {bad} of {transcripts} "
                     f"transcript{'s' * (transcripts != 1)}\n")
    env.stderr.flush()
    if problems:
        return ExitStatus.CHECK_FAILED
    return ExitStatus.OK


def make(params: dict, env):
    stub = bool(params.get("stub"))
    return lambda doc: stage.sanitize(doc, stub=stub)
