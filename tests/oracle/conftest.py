"""Differential tests compare with Hermes 0.19.0: hermesctx's redactor runs Hermes's rules only
(HERMESCTX_REDACT=hermes; hermesctx's added forms and kept benign values are tested in
tests/redact/test_redact.py)."""

import pytest


@pytest.fixture(autouse=True)
def hermes_redaction_rules(monkeypatch):
    monkeypatch.setenv("HERMESCTX_REDACT", "hermes")
