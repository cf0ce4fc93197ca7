"""estimate for people: a table when the report goes to a terminal (JSON when piped or with
--format json), tokens left before the threshold and the window, and for a session log the usage
it recorded in the headline."""

from __future__ import annotations

import io
import json

from hermesctx.cli import run
from hermesctx.cli.runner import Env
from tests.conftest import FIXTURES, invoke

DOC = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hello " * 800}]
CLAUDE = str(FIXTURES / "formats" / "claude-code-session.jsonl")


def _run(args, *, stdout_tty=False, stderr_tty=False):
    out, err = io.BytesIO(), io.StringIO()
    env = Env(stdin=io.BytesIO(json.dumps(DOC).encode()), stdout=out, stderr=err, environ={},
              stdout_isatty=stdout_tty, stderr_isatty=stderr_tty)
    status = run(["estimate", "--context-length", "1000", *args], env)
    return status, out.getvalue().decode(), err.getvalue()


def test_a_terminal_gets_the_table_and_a_pipe_json():
    status, table, _ = _run([], stdout_tty=True)
    assert status == 0 and table.startswith("(no model): ") and "\nleft in window " in table
    status, piped, _ = _run([])
    assert json.loads(piped)["tokens_left"]
    assert json.loads(_run(["--format", "json"], stdout_tty=True)[1])["messages"] == 2
    assert _run(["--format", "table"])[1] == table


def test_tee_puts_the_table_on_stderr_when_stderr_is_a_terminal():
    status, out, err = _run(["--tee"], stderr_tty=True)
    assert json.loads(out) == DOC and err.startswith("(no model): ")
    assert json.loads(_run(["--tee"], stdout_tty=True)[2])["messages"] == 2


def test_tokens_left_before_threshold_and_window():
    report = invoke(["estimate", "--context-length", "10000"], DOC).json
    prompt = report["prompt_tokens"]
    assert report["tokens_left"] == {"threshold": report["budgets"]["threshold_tokens"] - prompt,
                                     "window": 10000 - prompt}
    over = invoke(["estimate", "--context-length", "1000", "--format", "table"], DOC).stdout.decode()
    left = 500 - json.loads(invoke(["estimate", "--context-length", "1000"], DOC).stdout)["prompt_tokens"]
    assert left < 0 and f"compresses at 500: over by {-left:,}\n" in over
    assert f"left to threshold  0 (over by {-left:,})\n" in over


def test_a_session_log_shows_its_recorded_usage_in_the_headline():
    table = invoke(["estimate", "--format", "table", "--model", "claude-sonnet-4-5", CLAUDE]).stdout.decode()
    first, second = table.splitlines()[:2]
    assert first.startswith("claude-sonnet-4-5: ") and "1% of a 200,000-token window" in first
    assert second.startswith("recorded by the log: 21,101 tokens (estimate ")
    assert second.endswith(f"11% of the window; {100_000 - 21_101:,} left before the threshold")


def test_several_transcripts_make_one_table_with_a_row_each_and_a_total():
    from tests.conftest import EXAMPLES

    files = [str(EXAMPLES / "coding-session.json"), str(EXAMPLES / "anthropic-session.json")]
    r = invoke(["estimate", "--format", "table", "--model", "claude-sonnet-4-5", "--sort", "tokens", *files])
    assert r.status == 0, r.stderr
    lines = r.stdout.decode().splitlines()
    assert lines[0].split() == ["file", "line", "model", "messages", "tokens", "pressure", "cost", "compress"]
    assert lines[1].startswith(files[0]) and lines[2].startswith(files[1])  # the larger first
    total = lines[-1].split()
    assert total[0] == "total" and total[1] == "31" and total[-3:] == ["0", "of", "2"]
    tokens = [int(x.split()[3].replace(",", "")) for x in lines[1:3]]  # (no line column: whole files)
    assert int(total[2].replace(",", "")) == sum(tokens)
    csv = invoke(["estimate", "--format", "csv", "--model", "claude-sonnet-4-5", *files]).stdout.decode().splitlines()
    assert csv[0] == "file,line,model,messages,tokens,pressure,cost_usd,compress" and csv[-1].startswith("total,")
    records = [json.loads(x) for x in invoke(["estimate", "--format", "jsonl", *files]).stdout.splitlines()]
    assert [rec["file"] for rec in records] == files  # the JSON names each record's file
