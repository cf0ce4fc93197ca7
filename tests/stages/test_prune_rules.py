"""prune: one test per rule of spec 20.1 (boundaries, the tail floor, dedup, argument
truncation, lookup corners), plus snapshots of whole CLI outputs on our fixtures."""

import copy
import json

import pytest
from builders import assistant, call, tool
from conftest import EXAMPLES, FIXTURES, invoke

from hermesctx.stages.prune import (
    DUPLICATE_TEXT,
    describe,
    prune,
    prune_messages,
    tail_boundary,
    truncate_args_json,
)

TOOL_HEAVY = json.loads((FIXTURES / "prune" / "tool-heavy.json").read_text(encoding="utf-8"))
USER = {"role": "user", "content": "next"}


@pytest.mark.parametrize("size,stubbed", [(200, False), (201, True)])
def test_stub_floor_is_strictly_over_200(size, stubbed):
    msgs = [assistant("", call("c1", "my_tool", {"a": 1})), tool("c1", "x" * size), USER]
    out, report = prune_messages(msgs, protect_tail_count=1)
    assert report["pruned"] == int(stubbed)
    assert out[1]["content"] == ("[my_tool] a=1 (201 chars result)" if stubbed else "x" * 200)


@pytest.mark.parametrize("size,deduped", [(199, False), (200, True)])
def test_dedup_floor_is_200_and_covers_the_tail(size, deduped):
    msgs = [USER, tool("a", "y" * size), tool("b", "y" * size)]
    out, report = prune_messages(msgs, protect_tail_count=10)  # everything is in the tail
    assert (out[1]["content"] == DUPLICATE_TEXT) is deduped
    assert out[2]["content"] == "y" * size and report["deduplicated"] == int(deduped)


def test_dedup_across_tools_and_newest_kept():
    same = "z" * 300
    msgs = [assistant("", call("a", "terminal", {"command": "cat f"}), call("b", "read_file", {"path": "f"})),
            tool("a", same), tool("b", same), USER, tool("b", same)]
    out, report = prune_messages(msgs, protect_tail_count=2)
    assert [m.get("content") for m in out[1:3]] == [DUPLICATE_TEXT, DUPLICATE_TEXT]
    assert out[4]["content"] == same and report == {**report, "pruned": 2, "deduplicated": 2, "stubbed": 0}


def test_tail_floor_wins_over_a_small_budget():
    msgs = [USER] + [tool(f"c{i}", "w" * 400 + str(i)) for i in range(6)]
    # budget 1 token: the walk stops at once, but the last 4 messages stay protected
    assert tail_boundary(msgs, 4, 1) == 3
    out, report = prune_messages(msgs, protect_tail_count=4, protect_tail_tokens=1)
    assert report["stubbed"] == 2 and out[3]["content"].startswith("w")


def test_token_walk_hand_computed():
    # each tool message: 400 chars // 4 + 10 = 110 tokens
    msgs = [USER] + [tool(f"c{i}", chr(97 + i) * 400) for i in range(5)]
    # budget 230: 110 + 110 fit, the third (330 > 230) overflows and is itself protected
    assert tail_boundary(msgs, 1, 230) == 3
    assert tail_boundary(msgs, 1, 220) == 3
    assert tail_boundary(msgs, 1, 219) == 4
    assert tail_boundary(msgs, 0, None) == 6 and tail_boundary(msgs, 9, None) == -3
    out, report = prune_messages(msgs, protect_tail_count=1, protect_tail_tokens=230)
    assert report["stubbed"] == 2 and out[3] is msgs[3]


def test_argument_truncation_keeps_json_valid():
    big = {"path": "a.py", "content": "é" * 600, "nested": [{"s": "q" * 250}], "n": 1e5}
    raw = json.dumps(big)
    shrunk = truncate_args_json(raw)
    parsed = json.loads(shrunk)
    assert parsed["content"] == "é" * 200 + "...[truncated]"
    assert parsed["nested"][0]["s"] == "q" * 200 + "...[truncated]"
    assert parsed["n"] == 100000.0 and "é" in shrunk  # ensure_ascii=False
    assert truncate_args_json("not json" * 100) == "not json" * 100


@pytest.mark.parametrize("length,changed", [(500, False), (501, True)])
def test_argument_trigger_is_over_500(length, changed):
    args = json.dumps({"content": "k" * (length - 14)}, separators=(",", ":"))
    assert len(args) == length
    msgs = [assistant("", call("c1", "write_file", args)), tool("c1", "ok"), USER]
    out, report = prune_messages(msgs, protect_tail_count=2)
    assert report["args_truncated"] == int(changed) and report["pruned"] == 0
    assert (out[0] is msgs[0]) is not changed


def test_lookup_corners_of_20_6_6():
    msgs = [assistant("", call("fc_1", "read_file", {"path": "a.py"}, call_id="call_1")), tool("call_1", "r" * 300),
            assistant("", {"id": "n1", "type": "function", "function": {"arguments": '{"q": 1}'}}), tool("n1", "s" * 300),
            assistant("", call("n2", None, {"q": 1})), tool("n2", "t" * 301),
            {"role": "tool", "content": "u" * 303}, tool("x", None),
            tool("y", "[Old tool output cleared to save context space]"), USER]
    out, report = prune_messages(msgs, protect_tail_count=1)
    assert out[1]["content"] == "[unknown] (300 chars result)"
    assert out[3]["content"] == "[unknown] q=1 (300 chars result)"
    assert out[5]["content"] == "[None] q=1 (301 chars result)"
    assert out[6]["content"] == "[unknown] (303 chars result)"
    assert out[7] is msgs[7] and out[8] is msgs[8] and report["pruned"] == 4


def test_not_idempotent_on_long_read_file_paths():
    path = "d/" * 106 + "file.py"  # 219 chars
    msgs = [assistant("", call("c1", "read_file", {"path": path})), tool("c1", "r" * 300), USER]
    once, _ = prune_messages(msgs, protect_tail_count=1)
    assert len(once[1]["content"]) == 260 and once[1]["content"].endswith("file.py from line 1 (300 chars)")
    twice, _ = prune_messages(once, protect_tail_count=1)
    assert twice[1]["content"].endswith("file.py from line 1 (260 chars)")


def test_empty_and_pure():
    assert prune_messages([], protect_tail_count=3)[0] == []
    frozen = copy.deepcopy(TOOL_HEAVY)
    prune_messages(TOOL_HEAVY, protect_tail_count=1)
    prune({"messages": TOOL_HEAVY}, protect_last_n=0, tail_tokens=0)
    assert TOOL_HEAVY == frozen


def test_document_report_counts_tokens():
    doc = {"model": "m", "messages": TOOL_HEAVY}
    out, report = prune(doc, protect_last_n=3, tail_tokens=0)
    assert out["model"] == "m"
    assert report["tokens_after"] < report["tokens_before"]
    assert (report["pruned"], report["args_truncated"]) == (4, 1)


def test_cli_tool_heavy_snapshot(snapshot):
    r = invoke(["prune", "--protect-last-n", "3", "--tail-tokens", "0",
                str(FIXTURES / "prune" / "tool-heavy.json")])
    assert r.status == 0, r.stderr
    # the default line measures only the rewritten messages; --report measures both transcripts
    assert r.stderr.strip() == "pruned 4 tool results (0 duplicates), 1 argument truncated; ~1,240 tokens saved"
    assert r.json == snapshot
    reported = invoke(["prune", "--protect-last-n", "3", "--tail-tokens", "0", "--report", "-",
                       str(FIXTURES / "prune" / "tool-heavy.json")])
    report = json.loads(reported.stderr)
    assert (report["tokens_before"], report["tokens_after"], report["tokens_saved"]) == (2022, 781, 1240)


def test_cli_dry_run_report_file(tmp_path):
    rep = tmp_path / "r.json"
    raw = (FIXTURES / "prune" / "tool-heavy.json").read_bytes()
    r = invoke(["prune", "--dry-run", "--protect-last-n", "3", "--tail-tokens", "0", "--report", str(rep)], raw)
    assert r.status == 0 and r.json == TOOL_HEAVY
    data = json.loads(rep.read_text().splitlines()[0])
    assert data["pruned"] == 4 and data["dry_run"] is True


def test_cli_jsonl_one_line_per_transcript():
    lines = [json.dumps(TOOL_HEAVY), json.dumps({"messages": TOOL_HEAVY[:2]})]
    r = invoke(["prune", "--protect-last-n", "3", "--tail-tokens", "0", "--jsonl"], "\n".join(lines) + "\n")
    assert r.status == 0 and len(r.lines) == 2
    assert r.lines[1] == {"messages": TOOL_HEAVY[:2]}
    assert r.lines[0][2]["content"] == "[terminal] ran `npm test` -> exit 0, 47 lines output"


def test_openai_rules_apply_even_when_a_thinking_block_comes_first():
    # detect_format would call this transcript Anthropic; the OpenAI passes must still run (Hermes)
    msgs = [{"role": "assistant", "content": [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "ok"}]},
            assistant("", call("c1", "terminal", {"command": "ls"})), tool("c1", "f\n" * 150), USER]
    out, report = prune_messages(msgs, protect_tail_count=1)
    assert out[2]["content"] == "[terminal] ran `ls` -> exit ?, 151 lines output"
    assert out[0] is msgs[0] and report["pruned"] == 1


def test_mixed_transcript_is_pruned_as_openai_like_hermes():
    # OpenAI tool traffic makes it an OpenAI transcript: exactly Hermes, which leaves blocks alone
    blocks = [{"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "b"}}]},
              {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "p" * 300}]}]
    msgs = [assistant("", call("c1", "my_tool", {})), tool("c1", "o" * 300), *blocks, USER]
    out, report = prune_messages(msgs, protect_tail_count=1)
    assert out[1]["content"] == "[my_tool] (300 chars result)"
    assert out[2:4] == blocks
    assert report["stubbed"] == 1
    # without the OpenAI pair the same blocks are an Anthropic transcript: pruned (D5)
    out, report = prune_messages([*blocks, USER], protect_tail_count=1)
    assert out[1]["content"][0]["content"] == "[read_file] read b from line 1 (300 chars)"
    assert report["stubbed"] == 1


def test_quiet_prune_skips_measuring_but_not_pruning(tmp_path):
    raw = (EXAMPLES / "batch.jsonl").read_bytes()
    loud, quiet = invoke(["prune"], raw), invoke(["-q", "prune"], raw)
    assert loud.status == quiet.status == 0 and loud.stdout == quiet.stdout and quiet.stderr == ""
    assert "tokens" in loud.stderr
    report = tmp_path / "r.jsonl"
    reported = invoke(["-q", "prune", "--report", str(report)], raw)
    assert reported.stdout == loud.stdout
    rows = [json.loads(line) for line in report.read_text().splitlines()]
    assert rows and all(isinstance(r["tokens_before"], int) and r["tokens_after"] <= r["tokens_before"] for r in rows)


def test_describe_without_measurement():
    doc = [{"role": "user", "content": "hi"}]
    _, report = prune(doc, measure=False)
    assert report["tokens_before"] is None and report["tokens_after"] is None
    assert report["tokens_saved"] is None
    assert describe(report) == "pruned 0 tool results (0 duplicates), 0 arguments truncated"


def test_tokens_saved_measured_on_the_changed_messages_agrees_with_the_totals():
    doc = {"messages": TOOL_HEAVY}
    _, changed = prune(doc, protect_last_n=0, tail_tokens=0, measure="changed")
    _, full = prune(doc, protect_last_n=0, tail_tokens=0)
    assert changed["tokens_before"] is None
    assert changed["tokens_saved"] == full["tokens_saved"]
    assert abs(full["tokens_saved"] - (full["tokens_before"] - full["tokens_after"])) <= 1


@pytest.mark.parametrize("name", ["process", "terminal", "read_file", "my_tool"])
def test_a_stub_of_a_content_that_is_no_string_is_the_fallback_for_every_tool(name):
    """Hermes counts the output's lines before it looks at the tool: a list content fails there
    for every tool (the line count is otherwise computed only for the tools that print it)."""
    from hermesctx.stubs import summarize_tool_result

    assert summarize_tool_result(name, '{"action": "poll"}', ["x"]) == f"[{name}] (0 chars result)"
