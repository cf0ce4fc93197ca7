from __future__ import annotations

import click

from hermesctx import jsonio
from hermesctx.cli.options import (
    budget_kwargs,
    budget_options,
    config_options,
    format_kwargs,
    format_options,
    input_options,
    model_kwargs,
    model_options,
    output_options,
    settings_from,
)
from hermesctx.cli.runner import documents, get_env
from hermesctx.errors import HermesctxError
from hermesctx.exit import EXIT_STATUS_HELP, ExitStatus
from hermesctx.stages.estimate import EXACT, ROUGH, estimate, format_table


@click.command(epilog=EXIT_STATUS_HELP)
@input_options
@click.option("--method", type=click.Choice([EXACT, ROUGH]), default=EXACT, show_default=True,
              help="exact: tiktoken; rough: Hermes's character estimate.")
@click.option("--encoding", type=click.Choice(["o200k_base", "cl100k_base"]), default=None,
              help="Encoding for --method exact (default: from the model).")
@click.option("--usage", "usage_path", type=click.Path(dir_okay=False), default=None,
              help="Provider usage JSON whose prompt tokens replace the estimate.")
@click.option("--per-message", is_flag=True, help="Add a row per message.")
@click.option("--format", "fmt", type=click.Choice(["json", "table"]), default=None,
              help="Default: table when the report goes to a terminal, else JSON.")
@click.option("--tee", is_flag=True, help="Pass the input through to stdout unchanged (not rewritten for the wire: "
              "the one command that does not); report on stderr.")
@click.option("--check", is_flag=True, help="Exit 1 when a request reaches the threshold.")
@format_options
@output_options
@model_options
@budget_options
@config_options
def command(input, jsonl, method, encoding, usage_path, per_message, fmt, tee, check, pretty, **params):
    """Report how full the context window is: tokens by part and role, budgets, pressure.

    \b
    Examples:
        hermesctx estimate examples/coding-session.json --model claude-sonnet-4-5
        hermesctx estimate --method rough --format table < session.json
        cat batch.jsonl | hermesctx estimate --check --model gpt-4o   # exit 1 if over
        hermesctx estimate --tee session.json | hermesctx compress > out.json
        hermesctx estimate ~/.claude/projects/p/session.jsonl   # + the usage the log recorded
    """
    env = get_env()
    formats = format_kwargs(params)
    settings = settings_from(params, env.environ)
    usage = None
    if usage_path:
        from hermesctx.stages.normalize_usage import normalize_usage

        usage = normalize_usage(jsonio.read_json_file(usage_path), provider=None)
    over = False
    if fmt is None:  # a table for a person, JSON for a program
        fmt = "table" if (env.stderr_isatty if tee else env.stdout_isatty) else "json"
    for doc in documents(env, input, jsonl, keep_raw=tee, **formats):
        try:
            report = estimate(doc.data, **model_kwargs(settings, doc.data), method=method,
                              encoding=encoding, usage=usage, per_message=per_message,
                              **budget_kwargs(settings))
        except HermesctxError as err:
            raise (err.located(doc.where) if doc.where else err) from None
        for warning in report.get("warnings", ()):
            env.warn(warning)
        _recorded_usage(doc, report)
        over = over or report["would_compress"]
        text = format_table(report).encode() if fmt == "table" else jsonio.dumps(report, pretty=pretty)
        if tee:
            raw = doc.raw if doc.raw is not None else jsonio.dumps(doc.data)  # a log: as OpenAI JSON
            env.stdout.write(raw if raw.endswith(b"\n") else raw + b"\n")
            env.stderr.write(text.decode())
        else:
            env.stdout.write(text)
    return ExitStatus.CHECK_FAILED if check and over else ExitStatus.OK


def _recorded_usage(doc, report: dict) -> dict | None:
    """For a session log that recorded its usage: that figure beside the estimate (added to
    ``report`` as ``recorded_usage``)."""
    info = getattr(doc, "info", None)
    if not info or "usage" not in info:
        return None
    from hermesctx.stages.convert import usage_report

    recorded = usage_report(info, report)
    if recorded is not None:
        report["recorded_usage"] = recorded
    return recorded

