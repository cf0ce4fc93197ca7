"""Man pages are generated from the click help and committed: a test fails when they drift,
each renders with `man -l` without warnings and has the required sections, and each lists
every option of its command."""

import os
import shutil
import subprocess

import pytest

from hermesctx.tools import gen_man
from hermesctx.tools._tree import tree

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DIR = os.path.join(ROOT, "man")
SECTIONS = ("NAME", "SYNOPSIS", "DESCRIPTION", "EXIT STATUS", "ENVIRONMENT", "FILES", "EXAMPLES")


def test_man_pages_are_up_to_date():
    fresh = gen_man.generate()
    assert sorted(fresh) == sorted(os.listdir(DIR)), "run `make man`"
    for name, text in fresh.items():
        with open(os.path.join(DIR, name), encoding="utf-8") as handle:
            assert handle.read() == text, f"man/{name} is stale: run `make man`"


def test_one_page_per_command_with_its_options_and_sections():
    pages = gen_man.generate()
    root = tree()
    assert set(pages) == {"hermesctx.1"} | {f"hermesctx-{sub.name}.1" for sub in root.subcommands}
    for sub in root.subcommands:
        text = pages[f"hermesctx-{sub.name}.1"]
        for section in SECTIONS:
            assert f".SH {section}\n" in text, (sub.name, section)
        for opt in sub.options:
            for flag in opt.flags:
                assert gen_man._esc(flag) in text, (sub.name, flag)
    assert ".B 141\n" in pages["hermesctx.1"] and ".B HERMESCTX_CONFIG\n" in pages["hermesctx.1"]


@pytest.mark.skipif(not shutil.which("man"), reason="man is not installed")
@pytest.mark.parametrize("page", sorted(gen_man.generate()))
def test_man_page_renders_without_warnings(page):
    proc = subprocess.run(["man", "--warnings=w", "-l", os.path.join(DIR, page)], capture_output=True,
                          text=True, env={**os.environ, "MANWIDTH": "80", "MANPAGER": "cat", "PAGER": "cat"})
    assert proc.returncode == 0 and proc.stderr == ""
    for section in SECTIONS:
        assert section in proc.stdout


@pytest.mark.skipif(not shutil.which("make"), reason="make is not installed")
def test_make_install_shell_puts_pages_and_completions_under_prefix(tmp_path):
    proc = subprocess.run(["make", "-s", "install-shell", f"PREFIX={tmp_path}"], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    share = tmp_path / "share"
    assert sorted(p.name for p in (share / "man" / "man1").iterdir()) == sorted(os.listdir(DIR))
    for installed, source in [("bash-completion/completions/hermesctx", "hermesctx.bash"),
                              ("zsh/site-functions/_hermesctx", "_hermesctx"),
                              ("fish/vendor_completions.d/hermesctx.fish", "hermesctx.fish")]:
        with open(os.path.join(ROOT, "hermesctx", "data", "completions", source), encoding="utf-8") as handle:
            assert (share / installed).read_text(encoding="utf-8") == handle.read()
