from __future__ import annotations

import click

from hermesctx.cli.runner import get_context, get_env
from hermesctx.exit import EXIT_STATUS_HELP


@click.command(epilog=EXIT_STATUS_HELP)
@click.argument("logs", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--compare", "compare", multiple=True, metavar="POLICY",
              help="Replay under this policy too (repeatable): log (the log's own behaviour), none (no "
                   "compaction), hermes (Hermes's defaults), gate (the defaults with the min-gain gate), "
                   "or a config file (its compression, prompt_caching and summarizer settings).")
@click.option("--min-gain", type=click.IntRange(min=0), default=None, metavar="TOKENS",
              help="Gate every compacting policy: decline a compaction that would not repay the cache it "
                   "breaks within the requests expected, or save fewer than TOKENS tokens over them "
                   "(config compression.min_gain).")
@click.option("--min-saving-usd", type=click.FloatRange(min=0), default=None, metavar="USD",
              help="The gate in money: decline a compaction whose net saving over the requests expected "
                   "is under USD.")
@click.option("--ttl", type=click.Choice(["5m", "1h"]), default=None,
              help="Cache lifetime of every policy (default: what the log recorded, else 5m; OpenAI: 10 min).")
@click.option("--summary-model", default=None, metavar="MODEL",
              help="The model that writes the summaries (priced separately; default: the session's).")
@click.option("--clear-thinking", type=click.IntRange(min=0), default=None, metavar="KEEP",
              help="Replay each policy a second time clearing the thinking of all but the last KEEP "
                   "assistant turns before each request (as prune --clear-thinking).")
@click.option("--format", "fmt", type=click.Choice(["json", "table"]), default=None,
              help="A table (default on a terminal) or JSON (default when piped).")
@click.option("--progress/--no-progress", default=None, help="A progress line on stderr (default: on a terminal).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
              envvar="HERMESCTX_CONFIG", help="Config file whose policy is replayed (with no --compare: the "
                                              "log's own policy beside it).")
def command(logs, compare, min_gain, min_saving_usd, ttl, summary_model, clear_thinking, fmt, progress,
            config_path):
    """What would a context policy have cost? Replay session logs request by request.

    Each request of a log (Claude Code, Codex; any transcript, without usage) is sent again
    as the agent sent it, the transcript up to that request, compacted by the policy over its
    threshold, and billed with the provider's prompt-cache rules (prefix reads, 5m/1h writes
    on the log's own timestamps) at the price table's rates. Per session and in total:
    requests, input, cache-read, cache-write and output tokens, compactions and cost, beside
    what the log recorded.

    \b
    Examples:
        hermesctx replay examples/claude-code-session.jsonl
        hermesctx replay --compare none --compare hermes --compare gate examples/codex-*.jsonl
        hermesctx replay --config examples/hermesctx.yaml --format json examples/claude-code-session.jsonl
    """
    from hermesctx import replay

    return replay.main(list(logs), compare=list(compare), config_path=config_path, min_gain=min_gain,
                       min_saving_usd=min_saving_usd, ttl=ttl, summary_model=summary_model, fmt=fmt,
                       clear_thinking=clear_thinking,
                       progress=progress, env=get_env(), ctx_of=get_context)
