"""Run Hermes Agent 0.19.0 functions in a separate interpreter (the oracle venv) and return
their results as JSON. Used only by tests marked ``oracle`` (``make oracle``); skipped unless
``HERMESCTX_ORACLE_PYTHON`` names a Python that has ``hermes-agent==0.19.0`` installed.

A call is a small Python snippet run by that interpreter: it reads JSON input from stdin as
``data`` and must assign ``result`` (JSON-able). HERMES_HOME points at a temp dir and proxies at
a dead port, so Hermes touches neither the user's files nor the network.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import textwrap

import pytest

ORACLE = os.environ.get("HERMESCTX_ORACLE_PYTHON")

needs_oracle = pytest.mark.skipif(not ORACLE, reason="set HERMESCTX_ORACLE_PYTHON (make oracle)")

_PRELUDE = """
import json, sys
data = json.loads(sys.stdin.read())
"""
_EPILOGUE = """
sys.stdout.write(json.dumps(result, ensure_ascii=False))
"""


def hermes(snippet: str, data) -> object:
    """Run ``snippet`` under Hermes with ``data``; return its ``result``."""
    code = _PRELUDE + textwrap.dedent(snippet) + _EPILOGUE
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, HERMES_HOME=home, HTTP_PROXY="http://127.0.0.1:9",
                   HTTPS_PROXY="http://127.0.0.1:9", NO_PROXY="", PYTHONIOENCODING="utf-8")
        proc = subprocess.run([ORACLE, "-c", code], input=json.dumps(data), capture_output=True,
                              text=True, env=env, timeout=120, cwd=home)
    if proc.returncode != 0:
        raise AssertionError(f"oracle failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout)
