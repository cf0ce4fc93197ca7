from __future__ import annotations

import click

from hermesctx import jsonio
from hermesctx.cli.options import (
    config_options,
    format_kwargs,
    input_options,
    settings_from,
    transcript_options,
)
from hermesctx.cli.runner import documents, get_env, transform_stream
from hermesctx.errors import HermesctxError
from hermesctx.exit import EXIT_STATUS_HELP, ExitStatus
from hermesctx.stages import cache_mark as stage


@click.command(epilog=EXIT_STATUS_HELP)
@input_options
@click.option("--ttl", default=None, metavar="5m|1h",
              help="Cache lifetime (default 5m, config prompt_caching.cache_ttl); anything else is an error.")
@click.option("--strategy", type=click.Choice(stage.STRATEGIES), default=stage.SYSTEM_AND_3, show_default=True,
              help="system_and_3: the system prompt and the last 3 messages; none: remove every marker.")
@click.option("--native-anthropic", "native", is_flag=True,
              help="Native Anthropic layout for OpenAI-shaped messages (top-level markers; default: "
                   "the OpenRouter envelope layout). Anthropic request bodies are always native.")
@click.option("--model", "-m", default=None, help="Warn when the cached prefix is under this model's minimum.")
@click.option("--check", is_flag=True,
              help="Change nothing: report the breakpoints (JSON on stdout); exit 1 if more than 4.")
@click.option("--against", "against", type=click.Path(dir_okay=False), default=None,
              help="With --check: the previous request; report which breakpoint prefixes it shares "
                   "(the cache hits); exit 1 if none.")
@transcript_options
@config_options
def command(input, jsonl, ttl, strategy, native, model, check, against, pretty, in_place, backup, report, config_path,
            **params):
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
    env = get_env()
    fmt = format_kwargs(params)
    if against and not check:
        raise click.UsageError("--against needs --check")
    if not check:
        # the exact cached-prefix size goes only in the --report JSON; the human line needs
        # to know only whether the prefix is under the model's minimum
        transform_stream(env, input, make({"ttl": ttl, "strategy": strategy, "native": native, "model": model,
                                           "config_path": config_path}, env, exact_prefix=bool(report)),
                         jsonl=jsonl, pretty=pretty, report=report, describe=stage.describe,
                         in_place=in_place, backup=backup, formats=fmt)
        return ExitStatus.OK
    previous = jsonio.read_json_file(against) if against else None
    failed = False
    for doc in documents(env, input, jsonl, **fmt):
        try:
            result = stage.check(doc.data, previous)
        except HermesctxError as err:
            raise (err.located(doc.where) if doc.where else err) from None
        failed = failed or result["over_limit"] or (against is not None and not result["cache_hit_tokens"])
        env.stdout.write(jsonio.dumps(result, pretty=pretty))
    return ExitStatus.CHECK_FAILED if failed else ExitStatus.OK


def make(params: dict, env, *, exact_prefix: bool = True):
    ttl = params.get("ttl")
    settings = settings_from({"config_path": params.get("config_path")}, env.environ,
                             **({"prompt_caching.cache_ttl": ttl} if ttl is not None else {}))
    ttl = settings["prompt_caching.cache_ttl"]
    stage.marker(ttl)  # a bad TTL is a usage error before any input is read
    native, model = bool(params.get("native")), params.get("model")
    strategy = params.get("strategy") or stage.SYSTEM_AND_3

    def run(doc):
        from hermesctx.messages import detect_format
        from hermesctx.wire import send

        # D12: the breakpoints go on the request as it is sent (as Hermes marks the messages it
        # sends), never on a message or block the send path then drops
        wire: dict = {}
        doc = send.request(doc, detect_format(doc), wire)
        for line in send.describe(wire):
            env.warn(line)
        own = doc.get("model") if isinstance(doc, dict) and isinstance(doc.get("model"), str) else None
        out, rep = stage.cache_mark(doc, ttl=ttl, native=native, strategy=strategy, model=model or own,
                                   exact_prefix=exact_prefix)
        return out, ({**rep, "wire": wire} if wire and isinstance(rep, dict) else rep)

    return run
