from __future__ import annotations

from hermesctx.cli.params import INPUT, LENIENT, OUTPUT, stage_params
from hermesctx.cli.runner import click_command, get_context, input_documents, options_from
from hermesctx.stages import normalize_usage as stage

PARAMS = (*INPUT, *stage_params(stage.Options), LENIENT, *OUTPUT)


def body(pretty, **params):
    """What `hermesctx normalize-usage` runs: click's path (:func:`declare`) and the fast one
    (:mod:`hermesctx.cli.fast`) call it with the same params."""
    _env, docs, _keep_going = input_documents(params)
    stage.run(options_from(stage.Options, params), get_context(), docs, pretty=pretty)


def declare():
    """The click command (built when a command line goes through click)."""
    import click

    from hermesctx.cli.options import click_params
    from hermesctx.exit import EXIT_STATUS_HELP

    @click.command(epilog=EXIT_STATUS_HELP)
    @click_params(PARAMS)
    def command(**params):
        """Turn a provider's raw usage into canonical token buckets, with the cost.

        Input: a usage object, a whole API response or final streaming event holding one
        (Anthropic message / message_delta, Chat Completions final chunk, Responses
        response.completed, a Codex rollout's token_count event: its cached input is priced as
        cache reads), or JSON Lines of them (a whole Codex rollout with --skip-no-usage). Output per input: input_tokens, output_tokens,
        cache_read_tokens, cache_write_tokens, reasoning_tokens, prompt_tokens (input + cache read +
        cache write), total_tokens (prompt + output), Anthropic's 5m/1h cache-write split when
        present, and, when a model is known, "cost": Hermes's estimate from its price snapshot
        (amount_usd null and label "n/a" when unpriced, never 0) plus what the same tokens would
        cost uncached and the saving caching gave. Negative counts are kept and warned about;
        a fractional count is truncated; a count that is no number ("abc", true, []) or beyond 2^53
        is an error (exit 3) unless --lenient, which reads it as Hermes does (0).

        \b
        Examples:
            echo '{"input_tokens": 25, "output_tokens": 410, "cache_read_input_tokens": 48000}' \\
              | hermesctx normalize-usage --model claude-sonnet-4-5 --billing-provider anthropic
            echo '{"prompt_tokens": 5000, "completion_tokens": 900}' | hermesctx normalize-usage
            hermesctx normalize-usage --sum --billing-provider auto examples/usage-log.jsonl
        """
        return body(**params)

    return command


__getattr__ = click_command(declare)
