"""Config file (show/check, precedence, Hermes's keys) and `hermesctx run` (== the shell pipe)."""

import json
import os

import pytest
from conftest import EXAMPLES, invoke

FIXTURE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "hermes-config.yaml")


def pipe(stages, raw):
    for argv in stages:
        r = invoke(argv, raw)
        assert r.status == 0, (argv, r.stderr)
        raw = r.stdout
    return raw


def test_run_equals_the_shell_pipe_with_a_hermes_config():
    raw = open(os.path.join(EXAMPLES, "coding-session.json"), "rb").read()
    r = invoke(["run", "--config", FIXTURE], raw)
    assert r.status == 0, r.stderr
    expected = pipe([["prune", "--config", FIXTURE], ["compress", "--config", FIXTURE, "--tail-tokens", "400",
                                                      "--protect-last-n", "6"],
                     ["sanitize"], ["cache-mark", "--config", FIXTURE]], raw)
    assert r.stdout == expected
    assert '"ttl":"1h"' in r.stdout.decode()  # prompt_caching.cache_ttl from Hermes's section
    assert "compress: Compressed: 26 →" in r.stderr


def test_run_batch_with_jobs_keeps_order_and_equals_one_job(tmp_path):
    raw = open(os.path.join(EXAMPLES, "batch.jsonl"), "rb").read() * 3
    one = invoke(["-q", "run", "--pipeline", "prune,sanitize,cache-mark"], raw)
    two = invoke(["run", "--pipeline", "prune,sanitize,cache-mark", "--jobs", "2", "--report",
                  str(tmp_path / "r.jsonl")], raw)
    assert one.status == two.status == 0
    assert one.stdout == two.stdout and len(one.lines) == 12
    reports = [json.loads(line) for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert [r["stage"] for r in reports[:3]] == ["prune", "sanitize", "cache-mark"] and reports[-1]["line"] == 12


def test_run_stops_at_a_bad_document_with_its_location():
    raw = b'[{"role": "user", "content": "x"}]\n[5]\n[{"role": "user", "content": "y"}]\n'
    for jobs in ("1", "2"):
        r = invoke(["-q", "run", "--pipeline", "prune", "--jobs", jobs], raw)
        assert r.status == 3 and r.stdout.count(b"\n") == 1
        assert r.stderr.strip() == "hermesctx: error: line 2: messages[0]: expected a message object, got a number"


def test_run_validates_the_pipeline_before_reading(tmp_path):
    bad = tmp_path / "c.yaml"
    bad.write_text("pipeline: [prune, {compress: {if_neded: true}}]\n")
    r = invoke(["run", "--config", str(bad)], b"[]")
    assert r.status == 2 and "unknown option 'if_neded' for compress" in r.stderr
    empty = tmp_path / "empty.yaml"
    empty.write_text("pipeline: []\n")
    r = invoke(["run", "--config", str(empty)], b"[]")
    assert r.status == 2 and "no pipeline" in r.stderr


def test_compression_disabled_skips_compress(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("compression: {enabled: false}\npipeline: [compress, sanitize]\n")
    raw = open(os.path.join(EXAMPLES, "coding-session.json"), "rb").read()
    r = invoke(["run", "--config", str(cfg)], raw)
    assert r.status == 0 and r.json == json.loads(raw)


def test_config_check_names_key_and_range(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("compression:\n  threshold: 1.5\n  target_ratio: 0.05\ncontext:\n  engine: lcm\nbogus: 1\n")
    r = invoke(["config", "check", str(bad)])
    assert r.status == 1
    lines = r.stderr.splitlines()
    assert f"{bad}: compression.threshold = 1.5 is out of range; allowed: in (0, 1]" in lines
    assert f"{bad}: compression.target_ratio = 0.05 is out of range; allowed: in [0.10, 0.80]" in lines
    assert f"{bad}: context.engine: unknown engine 'lcm' (installed: compressor); a plugin engine registers " \
           "in the entry-point group hermesctx.engines" in lines
    assert f"{bad}: unknown key bogus" in lines and lines[-1] == f"4 problems in {bad}"
    good = invoke(["config", "check", FIXTURE])
    assert good.status == 0 and good.stderr.strip() == f"{FIXTURE}: ok"


def test_config_show_precedence_and_sources(tmp_path):
    r = invoke(["config", "show", "--config", FIXTURE, "--format", "json"],
               environ={"HERMESCTX_COMPRESSION_THRESHOLD": "0.6"})
    settings = r.json["settings"]
    assert settings["compression.threshold"] == {"value": 0.6, "source": "env HERMESCTX_COMPRESSION_THRESHOLD",
                                                 "env": "HERMESCTX_COMPRESSION_THRESHOLD"}
    assert settings["compression.target_ratio"]["source"] == f"config {FIXTURE}"
    assert settings["model.default"]["value"] == "anthropic/claude-sonnet-4.5"
    assert settings["spill.turn_budget"]["source"] == "default"
    table = invoke(["config", "show", "--config", FIXTURE]).stdout.decode()
    assert "prompt_caching.cache_ttl" in table and f"1h  (config {FIXTURE})" in table


def test_flags_beat_env_beat_config():
    raw = open(os.path.join(EXAMPLES, "coding-session.json"), "rb").read()
    env = {"HERMESCTX_PROMPT_CACHING_CACHE_TTL": "5m"}
    assert '"ttl":"1h"' not in invoke(["cache-mark", "--config", FIXTURE], raw, environ=env).stdout.decode()
    assert '"ttl":"1h"' in invoke(["cache-mark", "--config", FIXTURE, "--ttl", "1h"], raw, environ=env).stdout.decode()


@pytest.mark.skipif(not __import__("importlib").util.find_spec("dask"), reason="dask not installed")
def test_dask_helper_matches_single_process(tmp_path):
    from dask.distributed import Client, LocalCluster

    from hermesctx.distributed import run_files

    src = tmp_path / "in.jsonl"
    src.write_bytes(open(os.path.join(EXAMPLES, "batch.jsonl"), "rb").read() * 2)
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None,
                      scheduler_kwargs={"dashboard": False}) as cluster, Client(cluster):
        out = run_files([str(src)], ["prune", "sanitize", "cache-mark"], str(tmp_path / "out"))
    local = invoke(["-q", "run", "--pipeline", "prune,sanitize,cache-mark"], src.read_bytes())
    assert b"".join(open(p, "rb").read() for p in out) == local.stdout


def test_a_hermes_config_without_pipeline_runs_hermes_turn(tmp_path):
    """The seed's config.yaml as it is (no `pipeline:`): compress if needed, then cache-mark."""
    hermes = tmp_path / "config.yaml"
    hermes.write_text("\n".join(line for line in open(FIXTURE).read().split("pipeline:")[0].splitlines()) + "\n")
    raw = open(os.path.join(EXAMPLES, "coding-session.json"), "rb").read()
    r = invoke(["run", "--config", str(hermes)], raw)
    assert r.status == 0, r.stderr
    expected = pipe([["compress", "--config", str(hermes), "--if-needed"], ["cache-mark", "--config", str(hermes)]], raw)
    assert r.stdout == expected and '"ttl":"1h"' in r.stdout.decode()
    assert "compress: Not compressed" in r.stderr  # 5k tokens of a 200k window
    small = tmp_path / "small.yaml"
    small.write_text(hermes.read_text().replace("context_length: 200000", "context_length: 6000"))
    r = invoke(["-q", "run", "--config", str(small)], raw)
    assert r.status == 0 and len(r.json) < len(json.loads(raw))
    shown = invoke(["config", "show", "--config", str(hermes), "--format", "json"]).json["settings"]["pipeline"]
    assert shown == {"value": [{"compress": {"if_needed": True}}, "cache-mark"], "source": "default", "env": None}
