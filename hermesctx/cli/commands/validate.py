from __future__ import annotations

from hermesctx.cli.params import FORMAT, INPUT, KEEP_GOING_FILES, Param, flag, path
from hermesctx.cli.runner import click_command, format_kwargs, get_env, past_failures
from hermesctx.context import Env
from hermesctx.transcripts import KeepGoing, documents_past_failures, report_problems

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PARAMS = (
    *INPUT, *KEEP_GOING_FILES,
    Param(("--target",), "target", "The API the body is for (default: the document's own format, a Responses "
          "request checked in the chat form it is read into; logs and ShareGPT are read to OpenAI).", kind="choice", choices=("openai", "anthropic"),
          default=None),
    flag("--strict", "strict", "Count the `risk` rules too (rejected by some models or gateways only)."),
    Param(("--format",), "out_format", "json: one JSON object per problem on stdout (JSON Lines), for CI.",
          kind="choice", choices=("text", "json"), default="text", show_default=True),
    path("--reference", "reference", "The input the body was made from: enables the thinking-signature rules "
         "(AN-THINK-MODIFIED, AN-THINK-PREFIX): a body, a batch (paired line by line) or a session log."),
    *FORMAT,
)


def body(input, jsonl, target, strict, out_format, reference, keep_going=False, **params):
    """What `hermesctx validate` runs: click's path (:func:`declare`) and the fast one
    (:mod:`hermesctx.cli.fast`) call it with the same params."""
    from hermesctx.wire import rules

    env = get_env()
    fmt = format_kwargs(params)
    refs = _references(env, reference) if reference else None

    def checker(doc: Any, doc_target: str, line: int | None) -> list:
        return rules.check(doc, doc_target, strict=strict, reference=None if refs is None else refs(line))

    keep_going = KeepGoing() if keep_going else None
    docs = documents_past_failures(env, input, jsonl, keep_going, **fmt)
    return past_failures(report_problems(env, docs, checker, target=target, as_json=out_format == "json"),
                         keep_going)


def _references(env: Env, path: str):
    """``line -> reference`` for the documents checked: a session log is one transcript, the
    reference of every output (all its events); a batch pairs each output with the reference
    line of its own line number; a single document is the reference of every output."""
    from hermesctx import formats, jsonio
    from hermesctx.transcripts import open_input

    with open_input(env, path) as stream:
        docs = list(jsonio.read_documents(stream, jsonl=None))
    values = [doc.data for doc in docs]
    if len(values) == 1:
        return lambda line: values[0]
    if not all(isinstance(v, list) or isinstance(v, dict) and "messages" in v for v in values) \
            or any(formats.detect_line(value) for value in values[:50]):  # a session log's events
        return lambda line: values
    by_line = {doc.line: doc.data for doc in docs if doc.line is not None}
    return lambda line: by_line.get(line, values) if line is not None else values


def declare():
    """The click command (built when a command line goes through click)."""
    import click

    from hermesctx.cli.options import click_params
    from hermesctx.exit import EXIT_STATUS_HELP

    @click.command(epilog=EXIT_STATUS_HELP)
    @click_params(PARAMS)
    def command(**params):
        """Check request bodies against the rules OpenAI and Anthropic enforce (the 400 errors).

        The whole body is checked: its messages, and its parameters, tools and tool_choice
        against the provider's published request schema (beta features a risk).

        Each problem is one line on stderr: where it is, the rule id, and the error text the API
        would return, e.g. `line 3: messages[7].content[1]: AN-TOOL-ORPHAN: ...`. `risk` rules
        (a 400 on some models or gateways only) are shown but make exit 1 only with --strict;
        `info` ones (a parameter the caller adds, such as model) never do.

        \b
        Examples:
            hermesctx validate examples/anthropic-session.json
            hermesctx sanitize tests/fixtures/sanitize/orphans.json | hermesctx validate
            hermesctx validate --jsonl --format json --strict < examples/batch.jsonl
            hermesctx validate --target anthropic examples/coding-session.json
            hermesctx convert --to anthropic examples/coding-session.json | hermesctx validate --reference examples/coding-session.json
        """
        return body(**params)

    return command


__getattr__ = click_command(declare)
