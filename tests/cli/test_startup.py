"""Start-up: `--help` is answered from text generated out of the click tree (data/help.txt),
byte for byte what click prints, without importing click, orjson, the commands or the stages;
a test fails when the generated text is stale (`make help-data`)."""

from __future__ import annotations

import os
import subprocess
import sys

import click
import pytest

from hermesctx import launch
from hermesctx.cli import cli
from hermesctx.tools import gen_help
from tests.conftest import invoke


def _paths() -> list[list[str]]:
    out = [[]]
    ctx = click.Context(cli, info_name="hermesctx")
    for name in cli.list_commands(ctx):
        out.append([name])
        sub = cli.get_command(ctx, name)
        if isinstance(sub, click.Group):
            out += [[name, s] for s in sub.list_commands(click.Context(sub, info_name=name, parent=ctx))]
    return out


def test_help_data_is_up_to_date():
    with open(gen_help.DEFAULT_PATH, encoding="utf-8") as handle:
        assert handle.read() == gen_help.generate(), "hermesctx/data/help.txt is stale: run `make help-data`"


@pytest.mark.parametrize("columns", ["80", "120"])
@pytest.mark.parametrize("path", _paths(), ids=lambda p: " ".join(p) or "top")
def test_quick_help_is_what_click_prints(path, columns, monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", columns)
    quick = launch.quick_help([*path, "--help"])
    assert quick is not None
    result = invoke([*path, "--help"])  # through click, which prints help to sys.stdout
    assert result.status == 0
    assert quick == result.stdout.decode() + capsys.readouterr().out
    assert launch.quick_help([*path, "-h"]) == quick


@pytest.mark.parametrize("args", [[], ["--quiet", "--help"], ["estimate", "x.json", "--help"],
                                  ["nope", "--help"], ["estimate"], ["--help", "estimate"]])
def test_anything_else_goes_to_click(args):
    assert launch.quick_help(args) is None


def test_an_unusual_width_goes_to_click(monkeypatch):
    monkeypatch.setenv("COLUMNS", "61")
    assert launch.help_width() == 59 and launch.quick_help(["--help"]) is None
    monkeypatch.setenv("COLUMNS", "300")
    assert launch.help_width() == 98 and launch.quick_help(["--help"]).startswith("Usage: hermesctx ")


CHECK = ("import sys; sys.argv = ['hermesctx', *sys.argv[1:]]\n"
         "from hermesctx.launch import main\n"
         "main()\n"
         "heavy = ('click', 'orjson', 'yaml', 'tiktoken', 'hermesctx.cli', 'hermesctx.stages', 'json')\n"
         "print(sorted(m for m in heavy if m in sys.modules), file=sys.stderr)\n")


@pytest.mark.parametrize("args", [["--help"], ["estimate", "--help"], ["config", "show", "-h"], ["--version"]])
def test_help_and_version_import_nothing_heavy(args):
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    proc = subprocess.run([sys.executable, "-c", CHECK, *args], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip() == "[]"
    assert proc.stdout.startswith("Usage: hermesctx" if args != ["--version"] else "hermesctx, version ")


def test_a_real_command_still_runs_through_the_entry_point(tmp_path):
    path = tmp_path / "t.json"
    path.write_text('[{"role": "user", "content": "hi"}]')
    proc = subprocess.run([sys.executable, "-m", "hermesctx", "--quiet", "prune", str(path)],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.startswith("[{"), proc.stderr


def test_no_arguments_prints_the_usage_on_stderr_with_exit_2():
    proc = subprocess.run([sys.executable, "-m", "hermesctx"], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("Usage: hermesctx [OPTIONS] COMMAND") and "\\n" not in proc.stderr
    through_click = invoke([])
    assert through_click.status == 2 and through_click.stderr.startswith("Usage: hermesctx [OPTIONS] COMMAND")


TINY = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "héllo"},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": '{"path": "."}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "a.py b.py"},
        {"role": "assistant", "content": "two files, 1.5e-7 s"}]
# what a tiny run of a no-LLM command must not load: each costs a share of a bare interpreter
# start (orjson ~20 ms of CPU with dataclasses, uuid and platform; inspect ~8, typing ~10). The
# json module (with re and enum, ~12 ms) reads and writes a process's first MiB (hermesctx.jsonio)
HEAVY = ("orjson", "dataclasses", "uuid", "inspect", "typing", "contextlib", "click",
         "tempfile", "hashlib", "string", "sqlite3", "tiktoken", "yaml")
HEAVY_CHECK = ("import sys; sys.argv = ['hermesctx', *sys.argv[1:]]\n"
               "from hermesctx.launch import main\n"
               "try:\n    main()\nfinally:\n"
               f"    print(sorted(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)\n")


@pytest.mark.parametrize("pretty", [False, True])
@pytest.mark.parametrize("args", [
    ["prune"], ["prune", "--report", "{report}"], ["sanitize"], ["validate"], ["cache-mark"], ["spill", "--dir", "{dir}"],
    ["convert", "--to", "anthropic"], ["compress", "--summarizer", "extractive"], ["estimate", "--method", "rough"],
    ["normalize-usage"],
])
def test_a_tiny_run_loads_nothing_heavy(tmp_path, args, pretty):
    """The start-up budget as what is imported (the time itself is bench/startup.py's): the json
    module reads and writes (hermesctx.jsonio), records stand in for dataclasses
    (hermesctx.record), regexes compile on first use (hermesctx.lazyre). The output is what the
    full path writes."""
    import json

    doc = ({"prompt_tokens": 100, "completion_tokens": 20, "prompt_tokens_details": {"cached_tokens": 64}}
           if args == ["normalize-usage"] else TINY)
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(doc, indent=2 if pretty else None, ensure_ascii=False), encoding="utf-8")
    argv = [a.format(report=tmp_path / "report.jsonl", dir=tmp_path / "spill") for a in args]
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMESCTX_")}
    proc = subprocess.run([sys.executable, "-c", HEAVY_CHECK, *argv, str(path)], capture_output=True, env=env)
    assert proc.returncode in (0, 1), proc.stderr  # (validate: 1 for a problem found)
    assert proc.stderr.decode().strip().splitlines()[-1] == "[]", proc.stderr
    through_orjson = invoke([*argv, str(path)])
    assert proc.stdout == through_orjson.stdout
