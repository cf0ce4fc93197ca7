"""The command line's access to the environment: the :class:`~hermesctx.context.Env` and the
:class:`~hermesctx.context.Context` of the running command line. They live here, not on click's
context, so that a command runs the same with or without click (the fast path of
:mod:`hermesctx.cli.fast` never imports it); :func:`hermesctx.cli.guarded` enters
:func:`command_line` around either. The document loop itself is :mod:`hermesctx.transcripts`.
click is imported here only for a click command run outside :func:`hermesctx.cli.run`."""

from __future__ import annotations

from hermesctx.context import Context, Env  # every command line has them (no click there)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# (env, contexts by config path) of the command lines running in this process, innermost last
_ACTIVE: list[tuple[Any, dict]] = []


class command_line:
    """``with command_line(env):`` makes ``env`` the environment of the command line run inside."""

    def __init__(self, env: Any):
        self.env = env

    def __enter__(self) -> Any:
        _ACTIVE.append((self.env, {}))
        return self.env

    def __exit__(self, *exc: Any) -> None:
        _ACTIVE.pop()


def _current() -> tuple[Any, dict]:
    if _ACTIVE:
        return _ACTIVE[-1]
    # a click command invoked without hermesctx.cli.run (click's own test runner): one Env per
    # click invocation, on its root context, as click's streams are per invocation
    import click

    root = click.get_current_context().find_root()
    if not isinstance(root.obj, Env):
        root.obj = Env.from_process()
    return root.obj, root.meta.setdefault("hermesctx.contexts", {})


def get_env() -> Env:
    return _current()[0]


def get_context(config_path: str | None = None, *, reports: bool = True, json_reports: bool = True) -> Context:
    """The command's context: one per command line and config file (its settings read once)."""
    env, contexts = _current()
    found = contexts.get(config_path)
    if found is None:
        found = contexts[config_path] = Context(env, config_path)
    found.reports = reports
    found.json_reports = json_reports
    return found


def click_command(declare):
    """A command module's ``__getattr__``: its click command, ``command``, made by ``declare()``
    on first use (the fast path runs the module's ``body`` without it, and without click)."""
    import sys

    def __getattr__(name: str):
        if name != "command":
            raise AttributeError(f"module {declare.__module__!r} has no attribute {name!r}")
        module = sys.modules[declare.__module__]
        module.command = command = declare()
        return command

    return __getattr__


class NotFast(Exception):
    """A command body's usage error met on the fast path, before it did anything: the command
    line goes through click instead, whose message and exit status it gets."""


def usage_error(message: str):
    """Raise click's usage error for ``message`` (on the fast path: :class:`NotFast`)."""
    import sys

    click = sys.modules.get("click")
    if click is None or click.get_current_context(silent=True) is None:
        raise NotFast(message)
    raise click.UsageError(message)


def options_from(cls, params: dict[str, Any]):
    """``cls`` from the command's parameters (taken out of ``params``); an old spelling counts
    when the new one was not given."""
    from hermesctx.options import specs

    values = {}
    for f, spec in specs(cls):
        value = params.pop(f.name, None)
        for alias in spec.aliases:
            old = params.pop(f"{f.name}__{alias.lstrip('-').replace('-', '_')}", None)
            if spec.multiple and old:
                value = (*(value or ()), *old)
            elif old not in (None, ()) and value in (None, False, f.default):
                value = old
        if value is not None:
            values[f.name] = value
    return cls(**values)


_FORMAT_PARAMS = ("source", "include_sidechains", "all_segments", "target")


def format_kwargs(params: dict[str, Any]) -> dict[str, Any]:
    """Take the input/output format options' values out of ``params`` (for
    :func:`hermesctx.transcripts.transform_stream` and ``documents``)."""
    return {key: params.pop(key) for key in _FORMAT_PARAMS if key in params}


_IO = ("input", "jsonl", "pretty", "in_place", "backup", "report")


def run_stage(stage, params: dict) -> int:
    """A transcript command: its flags become ``stage.Options``, ``stage.build`` makes the
    function of one document, and :func:`hermesctx.transcripts.transform_stream` runs it."""
    from hermesctx.exit import ExitStatus
    from hermesctx.transcripts import KeepGoing, transform_stream

    env = get_env()
    io = {key: params.pop(key, None) for key in _IO}
    mode = params.pop("keep_going", None)
    keep_going = KeepGoing(mode) if mode else None
    formats = format_kwargs(params)
    ctx = get_context(params.pop("config_path", None), reports=bool(io["report"]) or not env.quiet,
                      json_reports=bool(io["report"]))
    fn = stage.build(options_from(stage.Options, params), ctx)
    transform_stream(env, io["input"], fn, jsonl=io["jsonl"], pretty=bool(io["pretty"]),
                     report=io["report"], describe=stage.describe, in_place=bool(io["in_place"]),
                     backup=bool(io["backup"]), formats=formats, keep_going=keep_going)
    return ExitStatus.BAD_INPUT if keep_going and keep_going.failures else ExitStatus.OK


def past_failures(status: int, keep_going) -> int:
    """A command's exit status, 3 (bad input) when ``--keep-going`` went past a failure; the
    summary line of a batch of several FILEs read past failures, after the command's own last line."""
    from hermesctx.exit import ExitStatus

    if keep_going is not None and keep_going.several:
        keep_going.summary(get_env())

    return ExitStatus.BAD_INPUT if keep_going is not None and keep_going.failures else status


def input_documents(params: dict, *, keep_raw: bool = False):
    """``(env, documents, keep_going)`` for a command that reads transcripts without rewriting them
    (its input, format and ``--keep-going`` options taken out of ``params``; ``keep_going`` is None
    without the flag, else the :class:`~hermesctx.transcripts.KeepGoing` that counted the failures)."""
    from hermesctx.transcripts import KeepGoing, documents_past_failures

    env = get_env()
    path, jsonl = params.pop("input", "-"), params.pop("jsonl", None)
    keep_going = KeepGoing() if params.pop("keep_going", None) else None
    docs = documents_past_failures(env, path, jsonl, keep_going, keep_raw=keep_raw, **format_kwargs(params))
    return env, docs, keep_going
