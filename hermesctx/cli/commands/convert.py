from __future__ import annotations

import itertools

import click

from hermesctx import formats, jsonio
from hermesctx.cli.options import format_options, input_options, output_options, report_options
from hermesctx.cli.runner import ReportSink, get_env, open_input
from hermesctx.errors import HermesctxError
from hermesctx.exit import EXIT_STATUS_HELP
from hermesctx.stages.convert import Counts, convert, describe
from hermesctx.wire import send

_LOG_KEYS = ("session", "agent", "segments", "dropped_before_compaction", "abandoned_branch_entries",
             "detached_entries", "sidechain_events", "subagents", "orphan_tool_results",
             "duplicate_tool_results", "empty_log", "skipped", "usage")


@click.command(epilog=EXIT_STATUS_HELP)
@input_options
@format_options
@click.option("--to", "target", type=click.Choice(formats.TARGETS), default=formats.OPENAI,
              show_default=True, help="Format to write.")
@click.option("-v", "--verbose", is_flag=True, help="Say on stderr which format was read, and what came out.")
@output_options
@report_options
def command(input, jsonl, source, include_sidechains, all_segments, target, verbose,
            pretty, report):
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
    env = get_env()
    sink = ReportSink(env, report)
    ok = False
    try:
        with open_input(env, input) as stream:
            opened = formats.open_log(stream, source=source, jsonl=jsonl, warn=env.warn,
                                      include_sidechains=include_sidechains, all_segments=all_segments)
            if isinstance(opened, formats.LogStream):
                _convert_log(env, sink, opened, target, verbose, pretty)
            else:
                for doc in formats.documents(opened if opened is not None else stream, source=source,
                                             jsonl=jsonl, convert_documents=False):
                    try:
                        out, rep = convert(doc.data, source=doc.info["format"], target=target)
                        for what, n in doc.info["lost"].items():  # what reading it left out
                            rep["lost"][what] = rep["lost"].get(what, 0) + n
                    except HermesctxError as err:
                        raise (err.located(doc.where) if doc.where else err) from None
                    out = send.request(out, target, rep.setdefault("wire", {}))
                    env.stdout.write(jsonio.dumps(out, pretty=pretty))
                    _report(env, sink, doc, rep, verbose)
        ok = True
    finally:
        sink.close(ok)


def _convert_log(env, sink, log: formats.LogStream, target: str, verbose: bool, pretty: bool) -> None:
    if verbose:
        env.info(f"read as {log.name}")
    counts, lost = Counts(), {}
    wire: dict = {}
    messages = log.messages()
    first = next(messages, None)  # the first pass, which may refuse the log, before any output
    messages = itertools.chain([] if first is None else [first], messages)
    formats.write_stream(env.stdout, counts.count(messages), log.tail, target, lost, pretty=pretty,
                         wire=wire)
    info = log.info()
    for what, n in info.get("lost", {}).items():
        lost[what] = lost.get(what, 0) + n
    rep = counts.report(log.name, target, lost)
    rep.update((key, info[key]) for key in _LOG_KEYS if key in info)
    rep["wire"] = wire
    _report(env, sink, jsonio.Document(None, 0, None), rep, verbose)


def _report(env, sink, doc, rep: dict, verbose: bool) -> None:
    where = f"{doc.where}: " if doc.where else ""
    if verbose and rep["from"] not in formats.LOG_FORMATS:
        env.info(f"{where}read as {rep['from']}")
    wire = rep.pop("wire", None) or {}
    if wire:
        rep["wire"] = wire
    for line in [*formats.describe_lost(rep["lost"], rep["to"]), *send.describe(wire)]:
        env.warn(where + line)
    sink.add(doc, rep, describe(rep) if verbose else None)
