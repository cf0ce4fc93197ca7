"""Structure rules: core never imports click; heavy imports stay lazy; the entry point works."""

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

PACKAGE = ROOT / "hermesctx"
CORE = [p for p in PACKAGE.rglob("*.py") if "cli" not in p.relative_to(PACKAGE).parts[:1]
        and p.relative_to(PACKAGE).parts[0] != "tools"]


def top_level_imports(path: Path) -> set[str]:
    """Modules imported at module level (not inside functions)."""
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names


def all_imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", CORE, ids=lambda p: str(p.relative_to(ROOT)))
def test_core_never_imports_click(path):
    assert "click" not in all_imports(path)


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_sdks_and_tiktoken_are_imported_lazily(path):
    assert not top_level_imports(path) & {"anthropic", "openai", "tiktoken", "httpx", "dask"}


def test_help_does_not_import_heavy_modules():
    code = ("import sys; from hermesctx.cli import run; from hermesctx.context import Env; import io;"
            "env = Env(io.BytesIO(), io.BytesIO(), io.StringIO());"
            "run(['--help'], env); [run([c, '--help'], env) for c in ['estimate']];"
            "print(sorted(m for m in ('anthropic','openai','tiktoken','yaml') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stderr


def test_installed_entry_point_runs():
    exe = Path(sys.executable).parent / "hermesctx"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "hermesctx"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMESCTX_")}
    out = subprocess.run(cmd + ["estimate", "--method", "rough", "--model", "gpt-4o",
                                "examples/coding-session.json"], capture_output=True, cwd=ROOT, env=env)
    assert out.returncode == 0, out.stderr
    assert b'"context_length":128000' in out.stdout
    version = subprocess.run(cmd + ["--version"], capture_output=True, text=True, env=env)
    assert version.stdout.startswith("hermesctx, version ")


def test_closed_stdout_exits_quietly():
    exe = Path(sys.executable).parent / "hermesctx"
    cmd = f"'{exe}' -q estimate --method rough examples/batch.jsonl --jsonl | head -c 10 > /dev/null; echo ${{PIPESTATUS[0]}}"
    out = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, cwd=ROOT)
    assert out.stderr == ""
    assert out.stdout.strip() in ("0", "141")


# what the fast path (hermesctx/cli/fast.py) loads: none may import click at module level, or
# `hermesctx prune FILE` would pay for it (~3x a bare interpreter start) on every run
FAST_PATH = [PACKAGE / "launch.py", *sorted((PACKAGE / "cli").glob("*.py"))]
FAST_PATH = [p for p in FAST_PATH if p.name not in ("group.py", "options.py")]
FAST_COMMANDS = [p for p in sorted((PACKAGE / "cli" / "commands").glob("*.py"))
                 if "def body(" in p.read_text(encoding="utf-8")]


@pytest.mark.parametrize("path", FAST_PATH + FAST_COMMANDS, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_fast_path_imports_click_only_lazily(path):
    assert not top_level_imports(path) & {"click", "yaml", "tiktoken"}
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {n.module for n in tree.body if isinstance(n, ast.ImportFrom) and n.module}
    assert not top & {"hermesctx.cli.group", "hermesctx.cli.options"}, path.name


def test_every_command_that_declares_params_has_a_click_free_body():
    from hermesctx import registry

    bodies = {p.stem for p in FAST_COMMANDS}
    declaring = {e.value.rpartition(".")[2] for e in registry.entries(registry.COMMANDS)
                 if "\nPARAMS = " in (PACKAGE / "cli" / "commands" / f"{e.value.rpartition('.')[2]}.py").read_text()}
    assert declaring and declaring <= bodies


def test_prune_of_a_file_never_imports_click(tmp_path):
    """In a fresh interpreter, as the console script runs it: `-X importtime` lists every module
    the run imported."""
    path = tmp_path / "t.json"
    path.write_text('[{"role": "user", "content": "hi"}]')
    code = ("import sys; sys.argv = ['hermesctx', 'prune', sys.argv[1]]\n"
            "from hermesctx.launch import main\nmain()\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMESCTX_")}
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", code, str(path)], capture_output=True,
                         text=True, env=env)
    assert out.returncode == 0 and out.stdout.startswith("[{"), out.stderr
    imported = {line.split("|")[-1].strip() for line in out.stderr.splitlines() if line.startswith("import time:")}
    assert "hermesctx.stages.prune" in imported
    assert not imported & {"click", "click.core", "yaml", "tiktoken", "hermesctx.cli.group", "hermesctx.cli.options"}
