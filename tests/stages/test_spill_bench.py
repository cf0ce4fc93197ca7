"""The benchmark scripts: a seeded generator (same seed, same bytes) and a runner that writes
its report. A tiny size keeps this quick; the real run is `make bench`."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys

from conftest import ROOT

GEN = ROOT / "bench" / "gen.py"
RUN = ROOT / "bench" / "run.py"


def test_generator_is_seeded_and_realistic(tmp_path):
    a, b, c = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    for path, seed in ((a, 3), (b, 3), (c, 4)):
        subprocess.run([sys.executable, str(GEN), "--size-mb", "1.5", "--seed", str(seed), "--out", str(path)],
                       check=True, capture_output=True)
    assert a.read_bytes() == b.read_bytes() != c.read_bytes()
    assert a.stat().st_size >= 1_500_000
    docs = [json.loads(line) for line in a.read_text().splitlines()]
    assert len(docs) >= 2
    tools = [m for d in docs for m in d["messages"] if m["role"] == "tool"]
    assert tools and any(len(m["content"]) > 200 for m in tools)
    calls = [tc for d in docs for m in d["messages"] for tc in m.get("tool_calls") or []]
    assert {tc["function"]["name"] for tc in calls} >= {"terminal", "read_file"}


def test_runner_writes_its_report(tmp_path):
    out = tmp_path / "latest.json"
    proc = subprocess.run([sys.executable, str(RUN), "--size-mb", "0.3", "--repeat", "1", "--only", "spill",
                           "--only", "sanitize", "--data", str(tmp_path), "--out", str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    report = json.loads(out.read_text())
    assert report["baseline"]["mb_per_s"] > 0
    stages = {s["stage"]: s for s in report["stages"]}
    assert set(stages) == {"spill", "sanitize"}
    for stage in stages.values():
        assert stage["exit"] == 0 and stage["ratio"] > 0
    assert stages["sanitize"]["target"] == 0.8 and stages["spill"]["target"] is None
    assert "Done when" in proc.stdout and report["done_when"]
    assert "spill" in proc.stdout and "MB/s" in proc.stdout


def test_io_fast_path_still_exact():
    """The speed work in jsonio.loads (orjson first, the digit scan only when a float came out)
    keeps every integer exact, including the 19-digit negatives orjson turns into floats."""
    from hermesctx.jsonio import loads

    assert loads(b'{"a": -9223372036854775809}') == {"a": -9223372036854775809}
    assert loads(b"[1.5, 123456789012345678901234]") == [1.5, 123456789012345678901234]
    assert loads(b"[18446744073709551615, 0.25]") == [18446744073709551615, 0.25]
    assert loads(b'{"id": "12345678901234567890123", "t": 0.7}') == {"id": "12345678901234567890123", "t": 0.7}
    value = loads(b"[" * 500 + b"1e2" + b"]" * 500)  # deep nesting: the float walk is iterative
    for _ in range(500):
        value = value[0]
    assert value == 100.0


def test_done_when_table_reads_the_stages_and_the_startup_report(tmp_path):
    # by its path, under its own name: eval/run.py is another module called "run"
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "bench" / "run.py")
    run = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        spec.loader.exec_module(run)
    finally:
        sys.path.pop(0)
    (tmp_path / "startup.json").write_text(json.dumps({"cases": [
        {"case": "--help", "ratio": 1.2, "target": 1.5, "exit": 0},
        {"case": "prune", "ratio": 2.1, "target": 2.5, "exit": 0},
        {"case": "spill", "ratio": 2.7, "target": 2.5, "exit": 0}]}))
    stages = [{"stage": "prune", "ratio": 0.6, "target": 0.5, "exit": 0, "peak_rss_mib": 30.0},
              {"stage": "sanitize", "ratio": 0.7, "target": 0.8, "exit": 0, "peak_rss_mib": 30.0}]
    rows = {r["source"]: r for r in run.done_when_rows(stages, str(tmp_path))}
    assert (rows["startup:--help"]["value"], rows["startup:--help"]["ok"]) == (1.2, True)
    assert rows["startup:commands"]["case"] == "spill" and rows["startup:commands"]["ok"] is False
    assert rows["stage:prune"]["ok"] is True and rows["stage:sanitize"]["ok"] is False
    assert rows["stage:cache-mark"]["value"] is None and rows["summary_scale"]["value"] is None
    assert len(rows) == len(run.DONE_WHEN)
