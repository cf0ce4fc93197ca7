"""Completions are generated from the click tree and committed: a test fails when they drift,
and the bash and fish scripts really complete commands, options, option values (plugin summarizers
too), shells, commands and FILEs, and never file names where a value goes."""

import os
import shutil
import subprocess
import sys

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


def shell_env(home, plugin_dir=None) -> dict:
    """The installed `hermesctx` first on PATH (the scripts run it for plugin names), a fresh home,
    and the demo plugin on the import path when given."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HERMESCTX_")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_DATA_HOME=str(home / ".data"),
               PATH=os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", "")]))
    if plugin_dir is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(plugin_dir), env.get("PYTHONPATH")]))
    return env


def bash_complete(line: str, cwd, env=None) -> list[str]:
    """What bash's completion function offers for ``line`` (the last word is being completed)."""
    words = line.split(" ")
    script = (f"source {os.path.join(DIR, 'hermesctx.bash')}; COMP_WORDS=({line}); [[ {line!r} == *' ' ]] && "
              f"COMP_WORDS+=(''); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); _hermesctx; "
              f"printf '%s\\n' \"${{COMPREPLY[@]}}\"")
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=cwd, env=env, timeout=60)
    assert proc.returncode == 0 and len(words) > 1, proc.stderr
    return [w for w in proc.stdout.splitlines() if w]


def fish_complete(line: str, cwd, env) -> list[str]:
    script = f"source {os.path.join(DIR, 'hermesctx.fish')}; complete -C {line!r}"
    proc = subprocess.run(["fish", "--no-config", "-c", script], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    return [w.split("\t")[0] for w in proc.stdout.splitlines() if w]


def _folder(tmp_path):
    (tmp_path / "session.json").write_text("[]")
    (tmp_path / "logs").mkdir()
    return tmp_path


COMMANDS = sorted(sub.name for sub in tree().subcommands)
VALUES = [("hermesctx cache-mark --ttl ", ["1h", "5m"]), ("hermesctx replay --ttl ", ["1h", "5m"]),
          ("hermesctx compress --summarizer ", ["anthropic", "extractive", "openai"]),
          ("hermesctx compress --summarizer o", ["openai"]),
          ("hermesctx trajectory --summarizer ", ["anthropic", "extractive", "openai"]),
          ("hermesctx completion ", ["bash", "fish", "zsh"]), ("hermesctx man ", COMMANDS),
          ("hermesctx man co", ["completion", "compress", "config", "convert"]),
          ("hermesctx validate --target ", ["anthropic", "openai"]),
          ("hermesctx compress --model ", []), ("hermesctx recall ", [])]
FILES = [("hermesctx estimate ", ["logs", "session.json"]), ("hermesctx compress --summarizer openai s", ["session.json"]),
         ("hermesctx prune --report ", ["logs", "session.json"]), ("hermesctx spill --dir ", ["logs"]),
         ("hermesctx config check ", ["logs", "session.json"])]


@pytest.mark.skipif(not shutil.which("bash"), reason="bash is not installed")
@pytest.mark.parametrize("line,expected", VALUES + FILES)
def test_bash_completes_values_not_file_names(line, expected, tmp_path):
    """Values where an option or argument takes values (never the file names of the folder),
    files and folders where it takes paths."""
    folder = _folder(tmp_path)
    assert sorted(bash_complete(line, folder, shell_env(tmp_path))) == expected


@pytest.mark.skipif(not shutil.which("fish"), reason="fish is not installed")
@pytest.mark.parametrize("line,expected", VALUES + FILES)
def test_fish_completes_values_and_files(line, expected, tmp_path):
    folder = _folder(tmp_path)
    got = fish_complete(line, folder, shell_env(tmp_path))
    assert sorted(w.rstrip("/") for w in got) == expected


@pytest.mark.skipif(not shutil.which("zsh"), reason="zsh is not installed")
def test_zsh_script_parses():
    proc = subprocess.run(["zsh", "-n", os.path.join(DIR, "_hermesctx")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.skipif(not shutil.which("fish"), reason="fish is not installed")
def test_fish_script_parses():
    proc = subprocess.run(["fish", "--no-execute", os.path.join(DIR, "hermesctx.fish")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("shell", ["bash", "fish"])
def test_the_installed_plugin_summarizers_are_offered(shell, plugin_dir, tmp_path):
    """`compress --summarizer` also offers what the installed plugins name (the demo package's echo,
    exits and hangs), asked of `hermesctx config show` when the value is completed."""
    if not shutil.which(shell):
        pytest.skip(f"{shell} is not installed")
    complete = bash_complete if shell == "bash" else fish_complete
    got = complete("hermesctx compress --summarizer ", _folder(tmp_path), shell_env(tmp_path, plugin_dir))
    assert sorted(got) == ["anthropic", "echo", "exits", "extractive", "hangs", "openai"]
    assert sorted(complete("hermesctx trajectory --summarizer ", tmp_path, shell_env(tmp_path, plugin_dir))) == \
        ["anthropic", "extractive", "openai"]  # trajectory takes the built-ins only
