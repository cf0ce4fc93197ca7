"""Anthropic Messages bodies: server-side blocks (tools the API ran itself) through OpenAI."""

from __future__ import annotations

import json

import pytest
from conftest import invoke

SEARCH = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}}
RESULT = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
          "content": [{"type": "web_search_result", "url": "https://example.com", "title": "t",
                       "encrypted_content": "abc"}]}


def body(*assistant: dict) -> dict:
    return {"model": "claude-x", "max_tokens": 100, "messages": [
        {"role": "user", "content": "search"},
        {"role": "assistant", "content": list(assistant)},
        {"role": "user", "content": "thanks"}]}


@pytest.mark.parametrize("assistant", [
    (SEARCH, RESULT, {"type": "text", "text": "found"}),
    (SEARCH,),  # one block alone: the OpenAI message holds it as a string
])
def test_server_side_blocks_survive_a_round_trip_through_openai(tmp_path, assistant):
    original = body(*assistant)
    to_openai = invoke(["convert", "--to", "openai"], original)
    assert to_openai.status == 0, to_openai.stderr
    assert "server-side tool blocks" in to_openai.stderr  # the OpenAI doc holds them as text
    openai = json.loads(to_openai.stdout)
    assert "server_tool_use" not in {p.get("type") for p in openai["messages"][1]["content"]
                                     if isinstance(p, dict)}
    back = invoke(["convert", "--to", "anthropic"], openai)
    assert back.status == 0, back.stderr
    assert json.loads(back.stdout) == original


def test_a_body_whose_only_anthropic_blocks_are_server_side_is_read_as_anthropic():
    result = invoke(["convert", "--to", "openai", "-v"], body(SEARCH, RESULT))
    assert result.status == 0, result.stderr
    assert "server-side tool blocks: 2 written as text" in result.stderr


def test_user_text_that_looks_like_a_server_block_stays_text():
    text = '[server-side tool server_tool_use] {"id": "x"}'
    doc = {"messages": [{"role": "user", "content": text}, {"role": "assistant", "content": "ok"}]}
    result = invoke(["convert", "--from", "openai", "--to", "anthropic"], doc)
    assert result.status == 0, result.stderr
    assert json.loads(result.stdout)["messages"][0]["content"] == text
