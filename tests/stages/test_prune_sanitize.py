"""prune and sanitize: the spec's worked examples (20.6) as our own fixtures, the CLI, Anthropic blocks."""

import copy
import json

import pytest
from builders import assistant, call, tool
from conftest import invoke, load_example

from hermesctx.stages.prune import DUPLICATE_TEXT, prune, prune_messages
from hermesctx.stages.sanitize import STUB_TEXT, find_problems, sanitize, strip_orphans, stub_orphans
from hermesctx.wire.send import openai_request

M12 = [
    {"role": "user", "content": "Fix the failing tests."},
    assistant("", call("call_1", "terminal", {"command": "npm test"})),
    tool("call_1", "PASS\n" * 46 + '{"exit_code": 0}'),
    assistant("Checking config.", call("call_2", "read_file", {"path": "config.py", "offset": 1}),
         call("call_3", "search_files", {"pattern": "compress", "path": "agent/"}),
         call("call_4", "lint_report", {"severity": "high", "paths": ["src", "tests"]})),
    tool("call_2", "r" * 3400),
    tool("call_3", '{"total_count": 12, "matches": "' + "m" * 300 + '"}'),
    tool("call_4", "c" * 420),
    assistant(None, call("call_5", "write_file", {"path": "config.py", "content": "line\n" * 150})),
    tool("call_5", '{"success": true}'),
    assistant("", call("call_6", "patch", {"path": "run.py", "old_string": "a" * 300, "new_string": "b" * 300})),
    tool("call_6", "p" * 537),
    {"role": "user", "content": "Thanks."},
]


def changed(before, after):
    return [i for i, (a, b) in enumerate(zip(before, after)) if a != b]


def test_count_mode_stubs_every_tool_format():
    frozen = copy.deepcopy(M12)
    out, report = prune_messages(M12, protect_tail_count=3)
    assert M12 == frozen  # input untouched
    assert report["pruned"] == 4 and report["args_truncated"] == 1
    assert changed(M12, out) == [2, 4, 5, 6, 7]
    assert out[2]["content"] == "[terminal] ran `npm test` -> exit 0, 47 lines output"
    assert out[4]["content"] == "[read_file] read config.py from line 1 (3,400 chars)"
    assert out[5]["content"] == "[search_files] content search for 'compress' in agent/ -> 12 matches"
    assert out[6]["content"] == "[lint_report] severity=high paths=['src', 'tests'] (420 chars result)"
    args = json.loads(out[7]["tool_calls"][0]["function"]["arguments"])
    assert args["content"] == ("line\n" * 150)[:200] + "...[truncated]"
    assert out[1] is M12[1]  # unchanged messages are not copied


def test_count_two_shrinks_a_call_whose_result_stays():
    out, _ = prune_messages(M12, protect_tail_count=2)
    args = json.loads(out[9]["tool_calls"][0]["function"]["arguments"])
    assert args["old_string"] == "a" * 200 + "...[truncated]"
    assert out[10] == M12[10]


@pytest.mark.parametrize("budget,pruned,changes", [
    (100, 4, [2, 4, 5, 6, 7]), (400, 4, [2, 4, 5, 6]), (1000, 1, [2]), (2000, 0, []),
    (0, 4, [2, 4, 5, 6, 7]), (30000, 0, []),
])
def test_token_mode_protects_the_overflowing_message(budget, pruned, changes):
    out, report = prune_messages(M12, protect_tail_count=3, protect_tail_tokens=budget)
    assert report["pruned"] == pruned
    assert changed(M12, out) == changes


def test_same_file_read_three_times():
    content = "def main():\n    pass\n" * 50
    msgs = [{"role": "user", "content": "Review config.py"}]
    for k in range(3):
        msgs += [assistant("", call(f"r{k}", "read_file", {"path": "config.py"})), tool(f"r{k}", content)]
    msgs.append({"role": "user", "content": "ok"})
    out, report = prune_messages(msgs, protect_tail_count=2)
    assert report["pruned"] == 2 and report["deduplicated"] == 2
    assert out[2]["content"] == out[4]["content"] == DUPLICATE_TEXT
    assert out[6]["content"] == content
    out, report = prune_messages(msgs, protect_tail_count=1)
    assert report["pruned"] == 3
    assert out[6]["content"] == "[read_file] read config.py from line 1 (1,050 chars)"


def test_image_and_multimodal_results():
    msgs = [assistant("", call("s1", "browser_vision", {}), call("s2", "x", {})),
            tool("s1", [{"type": "text", "text": "shot"}, {"type": "image_url", "image_url": {"url": "data:,"}}]),
            tool("s2", {"_multimodal": True, "content": [], "text_summary": "login page"}),
            {"role": "user", "content": "next"}]
    out, report = prune_messages(msgs, protect_tail_count=1)
    assert report["pruned"] == 2
    assert out[1]["content"][1] == {"type": "text", "text": "[screenshot removed to save context]"}
    assert out[2]["content"] == "[screenshot removed] login page"


def test_prune_anthropic_blocks_like_openai():
    msgs = [{"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "read_file",
                                               "input": {"path": "a.py", "content": "w" * 900}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "r" * 3400}]},
            {"role": "assistant", "content": "done"}, {"role": "user", "content": "thanks"}]
    doc = {"system": "sys", "messages": msgs}
    out, report = prune(doc, protect_last_n=2, tail_tokens=0)
    assert out["system"] == "sys"
    assert out["messages"][2]["content"][0]["content"] == "[read_file] read a.py from line 1 (3,400 chars)"
    assert out["messages"][1]["content"][0]["input"]["content"] == "w" * 200 + "...[truncated]"
    assert report["pruned"] == 1 and report["args_truncated"] == 1
    assert doc["messages"][2]["content"][0]["content"] == "r" * 3400


S = [
    {"role": "system", "content": "You are Hermes."},
    {"role": "user", "content": "Inspect the repo."},
    assistant("", call("call_A", "terminal", {"command": "ls"}), call("call_B", "read_file", {"path": "README.md"})),
    tool("call_A", "README.md\nsrc"),
    tool("call_GONE", "result whose call was summarized away"),
    assistant("   ", call("call_C", "web_search", {"query": "x"})),
    assistant("Checking docs.", call("call_D", "web_extract", {"urls": ["https://a"]})),
    assistant(None, call("fc_1", "terminal", {"command": "pwd"}, call_id="call_E")),
    tool("call_E", "/repo"),
    assistant("", call("fc_2", "terminal", {"command": "whoami"}, call_id="call_F")),
    tool("fc_2", "hermes"),
    {"role": "tool", "content": "tool message without tool_call_id"},
    {"role": "user", "content": "Done?"},
]


def test_strip_orphans_worked_example():
    out, report = strip_orphans(S)
    assert [m.get("content") for m in out] == [
        "You are Hermes.", "Inspect the repo.", "", "README.md\nsrc", "(tool call removed)", "Checking docs.",
        None, "/repo", "(tool call removed)", "tool message without tool_call_id", "Done?"]
    assert [c["id"] for c in out[2]["tool_calls"]] == ["call_A"]
    assert "tool_calls" not in out[4] and "tool_calls" not in out[5]
    assert report["results_removed"] == 2 and report["calls_removed"] == 4


def test_stub_orphans_worked_example():
    out, report = stub_orphans(S)
    assert out[3] == {"role": "tool", "name": "read_file", "content": STUB_TEXT, "tool_call_id": "call_B"}
    assert out[4]["tool_call_id"] == "call_A"  # the stub goes before the surviving result
    assert [m.get("tool_call_id") for m in out if m["role"] == "tool"] == [
        "call_B", "call_A", "call_C", "call_D", "call_E", "call_F", None]
    assert report["stubs_added"] == 4 and report["results_removed"] == 2


def test_find_problems_names_each_orphan():
    problems = find_problems(S)
    assert [p["message"] for p in problems] == [
        "messages[2]: tool call call_B has no result",
        "messages[4]: tool result call_GONE has no matching call",
        "messages[5]: tool call call_C has no result",
        "messages[6]: tool call call_D has no result",
        "messages[9]: tool call call_F has no result",
        "messages[10]: tool result fc_2 has no matching call"]
    assert find_problems(strip_orphans(S)[0]) == []


def test_anthropic_orphans_both_modes():
    msgs = [{"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "text", "text": "Running."},
                                              {"type": "tool_use", "id": "t1", "name": "terminal", "input": {}},
                                              {"type": "tool_use", "id": "t2", "name": "terminal", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"},
                                         {"type": "tool_result", "tool_use_id": "gone", "content": "x"}]}]
    out, report = strip_orphans(msgs)
    assert [b.get("id") for b in out[1]["content"]] == [None, "t1"]
    assert [b["tool_use_id"] for b in out[2]["content"]] == ["t1"]
    assert report == {**report, "results_removed": 1, "calls_removed": 1}
    out, report = stub_orphans(msgs)
    assert out[2]["content"][0] == {"type": "tool_result", "tool_use_id": "t2", "content": STUB_TEXT}
    assert len(out) == 3 and report["stubs_added"] == 1
    assert find_problems(out) == []


def test_sanitize_is_idempotent_and_pure():
    frozen = copy.deepcopy(S)
    once, _ = sanitize(S)
    assert sanitize(once)[0] == once
    stubbed, _ = sanitize(S, stub=True)
    assert sanitize(stubbed, stub=True)[0] == stubbed
    assert S == frozen


# --- CLI ------------------------------------------------------------------------------------

def test_cli_prune_reports_and_keeps_shape(snapshot):
    doc = load_example("coding-session.json")
    r = invoke(["prune", "--protect-last-n", "6", "--tail-tokens", "0"], json.dumps(doc).encode())
    assert r.status == 0, r.stderr
    assert "pruned" in r.stderr and "tokens" in r.stderr
    assert type(r.json) is type(doc) and len(r.json) == len(doc)
    assert r.json[-6:] == doc[-6:]
    assert r.json == snapshot


def test_cli_prune_dry_run_changes_nothing():
    raw = json.dumps(M12).encode()
    r = invoke(["prune", "--dry-run", "--protect-last-n", "3", "--tail-tokens", "0"], raw)
    assert r.status == 0 and r.json == M12
    assert "would stub: messages[2]" in r.stderr
    assert "would truncate arguments: messages[7]" in r.stderr


def test_cli_prune_default_tail_is_the_compressors():
    # 1,968 estimated tokens fit any model's tail budget: nothing is pruned by default
    r = invoke(["prune", "--model", "claude-sonnet-4-5"], json.dumps(M12).encode())
    assert r.status == 0 and r.json == M12


def test_cli_sanitize_check_batch():
    fixed = sanitize(S)[0]
    lines = [json.dumps(S), json.dumps(fixed), json.dumps({"messages": S})]
    r = invoke(["sanitize", "--check"], ("\n".join(lines) + "\n").encode())
    assert r.status == 1 and r.stdout == b""
    err = r.stderr.splitlines()
    assert err[0] == ("line 1: messages[2]: OA-TOOL-UNANSWERED: An assistant message with 'tool_calls' must "
                      "be followed by tool messages responding to each 'tool_call_id'. The following "
                      "tool_call_ids did not have response messages: call_B")
    per_line = sum(e.startswith("line 1: ") for e in err)
    assert per_line == sum(e.startswith("line 3: ") for e in err) > 1
    assert not any(e.startswith("line 2: ") for e in err)
    assert err[-1] == f"{2 * per_line} problems in 2 of 3 transcripts"
    ok = invoke(["sanitize", "--check"], json.dumps(fixed).encode())
    assert ok.status == 0 and ok.stderr.strip() == "no problems in 1 transcript"


def test_cli_sanitize_jsonl_in_order():
    lines = [json.dumps(S), json.dumps({"model": "m", "messages": S})]
    r = invoke(["sanitize", "--stub"], ("\n".join(lines) + "\n").encode())
    assert r.status == 0
    out = r.lines
    assert out[0] == openai_request(sanitize(S, stub=True)[0]) and out[1]["model"] == "m"


def test_cli_bad_message_is_located():
    r = invoke(["sanitize"], b'{"messages": [{"role": "user", "content": "x"}, 5]}')
    assert r.status == 3 and r.stdout == b""
    assert "messages[1]" in r.stderr
