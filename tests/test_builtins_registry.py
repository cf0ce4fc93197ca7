"""The registry (hermesctx/registry.py): one declaration per command, stage, summarizer and format,
and every list of them in the code is read from it, never kept beside it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from hermesctx import formats, pipeline, registry, summary
from hermesctx.cli import COMMANDS, params
from hermesctx.plugins import Plugin
from hermesctx.stages import trajectory


@pytest.mark.parametrize("entry", [e for g in (registry.COMMANDS, registry.STAGES, registry.SUMMARIZERS,
                                               registry.FORMATS) for e in registry.entries(g)],
                         ids=lambda e: f"{e.kind}:{e.name}")
def test_every_entry_loads_and_is_what_it_says(entry):
    assert isinstance(entry, Plugin) and entry.package == registry.BUILT_IN
    found = registry.load(entry)
    if entry.group == registry.COMMANDS:
        assert hasattr(found, "body") or hasattr(found, "command")
    elif entry.group == registry.STAGES:
        assert callable(found.build) and hasattr(found, "Options")
    elif entry.group == registry.SUMMARIZERS:
        assert isinstance(found, type) and callable(found.summarize)
    else:
        assert found.NAME == entry.name
        assert found.LOG == (entry.trait("detector") == "log")
        # writes: --to offers it (Responses is written back for Responses input only)
        assert (hasattr(found, "write") and getattr(found, "TARGET", True)) == bool(entry.trait("writes"))
        assert entry.trait("detector") in ("document", "log", "items", "chat")
        assert isinstance(entry.trait("priority"), int)


def test_every_list_is_the_registrys():
    assert list(COMMANDS) == list(registry.names(registry.COMMANDS))
    assert set(COMMANDS.values()) == {e.value for e in registry.entries(registry.COMMANDS)}
    assert pipeline.STAGES == registry.names(registry.STAGES)
    assert pipeline.STAGES[:5] == ("spill", "prune", "compress", "sanitize", "cache-mark")
    assert summary.NAMES == registry.names(registry.SUMMARIZERS) == ("extractive", "anthropic", "openai")
    summarizer = next(spec for f, spec in trajectory_specs() if f.name == "summarizer")
    assert summarizer.choices == summary.NAMES
    assert formats.FORMATS == registry.names(registry.FORMATS)
    assert params.FROM_CHOICES == ("auto", *formats.FORMATS)
    assert params.TO_CHOICES == formats.TARGETS == ("openai", "anthropic", "sharegpt")


def trajectory_specs():
    from hermesctx.options import specs

    return specs(trajectory.Options)


def test_detection_order_comes_from_the_priorities():
    assert [m.NAME for m in formats.DOCUMENTS] == ["sharegpt", "opencode", "opencode-go", "openhands", "cline",
                                                   "aider", "gemini", "goose"]
    assert formats.LOG_FORMATS == ("claude-code", "codex", "opencode-run", "copilot")
    assert [e.name for e in registry.detection_order("chat")] == ["anthropic", "openai"]


def test_a_plugin_name_is_not_a_built_in_one():
    assert registry.find(registry.STAGES, "prune").value == "hermesctx.stages.prune"
    assert registry.find(registry.STAGES, "estimate") is None  # a command, not a pipeline stage
    assert registry.find(registry.SUMMARIZERS, "my-plugin") is None


def test_reading_the_registry_imports_nothing_it_names():
    check = ("import sys\nfrom hermesctx import registry\n"
             "names = [e.value.partition(':')[0] for g in registry._ENTRIES for e in registry.entries(g)]\n"
             "print(sorted(n for n in names if n in sys.modules))\n")
    proc = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
