"""Click options, made from the parameters declared once in :mod:`hermesctx.cli.params` (the
input/output bundles every command shares, a stage's ``Options``, a command's ``PARAMS``), from
which the fast parser (:mod:`hermesctx.cli.fast`) makes its table too.
"""

from __future__ import annotations

import click

# click-free, in hermesctx.cli.runner (the fast path runs commands without click); here for the commands
from hermesctx.cli import params
from hermesctx.cli.params import UNSET, Param
from hermesctx.cli.runner import format_kwargs, options_from  # noqa: F401

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def _stack(*decorators: Callable) -> Callable:
    def apply(fn: Callable) -> Callable:
        for decorator in reversed(decorators):
            fn = decorator(fn)
        return fn

    return apply


def _type(p: Param) -> Any:
    if p.kind == "choice":
        return click.Choice(p.choices)
    if p.kind == "int":
        return click.IntRange(min=p.low, max=p.high)
    if p.kind == "float":
        return (click.FloatRange(min=p.low, max=p.high, min_open=p.open_low)
                if p.low is not None or p.high is not None else float)
    if p.kind in ("path", "argument"):
        return click.Path(file_okay=p.file_okay, dir_okay=p.dir_okay, allow_dash=p.allow_dash)
    return None


def click_param(p: Param) -> Callable:
    """The click option (or argument) of one declared parameter."""
    kw: dict[str, Any] = {}
    if p.default != UNSET:
        kw["default"] = p.default
    if p.kind == "argument":
        return click.argument(p.dest, nargs=-1, metavar=p.metavar, type=_type(p), **kw)
    if p.kind == "flag":
        kw["is_flag"] = True
        if p.value is not True:
            kw["flag_value"] = p.value
    elif p.kind != "bool":
        kw["multiple"] = p.multiple
        if _type(p) is not None:
            kw["type"] = _type(p)
    if p.callback is not None:
        kw.update(expose_value=False, callback=_CALLBACKS[p.callback])
    if p.envvar:
        kw.update(envvar=p.envvar, show_envvar=p.show_envvar)
    decls = [*p.flags, *([p.dest] if p.dest else [])]
    return click.option(*decls, metavar=p.metavar, show_default=p.show_default, help=p.help or None,
                        hidden=p.hidden, **kw)


def click_params(params: tuple[Param, ...]) -> Callable:
    """The click options of ``params``, in their order (a decorator)."""
    return _stack(*(click_param(p) for p in params))


def _max_input(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    """``--max-input-size``: on the command line's environment (read when gzip input opens)."""
    if value is None:
        return
    from hermesctx.cli.runner import get_env
    from hermesctx.jsonio import parse_size

    size = parse_size(value)
    if size is None:
        raise click.BadParameter(f"{value!r} is not a size (bytes, or 512M, 4G)")
    get_env().max_input = size


def _set_lenient(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    from hermesctx.messages import set_lenient

    reset = set_lenient(bool(value))

    def restore() -> None:
        try:
            reset()
        except ValueError:  # closed from another context: nothing to restore there
            pass

    ctx.call_on_close(restore)


_CALLBACKS = {"max_input": _max_input, "lenient": _set_lenient}


# the bundles as click decorators, for a command that declares no PARAMS (run); the records are
# in hermesctx.cli.params
input_options = click_params(params.INPUT)
output_options = click_params(params.OUTPUT)
inplace_options = click_params(params.IN_PLACE)
keep_going_options = click_params(params.KEEP_GOING)
keep_going_files = click_params(params.KEEP_GOING_FILES)
report_options = click_params(params.REPORT)
config_options = click_params(params.CONFIG)
lenient_option = click_params((params.LENIENT,))
format_options = click_params(params.FORMAT)
target_options = click_params(params.TARGET)
transcript_options = click_params(params.TRANSCRIPT)
