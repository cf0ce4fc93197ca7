"""The console entry point. ``hermesctx [CMD ...] --help`` and ``--version`` are answered here
from text generated out of the click tree (``data/help.txt``, :mod:`hermesctx.tools.gen_help`),
without importing click, orjson, the commands or the stages; everything else goes on to
:func:`hermesctx.cli.main`, which runs the command lines its fast parser is sure of without
click (:mod:`hermesctx.cli.fast`) and the rest through click. Keep this module's imports to
``os`` and ``sys``."""

from __future__ import annotations

import os
import sys

HELP_FLAGS = ("--help", "-h")
_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "help.txt")


def _columns() -> int:
    """The terminal width as :func:`shutil.get_terminal_size` sees it (without importing shutil)."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def help_width() -> int:
    """click's help width for this process: min(columns, 100) - 2, at least 50."""
    return max(min(_columns(), 100) - 2, 50)


def quick_help(args: list[str]) -> str | None:
    """The help text click would print for ``args`` (command names then one help flag), or None
    when this is no such request or its text was not generated for this width."""
    if not args or args[-1] not in HELP_FLAGS or any(a.startswith("-") for a in args[:-1]):
        return None
    try:
        with open(_DATA, encoding="utf-8") as handle:
            data = handle.read()
    except (OSError, ValueError):
        return None
    head = f"\f{help_width()} {' '.join(args[:-1])}\n"
    start = data.find(head)
    if start < 0:
        return None
    start += len(head)
    end = data.find("\f", start)
    text = data[start:] if end < 0 else data[start:end]
    if args[-1] == "-h" and "-h, --help" not in text:
        return None  # a command whose own option took -h: click decides
    return text


def main() -> None:
    args = sys.argv[1:]
    if args == ["--version"]:
        from hermesctx import __version__

        sys.stdout.write(f"hermesctx, version {__version__}\n")
        return
    if not args:  # the usage on stderr, a usage error (2), as click says it
        text = quick_help(["--help"])
        if text is not None:
            sys.stderr.write(text)
            sys.exit(2)
    text = quick_help(args)
    if text is not None:
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(141)
        return
    from hermesctx.cli import main as cli_main

    cli_main()
