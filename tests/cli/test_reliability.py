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

from hermesctx.summary.text import is_summary_content

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


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
    """JSON Lines whose call ids repeat across lines (call_0 and call_1 alternate), two names for
    all lines, each result distinct (so every spill of a shared name replaces another's file).
    (Null ids, which Hermes names tool_result.txt, are no request the APIs take (D12): tested
    in test_spill.py.)"""
    out = []
    for n in range(lines):
        cid = "call_1" if n % 2 else "call_0"
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
    batches = [_spill_batch(seed, 300) for seed in ("alpha", "beta")]
    paths = []
    for k, batch in enumerate(batches):
        paths.append(tmp_path / f"batch{k}.jsonl")
        paths[-1].write_bytes(batch)
    outs = [open(tmp_path / f"out{k}.jsonl", "wb") for k in range(2)]
    procs = [_popen("-q", "spill", "--dir", directory, "--threshold", "200", str(path), stdout=out,
                    stderr=subprocess.PIPE) for path, out in zip(paths, outs)]  # both at once
    errors = [p.communicate(timeout=60)[1] for p in procs]
    for out in outs:
        out.close()
    assert [p.returncode for p in procs] == [0, 0], errors
    held = lost = 0
    for k, batch in enumerate(batches):
        out = (tmp_path / f"out{k}.jsonl").read_bytes()
        assert out.count(b"<persisted-output>") == 300
        h, n = _restored(directory, out, batch)
        held, lost = held + h, lost + n
    _figures("two spill processes, one dir", 600, held, lost)
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
    return {"messages": [{"role": "user", "content": "go"},
                         {"role": "assistant", "content": None, "tool_calls": [
                             {"id": cid, "type": "function", "function": {"name": "terminal", "arguments": "{}"}}]},
                         {"role": "tool", "tool_call_id": cid, "content": text}]}


def _spill_into(directory, cid, text, env=None):
    """``hermesctx spill --dir DIR --threshold 10`` of one result (``directory`` None: the default)."""
    where = ["--dir", str(directory)] if directory is not None else []
    return _cli("-q", "spill", *where, "--threshold", "10", stdin=json.dumps(_big(cid, text)).encode(), env=env)


def _planted(tmp_path, name, target):
    directory = tmp_path / "spill"
    directory.mkdir()
    (directory / name).symlink_to(target)
    return directory


def test_planted_symlink_file_is_refused(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET")
    directory = _planted(tmp_path, "call_01.txt", secret)
    result = _spill_into(directory, "call_01", "x" * 50)
    assert result.returncode == 5 and result.stdout == b""
    assert result.stderr.decode().strip().endswith(f"refusing to follow the symlink {directory}/call_01.txt "
                                                   "in the spill directory")
    assert secret.read_text() == "TOP SECRET" and not (directory / ".replaced").exists()


def test_planted_replaced_symlink_is_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    directory = _planted(tmp_path, ".replaced", outside)
    assert _spill_into(directory, "c", "a" * 50).returncode == 0
    second = _spill_into(directory, "c", "b" * 50)
    assert second.returncode == 5 and b"refusing to follow the symlink" in second.stderr
    assert os.listdir(outside) == []
    assert (directory / "c.txt").read_text() == "a" * 50  # nothing replaced: the old content is safe


def test_planted_index_symlink_is_refused(tmp_path):
    target = tmp_path / "target"
    target.write_text("")
    directory = _planted(tmp_path, ".index", target)
    result = _spill_into(directory, "c", "a" * 50)
    assert result.returncode == 5 and b"refusing to follow the symlink" in result.stderr
    assert target.read_text() == ""


def test_forged_block_pulls_in_no_other_file(tmp_path):
    """A transcript naming another session's spill file with the right size and preview gets
    nothing: the block was never recorded in the index."""
    from hermesctx.stages.spill import persisted_block

    directory = tmp_path / "spill"
    assert _spill_into(directory, "c", "private data " * 10).returncode == 0
    forged = persisted_block("private data " * 10, f"{directory}/c.txt", 5)  # another preview size
    result = _cli("spill", "--restore", "--dir", str(directory),
                  stdin=json.dumps(_big("x", forged)).encode())
    assert result.returncode == 0 and b"private data private" not in result.stdout
    assert b"1 file missing" in result.stderr


def test_default_directory_is_private_per_user(tmp_path):
    result = _spill_into(None, "c", "a" * 50, env={"TMPDIR": str(tmp_path)})
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
    result = _spill_into(None, "c", "a" * 50, env={"TMPDIR": str(tmp_path)})
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


def _first_line(proc, timeout: float = 60) -> bytes:
    """The first output line, or a failure (never a hang) when none comes in ``timeout`` s."""
    import select

    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    if not ready:
        proc.kill()
        raise AssertionError(f"no output line within {timeout} s")
    return proc.stdout.readline()


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
    first = _first_line(proc)  # the workers are up and answering
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
    """A server answering one byte a second: --timeout 1.5 cuts each summary at ~1.5 s (not minutes);
    after 2 consecutive failures (summarizer.max_failures) the rest of the batch goes straight
    to the fallback, said once."""
    from fakeserver import FakeServer, trickle

    batch = (json.dumps({"messages": _TRANSCRIPT}) + "\n").encode() * 5
    with FakeServer() as server:
        server.script(*[trickle(1.0)] * 5)
        start = time.monotonic()
        result = _cli("compress", "--summarizer", "openai", "--base-url", server.url + "/v1", "--api-key", "k",
                      "--timeout", "1.5", "--protect-first-n", "1", "--tail-tokens", "30", "--jsonl",
                      stdin=batch, timeout=20,
                      env={"HERMESCTX_SUMMARIZER_RETRIES": "0", "HERMESCTX_SUMMARIZER_MAX_FAILURES": "2"})
        elapsed = time.monotonic() - start
        requests = len(server.requests)
    assert result.returncode == 0, result.stderr
    assert elapsed < 15, elapsed  # 2 × 1.5 s, then no more calls; not 5 × (minutes: a byte a second)
    assert requests == 2
    assert result.stderr.count(b"failed 2 times in a row (timeout)") == 1
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(lines) == 5 and all(any(is_summary_content(m.get("content")) for m in doc["messages"])
                                for doc in lines)
    _figures(f"trickling provider, 5 transcripts ({elapsed:.1f} s)", 5, 5, 0)


# --- write errors: exit 5, one line, no temp file left ----------------------------------------

def _doc_bytes(lines: int = 1, size: int = 2000) -> bytes:
    doc = {"messages": [{"role": "user", "content": "x" * size}, {"role": "assistant", "content": "ok"}]}
    return (json.dumps(doc) + "\n").encode() * lines


def _one_error_line(stderr: bytes, text: str) -> None:
    lines = stderr.decode().strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hermesctx: error: ") and text in lines[0], stderr
    assert "Traceback" not in stderr.decode()


@pytest.mark.parametrize("lines", [1, 400])  # fails at the final flush / while writing
def test_stdout_on_a_full_device_is_exit_5(lines):
    with open("/dev/full", "wb") as full:
        result = subprocess.run([sys.executable, "-m", "hermesctx", "prune", "--jsonl"], input=_doc_bytes(lines),
                                stdout=full, stderr=subprocess.PIPE, timeout=30, cwd=ROOT)
    assert result.returncode == 5
    _one_error_line(result.stderr, "cannot write output: No space left on device")


@pytest.fixture
def small_fs(tmp_path):
    """A 96 KiB tmpfs (root only; skipped where mounting is not allowed)."""
    where = tmp_path / "fs"
    where.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=96k", "tmpfs", str(where)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def _fill(directory):
    with open(directory / "filler", "wb", buffering=0) as handle:
        try:
            while True:
                handle.write(b"\0" * 512)
        except OSError:
            pass


def _temps(directory):
    return [n for n in os.listdir(directory) if n.endswith(".tmp")]


def test_in_place_on_a_full_disk_is_exit_5_and_the_file_untouched(small_fs):
    source = small_fs / "batch.jsonl"
    original = _doc_bytes(8)
    source.write_bytes(original)
    _fill(small_fs)
    result = _cli("-q", "prune", "--in-place", "--backup", str(source))
    assert result.returncode == 5
    _one_error_line(result.stderr, f"cannot write {source}: No space left on device")
    assert source.read_bytes() == original and _temps(small_fs) == [] and not (small_fs / "batch.jsonl.bak").exists()


def test_report_on_a_full_disk_is_exit_5_and_no_temp_left(small_fs, tmp_path):
    report = small_fs / "report.jsonl"
    _fill(small_fs)
    result = _cli("-q", "prune", "--report", str(report), "--jsonl", stdin=_doc_bytes(3000, 50))
    assert result.returncode == 5
    _one_error_line(result.stderr, f"cannot write report {report}: No space left on device")
    assert _temps(small_fs) == [] and not report.exists()


def test_read_only_filesystem_is_exit_5(small_fs):
    source = small_fs / "one.json"
    source.write_bytes(_doc_bytes(1))
    assert subprocess.run(["mount", "-o", "remount,ro", str(small_fs)], capture_output=True).returncode == 0
    in_place = _cli("prune", "--in-place", str(source))
    assert in_place.returncode == 5
    _one_error_line(in_place.stderr, "Read-only file system")
    report = _cli("prune", "--report", str(small_fs / "r.json"), str(source))
    assert report.returncode == 5
    _one_error_line(report.stderr, f"cannot write report {small_fs}/r.json: Read-only file system")


def test_report_keeps_what_was_done_when_a_batch_fails_part_way(tmp_path):
    report = tmp_path / "report.jsonl"
    batch = _doc_bytes(2) + b'{"messages": "not a list"}\n' + _doc_bytes(2)
    result = _cli("prune", "--report", str(report), "--jsonl", stdin=batch)
    assert result.returncode == 3
    kept = [json.loads(line) for line in report.read_bytes().splitlines()]
    assert [r["line"] for r in kept] == [1, 2]
    assert _temps(tmp_path) == []


def test_epipe_stays_141():
    proc = _popen("prune", "--jsonl", stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader is gone before anything is written
    _, err = proc.communicate(_doc_bytes(2000), timeout=30)
    assert proc.returncode == 141 and err == b""


# --- SIGTERM mid-write; --backup is atomic ---------------------------------------------------

def test_sigterm_mid_in_place_is_143_with_no_temp_left(tmp_path):
    """`--in-place --backup --report` reading a FIFO: SIGTERM while it is writing the temp file
    removes the temp file, leaves FILE and an earlier FILE.bak as they were, keeps the reports
    of the transcripts done, and exits 143."""
    fifo = tmp_path / "batch.jsonl"
    os.mkfifo(fifo)
    (tmp_path / "batch.jsonl.bak").write_bytes(b"the previous backup\n")
    report = tmp_path / "report.jsonl"
    proc = _popen("prune", "--in-place", "--backup", "--report", str(report), "--jsonl", str(fifo),
                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    with open(fifo, "wb") as writer:
        writer.write(_doc_bytes(50))
        writer.flush()
        deadline = time.monotonic() + 10
        while not _temps(tmp_path) and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(0.5)  # it has read and written what was there; now it waits for more
        assert _temps(tmp_path)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=10)
    assert proc.returncode == 143, err
    assert err.decode().strip().splitlines()[-1] == "hermesctx: terminated"
    assert _temps(tmp_path) == []
    assert (tmp_path / "batch.jsonl.bak").read_bytes() == b"the previous backup\n"
    assert len(report.read_bytes().splitlines()) == 50
    _figures("SIGTERM mid --in-place", 1, 1, 0)


def test_sigterm_of_run_jobs_is_143_and_stops_the_workers(tmp_path):
    proc = _popen("run", "--pipeline", "prune", "--jobs", "2", "--jsonl",
                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdin.write(_doc_bytes(5))
    proc.stdin.flush()
    assert _first_line(proc).startswith(b"{")
    workers = _children(proc.pid) if os.path.exists("/proc/self/task") else []
    proc.send_signal(signal.SIGTERM)
    proc.stdin.close()
    proc.stdin = None
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == 143, err
    deadline = time.monotonic() + 10  # a loaded machine may take a moment to reap them
    while time.monotonic() < deadline and not all(not os.path.exists(f"/proc/{pid}") or _zombie(pid)
                                                  for pid in workers):
        time.sleep(0.05)
    assert all(not os.path.exists(f"/proc/{pid}") or _zombie(pid) for pid in workers)


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] == "Z"
    except OSError:
        return True


def test_backup_replaces_the_previous_one_whole(tmp_path):
    source = tmp_path / "one.json"
    original = _doc_bytes(1)
    source.write_bytes(original)
    (tmp_path / "one.json.bak").write_bytes(b"older\n")
    result = _cli("-q", "cache-mark", "--in-place", "--backup", str(source))  # (a change: an unchanged FILE stays)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "one.json.bak").read_bytes() == original
    assert sorted(os.listdir(tmp_path)) == ["one.json", "one.json.bak"]


def test_planted_fifo_is_refused_not_waited_on(tmp_path):
    directory = tmp_path / "spill"
    directory.mkdir()
    os.mkfifo(directory / "c.txt")
    result = _spill_into(directory, "c", "a" * 50)  # a hang would hit the 30 s subprocess timeout
    assert result.returncode == 5 and b"not a regular file" in result.stderr


def test_in_place_on_a_symlink_rewrites_its_target_and_keeps_the_link(tmp_path):
    real = tmp_path / "real.json"
    real.write_bytes(_doc_bytes(1))
    link = tmp_path / "link.json"
    link.symlink_to("real.json")
    result = _cli("-q", "cache-mark", "--in-place", "--backup", str(link))
    assert result.returncode == 0, result.stderr
    assert link.is_symlink() and os.readlink(link) == "real.json"
    assert (tmp_path / "real.json.bak").read_bytes() == _doc_bytes(1)
    assert result.stdout == b"" and not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]


def test_run_jobs_writes_a_line_before_the_input_ends():
    """One line on a pipe that stays open: its result comes out at once, not at EOF (the input
    is read in a thread, so a waiting read never holds back a finished result)."""
    proc = _popen("run", "--pipeline", "prune", "--jobs", "2", "--jsonl",
                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdin.write(_batch(1))
    proc.stdin.flush()
    assert _first_line(proc).startswith(b"{")
    proc.stdin.close()
    proc.stdin = None
    rest, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert rest == b""


# --- issue 31: gzip bombs --------------------------------------------------------------------

def _bomb(head: bytes, fill: bytes, tail: bytes, inflated: int = 2 << 30) -> bytes:
    """A gzip of ``head + fill * ... + tail`` inflating to ``inflated`` bytes, made of
    concatenated members (a gzip reader takes them as one stream): ~2 MB for 2 GB."""
    import gzip

    block = gzip.compress(fill * ((16 << 20) // len(fill)), compresslevel=9)
    return gzip.compress(head) + block * (inflated // (16 << 20)) + gzip.compress(tail)


BOMBS = {
    "string": (b'[{"role":"user","content":"', b"a", b'"}]'),
    "newlines": (b"", b"\n", b'[{"role":"user","content":"hi"}]\n'),
    "zeros": (b"", b"\0", b""),
}




@pytest.mark.parametrize("kind", sorted(BOMBS))
@pytest.mark.parametrize("via", ["file", "pipe"])
def test_a_gzip_bomb_is_exit_3_naming_the_cap_fast_and_small(tmp_path, kind, via):
    bomb = _bomb(*BOMBS[kind])
    assert len(bomb) < 4 << 20
    path = tmp_path / "b.gz"
    path.write_bytes(bomb)
    # measured by a small launcher: a child forked from pytest itself would report pytest's own
    # peak (ru_maxrss survives exec), not the command's
    launcher = ("import resource, subprocess, sys; "
                "p = subprocess.run(sys.argv[1:], stdin=sys.stdin, stdout=subprocess.DEVNULL); "
                "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    start = time.monotonic()
    with open(path, "rb") as stdin:
        proc = subprocess.run([sys.executable, "-c", launcher, sys.executable, "-m", "hermesctx", "prune",
                               *([str(path)] if via == "file" else [])], cwd=ROOT, capture_output=True,
                              stdin=stdin if via == "pipe" else subprocess.DEVNULL, timeout=60)
    seconds = time.monotonic() - start
    status, peak = map(int, proc.stdout.split())
    stderr = proc.stderr.decode()
    _figures(f"gzip bomb {kind} via {via} ({len(bomb) >> 10} KB -> 2 GiB): {seconds:.2f} s, "
             f"{peak >> 10} MB", 1, int(status == 3), int(status != 3))
    assert status == 3, stderr
    assert "input size cap" in stderr and "--max-input-size" in stderr and stderr.count("\n") == 1
    assert seconds < 5
    assert peak < 100 << 10  # KB


def test_max_input_size_and_input_max_bytes_set_the_cap(tmp_path):
    import gzip

    doc = b'[{"role":"user","content":"' + b"x" * 5000 + b'"}]'
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(doc))
    assert _cli("estimate", str(path)).returncode == 0  # 5 KB: under every default
    small = _cli("prune", "--max-input-size", "4K", str(path))
    assert small.returncode == 3 and b"input size cap (4 KiB)" in small.stderr
    assert _cli("prune", "--max-input-size", "1M", str(path)).stdout.strip() == doc
    config = tmp_path / "c.yaml"
    config.write_text("input:\n  max_bytes: 4096\n")
    by_config = _cli("prune", "--config", str(config), str(path))
    assert by_config.returncode == 3 and b"4 KiB" in by_config.stderr
    assert _cli("prune", "--max-input-size", "lots", str(path)).returncode == 2
    assert _cli("config", "check", str(config)).returncode == 0


# --- issue 31: spill then spill --restore is the original, byte for byte --------------------

def _send_path_changes_these() -> bytes:
    """Lines the send path changes as they are written: a stray tool result (no call names it),
    two assistant turns in a row, one with a result big enough to spill, one with none."""
    big = "row of output\n" * 2000
    call = {"id": "call_a", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}
    docs = [
        {"messages": [{"role": "user", "content": "go"}, {"role": "tool", "tool_call_id": "ghost", "content": "stray"},
                      {"role": "assistant", "content": "done"}]},
        [{"role": "user", "content": "go"}, {"role": "assistant", "content": "first"},
         {"role": "assistant", "content": None, "tool_calls": [call]},
         {"role": "tool", "tool_call_id": "call_a", "content": big}, {"role": "assistant", "content": "ok"}],
        [{"role": "user", "content": "plain"}, {"role": "assistant", "content": "nothing to change"}],
    ]
    return b"".join(json.dumps(d, separators=(",", ":")).encode() + b"\n" for d in docs)


def test_spill_then_restore_gives_back_what_the_send_path_changed(tmp_path):
    original = _send_path_changes_these()
    directory = str(tmp_path / "spill")
    report = tmp_path / "r.jsonl"
    spilled = _cli("-q", "spill", "--dir", directory, "--threshold", "1000", "--report", str(report), stdin=original)
    assert spilled.returncode == 0 and spilled.stderr == b""
    assert spilled.stdout != original  # the stray result went, the turns were merged
    reports = [json.loads(line) for line in report.read_text().splitlines()]
    assert reports[0]["send_path"] == {"stray tool results dropped": 1}  # counted, -q or not
    assert reports[1]["send_path"] == {"consecutive assistant messages merged": 1} and reports[1]["spilled"] == 1
    assert "send_path" not in reports[2]
    held, lost = _restored(directory, spilled.stdout, original)
    _figures("spill | spill --restore where the send path changed lines", 3, held, lost)
    assert lost == 0
    strict = _cli("spill", "--strict", "--dir", directory, stdin=original)
    assert strict.returncode == 3 and b"line 1: the send path would change" in strict.stderr


def test_spill_then_restore_of_a_generated_batch_is_byte_identical(tmp_path):
    batch = tmp_path / "batch.jsonl"
    subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen.py"), "--size-mb", "8", "--seed", "31",
                    "--out", str(batch)], check=True, capture_output=True, timeout=120)
    original = batch.read_bytes()
    directory = str(tmp_path / "spill")
    spilled = _cli("-q", "spill", "--dir", directory, str(batch), timeout=120)
    assert spilled.returncode == 0, spilled.stderr
    held, lost = _restored(directory, spilled.stdout, original)
    _figures("bench batch 8 MB: spill | spill --restore", held + lost, held, lost)
    assert lost == 0


# --- issue 31: plugins inside the boundary ---------------------------------------------------

SESSION = os.path.join(ROOT, "examples", "coding-session.json")


def _with_plugin(plugin_dir, *args, env=None, timeout=60):
    return _cli(*args, env={"PYTHONPATH": str(plugin_dir), **(env or {})}, timeout=timeout)


def test_an_engine_that_calls_sys_exit_is_exit_4_naming_it(plugin_dir):
    result = _with_plugin(plugin_dir, "compress", SESSION, env={"HERMESCTX_CONTEXT_ENGINE": "exits"})
    assert result.returncode == 4 and result.stdout == b""
    assert result.stderr.decode() == ("hermesctx: error: engine plugin 'exits' (hermesctx-demo-plugin 0.1.0) "
                                      "failed: it called sys.exit(0)\n")


def test_a_hanging_engine_is_stopped_by_the_timeout(plugin_dir):
    start = time.monotonic()
    result = _with_plugin(plugin_dir, "compress", "--timeout", "2", SESSION, env={"HERMESCTX_CONTEXT_ENGINE": "hangs"})
    seconds = time.monotonic() - start
    assert result.returncode == 4 and result.stdout == b""
    assert b"engine plugin 'hangs' (hermesctx-demo-plugin 0.1.0) did not finish within 2 s" in result.stderr
    assert seconds < 20


@pytest.mark.parametrize("name", ["hangs", "exits"])
def test_a_plugin_summarizer_that_hangs_or_exits_is_inside_the_deadline(plugin_dir, name):
    args = ["compress", "--protect-last-n", "4", "--tail-tokens", "200", "--summarizer", name, "--timeout", "2"]
    start = time.monotonic()
    fell_back = _with_plugin(plugin_dir, *args, SESSION)
    assert time.monotonic() - start < 20
    assert fell_back.returncode == 0, fell_back.stderr  # the extractive summarizer stood in, said so
    assert f"summarizer plugin '{name}'".encode() in fell_back.stderr and b"[CONTEXT COMPACTION" in fell_back.stdout
    refused = _with_plugin(plugin_dir, *args, "--no-fallback", SESSION)
    assert refused.returncode == 4 and refused.stdout == b"" and refused.stderr.count(b"\n") == 1
    assert f"summarizer plugin '{name}'".encode() in refused.stderr


def test_a_plugin_error_quoting_a_key_is_printed_masked(plugin_dir, tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("context:\n  engine: leaky\n")
    for result in (_with_plugin(plugin_dir, "config", "check", str(config)),
                   _with_plugin(plugin_dir, "compress", "--config", str(config), SESSION)):
        assert b"engine plugin 'leaky'" in result.stderr and result.returncode in (1, 4)
        assert b"sk-proj-demo0123456789" not in result.stderr


# --- issue 31: the store takes what the readers take -----------------------------------------

def _surrogate_session(n: int = 30) -> bytes:
    messages = [{"role": "system", "content": "sys"}]
    for i in range(n):
        messages += [{"role": "user", "content": f"question {i} \ud800 lone " + "x" * 400},
                     {"role": "assistant", "content": f"answer {i} \udfff " + "y" * 400}]
    return json.dumps(messages).encode()  # (ensure_ascii: the surrogates as \ud800 escapes)


def test_the_store_takes_lone_surrogates_and_gives_them_back_byte_for_byte(tmp_path, cli):
    raw = _surrogate_session()
    store = str(tmp_path / "a.sqlite")
    done = cli(["compress", "--archive", store, "--protect-last-n", "4", "--tail-tokens", "100"], raw)
    assert done.status == 0, done.stderr
    hits = cli(["recall", "--archive", store, "question 3"])
    assert hits.status == 0, hits.stderr
    (hit,) = [h for h in hits.json if h["kind"] == "message"]
    assert "\\ud800" in hit["snippet"]
    back = cli(["recall", "--archive", store, "--expand", hit["span"]])
    assert back.status == 0 and back.json == json.loads(raw)
    assert cli(["recall", "--archive", store, "lone \udc80"]).status in (0, 1)  # (argv's undecodable bytes)


# --- issue 31: depth up to the readers' limit is written, past it refused ------------------

def _deep(depth: int) -> bytes:
    """A transcript whose messages nest ``depth`` levels deep (its list and message: 2 more)."""
    return (b'[{"role":"user","content":"hi","x":' + b"[" * depth + b"]" * depth + b'},'
            b'{"role":"assistant","content":"ok","y":' + b'{"a":' * depth + b"1" + b"}" * depth + b"}]")


@pytest.mark.parametrize("depth", [985, 1000, 1020, 1022, 1030])
@pytest.mark.parametrize("command", [["prune"], ["sanitize"], ["estimate"], ["compress"], ["cache-mark"],
                                     ["validate"], ["convert", "--to", "anthropic"], ["trajectory"], ["run"]])
def test_deep_nesting_is_written_or_refused_never_a_crash(cli, depth, command):
    for raw, levels in ((_deep(depth), depth + 2), (_deep(depth).replace(b"[{", b'{"messages":[{', 1) + b"}", depth + 3)):
        result = cli(command, raw)
        assert result.status in (0, 1, 3), result.stderr  # (validate: 1 for a finding)
        assert (result.status == 3) == (levels > 1024), result.stderr  # the readers' limit: 1,024 levels
        if result.status == 3:
            assert "nesting too deep" in result.stderr
        elif command[0] not in ("estimate", "validate"):
            assert result.stdout.strip()


def test_the_writer_refuses_what_no_reader_here_takes():
    from hermesctx import jsonio
    from hermesctx.errors import InputError

    value: list = []
    for _ in range(1023):
        value = [value]
    assert jsonio.loads(jsonio.dumps(value)) == value  # 1,024 levels: written, and read back
    with pytest.raises(InputError, match="nesting too deep to write"):
        jsonio.dumps([value])


# --- issue 31: recall bounds its query and its limit; migrate goes past what is no archive ---

@pytest.fixture
def small_store(tmp_path, cli):
    store = str(tmp_path / "a.sqlite")
    assert cli(["compress", "--archive", store, "--protect-last-n", "4", "--tail-tokens", "100"],
               _surrogate_session()).status == 0
    return store


def test_recall_refuses_a_query_past_its_bounds_at_once(cli, small_store):
    for query in ("x" * 105_000, " ".join(f"w{i}" for i in range(33)), " ".join("a.b.c.d.e.f.g.h.i" for _ in range(30))):
        start = time.monotonic()
        result = cli(["recall", "--archive", small_store, query])
        assert result.status == 2 and "at most" in result.stderr, result.stderr
        assert time.monotonic() - start < 2
    widest = " ".join(f"question{i}/{'y' * 20}" for i in range(32))[:1000]
    start = time.monotonic()
    assert cli(["recall", "--archive", small_store, widest]).status == 1  # no hit, as grep
    assert time.monotonic() - start < 5


@pytest.mark.parametrize("limit", ["99999999999999999999", "1001", "0"])
def test_recall_limit_out_of_range_is_a_usage_error(cli, small_store, limit):
    result = cli(["recall", "--archive", small_store, "--limit", limit, "question"])
    assert result.status == 2 and "--limit" in result.stderr


def test_recall_migrate_goes_past_a_directory_named_like_an_archive(cli, tmp_path):
    import hashlib

    archives = tmp_path / "archive"
    archives.mkdir()
    (archives / ("0" * 32 + ".jsonl")).mkdir()
    data = b'{"role":"user","content":"kept in a real archive"}\n'
    (archives / (hashlib.sha256(data).hexdigest()[:32] + ".jsonl")).write_bytes(data)
    result = cli(["recall", "--migrate", str(archives), "--archive", str(tmp_path / "m.sqlite")])
    assert result.status == 0, result.stderr
    assert result.json["imported"] == 1 and len(result.json["refused"]) == 1
    assert "not a regular file" in result.json["refused"][0]


# --- issue 31: what no API accepts is refused, naming the line (--lenient: as Hermes) ---------

ODD_SHAPES = {
    "content 5": b'[{"role":"user","content":"hi"}]\n[{"role":"user","content":5}]\n',
    "content {}": b'[{"role":"user","content":"hi"}]\n[{"role":"user","content":{}}]\n',
    "tool_calls abc": b'[{"role":"user","content":"hi"}]\n[{"role":"user","content":"q"},'
                      b'{"role":"assistant","content":"x","tool_calls":"abc"}]\n',
    "duplicate key": b'[{"role":"user","content":"hi"}]\n[{"role":"user","content":"a","content":"b"}]\n',
    "duplicate key, spaced": b'[{"role": "user", "content": "hi"}]\n[{"role": "user", "x": {"k": 1, "k": 2}, "content": "a"}]\n',
}
SHAPE_COMMANDS = [["prune"], ["sanitize"], ["compress"], ["cache-mark"], ["spill", "--dir", "SPILL"],
                  ["convert", "--to", "anthropic"], ["convert", "--to", "sharegpt"], ["run"], ["estimate"]]


@pytest.mark.parametrize("shape", sorted(ODD_SHAPES))
@pytest.mark.parametrize("command", SHAPE_COMMANDS, ids=lambda c: c[0] + ("-" + c[-1] if len(c) > 1 else ""))
def test_odd_shapes_are_refused_naming_the_line(cli, tmp_path, shape, command):
    command = [str(tmp_path / "spill") if arg == "SPILL" else arg for arg in command]
    result = cli(command, ODD_SHAPES[shape])
    assert result.status == 3, (result.status, result.stderr)
    assert "line 2: " in result.stderr and result.stderr.count("hermesctx: error") == 1


@pytest.mark.parametrize("shape", ["content 5", "duplicate key"])
def test_lenient_reads_odd_shapes_as_hermes_does(cli, shape):
    result = cli(["sanitize", "--lenient"], ODD_SHAPES[shape])
    assert result.status == 0, result.stderr
    if shape == "duplicate key":
        assert result.lines[1][0]["content"] == "b"  # the last wins, as in Hermes


def test_validate_refuses_a_duplicate_key_and_masks_what_it_quotes(cli):
    assert cli(["validate"], ODD_SHAPES["duplicate key"]).status == 3
    secret = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD"
    doc = json.dumps([{"role": secret, "content": "x"}])
    for args in (["validate", "--lenient"], ["validate", "--lenient", "--format", "json"]):
        result = cli(args, doc)
        assert result.status == 1 and "Invalid value" in result.stderr + result.stdout.decode()
        assert secret not in result.stderr and secret.encode() not in result.stdout


def test_convert_to_sharegpt_refuses_messages_that_are_no_list(cli):
    result = cli(["convert", "--to", "sharegpt"], b'{"messages":"hello"}\n')
    assert result.status == 3 and result.stdout == b""
    assert "line 1: messages: expected an array, got a string" in result.stderr


# --- issue 31: config check reads JSON with the JSON parser ---------------------------------

def test_config_check_of_a_40_mb_json_file_is_fast(tmp_path):
    path = tmp_path / "big.json"
    path.write_text(json.dumps({"compression": {"threshold": 0.5}, "toolsets": {"big": ["x" * 100] * 400_000}}))
    start = time.monotonic()
    result = _cli("config", "check", str(path), timeout=60)
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - start < 15  # (the YAML parser: minutes)
    bad = tmp_path / "bad.json"
    bad.write_text('{"compression": {"threshold": 7}}')
    assert _cli("config", "check", str(bad)).returncode == 1


# --- issue 31: the redactor learns prose passwords and GCP key ids -----------------------------

PROSE_SECRETS = [
    ("the password is hunter2", "hunter2"),
    ("The root password for the db server is S3cr3t-99.", "S3cr3t-99"),
    ("Your password has been set to P@ssw0rd2024", "P@ssw0rd2024"),
    ("the passphrase was `correct horse`", "correct horse"),
    ("my password was Tr0ub4dor&3!", "Tr0ub4dor&3"),
    ("password is 1234", "1234"),
    ('"private_key_id": "0123456789abcdef0123456789abcdef01234567",', "0123456789abcdef0123456789abcdef01234567"),
    ("private_key_id: 0123456789abcdef0123456789abcdef01234567", "0123456789abcdef0123456789abcdef01234567"),
]
PROSE_BENIGN = [
    "the password is incorrect", "The password is required.", "password is too short",
    "the password is ${DB_PASSWORD}", "the password is set in the vault", "the password is a secret",
    "password was reset by admin", "the password is 8 characters long", "Passing the test: the pass is in line 3.",
    "the password field is validated on submit", "private_key_id is the id of the key (see docs)",
]


@pytest.mark.parametrize(("text", "secret"), PROSE_SECRETS)
def test_prose_passwords_and_key_ids_are_masked(text, secret):
    from hermesctx.redact import redact

    assert secret not in redact(text)


@pytest.mark.parametrize("text", PROSE_BENIGN)
def test_ordinary_prose_about_passwords_is_left_alone(text):
    from hermesctx.redact import redact

    assert redact(text) == text


def test_a_prose_password_reaches_no_spill_preview_or_recall_snippet(cli, tmp_path):
    secret = "Zq8-mellon-42"
    result = "line\n" * 50 + f"the password is {secret} for the staging db\n" + "row\n" * 40_000
    doc = [{"role": "user", "content": "go"},
           {"role": "assistant", "content": None, "tool_calls": [
               {"id": "call_1", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}]},
           {"role": "tool", "tool_call_id": "call_1", "content": result}]
    spilled = cli(["spill", "--dir", str(tmp_path / "spill"), "--threshold", "1000"], doc)
    assert spilled.status == 0 and "persisted-output" in spilled.stdout.decode()
    assert secret not in spilled.stdout.decode()
    messages = [{"role": "system", "content": "sys"}]
    for i in range(20):
        messages += [{"role": "user", "content": f"step {i}: the password is {secret} " + "x" * 300},
                     {"role": "assistant", "content": f"ok {i} " + "y" * 300}]
    store = str(tmp_path / "a.sqlite")
    compressed = cli(["compress", "--archive", store, "--protect-last-n", "4", "--tail-tokens", "100"], messages)
    assert compressed.status == 0
    summaries = [m["content"] for m in compressed.json if is_summary_content(m.get("content"))]
    assert summaries and all(secret not in text for text in summaries)  # (the kept tail is verbatim)
    hits = cli(["recall", "--archive", store, "staging password step"])
    assert secret not in hits.stdout.decode()
    hits = cli(["recall", "--archive", store, "password"])
    assert hits.status == 0 and secret not in hits.stdout.decode()


# --- issue 31: a bounded archive ------------------------------------------------------------

def _session(count: int = 2000) -> list:
    from tests.transcripts import TranscriptGen

    messages = [{"role": "system", "content": "You are Hermes, a coding agent."}]
    seed = 0
    while len(messages) < count:
        messages += [m for m in TranscriptGen(seed).transcript(8)
                     if m.get("role") in ("user", "assistant", "tool") and isinstance(m.get("content"), (str, type(None)))]
        seed += 1
    return messages[:count]


def test_ten_compactions_of_one_session_cost_about_one_copy(tmp_path):
    """Compaction k compacts the session's first 200k messages (the session as it grows), all
    into one store: it holds each message once, so ten cost <= 1.35x the input of the last (1.31x
    since the summaries keep what a successor needs, issue 28)."""
    from hermesctx.store import Store

    messages = _session()
    path = str(tmp_path / "a.sqlite")
    spans = []
    for k in range(1, 11):
        doc = json.dumps(messages[:200 * k], separators=(",", ":")).encode()
        result = _cli("-q", "compress", "--lenient", "--archive", path, "--protect-last-n", "20", stdin=doc, timeout=120)
        assert result.returncode == 0, result.stderr
        spans.append(json.loads(result.stdout))
    with Store.open(path) as store:
        store.con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        stats = store.stats()
        listed = store.spans()
        assert [json.loads(b) for b in store.expand_bytes(listed[-1]["span"])] == messages  # byte for byte
        assert [json.loads(b) for b in store.expand_bytes(listed[3]["span"])] == messages[:800]
    ratio = stats["bytes"] / len(doc)
    print(f"\nten compactions of a 2,000-message session: input {len(doc):,} bytes, store {stats['bytes']:,} "
          f"bytes = {ratio:.2f}x; {stats['messages']:,} messages stored as {stats['unique_messages']:,}")
    assert stats["spans"] == 10 and stats["unique_messages"] <= 2000
    assert ratio <= 1.35  # the messages once (deflated), ten summaries, the newest one searchable
    stats_line = _cli("recall", "--stats", "--archive", path)
    assert stats_line.returncode == 0 and json.loads(stats_line.stdout)["spans"] == 10


def test_prune_before_and_keep_sessions_then_vacuum(tmp_path, cli):
    path = str(tmp_path / "a.sqlite")
    from hermesctx.store import Store

    session = _session(300)
    with Store.open(path) as store:
        first = store.add(session[:100], session="one", summary="first", created="2026-01-01T00:00:00Z")
        second = store.add(session[:200], session="one", summary="second", created="2026-02-01T00:00:00Z")
        third = store.add(session[100:300], session="two", summary="third", created="2026-03-01T00:00:00Z")
    before = os.path.getsize(path)
    result = cli(["recall", "--prune", "--before", "2026-01-15", "--archive", path])
    assert result.status == 0 and result.json["spans_removed"] == 1, result.stderr
    with Store.open(path) as store:
        assert [s["span"] for s in store.spans()] == [second, third]
        assert [json.loads(b) for b in store.expand_bytes(second)] == session[:200]  # (its base went: kept whole)
        assert store.search("second")[0]["span"] == second
    result = cli(["recall", "--prune", "--keep-sessions", "1", "--archive", path])
    assert result.status == 0 and result.json["sessions_removed"] == 1
    with Store.open(path) as store:
        assert [s["span"] for s in store.spans()] == [third]
        assert [json.loads(b) for b in store.expand_bytes(third)] == session[100:300]
        assert store.stats()["unique_messages"] <= 200
    assert os.path.getsize(path) < before and first not in json.dumps(cli(["recall", "--stats", "--archive", path]).json)
    assert cli(["recall", "--prune", "--archive", path]).status == 2  # (neither --before nor --keep-sessions)


V1_SCHEMA = """
CREATE TABLE blobs (hash TEXT PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE spans (id TEXT PRIMARY KEY, session TEXT NOT NULL, parent TEXT, created TEXT NOT NULL,
    messages INTEGER NOT NULL, compressed INTEGER, start INTEGER, "end" INTEGER, summary TEXT NOT NULL, source TEXT);
CREATE TABLE span_messages (span TEXT NOT NULL, position INTEGER NOT NULL, hash TEXT NOT NULL, PRIMARY KEY (span, position));
CREATE TABLE texts (id INTEGER PRIMARY KEY, session TEXT NOT NULL, hash TEXT NOT NULL, span TEXT NOT NULL,
    position INTEGER NOT NULL, role TEXT, tool TEXT, created TEXT NOT NULL, body TEXT NOT NULL, UNIQUE (session, hash));
PRAGMA user_version = 1;
"""


def test_a_version_1_store_is_migrated_and_answers_as_before(tmp_path, cli):
    import hashlib
    import sqlite3

    from hermesctx.store import Store

    path = str(tmp_path / "v1.sqlite")
    messages = [{"role": "user", "content": "where is the flux capacitor config"},
                {"role": "assistant", "content": "in src/flux.py, line 88"}]
    con = sqlite3.connect(path)
    con.executescript(V1_SCHEMA)
    con.execute("INSERT INTO spans VALUES ('hx-0123456789ab', 's-1', NULL, '2026-01-01T00:00:00Z', 2, 1, 0, 2, "
                "'talked about the flux capacitor', NULL)")
    for position, msg in enumerate(messages):
        blob = json.dumps(msg, separators=(",", ":")).encode() + b"\n"
        digest = hashlib.sha256(blob).hexdigest()
        con.execute("INSERT OR IGNORE INTO blobs VALUES (?, ?)", (digest, blob))
        con.execute("INSERT INTO span_messages VALUES ('hx-0123456789ab', ?, ?)", (position, digest))
    con.commit()
    con.close()
    hits = cli(["recall", "--archive", path, "flux.py"])
    assert hits.status == 0 and hits.json[0]["span"] == "hx-0123456789ab" and hits.json[0]["position"] == 1
    expanded = cli(["recall", "--archive", path, "--expand", "hx-0123456789ab"])
    assert expanded.json == messages
    with Store.open(path) as store:
        assert store.con.execute("PRAGMA user_version").fetchone()[0] == 2
        assert store.span("hx-0123456789ab")["summary"] == "talked about the flux capacitor"
