"""The command tree as plain data, for the completion and man page generators."""

from __future__ import annotations

import os
import re

import click

from hermesctx.record import field, record


@record
class Opt:
    flags: list[str]
    help: str
    metavar: str | None
    choices: list[str] = field(default_factory=list)
    takes_value: bool = True
    is_path: bool = False
    is_dir: bool = False
    plugins: str | None = None  # also the names of the installed plugins of this kind


@record
class Cmd:
    name: str
    path: str
    help: str
    short: str
    options: list[Opt]
    examples: list[str]
    subcommands: list[Cmd] = field(default_factory=list)
    files: bool = False  # the positional arguments are FILEs
    values: list[str] = field(default_factory=list)  # else the values of the first positional argument


def _examples(text: str) -> list[str]:
    lines = text.splitlines()
    out, inside = [], False
    for line in lines:
        if line.strip() == "Examples:":
            inside = True
            continue
        if inside:
            if not line.strip():
                if out:
                    break
                continue
            out.append(line.strip())
    return out


def _description(text: str) -> str:
    text = text.split("\b")[0]
    return re.sub(r"\n\s*\n", "\n\n", text).strip()


def _values() -> dict[str, tuple[tuple[str, ...], str | None]]:
    """The values of the options that are not a click.Choice (their stage checks them): long flag ->
    (the built-in values, the kind of plugin whose installed names are values too)."""
    from hermesctx.plugins import GROUPS, SUMMARIZERS
    from hermesctx.stages.cache_mark import TTLS
    from hermesctx.summary import NAMES

    return {"--ttl": (TTLS, None), "--summarizer": (NAMES, GROUPS[SUMMARIZERS])}


def _opts(command: click.Command, ctx: click.Context) -> list[Opt]:
    out, values = [], _values()
    for param in command.get_params(ctx):
        if not isinstance(param, click.Option) or param.hidden:
            continue
        choices, plugins = list(param.type.choices) if isinstance(param.type, click.Choice) else [], None
        if not choices and not param.is_flag:
            known, plugins = values.get(param.opts[0], ((), None))
            choices = list(known)
        metavar = None if param.is_flag else (param.metavar or param.type.name.upper())
        named = re.match(r"(PATH|FILE|DIR|DIRECTORY)\b", metavar or "")  # a path as a plain string
        out.append(Opt(flags=[*param.opts, *param.secondary_opts], help=(param.help or "").strip(),
                       metavar=metavar, choices=choices, takes_value=not param.is_flag and not param.count,
                       is_path=isinstance(param.type, (click.Path, click.File)) or bool(named),
                       is_dir=(isinstance(param.type, click.Path) and not param.type.file_okay)
                       or (named is not None and named[1].startswith("DIR")),
                       plugins=plugins))
    return out


def _positional(command: click.Command, ctx: click.Context, path: str, commands: list[str]) -> tuple[bool, list[str]]:
    """Whether the positional arguments are FILEs, else the values of the first: a Choice's, or
    the command names for an argument that names a command (``man NAME``)."""
    for param in command.get_params(ctx):
        if isinstance(param, click.Argument):
            if isinstance(param.type, (click.Path, click.File)):
                return True, []
            if isinstance(param.type, click.Choice):
                return False, list(param.type.choices)
            return False, commands if path == "hermesctx man" else []
    return False, []


def tree(cli: click.Group | None = None) -> Cmd:
    if cli is None:
        from hermesctx.cli import cli as root

        cli = root
    commands = cli.list_commands(click.Context(cli, info_name="hermesctx"))

    def build(command: click.Command, name: str, path: str, parent: click.Context | None) -> Cmd:
        ctx = click.Context(command, info_name=name, parent=parent, **command.context_settings)
        help_text = command.help or ""
        node = Cmd(name=name, path=path, help=_description(help_text),
                   short=command.get_short_help_str(limit=80), options=_opts(command, ctx),
                   examples=_examples(help_text))
        node.files, node.values = _positional(command, ctx, path, commands)
        if isinstance(command, click.Group):
            for sub in command.list_commands(ctx):
                node.subcommands.append(build(command.get_command(ctx, sub), sub, f"{path} {sub}", ctx))
        return node

    return build(cli, "hermesctx", "hermesctx", None)


def write_files(files: dict[str, str], out: str) -> int:
    """Write generated ``files`` (name -> text) into directory ``out``; exit status 0."""
    os.makedirs(out, exist_ok=True)
    for name, text in files.items():
        with open(os.path.join(out, name), "w", encoding="utf-8") as handle:
            handle.write(text)
    return 0
