"""Regenerate the bundled example transcripts (deterministic: fixed seed, no network).

    python examples/make_examples.py

Writes examples/coding-session.json (OpenAI chat format with tool calls),
examples/anthropic-session.json (an Anthropic Messages request body) and
examples/batch.jsonl (a few transcripts, one per line).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

HERE = Path(__file__).parent
rng = random.Random(20261123)


def call(cid: str, name: str, **args) -> dict:
    return {"id": cid, "type": "function",
            "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}


def tool(cid: str, name: str, content: str) -> dict:
    return {"role": "tool", "tool_call_id": cid, "name": name, "content": content}


def source_file(lines: int) -> str:
    words = ["config", "parse", "token", "budget", "window", "summary", "tail", "head"]
    body = []
    for i in range(lines):
        a, b = rng.choice(words), rng.choice(words)
        body.append(f"def {a}_{b}_{i}(value):\n    return value * {i} + len('{a}{b}')\n")
    return "\n".join(body)


def pytest_output(passed: int, failed: int) -> str:
    lines = [f"tests/test_budget.py::test_case_{i} PASSED" for i in range(passed)]
    lines += [f"tests/test_budget.py::test_window_{i} FAILED" for i in range(failed)]
    if failed:
        lines.append("E   AssertionError: assert 131072 == 196608")
        lines.append("E    +  where 131072 = threshold_tokens(262144)")
    lines.append(f"=== {failed} failed, {passed} passed in 0.42s ===")
    return "\n".join(lines)


def coding_session() -> list:
    config_py = source_file(60)
    return [
        {"role": "system", "content": "You are a coding agent. Use the tools to read, run and edit code. "
                                      "Be concise and verify every change with the test suite."},
        {"role": "user", "content": "The budget tests fail after the refactor. Find out why and fix "
                                    "src/budget.py — keep the public API unchanged."},
        {"role": "assistant", "content": "I'll run the tests first.",
         "tool_calls": [call("call_01", "terminal", command="pytest -q tests/test_budget.py")]},
        tool("call_01", "terminal", json.dumps({"output": pytest_output(40, 2), "exit_code": 1})),
        {"role": "assistant", "content": "Two failures in the window tests. Reading the module.",
         "tool_calls": [call("call_02", "read_file", path="src/budget.py", offset=1, limit=400)]},
        tool("call_02", "read_file", config_py),
        {"role": "assistant", "content": None,
         "tool_calls": [call("call_03", "search_files", pattern="threshold_tokens", path="src"),
                        call("call_04", "read_file", path="src/config.py")]},
        tool("call_03", "search_files", json.dumps({"total_count": 3, "matches": [
            {"path": "src/budget.py", "line": 41, "content": "threshold_tokens = int(ctx * pct)"},
            {"path": "src/compress.py", "line": 88, "content": "if tokens >= threshold_tokens:"},
            {"path": "src/cli.py", "line": 12, "content": "print(threshold_tokens)"}]})),
        tool("call_04", "read_file", source_file(25)),
        {"role": "user", "content": "Note: windows below 512K must use at least 0.75 — that's the rule "
                                    "from the spec. Don't touch src/cli.py."},
        {"role": "assistant", "content": "Understood. Patching the threshold computation.",
         "tool_calls": [call("call_05", "patch", path="src/budget.py",
                             old_string="threshold_tokens = int(ctx * pct)",
                             new_string="pct = max(pct, 0.75) if ctx < 512_000 else pct\n"
                                        "    threshold_tokens = int(ctx * pct)")]},
        tool("call_05", "patch", json.dumps({"success": True, "diff": "@@ -41 +41,2 @@"})),
        {"role": "assistant", "content": "Re-running the tests.",
         "tool_calls": [call("call_06", "terminal", command="pytest -q tests/test_budget.py")]},
        tool("call_06", "terminal", json.dumps({"output": pytest_output(42, 0), "exit_code": 0})),
        {"role": "assistant", "content": "All 42 tests pass. I'll also add a regression test.",
         "tool_calls": [call("call_07", "write_file", path="tests/test_small_window.py",
                             content="from src.budget import threshold_tokens\n\n\n"
                                     "def test_small_window_floor():\n"
                                     "    assert threshold_tokens(262144) == 196608\n" * 8)]},
        tool("call_07", "write_file", json.dumps({"success": True, "bytes_written": 912})),
        {"role": "user", "content": "Great. Can you also check the docs mention the 0.75 floor? "
                                    "And what's the threshold for a 1M window?"},
        {"role": "assistant", "content": "Checking the docs.",
         "tool_calls": [call("call_08", "search_files", pattern="0.75", path="docs")]},
        tool("call_08", "search_files", json.dumps({"total_count": 0, "matches": []})),
        {"role": "assistant", "content": "The docs do not mention the floor. For a 1,000,000-token "
                                         "window the floor does not apply: 0.50 gives 500,000."},
        {"role": "user", "content": "Add a short note to docs/budgets.md about the floor, then run "
                                    "the full suite."},
        {"role": "assistant", "content": None,
         "tool_calls": [call("call_09", "write_file", path="docs/budgets.md",
                             content="# Budgets\n\nWindows below 512K tokens use a threshold of at "
                                     "least 0.75.\n")]},
        tool("call_09", "write_file", json.dumps({"success": True, "bytes_written": 78})),
        {"role": "assistant", "content": "Running the full suite.",
         "tool_calls": [call("call_10", "terminal", command="pytest -q")]},
        tool("call_10", "terminal", json.dumps({"output": pytest_output(118, 0), "exit_code": 0})),
        {"role": "assistant", "content": "Done: src/budget.py applies the 0.75 floor below 512K, a "
                                         "regression test and a docs note were added, and all 118 "
                                         "tests pass."},
    ]


def anthropic_session() -> dict:
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 4096,
        "system": [{"type": "text", "text": "You are a careful research assistant."}],
        "tools": [{"name": "web_search", "description": "Search the web.",
                   "input_schema": {"type": "object", "properties": {"q": {"type": "string"}},
                                    "required": ["q"]}}],
        "messages": [
            {"role": "user", "content": "What changed in the 2026 release of the budget spec? Cite sources."},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Let me search."},
                {"type": "tool_use", "id": "toolu_01", "name": "web_search",
                 "input": {"q": "budget spec 2026 release notes"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01",
                 "content": "\n".join(f"Result {i}: https://example.org/spec/{i} — section {i} "
                                      "describes the small-window floor and the 85 % fallback."
                                      for i in range(1, 30))}]},
            {"role": "assistant", "content": [{"type": "text", "text": "The 2026 release adds a "
                                               "0.75 floor below 512K tokens (example.org/spec/1)."}]},
            {"role": "user", "content": "Thanks — summarise that in one sentence, in Japanese too: 日本語でも。"},
        ],
    }


def batch() -> list:
    base = coding_session()
    out = [base, base[:10], anthropic_session(), base[:4] + [{"role": "user", "content": "continue"}]]
    return out


if __name__ == "__main__":
    (HERE / "coding-session.json").write_text(
        json.dumps(coding_session(), ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    (HERE / "anthropic-session.json").write_text(
        json.dumps(anthropic_session(), ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    with open(HERE / "batch.jsonl", "w", encoding="utf-8") as fh:
        for doc in batch():
            fh.write(json.dumps(doc, ensure_ascii=False) + "\n")
