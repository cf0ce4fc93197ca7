"""summary.choose: the one provider -> summarizer rule, the same in compress and trajectory."""

from __future__ import annotations

import pytest
from conftest import EXAMPLES, invoke
from fakeserver import FakeServer

from hermesctx.config import load_settings
from hermesctx.summary import choose, summarizer_name


def settings_with(tmp_path, text: str):
    path = tmp_path / "hermesctx.yaml"
    path.write_text(text, encoding="utf-8")
    return load_settings(str(path), env={})


@pytest.mark.parametrize(("provider", "expected"), [
    ("anthropic", "anthropic"), ("openai", "openai"), ("openrouter", "openai"), ("custom", "openai"),
    ("ollama", "openai"), ("vllm", "openai"), ("lmstudio", "openai"), ("OpenRouter", "openai"),
    ("auto", "extractive"), ("nous", "extractive"), ("", "extractive"),
])
def test_provider_rule(tmp_path, provider, expected):
    settings = settings_with(tmp_path, f"auxiliary:\n  compression:\n    provider: '{provider}'\n")
    assert summarizer_name(settings) == expected
    assert choose(settings).name == expected


def test_summarizer_name_key_and_flag_win(tmp_path):
    settings = settings_with(tmp_path, "summarizer:\n  name: anthropic\n"
                                       "auxiliary:\n  compression:\n    provider: openrouter\n")
    assert summarizer_name(settings) == "anthropic"
    assert summarizer_name(settings, "extractive") == "extractive"


def test_choose_takes_the_auxiliary_settings(tmp_path):
    settings = settings_with(tmp_path, "auxiliary:\n  compression:\n    provider: openrouter\n"
                                       "    model: m1\n    base_url: http://127.0.0.1:9/v1\n    timeout: 7\n")
    engine = choose(settings)
    assert (engine.name, engine.model, engine.base_url, engine.timeout) == ("openai", "m1", "http://127.0.0.1:9/v1", 7)
    engine = choose(settings, model="m2", timeout=3, retries=0, max_failures=0)
    assert (engine.model, engine.timeout, engine.retries, engine.max_failures) == ("m2", 3, 0, 0)


def test_compress_and_trajectory_choose_the_same_summarizer(tmp_path):
    """Regression (issue 17): provider openrouter gave openai in compress and extractive in
    trajectory. Both now call the one rule: both send their prompts to the configured endpoint."""
    with FakeServer(default_text="## Goal\nFix login.") as server:
        config = tmp_path / "hermesctx.yaml"
        config.write_text("auxiliary:\n  compression:\n    provider: openrouter\n    model: or-model\n"
                          f"    base_url: {server.url}/v1\n    api_key: sk-or-test-000000000000\n",
                          encoding="utf-8")
        compressed = invoke(["compress", "--config", str(config), "--protect-last-n", "6", "--tail-tokens", "400",
                             str(EXAMPLES / "coding-session.json")])
        assert compressed.status == 0, compressed.stderr
        assert len(server.requests) == 1
        trajectories = invoke(["trajectory", "--config", str(config), "--target-max-tokens", "300",
                               "--retry-delay", "0", str(EXAMPLES / "trajectories.jsonl")])
        assert trajectories.status == 0, trajectories.stderr
        assert len(server.requests) == 3  # two compressed trajectories, one request each
        assert {req.body["model"] for req in server.requests} == {"or-model"}
