"""Plugins (hermesctx.plugins): the demo package of tests/plugin_pkg, installed for real with pip
(offline: its build backend is in the package) into a --target directory once per session, then
found through its entry points: its stage in `run` pipelines, its summarizer by `--summarizer` and
`summarizer.name`, its engine by `context.engine`, in-process and in a fresh `hermesctx` process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hermesctx import pipeline, plugins
from tests.conftest import EXAMPLES, ROOT, invoke

SESSION = str(EXAMPLES / "coding-session.json")


def _forget() -> None:
    plugins._found.clear()
    plugins._loaded.clear()
    for name in [m for m in sys.modules if m.startswith("hermesctx_demo_plugin")]:
        del sys.modules[name]


@pytest.fixture
def installed(plugin_dir, monkeypatch):
    """The demo plugin on sys.path for one test (entry points are read from sys.path)."""
    _forget()
    monkeypatch.syspath_prepend(str(plugin_dir))
    yield plugin_dir
    _forget()


def _config(tmp_path, text: str) -> str:
    path = tmp_path / "hermesctx.yaml"
    path.write_text(text)
    return str(path)


PIPELINE = """\
context:
  engine: keep-last
pipeline:
  - tag: {label: X, times: 2}
  - compress
  - sanitize
"""


def _last_user(messages: list) -> dict:
    return next(m for m in reversed(messages) if m["role"] == "user")


def test_discovery_lists_the_three_groups(installed):
    assert plugins.names(plugins.STAGES) == ["badkey", "tag"]
    assert plugins.names(plugins.SUMMARIZERS) == ["echo", "exits", "hangs"]
    assert plugins.names(plugins.ENGINES) == ["broken", "exits", "hangs", "keep-last", "leaky", "raises"]
    assert {p["package"] for p in plugins.listing()} == {"hermesctx-demo-plugin 0.1.0"}


def test_run_config_with_a_plugin_stage_and_engine(installed, tmp_path):
    source = json.loads(Path(SESSION).read_text())
    result = invoke(["run", "--config", _config(tmp_path, PIPELINE), SESSION])
    assert result.status == 0, result.stderr
    out = result.json
    assert _last_user(out)["content"] == "[X] [X] " + _last_user(source)["content"]
    dropped = len(source) - len(out)
    assert dropped > 0 and f"[keep-last engine dropped {dropped} messages" in out[0]["content"]
    assert "tag: tagged 1 message(s) with X" in result.stderr
    assert f"compress: Compressed: {len(source)} → {len(out)} messages (engine keep-last)" in result.stderr


def test_run_report_says_which_engine(installed, tmp_path):
    report = tmp_path / "report.jsonl"
    result = invoke(["run", "--config", _config(tmp_path, PIPELINE), "--report", str(report), SESSION])
    assert result.status == 0, result.stderr
    stages = {r["stage"]: r for r in map(json.loads, report.read_text().splitlines())}
    assert stages["compress"]["engine"] == "keep-last"
    assert stages["compress"]["engine_package"] == "hermesctx-demo-plugin 0.1.0"
    assert stages["compress"]["engine_report"]["dropped"] > 0
    assert stages["tag"] == {"stage": "tag", "tagged": 1, "label": "X"}


def test_compress_uses_the_engine_of_the_config(installed, tmp_path):
    config = _config(tmp_path, "context:\n  engine: keep-last\n")
    result = invoke(["compress", "--config", config, SESSION])
    assert result.status == 0, result.stderr
    assert "keep-last engine dropped" in result.json[0]["content"]
    env = invoke(["compress", SESSION], environ={"HERMESCTX_CONTEXT_ENGINE": "keep-last"})
    assert env.stdout == result.stdout


def test_engine_if_needed_keeps_a_small_transcript(installed, tmp_path):
    config = _config(tmp_path, "context:\n  engine: keep-last\n")
    result = invoke(["compress", "--config", config, "--if-needed", "--model", "gpt-4o", SESSION])
    assert result.status == 0, result.stderr
    assert result.json == json.loads(Path(SESSION).read_text())
    assert "Not compressed" in result.stderr


def test_plugin_summarizer_by_flag_and_by_config(installed, tmp_path):
    args = ["compress", "--protect-last-n", "4", "--tail-tokens", "200", SESSION]
    flag = invoke([*args, "--summarizer", "echo", "--summary-model", "m1"])
    assert flag.status == 0, flag.stderr
    assert "ECHO SUMMARY of" in flag.stdout.decode() and "(model m1)" in flag.stdout.decode()
    assert "(echo)" in flag.stderr
    config = invoke(["--quiet", *args, "--config", _config(tmp_path, "summarizer:\n  name: echo\n")])
    assert config.status == 0 and "ECHO SUMMARY of" in config.stdout.decode()


def test_unknown_engine_names_the_installed_ones(installed, tmp_path):
    result = invoke(["compress", SESSION], environ={"HERMESCTX_CONTEXT_ENGINE": "lcm"})
    assert result.status == 2
    assert result.stderr.strip() == (
        "hermesctx: error: unknown engine 'lcm' (installed: compressor, broken, exits, hangs, keep-last, leaky, raises); "
        "a plugin engine registers in the entry-point group hermesctx.engines")


def test_unknown_engine_without_plugins(plugin_dir):
    _forget()
    result = invoke(["compress", SESSION], environ={"HERMESCTX_CONTEXT_ENGINE": "lcm"})
    assert result.status == 2
    assert "unknown engine 'lcm' (installed: compressor)" in result.stderr


def test_unknown_summarizer_is_a_usage_error(installed):
    result = invoke(["compress", "--summarizer", "nosuch", SESSION])
    assert result.status == 2
    assert "unknown summarizer 'nosuch' (installed: extractive, anthropic, openai, echo, exits, hangs)" in result.stderr


@pytest.mark.parametrize(("engine", "message"), [
    ("raises", "engine plugin 'raises' (hermesctx-demo-plugin 0.1.0) failed: "
               "RuntimeError: the demo engine always fails"),
    ("broken", "engine plugin 'broken' (hermesctx-demo-plugin 0.1.0) failed to load: "
               "ModuleNotFoundError: No module named 'hermesctx_demo_plugin_missing_dependency'"),
])
def test_a_failing_plugin_is_one_line_exit_4(installed, engine, message):
    result = invoke(["compress", SESSION], environ={"HERMESCTX_CONTEXT_ENGINE": engine})
    assert result.status == 4
    assert result.stderr == f"hermesctx: error: {message}\n"
    assert result.stdout == b""


@pytest.mark.parametrize(("options", "message"), [
    ("{times: 9}", "pipeline[0] (tag): times: 9 is not in the range 1<=x<=3."),
    ("{colour: red}", "pipeline[0] (tag): unknown option 'colour' for tag"),
])
def test_plugin_stage_options_are_checked(installed, tmp_path, options, message):
    config = _config(tmp_path, f"pipeline:\n  - tag: {options}\n")
    result = invoke(["run", "--config", config, SESSION])
    assert result.status == 2
    assert message in result.stderr
    check = invoke(["config", "check", config])
    assert check.status == 1 and message in check.stderr


def test_unknown_stage_lists_plugin_stages(installed):
    result = invoke(["run", "--pipeline", "prune,nosuch", SESSION])
    assert result.status == 2
    assert f"unknown stage 'nosuch' (choose from {', '.join(pipeline.STAGES)}, badkey, tag)" in result.stderr


def test_config_show_lists_plugins(installed):
    table = invoke(["config", "show"]).stdout.decode()
    assert "# plugins: 11 installed" in table
    assert "# engine keep-last: hermesctx_demo_plugin.engine:KeepLastEngine (hermesctx-demo-plugin 0.1.0)" in table
    shown = invoke(["config", "show", "--format", "json"]).json["plugins"]
    assert {"kind": "stage", "name": "tag", "package": "hermesctx-demo-plugin 0.1.0",
            "value": "hermesctx_demo_plugin.stage"} in shown


def test_config_check_loads_the_named_plugins(installed, tmp_path):
    good = invoke(["config", "check", _config(tmp_path, PIPELINE)])
    assert good.status == 0, good.stderr
    bad = _config(tmp_path, "context:\n  engine: broken\nsummarizer:\n  name: nosuch\n")
    result = invoke(["config", "check", bad])
    assert result.status == 1
    lines = result.stderr.splitlines()
    assert lines[0] == (f"{bad}: context.engine: engine plugin 'broken' (hermesctx-demo-plugin 0.1.0) "
                        "failed to load: ModuleNotFoundError: No module named "
                        "'hermesctx_demo_plugin_missing_dependency'")
    assert lines[1].startswith(f"{bad}: summarizer.name: unknown summarizer 'nosuch'")


def test_a_plugin_stage_option_must_name_a_hermesctx_setting(installed):
    result = invoke(["run", "--pipeline", "badkey", SESSION])
    assert result.status == 4
    assert result.stderr == ("hermesctx: error: stage plugin 'badkey' (hermesctx-demo-plugin 0.1.0): option level "
                             "names the config key demo.level, which hermesctx does not have\n")


def test_engine_output_is_checked(installed):
    plugin = plugins.find(plugins.ENGINES, "keep-last")
    with pytest.raises(plugins.PluginError, match="returned str, not a list of messages"):
        plugins.run_engine(plugin, lambda messages, context: "oops", [{"role": "user", "content": "x"}], None)
    with pytest.raises(plugins.PluginError, match="returned an invalid transcript"):
        plugins.run_engine(plugin, lambda messages, context: [{"content": 1}], [], None)


def test_run_jobs_workers_find_the_plugin(installed, tmp_path):
    batch = str(EXAMPLES / "batch.jsonl")
    config = _config(tmp_path, "pipeline:\n  - tag: {label: J}\n")
    one = invoke(["run", "--config", config, batch])
    two = invoke(["run", "--config", config, "--jobs", "2", batch])
    assert one.status == two.status == 0, two.stderr
    assert one.stdout == two.stdout and b"[J] " in one.stdout


def _fresh_process(args: list[str], plugin_dir: Path | None, cwd: Path) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).parent / "hermesctx"
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMESCTX_")}
    if plugin_dir is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(plugin_dir), env.get("PYTHONPATH")]))
    return subprocess.run([str(exe), *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=60)


def test_end_to_end_in_a_fresh_process(plugin_dir, tmp_path):
    """The installed `hermesctx` command, the plugin found by a new interpreter's own scan."""
    config = _config(tmp_path, PIPELINE)
    out = _fresh_process(["run", "--config", config, SESSION], plugin_dir, tmp_path)
    assert out.returncode == 0, out.stderr
    assert "keep-last engine dropped" in json.loads(out.stdout)[0]["content"]
    missing = _fresh_process(["run", "--config", config, SESSION], None, tmp_path)
    assert missing.returncode == 2
    assert "pipeline[0]: unknown stage 'tag'" in missing.stderr


def test_entry_points_are_not_read_by_a_command_that_needs_none():
    code = ("import sys; from hermesctx.cli import run; from hermesctx.context import Env; import io; "
            "out = io.BytesIO(); status = run(['--quiet', 'compress', sys.argv[1]], Env(io.BytesIO(), out, "
            "io.StringIO(), environ={})); print(status, 'hermesctx.plugins' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, SESSION], capture_output=True, text=True, cwd=ROOT,
                         timeout=60)
    assert out.stdout.split() == ["0", "False"], out.stderr
