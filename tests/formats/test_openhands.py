"""The OpenHands reader, on the structures of the genuine trajectories in
../shared/real-logs/openhands-All-Hands-AI: environment bookkeeping, a user message, actions
carrying ``tool_call_metadata`` (two of them from one model response), observations paired by
``cause``, an agent message, and ``finish``: a call with no result."""

from __future__ import annotations

import json

from conftest import invoke

from hermesctx import formats


def _response(rid, text, calls):
    return {"id": rid, "created": 1738046713, "model": "claude-3-5-sonnet-20241022",
            "object": "chat.completion", "choices": [{"finish_reason": "tool_calls", "index": 0, "message": {
                "content": text, "role": "assistant",
                "tool_calls": [{"index": i, "id": cid, "type": "function",
                                "function": {"name": name, "arguments": args}}
                               for i, (cid, name, args) in enumerate(calls)]}}],
            "usage": {"completion_tokens": 9, "prompt_tokens": 900, "total_tokens": 909}}


R1 = _response("chatcmpl-1", "Let me look.", [("toolu_1", "execute_bash", "{\"command\": \"ls\"}"),
                                             ("toolu_2", "str_replace_editor",
                                              "{\"command\": \"view\", \"path\": \"/workspace\"}")])
R2 = _response("chatcmpl-2", "", [("toolu_3", "finish", "{}")])


def _meta(cid, name, response):
    return {"function_name": name, "tool_call_id": cid, "model_response": response,
            "total_calls_in_response": len(response["choices"][0]["message"]["tool_calls"])}


EVENTS = [
    {"id": 0, "source": "environment", "message": "", "observation": "agent_state_changed",
     "content": "", "extras": {"agent_state": "loading"}},
    {"id": 1, "source": "user", "message": "List the files", "action": "message",
     "args": {"content": "List the files", "image_urls": None, "wait_for_response": False}},
    {"id": 2, "source": "user", "message": "No observation", "cause": 1, "observation": "null",
     "content": "", "extras": {}},
    {"id": 3, "source": "agent", "message": "Running command: ls", "action": "run",
     "tool_call_metadata": _meta("toolu_1", "execute_bash", R1), "args": {"command": "ls"}},
    {"id": 4, "source": "agent", "message": "Reading file: /workspace", "action": "read",
     "tool_call_metadata": _meta("toolu_2", "str_replace_editor", R1), "args": {"path": "/workspace"}},
    {"id": 5, "source": "agent", "message": "Command `ls` executed with exit code 0.", "cause": 3,
     "observation": "run", "tool_call_metadata": _meta("toolu_1", "execute_bash", R1), "content": "",
     "extras": {"command": "ls"}, "success": True},
    {"id": 7, "source": "agent", "message": "I read the file /workspace.", "cause": 4,
     "observation": "read", "tool_call_metadata": _meta("toolu_2", "str_replace_editor", R1),
     "content": "a.py\nb.py", "extras": {"path": "/workspace"}},
    {"id": 8, "source": "agent", "message": "Two files.", "action": "message",
     "args": {"content": "Two files.", "image_urls": None, "wait_for_response": True}},
    {"id": 9, "source": "agent", "message": "Done", "action": "finish",
     "tool_call_metadata": _meta("toolu_3", "finish", R2), "args": {"outputs": {}, "thought": ""}},
]


def test_detected_from_its_events():
    assert formats.detect_document(EVENTS) == "openhands"
    assert formats.detect_document([{"role": "user", "content": "hi"}]) != "openhands"


def test_calls_of_one_response_are_one_message_and_results_follow_by_cause():
    result = invoke(["convert", "--to", "openai"], EVENTS)
    assert result.status == 0, result.stderr
    messages = json.loads(result.stdout)["messages"]
    assert messages[0] == {"role": "user", "content": "List the files"}
    assert messages[1]["content"] == "Let me look."
    assert [c["id"] for c in messages[1]["tool_calls"]] == ["toolu_1", "toolu_2"]
    assert messages[1]["tool_calls"][1]["function"] == {
        "name": "str_replace_editor", "arguments": "{\"command\": \"view\", \"path\": \"/workspace\"}"}
    assert messages[2:4] == [
        {"role": "tool", "tool_call_id": "toolu_1", "content": "Command `ls` executed with exit code 0."},
        {"role": "tool", "tool_call_id": "toolu_2", "content": "a.py\nb.py"}]
    # the agent's message and its finish call: one assistant turn on the wire
    assert messages[4]["content"] == "Two files."
    assert messages[4]["tool_calls"][0]["function"]["name"] == "finish"  # a call, no result
    assert len(messages) == 5
    assert json.loads(result.stdout)["model"] == "claude-3-5-sonnet-20241022"


def test_anthropic_output_keeps_every_call_and_result():
    result = invoke(["convert", "--to", "anthropic"], EVENTS)
    assert result.status == 0, result.stderr
    blocks = [b for m in json.loads(result.stdout)["messages"] if isinstance(m["content"], list)
              for b in m["content"]]
    assert [b["id"] for b in blocks if b["type"] == "tool_use"] == ["toolu_1", "toolu_2", "toolu_3"]
    assert [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"] == ["toolu_1", "toolu_2"]


def test_estimate_counts_what_compress_reads():
    est = json.loads(invoke(["estimate"], EVENTS).stdout)
    assert est["messages"] == 6 and est["tokens"]["total"] > 30


def test_estimate_sets_the_last_responses_usage_beside_its_count():
    recorded = json.loads(invoke(["estimate"], EVENTS).stdout)["recorded_usage"]
    assert (recorded["source"], recorded["prompt_tokens"], recorded["output_tokens"]) == ("openhands", 900, 9)
