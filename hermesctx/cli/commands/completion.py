from __future__ import annotations

import click

from hermesctx.cli.runner import get_env
from hermesctx.exit import EXIT_STATUS_HELP


@click.command(epilog=EXIT_STATUS_HELP)
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
@click.option("--install", "folder", type=click.Path(file_okay=False), default=None,
              help="Write the script into DIR (created) under the name the shell looks for "
                   "(hermesctx, _hermesctx, hermesctx.fish) instead of printing it.")
def command(shell, folder):
    """Print the bash, zsh or fish completion script (static: no Python runs as you type).

    \b
    Examples:
        hermesctx completion bash --install ~/.local/share/bash-completion/completions
        hermesctx completion zsh --install ~/.zfunc   # then fpath=(~/.zfunc $fpath) in ~/.zshrc
        hermesctx completion fish --install ~/.config/fish/completions
    """
    from hermesctx import shipped

    env = get_env()
    if folder is None:
        env.stdout.write(shipped.completion_script(shell).encode("utf-8"))
    else:
        env.info(f"hermesctx: wrote {shipped.install_completion(shell, folder)}")
