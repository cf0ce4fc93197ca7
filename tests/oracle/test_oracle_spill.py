"""Differential: spill vs Hermes 0.19.0's maybe_persist_tool_result + enforce_turn_budget on
seeded random transcripts (`make oracle`). Both write into the same directory, one after the
other, so the paths (and so the block lengths the turn budget sees) are the same."""

from __future__ import annotations

import os
import random
import shutil

import pytest

from hermesctx.stages.spill import Budget, Writer, budget_for_window, safe_filename, spill_messages
from oracle.harness import hermes, needs_oracle

pytestmark = [pytest.mark.oracle, needs_oracle]

IDS = ["call_{n}", "toolu_0{n}XyZ", "../../etc/p{n}", "call {n}/x", "日本{n}", ".h{n}", "c-{n}-", "x" * 130 + "{n}"]
TOOLS = ["terminal", "read_file", "search_files", "web_extract", "write_file", "mystery"]


def _content(rng: random.Random, scale: int) -> str:
    kind = rng.random()
    if kind < 0.15:
        return ""
    size = rng.choice([rng.randint(1, scale // 4), scale - 1, scale, scale + 1,
                       rng.randint(scale, scale * 3), rng.randint(scale // 3, scale)])
    if rng.random() < 0.5:
        line = rng.choice(["row: ", "é日本 ", "x"]) * rng.randint(1, 30) + "\n"
        text = line * (size // len(line) + 1)
    else:
        text = "".join(rng.choice("ab \né") for _ in range(min(size, 300))) * (size // 300 + 1)
    return text[:size]


def _transcript(seed: int, scale: int) -> list:
    rng = random.Random(seed)
    msgs: list = [{"role": "system", "content": "sys"}, {"role": "user", "content": "go"}]
    n = 0
    anonymous = False
    for _ in range(rng.randint(1, 4)):
        calls = []
        for _ in range(rng.randint(1, 4)):
            n += 1
            cid = rng.choice(IDS).format(n=n)
            calls.append({"id": cid, "type": "function",
                          "function": {"name": rng.choice(TOOLS), "arguments": "{}"}})
        msgs.append({"role": "assistant", "content": "", "tool_calls": calls})
        for call in calls:
            msg = {"role": "tool", "content": _content(rng, scale), "tool_call_id": call["id"]}
            r = rng.random()
            if r < 0.15 and not anonymous:  # one id-less result per transcript: hermesctx never
                anonymous = True            # overwrites a file with other content (Hermes does)
                if r < 0.1:
                    del msg["tool_call_id"]
                else:
                    msg["tool_call_id"] = None
            msgs.append(msg)
        msgs.append({"role": "assistant", "content": "ok"})
    return msgs


_HERMES = """
import subprocess
from tools.budget_config import BudgetConfig, DEFAULT_BUDGET, budget_for_context_window
from tools.tool_result_storage import maybe_persist_tool_result, enforce_turn_budget

class Env:
    def __init__(self, t): self.t = t
    def get_temp_dir(self): return self.t
    def execute(self, cmd, timeout=30, stdin_data=None):
        p = subprocess.run(["bash", "-c", cmd], input=(stdin_data or "").encode(), capture_output=True)
        return {"returncode": p.returncode, "output": p.stdout.decode()}

env = Env(data["tmp"])
result = []
for case in data["cases"]:
    if case["budget"]:
        budget = BudgetConfig(**case["budget"])
    else:
        budget = budget_for_context_window(case["window"])
    msgs = [dict(m) for m in case["messages"]]
    names = {tc["id"]: tc["function"]["name"] for m in msgs for tc in m.get("tool_calls") or []}
    turn = []
    for i, m in enumerate(msgs + [{"role": "end"}]):
        if m.get("role") == "tool":
            m["content"] = maybe_persist_tool_result(m["content"], names.get(m.get("tool_call_id")),
                                                     m.get("tool_call_id"), env=env, config=budget)
            turn.append(m)
        elif turn:
            enforce_turn_budget(turn, env=env, config=budget)
            turn = []
    result.append(msgs)
"""


def _files(directory: str) -> dict:
    out = {}
    for name in sorted(os.listdir(directory)) if os.path.isdir(directory) else []:
        with open(os.path.join(directory, name), "rb") as handle:
            out[name] = handle.read()
    return out


@pytest.mark.parametrize("batch", range(4))
def test_spill_matches_hermes(tmp_path, batch):
    cases = []
    for seed in range(batch * 50, batch * 50 + 50):
        rng = random.Random(seed)
        if seed % 3 == 0:
            budget = {"default_result_size": 300, "turn_budget": rng.choice([500, 900, 2000]),
                      "preview_size": rng.choice([40, 100, 1500])}
            scale = 300
        else:
            budget = None
            window = rng.choice([None, 0, 1000, 8192, 32768])
            scale = budget_for_window(window).default_result_size
        cases.append({"messages": _transcript(seed, scale), "budget": budget,
                      "window": None if budget else window})
    spill_dir = str(tmp_path / "hermes-results")
    for k, case in enumerate(cases):
        theirs = hermes(_HERMES, {"tmp": str(tmp_path), "cases": [case]})[0]
        their_files = _files(spill_dir)
        shutil.rmtree(spill_dir, ignore_errors=True)
        budget = Budget(**case["budget"]) if case["budget"] else budget_for_window(case["window"])
        ours, _ = spill_messages(case["messages"], Writer(spill_dir), budget)
        assert ours == theirs, f"case {k}"
        assert _files(spill_dir) == their_files, f"case {k}"
        shutil.rmtree(spill_dir, ignore_errors=True)


def test_file_names_match_hermes():
    ids = ["call_abc123", "call.1", "call_abc/def", "../../etc/passwd", "a" * 300, "x" * 120, "x" * 121,
           "日本語", "call_日本", "é", "a b  c", ".hidden", "call-1-", "...", "", None, 12345, "/abs/path",
           "a\x00b", "..", ".", "-", "_x_", "x" * 119 + "é", "a" * 119 + "/b"]
    theirs = hermes("""
from tools.tool_result_storage import _safe_result_filename
result = [_safe_result_filename(i) for i in data]
""", ids)
    assert [safe_filename(i) for i in ids] == theirs


def test_cli_matches_hermes(tmp_path):
    """The whole command (`hermesctx spill --dir D [--context-length N]`) on a JSONL batch."""
    from conftest import invoke

    cases = []
    for seed in range(500, 530):
        window = [None, 1000, 8192, 32768, 200000][seed % 5]
        cases.append({"messages": _transcript(seed, budget_for_window(window).default_result_size),
                      "budget": None, "window": window})
    spill_dir = str(tmp_path / "hermes-results")
    for k, case in enumerate(cases):
        theirs = hermes(_HERMES, {"tmp": str(tmp_path), "cases": [case]})[0]
        their_files = _files(spill_dir)
        shutil.rmtree(spill_dir, ignore_errors=True)
        args = ["spill", "--dir", spill_dir] + (["--context-length", str(case["window"])] if case["window"] else [])
        result = invoke(args, {"messages": case["messages"]})
        assert result.status == 0, result.stderr
        assert result.json["messages"] == theirs, f"case {k}"
        assert _files(spill_dir) == their_files, f"case {k}"
        shutil.rmtree(spill_dir, ignore_errors=True)
