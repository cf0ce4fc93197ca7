"""The Cline / Roo / Kilo reader: ``api_conversation_history.json`` whose user turns answer
``tool_use`` calls with ``[name for 'arg'] Result:`` text (paired by order, the environment
details left as user text); ``ui_messages.json`` alone refused, pointing to its sibling (its
structure from ../shared/real-logs/cline-haram-333)."""

from __future__ import annotations

import json

from conftest import invoke

from hermesctx import formats

HISTORY = [
    {"role": "user", "content": [{"type": "text", "text": "<task>\nfix it\n</task>"},
                                 {"type": "text", "text": "<environment_details>\nX\n</environment_details>"}],
     "ts": 1767644899093},
    {"role": "assistant", "content": [
        {"type": "text", "text": "Reading."},
        {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.py"}},
        {"type": "tool_use", "id": "toolu_2", "name": "list_files", "input": {"path": "."}}],
     "ts": 1767644900000, "metrics": {"tokens": {"prompt": 10, "completion": 2}, "cost": 0.001}},
    {"role": "user", "content": [
        {"type": "text", "text": "[read_file for 'a.py'] Result:"},
        {"type": "text", "text": "print(1)"},
        {"type": "text", "text": "[list_files for '.'] Result:\na.py"},
        {"type": "text", "text": "<environment_details>\nY\n</environment_details>"}], "ts": 1767644901000},
    {"role": "assistant", "content": [{"type": "text", "text": "Fixed."}], "ts": 1767644902000},
]

UI = [{"ts": 1767644899093, "type": "say", "say": "text", "text": "fix it"},
      {"ts": 1767644899100, "type": "say", "say": "api_req_started", "text": "{}"},
      {"ts": 1767644899200, "type": "ask", "ask": "followup", "text": "?"}]


def test_results_given_as_text_become_the_results_of_their_calls_by_order():
    assert formats.detect_document(HISTORY) == "cline"
    result = invoke(["convert", "--to", "openai"], HISTORY)
    assert result.status == 0, result.stderr
    messages = json.loads(result.stdout)["messages"]
    assert [c["id"] for c in messages[1]["tool_calls"]] == ["toolu_1", "toolu_2"]
    assert messages[2:4] == [{"role": "tool", "tool_call_id": "toolu_1", "content": "print(1)"},
                             {"role": "tool", "tool_call_id": "toolu_2", "content": "a.py"}]
    assert messages[4]["role"] == "user" and "Y" in json.dumps(messages[4]["content"])
    assert messages[-1] == {"role": "assistant", "content": "Fixed."}


def test_anthropic_output_has_real_tool_results():
    result = invoke(["convert", "--to", "anthropic"], HISTORY)
    assert result.status == 0, result.stderr
    turn = json.loads(result.stdout)["messages"][2]["content"]
    assert [(b["type"], b.get("tool_use_id")) for b in turn[:2]] == [
        ("tool_result", "toolu_1"), ("tool_result", "toolu_2")]
    check = invoke(["sanitize", "--check"], HISTORY)
    assert check.status == 0, check.stderr


def test_more_calls_than_results_leaves_the_rest_unanswered_not_invented():
    history = [*HISTORY[:2], {"role": "user", "content": [
        {"type": "text", "text": "[read_file for 'a.py'] Result:\nprint(1)"}], "ts": 3}]
    messages = json.loads(invoke(["convert", "--to", "openai"], history).stdout)["messages"]
    assert [m.get("tool_call_id") for m in messages if m["role"] == "tool"] == ["toolu_1"]


def test_ui_messages_alone_is_refused_pointing_to_the_history():
    for command in (["estimate"], ["compress"], ["convert", "--to", "anthropic"]):
        result = invoke(command, UI)
        assert result.status == 3
        assert "ui_messages.json" in result.stderr and "api_conversation_history.json" in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def test_a_result_marker_whose_argument_holds_brackets_and_newlines():
    # (as in genuine histories: a search pattern, the text of a question)
    history = [*HISTORY[:2], {"role": "user", "content": [
        {"type": "text", "text": "[search_files for 'from ['\"]@/lib['\"]'] Result:\nFound 4 results."},
        {"type": "text", "text": "[ask_followup_question for '## Phase 1\n\nDone?'] Result:\n<answer>yes</answer>"}],
        "ts": 3}]
    messages = json.loads(invoke(["convert", "--to", "openai"], history).stdout)["messages"]
    assert [(m["tool_call_id"], m["content"]) for m in messages if m["role"] == "tool"] == [
        ("toolu_1", "Found 4 results."), ("toolu_2", "<answer>yes</answer>")]


def test_estimate_sets_the_last_metrics_beside_its_count():
    recorded = json.loads(invoke(["estimate"], HISTORY).stdout)["recorded_usage"]
    assert (recorded["source"], recorded["prompt_tokens"], recorded["output_tokens"]) == ("cline", 10, 2)
