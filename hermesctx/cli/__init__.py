"""The ``hermesctx`` command line: a click group (:mod:`hermesctx.cli.group`) whose subcommands
load on first use, and the one error boundary both ways of running a command line share.

Each subcommand lives in ``hermesctx/cli/commands/<name>.py``: its options (generated from the
stage's ``Options`` where it has one) go to one core entry (:mod:`hermesctx.transcripts`,
:mod:`hermesctx.pipeline` or a stage's driver), which reads, runs and writes. A command line
the fast parser (:mod:`hermesctx.cli.fast`) is sure about runs the command's ``body`` with the
params click would give it, without importing click; anything else goes through click
(:func:`run`). This module imports no click until a command line needs it.

Errors are caught once here (:func:`guarded`): one line on stderr (``hermesctx: error: …``) and the documented exit status; the
traceback only with ``--traceback`` or ``HERMESCTX_TRACEBACK=1``.

Signals: SIGINT (Ctrl-C) and SIGTERM unwind the command the same way (every ``finally``
removes its temp files, ``--in-place`` leaves FILE untouched) and end with 130 / 143. A write
error that reaches here (stdout on a full disk) is exit 5, one line.
"""

from __future__ import annotations

import os
import signal
import sys

from hermesctx import registry
from hermesctx.errors import HermesctxError
from hermesctx.exit import ExitStatus

# name -> its module, in the order --help lists them (declared in hermesctx.registry)
COMMANDS = {entry.name: entry.value for entry in registry.entries(registry.COMMANDS)}


def _wants_traceback(args: list[str]) -> bool:
    flag = os.environ.get("HERMESCTX_TRACEBACK", "").lower() in ("1", "true", "yes")
    return flag or "--traceback" in args


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the process is, so it unwinds as Ctrl-C does (exit 143)."""


def _on_sigterm(signum, frame) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # once: the cleanup must not be cut short
    raise Terminated()


def __getattr__(name: str):
    """``cli`` (the click group) and its settings, imported on first use."""
    if name in ("cli", "LazyGroup", "CONTEXT_SETTINGS"):
        from hermesctx.cli import group

        return getattr(group, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    """Console entry point (after :func:`hermesctx.launch.main`)."""
    from hermesctx.cli import fast
    from hermesctx.context import Env

    signal.signal(signal.SIGTERM, _on_sigterm)
    args, env = hoist_quiet(sys.argv[1:]), Env.from_process()
    status = fast.run(args, env)  # None: a command line for click
    sys.exit(run(args, env) if status is None else status)


_QUIET = ("-q", "--quiet")


def hoist_quiet(args: list[str]) -> list[str]:
    """``-q`` / ``--quiet`` given after the subcommand (``hermesctx prune -q FILE``) moved before it,
    where the group takes it; a ``--`` ends the options, so a file named ``-q`` after it stays."""
    first = next((k for k, a in enumerate(args) if not a.startswith("-")), None)
    if first is None:
        return args
    end = args.index("--") if "--" in args[first:] else len(args)
    moved = [a for a in args[first + 1:end] if a in _QUIET]
    if not moved:
        return args
    rest = [a for a in args[first + 1:end] if a not in _QUIET]
    return [*args[:first], "--quiet", *args[first:first + 1], *rest, *args[end:]]


def run(args: list[str], env) -> int:
    """Run one command line against ``env`` through click; return the exit status (never raises)."""
    args = hoist_quiet(list(args))

    def through_click():
        from hermesctx.cli.group import cli

        # make_context + invoke rather than cli.main: click's main turns EPIPE into exit 1
        with cli.make_context("hermesctx", list(args), obj=env) as ctx:
            return cli.invoke(ctx)

    return guarded(args, env, through_click)


class _NeverRaised(Exception):
    pass


def _click(name: str) -> type[BaseException]:
    """click's exception ``name`` when click is loaded; else a class nothing raises (a command
    line run without click cannot raise click's exceptions, and need not import it to say so)."""
    click = sys.modules.get("click")
    if click is None:
        return _NeverRaised
    return getattr(click.exceptions, name, _NeverRaised)  # NoArgsIsHelpError: click >= 8.2


# Python frames the deepest input may need: the JSON readers take 1,024 levels of nesting
# (jsonio.READ_DEPTH), and a walk over a value may spend up to three frames a level.
_STACK = 4000


def guarded(args: list[str], env, call) -> int:
    """Run ``call()`` (a command line against ``env``) inside the error boundary; return the exit
    status (never raises). Both paths use it: click's (:func:`run`) and the fast one."""
    from hermesctx.cli.runner import NotFast, command_line

    if sys.getrecursionlimit() < _STACK:  # the readers take 1,024 levels: every walk must too
        sys.setrecursionlimit(_STACK)
    try:
        try:
            with command_line(env):
                result = call()
        except BaseException:
            _flush(env, quiet=True)
            raise
        _flush(env)  # the last buffered output: a full disk here is the command's failure
        return int(result) if isinstance(result, int) else ExitStatus.OK
    except _click("Exit") as exc:
        return exc.exit_code
    except _click("NoArgsIsHelpError") as exc:  # `hermesctx` alone: the help, as it is
        print(exc.format_message(), file=env.stderr)
        return ExitStatus.USAGE
    except _click("ClickException") as exc:
        message = exc.format_message()
        ctx = getattr(exc, "ctx", None)
        hint = f"; see `{ctx.command_path} --help`" if ctx is not None else ""
        print(f"hermesctx: error: {one_line(message)}{hint}", file=env.stderr)
        return ExitStatus.USAGE if exc.exit_code == 2 else exc.exit_code
    except _click("Abort"):
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
    except NotFast:  # the fast path's caller gives the command line to click
        raise
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
