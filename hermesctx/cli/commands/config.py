from __future__ import annotations

import click

from hermesctx import jsonio
from hermesctx.cli.runner import get_env
from hermesctx.config import KEYS, NO_ENV, SECRET_KEYS, check_file, env_name, find_config, load_settings
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
        hermesctx config show --config ~/.hermes/config.yaml --format json
        hermesctx config check hermesctx.yaml
    """


@command.command(epilog=EXIT_STATUS_HELP)
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
              envvar="HERMESCTX_CONFIG", help="Config file (default: found as described above).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--show-secrets", is_flag=True,
              help="Print API keys, tokens and URL passwords as they are (default: masked).")
def show(config_path, fmt, show_secrets):
    """Print every setting, its value and where it came from (secrets masked: API keys, tokens,
    passwords in URLs, credentials inside values; --show-secrets prints them).

    \b
    Examples:
        hermesctx config show
        HERMESCTX_COMPRESSION_THRESHOLD=0.6 hermesctx config show --format json
    """
    env = get_env()
    settings = load_settings(config_path, env=env.environ)
    values = {key: settings[key] if show_secrets else _masked(key, settings[key]) for key in KEYS}
    if fmt == "json":
        env.stdout.write(jsonio.dumps({"config": settings.path, "settings": {
            key: {"value": values[key], "source": settings.source(key), "env": None if key in NO_ENV else env_name(key)}
            for key in KEYS}},
            pretty=True))
        return
    lines = [f"# config file: {settings.path or find_config(None, env.environ) or '(none)'}"]
    width = max(map(len, KEYS))
    for key in KEYS:
        value = values[key]
        shown = "null" if value is None else jsonio.dumps(value).decode().strip() if not isinstance(value, str) else value
        lines.append(f"{key:<{width}}  {shown}  ({settings.source(key)})")
    env.stdout.write(("\n".join(lines) + "\n").encode())


def _masked(key: str, value):
    """A setting as ``config show`` prints it: a key that is a secret masked whole, any other
    value with its secrets masked (a token in a URL, a password in ``extra_body``), whatever
    ``redaction.enabled`` says."""
    from hermesctx.redact import mask, redact, redact_value

    if key in SECRET_KEYS and value:
        return mask(value) if isinstance(value, str) else "***"
    return redact(value, force=True) if isinstance(value, str) else redact_value(value, on=True)


@command.command(epilog=EXIT_STATUS_HELP)
@click.argument("file", type=click.Path(dir_okay=False))
def check(file):
    """Check a config file: unknown keys, wrong types, out-of-range values, the pipeline.

    Prints one line per problem; exits 1 if there is any.

    \b
    Examples:
        hermesctx config check hermesctx.yaml
        hermesctx config check ~/.hermes/config.yaml && echo ok
    """
    from hermesctx.cli.pipeline import validate
    from hermesctx.config import flatten, read_config_file

    env = get_env()
    problems = check_file(file)
    if not problems or not problems[0].startswith(("config ", "cannot ")):
        pipeline = flatten(read_config_file(file))[0].get("pipeline")
        if isinstance(pipeline, list) and pipeline:
            problems += validate(pipeline, file)
    for problem in problems:
        text = problem if problem.startswith(("config ", "cannot ")) else f"{file}: {problem}"
        env.stderr.write(text + "\n")
    if problems:
        env.stderr.write(f"{len(problems)} problem{'s' * (len(problems) != 1)} in {file}\n")
        return ExitStatus.CHECK_FAILED
    env.stderr.write(f"{file}: ok\n")
    return ExitStatus.OK
