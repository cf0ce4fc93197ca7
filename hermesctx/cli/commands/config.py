from __future__ import annotations

import click

from hermesctx.cli.runner import get_context, get_env
from hermesctx.exit import EXIT_STATUS_HELP, ExitStatus


@click.group(epilog=EXIT_STATUS_HELP)
def command():
    """Show the effective settings, or check a config file.

    Settings come from flags > HERMESCTX_* environment variables > the config file >
    defaults. The config file is --config FILE, else $HERMESCTX_CONFIG, else ./hermesctx.yaml,
    else $XDG_CONFIG_HOME/hermesctx/config.yaml. Hermes's own config.yaml keys work unchanged.

    \b
    Examples:
        hermesctx config show
        hermesctx config show --config examples/hermes-config.yaml --format json
        hermesctx config check examples/hermesctx.yaml
    """


@command.command(epilog=EXIT_STATUS_HELP)
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
              envvar="HERMESCTX_CONFIG", help="Config file (default: found as described above).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--show-secrets", is_flag=True,
              help="Print API keys, tokens and URL passwords as they are (default: masked).")
def show(config_path, fmt, show_secrets):
    """Print every setting, its value and where it came from (secrets masked: API keys, tokens,
    passwords in URLs, credentials inside values; --show-secrets prints them), then the
    installed plugins (stages, summarizers, context engines) and the packages they come from.

    \b
    Examples:
        hermesctx config show
        HERMESCTX_COMPRESSION_THRESHOLD=0.6 hermesctx config show --format json
    """
    from hermesctx.config import render
    from hermesctx.plugins import listing

    ctx = get_context(config_path)
    ctx.env.stdout.write(render(ctx.settings, fmt, ctx.env.environ, show_secrets=show_secrets,
                                plugins=listing()))



@command.command(epilog=EXIT_STATUS_HELP)
@click.argument("file", type=click.Path(dir_okay=False))
def check(file):
    """Check a config file: unknown keys, wrong types, out-of-range values, the pipeline, and
    the plugins it names (context.engine, summarizer.name, pipeline stages): installed, loading,
    their options valid.

    Prints one line per problem; exits 1 if there is any.

    \b
    Examples:
        hermesctx config check examples/hermesctx.yaml
        hermesctx config check examples/hermes-config.yaml && echo ok
    """
    from hermesctx.pipeline import check_config

    env = get_env()
    problems = check_config(file)
    for problem in problems:
        env.stderr.write(problem + "\n")
    if problems:
        env.stderr.write(f"{len(problems)} problem{'s' * (len(problems) != 1)} in {file}\n")
        return ExitStatus.CHECK_FAILED
    env.stderr.write(f"{file}: ok\n")
    return ExitStatus.OK
