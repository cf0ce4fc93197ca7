"""``opencode run --format json`` streams (the structure of the event lines quoted in
issuepit/issuepit#901): parts gathered into their messages, each step an assistant turn with
its calls, each completed ``tool`` part a result; the last step's tokens the recorded usage."""

from __future__ import annotations

import json

from conftest import invoke

from hermesctx import formats

SESSION = "ses_2cd622e85ffez1k2rGGvSSppSf"


def _event(kind, message, part):
    return {"type": kind, "timestamp": 1774670700702, "sessionID": SESSION,
            "part": {"id": f"prt_{kind}_{message}", "sessionID": SESSION, "messageID": message, **part}}


def _finish(message, total):
    return _event("step_finish", message, {"type": "step-finish", "reason": "tool-calls", "cost": 0, "tokens": {
        "total": total, "input": 65, "output": 119, "reasoning": 0, "cache": {"read": 4623, "write": 12125}}})


EVENTS = [
    _event("step_start", "msg_1", {"type": "step-start", "snapshot": "3cea42e1"}),
    _event("tool_use", "msg_1", {"type": "tool", "callID": "call_function_1", "tool": "read", "state": {
        "status": "completed", "input": {"filePath": "/workspace/backend.yml"}, "output": "jobs:",
        "title": "backend.yml", "metadata": {}, "time": {"start": 1, "end": 2}}}),
    _finish("msg_1", 16932),
    _event("step_start", "msg_2", {"type": "step-start", "snapshot": "3cea42e1"}),
    _event("text", "msg_2", {"type": "text", "text": "Fixed and committed.", "time": {"start": 3, "end": 3}}),
    _finish("msg_2", 18546),
]
STREAM = "".join(json.dumps(e) + "\n" for e in EVENTS)


def test_detected_from_its_first_line():
    assert formats.detect_line(EVENTS[0]) == "opencode-run"


def test_parts_become_turns_calls_and_results():
    result = invoke(["convert", "--to", "openai"], STREAM)
    assert result.status == 0, result.stderr
    messages = json.loads(result.stdout)["messages"]
    assert messages[0]["tool_calls"] == [{"id": "call_function_1", "type": "function", "function": {
        "name": "read", "arguments": "{\"filePath\": \"/workspace/backend.yml\"}"}}]
    assert messages[1] == {"role": "tool", "tool_call_id": "call_function_1", "content": "jobs:"}
    assert messages[2] == {"role": "assistant", "content": "Fixed and committed."}


def test_estimate_sets_the_last_steps_tokens_beside_its_count():
    report = json.loads(invoke(["estimate"], STREAM).stdout)
    assert report["recorded_usage"]["prompt_tokens"] == 65 + 4623 + 12125
