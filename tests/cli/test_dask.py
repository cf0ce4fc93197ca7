"""`hermesctx run --dask`: the pipeline on a Dask cluster gives byte for byte what `run --jobs 2` gives."""

import gzip
import importlib.util
import json
import os
import sys

import pytest
from conftest import EXAMPLES, invoke

pytestmark = pytest.mark.skipif(importlib.util.find_spec("distributed") is None,
                                reason="dask.distributed not installed (pip install '.[dask]')")

PIPELINE = ["run", "--pipeline", "prune,sanitize,cache-mark"]


@pytest.fixture(scope="module")
def cluster():
    from dask.distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None,
                      scheduler_kwargs={"dashboard": False}) as found:
        yield found.scheduler_address


@pytest.fixture
def batch(tmp_path):
    """A few MB over several files: a JSON Lines batch cut into many blocks (a BOM, blank and CRLF
    lines), a gzip batch, a pretty-printed document and a Claude Code session log."""
    lines = open(os.path.join(EXAMPLES, "batch.jsonl"), "rb").read().splitlines(keepends=True)
    big = tmp_path / "big.jsonl"
    body = b"".join(line if i % 7 else line.rstrip(b"\n") + b"\r\n" for i, line in enumerate(lines * 300))
    big.write_bytes(b"\xef\xbb\xbf" + body.replace(lines[2], lines[2] + b"\n  \n", 5))
    small = tmp_path / "small.jsonl.gz"
    small.write_bytes(gzip.compress(b"".join(lines)))
    pretty = tmp_path / "pretty.json"
    pretty.write_text(json.dumps(json.load(open(os.path.join(EXAMPLES, "coding-session.json"))), indent=2))
    return [str(big), str(small), str(pretty), os.path.join(EXAMPLES, "claude-code-session.jsonl")]


def test_dask_output_is_byte_identical_to_jobs(cluster, batch, tmp_path):
    assert os.path.getsize(batch[0]) > 2_000_000
    jobs = invoke([*PIPELINE, "--jobs", "2", "--report", str(tmp_path / "jobs.jsonl"), *batch])
    dask = invoke([*PIPELINE, "--dask", cluster, "--block-size", "256k", "--report", str(tmp_path / "dask.jsonl"),
                   *batch])
    assert jobs.status == dask.status == 0, dask.stderr
    assert dask.stdout == jobs.stdout and len(dask.lines) == 1200 + 4 + 2
    assert dask.stderr == jobs.stderr
    reports = (tmp_path / "dask.jsonl").read_bytes()
    assert reports == (tmp_path / "jobs.jsonl").read_bytes()
    lines = [json.loads(line) for line in reports.splitlines()]
    assert max(r["line"] for r in lines if r["file"] == batch[0]) == 1200 + 5 * 2  # (blank lines counted)


def test_dask_errors_and_keep_going_are_those_of_jobs(cluster, tmp_path):
    good = tmp_path / "a.jsonl"
    good.write_bytes(open(os.path.join(EXAMPLES, "batch.jsonl"), "rb").read() * 50)
    bad = tmp_path / "b.json"
    bad.write_text("not json\n")
    mixed = tmp_path / "c.jsonl"
    mixed.write_bytes(good.read_bytes() + b"{bad\n" + good.read_bytes()[:20000].rsplit(b"\n", 1)[0] + b"\n")
    args = [str(good), str(bad), str(mixed), str(good)]
    for extra in (["--keep-going"], []):
        jobs = invoke([*PIPELINE, "--jobs", "2", *extra, *args])
        dask = invoke([*PIPELINE, "--dask", cluster, "--block-size", "64k", *extra, *args])
        assert jobs.status == dask.status == 3
        assert dask.stdout == jobs.stdout and dask.stderr == jobs.stderr
    assert "b.json: not JSON" in dask.stderr and "3 files" not in dask.stderr  # without --keep-going: stops there


def test_dask_local_cluster(tmp_path):
    """`--dask local:2` starts its own cluster (and stops it)."""
    src = tmp_path / "in.jsonl"
    src.write_bytes(open(os.path.join(EXAMPLES, "batch.jsonl"), "rb").read() * 20)
    one = invoke(["-q", *PIPELINE, str(src)])
    dask = invoke(["-q", *PIPELINE, "--dask", "local:2", "--block-size", "50k", str(src)])
    assert dask.status == 0 and dask.stdout == one.stdout and len(dask.lines) == 80


@pytest.mark.parametrize("args,status,message", [
    (["--dask", "local:x"], 2, "--dask local:x: expected local or local:N"),
    (["--block-size", "1M"], 2, "--block-size goes with --dask"),
    (["--dask", "local", "-"], 2, "--dask needs FILE arguments, not stdin"),
])
def test_dask_usage_errors(args, status, message):
    r = invoke([*PIPELINE, *args, *([] if "-" in args else [os.path.join(EXAMPLES, "batch.jsonl")])])
    assert r.status == status and r.stderr.startswith("hermesctx: error: ") and message in r.stderr
    assert len(r.stderr.splitlines()) == 1


def test_without_dask_installed_the_error_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # what find_spec says of a module not installed
    r = invoke([*PIPELINE, "--dask", "local:2", os.path.join(EXAMPLES, "batch.jsonl")])
    assert r.status == 2 and len(r.stderr.splitlines()) == 1
    assert "--dask needs dask.distributed, which is not installed: pipx inject hermesctx 'dask[distributed]', " \
           "or from a checkout: pip install '.[dask]'" in r.stderr
