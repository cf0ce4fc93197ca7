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


EXIT_STATUS_HELP = (
    "Exit status: 0 ok; 1 a --check found problems; 2 usage error; 3 bad input; "
    "4 provider or plugin failure; 5 file I/O error; 70 internal error; 75 a --jobs worker died; "
    "130 interrupted; 141 stdout closed; 143 terminated (SIGTERM)."
)
