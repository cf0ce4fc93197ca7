"""`config show` masks secrets (API keys, tokens, passwords in URLs and in dict values) unless
--show-secrets, whatever redaction.enabled says."""

from __future__ import annotations

import json

import pytest
from conftest import invoke

KEY = "sk-or-v1-Vq7Lm2Xw9Zr4Tn8Kb3Hd6Jf1Gs5Pa0Ce"
URL_PASSWORD = "Hx7Qm2Lw9Zr4"
BODY_TOKEN = "Kb3Hd6Jf1Gs5Pa0CeQm4"
CONFIG = f"""redaction:
  enabled: false
model:
  base_url: https://bob:{URL_PASSWORD}@llm.internal/v1
auxiliary:
  compression:
    api_key: {KEY}
    base_url: https://proxy.internal/v1?key={KEY}
    extra_body:
      api_token: {BODY_TOKEN}
"""


@pytest.fixture
def config(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(CONFIG, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_masked_by_default(config, fmt):
    r = invoke(["config", "show", "--config", config, "--format", fmt])
    assert r.status == 0, r.stderr
    out = r.stdout.decode()
    for secret in (KEY, KEY[8:20], URL_PASSWORD, BODY_TOKEN):
        assert secret not in out
    assert "https://bob:***@llm.internal/v1" in out
    if fmt == "json":
        settings = json.loads(out)["settings"]
        assert settings["auxiliary.compression.api_key"]["value"] == "sk-or-...a0Ce"
        assert settings["auxiliary.compression.extra_body"]["value"] == {"api_token": "Kb3Hd6...eQm4"}


def test_show_secrets(config):
    r = invoke(["config", "show", "--config", config, "--format", "json", "--show-secrets"])
    settings = json.loads(r.stdout)["settings"]
    assert settings["auxiliary.compression.api_key"]["value"] == KEY
    assert settings["model.base_url"]["value"] == f"https://bob:{URL_PASSWORD}@llm.internal/v1"
    assert settings["auxiliary.compression.extra_body"]["value"] == {"api_token": BODY_TOKEN}
