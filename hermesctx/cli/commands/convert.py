from __future__ import annotations

from hermesctx.cli.params import FORMAT, INPUT, KEEP_GOING_FILES, OUTPUT, REPORT, TO_CHOICES, Param
from hermesctx.cli.runner import click_command, get_context, past_failures
from hermesctx.stages import convert as stage

PARAMS = (
    *INPUT, *KEEP_GOING_FILES, *FORMAT,
    Param(("--to",), "target", "Format to write.", kind="choice", choices=TO_CHOICES, default="openai",
          show_default=True),
    Param(("--model",), "model", "The model of the output body. Required to convert a body that names the other "
          "provider's model: a model is never carried across.", default=None),
    Param(("--max-tokens",), "max_tokens", "The output's max_tokens (OpenAI: max_completion_tokens). Anthropic "
          "requires one: a body given --model and none gets 4096.", kind="int", low=1, default=None),
    Param(("-v", "--verbose"), "verbose", "Say on stderr which format was read, and what came out.", kind="flag"),
    *OUTPUT, *REPORT,
)


def body(input, keep_going=False, **params):
    """What `hermesctx convert` runs: click's path (:func:`declare`) and the fast one
    (:mod:`hermesctx.cli.fast`) call it with the same params."""
    from hermesctx.transcripts import KeepGoing

    keep_going = KeepGoing() if keep_going else None
    stage.run(get_context(), input, keep_going=keep_going, **params)
    return past_failures(0, keep_going)


def declare():
    """The click command (built when a command line goes through click)."""
    import click

    from hermesctx.cli.options import click_params
    from hermesctx.exit import EXIT_STATUS_HELP

    @click.command(epilog=EXIT_STATUS_HELP)
    @click_params(PARAMS)
    def command(**params):
        """Convert transcripts and agent session logs between formats.

        Reads OpenAI chat, Anthropic Messages, OpenAI Responses items, ShareGPT / Hermes
        trajectories, Claude Code session logs and Codex CLI rollouts; writes OpenAI, Anthropic
        or ShareGPT. Text and tool call/result pairs are kept, and the request's parameters
        translated (tools, tool_choice, max_tokens, stop, parallel tool calls...); what the
        target cannot hold is reported on stderr. A session log is one transcript, written as it is read (memory does
        not grow with the log).

        \b
        Examples:
            hermesctx convert --to anthropic examples/coding-session.json
            hermesctx convert -v examples/claude-code-session.jsonl > session.json
            hermesctx convert --from codex --to sharegpt examples/codex-rollout.jsonl
            hermesctx convert --to openai --model gpt-4o examples/anthropic-session.json
        """
        return body(**params)

    return command


__getattr__ = click_command(declare)
