"""sanitize: both Hermes repairs rule by rule, Anthropic blocks, --check, and CLI snapshots."""

import copy
import json

from builders import call
from conftest import FIXTURES, invoke

from hermesctx.stages.sanitize import (
    CALL_REMOVED,
    STUB_TEXT,
    find_problems,
    sanitize,
    strip_orphans,
    stub_orphans,
)

ORPHANS = json.loads((FIXTURES / "sanitize" / "orphans.json").read_text(encoding="utf-8"))
ANTHROPIC = json.loads((FIXTURES / "sanitize" / "anthropic-orphans.json").read_text(encoding="utf-8"))


def test_strip_keeps_idless_results_and_codex_pairs():
    out, _ = strip_orphans(ORPHANS)
    assert {"role": "tool", "content": "tool message without tool_call_id"} in out
    assert out[6]["tool_calls"][0]["call_id"] == "call_E" and out[7]["tool_call_id"] == "call_E"
    assert all(m.get("tool_call_id") != "fc_2" for m in out)  # Codex result on the wrong id


def test_strip_fills_only_blank_content():
    msgs = [{"role": "assistant", "content": "   ", "tool_calls": [call("a")]},
            {"role": "assistant", "content": "kept", "tool_calls": [call("b")]},
            {"role": "assistant", "content": None, "tool_calls": [call("c")]}]
    out, report = strip_orphans(msgs)
    assert out == [{"role": "assistant", "content": CALL_REMOVED}, {"role": "assistant", "content": "kept"},
                   {"role": "assistant", "content": CALL_REMOVED}]
    assert report["calls_removed"] == 3


def test_stub_goes_right_after_the_assistant_in_call_order():
    msgs = [{"role": "assistant", "content": "", "tool_calls": [call("a"), call("b", "read_file"), call("c", "web")]},
            {"role": "tool", "tool_call_id": "b", "content": "B"}]
    out, report = stub_orphans(msgs)
    assert [(m.get("tool_call_id"), m["content"]) for m in out[1:]] == [("a", STUB_TEXT), ("c", STUB_TEXT), ("b", "B")]
    assert out[1] == {"role": "tool", "name": "terminal", "content": STUB_TEXT, "tool_call_id": "a"}
    assert report["stubs_added"] == 2


def test_stub_mode_pre_api_cleanups():
    msgs = [{"role": "session_meta", "content": "x"}, {"content": "no role"},
            {"role": "assistant", "content": "hi", "tool_calls": []},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "function": {"name": ""}}, {"id": "c2"}]},
            {"role": "tool", "tool_call_id": "c1", "content": "one"}, {"role": "tool", "tool_call_id": "c2", "content": "two"},
            {"role": "assistant", "content": "", "tool_calls": [call("c1"), call("c3")]},
            {"role": "tool", "tool_call_id": "c1", "content": "again"}, {"role": "tool", "tool_call_id": "c3", "content": "3"}]
    out, report = stub_orphans(msgs)
    assert out[0] == {"role": "assistant", "content": "hi"}
    assert [c["function"]["name"] for c in out[1]["tool_calls"]] == ["invalid_tool_call"] * 2
    assert out[1]["tool_calls"][1]["function"] == {"name": "invalid_tool_call", "arguments": "{}"}
    assert [c["id"] for c in out[4]["tool_calls"]] == ["c3"]
    assert [m["content"] for m in out if m["role"] == "tool"] == ["one", "two", "3"]
    assert report["messages_dropped"] == 2 and report["duplicates_removed"] == 2


def test_whitespace_ids_match_only_in_stub_mode():
    msgs = [{"role": "assistant", "content": "", "tool_calls": [call("c1")]},
            {"role": "tool", "tool_call_id": " c1 ", "content": "r"}]
    assert strip_orphans(msgs)[0] == [{"role": "assistant", "content": CALL_REMOVED}]
    assert stub_orphans(msgs)[0] == msgs


def test_anthropic_fixture_both_modes():
    frozen = copy.deepcopy(ANTHROPIC)
    out, report = sanitize(ANTHROPIC)
    assert out["system"] == "You are Hermes." and out["model"] == "claude-sonnet-4-5"
    assert [b.get("id") for b in out["messages"][1]["content"]] == [None, "toolu_1"]
    assert [b["tool_use_id"] for b in out["messages"][2]["content"]] == ["toolu_1"]
    assert (report["results_removed"], report["calls_removed"]) == (1, 1)
    stubbed, report = sanitize(ANTHROPIC, stub=True)
    assert stubbed["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_2", "content": STUB_TEXT},
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.py\nb.py"}]
    assert len(stubbed["messages"]) == 4 and report["stubs_added"] == 1
    assert ANTHROPIC == frozen
    assert [(p["index"], p["kind"], p["id"]) for p in find_problems(ANTHROPIC["messages"])] == [
        (1, "orphan_call", "toolu_2"), (2, "orphan_result", "toolu_gone")]


def test_anthropic_result_emptied_gets_filler():
    msgs = [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "gone", "content": "x"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "lost", "name": "t", "input": {}}]}]
    out, _ = strip_orphans(msgs)
    assert out == [{"role": "user", "content": [{"type": "text", "text": "(tool result removed)"}]},
                   {"role": "assistant", "content": [{"type": "text", "text": CALL_REMOVED}]}]


def test_cli_snapshots(snapshot):
    path = str(FIXTURES / "sanitize" / "orphans.json")
    strip = invoke(["sanitize", path])
    stub = invoke(["sanitize", "--stub", path])
    anth = invoke(["sanitize", "--stub", str(FIXTURES / "sanitize" / "anthropic-orphans.json")])
    assert (strip.status, stub.status, anth.status) == (0, 0, 0)
    # positional (D12): the Codex result answering the call's call_id now answers its id; the
    # repaired history then goes through Hermes's send path (merges, stray results)
    assert strip.stderr.strip().splitlines()[-1] == ("2 orphan results removed, 3 orphan calls removed, "
                                                     "1 result ids rewritten to their call's id")
    assert stub.stderr.strip().splitlines()[-1] == ("2 orphan results removed, 3 stub results added, "
                                                    "1 result ids rewritten to their call's id")
    assert {"strip": strip.json, "stub": stub.json, "anthropic": anth.json} == snapshot


def test_cli_check_changes_nothing_and_counts():
    raw = (FIXTURES / "sanitize" / "orphans.json").read_bytes()
    r = invoke(["--quiet", "sanitize", "--check"], raw)  # the problems are the output: never silenced
    assert r.status == 1 and r.stdout == b""
    assert r.stderr.splitlines()[1] == ("messages[4].tool_call_id: OA-TOOL-ID-MISMATCH: Invalid parameter: "
                                        "'tool_call_id' of 'call_GONE' not found in 'tool_calls' of previous message.")


def test_cli_check_anthropic_blocks():
    r = invoke(["sanitize", "--check", str(FIXTURES / "sanitize" / "anthropic-orphans.json")])
    assert r.status == 1
    assert r.stderr.splitlines()[-1] == "2 problems in 1 of 1 transcript"
