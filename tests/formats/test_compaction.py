"""Providers' own compaction items: Anthropic's ``compaction`` content block (beta
``compact-2026-01-12``; the API drops every block before it) and OpenAI's Responses
``compaction`` item (``encrypted_content``: only OpenAI reads it). Every command keeps the block
byte for byte where it was; estimate counts it; validate knows it; convert to another provider
refuses it (exit 3) or, with --lenient, drops it with a warning."""

from __future__ import annotations

import json

import pytest
from conftest import invoke

BLOCK = {"type": "compaction", "content": "Summary: the parser reads JSON Lines; its tests pass."}


def _body(block=BLOCK, calls=2):
    messages = [{"role": "user", "content": "Build the parser"},
                {"role": "assistant", "content": [block]},
                {"role": "user", "content": "Now add gzip support"}]
    for i in range(calls):
        messages.append({"role": "assistant", "content": [
            {"type": "tool_use", "id": f"toolu_{i}", "name": "bash", "input": {"command": f"cat f{i}"}}]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": "x " * 400}]})
    messages.append({"role": "assistant", "content": "Done."})
    return {"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": messages}


def _blocks(body):
    return [(i, b) for i, m in enumerate(body["messages"]) if isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "compaction"]


@pytest.mark.parametrize("command", [
    ["prune"], ["sanitize"], ["compress", "--summarizer", "extractive"], ["spill", "--dry-run"],
    ["convert", "--to", "anthropic"], ["cache-mark"],
])
def test_every_command_keeps_the_block_as_it_was_with_what_follows(command):
    body = _body()
    result = invoke(command, body)
    assert result.status == 0, result.stderr
    out = json.loads(result.stdout)
    (index, block), = _blocks(out)
    assert json.dumps(block) == json.dumps(BLOCK)  # byte for byte
    assert out["messages"][index + 1] == body["messages"][index + 1]  # never split from what follows
    assert out["messages"][:index + 1] == body["messages"][:index + 1]


def test_compress_summarizes_only_what_follows_the_compaction():
    body = _body(calls=30)
    result = invoke(["compress", "--summarizer", "extractive", "--context-length", "20000"], body)
    assert result.status == 0, result.stderr
    out = json.loads(result.stdout)
    assert len(out["messages"]) < len(body["messages"])  # it did compress
    assert out["messages"][:3] == body["messages"][:3]
    assert len(_blocks(out)) == 1


def test_estimate_counts_it():
    with_block = json.loads(invoke(["estimate"], _body()).stdout)["tokens"]["total"]
    text = {"type": "text", "text": "ok"}
    without = json.loads(invoke(["estimate"], _body(text)).stdout)["tokens"]["total"]
    assert with_block > without + 8


def test_validate_accepts_it_where_the_provider_does_and_names_a_malformed_one(tmp_path):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(_body()))
    result = invoke(["validate", "--target", "anthropic", str(good)])
    assert result.status == 0, result.stdout + result.stderr.encode()
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_body({"type": "compaction", "summary": "x"})))
    result = invoke(["validate", "--target", "anthropic", str(bad)])
    assert result.status == 1
    assert "AN-COMPACTION: messages.1.content.0.compaction.summary: Extra inputs" in result.stderr


def test_convert_to_another_provider_refuses_it_or_drops_it_when_lenient():
    result = invoke(["convert", "--to", "openai", "--model", "gpt-5"], _body())
    assert result.status == 3
    assert "Anthropic compaction block" in result.stderr and len(result.stderr.splitlines()) == 1
    result = invoke(["convert", "--lenient", "--to", "openai", "--model", "gpt-5"], _body())
    assert result.status == 0, result.stderr
    assert "Anthropic compaction blocks: 1 not kept" in result.stderr
    assert "compaction" not in result.stdout.decode()


ITEM = {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAAABpUu_7UNF2ICvv99gsw"}
RESPONSES = {"model": "gpt-5", "input": [
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Build it"}]},
    ITEM,
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Go on"}]}]}


def test_an_openai_compaction_item_is_refused_or_dropped_when_lenient():
    for command in (["convert", "--to", "anthropic", "--model", "claude-sonnet-4-5"], ["convert", "--to", "openai", "--model", "gpt-5"], ["estimate"]):
        result = invoke(command, RESPONSES)
        assert result.status == 3, command
        assert "OpenAI compaction item" in result.stderr
    result = invoke(["convert", "--lenient", "--to", "anthropic", "--model", "claude-sonnet-4-5"], RESPONSES)
    assert result.status == 0, result.stderr
    assert "encrypted compaction items: 1 not kept" in result.stderr
