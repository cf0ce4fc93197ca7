"""A fallback from the requested summarizer is visible: a warning naming the provider error,
the report's ``fallback``; ``--no-fallback`` (config summarizer.fallback: false) exits 4."""

from __future__ import annotations

import json

import pytest
from conftest import EXAMPLES, invoke
from fakeserver import FakeServer, Reply

SESSION = str(EXAMPLES / "coding-session.json")
ARGS = ["compress", "--protect-last-n", "6", "--tail-tokens", "400"]
NO_KEY = {"OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""}


def test_missing_key_falls_back_with_a_warning_and_a_report(tmp_path):
    report = tmp_path / "report.json"
    r = invoke([*ARGS, "--summarizer", "openai", "--report", str(report), SESSION], environ=NO_KEY)
    assert r.status == 0, r.stderr
    warning = next(line for line in r.stderr.splitlines() if line.startswith("hermesctx: warning: the openai"))
    assert "no API key for the openai summarizer" in warning and "written by extractive" in warning
    assert "--no-fallback" in warning
    info = json.loads(report.read_text())["fallback"]
    assert info["requested"] == "openai" and info["used"] == "extractive" and info["kind"] == "auth"
    assert "no API key" in info["error"]


def test_no_fallback_exits_4_naming_the_error():
    r = invoke([*ARGS, "--summarizer", "openai", "--no-fallback", SESSION], environ=NO_KEY)
    assert r.status == 4
    assert r.stdout == b""
    [line] = r.stderr.strip().splitlines()
    assert line.startswith("hermesctx: error: ") and "the openai summarizer failed (auth)" in line
    assert "no API key" in line


def test_no_fallback_from_the_config(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("summarizer:\n  fallback: false\n", encoding="utf-8")
    r = invoke([*ARGS, "--config", str(config), "--summarizer", "anthropic", SESSION],
               environ={"ANTHROPIC_API_KEY": ""})
    assert r.status == 4, r.stderr
    assert invoke([*ARGS, "--config", str(config), "--fallback", "--summarizer", "anthropic", SESSION],
                  environ={"ANTHROPIC_API_KEY": ""}).status == 0


@pytest.mark.parametrize("no_fallback", [False, True])
def test_dead_endpoint_error_is_redacted(no_fallback):
    secret = "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcd"
    with FakeServer() as server:
        server.script(Reply("error", status=401, error="auth", message=f"Incorrect API key provided: {secret}"))
        extra = ["--no-fallback"] if no_fallback else []
        r = invoke([*ARGS, "--summarizer", "openai", "--base-url", server.url + "/v1", "--api-key", secret,
                    *extra, SESSION])
    assert r.status == (4 if no_fallback else 0), r.stderr
    assert "openai summarizer failed (auth" in r.stderr
    assert secret[8:20] not in r.stderr


def test_extractive_primary_gives_no_fallback_warning():
    r = invoke([*ARGS, "--summarizer", "extractive", SESSION])
    assert r.status == 0 and "warning: the" not in r.stderr


def test_run_pipeline_takes_fallback_false(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("pipeline:\n  - compress: {summarizer: openai, fallback: false, protect_last_n: 6, "
                      "tail_tokens: 400}\n", encoding="utf-8")
    r = invoke(["run", "--config", str(config), SESSION], environ=NO_KEY)
    assert r.status == 4 and "the openai summarizer failed (auth)" in r.stderr
    config.write_text("pipeline:\n  - compress: {summarizer: openai, protect_last_n: 6, tail_tokens: 400}\n",
                      encoding="utf-8")
    r = invoke(["run", "--config", str(config), SESSION], environ=NO_KEY)
    assert r.status == 0 and "written by extractive instead" in r.stderr
