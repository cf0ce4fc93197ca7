from __future__ import annotations

from hermesctx import jsonio
from hermesctx.cli.params import CONFIG, INPUT, TRANSCRIPT, flag, path, stage_params
from hermesctx.cli.runner import click_command, input_documents, past_failures, run_stage, usage_error
from hermesctx.stages import cache_mark as stage
from hermesctx.transcripts import report_each

PARAMS = (*INPUT, *stage_params(stage.Options),
          flag("--check", "check", "Change nothing: report the breakpoints (JSON on stdout); exit 1 if more than 4."),
          path("--against", "against", "With --check: the previous request; report which breakpoint prefixes it "
               "shares (the cache hits); exit 1 if none."),
          *TRANSCRIPT, *CONFIG)


def body(check, against, **params):
    """What `hermesctx cache-mark` runs: click's path (:func:`declare`) and the fast one
    (:mod:`hermesctx.cli.fast`) call it with the same params."""
    if against and not check:
        usage_error("--against needs --check")
    if check:
        previous = jsonio.read_json_file(against) if against else None
        env, docs, keep_going = input_documents(params)
        checker = stage.checker(previous, against=bool(against), pretty=params["pretty"])
        return past_failures(report_each(env, docs, checker), keep_going)
    return run_stage(stage, params)


def declare():
    """The click command (built when a command line goes through click)."""
    import click

    from hermesctx.cli.options import click_params
    from hermesctx.exit import EXIT_STATUS_HELP

    @click.command(epilog=EXIT_STATUS_HELP)
    @click_params(PARAMS)
    def command(**params):
        """Place Anthropic prompt-cache breakpoints (system prompt + last 3 messages).

        Markers already in the input are removed first, so a request never carries more than the
        4 breakpoints Anthropic accepts, and running cache-mark twice equals running it once.
        Works on OpenAI-shaped messages (OpenRouter) and on Anthropic request bodies.

        \b
        Examples:
            hermesctx cache-mark examples/anthropic-session.json > marked.json
            hermesctx cache-mark --ttl 1h --native-anthropic < examples/coding-session.json
            hermesctx cache-mark --check --against marked.json marked.json
        """
        return body(**params)

    return command


__getattr__ = click_command(declare)
