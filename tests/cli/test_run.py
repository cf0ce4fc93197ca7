"""`hermesctx run` == the shell pipe of the same stages, on every example transcript."""

import os

import pytest
from conftest import EXAMPLES, invoke


def pipe(stages, raw):
    for argv in stages:
        r = invoke(["-q", *argv], raw)
        assert r.status == 0, (argv, r.stderr)
        raw = r.stdout
    return raw


@pytest.mark.parametrize("example", ["coding-session.json", "anthropic-session.json", "batch.jsonl"])
def test_full_pipeline_equals_the_pipe(example, tmp_path):
    spill_dir = tmp_path / "spill"
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"""
model: {{context_length: 8000}}
compression: {{threshold: 0.5, target_ratio: 0.2, protect_last_n: 4}}
prompt_caching: {{cache_ttl: 1h}}
spill: {{dir: {spill_dir}}}
pipeline:
  - spill: {{threshold: "1000"}}
  - prune
  - compress: {{if_needed: true}}
  - sanitize
  - cache-mark
""")
    raw = open(os.path.join(EXAMPLES, example), "rb").read()
    c = ["--config", str(cfg)]
    expected = pipe([["spill", *c, "--threshold", "1000"], ["prune", *c], ["compress", *c, "--if-needed"],
                     ["sanitize"], ["cache-mark", *c]], raw)
    r = invoke(["-q", "run", *c], raw)
    assert r.status == 0, r.stderr
    assert r.stdout == expected
    if example == "coding-session.json":
        assert b"<persisted-output>" in expected and any(spill_dir.iterdir())
    if example == "batch.jsonl":
        assert invoke(["-q", "run", *c, "--jobs", "2"], raw).stdout == expected


def test_run_reports_one_line_per_stage_and_quiet_silences(tmp_path):
    raw = open(os.path.join(EXAMPLES, "coding-session.json"), "rb").read()
    r = invoke(["run", "--pipeline", "prune,sanitize"], raw)
    assert [line.split(":")[0] for line in r.stderr.splitlines()] == ["prune", "sanitize"]
    assert invoke(["-q", "run", "--pipeline", "prune,sanitize"], raw).stderr == ""


def test_unknown_context_engine_is_a_clear_error(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("context: {engine: lcm}\npipeline: [prune, compress]\n")
    r = invoke(["run", "--config", str(cfg)], b"[]")
    assert r.status == 2
    assert r.stderr == ("hermesctx: error: unknown engine 'lcm' (installed: compressor); a plugin engine "
                        "registers in the entry-point group hermesctx.engines\n")
    # a pipeline without a compress stage does not use the engine
    cfg.write_text("context: {engine: lcm}\npipeline: [prune]\n")
    assert invoke(["run", "--config", str(cfg)], b'[{"role": "user", "content": "hi"}]').status == 0
