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


@record
class Cmd:
    name: str
    path: str
    help: str
    short: str
    options: list[Opt]
    examples: list[str]
    subcommands: list[Cmd] = field(default_factory=list)


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


def _opts(command: click.Command, ctx: click.Context) -> list[Opt]:
    out = []
    for param in command.get_params(ctx):
        if not isinstance(param, click.Option) or param.hidden:
            continue
        choices = list(param.type.choices) if isinstance(param.type, click.Choice) else []
        out.append(Opt(flags=[*param.opts, *param.secondary_opts], help=(param.help or "").strip(),
                       metavar=None if param.is_flag else (param.metavar or param.type.name.upper()),
                       choices=choices, takes_value=not param.is_flag and not param.count,
                       is_path=isinstance(param.type, (click.Path, click.File))))
    return out


def tree(cli: click.Group | None = None) -> Cmd:
    if cli is None:
        from hermesctx.cli import cli as root

        cli = root

    def build(command: click.Command, name: str, path: str, parent: click.Context | None) -> Cmd:
        ctx = click.Context(command, info_name=name, parent=parent, **command.context_settings)
        help_text = command.help or ""
        node = Cmd(name=name, path=path, help=_description(help_text),
                   short=command.get_short_help_str(limit=80), options=_opts(command, ctx),
                   examples=_examples(help_text))
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
