from __future__ import annotations

import click

from hermesctx import jsonio
from hermesctx.cli.options import input_options, lenient_option, output_options
from hermesctx.cli.runner import documents, get_env
from hermesctx.errors import HermesctxError
from hermesctx.exit import EXIT_STATUS_HELP
from hermesctx.stages.normalize_usage import PROVIDERS, add_usage, has_usage, model_of, normalize_usage

# --provider also names the billing route, as Hermes's one provider drives both (--billing-provider wins)
_BILLING = {"anthropic": "anthropic", "openai": "openai", "codex": "openai"}
_ZERO = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens",
         "prompt_tokens", "total_tokens", "request_count")


@click.command(epilog=EXIT_STATUS_HELP)
@input_options
@click.option("--provider", type=click.Choice(PROVIDERS), default=None,
              help="Force the usage shape: anthropic (Messages), openai (Chat Completions and "
                   "compatibles), codex (Responses). Default: detected from the JSON. Also the "
                   "billing route (codex: openai) unless --billing-provider is given.")
@click.option("--model", "-m", default=None,
              help="Price the usage for this model (default: the response's own \"model\").")
@click.option("--billing-provider", default=None,
              help="Billing route for the price, as in Hermes (anthropic, openai, bedrock, google, "
                   "deepseek, fireworks, openai-codex, ...), or auto: the vendor of each input's usage "
                   "shape. Without it only provider/model names such as anthropic/claude-opus-4.7 "
                   "are priced, as in Hermes.")
@click.option("--base-url", default=None, help="Endpoint the call went to (selects the billing route).")
@click.option("--pricing", "pricing_path", type=click.Path(dir_okay=False), default=None,
              help='Price table JSON ({"prices": [...]}, USD per million tokens) replacing the built-in snapshot.')
@click.option("--sum", "total", is_flag=True,
              help="One object: the session totals over every input (costs summed per call).")
@click.option("--no-cost", is_flag=True, help="Leave the cost out.")
@click.option("--skip-no-usage", is_flag=True,
              help="Skip inputs that hold no usage (the other events of a recorded stream) instead of "
                   "failing; the count goes to stderr.")
@lenient_option
@output_options
def command(input, jsonl, provider, model, billing_provider, base_url, pricing_path, total, no_cost,
            skip_no_usage, pretty):
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
    env = get_env()
    table = None
    if pricing_path:
        from hermesctx.pricing import parse_table

        table = parse_table(jsonio.read_json_file(pricing_path), pricing_path)
    summed = None
    costs: list[dict] = []
    skipped = 0
    line_model = None  # a Codex rollout names its model in turn_context lines, not with the usage
    for doc in documents(env, input, jsonl):
        line_model = _turn_model(doc.data) or line_model
        if skip_no_usage and not has_usage(doc.data):
            skipped += 1
            continue
        try:
            usage = normalize_usage(doc.data, provider=provider)
        except HermesctxError as err:
            raise (err.located(doc.where) if doc.where else err) from None
        for warning in usage.pop("warnings", ()):
            env.warn(f"{doc.where}: {warning}" if doc.where else warning)
        doc_model = model or model_of(doc.data) or line_model
        cost = None
        if doc_model and not no_cost:
            from hermesctx.pricing import estimate_cost, guess_billing_provider

            route = billing_provider if billing_provider is not None else _BILLING.get(provider)
            if route == "auto":
                route = guess_billing_provider(usage["provider"], doc_model, table, library=table is None)
            cost = estimate_cost(usage, doc_model, provider=route, base_url=base_url, table=table,
                                 library=table is None)  # the price library fills Hermes's gaps
            if cost["status"] == "unknown" and not billing_provider and not base_url:
                env.warn(f"no price for {doc_model!r} without a billing route: pass --billing-provider")
        if total:
            summed = add_usage(summed, usage)
            if cost is not None:
                costs.append(cost)
            continue
        env.stdout.write(jsonio.dumps({**usage, "cost": cost} if cost is not None else usage, pretty=pretty))
    if skipped:
        env.info(f"normalize-usage: skipped {skipped} input(s) without usage")
    if total:
        if summed is None:
            summed = {"provider": None, **dict.fromkeys(_ZERO, 0)}
        if costs:
            from hermesctx.pricing import add_costs

            summed = {**summed, "cost": add_costs(costs)}
        env.stdout.write(jsonio.dumps(summed, pretty=pretty))


def _turn_model(data) -> str | None:
    if isinstance(data, dict) and data.get("type") == "turn_context":
        payload = data.get("payload")
        model = payload.get("model") if isinstance(payload, dict) else None
        return model if isinstance(model, str) and model else None
    return None
