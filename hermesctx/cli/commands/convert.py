from __future__ import annotations

import click

from hermesctx import formats, io
from hermesctx.cli.options import format_options, input_options, output_options, report_options
from hermesctx.cli.runner import ReportSink, format_documents, get_env
from hermesctx.errors import HermesctxError
from hermesctx.exit import EXIT_STATUS_HELP
from hermesctx.stages.convert import convert, describe


@click.command(epilog=EXIT_STATUS_HELP)
@input_options
@format_options
@click.option("--to", "target", type=click.Choice(formats.TARGETS), default=formats.OPENAI,
              show_default=True, help="Format to write.")
@click.option("-v", "--verbose", is_flag=True, help="Say which format was read.")
@output_options
@report_options
def command(input, jsonl, source, include_sidechains, all_segments, target, verbose,
            pretty, report):
    """Convert transcripts and agent session logs between formats.

    Reads OpenAI chat, Anthropic Messages, OpenAI Responses items, ShareGPT / Hermes
    trajectories, Claude Code session logs and Codex CLI rollouts; writes OpenAI, Anthropic
    or ShareGPT. Text and tool call/result pairs are kept; what the target cannot hold is
    reported on stderr.

    \b
    Examples:
        hermesctx convert --to anthropic examples/coding-session.json
        hermesctx convert -v ~/.claude/projects/p/session.jsonl > session.json
        hermesctx convert --from codex --to sharegpt rollout.jsonl
        hermesctx convert --to openai examples/anthropic-session.json
    """
    env = get_env()
    sink = ReportSink(env, report)
    ok = False
    try:
        for doc in format_documents(env, input, jsonl, source=source,
                                    include_sidechains=include_sidechains,
                                    all_segments=all_segments, convert_documents=False):
            try:
                out, rep = convert(doc.data, source=doc.info.get("format", source),
                                   target=target, info=doc.info)
            except HermesctxError as err:
                raise (err.located(doc.where) if doc.where else err) from None
            if verbose:
                env.info(f"{doc.where + ': ' if doc.where else ''}read as {rep['from']}")
            for key in ("segments", "dropped_before_compaction", "orphan_tool_results",
                        "sidechain_events", "usage"):
                if key in doc.info:
                    rep[key] = doc.info[key]
            env.stdout.write(io.dumps(out, pretty=pretty))
            sink.add(doc, rep, describe(rep) if (rep["lost"] or verbose) else None)
        ok = True
    finally:
        sink.close(ok)
