"""The fast path: a command line parsed without click, from the spec generated out of the click
tree (:mod:`hermesctx.cli.argspec`, :mod:`hermesctx.tools.gen_argspec`), then the command's
``body`` run with exactly the params click would give it, inside the same error boundary
(:func:`hermesctx.cli.guarded`). Importing click costs more than a bare interpreter start; a
tiny ``hermesctx prune FILE`` should not pay it.

The parser answers only what it is sure of: anything else (an option it does not know, a value
it would have to judge, ``--help``, a usage error, a command missing from the spec, an
environment variable click would read) returns None, and the line goes to click unchanged, so
every error message and exit status stays click's. No click in this module."""

from __future__ import annotations

import os
import stat
from importlib import import_module

# what the parser cannot decide: it gives the command line to click
_NOT_SURE = object()


def _path(value: str, how: tuple) -> object:
    _, file_okay, dir_okay, exists, readable, writable, executable, allow_dash = how
    if allow_dash and file_okay and value == "-":
        return value
    if not value:
        return _NOT_SURE
    try:
        st = os.stat(value)
    except OSError:
        return _NOT_SURE if exists else value
    if (stat.S_ISDIR(st.st_mode) and not dir_okay) or (not stat.S_ISDIR(st.st_mode) and not file_okay):
        return _NOT_SURE
    modes = (readable and os.R_OK) | (writable and os.W_OK) | (executable and os.X_OK)
    if modes and not os.access(value, modes):
        return _NOT_SURE
    return value


def _number(value: str, how: tuple) -> object:
    kind, low, high = how[:3]
    low_open, high_open = how[3:5] if kind == "float" else (False, False)
    try:
        number = int(value) if kind == "int" else float(value)
    except ValueError:
        return _NOT_SURE
    if number != number or number in (float("inf"), float("-inf")):
        return _NOT_SURE  # nan and infinities: click's range rules decide
    if low is not None and (number < low or (low_open and number == low)):
        return _NOT_SURE
    if high is not None and (number > high or (high_open and number == high)):
        return _NOT_SURE
    return number


def convert(value: str, how: tuple) -> object:
    """``value`` as click's type ``how`` converts it, or ``_NOT_SURE``."""
    kind = how[0]
    if kind == "text":
        return value
    if kind == "choice":
        return value if value in how[1] else _NOT_SURE
    if kind in ("int", "float"):
        return _number(value, how)
    if kind == "path":
        return _path(value, how)
    return _NOT_SURE


def parse(args: list[str], environ) -> tuple[str, dict, bool] | None:
    """``(module, params, quiet)`` of a command line, or None when click should parse it."""
    from hermesctx.cli import argspec

    if any(name in environ for name in argspec.ROOT_ENVVARS) or "_HERMESCTX_COMPLETE" in environ:
        return None
    quiet, i = False, 0
    while i < len(args) and args[i] in argspec.ROOT_FLAGS:
        quiet = quiet or argspec.ROOT_FLAGS[args[i]] == "quiet"
        i += 1
    if i == len(args):
        return None
    spec = argspec.COMMANDS.get(args[i])
    if spec is None or any(name in environ for name in spec["envvars"]):
        return None
    options, (arg_name, arg_type) = spec["options"], spec["argument"]
    given: dict = {}
    files: list[str] = []
    rest = args[i + 1:]
    j = 0
    while j < len(rest):
        token = rest[j]
        j += 1
        if token == "-" or not token.startswith("-"):
            value = convert(token, arg_type)
            if value is _NOT_SURE:
                return None
            files.append(value)
            continue
        flag, eq, attached = token.partition("=") if token.startswith("--") else (token, "", "")
        how = options.get(flag)
        if how is None or how[1] == "click":
            return None
        dest = how[0]
        if how[1] == "set":
            if eq:
                return None  # a flag given a value: click's error
            given[dest] = how[2]
            continue
        if eq:
            raw = attached
        elif j < len(rest):
            raw = rest[j]
            j += 1
        else:
            return None  # the value is missing: click's error
        if not raw or (raw.startswith("-") and raw != "-"):
            return None  # an option's value that looks like an option (or none): click decides
        value = convert(raw, how[2])
        if value is _NOT_SURE:
            return None
        if how[3]:  # multiple
            given[dest] = (*given.get(dest, ()), value)
        else:
            given[dest] = value
    params = dict(spec["defaults"])
    params.update(given)
    params[arg_name] = tuple(files)
    return spec["module"], params, quiet


def run(args: list[str], env) -> int | None:
    """Run the command line on the fast path; None when it must go through click."""
    parsed = parse(args, env.environ)
    if parsed is None:
        return None
    module_name, params, quiet = parsed
    from hermesctx.cli import guarded
    from hermesctx.cli.runner import NotFast

    def call():
        env.quiet = env.quiet or quiet  # what the group's own --quiet does
        return import_module(f"hermesctx.cli.commands.{module_name}").body(**params)

    try:
        return guarded(args, env, call)
    except NotFast:
        return None
