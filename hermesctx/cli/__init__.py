"""The ``hermesctx`` command line: a click group whose subcommands load on first use.

Each subcommand lives in ``hermesctx/cli/commands/<name>.py`` as a function named ``command``:
its options (generated from the stage's ``Options`` where it has one) go to one core entry
(:mod:`hermesctx.transcripts`, :mod:`hermesctx.pipeline` or a stage's driver), which reads,
runs and writes. Errors are caught once
here: one line on stderr (``hermesctx: error: …``) and the documented exit status; the
traceback only with ``--traceback`` or ``HERMESCTX_TRACEBACK=1``.

Signals: SIGINT (Ctrl-C) and SIGTERM unwind the command the same way (every ``finally``
removes its temp files, ``--in-place`` leaves FILE untouched) and end with 130 / 143. A write
error that reaches here (stdout on a full disk) is exit 5, one line.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys

import click

from hermesctx import __version__
from hermesctx.errors import HermesctxError
from hermesctx.exit import EXIT_STATUS_HELP, ExitStatus

# name -> module under hermesctx.cli.commands, in the order --help lists them
COMMANDS = {
    "estimate": "estimate",
    "prune": "prune",
    "sanitize": "sanitize",
    "validate": "validate",
    "compress": "compress",
    "cache-mark": "cache_mark",
    "normalize-usage": "normalize_usage",
    "spill": "spill",
    "trajectory": "trajectory",
    "convert": "convert",
    "run": "run",
    "recall": "recall",
    "config": "config",
    "mcp": "mcp",
    "completion": "completion",
    "man": "man",
}


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
        return importlib.import_module(f"hermesctx.cli.commands.{module_name}").command


_NO_ARGS = getattr(click.exceptions, "NoArgsIsHelpError", ())  # click >= 8.2

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


@click.group(cls=LazyGroup, context_settings=CONTEXT_SETTINGS, epilog=EXIT_STATUS_HELP)
@click.version_option(__version__, "--version", prog_name="hermesctx")
@click.option("--traceback", is_flag=True, envvar="HERMESCTX_TRACEBACK",
              help="Show the full traceback of an error (debugging).")
@click.option("--quiet", "-q", is_flag=True, help="No warnings or reports on stderr.")
@click.pass_context
def cli(ctx: click.Context, traceback: bool, quiet: bool) -> None:
    """Keep LLM agent conversations inside their token budgets.

    Every command reads a transcript (a JSON array of messages, a request body, or JSON Lines
    of either) from FILE or stdin and writes JSON to stdout, so they chain with pipes:

    \b
        hermesctx sanitize session.json | hermesctx compress | hermesctx cache-mark
    """
    from hermesctx.cli.runner import get_env

    env = get_env()
    env.quiet = env.quiet or quiet


def _wants_traceback(args: list[str]) -> bool:
    flag = os.environ.get("HERMESCTX_TRACEBACK", "").lower() in ("1", "true", "yes")
    return flag or "--traceback" in args


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the process is, so it unwinds as Ctrl-C does (exit 143)."""


def _on_sigterm(signum, frame) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: the cleanup must not be cut short
    raise Terminated()


def main() -> None:
    """Console entry point."""
    from hermesctx.context import Env

    signal.signal(signal.SIGTERM, _on_sigterm)
    sys.exit(run(sys.argv[1:], Env.from_process()))


def run(args: list[str], env) -> int:
    """Run one command line against ``env``; return the exit status (never raises)."""
    try:
        try:
            # make_context + invoke rather than cli.main: click's main turns EPIPE into exit 1
            with cli.make_context("hermesctx", list(args), obj=env) as ctx:
                result = cli.invoke(ctx)
        except BaseException:
            _flush(env, quiet=True)
            raise
        _flush(env)  # the last buffered output: a full disk here is the command's failure
        return int(result) if isinstance(result, int) else ExitStatus.OK
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except _NO_ARGS as exc:  # `hermesctx` alone: the help, as it is
        print(exc.format_message(), file=env.stderr)
        return ExitStatus.USAGE
    except click.ClickException as exc:
        message = exc.format_message()
        ctx = getattr(exc, "ctx", None)
        hint = f"; see `{ctx.command_path} --help`" if ctx is not None else ""
        print(f"hermesctx: error: {one_line(message)}{hint}", file=env.stderr)
        return ExitStatus.USAGE if exc.exit_code == 2 else exc.exit_code
    except click.exceptions.Abort:
        print("hermesctx: interrupted", file=env.stderr)
        return ExitStatus.INTERRUPTED
    except Terminated:
        print("hermesctx: terminated", file=env.stderr)
        return ExitStatus.TERMINATED
    except HermesctxError as exc:
        if _wants_traceback(args):
            _print_traceback(env)
        print(f"hermesctx: error: {one_line(str(exc))}", file=env.stderr)
        return exc.status
    except KeyboardInterrupt:
        print("hermesctx: interrupted", file=env.stderr)
        return ExitStatus.INTERRUPTED
    except BrokenPipeError:
        _silence_stdout()
        return ExitStatus.BROKEN_PIPE
    except OSError as exc:  # a write the command did not wrap itself: stdout, most often
        if _wants_traceback(args):
            _print_traceback(env)
        where = f" {exc.filename}" if exc.filename else " output"
        print(f"hermesctx: error: {one_line(f'cannot write{where}: {exc.strerror or exc}')}", file=env.stderr)
        if not _flush(env, quiet=True):
            _silence_stdout()
        return ExitStatus.IO_ERROR
    except Exception as exc:  # a bug: still one line, unless asked for the trace
        if _wants_traceback(args):
            _print_traceback(env)
        print(f"hermesctx: error: internal error: {type(exc).__name__}: {one_line(str(exc))}; "
              "rerun with --traceback and report it", file=env.stderr)
        return ExitStatus.INTERNAL


def _print_traceback(env) -> None:
    import traceback  # only on --traceback: its imports cost every start ~8 ms

    traceback.print_exc(file=env.stderr)


def _flush(env, *, quiet: bool = False) -> bool:
    """Flush stdout; EPIPE always propagates, other errors only when not ``quiet``."""
    try:
        env.stdout.flush()
    except BrokenPipeError:
        raise
    except ValueError:  # closed
        return True
    except OSError:
        if not quiet:
            raise
        return False
    return True


def one_line(text: str, limit: int = 1000) -> str:
    """Error text as one printable line: secrets redacted (a path or a provider's answer can
    hold a key), control characters escaped, length capped (the input can put anything into
    a message, e.g. a key with a newline or a 10 KB id)."""
    from hermesctx.redact import redact

    text = redact(text)
    if not text.isprintable():
        text = "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _silence_stdout() -> None:
    """After EPIPE, point fd 1 at /dev/null so the interpreter's final flush stays quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
