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


def _body(block=BLOCK, calls=2, follow=False):
    """An Anthropic body holding ``block``; ``follow``: an assistant message right after it (what
    the API returns after a compaction), which no command merges into it."""
    messages = [{"role": "user", "content": "Build the parser"},
                {"role": "assistant", "content": [block]},
                *([{"role": "assistant", "content": "Continuing with the parser."}] if follow else []),
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


# every command that reads a transcript (normalize-usage reads a response: see below)
COMMANDS = [["prune"], ["sanitize"], ["compress", "--summarizer", "extractive"], ["spill", "--dry-run"],
            ["cache-mark"], ["trajectory"], ["run", "--pipeline", "spill,prune,sanitize,cache-mark"]]


@pytest.mark.parametrize("command", [*COMMANDS, ["convert", "--to", "anthropic"]])
def test_every_command_keeps_the_block_as_it_was_with_what_follows(command):
    body = _body(follow=True)
    result = invoke(command, body)
    assert result.status == 0, result.stderr
    out = json.loads(result.stdout.splitlines()[-1])
    (index, block), = _blocks(out)
    assert json.dumps(block) == json.dumps(BLOCK)  # byte for byte
    assert out["messages"][index + 1] == body["messages"][index + 1]  # never split from what follows
    assert out["messages"][:index + 1] == body["messages"][:index + 1]
    assert len(out["messages"]) == len(body["messages"])  # never merged


def _compressed(body):
    result = invoke(["compress", "--summarizer", "extractive", "--context-length", "20000"], body)
    assert result.status == 0, result.stderr
    return json.loads(result.stdout)


def test_compress_summarizes_only_what_follows_the_compaction():
    body = _body(calls=30)
    out = _compressed(body)
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


def test_normalize_usage_reads_a_response_holding_it():
    response = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                "content": [BLOCK, {"type": "text", "text": "ok"}], "usage": {"input_tokens": 10, "output_tokens": 5}}
    result = invoke(["normalize-usage"], response)
    assert result.status == 0, result.stderr
    assert json.loads(result.stdout)["prompt_tokens"] == 10


# --- OpenAI Responses: the compaction item ---------------------------------------------------------

ITEM = {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAAABpUu_7UNF2ICvv99gsw=="}
RESPONSES = {"model": "gpt-5", "input": [
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Build it"}]},
    ITEM,
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Go on"}]}]}


def _responses(item=ITEM, calls=2, follow=True):
    """A Responses request holding ``item``; ``follow``: the assistant's reply right after it (as
    server-side compaction returns them: the item, then the reply)."""
    items = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Build the parser"}]},
             item,
             *([{"type": "message", "role": "assistant", "content": [
                 {"type": "output_text", "text": "Continuing with the parser."}]}] if follow else []),
             {"role": "user", "content": "Now add gzip support"}]
    for i in range(calls):
        items.append({"type": "function_call", "call_id": f"call_{i}", "name": "bash",
                      "arguments": json.dumps({"command": f"cat f{i}"})})
        items.append({"type": "function_call_output", "call_id": f"call_{i}", "output": f"{i} " * 400})
    items.append({"role": "assistant", "content": "Done."})
    return {"model": "gpt-5", "context_management": [{"type": "compaction", "compact_threshold": 200000}],
            "input": items}


def _items(out):
    return [(i, item) for i, item in enumerate(out["input"]) if item.get("type") == "compaction"]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_keeps_the_item_as_it_was_with_what_follows(command):
    body = _responses()
    result = invoke(command, body)
    assert result.status == 0, result.stderr
    raw = result.stdout.splitlines()[-1]
    out = json.loads(raw)
    assert "input" in out and "messages" not in out  # Responses in, Responses out
    (index, item), = _items(out)
    assert index == 1 and list(item.items()) == list(ITEM.items())  # where it was, as it was
    assert json.dumps(ITEM, separators=(",", ":")).encode() in raw  # byte for byte
    after = out["input"][index + 1]  # never split from what follows, never merged with it
    assert after in ({"role": "assistant", "content": "Continuing with the parser."}, body["input"][2])
    assert out["input"][0] in ({"role": "user", "content": "Build the parser"}, body["input"][0])
    assert len(out["input"]) == len(body["input"])
    assert out["context_management"] == body["context_management"]


def test_compress_summarizes_only_what_follows_the_item():
    body = _responses(calls=30)
    out = _compressed(body)
    assert len(out["input"]) < len(body["input"])  # it did compress
    (index, item), = _items(out)
    assert index == 1 and item == ITEM
    assert out["input"][2] == {"role": "assistant", "content": "Continuing with the parser."}


def test_estimate_counts_the_item():
    with_item = json.loads(invoke(["estimate"], _responses()).stdout)["tokens"]["total"]
    without = json.loads(invoke(["estimate"], _responses({**ITEM, "encrypted_content": ""})).stdout)["tokens"]["total"]
    assert with_item > without


def test_validate_accepts_the_item_where_the_api_does_and_names_a_malformed_one():
    result = invoke(["validate"], _responses())
    assert result.status == 0, result.stderr
    bad = {"type": "compaction", "id": 7, "summary": "x", "encrypted_content": None}
    result = invoke(["validate"], _responses(bad))
    assert result.status == 1
    lines = result.stderr.splitlines()
    assert "OA-COMPACTION: Unknown parameter: 'messages[1].content[0].summary'." in lines[0]
    assert "OA-COMPACTION" in lines[1] and "encrypted_content': expected a string" in lines[1]
    assert "OA-COMPACTION" in lines[2] and ".id': expected a string" in lines[2]
    # in chat messages (sent to Chat Completions) it is no item the API takes
    result = invoke(["validate", "--target", "openai"], _responses())
    assert result.status == 1
    assert "OA-COMPACTION: a Responses `compaction` item" in result.stderr


def test_normalize_usage_reads_a_response_holding_the_item():
    response = {"id": "resp_1", "object": "response", "model": "gpt-5", "status": "completed",
                "output": [ITEM, {"type": "message", "role": "assistant",
                                  "content": [{"type": "output_text", "text": "ok"}]}],
                "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}}
    result = invoke(["normalize-usage"], response)
    assert result.status == 0, result.stderr
    assert json.loads(result.stdout)["prompt_tokens"] == 10


@pytest.mark.parametrize("target", [["--to", "anthropic", "--model", "claude-sonnet-4-5"],
                                    ["--to", "openai", "--model", "gpt-5"]])
def test_convert_to_another_api_refuses_the_item_or_drops_it_when_lenient(target):
    result = invoke(["convert", *target], RESPONSES)
    assert result.status == 3
    assert "OpenAI compaction item" in result.stderr and len(result.stderr.splitlines()) == 1
    result = invoke(["convert", "--lenient", *target], RESPONSES)
    assert result.status == 0, result.stderr
    assert "encrypted compaction items: 1 not kept" in result.stderr
    assert "encrypted_content" not in result.stdout.decode()
    # a command writing chat messages (--to) refuses it likewise
    result = invoke(["prune", "--to", "openai"], RESPONSES)
    assert result.status == 3 and "OpenAI compaction item" in result.stderr


def test_a_bare_list_of_items_comes_back_a_bare_list():
    items = RESPONSES["input"]
    result = invoke(["sanitize"], items)
    assert result.status == 0, result.stderr
    out = json.loads(result.stdout)
    assert isinstance(out, list) and out[1] == ITEM and len(out) == 3


def test_what_a_responses_request_holds_besides_is_written_back_or_said():
    body = {"model": "gpt-5", "input": [
        {"role": "user", "content": "Look"},
        {"type": "function_call", "call_id": "c1", "name": "shot", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": [
            {"type": "input_text", "text": "the screen"}, {"type": "input_image", "image_url": "https://e.x/s.png"}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Seen."},
                                                             {"type": "refusal", "refusal": "Not that."}]}]}
    result = invoke(["sanitize"], body)
    assert result.status == 0, result.stderr
    out = json.loads(result.stdout)["input"]
    assert out[2]["output"] == [{"type": "input_text", "text": "the screen"},
                                {"type": "input_image", "image_url": "https://e.x/s.png"}]
    assert out[3] == {"role": "assistant", "content": "Seen.\nNot that."}


def test_cache_mark_leaves_the_item_as_it_came_and_says_the_responses_api_takes_no_marker():
    result = invoke(["cache-mark"], RESPONSES)
    assert result.status == 0, result.stderr
    assert json.loads(result.stdout)["input"][1] == ITEM
    assert "cache_control markers (the Responses API caches prefixes by itself): 3 not kept" in result.stderr
