"""The GitHub Copilot CLI reader, on the structures of genuine ``session-state/<id>/events.jsonl``
files (Copilot CLI 1.0.78): the session's bookkeeping events, the system prompt, the prompt as
typed and as sent, assistant messages with ``toolRequests`` and ``reasoningText``, and
``tool.execution_complete`` results (a failed one with its ``error``) logged after other events."""

from __future__ import annotations

import json

from anthropic_output import tool_ids
from conftest import invoke

from hermesctx import formats


def _event(kind, data, n):
    return {"type": kind, "data": data, "id": f"e{n}", "timestamp": f"2026-08-05T20:40:{n:02d}.000Z",
            "parentId": f"e{n - 1}" if n else None}


def _call(cid, path):
    return {"toolCallId": cid, "name": "view", "arguments": {"path": path}, "type": "function",
            "intentionSummary": "view file"}


EVENTS = [_event(kind, data, n) for n, (kind, data) in enumerate([
    ("session.start", {"sessionId": "049410b4", "version": 1, "producer": "copilot-agent",
                       "copilotVersion": "1.0.78", "context": {"cwd": "/work"}}),
    ("session.model_change", {"newModel": "gpt-5-mini", "reasoningEffort": None}),
    ("system.message", {"role": "system", "content": "You are the GitHub Copilot CLI.", "interactionId": "i1"}),
    ("user.message", {"content": "Fix average_item_price.",
                      "transformedContent": "<current_datetime>2026</current_datetime>\n\nFix average_item_price.",
                      "attachments": [], "interactionId": "i1"}),
    ("assistant.turn_start", {"turnId": "0", "interactionId": "i1"}),
    ("assistant.message", {"messageId": "m1", "model": "gpt-5-mini", "content": "",
                           "toolRequests": [_call("call_a", "src/orders.py"), _call("call_b", "src/x.py")],
                           "reasoningText": "Read the file first.", "outputTokens": 470}),
    ("tool.execution_start", {"toolCallId": "call_a", "toolName": "view", "arguments": {"path": "src/orders.py"}}),
    ("tool.execution_start", {"toolCallId": "call_b", "toolName": "view", "arguments": {"path": "src/x.py"}}),
    ("tool.execution_complete", {"toolCallId": "call_b", "success": False,
                                 "error": {"message": "\"path\": not found", "code": "failure"}}),
    ("tool.execution_complete", {"toolCallId": "call_a", "success": True,
                                 "result": {"content": "def average_item_price(cart): ...",
                                            "detailedContent": "1. def average_item_price(cart): ..."}}),
    ("assistant.turn_end", {"turnId": "0"}),
    ("assistant.message", {"messageId": "m2", "model": "gpt-5-mini", "content": "Fixed.", "toolRequests": []}),
    ("session.shutdown", {"shutdownType": "routine", "currentTokens": 14239, "systemTokens": 5333}),
])]
LOG = "".join(json.dumps(e) + "\n" for e in EVENTS)


def test_detected_from_its_first_line():
    assert formats.detect_line(EVENTS[0]) == "copilot"
    assert formats.detect_line({"type": "session.start", "data": {"sessionId": "x"}}) is None


def test_calls_and_their_results_after_their_message():
    result = invoke(["convert", "--to", "openai", "--model", "gpt-5-mini"], LOG)
    assert result.status == 0, result.stderr
    doc = json.loads(result.stdout)
    messages = doc["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool", "assistant"]
    assert messages[1]["content"].startswith("<current_datetime>")  # as sent, not only as typed
    assert [c["id"] for c in messages[2]["tool_calls"]] == ["call_a", "call_b"]
    assert json.loads(messages[2]["tool_calls"][0]["function"]["arguments"]) == {"path": "src/orders.py"}
    assert messages[3] == {"role": "tool", "tool_call_id": "call_b", "content": "Error: \"path\": not found"}
    assert messages[4] == {"role": "tool", "tool_call_id": "call_a", "content": "def average_item_price(cart): ..."}
    assert messages[5]["content"] == "Fixed."
    assert doc["model"] == "gpt-5-mini"
    assert invoke(["sanitize", "--check"], LOG).status == 0


def test_a_result_logged_away_from_its_call_is_placed_after_it():
    late = [*EVENTS[:6], EVENTS[11], *EVENTS[8:10]]  # the next reply logged before the results
    log = "".join(json.dumps(e) + "\n" for e in late)
    messages = json.loads(invoke(["convert", "--model", "gpt-5-mini"], log).stdout)["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool", "assistant"]


def test_estimate_and_compress_read_the_same():
    est = json.loads(invoke(["estimate"], LOG).stdout)
    assert est["messages"] == 6 and est["model"] == "gpt-5-mini"
    result = invoke(["compress", "--summarizer", "extractive"], LOG)
    assert result.status == 0, result.stderr
    assert len(json.loads(result.stdout)["messages"]) == 6


def test_anthropic_output_keeps_every_call_and_result():
    assert tool_ids([], LOG) == (["call_a", "call_b"], ["call_b", "call_a"])


def test_a_log_with_no_message_is_refused_in_one_line():
    log = json.dumps(EVENTS[0]) + "\n" + json.dumps(EVENTS[1]) + "\n"
    result = invoke(["estimate"], log)
    assert result.status == 3
    (line,) = result.stderr.splitlines()
    assert "Copilot CLI session log without any message" in line
