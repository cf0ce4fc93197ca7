"""Completions are generated from the click tree and committed: a test fails when they drift,
and the bash script really completes commands, options and choices."""

import os
import shutil
import subprocess

import pytest

from hermesctx.tools import gen_completions
from hermesctx.tools._tree import tree

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DIR = os.path.join(ROOT, "completions")


def test_completions_are_up_to_date():
    fresh = gen_completions.generate()
    assert sorted(fresh) == sorted(os.listdir(DIR)) == ["_hermesctx", "hermesctx.bash", "hermesctx.fish"], \
        "run `make completions`"
    for name, text in fresh.items():
        with open(os.path.join(DIR, name), encoding="utf-8") as handle:
            assert handle.read() == text, f"completions/{name} is stale: run `make completions`"


def test_every_command_and_long_option_is_in_every_script():
    scripts = gen_completions.generate()
    for sub in tree().subcommands:
        for text in scripts.values():
            assert sub.name in text
        for opt in sub.options:
            for flag in opt.flags:
                if flag.startswith("--"):
                    assert all(flag.lstrip("-") in text for text in scripts.values()), (sub.name, flag)


@pytest.mark.skipif(not shutil.which("bash"), reason="bash is not installed")
@pytest.mark.parametrize("line,expected", [("hermesctx pru", "prune"), ("hermesctx compress --summ", "--summarizer"),
                                           ("hermesctx trajectory --summarizer o", "openai"),
                                           ("hermesctx config ch", "check"), ("hermesctx run --j", "--jobs")])
def test_bash_completion_completes(line, expected):
    words = line.split(" ")
    script = (f"source {os.path.join(DIR, 'hermesctx.bash')}; COMP_WORDS=({line}); "
              f"COMP_CWORD={len(words) - 1}; _hermesctx; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True)
    assert expected in proc.stdout.split(), proc.stdout + proc.stderr


@pytest.mark.skipif(not shutil.which("zsh"), reason="zsh is not installed")
def test_zsh_script_parses():
    proc = subprocess.run(["zsh", "-n", os.path.join(DIR, "_hermesctx")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.skipif(not shutil.which("fish"), reason="fish is not installed")
def test_fish_script_parses():
    proc = subprocess.run(["fish", "--no-execute", os.path.join(DIR, "hermesctx.fish")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
