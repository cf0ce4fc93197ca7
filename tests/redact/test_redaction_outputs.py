"""Every place text leaves hermesctx, on the secrets corpus: no 8-character run of a planted
secret reaches an extractive summary, a provider prompt, the static fallback, a spill preview or
a compress report. The secrets sit in long texts, so every cut these places make falls after them
(a key block's end marker or a URL's @host beyond the cut)."""

import json

import pytest
from redaction_corpus import SECRETS, survivors

from hermesctx import redact as redact_module
from hermesctx.stages.compress import compress_messages
from hermesctx.stages.spill import persisted_block
from hermesctx.summary import SummarizerError
from hermesctx.summary.extractive import ExtractiveSummarizer
from hermesctx.summary.fallback import static_fallback_summary

PAD = "word " * 30  # pushes a secret across the 80/120-character cuts


def transcript(text: str) -> list:
    args = json.dumps({"command": PAD + text + " && echo done", "path": "/srv/app/" + "x" * 90 + ".env",
                       "old_string": PAD + text, "new_string": "redacted"})
    nested = json.dumps({"body": json.dumps({"note": PAD, "payload": text})})
    return [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "set up the deploy"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": args}},
            {"id": "c2", "type": "function", "function": {"name": "patch", "arguments": args}},
            {"id": "c3", "type": "function", "function": {"name": "web_extract", "arguments": nested}}]},
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"output": PAD + text + "\nerror: failed", "exit_code": 1})},
        {"role": "tool", "tool_call_id": "c2", "content": "patched"},
        {"role": "tool", "tool_call_id": "c3", "content": PAD + text},
        {"role": "user", "content": f"Use this please: {PAD}{text}"},
        {"role": "assistant", "content": f"I will use {text} because it is configured."},
    ] + [{"role": "user" if i % 2 else "assistant", "content": f"turn {i} " + "filler " * 40} for i in range(24)]


class Recorder:
    """A provider that records the prompt it is sent and fails (so the static fallback runs)."""
    name = "recorder"

    def __init__(self):
        self.prompts = []

    def summarize(self, request):
        self.prompts.append(request.prompt)
        raise SummarizerError("boom " + request.prompt[-200:])


def _leaks(secret: str, *texts: str) -> list:
    escaped = json.dumps(secret)[1:-1]
    return [s for t in texts for s in survivors(secret, t) + survivors(escaped, t)]


@pytest.mark.parametrize("text,secret", SECRETS, ids=[s[:14] for _, s in SECRETS])
def test_no_secret_leaves(text, secret, monkeypatch):
    monkeypatch.delenv("HERMESCTX_REDACT", raising=False)
    messages = transcript(text)
    recorder = Recorder()
    out, report = compress_messages(messages, summarizer=recorder, fallback_summarizer=ExtractiveSummarizer(),
                                    protect_first_n=1, protect_last_n=4, tail_token_budget=200)
    assert recorder.prompts, report
    summary = next(m["content"] for m in out if "Completed Actions" in str(m.get("content")))
    fallback = static_fallback_summary(messages[1:-4], reason="boom")
    preview = persisted_block(PAD * 3 + text + "\n" + "log line\n" * 400, "/tmp/x.txt", 200)
    preview_whole = persisted_block(text + "\n" + "log line\n" * 400, "/tmp/x.txt", 60)
    assert _leaks(secret, recorder.prompts[0], summary, json.dumps(report), fallback, preview, preview_whole) == []


def test_redaction_off_lets_text_through(monkeypatch):
    """redaction.enabled: false (configure) reaches every place, and only there."""
    monkeypatch.delenv("HERMESCTX_REDACT", raising=False)
    text, secret = SECRETS[0]
    try:
        redact_module.configure(False)
        recorder = Recorder()
        compress_messages(transcript(text), summarizer=recorder, protect_first_n=1, protect_last_n=4,
                          tail_token_budget=200)
        assert secret in recorder.prompts[0]
        assert secret in persisted_block(text + "\n" + "x\n" * 1000, "/tmp/x.txt", 500)
    finally:
        redact_module.configure(True)
    assert secret not in persisted_block(text + "\n" + "x\n" * 1000, "/tmp/x.txt", 500)


def test_failure_reason_is_redacted_before_its_cut(monkeypatch):
    """A provider error quoting a JSON password field whose closing quote lies past the
    220-character cut of the reason (cut first, no rule would match what is left)."""
    monkeypatch.delenv("HERMESCTX_REDACT", raising=False)

    class Failing:
        name = "failing"

        def summarize(self, request):
            raise SummarizerError("upstream said: " + "x" * 179 + ' {"password": "Kc1Hb6Jd3Gf5Sa0"} rejected')

    out, report = compress_messages(transcript("nothing secret"), summarizer=Failing(), protect_first_n=1,
                                    protect_last_n=4, tail_token_budget=200)
    text = json.dumps(report) + json.dumps(out)
    assert "Kc1Hb6" not in text and "xxx" in text


def test_spilled_secret_is_masked_in_the_preview_and_restored_whole(tmp_path):
    from conftest import invoke

    text, secret = SECRETS[0]
    doc = [{"role": "user", "content": "go"},
           {"role": "assistant", "content": "", "tool_calls": [
               {"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}]},
           {"role": "tool", "tool_call_id": "c1", "content": text + "\n" + "line\n" * 30_000}]
    spilled = invoke(["spill", "--dir", str(tmp_path)], doc)
    assert spilled.status == 0 and "Full output saved to" in spilled.json[2]["content"]
    assert survivors(secret, spilled.json[2]["content"]) == []
    restored = invoke(["spill", "--restore", "--dir", str(tmp_path)], spilled.stdout)
    assert restored.status == 0 and restored.json == doc


@pytest.mark.parametrize("text,secret", SECRETS, ids=[s[:14] for _, s in SECRETS])
def test_trajectory_turns_are_redacted_before_their_cut(text, secret, monkeypatch):
    """A trajectory value over the 3,000-character cut: the secret straddles the cut (its head in
    the kept head, its end marker in the dropped middle), so it must be redacted first."""
    from hermesctx.summary.prompt import TRAJECTORY_CUT_HEAD, render_trajectory_turns

    monkeypatch.delenv("HERMESCTX_REDACT", raising=False)
    value = "x" * (TRAJECTORY_CUT_HEAD - 10) + " " + text + " " + "y" * 6000
    rendered = render_trajectory_turns([{"from": "tool", "value": value}], 0, 1)
    assert not _leaks(secret, rendered)
