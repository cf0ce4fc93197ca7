"""The Goose reader, on the structures of a genuine ``sessions.db`` (goose 1.45.0): two sessions,
``content_json`` parts (text, thinking streamed one token a part, toolRequest / toolResponse with
a success, an error result and a call the model could not make), ``metadata_json`` (usage, and
``agentVisible`` false once a summary replaced a message), the model in ``model_config_json``."""

from __future__ import annotations

import io
import json
import sqlite3

import pytest
from anthropic_output import tool_ids
from conftest import invoke

from hermesctx import formats


def _request(cid, name, args):
    return {"type": "toolRequest", "id": cid, "toolCall": {"status": "success", "value": {"name": name, "arguments": args}}}


def _response(cid, text, error=False):
    return {"type": "toolResponse", "id": cid, "toolResult": {"status": "success", "value": {
        "content": [{"type": "text", "text": text, "annotations": {"priority": 0.0}}], "isError": error}}}


VISIBLE = {"userVisible": True, "agentVisible": True}
USAGE = {**VISIBLE, "usage": {"inputTokens": 2050, "outputTokens": 374, "totalTokens": 2424}}
ROWS = [  # (session, role, parts, metadata)
    ("20260805_1", "user", [{"type": "text", "text": "What does average_item_price do?"}], VISIBLE),
    ("20260805_1", "assistant", [{"type": "thinking", "thinking": t, "signature": ""} for t in ("Read", " it", ".")]
     + [_request("c1", "shell", {"command": "cat src/orders.py"})], USAGE),
    ("20260805_1", "user", [_response("c1", "def average_item_price(cart): ...")], VISIBLE),
    ("20260805_1", "assistant", [{"type": "text", "text": "It averages the prices."}], USAGE),
    ("20260805_2", "user", [{"type": "text", "text": "old ask"}], {"userVisible": True, "agentVisible": False}),
    ("20260805_2", "user", [{"type": "text", "text": "Find the division by zero."}], VISIBLE),
    ("20260805_2", "assistant", [{"type": "toolRequest", "id": "c2", "toolCall": {
        "status": "error", "error": "invalid JSON in arguments"}}], USAGE),
    ("20260805_2", "user", [{"type": "toolResponse", "id": "c2", "toolResult": {
        "status": "error", "error": "-32002: Tool 'read' not found."}}], VISIBLE),
    ("20260805_2", "assistant", [_request("c3", "read_image", {"source": "x.png"})], USAGE),
    ("20260805_2", "user", [_response("c3", "Error: failed to read image file", error=True)], VISIBLE),
]
SESSIONS = [{"id": "20260805_1", "name": "average", "working_dir": "/work", "created_at": "2026-08-05 21:19:21",
             "model_config_json": json.dumps({"model_name": "qwen3:0.6b", "context_limit": None})},
            {"id": "20260805_2", "name": "division", "working_dir": "/work", "created_at": "2026-08-05 21:21:52",
             "model_config_json": json.dumps({"model_name": "qwen3:0.6b"})}]


def _rows():
    return [{"id": i + 1, "message_id": f"m{i}", "session_id": sid, "role": role, "content_json": json.dumps(parts),
             "created_timestamp": 1785964864 + i, "metadata_json": json.dumps(meta)}
            for i, (sid, role, parts, meta) in enumerate(ROWS)]


@pytest.fixture
def store(tmp_path):
    """A sessions.db with Goose's tables (the columns the reader reads, and some it does not)."""
    path = tmp_path / "sessions.db"
    con = sqlite3.connect(path)
    con.execute("create table sessions (id text primary key, name text, working_dir text, "
                "created_at timestamp, model_config_json text, parent_session_id text)")
    con.execute("create table messages (id integer primary key autoincrement, message_id text, session_id text, "
                "role text, content_json text, created_timestamp integer, timestamp timestamp, tokens integer, "
                "metadata_json text)")
    con.executemany("insert into sessions (id, name, working_dir, created_at, model_config_json) values (?, ?, ?, ?, ?)",
                    [(s["id"], s["name"], s["working_dir"], s["created_at"], s["model_config_json"]) for s in SESSIONS])
    con.executemany("insert into messages (message_id, session_id, role, content_json, created_timestamp, metadata_json) "
                    "values (?, ?, ?, ?, ?, ?)",
                    [(r["message_id"], r["session_id"], r["role"], r["content_json"], r["created_timestamp"],
                      r["metadata_json"]) for r in _rows()])
    con.commit()
    con.close()
    return path


def _docs(stdout: bytes) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_detected_from_its_rows():
    assert formats.detect_document({"sessions": SESSIONS, "messages": _rows()}) == "goose"
    assert formats.detect_document(_rows()) == "goose"


def test_the_database_one_transcript_per_session(store):
    result = invoke(["convert", "--to", "openai", str(store)])
    assert result.status == 0, result.stderr
    first, second = _docs(result.stdout)
    assert [m["role"] for m in first["messages"]] == ["user", "assistant", "tool", "assistant"]
    call = first["messages"][1]
    assert json.loads(call["tool_calls"][0]["function"]["arguments"]) == {"command": "cat src/orders.py"}
    assert first["messages"][2] == {"role": "tool", "tool_call_id": "c1", "content": "def average_item_price(cart): ..."}
    assert first["model"] == "qwen3:0.6b"
    # the summarized message stays out; a call the model could not make keeps its error
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "tool", "assistant", "tool"]
    assert second["messages"][0]["content"] == "Find the division by zero."
    assert second["messages"][1]["tool_calls"][0]["function"]["name"] == "invalid_tool_call"
    assert second["messages"][2]["content"] == "Error: -32002: Tool 'read' not found."
    assert "messages the agent no longer saw (replaced by a summary): 1" in result.stderr


def test_thinking_streamed_a_token_a_part_is_one_reasoning():
    export = io.BytesIO(json.dumps({"sessions": SESSIONS, "messages": _rows()}).encode())
    (doc, _) = [d.data for d in formats.documents(export)]
    assert doc["messages"][1]["reasoning"] == "Read it."


def test_estimate_and_compress_read_the_same_and_the_usage_is_recorded(store):
    first, _ = _docs(invoke(["estimate", str(store)]).stdout)
    assert first["messages"] == 4
    assert (first["recorded_usage"]["source"], first["recorded_usage"]["prompt_tokens"]) == ("goose", 2050)
    result = invoke(["compress", "--summarizer", "extractive", str(store)])
    assert result.status == 0, result.stderr
    assert [len(d["messages"]) for d in _docs(result.stdout)] == [4, 5]


def test_anthropic_output_keeps_every_call_and_result(store):
    assert tool_ids([str(store)]) == (["c1", "c2", "c3"], ["c1", "c2", "c3"])
