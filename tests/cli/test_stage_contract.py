"""The stage contract: one home per stage (Options + build), one document loop, one pipeline
builder in the core, the settings file read once per process; regressions it fixed."""

import ast
import json
from pathlib import Path

import pytest
from conftest import EXAMPLES, ROOT, invoke

from hermesctx import config, pipeline
from hermesctx.options import from_mapping, specs

COMMANDS = sorted((ROOT / "hermesctx" / "cli" / "commands").glob("*.py"))
COMMANDS = [p for p in COMMANDS if p.stem != "__init__"]


def _command_functions(path: Path):
    """The click command functions, and the click-free ``body`` a command delegates to (what
    the fast path runs)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef) and (node.name == "body" or any(
                "command" in ast.unparse(d) for d in node.decorator_list)):
            yield node


def _body(node: ast.FunctionDef) -> list:
    first = node.body[0]
    docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
    return node.body[1:] if docstring else node.body


@pytest.mark.parametrize("path", COMMANDS, ids=lambda p: p.stem)
def test_the_cli_holds_no_stage_semantics(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
    assert "make" not in names
    for node in _command_functions(path):
        body = _body(node)
        assert body[-1].end_lineno - body[0].lineno + 1 <= 15, node.name
        # no loop over documents in a command: the loop is hermesctx.transcripts'
        assert not any(isinstance(n, (ast.For, ast.While)) for stmt in body for n in ast.walk(stmt)
                       if not (path.stem == "config")), node.name


# which core entry each command goes through (the one document loop, or a stage's driver on it)
_ENTRIES = ("run_stage", "input_documents", "report_each", "report_problems", "stage.run",
            "pipeline.run", "check_config", "render")


# commands that read no transcript (settings, shipped man pages and completions, the archive store;
# replay reads a log's raw events, for the usage and timestamps a transcript does not keep)
_NOT_TRANSCRIPTS = {"config", "completion", "man", "recall", "mcp", "replay"}


@pytest.mark.parametrize("path", [p for p in COMMANDS if p.stem not in _NOT_TRANSCRIPTS], ids=lambda p: p.stem)
def test_every_command_goes_through_the_core(path):
    text = path.read_text(encoding="utf-8")
    assert any(f"{entry}(" in text for entry in _ENTRIES), path.stem


def test_core_library_entries_do_not_import_the_cli():
    for name in ("pipeline.py", "distributed.py", "parallel.py", "transcripts.py", "context.py", "options.py"):
        tree = ast.parse((ROOT / "hermesctx" / name).read_text(encoding="utf-8"))
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        assert not any(m.startswith("hermesctx.cli") for m in imported), name


@pytest.mark.parametrize("name", pipeline.STAGES)
def test_every_stage_declares_its_options_once(name):
    module = pipeline.stage_module(name)
    assert callable(module.build) and callable(module.describe)
    for field, spec in specs(module.Options):
        assert spec.flag.startswith("--") and spec.help, field.name
        if spec.key:
            assert spec.key in config.KEYS, (field.name, spec.key)
        # a pipeline entry names an option by its field or its flag
        from_mapping(module.Options, {field.name: field.default}, "x", name)


def test_settings_file_is_read_once_per_process_for_a_five_stage_run(tmp_path, monkeypatch):
    reads = []
    real = config.read_config_file
    monkeypatch.setattr(config, "read_config_file", lambda path: reads.append(path) or real(path))
    cfg = tmp_path / "c.yaml"
    cfg.write_text(json.dumps({"pipeline": ["spill", "prune", {"compress": {"if_needed": True}}, "sanitize",
                                            "cache-mark"], "spill": {"dir": str(tmp_path / "s")}}))
    r = invoke(["-q", "run", "--config", str(cfg)], (EXAMPLES / "coding-session.json").read_bytes())
    assert r.status == 0, r.stderr
    assert reads == [str(cfg)]


def test_settings_file_is_read_once_by_a_command(tmp_path, monkeypatch):
    reads = []
    real = config.read_config_file
    monkeypatch.setattr(config, "read_config_file", lambda path: reads.append(path) or real(path))
    cfg = tmp_path / "c.yaml"
    cfg.write_text("compression:\n  threshold: 0.6\n")
    r = invoke(["-q", "compress", "--if-needed", "--config", str(cfg), "--jsonl"],
               (EXAMPLES / "batch.jsonl").read_bytes())
    assert r.status == 0, r.stderr
    assert reads == [str(cfg)]


def test_run_expand_on_an_archived_transcript(tmp_path):
    """`run` with `pipeline: [{compress: {expand: true}}]` ended in KeyError: 'headline' (exit 70)."""
    arch = tmp_path / "arch"
    raw = (EXAMPLES / "coding-session.json").read_bytes()
    compressed = invoke(["-q", "compress", "--protect-last-n", "4", "--tail-tokens", "200", "--archive", str(arch)],
                        raw)
    assert compressed.status == 0, compressed.stderr
    cfg = tmp_path / "c.yaml"
    cfg.write_text(json.dumps({"pipeline": [{"compress": {"expand": True, "archive": str(arch)}}]}))
    r = invoke(["run", "--config", str(cfg)], compressed.stdout)
    assert r.status == 0, r.stderr
    assert r.json == json.loads(raw)
    assert "compress: restored" in r.stderr
    direct = invoke(["compress", "--expand", "--archive", str(arch)], compressed.stdout)
    assert direct.stdout == r.stdout


def test_old_flag_spellings_still_work(tmp_path):
    raw = (EXAMPLES / "coding-session.json").read_bytes()
    d = str(tmp_path / "s")
    new = invoke(["-q", "spill", "--dir", d, "--result-threshold", "1000"], raw)
    old = invoke(["-q", "spill", "--dir", d, "--threshold", "1000"], raw)
    assert new.status == old.status == 0 and new.stdout == old.stdout and b"<persisted-output>" in new.stdout
    usage = b'{"input_tokens": 25, "output_tokens": 410}'
    assert invoke(["normalize-usage", "--provider", "anthropic"], usage).stdout == \
        invoke(["normalize-usage", "--usage-format", "anthropic"], usage).stdout
