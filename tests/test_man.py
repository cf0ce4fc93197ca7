"""Man pages are generated from the click help and committed: a test fails when they drift,
each renders with `man -l` without warnings and has the required sections, and each lists
every option of its command."""

import os
import shutil
import subprocess

import pytest

from hermesctx.tools import gen_man
from hermesctx.tools._tree import tree

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
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
