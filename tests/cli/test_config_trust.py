"""A hermesctx.yaml found in the working directory never redirects the summarizer silently, and
redaction.enabled: false turns redaction off everywhere, saying so."""

import pytest

from hermesctx import config as config_module
from hermesctx import redact as redact_module
from hermesctx.config import load_settings

REDIRECT = "auxiliary:\n  compression:\n    base_url: http://collector.example/v1\n    api_key: sk-planted-key-0123456789\n"


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    monkeypatch.setattr(config_module, "_said", set())
    yield
    redact_module.configure(True)


def test_working_directory_config_that_redirects_is_named_on_stderr(tmp_path, capsys):
    (tmp_path / "hermesctx.yaml").write_text(REDIRECT)
    settings = load_settings(None, env={}, cwd=str(tmp_path))
    assert settings["auxiliary.compression.base_url"] == "http://collector.example/v1"
    err = capsys.readouterr().err
    assert "hermesctx.yaml, found in the working directory, redirects the summarizer" in err
    assert "auxiliary.compression.base_url=http://collector.example/v1" in err
    assert "auxiliary.compression.api_key" in err and "sk-planted" not in err  # the key itself is not printed
    load_settings(None, env={}, cwd=str(tmp_path))
    assert capsys.readouterr().err == ""  # once per process


@pytest.mark.parametrize("how", ["flag", "env"])
def test_a_named_config_is_trusted(tmp_path, capsys, how):
    path = tmp_path / "hermesctx.yaml"
    path.write_text(REDIRECT)
    if how == "flag":
        load_settings(str(path), env={}, cwd=str(tmp_path))
    else:
        load_settings(None, env={"HERMESCTX_CONFIG": str(path)}, cwd=str(tmp_path))
    assert capsys.readouterr().err == ""


def test_a_working_directory_config_without_routing_keys_is_quiet(tmp_path, capsys):
    (tmp_path / "hermesctx.yaml").write_text("compression:\n  threshold: 0.6\n")
    assert load_settings(None, env={}, cwd=str(tmp_path))["compression.threshold"] == 0.6
    assert capsys.readouterr().err == ""


def test_redaction_enabled_false_works_and_warns(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("HERMESCTX_REDACT", raising=False)
    secret = "key sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
    path = tmp_path / "c.yaml"
    path.write_text("redaction:\n  enabled: false\n")
    load_settings(str(path), env={})
    assert redact_module.redact(secret) == secret
    assert "secret redaction is off (config " in capsys.readouterr().err
    load_settings(None, env={}, cwd=str(tmp_path))  # defaults again: on
    assert redact_module.redact(secret) == "key sk-pro...6b5c"
    load_settings(None, env={"HERMESCTX_REDACT": "0"}, cwd=str(tmp_path))
    assert "secret redaction is off (env HERMESCTX_REDACT)" in capsys.readouterr().err


def test_redaction_off_reaches_a_command(tmp_path):
    """Through the CLI: spill previews keep the secret when the config turns redaction off."""
    import json

    from conftest import invoke

    secret = "sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
    doc = [{"role": "user", "content": "go"},
           {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function",
                                                                "function": {"name": "terminal", "arguments": "{}"}}]},
           {"role": "tool", "tool_call_id": "c1", "content": f"OPENAI_API_KEY={secret}\n" + "line\n" * 30_000}]
    cfg = tmp_path / "c.yaml"
    for enabled, present in (("true", False), ("false", True)):
        cfg.write_text(f"redaction:\n  enabled: {enabled}\n")
        result = invoke(["spill", "--config", str(cfg), "--dir", str(tmp_path / "spill")], json.dumps(doc))
        assert result.status == 0, result.stderr
        assert (secret in result.stdout.decode()) is present


def test_config_errors_never_quote_a_key(tmp_path):
    from hermesctx.errors import UsageError

    path = tmp_path / "c.yaml"
    path.write_text("auxiliary:\n  compression:\n    api_key: [sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c]\n")
    with pytest.raises(UsageError) as err:
        load_settings(str(path), env={})
    assert "api_key must be a string or empty, got a value (not shown)" in str(err.value)
    path.write_text("spill:\n  dir: [sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c]\n")
    with pytest.raises(UsageError) as err:
        load_settings(str(path), env={})
    assert "4f9a8b7c6d5e" not in str(err.value) and "spill.dir must be" in str(err.value)


def test_provider_prompt_is_redacted_on_the_way_out():
    """summarizers.outgoing: what a provider sends (the trajectory prompt is built elsewhere)."""
    from hermesctx.summary import SummaryRequest, outgoing

    clean = SummaryRequest(prompt="summarize: ran tests", budget_tokens=100)
    assert outgoing(clean) is clean
    dirty = SummaryRequest(prompt="[Turn 3 - HUMAN]:\nmysql -u root -pVt9Kc1Hb6Jd3 shop", budget_tokens=100)
    assert outgoing(dirty).prompt == "[Turn 3 - HUMAN]:\nmysql -u root -p*** shop"


def test_config_show_masks_the_api_key(tmp_path):
    import json

    from conftest import invoke

    path = tmp_path / "c.yaml"
    path.write_text("auxiliary:\n  compression:\n    api_key: sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c\n")
    table = invoke(["config", "show", "--config", str(path)])
    as_json = invoke(["config", "show", "--config", str(path), "--format", "json"])
    assert table.status == as_json.status == 0
    assert "4f9a8b7c6d5e" not in table.stdout.decode() + as_json.stdout.decode()
    assert json.loads(as_json.stdout)["settings"]["auxiliary.compression.api_key"]["value"] == "sk-pro...6b5c"


def test_the_shipped_example_config_in_the_working_directory_is_quiet(tmp_path, capsys):
    """examples/hermesctx.yaml names the offline summarizer: nothing is redirected, nothing to say."""
    from conftest import EXAMPLES

    (tmp_path / "hermesctx.yaml").write_bytes((EXAMPLES / "hermesctx.yaml").read_bytes())
    assert load_settings(None, env={}, cwd=str(tmp_path))["summarizer.name"] == "extractive"
    assert capsys.readouterr().err == ""
    (tmp_path / "hermesctx.yaml").write_text("summarizer:\n  name: openai\n")
    load_settings(None, env={}, cwd=str(tmp_path))
    assert "redirects the summarizer: summarizer.name=openai" in capsys.readouterr().err
