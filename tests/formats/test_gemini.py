"""The Gemini CLI reader, on the structures of genuine ``chats/session-*.json`` files (Gemini CLI
0.x, gemini-2.5-pro and gemini-3 sessions): string and ``[{text}]`` content, ``thoughts``,
``tokens``, ``toolCalls`` with their ``functionResponse`` results inline (an ``output`` or an
``error``), the CLI's own ``info`` / ``error`` lines; ``logs.json`` refused."""

from __future__ import annotations

import io
import json

import pytest
from anthropic_output import tool_ids
from conftest import invoke

from hermesctx import formats


def _call(cid, name, args, response, status="success"):
    return {"id": cid, "name": name, "args": args,
            "result": [{"functionResponse": {"id": cid, "name": name, "response": response}}],
            "status": status, "timestamp": "2025-10-21T20:04:39.683Z", "displayName": name,
            "description": "", "renderOutputAsMarkdown": True}


TOKENS = {"input": 7320, "output": 250, "cached": 5784, "thoughts": 62, "tool": 0, "total": 7632}
SESSION = {
    "sessionId": "0b23371a-ce2e-4b1c-81a0-44af5d94d9ce", "projectHash": "2d33ff91",
    "startTime": "2025-10-21T20:04:20.819Z", "lastUpdated": "2025-10-21T20:08:49.642Z", "kind": "main",
    "messages": [
        {"id": "u1", "timestamp": "2025-10-21T20:04:20.819Z", "type": "user", "content": "Build a timer"},
        {"id": "g1", "timestamp": "2025-10-21T20:04:39.638Z", "type": "gemini",
         "content": "I'll create the files.",
         "thoughts": [{"subject": "Beginning the Build", "description": "Three files.",
                       "timestamp": "2025-10-21T20:04:24.225Z"}],
         "tokens": {"input": 0, "output": 0, "cached": 0, "thoughts": 0, "tool": 0, "total": 0},
         "model": "gemini-2.5-pro",
         "toolCalls": [_call("write_file-1", "write_file", {"file_path": "/p/index.html", "content": "<p>"},
                             {"output": "Successfully created /p/index.html."}),
                       _call("replace-2", "replace", {"file_path": "/p/a.css", "old_string": "x"},
                             {"error": "Failed to edit: 0 occurrences found"}, status="error")]},
        {"id": "i1", "timestamp": "2025-10-21T20:05:00.000Z", "type": "info", "content": "Request cancelled."},
        {"id": "u2", "timestamp": "2025-10-21T20:05:41.338Z", "type": "user", "content": [{"text": "add transitions"}]},
        {"id": "g2", "timestamp": "2025-10-21T20:05:45.229Z", "type": "gemini", "content": "",
         "thoughts": [], "tokens": TOKENS, "model": "gemini-3.1-pro-preview",
         "toolCalls": [_call("read_file_3", "read_file", {"file_path": "/p/a.css"}, {"output": "body{}"})]},
        {"id": "g3", "timestamp": "2025-10-21T20:05:47.677Z", "type": "gemini", "content": "Done.",
         "tokens": TOKENS, "model": "gemini-3.1-pro-preview"},
    ]}


def test_detected_from_its_content():
    assert formats.detect_document(SESSION) == "gemini"
    assert formats.detect_document({"messages": [{"role": "user", "content": "hi"}]}) == "openai"


def test_calls_and_their_inline_results():
    result = invoke(["convert", "--to", "openai"], SESSION)
    assert result.status == 0, result.stderr
    doc = json.loads(result.stdout)
    messages = doc["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "user", "assistant",
                                             "tool", "assistant"]
    assert messages[1]["content"] == "I'll create the files."
    assert [c["id"] for c in messages[1]["tool_calls"]] == ["write_file-1", "replace-2"]
    assert json.loads(messages[1]["tool_calls"][0]["function"]["arguments"]) == {
        "file_path": "/p/index.html", "content": "<p>"}
    assert messages[2] == {"role": "tool", "tool_call_id": "write_file-1",
                           "content": "Successfully created /p/index.html."}
    assert messages[3]["content"] == "Error: Failed to edit: 0 occurrences found"
    assert messages[4] == {"role": "user", "content": "add transitions"}
    assert messages[-1]["content"] == "Done."
    assert doc["model"] == "gemini-3.1-pro-preview"
    assert "info messages (the CLI's own, never sent to the model): 1 not kept" in result.stderr
    assert invoke(["sanitize", "--check"], SESSION).status == 0


def test_thoughts_are_the_turns_reasoning():
    (doc,) = _read(SESSION)
    assert doc["messages"][1]["reasoning"] == "Beginning the Build: Three files."


def test_results_written_again_as_a_user_message_are_read_once():
    session = json.loads(json.dumps(SESSION))
    again = [{"functionResponse": {"id": "read_file_3", "name": "read_file", "response": {"output": "body{}"}}}]
    session["messages"].insert(5, {"id": "u3", "timestamp": "t", "type": "user", "content": again})
    (doc,) = _read(session)
    assert [m["role"] for m in doc["messages"]].count("tool") == 3
    # a call with no result inline is answered by that message
    del session["messages"][4]["toolCalls"][0]["result"]
    (doc,) = _read(session)
    tools = [m for m in doc["messages"] if m["role"] == "tool"]
    assert tools[-1] == {"role": "tool", "tool_call_id": "read_file_3", "content": "body{}"}


def test_estimate_and_compress_read_the_same_and_the_usage_is_recorded():
    est = json.loads(invoke(["estimate"], SESSION).stdout)
    assert est["messages"] == 8
    recorded = est["recorded_usage"]
    assert (recorded["source"], recorded["prompt_tokens"], recorded["output_tokens"]) == ("gemini", 7320, 312)
    result = invoke(["compress", "--summarizer", "extractive"], SESSION)
    assert result.status == 0, result.stderr
    assert len(json.loads(result.stdout)["messages"]) == 8


def test_anthropic_output_keeps_every_call_and_result():
    assert tool_ids([], SESSION) == (["write_file-1", "replace-2", "read_file_3"], ["write_file-1", "replace-2", "read_file_3"])


@pytest.mark.parametrize("command", [["estimate"], ["convert"], ["prune"]])
def test_logs_json_is_refused_naming_the_file_to_pass(command):
    logs = [{"sessionId": "s", "messageId": 0, "type": "user", "message": "Build a timer",
             "timestamp": "2025-10-21T20:04:20.819Z"}]
    result = invoke(command, logs)
    assert result.status == 3
    (line,) = result.stderr.splitlines()
    assert "Gemini CLI logs.json" in line and "chats/session-*.json" in line


def _read(doc):
    return [d.data for d in formats.documents(io.BytesIO(json.dumps(doc).encode()))]
