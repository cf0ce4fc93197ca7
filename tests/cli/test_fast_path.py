"""The fast path (hermesctx/cli/fast.py): a command line parsed without click must give the
command exactly the params click gives it, or be left to click. Cases are generated from the
parser's table (made from the commands' declared PARAMS, as their click options are): every
command that declares them, every option, in every spelling click accepts; then whole command
lines end to end through both paths (stdout, stderr, exit status)."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import click
import pytest
from conftest import EXAMPLES, ROOT

from hermesctx import registry
from hermesctx.cli import fast
from hermesctx.cli import run as run_through_click
from hermesctx.context import Env

# name -> (module, table) of every command the fast parser takes
TABLES = {name: found for name in registry.names(registry.COMMANDS)
          if (found := fast.command_table(name)) is not None}


def test_the_tables_cover_every_command_that_reads_transcripts_without_a_model():
    assert {"estimate", "prune", "sanitize", "validate", "compress", "cache-mark", "normalize-usage",
            "spill", "convert", "trajectory"} <= set(TABLES)


def test_a_command_takes_on_its_click_command_exactly_the_params_it_declares():
    """The click options and the parser's table come from the same records: nothing more, nothing less."""
    from hermesctx.cli.group import cli

    root = click.Context(cli, info_name="hermesctx", **cli.context_settings)
    for name, (_module, spec) in TABLES.items():
        command = cli.get_command(root, name)
        flags = {flag for p in command.params for flag in (*p.opts, *p.secondary_opts)
                 if isinstance(p, click.Option)}
        assert flags == set(spec["options"]), name
        assert [p.name for p in command.params if isinstance(p, click.Argument)] == [spec["argument"][0]]
        with command.make_context(name, [], parent=root) as ctx:
            assert ctx.params == spec["defaults"], name


def test_the_root_options_are_the_groups():
    from hermesctx.cli.group import cli

    flags = {flag for p in cli.params if isinstance(p, click.Option) and not p.is_eager for flag in p.opts}
    assert flags == set(fast.table(fast.ROOT)["options"])


def _click_params(name: str, args: list[str]) -> dict:
    from hermesctx.cli.group import cli

    root = click.Context(cli, info_name="hermesctx", **cli.context_settings)
    command = cli.get_command(root, name)
    with command.make_context(name, list(args), parent=root) as ctx:
        return dict(ctx.params)


def _values(how: tuple, tmp_path) -> list[str]:
    """Values click accepts for an option's type."""
    kind = how[0]
    if kind == "text":
        return ["gpt-4o", "a b=c"]
    if kind == "choice":
        return list(how[1])
    if kind == "int":
        low = how[1] if how[1] is not None else -3
        return [str(low), str(low + 7), "1_0" if low <= 10 else str(low + 10)]
    if kind == "float":
        low, high = how[1], how[2]
        if low is not None and high is not None:
            return [str((low + high) / 2), str(high) if not how[4] else str((low + high) / 3)]
        return ["0.5", "2", "1e-3"]
    file_okay = how[1]
    target = tmp_path / "input.json" if file_okay else tmp_path
    if file_okay:
        target.write_text("[]")
    return [str(target), *(["-"] if how[7] else []), *([str(tmp_path / "new.json")] if not how[3] else [])]


def _cases(tmp_path):
    for name, (_module, spec) in TABLES.items():
        yield name, []
        for flag, how in spec["options"].items():
            if how[1] == "click":
                continue
            if how[1] == "set":
                yield name, [flag]
                yield name, [flag, "f.json", flag]
                continue
            values = _values(how[2], tmp_path)
            if len(values) > 1:  # given twice: the last wins (or both, for a multiple option)
                yield name, [flag, values[0], "f.json", flag, values[1]]
            for value in values:
                yield name, [flag, value]
                if flag.startswith("--"):
                    yield name, [f"{flag}={value}", "a.json", "-"]
                yield name, ["x.json", flag, value, flag, value]  # twice: the last (or both: multiple)


def test_every_option_gives_the_params_click_gives(tmp_path):
    seen = 0
    for name, args in _cases(tmp_path):
        for root in ([], ["-q"], ["--quiet", "--traceback"]):
            parsed = fast.parse([*root, name, *args], {})
            assert parsed is not None, (name, args)
            module, params, quiet = parsed
            assert module is TABLES[name][0]
            assert quiet == ("-q" in root or "--quiet" in root)
            assert params == _click_params(name, args), (name, args)
            seen += 1
    assert seen > 500


@pytest.mark.parametrize("args", [["prune", "--report", "-", "a.json"], ["estimate", "--model", "-"],
                                  ["validate", "--reference", "-", "-"], ["spill", "--dir", "-"]])
def test_a_dash_as_an_option_value(args):
    parsed = fast.parse(args, {})
    assert parsed is not None and parsed[1] == _click_params(args[0], args[1:])


def test_all_options_of_a_command_at_once(tmp_path):
    for name, (_module, spec) in TABLES.items():
        args = ["one.json"]
        for flag, how in spec["options"].items():
            if how[1] == "set":
                args.append(flag)
            elif how[1] == "value":
                args += [flag, _values(how[2], tmp_path)[0]]
        parsed = fast.parse([name, *args], {})
        assert parsed is not None, name
        assert parsed[1] == _click_params(name, args), name


@pytest.mark.parametrize("args", [
    ["prune", "--nope"], ["prune", "--help"], ["prune", "-h"], ["prune", "--pretty=1"],
    ["prune", "--protect-last-n", "-1"], ["prune", "--protect-last-n", "x"], ["prune", "--protect-last-n"],
    ["prune", "--protect-last-n="], ["prune", "--from", "json"], ["prune", "--lenient", "a.json"],
    ["prune", "--", "a.json"], ["prune", "-qm", "gpt-4o"], ["prune", "-mgpt-4o"], ["prune", "--model", "--pretty"],
    ["estimate", "--context-length", "0"], ["estimate", "--threshold", "nan"], ["compress", "--threshold", "inf"],
    ["--version"], ["--help"], [], ["-q"], ["nope", "a.json"], ["run", "a.json"], ["config", "show"],
    ["--nope", "prune"], ["cache-mark", "--against", "tests", "a.json"],  # a directory where a file is wanted
])
def test_what_the_fast_parser_is_not_sure_of_goes_to_click(args):
    assert fast.parse(args, {}) is None


def test_an_environment_variable_click_reads_sends_the_line_to_click():
    assert fast.parse(["prune", "a.json"], {}) is not None
    for name in ("HERMESCTX_CONFIG", "HERMESCTX_TRACEBACK", "_HERMESCTX_COMPLETE"):
        assert fast.parse(["prune", "a.json"], {name: "1"}) is None, name
    assert fast.parse(["normalize-usage", "a.json"], {"HERMESCTX_CONFIG": "c.yaml"}) is not None  # no --config


def test_a_command_that_declares_no_params_goes_to_click(monkeypatch):
    from hermesctx.cli.commands import prune

    assert fast.parse(["prune", "a.json"], {}) is not None
    monkeypatch.delattr(prune, "PARAMS")
    assert fast.parse(["prune", "a.json"], {}) is None


def _entry(args: list[str], env) -> int:
    """What hermesctx.cli.main does: the fast path, else click, on the same environment."""
    status = fast.run(args, env)
    return run_through_click(args, env) if status is None else status


def _both(args: list[str], stdin: bytes = b""):
    out = []
    for runner in (_entry, run_through_click):
        stdout, stderr = io.BytesIO(), io.StringIO()
        env = Env(stdin=io.BytesIO(stdin), stdout=stdout, stderr=stderr,
                  environ={k: v for k, v in os.environ.items() if not k.startswith("HERMESCTX_")})
        out.append((runner(list(args), env), stdout.getvalue(), stderr.getvalue()))
    return out


SESSION, BATCH = str(EXAMPLES / "coding-session.json"), str(EXAMPLES / "batch.jsonl")


@pytest.mark.parametrize("args", [
    ["prune", SESSION, "--protect-last-n", "2", "--tail-tokens", "0"],
    ["-q", "prune", "--pretty", SESSION],
    ["sanitize", "--stub", SESSION],
    ["sanitize", "--check", BATCH],
    ["validate", "--strict", SESSION],
    ["validate", "--format", "json", BATCH],
    ["cache-mark", SESSION, "--ttl", "1h"],
    ["cache-mark", "--check", SESSION],
    ["cache-mark", "--against", SESSION, SESSION],  # a usage error the body raises: click's message
    ["convert", "--to", "anthropic", SESSION],
    ["compress", "--summarizer", "extractive", "--protect-last-n", "3", "--tail-tokens", "100", SESSION],
    ["estimate", "--method", "rough", "--model", "gpt-4o", SESSION, BATCH],
    ["estimate", "--method", "rough", "--per-message", "--format", "table", SESSION],
    ["estimate", "--method", "rough", str(ROOT / "no-such-file.json")],  # exit 4, one line
    ["prune", "--jsonl", SESSION],  # not JSON Lines: exit 3
    ["normalize-usage", "--model", "gpt-4o", str(EXAMPLES / "usage-log.jsonl")],
])
def test_same_output_and_status_through_both_paths(args, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    fast_result, click_result = _both(args)
    assert fast_result == click_result
    assert fast.parse(args, {}) is not None


def test_a_usage_error_of_the_body_goes_to_click_before_anything_is_written():
    env = Env(stdin=io.BytesIO(), stdout=io.BytesIO(), stderr=io.StringIO())
    assert fast.run(["cache-mark", "--against", SESSION, SESSION], env) is None
    assert env.stdout.getvalue() == b"" and env.stderr.getvalue() == ""


def test_stdin_through_both_paths():
    data = (EXAMPLES / "coding-session.json").read_bytes()
    fast_result, click_result = _both(["prune", "--tail-tokens", "0"], data)
    assert fast_result == click_result and fast_result[0] == 0


CHECK = ("import sys; sys.argv = ['hermesctx', *sys.argv[1:]]\n"
         "from hermesctx.launch import main\n"
         "try:\n    main()\nexcept SystemExit as exc:\n    status = exc.code\n"
         "print(status, sorted(m for m in ('click', 'yaml', 'tiktoken', 'hermesctx.cli.group') if m in sys.modules),"
         " file=sys.stderr)\n")


@pytest.mark.parametrize("args", [["prune", "{f}"], ["-q", "sanitize", "{f}"], ["validate", "{f}"],
                                  ["estimate", "--method", "rough", "{f}"], ["convert", "--to", "anthropic", "{f}"]])
def test_the_fast_path_never_imports_click(args, tmp_path):
    path = tmp_path / "t.json"
    path.write_text('[{"role": "user", "content": "hi"}]')
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMESCTX_")}
    proc = subprocess.run([sys.executable, "-c", CHECK, *(a.format(f=path) for a in args)],
                          capture_output=True, text=True, env=env)
    assert proc.stderr.strip().splitlines()[-1] == "0 []", proc.stderr


def test_a_line_for_click_still_imports_it(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMESCTX_")}
    proc = subprocess.run([sys.executable, "-c", CHECK, "prune", "--nope"], capture_output=True, text=True, env=env)
    assert proc.stderr.strip().splitlines()[-1].startswith("2 ['click'")
    assert "No such option '--nope'" in proc.stderr
