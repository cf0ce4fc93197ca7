"""The click group of ``hermesctx``: subcommands load on first use (their modules are named in
:data:`hermesctx.cli.COMMANDS`). Imported only when a command line goes through click (see
:func:`hermesctx.cli.run`)."""

from __future__ import annotations

import importlib

import click

from hermesctx import __version__
from hermesctx.cli import COMMANDS
from hermesctx.cli.options import click_params
from hermesctx.cli.params import ROOT
from hermesctx.exit import EXIT_STATUS_HELP


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return [name for name in COMMANDS if self._find(name) is not None]

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        return self._find(name)

    @staticmethod
    def _find(name: str) -> click.Command | None:
        module_name = COMMANDS.get(name)
        if module_name is None:
            return None
        # a command module whose ``body`` runs without click makes ``command`` on first use
        # (:func:`hermesctx.cli.runner.click_command`)
        return importlib.import_module(module_name).command


CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


@click.group(cls=LazyGroup, context_settings=CONTEXT_SETTINGS, epilog=EXIT_STATUS_HELP)
@click.version_option(__version__, "--version", prog_name="hermesctx")
@click_params(ROOT)
@click.pass_context
def cli(ctx: click.Context, traceback: bool, quiet: bool) -> None:
    """Keep LLM agent conversations inside their token budgets.

    Every command reads a transcript (a JSON array of messages, a request body, or JSON Lines
    of either) from FILE or stdin and writes JSON to stdout, so they chain with pipes:

    \b
        hermesctx sanitize examples/coding-session.json | hermesctx compress | hermesctx cache-mark
    """
    from hermesctx.cli.runner import get_env

    env = get_env()
    env.quiet = env.quiet or quiet
