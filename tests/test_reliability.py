"""Faults run for real (issue 16): concurrent spill writers, planted symlinks, a worker killed
with SIGKILL, a trickling provider, SIGTERM mid-write, full disks. Every test is bounded in
time (subprocesses get a timeout) and prints its figures (tried / held / lost) with ``-s``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _cli(*args, stdin=None, env=None, timeout=30, **kwargs):
    """``python -m hermesctx ARGS`` as a real process."""
    return subprocess.run([sys.executable, "-m", "hermesctx", *args], input=stdin, capture_output=True,
                          timeout=timeout, cwd=ROOT, env={**os.environ, **(env or {})}, **kwargs)


def _popen(*args, env=None, **kwargs):
    return subprocess.Popen([sys.executable, "-m", "hermesctx", *args], cwd=ROOT,
                            env={**os.environ, **(env or {})}, **kwargs)


def _figures(name, tried, held, lost):
    print(f"\n{name}: tried {tried}, held {held}, lost {lost}")


# --- spill: concurrent writers on one directory ----------------------------------------------

def _spill_batch(seed: str, lines: int) -> bytes:
    """JSON Lines whose call ids repeat across lines (call_0, and null ids -> tool_result.txt),
    two names for all lines, each result distinct (so every spill of a shared name replaces another's file)."""
    out = []
    for n in range(lines):
        cid = None if n % 2 else "call_0"
        text = f"{seed} line {n}\n" + "".join(f"{seed}-{n}-{k} output row\n" for k in range(40))
        out.append({"messages": [{"role": "user", "content": "go"},
                                 {"role": "assistant", "content": None, "tool_calls": [
                                     {"id": cid, "type": "function", "function": {"name": "terminal", "arguments": "{}"}}]},
                                 {"role": "tool", "tool_call_id": cid, "content": text}]})
    return b"".join(json.dumps(d, separators=(",", ":")).encode() + b"\n" for d in out)


def _restored(directory, spilled: bytes, original: bytes) -> tuple[int, int]:
    """``(held, lost)``: lines that restore to the original, and those that do not."""
    back = _cli("-q", "spill", "--restore", "--dir", directory, stdin=spilled)
    assert back.returncode == 0, back.stderr
    got, want = back.stdout.splitlines(), original.splitlines()
    assert len(got) == len(want)
    held = sum(g == w for g, w in zip(got, want))
    return held, len(want) - held


def test_two_spill_processes_on_one_directory_lose_nothing(tmp_path):
    directory = str(tmp_path / "spill")
    batches = [_spill_batch(seed, 500) for seed in ("alpha", "beta")]
    procs = [_popen("-q", "spill", "--dir", directory, "--threshold", "200", "--jsonl",
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in batches]
    outs = [p.communicate(b, timeout=60) for p, b in zip(procs, batches)]
    assert [p.returncode for p in procs] == [0, 0], [o[1] for o in outs]
    held = lost = 0
    for (out, _), batch in zip(outs, batches):
        assert out.count(b"<persisted-output>") == 500
        h, k = _restored(directory, out, batch)
        held, lost = held + h, lost + k
    _figures("two spill processes, one dir", 1000, held, lost)
    assert lost == 0
    assert not [n for n in os.listdir(directory) if n.endswith(".tmp")]


def test_run_jobs_2_with_a_spill_stage_loses_nothing(tmp_path):
    directory = tmp_path / "spill"
    config = tmp_path / "cfg.yaml"
    config.write_text(json.dumps({"pipeline": [{"spill": {"dir": str(directory), "threshold": ["200"]}}]}))
    batch = _spill_batch("gamma", 1000)
    result = _cli("-q", "run", "--config", str(config), "--jobs", "2", "--jsonl", stdin=batch, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count(b"<persisted-output>") == 1000
    held, lost = _restored(str(directory), result.stdout, batch)
    _figures("run --jobs 2, spill stage", 1000, held, lost)
    assert lost == 0


# --- spill: planted symlinks, forged blocks, the private default directory -------------------

def _big(cid, text):
    return {"messages": [{"role": "tool", "tool_call_id": cid, "content": text}]}


def test_planted_symlink_file_is_refused(tmp_path):
    directory = tmp_path / "spill"
    directory.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET")
    (directory / "call_01.txt").symlink_to(secret)
    result = _cli("spill", "--dir", str(directory), "--threshold", "10", stdin=json.dumps(_big("call_01", "x" * 50)).encode())
    assert result.returncode == 5 and result.stdout == b""
    assert result.stderr.decode().strip().endswith(f"refusing to follow the symlink {directory}/call_01.txt "
                                                   "in the spill directory")
    assert secret.read_text() == "TOP SECRET" and not (directory / ".replaced").exists()


def test_planted_replaced_symlink_is_refused(tmp_path):
    directory = tmp_path / "spill"
    outside = tmp_path / "outside"
    outside.mkdir()
    directory.mkdir()
    (directory / ".replaced").symlink_to(outside)
    first = _cli("-q", "spill", "--dir", str(directory), "--threshold", "10", stdin=json.dumps(_big("c", "a" * 50)).encode())
    assert first.returncode == 0
    second = _cli("spill", "--dir", str(directory), "--threshold", "10", stdin=json.dumps(_big("c", "b" * 50)).encode())
    assert second.returncode == 5 and b"refusing to follow the symlink" in second.stderr
    assert os.listdir(outside) == []
    assert (directory / "c.txt").read_text() == "a" * 50  # nothing replaced: the old content is safe


def test_planted_index_symlink_is_refused(tmp_path):
    directory = tmp_path / "spill"
    directory.mkdir()
    target = tmp_path / "target"
    target.write_text("")
    (directory / ".index").symlink_to(target)
    result = _cli("spill", "--dir", str(directory), "--threshold", "10", stdin=json.dumps(_big("c", "a" * 50)).encode())
    assert result.returncode == 5 and b"refusing to follow the symlink" in result.stderr
    assert target.read_text() == ""


def test_forged_block_pulls_in_no_other_file(tmp_path):
    """A transcript naming another session's spill file with the right size and preview gets
    nothing: the block was never recorded in the index."""
    from hermesctx.stages.spill import persisted_block

    directory = tmp_path / "spill"
    victim = _cli("-q", "spill", "--dir", str(directory), "--threshold", "10",
                  stdin=json.dumps(_big("c", "private data " * 10)).encode())
    assert victim.returncode == 0
    forged = persisted_block("private data " * 10, f"{directory}/c.txt", 5)  # another preview size
    result = _cli("spill", "--restore", "--dir", str(directory),
                  stdin=json.dumps({"messages": [{"role": "tool", "tool_call_id": "x", "content": forged}]}).encode())
    assert result.returncode == 0 and b"private data private" not in result.stdout
    assert b"1 file missing" in result.stderr


def test_default_directory_is_private_per_user(tmp_path):
    result = _cli("-q", "spill", "--threshold", "10", stdin=json.dumps(_big("c", "a" * 50)).encode(),
                  env={"TMPDIR": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    directory = tmp_path / f"hermes-results-{os.getuid()}"
    assert f"Full output saved to: {directory}/c.txt".encode() in result.stdout
    assert os.stat(directory).st_mode & 0o777 == 0o700
    back = _cli("-q", "spill", "--restore", stdin=result.stdout, env={"TMPDIR": str(tmp_path)})
    assert json.loads(back.stdout) == _big("c", "a" * 50)


def test_default_directory_planted_as_symlink_is_refused(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / f"hermes-results-{os.getuid()}").symlink_to(elsewhere)
    result = _cli("spill", "--threshold", "10", stdin=json.dumps(_big("c", "a" * 50)).encode(),
                  env={"TMPDIR": str(tmp_path)})
    assert result.returncode == 5 and b"refusing spill directory" in result.stderr
    assert os.listdir(elsewhere) == []


# --- run --jobs: a worker killed with SIGKILL --------------------------------------------------

def _dies_on(marked):
    def run(item):
        if item == marked:
            os.kill(os.getpid(), signal.SIGKILL)
        return item * 2
    return run


def test_ordered_map_reports_the_item_a_killed_worker_held():
    from hermesctx.parallel import WorkerDied, ordered_map

    got = []
    start = time.monotonic()
    with pytest.raises(WorkerDied) as err:
        for value in ordered_map(_dies_on, (7,), range(40), jobs=2, label=lambda i: f"line {i + 1}"):
            got.append(value)
    assert time.monotonic() - start < 10
    assert err.value.held == ["line 8"]
    assert "killed by SIGKILL" in str(err.value) and "while it held line 8" in str(err.value)
    assert got == [i * 2 for i in range(7)]  # in order, up to the line before; nothing after


def _batch(lines: int) -> bytes:
    doc = {"messages": [{"role": "user", "content": "hello " * 20}, {"role": "assistant", "content": "hi"}]}
    return (json.dumps(doc) + "\n").encode() * lines


def _children(pid: int) -> list[int]:
    out = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/children") as handle:
            out += [int(c) for c in handle.read().split()]
    return out


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="needs /proc to find the workers")
def test_run_jobs_exits_75_when_a_worker_is_killed():
    """kill -9 of one `run --jobs 2` worker mid-batch: exit 75 within seconds, the line it held
    named, the lines before it written in order, no hang."""
    proc = _popen("run", "--pipeline", "prune", "--jobs", "2", "--jsonl",
                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdin.write(_batch(20))
    proc.stdin.flush()
    first = proc.stdout.readline()  # the workers are up and answering
    assert first.startswith(b"{")
    deadline = time.monotonic() + 10
    while len(_children(proc.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    victim = _children(proc.pid)[0]
    os.kill(victim, signal.SIGKILL)
    start = time.monotonic()
    try:
        proc.stdin.write(_batch(200))
        proc.stdin.close()
    except BrokenPipeError:  # it already stopped reading: fine
        pass
    proc.stdin = None
    rest, err = proc.communicate(timeout=10)
    assert time.monotonic() - start < 10
    assert proc.returncode == 75, err
    message = err.decode().strip().splitlines()[-1]
    assert message.startswith(f"hermesctx: error: a --jobs worker (pid {victim}) killed by SIGKILL"), message
    assert "while it held line" in message
    written = 1 + len(rest.splitlines())
    assert written < 220
    _figures("run --jobs 2, one worker killed", 1, 1, 0)


# --- the summarizer: a trickling server, a circuit breaker across a batch --------------------

_TRANSCRIPT = [{"role": "system", "content": "You are Hermes."}, {"role": "user", "content": "Fix the login bug"},
               {"role": "assistant", "content": "reading " * 3000}, {"role": "user", "content": "go on"},
               {"role": "assistant", "content": "writing " * 3000}, {"role": "user", "content": "ok"},
               {"role": "assistant", "content": "done"}, {"role": "user", "content": "and the tests?"},
               {"role": "assistant", "content": "they pass"}]


def test_trickling_provider_costs_the_timeout_then_the_breaker_opens():
    """A server answering one byte a second: --timeout 2 cuts each summary at ~2 s (not minutes);
    after 2 consecutive failures (summarizer.max_failures) the rest of the batch goes straight
    to the fallback, said once."""
    from fakeserver import FakeServer, trickle

    batch = (json.dumps({"messages": _TRANSCRIPT}) + "\n").encode() * 5
    with FakeServer() as server:
        server.script(*[trickle(1.0)] * 5)
        start = time.monotonic()
        result = _cli("compress", "--summarizer", "openai", "--base-url", server.url + "/v1", "--api-key", "k",
                      "--timeout", "2", "--protect-first-n", "1", "--tail-tokens", "30", "--jsonl",
                      stdin=batch, timeout=20,
                      env={"HERMESCTX_SUMMARIZER_RETRIES": "0", "HERMESCTX_SUMMARIZER_MAX_FAILURES": "2"})
        elapsed = time.monotonic() - start
        requests = len(server.requests)
    assert result.returncode == 0, result.stderr
    assert elapsed < 9, elapsed  # 2 × 2 s, then no more calls; not 5 × (minutes)
    assert requests == 2
    assert result.stderr.count(b"failed 2 times in a row (timeout)") == 1
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(lines) == 5 and all(any(m.get("_compressed_summary") for m in doc["messages"]) for doc in lines)
    _figures(f"trickling provider, 5 transcripts ({elapsed:.1f} s)", 5, 5, 0)
