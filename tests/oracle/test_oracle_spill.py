"""Differential: spill vs Hermes 0.19.0's maybe_persist_tool_result + enforce_turn_budget on
seeded random transcripts (`make oracle`). Both write into the same directory, one after the
other, so the paths (and so the block lengths the turn budget sees) are the same."""

from __future__ import annotations

import json
import os
import random
import shutil

import pytest

from hermesctx.stages.spill import OPEN_TAG, Budget, Writer, budget_for_window, safe_filename, spill_messages
from oracle.harness import assert_wire_matches, hermes, needs_oracle

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
            if r < 0.15 and not anonymous:  # one id-less result per transcript (collisions:
                anonymous = True            # test_adversarial_ids_and_sizes_match_hermes)
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
        if name in (".index", ".sent"):
            continue  # ours: the spill index and the send path's originals for --restore (Hermes has none)
        if os.path.isdir(os.path.join(directory, name)):
            out[name] = "(directory)"
            continue
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
    pairs = []
    for k, case in enumerate(cases):
        theirs = hermes(_HERMES, {"tmp": str(tmp_path), "cases": [case]})[0]
        their_files = _files(spill_dir)
        shutil.rmtree(spill_dir, ignore_errors=True)
        args = ["spill", "--dir", spill_dir] + (["--context-length", str(case["window"])] if case["window"] else [])
        result = invoke(args, {"messages": case["messages"]})
        assert result.status == 0, result.stderr
        pairs.append((result.json["messages"], theirs))  # D12: compared after Hermes's send path
        assert _files(spill_dir) == their_files, f"case {k}"
        shutil.rmtree(spill_dir, ignore_errors=True)
    assert_wire_matches(pairs)


# --- adversarial: colliding and hostile ids, sizes at every edge, per-tool thresholds --------

ODD_IDS = ["call_1", "call_1", "call_2", ".", "..", "...", "", None, " ", "\t", "a b", "日本語", "call_日本",
           "😀", "é", "/etc/passwd", "../../x", "x" * 300, "x" * 120, "x" * 121, "a" * 119 + "é", "-", "_x_",
           ".hidden", "call-1-", "a\x00b", "a\nb", 0, 12345, 1.5, True, False, "call\\1", "tool_result",
           "budget_0", "budget_1"]
ODD_TOOLS = ["terminal", "read_file", "search_files", "web_extract", "mystery", None, "READ_FILE", "read_file "]


def _odd_content(rng: random.Random, limit: int, preview_size: int) -> str:
    if rng.random() < 0.06:
        return ""
    size = max(0, rng.choice([limit - 1, limit, limit + 1, rng.randint(1, max(1, limit // 3)),
                              rng.randint(limit, 3 * limit), rng.randint(limit // 3, limit), preview_size,
                              preview_size + 1, rng.randint(1, 2 * preview_size + 2)]))
    style = rng.random()
    if style < 0.3:
        line = rng.choice(["row: ", "é日本 ", "x", "😀", "a\r"]) * rng.randint(1, 40) + "\n"
        text = line * (size // len(line) + 1)
    elif style < 0.5:  # a newline right around preview_size // 2
        text = "y" * max(0, preview_size // 2 + rng.choice([-1, 0, 1, 2])) + "\n" + "z" * size
    elif style < 0.6:
        text = ("pre <persisted-output> mid " if rng.random() < 0.5 else "") + "q" * size
    else:
        text = "".join(rng.choice("ab \né日😀\t") for _ in range(min(size, 200))) * (size // 200 + 1)
    return text[:size]


def _odd_case(seed: int) -> dict:
    rng = random.Random(seed)
    overrides = {}
    if rng.random() < 0.3:
        overrides = {rng.choice(["terminal", "mystery", "web_extract", "read_file"]): rng.choice([0, 10, 500, 5000])}
    if rng.random() < 0.35:
        budget = {"default_result_size": rng.choice([0, 1, 50, 300, 1000]),
                  "turn_budget": rng.choice([1, 100, 500, 900, 2000, 5000]),
                  "preview_size": rng.choice([0, 1, 10, 40, 100, 1500]), "tool_overrides": overrides}
        window, limit, preview_size = None, budget["default_result_size"], budget["preview_size"]
    else:
        budget = None
        window = rng.choice([None, 1000, 5000, 8192, 16000, 32768, 166667, 200000])
        limit, preview_size = budget_for_window(window).default_result_size, 1500
    msgs: list = [{"role": "system", "content": "sys"}, {"role": "user", "content": "go"}]
    for _ in range(rng.randint(1, 4)):
        calls = [{"id": rng.choice(ODD_IDS), "type": "function",
                  "function": {"name": rng.choice(ODD_TOOLS), "arguments": "{}"}}
                 for _ in range(rng.choice([1, 1, 2, 3, 5, 8]))]
        msgs.append({"role": "assistant", "content": "", "tool_calls": calls})
        for call in calls:
            msg = {"role": "tool", "content": _odd_content(rng, max(limit, 2), preview_size)}
            if rng.random() < 0.9:
                msg["tool_call_id"] = call["id"]
            if rng.random() < 0.3 and call["function"]["name"]:
                msg["name"] = call["function"]["name"]
            msgs.append(msg)
        if rng.random() < 0.8:
            msgs.append({"role": "assistant", "content": "ok"})
    return {"messages": msgs, "budget": budget, "window": window, "overrides": overrides}


_ODD_HERMES = """
import subprocess
from tools.budget_config import BudgetConfig, budget_for_context_window
from tools.tool_result_storage import maybe_persist_tool_result, enforce_turn_budget

class Env:
    def __init__(self, t): self.t = t
    def get_temp_dir(self): return self.t
    def execute(self, cmd, timeout=30, stdin_data=None):
        p = subprocess.run(["bash", "-c", cmd], input=stdin_data.encode(), capture_output=True)
        return {"returncode": p.returncode}

result = []
for k, case in enumerate(data["cases"]):
    env = Env(data["base"] + "/h%03d" % k)
    if case["budget"]:
        budget = BudgetConfig(**case["budget"])
    else:
        b = budget_for_context_window(case["window"])
        budget = BudgetConfig(b.default_result_size, b.turn_budget, b.preview_size, case["overrides"])
    msgs = [dict(m) for m in case["messages"]]
    names = {tc["id"]: tc["function"]["name"] for m in msgs for tc in m.get("tool_calls") or []}
    turn = []
    for m in msgs + [{"role": "end"}]:
        if m.get("role") == "tool":
            tid = m.get("tool_call_id")
            m["content"] = maybe_persist_tool_result(m["content"], m.get("name") or names.get(tid), tid,
                                                     env=env, config=budget)
            turn.append(m)
        elif turn:
            enforce_turn_budget(turn, env=env, config=budget)
            turn = []
    result.append(msgs)
"""


@pytest.mark.parametrize("batch", range(3))
def test_adversarial_ids_and_sizes_match_hermes(tmp_path, batch):
    """Ids that collide (None, "", missing, duplicates, budget_<i>), hostile and non-string ids,
    contents at threshold ±1 and at the preview's newline rule, multibyte text, per-tool
    thresholds, scaled budgets: stage and CLI give Hermes's messages and Hermes's files (the
    earlier content of a replaced file is kept aside in .replaced/, which Hermes has not)."""
    from conftest import invoke

    cases = [_odd_case(seed) for seed in range(1000 + batch * 70, 1000 + batch * 70 + 70)]
    theirs = hermes(_ODD_HERMES, {"base": str(tmp_path), "cases": cases})
    spilled = 0
    pairs = []
    for k, (case, want) in enumerate(zip(cases, theirs)):
        hermes_dir = str(tmp_path / f"h{k:03d}" / "hermes-results")
        files = _files(hermes_dir)
        budget = (Budget(**case["budget"]) if case["budget"]
                  else budget_for_window(case["window"], tool_overrides=case["overrides"]))
        ours_dir = str(tmp_path / f"o{k:03d}" / "hermes-results")
        ours, _ = spill_messages(case["messages"], Writer(ours_dir), budget)
        assert json.loads(json.dumps(ours).replace(f"/o{k:03d}/", f"/h{k:03d}/")) == want, k
        assert {n: b for n, b in _files(ours_dir).items() if n != ".replaced"} == files, k
        spilled += sum(OPEN_TAG in m["content"] for m in want if m.get("role") == "tool")
        if case["budget"] is None and k % 2 == 0:
            cli_dir = str(tmp_path / f"c{k:03d}" / "hermes-results")
            args = ["spill", "--dir", cli_dir] + (["--context-length", str(case["window"])] if case["window"] else [])
            args += [arg for tool, n in case["overrides"].items() for arg in ("--threshold", f"{tool}={n}")]
            result = invoke(args, {"messages": case["messages"]})
            assert result.status == 0, result.stderr
            got = json.loads(json.dumps(result.json["messages"]).replace(f"/c{k:03d}/", f"/h{k:03d}/"))
            pairs.append((got, want))  # D12: compared after Hermes's send path
    assert spilled > 100
    assert_wire_matches(pairs)
