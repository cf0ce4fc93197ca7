"""The command line's access to the environment: the :class:`~hermesctx.context.Env` and the
:class:`~hermesctx.context.Context` of the running command, kept on the click root context.
The document loop itself is :mod:`hermesctx.transcripts`."""

from __future__ import annotations

import click

from hermesctx.context import Context, Env


def get_env() -> Env:
    ctx = click.get_current_context()
    root = ctx.find_root()
    if not isinstance(root.obj, Env):
        root.obj = Env.from_process()
    return root.obj


def get_context(config_path: str | None = None, *, reports: bool = True) -> Context:
    """The command's context: one per process and config file (its settings read once)."""
    env = get_env()
    key = ("hermesctx.context", config_path)
    root = click.get_current_context().find_root()
    found = root.meta.get(key)
    if found is None:
        found = root.meta[key] = Context(env, config_path)
    found.reports = reports
    return found


_IO = ("input", "jsonl", "pretty", "in_place", "backup", "report")


def run_stage(stage, params: dict) -> int:
    """A transcript command: its flags become ``stage.Options``, ``stage.build`` makes the
    function of one document, and :func:`hermesctx.transcripts.transform_stream` runs it."""
    from hermesctx.cli.options import format_kwargs, options_from
    from hermesctx.exit import ExitStatus
    from hermesctx.transcripts import KeepGoing, transform_stream

    env = get_env()
    io = {key: params.pop(key, None) for key in _IO}
    mode = params.pop("keep_going", None)
    keep_going = KeepGoing(mode) if mode else None
    formats = format_kwargs(params)
    ctx = get_context(params.pop("config_path", None), reports=bool(io["report"]) or not env.quiet)
    fn = stage.build(options_from(stage.Options, params), ctx)
    transform_stream(env, io["input"], fn, jsonl=io["jsonl"], pretty=bool(io["pretty"]),
                     report=io["report"], describe=stage.describe, in_place=bool(io["in_place"]),
                     backup=bool(io["backup"]), formats=formats, keep_going=keep_going)
    return ExitStatus.BAD_INPUT if keep_going and keep_going.failures else ExitStatus.OK


def input_documents(params: dict, *, keep_raw: bool = False):
    """``(env, documents)`` for a command that reads transcripts without rewriting them (its
    input and format options taken out of ``params``)."""
    from hermesctx.cli.options import format_kwargs
    from hermesctx.transcripts import documents

    env = get_env()
    path, jsonl = params.pop("input", "-"), params.pop("jsonl", None)
    return env, documents(env, path, jsonl, keep_raw=keep_raw, **format_kwargs(params))
