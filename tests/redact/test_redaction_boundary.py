"""Redaction where text leaves at the command's boundary: error lines, warnings, the report
(file and stderr), and the archive note in the summary. The secrets corpus is planted in input
paths, in a provider's error answer and in the archive directory's name: no 8-character run of
a planted secret may reach any of them. The archive FILE keeps the messages verbatim (the
lossless store): checked too, so that stays a decision, not an accident."""

from __future__ import annotations

import json

import pytest
from conftest import EXAMPLES, invoke
from fakeserver import FakeServer, Reply
from redaction_corpus import SECRETS, survivors

IDS = [f"secret{i}" for i in range(len(SECRETS))]  # test ids name no secret (tmp_path holds them)


@pytest.fixture(autouse=True)
def _redaction_on(monkeypatch):
    monkeypatch.delenv("HERMESCTX_REDACT", raising=False)


@pytest.mark.parametrize("text,secret", SECRETS, ids=IDS)
def test_error_lines(text, secret, tmp_path):
    missing = invoke(["prune", f"{tmp_path}/absent/{text}"])
    assert missing.status == 5 and missing.stderr.startswith("hermesctx: error: cannot read")
    unwritable = invoke(["prune", "--report", f"{tmp_path}/absent/{text}"], [{"role": "user", "content": "x"}])
    assert unwritable.status == 5, unwritable.stderr
    assert not survivors(secret, missing.stderr + unwritable.stderr)


@pytest.fixture(scope="module")
def server():
    with FakeServer() as srv:
        yield srv


@pytest.mark.parametrize("text,secret", SECRETS, ids=IDS)
def test_fallback_warning_report_summary_and_archive_note(text, secret, tmp_path, server):
    # (refused twice: as the live prefix, then as the serialized turns)
    server.script(*[Reply("error", status=400, error="other", message=text)] * 2)
    # the archive directory's name holds the secret too (one line without '/': a directory name)
    archive = tmp_path / ("archive" if "/" in text or "\n" in text else text)
    report = tmp_path / "report.json"
    session = json.loads((EXAMPLES / "coding-session.json").read_text())
    session[3]["content"] = f"please use {text} for the deploy"
    r = invoke(["compress", "--summarizer", "openai", "--base-url", server.url + "/v1", "--api-key", "k",
                "--protect-last-n", "6", "--tail-tokens", "400", "--archive", str(archive),
                "--report", str(report)], session, environ={"HERMESCTX_SUMMARIZER_RETRIES": "0"})
    assert r.status == 0, r.stderr
    assert "hermesctx: warning: the openai summarizer failed (other: openai summarizer (gpt-4o-mini): HTTP 400" in r.stderr
    rep = report.read_text()
    assert json.loads(rep)["fallback"]["used"] == "extractive"
    summary = next(m["content"] for m in r.json if "archived in" in str(m["content"]))
    assert not survivors(secret, r.stderr + rep + summary)
    [kept] = archive.glob("*.jsonl")  # the lossless store keeps the transcript verbatim
    assert text in "".join(json.loads(line)["content"] for line in kept.read_text().splitlines()
                           if isinstance(json.loads(line).get("content"), str))


@pytest.mark.parametrize("text,secret", SECRETS[:6], ids=IDS[:6])
def test_report_on_stderr(text, secret, server):
    # (refused twice: as the live prefix, then as the serialized turns)
    server.script(*[Reply("error", status=400, error="other", message=text)] * 2)
    r = invoke(["compress", "--summarizer", "openai", "--base-url", server.url + "/v1", "--api-key", "k",
                "--protect-last-n", "6", "--tail-tokens", "400", "--report", "-", str(EXAMPLES / "coding-session.json")],
               environ={"HERMESCTX_SUMMARIZER_RETRIES": "0"})
    assert r.status == 0 and '"fallback"' in r.stderr
    assert not survivors(secret, r.stderr)
