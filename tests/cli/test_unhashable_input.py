"""A list or an object where input should have a string (a ``type``, ``role``, id, ``from``) is
bad input (exit 3, one line) or handled, never a crash (exit 70: ``unhashable type``): every
membership test on an input value goes through a tuple or a string check (issue 16, item 4)."""

import json

import pytest
from conftest import invoke

COMMANDS = [["estimate"], ["prune"], ["sanitize"], ["compress"], ["cache-mark"], ["cache-mark", "--check"],
            ["normalize-usage"], ["validate"], ["convert", "--to", "anthropic", "--model", "claude-x"], ["convert", "--to", "openai", "--model", "gpt-4o"],
            ["convert", "--to", "sharegpt"]]

CALL = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
OPENAI = [{"role": "user", "content": "u"}, {"role": "assistant", "content": None, "tool_calls": [CALL]},
          {"role": "tool", "tool_call_id": "c1", "content": "r"}]
ANTHROPIC = {"model": "claude-x", "system": [{"type": "text", "text": "s"}], "messages": [
    {"role": "user", "content": [{"type": "text", "text": "u"}]},
    {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "x"},
                                      {"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "r"}]}]}


def _with(doc, path, value):
    doc = json.loads(json.dumps(doc))
    at = doc
    for key in path[:-1]:
        at = at[key]
    at[path[-1]] = value
    return doc


HOSTILE = [
    {"type": []},
    {"type": {}, "uuid": "a", "parentUuid": None, "sessionId": "s", "message": {"role": "user", "content": "hi"}},
    {"type": "response_item", "payload": {"type": [], "role": "user", "content": "x"}},
    {"type": "response_item", "payload": {"type": "message", "role": "user",
                                          "content": [{"type": "input_text", "text": []}]}},
    {"type": "response_item", "payload": {"type": "message", "role": {}, "content": "x"}},
    {"conversations": [{"from": [], "value": "hi"}, {"from": "gpt", "value": "yo"}]},
    _with(OPENAI, [1, "tool_calls"], [[]]),
    _with(OPENAI, [1, "tool_calls"], {"a": []}),
    _with(OPENAI, [1, "tool_calls", 0, "id"], []),
    _with(OPENAI, [1, "tool_calls", 0, "function"], [[]]),
    _with(OPENAI, [1, "tool_calls", 0, "function", "arguments"], [[]]),
    _with(OPENAI, [2, "tool_call_id"], {}),
    _with(ANTHROPIC, ["system", 0, "type"], []),
    _with(ANTHROPIC, ["messages", 1, "content", 0, "type"], {}),
    _with(ANTHROPIC, ["messages", 1, "content", 0, "thinking"], [1]),
]


@pytest.mark.parametrize("doc", HOSTILE, ids=range(len(HOSTILE)))
@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_no_unhashable_crash(args, doc):
    r = invoke(args, doc)
    assert r.status in (0, 1, 3), (r.status, r.stderr)
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr


def test_cache_mark_type_list_is_bad_input():
    r = invoke(["cache-mark"], b'{"type": []}')
    assert r.status == 3 and r.stdout == b"" and len(r.stderr.strip().splitlines()) == 1


def test_convert_names_the_bad_call():
    r = invoke(["convert", "--to", "sharegpt"], _with(OPENAI, [1, "tool_calls", 0, "id"], []))
    assert r.status == 3 and "messages[1].tool_calls[0].id: a tool call id must be a string, got an array" in r.stderr
    r = invoke(["convert", "--to", "anthropic"], _with(OPENAI, [2, "tool_call_id"], {}))
    assert r.status == 3 and "messages[2]: tool_call_id must be a string, got an object" in r.stderr


def test_object_arguments_are_no_call_an_api_takes():  # a string of JSON (D14)
    r = invoke(["convert", "--to", "sharegpt"], _with(OPENAI, [1, "tool_calls", 0, "function", "arguments"], {"a": 1}))
    assert r.status == 3 and "function.arguments must be a string, got an object" in r.stderr
