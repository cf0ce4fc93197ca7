"""Documentation that must stay true: every command's --help has a real Examples block, and the
shell examples in README.md and docs/*.md run (in-process, from the repo root, outputs under a temp
dir)."""

import os
import re
import shlex
import subprocess
import sys

import pytest
from conftest import ROOT, invoke

from hermesctx.cli import COMMANDS, cli
from hermesctx.exit import EXIT_STATUS_HELP, MEANINGS, markdown_table
from hermesctx.tools._tree import tree

README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]


def readme_blocks() -> list[list[str]]:
    """The code blocks of the README and the docs pages, as logical lines (continuations joined)
    that run hermesctx."""
    blocks, current = [], None
    lines = [line for page in PAGES for line in page.read_text(encoding="utf-8").splitlines()]
    for line in lines:
        if line.startswith("```"):
            if current is None:
                current = []
            else:
                blocks.append(current)
                current = None
        elif current is not None:
            if current and current[-1].endswith("\\"):
                current[-1] = current[-1][:-1].rstrip() + " " + line.strip()
            else:
                current.append(line.strip())
    commands = []
    for block in blocks:
        runnable = [c for c in block if c.startswith("hermesctx ") or re.match(r"echo .*\| *hermesctx ", c)]
        if runnable:
            commands.append(runnable)
    return commands


def parse(line: str, tmp: str):
    """``(segments, stdin_path, stdout_path, expected_status, environ)`` of one README line.
    ``/tmp/...`` paths are moved under ``tmp``; so are relative output files."""
    expected = 0
    if "#" in line:
        line, comment = line.split("#", 1)  # README examples have no '#' inside arguments
        found = re.search(r"exit (\d+)", comment)
        expected = int(found.group(1)) if found else 0
    lexer = shlex.shlex(line, posix=True, punctuation_chars="|<>")
    lexer.whitespace_split = True
    tokens = [t.replace("/tmp/", tmp + "/", 1) if t.startswith("/tmp/") else t for t in lexer]
    segments, current, stdin_path, stdout_path = [], [], None, None
    it = iter(tokens)
    for token in it:
        if token == "|":
            segments.append(current)
            current = []
        elif token == "<":
            stdin_path = next(it)
        elif token == ">":
            target = next(it)
            stdout_path = target if os.path.isabs(target) else os.path.join(tmp, target)
        else:
            current.append(token)
    segments.append(current)
    return segments, stdin_path, stdout_path, expected


BLOCKS = readme_blocks()


def test_the_readme_has_examples_for_run_and_config():
    flat = [line for block in BLOCKS for line in block]
    assert any(line.startswith("hermesctx run ") for line in flat)
    assert any(line.startswith("hermesctx config ") for line in flat)
    assert len(flat) >= 10


def run_line(line: str, tmp: str, environ: dict) -> str:
    """Run one example line as the README writes it (pipes, redirections, ``# exit N``); what it
    printed on stdout (unless redirected) and stderr."""
    segments, stdin_path, stdout_path, expected = parse(line, tmp)
    stdin = open(stdin_path, "rb").read() if stdin_path else b""
    printed = []
    for i, argv in enumerate(segments):
        if argv[0] == "echo":
            stdin = (" ".join(argv[1:]) + "\n").encode()
            continue
        assert argv[0] == "hermesctx", line
        result = invoke(argv[1:], stdin, environ=environ)
        want = expected if i == len(segments) - 1 else 0
        assert result.status == want, f"{line}\n-> exit {result.status}: {result.stderr}"
        printed.append(result.stderr)
        stdin = result.stdout
    if stdout_path:
        with open(stdout_path, "wb") as handle:
            handle.write(stdin)
    else:
        if expected == 0:
            assert stdin.strip() or "".join(printed).strip(), f"{line}: no output"
        printed.append(stdin.decode("utf-8", "replace"))
    return "".join(printed)


@pytest.mark.parametrize("block", BLOCKS, ids=[b[0][:50] for b in BLOCKS])
def test_readme_examples_run(block, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    # a spill directory named in a config file stays out of the real /tmp
    environ = {"HERMESCTX_SPILL_DIR": os.path.join(str(tmp_path), "spill-from-config")}
    for line in block:
        run_line(line, str(tmp_path), environ)


RECIPES = re.findall(r"```sh\n(.*?)```\s*```text\n(.*?)```",
                     README.read_text(encoding="utf-8").split("## Recipes", 1)[1], re.S)


@pytest.mark.parametrize(("commands", "shown"), RECIPES, ids=[c.splitlines()[0][:50] for c, _ in RECIPES])
def test_readme_recipes_print_what_the_readme_shows(commands, shown, tmp_path, monkeypatch):
    """A recipe's output block is what its commands print (stdout unless redirected, and stderr),
    line for line ("..." stands for lines left out)."""
    monkeypatch.chdir(ROOT)
    environ = {"HERMESCTX_SPILL_DIR": os.path.join(str(tmp_path), "spill-from-config")}
    printed = "".join(run_line(line, str(tmp_path), environ) for line in commands.strip().splitlines())
    lines = [line.rstrip() for line in printed.splitlines()]
    for line in shown.strip().splitlines():
        if line != "...":
            assert line.rstrip() in lines, f"the README shows a line its recipe does not print: {line!r}"


@pytest.mark.parametrize("name", [sub.name for sub in tree().subcommands])
def test_every_command_help_has_examples(name, capsys):
    result = invoke([name, "--help"])  # click prints help to sys.stdout
    assert result.status == 0
    text = result.stdout.decode() + capsys.readouterr().out
    examples = text.split("Examples:")[1] if "Examples:" in text else ""
    assert f"hermesctx {name}" in examples, f"{name} --help has no Examples block"
    assert "Exit status" in text or "EXIT STATUS" in text.upper()


def test_exit_statuses_are_one_table(capsys):
    """The README's table, every --help epilog and every man page say what exit.MEANINGS says."""
    from hermesctx.tools import gen_man

    assert markdown_table() in (ROOT / "README.md").read_text(encoding="utf-8")
    assert [int(s) for s, _ in MEANINGS] == sorted({0, 1, 2, 3, 4, 5, 70, 75, 130, 141, 143})
    result = invoke(["prune", "--help"])  # click prints help to sys.stdout
    help_text = " ".join((result.stdout.decode() + capsys.readouterr().out).split())
    assert EXIT_STATUS_HELP in help_text
    for name, page in gen_man.generate().items():
        section = page.split(".SH EXIT STATUS\n", 1)[1].split(".SH ", 1)[0]
        assert [line[3:] for line in section.splitlines() if line.startswith(".B ")] == \
            [str(s) for s, _ in MEANINGS], name


def test_every_listed_command_is_built_or_pending():
    built = {sub.name for sub in tree().subcommands}
    assert {"run", "config", "estimate", "prune", "sanitize", "compress", "cache-mark", "spill"} <= built
    assert built <= set(COMMANDS) and cli.name


def test_version_and_help_from_a_real_process():
    proc = subprocess.run([sys.executable, "-m", "hermesctx", "--version"], capture_output=True, text=True)
    assert proc.returncode == 0 and re.fullmatch(r"hermesctx, version \S+\n", proc.stdout)


def test_quick_start_is_two_commands_and_the_first_runs():
    """The quick start: `make install && .venv/bin/hermesctx ...` (a path that exists whatever the
    PATH) then `make test`; the hermesctx half runs through the installed console script, as a new
    user runs it."""
    text = README.read_text(encoding="utf-8").split("## Quick start", 1)[1]
    block = text.split("```sh", 1)[1].split("```", 1)[0].strip().splitlines()
    assert len(block) == 2 and block[1] == "make test", block
    install, _, command = block[0].partition(" && ")
    assert install == "make install" and command.startswith(".venv/bin/hermesctx "), block[0]
    exe = os.path.join(os.path.dirname(sys.executable), "hermesctx")
    proc = subprocess.run([exe, *shlex.split(command)[1:]], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "threshold" in proc.stdout and "claude-sonnet-4-5" in proc.stdout  # JSON: piped
    # on a terminal it prints the table the README shows: its lines, in order ("..." for the rest)
    table = subprocess.run([exe, *shlex.split(command)[1:], "--format", "table"], capture_output=True, text=True,
                           cwd=ROOT).stdout.splitlines()
    shown = text.split("```text", 1)[1].split("```", 1)[0].strip().splitlines()
    at = 0
    for line in (x for x in shown if x != "..."):
        at = table.index(line, at) + 1  # ValueError: the README shows a line the command does not print


def test_the_readme_is_short_and_its_links_lead_somewhere():
    text = README.read_text(encoding="utf-8")
    assert len(text.encode()) <= 15 * 1024  # a newcomer's page: recipes, commands, links
    assert (ROOT / "LICENSE").is_file()
    for target in re.findall(r"\]\(((?:docs/)?[\w./-]+\.md|LICENSE)\)", text):
        assert (ROOT / target).is_file(), target
