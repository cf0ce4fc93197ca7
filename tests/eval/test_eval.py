"""The instrument of ``make eval`` (eval/probes.py, eval/run.py): probes drawn from what a
successor needs, never from tool-call arguments; the held-out split; the correlation line."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

import pytest
from builders import call, exchange

EVAL = Path(__file__).resolve().parents[2] / "eval"


def _load(name: str, alias: str):
    spec = importlib.util.spec_from_file_location(alias, EVAL / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[alias] = module  # (dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def ev():
    """eval/probes.py, eval/fixtures.py and eval/run.py, loaded under their own names only while
    run.py imports them (tests/fixtures must not be shadowed for other tests)."""
    probes = _load("probes", "eval_probes")
    fixtures = _load("fixtures", "eval_fixtures")
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(sys.modules, "probes", probes)
        mp.setitem(sys.modules, "fixtures", fixtures)
        mp.setattr(sys, "path", list(sys.path))
        run = _load("run", "eval_run")
    return argparse.Namespace(probes=probes, fixtures=fixtures, run=run)


def transcript() -> list[dict]:
    return [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Fix the flaky upload test. You must not change the public API."},
        *exchange("c1", "Read", {"file_path": "/r/config.json"}, '{\n  "timeout": 15000,\n  "retries": 2\n}'),
        *exchange("c2", "Bash", {"command": "pytest tests/test_upload.py -q"},
               "Exit code 1\nE   AssertionError: upload took 16.2s, limit 15s\n1 failed, 11 passed in 17.0s",
               text="The issue is that the client timeout is shorter than the server's 15000 ms."),
        *exchange("c3", "Edit", {"file_path": "/r/src/upload.py", "old_string": "CLIENT_TIMEOUT = 10",
                              "new_string": "CLIENT_TIMEOUT = settings.timeout_ms / 1000"},
               "String to replace not found in file."),
        *exchange("c4", "Edit", {"file_path": "/r/src/upload.py", "old_string": "CLIENT_TIMEOUT = 10.0",
                              "new_string": "CLIENT_TIMEOUT = settings.upload_timeout_seconds\n}"},
               "The file /r/src/upload.py has been updated."),
        *exchange("c5", "Bash", {"command": "pytest tests/test_upload.py -q"}, "12 passed in 3.1s"),
        {"role": "assistant", "content": "Tests pass. Next I'll run the whole suite to check for regressions."},
        {"role": "user", "content": "ok go"},
        {"role": "assistant", "content": "Running it."},
    ]


def test_probes_come_from_results_prose_and_asks(ev):
    msgs = transcript()
    found = ev.probes.draw(msgs, 1, len(msgs) - 2).items
    facts = {p for _, p in found["facts"]}
    assert "AssertionError: upload took 16.2s, limit 15s" in facts  # the key line, not the count line
    assert "1 failed, 11 passed in 17.0s" in facts and "12 passed in 3.1s" in facts  # outcomes
    assert '"timeout": 15000' in facts  # a value a later turn uses ...
    assert not any("retries" in p for p in facts)  # ... and one no later turn mentions
    assert "String to replace not found in file." in facts
    assert [p for _, p in found["files"]] == ["CLIENT_TIMEOUT = settings.upload_timeout_seconds"]  # last change
    assert [p for _, p in found["constraints"]] == ["You must not change the public API."]
    assert [p for _, p in found["decisions"]] == [
        "The issue is that the client timeout is shorter than the ser"]  # 60 characters
    tried = {p for _, p in found["tried"]}
    assert ("AssertionError: upload took 16.2s, limit 15s", "12 passed in 3.1s") in tried
    assert ("String to replace not found in file.", "CLIENT_TIMEOUT = settings.upload_timeout_seconds") in tried
    assert [p for _, p in found["next"]] == ["Next I'll run the whole suite to check for regressions."]
    # never a tool-call argument: no path, no command
    every = [p for items in found.values() for _, probe in items
             for p in (probe if isinstance(probe, tuple) else (probe,))]
    assert not any("pytest tests" in p or "/r/config.json" in p for p in every)


def test_a_probe_the_head_or_tail_repeats_is_dropped(ev):
    msgs = transcript()
    found = ev.probes.draw(msgs, 1, len(msgs) - 2)
    kept = ev.probes.output_text(msgs[:1] + [{"role": "user", "content": "recall: 12 passed in 3.1s; "
                                                                       "String to replace not found in file."}])
    out = ev.probes.distinct(found, kept).items
    assert "12 passed in 3.1s" not in {p for _, p in out["facts"]}
    pairs = {p for _, p in out["tried"]}
    assert ("AssertionError: upload took 16.2s, limit 15s", "12 passed in 3.1s") in pairs  # one half is news
    assert ("String to replace not found in file.", "CLIENT_TIMEOUT = settings.upload_timeout_seconds") in pairs
    assert out["constraints"] == found.items["constraints"]


def test_survival_reads_arguments_and_json_contents(ev):
    pr = ev.probes
    text = pr.output_text([{"role": "assistant", "content": "", "tool_calls": [
        call("c", "Write", {"file_path": "/a.py", "content": "x = 1\nLIMIT   =  15000\n"})]},
        {"role": "tool", "tool_call_id": "c", "content": json.dumps({"output": 'a "quoted": value\n'})}])
    assert pr.survives("LIMIT = 15000", text)
    assert pr.survives('"quoted": value', text)  # unescaped from the JSON envelope
    assert not pr.survives(("LIMIT = 15000", "absent half"), text)  # a pair needs both


def test_key_line_of_failures(ev):
    key = ev.probes.key_line
    assert key("apply_patch verification failed: Failed to find expected lines in /a.md:\n  old line") \
        .startswith("apply_patch verification failed")
    assert key("Traceback (most recent call last):\n  File \"x.py\", line 1\nKeyError: 'id'\n") == "KeyError: 'id'"
    assert key("Exit code: 1\nWall time: 0.1 seconds\nOutput:\nls: docs: No such file or directory\n") \
        == "ls: docs: No such file or directory"
    assert ev.probes.is_failure(*ev.probes.result_body('{"output": "boom", "metadata": {"exit_code": 2}}'))
    assert not ev.probes.is_failure(*ev.probes.result_body("Process exited with code 0\n8 passed"))


def test_split_is_stable_and_about_forty_percent(ev):
    held = [ev.run.held_out(f"dir/log-{k}.jsonl") for k in range(2000)]
    assert 0.36 < sum(held) / len(held) < 0.44
    assert held == [ev.run.held_out(f"dir/log-{k}.jsonl") for k in range(2000)]
    assert ev.run.source_of("kv-248-TeacherEvaluation-codex/rollout.jsonl") == "Codex"
    assert ev.run.source_of("agent-sessions-jazzyalex/claude__large.jsonl") == "Claude Code"
    assert ev.run.source_of("hermes-trajectories-neurareport/x.jsonl#3") == "Hermes"
    assert ev.run.source_of("mini-swe-agent/github_issue.traj.json") == "other"


def test_correlation_line(ev):
    rows = [{"ledger": x, "kept:compress": 0.1 + 0.5 * x} for x in (0.2, 0.4, 0.9, 1.0)]
    assert ev.run.correlation(rows, "ledger") == "r = 1.00 over 4 transcripts"
    assert ev.run.correlation(rows[:2], "ledger") == "n/a (2 transcripts)"
    flat = [{"ledger": 1.0, "kept:compress": k} for k in (0.2, 0.5, 0.7)]  # summary_coverage on main: 100 %
    assert ev.run.correlation(flat, "ledger") == "n/a (the report's figure is 100 % on all 3 transcripts)"
    # with a floor on probes, a transcript with too few probes to move by less than 10 points is left out
    counts = {c: (0, 0) for c in ev.probes.CATEGORIES}
    sized = [{**r, "compress": {**counts, "facts": (1, n)}} for r, n in zip(rows, (3, 12, 10, 40))]
    assert ev.run.correlation(sized, "ledger", 10) == "r = 1.00 over 3 transcripts"
    assert ev.run.correlation(sized, "ledger", 20) == "n/a (1 transcripts)"


def test_every_system_at_the_same_cut(ev):
    """On a fixture: the same probes for every system; prune never touches prose, so it keeps
    every constraint, decision and next step; truncation keeps at most what its tokens hold."""
    args = argparse.Namespace(protect_last_n=10, tail_tokens=4000, max_summary_tokens=10_000)
    row = ev.run.evaluate("claude-code", ev.fixtures.transcripts()["claude-code"], args)
    assert "skip" not in row and 0 < row["start"] < row["end"] < row["messages"]
    totals = {s: [row[s][c][1] for c in ev.probes.CATEGORIES] for s in ev.run.SYSTEMS}
    assert len({tuple(t) for t in totals.values()}) == 1 and sum(totals["compress"]) > 0
    for cat in ("constraints", "decisions", "next"):
        assert row["prune"][cat][0] == row["prune"][cat][1]
    assert abs(row["reduction:truncate"] - row["reduction:compress"]) < 0.02
    assert not row["over_budget"]


def test_long_autonomous_run_fixture(ev):
    messages = ev.fixtures.autonomous()
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    assert len(messages) == 200 and users[-1] == 8
    args = argparse.Namespace(protect_last_n=10, tail_tokens=4000, max_summary_tokens=10_000)
    line = ev.run.long_run(args)
    assert line.startswith("200 messages, last ask at 8: compacted [")
    assert line.endswith(" message 100")


def test_every_probe_is_in_the_transcript_it_came_from(ev):
    """The uncompressed transcript keeps 100 % (a probe made up by the rules, not quoted, would
    count as lost by every system)."""
    pr = ev.probes
    cases = {**ev.fixtures.transcripts(), "autonomous": ev.fixtures.autonomous(), "hand": transcript()}
    drawn = 0
    for messages in cases.values():
        found = pr.draw(messages, 1, len(messages))
        text = pr.output_text(messages)
        for items in found.items.values():
            for _, probe in items:
                drawn += 1
                assert pr.survives(probe, text), probe
    assert drawn > 100


def test_done_when_line(ev):
    cats = ev.probes.CATEGORIES

    def row(kept: int, prune: int, reduction: float) -> dict:
        return {"compress": {c: (kept, 10) for c in cats}, "prune": {c: (prune, 10) for c in cats},
                "reduction:compress": reduction, "over_budget": False, "reduction:bound": 0.8,
                "tokens": 100, "after:compress": round(100 * (1 - reduction))}

    assert ev.run.done_when([row(7, 6, 0.7)]) == (
        "yes: kept 70 % (>= 65 %); yes: every category >= 50 %; yes: more than prune alone (70 % vs 60 %); "
        "yes: mean reduction of the request 70 % (>= 60 %; at this cut head and tail alone allow 80 %, an empty "
        "summary; over all tokens 70 %); yes: 0 summaries over budget")
    line = ev.run.done_when([row(4, 6, 0.5)])
    assert line.startswith("NO: kept 40 % (>= 65 %); NO: every category >= 50 % (below: facts from tool output 40 %")
    assert "NO: more than prune alone (40 % vs 60 %)" in line and "NO: mean reduction" in line
