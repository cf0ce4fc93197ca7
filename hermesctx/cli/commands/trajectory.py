from __future__ import annotations

import json
from contextlib import closing

import click

from hermesctx import jsonio
from hermesctx.cli.options import config_options, settings_from
from hermesctx.cli.runner import get_env, open_input
from hermesctx.errors import FileIOError, UpstreamError, UsageError
from hermesctx.exit import EXIT_STATUS_HELP
from hermesctx.summary import NAMES, SummarizerError

ROLES = ("system", "human", "gpt", "tool")


def _roles(ctx, param, value: str) -> tuple[str, ...]:
    roles = tuple(part.strip() for part in value.split(",") if part.strip())
    bad = [role for role in roles if role not in ROLES]
    if bad:
        raise click.BadParameter(f"unknown role {bad[0]!r} (choose from {', '.join(ROLES)})")
    return roles


@click.command(epilog=EXIT_STATUS_HELP)
@click.argument("input", default="-", metavar="[FILE]",
                type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--target-max-tokens", type=click.IntRange(min=0), default=15250, show_default=True,
              help="Compress trajectories over this many tokens.")
@click.option("--summary-target-tokens", type=click.IntRange(min=0), default=750,
              show_default=True, help="Budget of the summary turn.")
@click.option("--protect-first", default="system,human,gpt,tool", show_default=True,
              callback=_roles, help="Roles whose first turn is always kept (comma list; '' for none).")
@click.option("--protect-last-n", type=click.IntRange(min=0), default=4, show_default=True,
              help="Turns always kept at the end.")
@click.option("--notice/--no-notice", default=True, show_default=True,
              help="Append the notice text to the system turns before the summary.")
@click.option("--notice-text", default=None, help="The notice appended to system turns.")
@click.option("--entry-metrics/--no-entry-metrics", default=True, show_default=True,
              help="Add compression_metrics to each compressed entry.")
@click.option("--metrics", "metrics_path", type=click.Path(dir_okay=False), default=None,
              help="Write the aggregate metrics (JSON) to FILE instead of stderr.")
@click.option("--encoding", type=click.Choice(["o200k_base", "cl100k_base"]), default="o200k_base",
              show_default=True, help="tiktoken encoding that counts the tokens.")
@click.option("--summarizer", type=click.Choice(NAMES), default=None,
              help="Who writes the summaries (default: config summarizer.name / auxiliary.compression."
                   "provider, else extractive: offline, no model).")
@click.option("--model", "summary_model", default=None, help="Summarizer model.")
@click.option("--base-url", default=None, help="Summarizer endpoint (any OpenAI-compatible URL).")
@click.option("--api-key", default=None,
              help="Summarizer API key (default: ANTHROPIC_API_KEY / OPENAI_API_KEY).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Seconds per summary request (default: auxiliary.compression.timeout, 120).")
@click.option("--max-retries", type=click.IntRange(min=0), default=3, show_default=True,
              help="Summary attempts per trajectory before the fixed failure text.")
@click.option("--retry-delay", type=click.FloatRange(min=0), default=2.0, show_default=True,
              help="Backoff base in seconds between attempts (0: no wait).")
@click.option("--concurrency", "-j", type=click.IntRange(min=1), default=4, show_default=True,
              help="Trajectories summarized at once (output order is kept).")
@config_options
def command(input, target_max_tokens, summary_target_tokens, protect_first, protect_last_n,
            notice, notice_text, entry_metrics, metrics_path, encoding, summarizer, summary_model,
            base_url, api_key, timeout, max_retries, retry_delay, concurrency, config_path):
    """Compress ShareGPT training trajectories (JSONL of {"conversations": [{"from", "value"}]})
    to a token budget, the way Hermes's TrajectoryCompressor does.

    A pretty-printed JSON file is read as one document: an array of entries, or one entry.

    Each trajectory over --target-max-tokens has its middle turns (after the first system,
    human, gpt and tool turns, before the last --protect-last-n) replaced by one human turn
    "[CONTEXT SUMMARY]: ...", taking just enough turns to get under the target and never
    splitting a tool call from its response. Entries come out in input order, compressed ones
    with compression_metrics; a trajectory that fails is written unchanged and counted. The
    aggregate metrics go to stderr, or to --metrics FILE.

    \b
    Examples:
        hermesctx trajectory examples/trajectories.jsonl --target-max-tokens 300 > small.jsonl
        hermesctx trajectory data.jsonl --summarizer openai --base-url http://localhost:8000/v1 \\
            --model qwen2.5-7b -j 16 --metrics metrics.json > out.jsonl
        hermesctx trajectory data.jsonl --summarizer anthropic --model claude-haiku-4-5 > out.jsonl
    """
    from hermesctx.encodings import EncodingUnavailable, get_encoding
    from hermesctx.stages.trajectory import (
        AggregateMetrics,
        TrajectoryConfig,
        compress_stream,
        tiktoken_counter,
    )

    env = get_env()
    settings = settings_from({"config_path": config_path}, env.environ, **{
        "auxiliary.compression.model": summary_model,
        "auxiliary.compression.base_url": base_url,
        "auxiliary.compression.api_key": api_key,
        "auxiliary.compression.timeout": timeout,
    })
    config = TrajectoryConfig(
        target_max_tokens=target_max_tokens, summary_target_tokens=summary_target_tokens,
        protect_first_system="system" in protect_first, protect_first_human="human" in protect_first,
        protect_first_gpt="gpt" in protect_first, protect_first_tool="tool" in protect_first,
        protect_last_n_turns=protect_last_n, add_summary_notice=notice,
        max_retries=max_retries, retry_delay=retry_delay, metrics_per_trajectory=entry_metrics,
    ).with_(summary_notice_text=notice_text)
    try:
        count = tiktoken_counter(get_encoding(encoding))
    except EncodingUnavailable as exc:
        raise UsageError(f"encoding {encoding}: {exc}") from None
    engine = _make_summarizer(settings, summarizer, env.environ)

    aggregate = AggregateMetrics()
    aggregate.start()
    progress = env.stderr_isatty and not env.quiet
    done = 0
    with open_input(env, input) as stream, closing(compress_stream(
            _entries(env, stream), config=config, count=count, summarizer=engine,
            concurrency=concurrency, aggregate=aggregate)) as outcomes:
        for outcome in outcomes:
            env.stdout.write(jsonio.dumps(outcome.entry))
            done += 1
            if outcome.error:
                env.warn(f"{outcome.tag}: trajectory failed ({outcome.error}); "
                         "written unchanged")
            if progress:
                env.stderr.write(f"\rtrajectory: {done} done, {aggregate.compressed} compressed, "
                                 f"{aggregate.failed} failed")
                env.stderr.flush()
            env.stdout.flush()  # a line is out as soon as it is ready
    env.stdout.flush()
    if progress:
        env.stderr.write("\n")
    aggregate.finish()
    report = aggregate.to_dict()
    if metrics_path:
        try:
            jsonio.write_atomic(metrics_path, (json.dumps(report, indent=2) + "\n").encode())
        except OSError as exc:
            raise FileIOError(f"cannot write metrics {metrics_path}: {exc.strerror}") from None
    elif not env.quiet:
        env.stderr.write(json.dumps(report) + "\n")


def _entries(env, stream):
    """``(entry, where)`` for every entry: JSON Lines (a line that is not JSON is skipped with a
    warning, as Hermes does) or one pretty-printed document (:func:`jsonio.read_entries`)."""
    return jsonio.read_entries(stream, env.warn)


def _make_summarizer(settings, name: str | None, environ):
    from hermesctx.summary import choose

    try:  # the stage makes Hermes's --max-retries attempts itself: no retries inside
        engine = choose(settings, name=name, retries=0, max_failures=0, environ=environ)
    except ModuleNotFoundError:
        raise UsageError("the extractive summarizer is not available in this build",
                         hint="use --summarizer anthropic or openai") from None
    if engine.name == "extractive":
        return engine
    try:
        engine.client  # noqa: B018 - fails now (like Hermes's constructor) when there is no key
    except SummarizerError as err:
        raise UpstreamError(str(err)) from None
    return engine
