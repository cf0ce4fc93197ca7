"""The Anthropic module: server-side tool blocks (a web search the API ran itself) survive a
round trip through OpenAI chat, where they are kept as text."""

from __future__ import annotations

import json

from conftest import invoke

from hermesctx import formats
from hermesctx.formats import anthropic

SEARCH = {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search",
          "input": {"query": "horaires bibliothèque Lyon"}}
RESULT = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_01",
          "content": [{"type": "web_search_result", "url": "https://bm.example.org/horaires",
                       "title": "Horaires", "encrypted_content": "Zm9v"}]}
BODY = {"model": "claude-sonnet-4-5", "max_tokens": 512, "messages": [
    {"role": "user", "content": "La bibliothèque ouvre à quelle heure ?"},
    {"role": "assistant", "content": [{"type": "text", "text": "Je regarde."}, SEARCH, RESULT,
                                      {"type": "text", "text": "Elle ouvre à 10 h."}]},
    {"role": "user", "content": "Et le dimanche ?"},
    {"role": "assistant", "content": [SEARCH]},
]}


def test_server_blocks_come_back_after_an_openai_round_trip():
    to_openai = invoke(["convert", "--to", "openai", "--model", "gpt-4o"], BODY)
    assert to_openai.status == 0, to_openai.stderr
    assert "server-side tool blocks: 3 written as text in the openai output" in to_openai.stderr
    openai = json.loads(to_openai.stdout)
    texts = [p["text"] for p in openai["messages"][1]["content"]]
    assert texts[1].startswith("[server-side tool server_tool_use] {")
    back = invoke(["convert", "--to", "anthropic", "--model", "claude-sonnet-4-5"], to_openai.stdout)
    assert back.status == 0, back.stderr
    assert "not kept" not in back.stderr
    assert json.loads(back.stdout)["messages"] == BODY["messages"]


def test_a_body_whose_only_anthropic_blocks_are_server_side_is_detected_as_anthropic():
    assert formats.detect_document(BODY) == "anthropic"


def test_text_that_only_looks_like_a_server_block_stays_text():
    for text in ("[server-side tool server_tool_use] not json",
                 '[server-side tool web_search_call] {"id": "ws_1"}',  # a Responses item: no block
                 '[server-side tool server_tool_use] {"type": "x"}',
                 "[server-side tool server_tool_use] [1]"):
        msgs = [{"role": "user", "content": "q"}, {"role": "assistant", "content": text}]
        out = anthropic.write({"messages": msgs}, {})
        assert out["messages"][1] == {"role": "assistant", "content": text}
