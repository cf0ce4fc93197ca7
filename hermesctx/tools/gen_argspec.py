"""Write ``hermesctx/cli/argspec.py``: each command's options as plain data, for the fast parser
(:mod:`hermesctx.cli.fast`) that runs the common command lines without importing click.
``python -m hermesctx.tools.gen_argspec [FILE]`` (``make help-data``); a test fails when the
file is stale, and another that the fast parser yields exactly the params click yields.

Only what the fast parser can reproduce exactly is written: a command with anything else (a
required argument, a parameter with a callback that takes a value, a type other than text,
path, int/float range and choice) is left out, so its command lines go to click. Per command:

* ``module``: its module under ``hermesctx.cli.commands``, whose ``body`` the click command calls;
* ``options``: flag -> ``(dest, "set", value)`` (a flag: dest takes value), ``(dest, "value",
  type, multiple)`` (takes the next argument, or ``--flag=value``) or ``(None, "click")`` (an
  option with a callback: given, the line goes to click);
* ``argument``: the one ``FILE...`` argument, ``(dest, type)``;
* ``defaults``: the params of the command given no arguments, as click computes them;
* ``envvars``: the environment variables click would read (set: the line goes to click).

Types: ``("text",)``, ``("choice", choices)``, ``("int", low, high)``, ``("float", low, high,
low_open, high_open)``, ``("path", file_okay, dir_okay, exists, readable, writable,
executable, allow_dash)``."""

from __future__ import annotations

import ast
import inspect
import os
import sys
import textwrap

import click

DEFAULT_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "cli", "argspec.py")


class Unsupported(Exception):
    pass


def _type(param: click.Parameter) -> tuple:
    t = param.type
    if isinstance(t, click.Choice):
        if not t.case_sensitive or not all(isinstance(c, str) for c in t.choices):
            raise Unsupported(param.name)
        return ("choice", tuple(t.choices))
    if isinstance(t, click.IntRange):
        if t.clamp or t.min_open or t.max_open:
            raise Unsupported(param.name)
        return ("int", t.min, t.max)
    if isinstance(t, click.FloatRange):
        if t.clamp:
            raise Unsupported(param.name)
        return ("float", t.min, t.max, t.min_open, t.max_open)
    if type(t) is click.types.FloatParamType:
        return ("float", None, None, False, False)
    if type(t) is click.types.IntParamType:
        return ("int", None, None)
    if type(t) is click.types.StringParamType:
        return ("text",)
    if isinstance(t, click.Path):
        if t.resolve_path or t.type is not None:
            raise Unsupported(param.name)
        return ("path", t.file_okay, t.dir_okay, t.exists, t.readable, t.writable, t.executable,
                t.allow_dash)
    raise Unsupported(f"{param.name}: {type(t).__name__}")


def _delegates(command: click.Command) -> bool:
    """Whether the click command's callback is ``return body(**params)`` and nothing else."""
    source = textwrap.dedent(inspect.getsource(command.callback))
    fn = ast.parse(source).body[0]
    stmts = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    return (len(stmts) == 1 and isinstance(stmts[0], ast.Return)
            and ast.unparse(stmts[0].value) == "body(**params)"
            and fn.args.kwarg is not None and not fn.args.args and not fn.args.kwonlyargs)


def command_spec(command: click.Command, name: str, module: str, parent: click.Context) -> dict:
    """The spec of one command (:class:`Unsupported` when the fast parser cannot parse it
    exactly as click does)."""
    if isinstance(command, click.Group) or not _delegates(command):
        raise Unsupported(name)
    settings = command.context_settings
    if set(settings) - {"help_option_names", "max_content_width"} or not command.allow_interspersed_args \
            or command.ignore_unknown_options or command.allow_extra_args:
        raise Unsupported(name)
    options: dict[str, tuple] = {}
    argument, envvars = None, []
    for param in command.params:
        if isinstance(param, click.Argument):
            if argument is not None or param.nargs != -1 or param.required or param.callback:
                raise Unsupported(param.name)
            argument = (param.name, _type(param))
            continue
        if not isinstance(param, click.Option) or param.count or param.nargs != 1 or param.prompt:
            raise Unsupported(param.name)
        if param.envvar:
            envvars += [param.envvar] if isinstance(param.envvar, str) else list(param.envvar)
        if param.callback is not None:
            if param.expose_value:
                raise Unsupported(param.name)
            for flag in (*param.opts, *param.secondary_opts):
                options[flag] = (None, "click")
            continue
        if param.is_flag:
            if param.multiple:
                raise Unsupported(param.name)
            if param.is_bool_flag:
                for flag in param.opts:
                    options[flag] = (param.name, "set", True)
                for flag in param.secondary_opts:
                    options[flag] = (param.name, "set", False)
            else:
                for flag in param.opts:
                    options[flag] = (param.name, "set", param.flag_value)
            continue
        if param.secondary_opts:
            raise Unsupported(param.name)
        for flag in param.opts:
            options[flag] = (param.name, "value", _type(param), param.multiple)
    for flag in options:  # short options exactly as `-x`; long ones as `--name`
        if not (flag.startswith("--") and len(flag) > 2) and not (len(flag) == 2 and flag[0] == "-"):
            raise Unsupported(flag)
    saved = {k: os.environ.pop(k) for k in envvars if k in os.environ}  # the defaults, not this shell's
    try:
        with command.make_context(name, [], parent=parent) as ctx:
            defaults = dict(ctx.params)
    finally:
        os.environ.update(saved)
    return {"module": module, "options": options, "argument": argument, "defaults": defaults,
            "envvars": tuple(envvars)}


def generate() -> str:
    from hermesctx.cli import COMMANDS
    from hermesctx.cli.group import cli

    root = click.Context(cli, info_name="hermesctx", **cli.context_settings)
    specs = {}
    for name, module in COMMANDS.items():
        try:
            specs[name] = command_spec(cli.get_command(root, name), name, module, root)
        except Unsupported:
            continue
    root_flags = {}
    for param in cli.params:
        if isinstance(param, click.Option) and param.is_flag and not param.is_eager and param.expose_value:
            for flag in param.opts:
                root_flags[flag] = param.name
    root_env = tuple(p.envvar for p in cli.params if isinstance(p, click.Option) and p.envvar)
    lines = ["COMMANDS = {"]
    for name, spec in specs.items():
        lines.append(f"    {name!r}: {{")
        for key, value in spec.items():
            if key == "options":
                lines.append("        'options': {")
                lines += [f"            {flag!r}: {how!r}," for flag, how in value.items()]
                lines.append("        },")
            else:
                lines.append(f"        {key!r}: {value!r},")
        lines.append("    },")
    lines.append("}")
    body = "\n".join(lines)
    return ("# Generated by `make help-data` (python -m hermesctx.tools.gen_argspec). Do not edit.\n"
            '"""The command lines :mod:`hermesctx.cli.fast` parses without click (see\n'
            ':mod:`hermesctx.tools.gen_argspec` for the format)."""\n\n'
            f"ROOT_FLAGS = {root_flags!r}\n"
            f"ROOT_ENVVARS = {root_env!r}\n"
            f"{body}\n")


def main(argv: list[str]) -> int:
    from hermesctx.tools import gen_help

    return gen_help.main(argv, generate, DEFAULT_PATH)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
