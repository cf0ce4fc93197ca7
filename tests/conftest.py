"""Shared test helpers: run the CLI in-process with injected streams (no subprocess, no sys.*)."""

from __future__ import annotations

import io as _io
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from hermesctx.cli import run
from hermesctx.context import Env

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@dataclass
class Result:
    status: int
    stdout: bytes
    stderr: str

    @property
    def json(self):
        return json.loads(self.stdout)

    @property
    def lines(self) -> list:
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]


def invoke(args: list[str], stdin: bytes | str | object = b"", *, environ: dict | None = None,
           stdin_isatty: bool = False) -> Result:
    """Run ``hermesctx ARGS`` in-process. ``stdin`` may be bytes, str, or a JSON-able object."""
    if not isinstance(stdin, (bytes, str)):
        stdin = json.dumps(stdin, ensure_ascii=False)
    if isinstance(stdin, str):
        stdin = stdin.encode("utf-8")
    base = {k: v for k, v in os.environ.items() if not k.startswith("HERMESCTX_")}
    base.update(environ or {})
    out, err = _io.BytesIO(), _io.StringIO()
    env = Env(stdin=_io.BytesIO(stdin), stdout=out, stderr=err, environ=base,
              stdin_isatty=stdin_isatty)
    status = run(list(args), env)
    return Result(int(status), out.getvalue(), err.getvalue())


@pytest.fixture
def cli():
    return invoke


def load_example(name: str):
    return json.loads((EXAMPLES / name).read_text(encoding="utf-8"))


# Hypothesis profiles: `ci` (default, bounded time) and `fuzz` (make fuzz: long).
try:
    from hypothesis import HealthCheck, settings

    settings.register_profile("ci", max_examples=60, deadline=None, derandomize=True,
                              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    settings.register_profile("fuzz", max_examples=3000, deadline=None,
                              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
except ImportError:  # pragma: no cover
    pass


PLUGIN_PACKAGE = Path(__file__).resolve().parent / "plugin_pkg"


@pytest.fixture(scope="session")
def plugin_dir(tmp_path_factory) -> Path:
    """The demo plugin of tests/plugin_pkg, installed with pip (offline) once per session."""
    target = tmp_path_factory.mktemp("plugins")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps",
                    "--disable-pip-version-check", "--target", str(target), str(PLUGIN_PACKAGE)],
                   check=True, capture_output=True, timeout=120)
    assert (target / "hermesctx_demo_plugin-0.1.0.dist-info" / "entry_points.txt").is_file()
    return target
