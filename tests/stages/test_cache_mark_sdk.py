"""cache-mark's output is a request the Anthropic API accepts: the body is rebuilt with the
anthropic SDK's typed params (unknown or missing keys fail), sent with the real SDK client to a
local server that checks it the way the Messages API does (at most 4 cache_control blocks, valid
markers and block shapes) and answers like the Messages API."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import get_origin

import pytest
from conftest import invoke

anthropic = pytest.importorskip("anthropic")
from anthropic import types as T  # noqa: E402
from typing_extensions import Required, get_type_hints  # noqa: E402

BLOCKS = {"text": T.TextBlockParam, "image": T.ImageBlockParam, "tool_use": T.ToolUseBlockParam,
          "tool_result": T.ToolResultBlockParam, "thinking": T.ThinkingBlockParam,
          "redacted_thinking": T.RedactedThinkingBlockParam, "document": T.DocumentBlockParam}

# MessageParam is a Union in recent SDKs (one TypedDict per role); older ones have one TypedDict
ROLES = {"user": getattr(T, "UserMessageParam", T.MessageParam),
         "assistant": getattr(T, "AssistantMessageParam", T.MessageParam)}


def typed(cls, value: dict) -> dict:
    """``cls(**value)`` after checking the keys against the SDK's TypedDict."""
    hints = get_type_hints(cls, include_extras=True)
    unknown = set(value) - set(hints)
    assert not unknown, f"{cls.__name__}: unknown keys {unknown}"
    required = {k for k, h in hints.items() if get_origin(h) is Required}
    assert required <= set(value), f"{cls.__name__}: missing {required - set(value)}"
    return cls(**value)


def block(b: dict) -> dict:
    b = dict(b)
    if "cache_control" in b:
        b["cache_control"] = typed(T.CacheControlEphemeralParam, b["cache_control"])
    if b.get("type") == "tool_result" and isinstance(b.get("content"), list):
        b["content"] = [block(x) for x in b["content"]]
    return typed(BLOCKS[b["type"]], b)


def request_params(body: dict) -> dict:
    messages = [typed(ROLES[m["role"]], {"role": m["role"], "content": m["content"] if isinstance(m["content"], str)
                                         else [block(b) for b in m["content"]]}) for m in body["messages"]]
    params = {"model": body["model"], "max_tokens": body["max_tokens"], "messages": messages}
    if "system" in body:
        params["system"] = body["system"] if isinstance(body["system"], str) else [block(b) for b in body["system"]]
    if "tools" in body:
        params["tools"] = [typed(T.ToolParam, t) for t in body["tools"]]
    return params


def problems(body: dict) -> list[str]:
    """What the Messages API would reject about prompt caching and block shapes."""
    found, markers = [], 0

    def check_block(b, where):
        nonlocal markers
        if not isinstance(b, dict) or "type" not in b:
            found.append(f"{where}: not a content block")
            return
        cc = b.get("cache_control")
        if cc is not None:
            markers += 1
            if cc.get("type") != "ephemeral" or set(cc) - {"type", "ttl"} or cc.get("ttl", "5m") not in ("5m", "1h"):
                found.append(f"{where}: bad cache_control {cc}")
            if b["type"] in ("thinking", "redacted_thinking"):
                found.append(f"{where}: cache_control on a thinking block")
            if b["type"] == "text" and not (b.get("text") or "").strip():
                found.append(f"{where}: cache_control on an empty text block")
        if b["type"] == "text" and not isinstance(b.get("text"), str):
            found.append(f"{where}: text block without text")
        if b["type"] == "tool_result" and isinstance(b.get("content"), list):
            for k, inner in enumerate(b["content"]):  # these markers count toward the 4 as well
                check_block(inner, f"{where}.content.{k}")

    for t in body.get("tools") or []:
        if "cache_control" in t:
            markers += 1
    system = body.get("system")
    if isinstance(system, list):
        for j, b in enumerate(system):
            check_block(b, f"system.{j}")
    for i, m in enumerate(body.get("messages") or []):
        if set(m) - {"role", "content"}:
            found.append(f"messages.{i}: extra keys {set(m) - {'role', 'content'}}")
        if m.get("role") not in ("user", "assistant"):
            found.append(f"messages.{i}: bad role")
        if isinstance(m.get("content"), list):
            for j, b in enumerate(m["content"]):
                check_block(b, f"messages.{i}.content.{j}")
    if markers > 4:
        found.append(f"A maximum of 4 blocks with cache_control may be provided. Found {markers}.")
    return found


class Server:
    def __init__(self):
        self.bodies: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                outer.bodies.append(body)
                errors = problems(body)
                if errors:
                    payload = {"type": "error", "error": {"type": "invalid_request_error", "message": "; ".join(errors)}}
                    code = 400
                else:
                    payload = {"id": "msg_test", "type": "message", "role": "assistant", "model": body["model"],
                               "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
                               "stop_sequence": None,
                               "usage": {"input_tokens": 10, "output_tokens": 1, "cache_read_input_tokens": 0,
                                         "cache_creation_input_tokens": 0}}
                    code = 200
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def client():
    server = Server()
    c = anthropic.Anthropic(base_url=server.url, api_key="test-key", max_retries=0, timeout=10)
    c.server = server
    yield c
    server.close()


def _marked(i, ttl=None):
    return {"type": "ephemeral", **({"ttl": ttl} if ttl else {})}


SESSION = {
    "model": "claude-opus-4-7", "max_tokens": 512,
    "system": [{"type": "text", "text": "You are a careful assistant."},
               {"type": "text", "text": "Project notes: keep answers short.", "cache_control": _marked(0)}],
    "tools": [{"name": "read_file", "description": "Read a file.",
               "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
               "cache_control": _marked(5)}],
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "Open a.py", "cache_control": _marked(1)}]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "I should read it.", "signature": "sig"},
            {"type": "text", "text": "Reading.", "cache_control": _marked(2)},
            {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.py"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                      "content": [{"type": "text", "text": "print(1)", "cache_control": _marked(6)}],
                                      "cache_control": _marked(3)}]},
        {"role": "assistant", "content": "It prints 1."},
        {"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}},
            {"type": "text", "text": "And this?", "cache_control": _marked(4)}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_2", "name": "read_file", "input": {"path": "b.py"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_2", "content": "x = 2"}]},
        {"role": "user", "content": "Thanks."},
    ],
}


def test_the_validator_rejects_what_the_api_rejects(client):
    # the input carries 7 stale markers (one on a tool, one inside a tool_result): the server
    # (like the API) refuses it
    with pytest.raises(anthropic.BadRequestError, match="Found 7"):
        client.messages.create(**request_params(SESSION))
    assert problems({"messages": [{"role": "user", "content": [
        {"type": "text", "text": " ", "cache_control": {"type": "ephemeral", "ttl": "30m"}}]}]}) == [
        "messages.0.content.0: bad cache_control {'type': 'ephemeral', 'ttl': '30m'}",
        "messages.0.content.0: cache_control on an empty text block"]


@pytest.mark.parametrize("ttl", ["5m", "1h"])
def test_marked_session_is_accepted_by_the_sdk_and_the_api_rules(client, ttl):
    result = invoke(["cache-mark", "--ttl", ttl], SESSION)
    assert result.status == 0, result.stderr
    body = result.json
    message = client.messages.create(**request_params(body))
    assert message.content[0].text == "ok"
    sent = client.server.bodies[-1]
    assert problems(sent) == []
    markers = json.dumps(sent).count('"cache_control"')
    assert markers == 4
    expected = {"type": "ephemeral", "ttl": "1h"} if ttl == "1h" else {"type": "ephemeral"}
    assert sent["system"][-1]["cache_control"] == expected
    # the last three units: tool_result of toolu_2, and the final user text; thinking untouched
    assert sent["messages"][-1]["content"] == [{"type": "text", "text": "Thanks.", "cache_control": expected}]
    assert "cache_control" not in sent["messages"][1]["content"][0]
    assert "cache_control" not in sent["tools"][0]
    assert "cache_control" not in sent["messages"][2]["content"][0]["content"][0]  # the nested stale one


@pytest.mark.parametrize("n", [1, 2, 5, 12])
def test_sessions_of_any_length_are_accepted(client, n):
    messages = []
    for i in range(n):
        messages += [{"role": "user", "content": f"question {i}"},
                     {"role": "assistant", "content": [{"type": "text", "text": f"answer {i}"}]}]
    body = {"model": "claude-haiku-4-5", "max_tokens": 64, "system": "Be brief.", "messages": messages}
    marked = invoke(["cache-mark"], body).json
    again = invoke(["cache-mark"], marked).json
    assert again == marked
    client.messages.create(**request_params(again))
    assert problems(client.server.bodies[-1]) == []


def _random_body(rng):
    """A valid Messages API body: text/image user turns, assistant text/thinking/tool_use turns
    answered by tool_result turns (string or block content), stale markers anywhere."""
    def stale(block):
        return {**block, "cache_control": _marked(0, rng.choice([None, "1h"]))} if rng.random() < 0.3 else block

    messages, n = [], 0
    for _ in range(rng.randint(1, 6)):
        user = [stale({"type": "text", "text": rng.choice(["hi", "read a.py please"])})]
        if rng.random() < 0.2:
            user.insert(0, {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}})
        messages.append({"role": "user", "content": user if rng.random() < 0.7 else user[-1]["text"]})
        if rng.random() < 0.6:
            n += 1
            blocks = [{"type": "thinking", "thinking": "hm", "signature": "s"}] if rng.random() < 0.3 else []
            if rng.random() < 0.5:
                blocks.append(stale({"type": "text", "text": "Reading."}))
            blocks.append(stale({"type": "tool_use", "id": f"toolu_{n}", "name": "read_file", "input": {"path": "a"}}))
            messages.append({"role": "assistant", "content": blocks})
            inner = rng.choice(["x = 1", [stale({"type": "text", "text": "x = 1"})]])
            messages.append({"role": "user", "content": [stale({"type": "tool_result", "tool_use_id": f"toolu_{n}",
                                                                "content": inner})]})
        messages.append({"role": "assistant", "content": rng.choice(["ok", [stale({"type": "text", "text": "ok"})]])})
    body = {"model": "claude-opus-4-7", "max_tokens": 64, "messages": messages}
    if rng.random() < 0.7:
        body["system"] = rng.choice(["Be brief.", [stale({"type": "text", "text": "Be brief."})]])
    if rng.random() < 0.5:
        body["tools"] = [stale({"name": "read_file", "input_schema": {"type": "object"}})]
    return body


@pytest.mark.parametrize("seed", range(40))
def test_random_bodies_with_stale_markers_are_accepted(client, seed):
    import random

    rng = random.Random(seed)
    body = _random_body(rng)
    ttl = rng.choice(["5m", "1h"])
    result = invoke(["cache-mark", "--ttl", ttl], body)
    assert result.status == 0, result.stderr
    client.messages.create(**request_params(result.json))
    sent = client.server.bodies[-1]
    assert problems(sent) == []
    markers = json.dumps(sent).count('"cache_control"')
    assert 1 <= markers <= 4
    assert invoke(["cache-mark", "--ttl", ttl], result.json).json == result.json  # idempotent
