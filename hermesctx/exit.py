"""Exit statuses shared by every command (documented once, printed in every --help epilog)."""

from __future__ import annotations


class ExitStatus:
    """The statuses, plain ints (an IntEnum would import enum: ~4 ms of every start)."""

    OK = 0
    CHECK_FAILED = 1  # a --check found problems (the status is the answer)
    USAGE = 2  # bad flags or arguments (click's own usage errors use 2 as well)
    BAD_INPUT = 3  # input is not JSON, or not a transcript of an accepted shape
    UPSTREAM = 4  # a provider (summarizer) failed and no fallback could stand in, or a plugin failed
    IO_ERROR = 5  # a file could not be read or written (spill dir, archive, report)
    INTERNAL = 70  # a bug in hermesctx (EX_SOFTWARE); rerun with --traceback and report it
    WORKER_DIED = 75  # a `run --jobs` worker was killed (OOM killer, kill -9); EX_TEMPFAIL: rerun
    INTERRUPTED = 130  # SIGINT (Ctrl-C)
    BROKEN_PIPE = 141  # stdout closed early (`| head`), 128 + SIGPIPE
    TERMINATED = 143  # SIGTERM, 128 + 15 (temp files removed, as on Ctrl-C)


# The one table of what each status means: the --help epilog, the man pages' EXIT STATUS and the
# README's table (checked by tests/cli/test_docs.py) are all made from it.
MEANINGS = (
    (ExitStatus.OK, "ok"),
    (ExitStatus.CHECK_FAILED, "a --check found problems (config check: an error)"),
    (ExitStatus.USAGE, "usage error: a bad flag, argument, value or config setting"),
    (ExitStatus.BAD_INPUT, "bad input: not JSON, not a transcript, or a file --keep-going went past"),
    (ExitStatus.UPSTREAM, "a provider (summarizer) or a plugin failed, with nothing to fall back on"),
    (ExitStatus.IO_ERROR, "a file could not be read or written"),
    (ExitStatus.INTERNAL, "internal error, a bug: rerun with --traceback and report it"),
    (ExitStatus.WORKER_DIED, "a run --jobs worker died (killed): rerun"),
    (ExitStatus.INTERRUPTED, "interrupted (Ctrl-C); no temp file left behind"),
    (ExitStatus.BROKEN_PIPE, "stdout closed early (a reader such as head went away)"),
    (ExitStatus.TERMINATED, "terminated (SIGTERM); no temp file left behind"),
)

EXIT_STATUS_HELP = "Exit status: " + "; ".join(f"{status} {meaning}" for status, meaning in MEANINGS) + "."


def markdown_table() -> str:
    """The README's table of exit statuses."""
    rows = [f"| {status} | {meaning} |" for status, meaning in MEANINGS]
    return "\n".join(["| status | meaning |", "|---|---|", *rows])
