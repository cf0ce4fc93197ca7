from __future__ import annotations

import click

from hermesctx import formats
from hermesctx.cli.options import format_options, input_options, output_options, report_options
from hermesctx.cli.runner import get_context
from hermesctx.exit import EXIT_STATUS_HELP
from hermesctx.stages import convert as stage


@click.command(epilog=EXIT_STATUS_HELP)
@input_options
@format_options
@click.option("--to", "target", type=click.Choice(formats.TARGETS), default=formats.OPENAI,
              show_default=True, help="Format to write.")
@click.option("-v", "--verbose", is_flag=True, help="Say on stderr which format was read, and what came out.")
@output_options
@report_options
def command(input, **params):
    """Convert transcripts and agent session logs between formats.

    Reads OpenAI chat, Anthropic Messages, OpenAI Responses items, ShareGPT / Hermes
    trajectories, Claude Code session logs and Codex CLI rollouts; writes OpenAI, Anthropic
    or ShareGPT. Text and tool call/result pairs are kept; what the target cannot hold is
    reported on stderr. A session log is one transcript, written as it is read (memory does
    not grow with the log).

    \b
    Examples:
        hermesctx convert --to anthropic examples/coding-session.json
        hermesctx convert -v ~/.claude/projects/p/session.jsonl > session.json
        hermesctx convert --from codex --to sharegpt rollout.jsonl
        hermesctx convert --to openai examples/anthropic-session.json
    """
    stage.run(get_context(), input, **params)
