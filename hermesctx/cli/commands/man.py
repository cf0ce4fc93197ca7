from __future__ import annotations

import click

from hermesctx.cli.runner import get_env
from hermesctx.exit import EXIT_STATUS_HELP


@click.command(epilog=EXIT_STATUS_HELP)
@click.argument("name", metavar="[COMMAND]", required=False)
@click.option("--install", "folder", type=click.Path(file_okay=False), default=None,
              help="Write every page into DIR/man1 (created; DIR itself when it is a man1), e.g. "
                   "~/.local/share/man, instead of printing one.")
def command(name, folder):
    """Print the man page of hermesctx or of COMMAND (roff), or install them all.

    \b
    Examples:
        hermesctx man estimate | man -l -
        hermesctx man --install ~/.local/share/man   # then: man hermesctx-estimate
    """
    from hermesctx import shipped

    env = get_env()
    if folder is None:
        env.stdout.write(shipped.man_page(name).encode("utf-8"))
        return
    written = shipped.install_man(folder)
    env.info(f"hermesctx: wrote {len(written)} man pages into {written[0].rsplit('/', 1)[0]}")
