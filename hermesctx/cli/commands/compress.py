from __future__ import annotations

import click

from hermesctx.cli.options import (
    budget_kwargs,
    budget_options,
    config_options,
    format_kwargs,
    input_options,
    model_kwargs,
    model_options,
    settings_from,
    transcript_options,
)
from hermesctx.cli.runner import get_env, transform_stream
from hermesctx.exit import EXIT_STATUS_HELP
from hermesctx.stages import compress as stage
from hermesctx.summary import NAMES


@click.command(epilog=EXIT_STATUS_HELP)
@input_options
@click.option("--summarizer", type=click.Choice(NAMES), default=None,
              help="Who writes the summary (default: config summarizer.name / auxiliary.compression."
                   "provider, else extractive: offline, no model).")
@click.option("--summary-model", default=None, help="Model of the summarizer (config auxiliary.compression.model).")
@click.option("--base-url", default=None,
              help="Summarizer endpoint, e.g. any OpenAI-compatible server (env OPENAI_BASE_URL).")
@click.option("--api-key", default=None, help="Summarizer API key (env ANTHROPIC_API_KEY / OPENAI_API_KEY).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Deadline in seconds for each whole summarizer request, not per read "
                   "(config auxiliary.compression.timeout).")
@click.option("--fallback/--no-fallback", "fallback", default=None,
              help="When the requested summarizer fails (no key, dead endpoint, circuit open), let the "
                   "extractive summarizer stand in, with a warning naming the error (default; config "
                   "summarizer.fallback); --no-fallback: exit 4 instead.")
@click.option("--focus", default=None, help="Topic that gets 60-70% of the summary budget.")
@click.option("--protect-first-n", type=click.IntRange(min=0), default=None,
              help="Messages after the system prompt always kept (default 3).")
@click.option("--protect-last-n", type=click.IntRange(min=1), default=None,
              help="Minimum of recent messages kept (default 20, at most 8 count toward the tail floor).")
@click.option("--tail-tokens", type=click.IntRange(min=1), default=None,
              help="Token budget of the protected tail (default: threshold x target ratio of the model).")
@click.option("--if-needed", is_flag=True, help="Only compress transcripts at or over the threshold.")
@click.option("--archive", "archive_dir", type=click.Path(file_okay=False), default=None,
              help="Keep the compacted-away transcript in DIR (config archive.dir) for --expand. The "
                   "archive file holds the messages verbatim, secrets included (it is the lossless store; "
                   "keep DIR private); the note naming it in the summary is redacted.")
@click.option("--expand", is_flag=True, help="Reverse a compression made with --archive, reading only from that DIR.")
@click.option("--hermes-note/--no-hermes-note", "hermes_note", default=None,
              help="Keep Hermes's sentence about its memory files (MEMORY.md, USER.md) in the note "
                   "added to the system prompt (config compression.hermes_note; default: only when the "
                   "system prompt mentions those files, i.e. a Hermes transcript).")
@transcript_options
@model_options
@budget_options
@config_options
def command(input, jsonl, pretty, in_place, backup, report, **params):
    """Compact the middle of a transcript into a structured handoff summary.

    Head (system prompt + first messages) and tail (recent messages within the token budget)
    stay as they are; the middle becomes one summary message with the sections Hermes uses
    (task snapshot, goal, completed actions, active state, files, ...). Old tool output is
    pruned first and tool pairs are repaired after. A summary already in the transcript is
    updated, not stacked. Nothing is ever dropped silently: if the summarizer fails, the
    extractive summarizer and then a deterministic fallback take over.

    \b
    Examples:
        hermesctx compress examples/coding-session.json --protect-last-n 6 --tail-tokens 400 > small.json
        hermesctx compress --summarizer openai --summary-model gpt-4o-mini < session.json
        hermesctx compress --summarizer openai --base-url http://localhost:11434/v1 --summary-model llama3.1 s.json
        hermesctx compress --if-needed --model claude-sonnet-4-5 --jsonl < batch.jsonl > out.jsonl
        hermesctx compress --archive .hermesctx/archive s.json | hermesctx compress --expand --archive .hermesctx/archive
    """
    env = get_env()
    fmt = format_kwargs(params)

    def describe(rep):
        if "expanded" in rep:
            return f"restored {rep['restored']} messages from {rep['archive']}" if rep["expanded"] else rep["reason"]
        if rep.get("warning"):
            env.warn(rep["warning"])
        return stage.describe(rep)

    transform_stream(env, input, make(params, env), jsonl=jsonl, pretty=pretty, report=report, describe=describe,
                     in_place=in_place, backup=backup, formats=fmt)


def make(params: dict, env):
    from hermesctx.cli.options import tail_budget

    p = params.get
    settings = settings_from(params, env.environ)
    if p("expand"):
        from functools import partial

        from hermesctx.archive import expand

        directory = p("archive_dir") or settings["archive.dir"]
        if not directory:
            raise click.UsageError("--expand reads archives only from the archive directory: "
                                   "give --archive DIR (or archive.dir in the config)")
        return partial(expand, directory=directory)
    from hermesctx.summary import choose

    primary = choose(settings, name=p("summarizer"), model=p("summary_model"), base_url=p("base_url"),
                     api_key=p("api_key"), timeout=p("timeout"), environ=env.environ, warn=env.warn)
    allow_fallback = settings["summarizer.fallback"] if p("fallback") is None else p("fallback")
    fallback = None if primary.name == "extractive" or not allow_fallback else choose(settings, name="extractive")
    archive_dir = p("archive_dir") or settings["archive.dir"]
    hermes_note = p("hermes_note")
    if hermes_note is None:
        hermes_note = settings["compression.hermes_note"]
    archiver = None
    if archive_dir:
        from hermesctx.archive import Archiver

        archiver = Archiver(archive_dir)

    def run(doc):
        from hermesctx.budgets import resolve_budgets
        from hermesctx.tokens import rough_messages

        budgets, _ = resolve_budgets(**model_kwargs(settings, doc), **budget_kwargs(settings))
        if p("if_needed"):
            from hermesctx.messages import messages_of

            size = rough_messages(messages_of(doc))
            if size < budgets.threshold_tokens:
                return doc, {"compressed": False, "headline": "Not compressed",
                             "reason": f"~{size:,} tokens is under the threshold of {budgets.threshold_tokens:,}"}
        new, rep = stage.compress(doc, summarizer=primary, fallback_summarizer=fallback,
                                  protect_first_n=settings["compression.protect_first_n"],
                                  protect_last_n=settings["compression.protect_last_n"],
                                  tail_token_budget=p("tail_tokens") or tail_budget(settings, doc),
                                  max_summary_tokens=budgets.max_summary_tokens, focus=p("focus"),
                                  archive=archiver, hermes_note=hermes_note, allow_fallback=allow_fallback)
        if stage.fallback_warning(rep):
            env.warn(stage.fallback_warning(rep))
        return new, rep

    return run

