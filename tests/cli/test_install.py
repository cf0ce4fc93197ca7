"""What an install gets: the man pages and completions shipped in the package (`hermesctx man`,
`hermesctx completion`), the LLM SDKs as extras with an error naming the extra."""

from __future__ import annotations

import os
import sys

import pytest

from hermesctx.tools import gen_completions, gen_man
from tests.conftest import invoke


@pytest.mark.parametrize("shell,source", [("bash", "hermesctx.bash"), ("zsh", "_hermesctx"),
                                          ("fish", "hermesctx.fish")])
def test_completion_prints_the_generated_script(shell, source):
    result = invoke(["completion", shell])
    assert result.status == 0 and result.stdout.decode() == gen_completions.generate()[source]


@pytest.mark.parametrize("shell,name", [("bash", "hermesctx"), ("zsh", "_hermesctx"),
                                        ("fish", "hermesctx.fish")])
def test_completion_install_writes_the_name_the_shell_looks_for(shell, name, tmp_path):
    result = invoke(["completion", shell, "--install", str(tmp_path / "d")])
    assert result.status == 0 and result.stdout == b""
    assert (tmp_path / "d" / name).read_text() == invoke(["completion", shell]).stdout.decode()
    assert str(tmp_path / "d" / name) in result.stderr


def test_completion_of_an_unknown_shell_is_a_usage_error():
    result = invoke(["completion", "tcsh"])
    assert result.status == 2 and "tcsh" in result.stderr


def test_man_prints_a_page():
    pages = gen_man.generate()
    assert invoke(["man"]).stdout.decode() == pages["hermesctx.1"]
    assert invoke(["man", "estimate"]).stdout.decode() == pages["hermesctx-estimate.1"]
    bad = invoke(["man", "nope"])
    assert bad.status == 2 and "no man page for 'nope'" in bad.stderr and "estimate" in bad.stderr


@pytest.mark.parametrize("leaf", ["share/man", "share/man/man1"])
def test_man_install_writes_every_page_into_man1(leaf, tmp_path):
    result = invoke(["man", "--install", str(tmp_path / leaf)])
    assert result.status == 0
    written = sorted(os.listdir(tmp_path / "share" / "man" / "man1"))
    assert written == sorted(gen_man.generate())


def test_man_install_into_a_file_is_an_io_error(tmp_path):
    (tmp_path / "f").write_text("x")
    result = invoke(["man", "--install", str(tmp_path / "f" / "man")])
    assert result.status == 5 and result.stderr.startswith("hermesctx: error: cannot write")


@pytest.mark.parametrize("sdk", ["anthropic", "openai"])
def test_a_missing_sdk_names_its_extra(sdk, monkeypatch):
    monkeypatch.setitem(sys.modules, sdk, None)  # as if not installed: find_spec sees None
    result = invoke(["compress", "--summarizer", sdk, "--context-length", "1000"],
                    [{"role": "user", "content": "hi"}], environ={f"{sdk.upper()}_API_KEY": "k"})
    assert result.status == 2, result.stderr
    assert f"pipx inject hermesctx {sdk}, or from a checkout: pip install '.[" in result.stderr and result.stdout == b""


def test_every_shipped_data_file_is_declared_as_package_data():
    """What `hermesctx man`, `completion`, the quick --help and the prices read must reach a wheel."""
    import fnmatch
    from pathlib import Path

    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    root = Path(__file__).resolve().parents[2]
    globs = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["hermesctx"]
    data = root / "hermesctx" / "data"
    files = [(Path(folder) / name).relative_to(root / "hermesctx").as_posix()  # through the symlinks
             for folder, _, names in os.walk(data, followlinks=True) for name in names
             if "__pycache__" not in folder]
    assert {"data/help.txt", "data/pricing.json", "data/pricing-library.json", "data/man/hermesctx.1",
            "data/completions/_hermesctx"} <= set(files)
    assert [f for f in files if not any(fnmatch.fnmatch(f, g) for g in globs)] == []


@pytest.mark.parametrize("kind", ["man", "completions"])
def test_the_top_level_folders_are_the_one_copy_the_package_ships(kind):
    """completions/ and man/ at the top are the generated files; the package's data/ reaches them
    through a symlink (an editable install reads them there, a wheel build copies them in)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    link = root / "hermesctx" / "data" / kind
    assert link.is_symlink() and link.resolve() == (root / kind).resolve()
    assert sorted(p.name for p in link.iterdir()) == sorted(p.name for p in (root / kind).iterdir())
