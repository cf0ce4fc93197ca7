"""The send path (hermesctx.wire.send, decision D12): one test per rule, idempotence, and what
the commands write."""

from __future__ import annotations

import copy
import json

import pytest
from builders import call
from conftest import invoke
from hypothesis import given
from hypothesis import strategies as st

from hermesctx.wire import send
from hermesctx.wire.send import anthropic_request, openai_request


def oa(doc):
    counts = {}
    before = copy.deepcopy(doc)
    out = openai_request(doc, counts)
    assert doc == before  # never mutated
    return out, counts


def an(doc):
    counts = {}
    before = copy.deepcopy(doc)
    out = anthropic_request(doc, counts)
    assert doc == before
    return out, counts


# --- OpenAI ----------------------------------------------------------------------------------

def test_openai_clean_request_is_the_same_object():
    doc = {"model": "gpt-4o", "messages": [
        {"role": "system", "content": "s"}, {"role": "user", "content": "q"},
        {"role": "assistant", "content": None, "tool_calls": [call("a", "f")]},
        {"role": "tool", "tool_call_id": "a", "content": "r"},
        {"role": "assistant", "content": "done"}]}
    out, counts = oa(doc)
    assert out is doc and counts == {}
    assert openai_request(doc["messages"]) is doc["messages"]


def test_openai_internal_keys_are_stripped():
    doc = [{"role": "user", "content": "q", "timestamp": 3},
           {"role": "assistant", "content": "x", "_compressed_summary": True, "finish_reason": "stop",
            "codex_reasoning_items": None, "tool_calls": [{**call("a", "f"), "call_id": "a", "response_item_id": "fc"}]},
           {"role": "tool", "tool_call_id": "a", "tool_name": "f", "content": "r", "_db_persisted": 1}]
    out, counts = oa(doc)
    assert out == [{"role": "user", "content": "q"},
                   {"role": "assistant", "content": "x", "tool_calls": [call("a", "f")]},
                   {"role": "tool", "tool_call_id": "a", "content": "r"}]
    assert counts[send.INTERNAL_KEYS] == 7


def test_openai_reasoning_is_not_sent():
    doc = [{"role": "user", "content": "q"},
           {"role": "assistant", "content": "x", "reasoning": "thought",
            "reasoning_details": [{"type": "thinking", "thinking": "t", "signature": "S"}]}]
    out, counts = oa(doc)
    assert out[1] == {"role": "assistant", "content": "x"} and counts[send.REASONING] == 2
    kept = [{"role": "assistant", "content": "x", "reasoning_content": "r"}]
    assert openai_request(kept) is kept  # what Hermes replays to thinking providers stays


def test_openai_consecutive_assistants_merge_like_hermes():
    doc = [{"role": "user", "content": "q"},
           {"role": "assistant", "content": " a ", "tool_calls": [call("1", "f")]},
           {"role": "assistant", "content": "b", "tool_calls": [call("2", "f")], "reasoning_content": "r"},
           {"role": "tool", "tool_call_id": "1", "content": "r1"},
           {"role": "tool", "tool_call_id": "2", "content": "r2"}]
    out, counts = oa(doc)
    assert out[1] == {"role": "assistant", "content": "a\nb", "tool_calls": [call("1", "f"), call("2", "f")],
                      "reasoning_content": "r"}
    assert len(out) == 4 and counts == {send.MERGED_ASSISTANT: 1}


def test_openai_codex_interim_turns_are_merged_too():
    doc = [{"role": "user", "content": "q"},
           {"role": "assistant", "content": "a", "finish_reason": "incomplete"},
           {"role": "assistant", "content": "b"}]
    out, _ = oa(doc)
    assert [m["content"] for m in out] == ["q", "a\nb"]  # a named difference from Hermes


def test_openai_stray_and_repeated_tool_results_are_dropped():
    doc = [{"role": "user", "content": "q"},
           {"role": "tool", "tool_call_id": "zz", "content": "stray"},
           {"role": "assistant", "content": None, "tool_calls": [call("a", "f")]},
           {"role": "tool", "tool_call_id": "a", "content": "r"},
           {"role": "tool", "tool_call_id": "a", "content": "again"},
           {"role": "user", "content": "next"},
           {"role": "tool", "tool_call_id": "a", "content": "late"}]
    out, counts = oa(doc)
    assert [m.get("content") for m in out] == ["q", None, "r", "next"]
    assert counts == {send.STRAY_TOOL: 3}


def test_openai_consecutive_users_merge_and_lists_stay_apart():
    doc = [{"role": "user", "content": "a"}, {"role": "user", "content": "b"},
           {"role": "user", "content": [{"type": "text", "text": "c"}]}]
    out, counts = oa(doc)
    assert out == [{"role": "user", "content": "a\n\nb"}, doc[2]] and counts == {send.MERGED_USER: 1}


def test_openai_no_empty_tool_calls_and_no_empty_assistant():
    doc = [{"role": "user", "content": "q"},
           {"role": "assistant", "content": "hi", "tool_calls": []},
           {"role": "user", "content": "again"},
           {"role": "assistant", "content": None},
           {"role": "user", "content": "more"}]
    out, counts = oa(doc)
    assert out == [{"role": "user", "content": "q"}, {"role": "assistant", "content": "hi"},
                   {"role": "user", "content": "again\n\nmore"}]
    assert counts == {send.EMPTY_CALLS: 1, send.EMPTY_ASSISTANT: 1, send.MERGED_USER: 1}


def test_openai_empty_text_parts_and_tool_images():
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}
    doc = [{"role": "user", "content": [{"type": "text", "text": " \n"}, image, {"type": "text", "text": "look"}]},
           {"role": "assistant", "content": None, "tool_calls": [call("a", "f")]},
           {"role": "tool", "tool_call_id": "a", "content": [image, {"type": "text", "text": ""}]}]
    out, counts = oa(doc)
    assert out[0]["content"] == [image, {"type": "text", "text": "look"}]
    assert out[2]["content"] == [{"type": "text", "text": send.TOOL_IMAGE_PLACEHOLDER}]
    assert counts == {send.EMPTY_TEXT: 2, send.TOOL_IMAGES: 1}


def test_openai_record_keys_leave_the_top():
    doc = {"id": "rec-1", "source": "x", "model": "m", "tools": [], "messages": [{"role": "user", "content": "q"}]}
    out, counts = oa(doc)
    assert out == {"model": "m", "tools": [], "messages": doc["messages"]}
    assert out["messages"] is doc["messages"] and counts == {send.RECORD_KEYS: 2}


# --- Anthropic -------------------------------------------------------------------------------

THINK = {"type": "thinking", "thinking": "plan", "signature": "SIG=="}


def test_anthropic_clean_body_is_the_same_object():
    body = {"model": "claude", "max_tokens": 9, "system": "s", "messages": [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [THINK, {"type": "text", "text": "x"},
                                          {"type": "tool_use", "id": "a", "name": "f", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "r"}]}]}
    out, counts = an(body)
    assert out is body and counts == {}


def test_anthropic_thinking_first_signed_kept_unsigned_dropped():
    body = {"messages": [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [{"type": "text", "text": "x"}, THINK,
                                          {"type": "thinking", "thinking": "no signature"},
                                          {"type": "redacted_thinking", "data": "R"}]}]}
    out, counts = an(body)
    assert out["messages"][1]["content"] == [THINK, {"type": "redacted_thinking", "data": "R"},
                                             {"type": "text", "text": "x"}]
    assert out["messages"][1]["content"][0] is THINK  # verbatim
    assert counts == {send.UNSIGNED: 1, send.THINKING_MOVED: 1}


def test_anthropic_thinking_alone_never_ends_a_turn():
    body = {"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": [THINK]},
                         {"role": "user", "content": "again"}]}
    out, counts = an(body)
    assert [m["content"] for m in out["messages"]] == ["q", "again"]
    assert counts == {send.THINKING_ONLY: 1, send.EMPTY_MESSAGE: 1}


def test_anthropic_empty_text_and_empty_messages():
    body = {"system": "  ", "messages": [
        {"role": "user", "content": [{"type": "text", "text": ""}, {"type": "text", "text": "q"}]},
        {"role": "assistant", "content": "\n\n"},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a",
                                      "content": [{"type": "text", "text": " "}]}]},
        {"role": "assistant", "content": " "}]}
    out, counts = an(body)
    assert "system" not in out
    assert out["messages"] == [{"role": "user", "content": [{"type": "text", "text": "q"}]},
                               {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a"}]},
                               {"role": "assistant", "content": ""}]  # only a final assistant may be empty
    assert counts == {send.EMPTY_TEXT: 2, send.EMPTY_MESSAGE: 1}


def test_anthropic_reused_tool_ids_are_renumbered_in_call_and_result():
    def turn(tid, result):
        return [{"role": "assistant", "content": [{"type": "tool_use", "id": tid, "name": "f", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": result}]}]
    body = {"messages": [{"role": "user", "content": "q"}, *turn("t1", "a"), *turn("t1", "b"), *turn("t1", "c")]}
    out, counts = an(body)
    ids = [(m["content"][0].get("id") or m["content"][0].get("tool_use_id")) for m in out["messages"][1:]]
    assert ids == ["t1", "t1", "t1_2", "t1_2", "t1_3", "t1_3"]
    assert counts == {send.RENUMBERED: 2}
    assert anthropic_request(out) is out


def test_anthropic_at_most_four_cache_breakpoints_and_none_on_thinking():
    cc = {"type": "ephemeral"}
    body = {"system": [{"type": "text", "text": "s", "cache_control": cc}],
            "tools": [{"name": "f", "input_schema": {}, "cache_control": cc}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": str(i), "cache_control": cc}]}
                         for i in range(4)]}
    body["messages"].append({"role": "assistant", "content": [{**THINK, "cache_control": cc},
                                                              {"type": "text", "text": "x"}]})
    out, counts = an(body)
    marks = json.dumps(out).count("cache_control")
    assert marks == 4 and counts == {send.CACHE: 3}
    assert out["messages"][4]["content"][0] == THINK


def test_anthropic_message_and_record_keys():
    body = {"id": "x", "messages": [{"role": "user", "content": "q", "timestamp": 1}]}
    out, counts = an(body)
    assert out == {"messages": [{"role": "user", "content": "q"}]}
    assert counts == {send.RECORD_KEYS: 1, send.INTERNAL_KEYS: 1}


# --- idempotence (hypothesis) ----------------------------------------------------------------

_text = st.sampled_from(["", " ", "\n\n", "hi", "x y"])
_ids = st.sampled_from(["a", "b", "c"])
_oa_part = st.one_of(st.fixed_dictionaries({"type": st.just("text"), "text": _text}),
                     st.just({"type": "image_url", "image_url": {"url": "u"}}))
_oa_content = st.one_of(st.none(), _text, st.lists(_oa_part, max_size=3))
_oa_msg = st.one_of(
    st.fixed_dictionaries({"role": st.sampled_from(["user", "system"]), "content": _oa_content},
                          optional={"_flag": st.booleans(), "timestamp": st.integers()}),
    st.fixed_dictionaries({"role": st.just("assistant"), "content": _oa_content},
                          optional={"tool_calls": st.lists(st.builds(
                              lambda i, c: {**call(i, "f"), **({"call_id": c} if c else {})},
                              _ids, st.sampled_from([None, "a", "z"])), max_size=2),
                                    "reasoning": _text, "finish_reason": st.sampled_from(["stop", "incomplete"])}),
    st.fixed_dictionaries({"role": st.just("tool"), "tool_call_id": _ids, "content": _oa_content},
                          optional={"tool_name": st.just("f")}))
_an_block = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": _text},
                          optional={"cache_control": st.just({"type": "ephemeral"})}),
    st.fixed_dictionaries({"type": st.just("thinking"), "thinking": _text},
                          optional={"signature": st.sampled_from(["", "S"])}),
    st.builds(lambda i: {"type": "tool_use", "id": i, "name": "f", "input": {}}, _ids),
    st.builds(lambda i, c: {"type": "tool_result", "tool_use_id": i, "content": c}, _ids,
              st.one_of(_text, st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": _text}), max_size=2))))
_an_msg = st.fixed_dictionaries({"role": st.sampled_from(["user", "assistant"]),
                                 "content": st.one_of(_text, st.lists(_an_block, max_size=4))},
                                optional={"_x": st.just(1)})


@given(st.lists(_oa_msg, max_size=8), st.booleans())
def test_openai_request_is_idempotent(messages, as_body):
    doc = {"messages": messages, "id": 1} if as_body else messages
    once = openai_request(doc)
    assert openai_request(once) is once
    assert openai_request(copy.deepcopy(once)) == once


@given(st.lists(_an_msg, max_size=8), st.one_of(st.none(), _text))
def test_anthropic_request_is_idempotent(messages, system):
    body = {"messages": messages} if system is None else {"system": system, "messages": messages}
    once = anthropic_request(body)
    assert anthropic_request(once) is once
    for msg in once["messages"]:  # thinking first, never alone, never unsigned
        content = msg["content"]
        if isinstance(content, list) and msg["role"] == "assistant":
            kinds = [b["type"] for b in content]
            if "thinking" in kinds:
                assert kinds[0] == "thinking" and kinds[-1] != "thinking"
                assert all(b.get("signature") for b in content if b["type"] == "thinking")


@given(st.lists(_oa_msg, max_size=8))
def test_streaming_equals_whole_document(messages):
    counts_a, counts_b = {}, {}
    whole = openai_request(messages, counts_a)
    assert list(send.openai_messages(messages, counts_b)) == whole and counts_a == counts_b


# --- the commands ----------------------------------------------------------------------------

def _claude_log(tmp_path):
    """A Claude Code log whose reply carries a signed and an unsigned thinking block."""
    session = "s-1"

    def event(uuid, parent, kind, message, **extra):
        return {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": session,
                "timestamp": "2026-01-01T00:00:00Z", "message": message, **extra}
    events = [
        event("u1", None, "user", {"role": "user", "content": "list files"}),
        event("a1", "u1", "assistant", {"id": "m1", "role": "assistant", "model": "claude-x", "content": [
            {"type": "thinking", "thinking": "I should run ls", "signature": "EqQBCkYIB=="}]}),
        event("a2", "a1", "assistant", {"id": "m1", "role": "assistant", "model": "claude-x", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}]}),
        event("u2", "a2", "user", {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.txt"}]}),
        event("a3", "u2", "assistant", {"id": "m2", "role": "assistant", "model": "claude-x", "content": [
            {"type": "thinking", "thinking": "unsigned musing", "signature": ""},
            {"type": "text", "text": "One file: a.txt"}]}),
    ]
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def test_convert_claude_code_log_keeps_signatures_drops_unsigned(tmp_path):
    r = invoke(["convert", "--to", "anthropic", str(_claude_log(tmp_path))])
    assert r.status == 0, r.stderr
    messages = r.json["messages"]
    assert messages[1]["content"][0] == {"type": "thinking", "thinking": "I should run ls",
                                         "signature": "EqQBCkYIB=="}
    assert messages[1]["content"][1]["type"] == "tool_use"
    assert messages[3]["content"] == [{"type": "text", "text": "One file: a.txt"}]
    assert f"{send.UNSIGNED}: 1" in r.stderr


def test_convert_claude_code_log_to_openai_sends_no_reasoning(tmp_path):
    r = invoke(["convert", "--to", "openai", str(_claude_log(tmp_path))])
    assert r.status == 0, r.stderr
    assert not any(k in m for m in r.json["messages"] for k in ("reasoning", "reasoning_details"))
    assert send.REASONING in r.stderr


@pytest.mark.parametrize("command", [["sanitize"], ["prune"], ["cache-mark"], ["spill"], ["convert"]])
def test_every_command_writes_no_internal_keys(command):
    doc = {"id": "rec", "messages": [
        {"role": "system", "content": "s", "_x": 1},
        {"role": "user", "content": "q", "timestamp": 5},
        {"role": "assistant", "content": "ok", "tool_calls": []},
        {"role": "user", "content": "more"}]}
    r = invoke([*command], doc)
    assert r.status == 0, r.stderr
    out = r.json
    assert "id" not in out
    assert not any(k.startswith("_") or k == "timestamp" for m in out["messages"] for k in m)
    assert all("tool_calls" not in m for m in out["messages"])


@pytest.mark.parametrize("calls", [True, 5, "abc", {"id": "x"}])
def test_calls_that_are_no_list_never_crash_the_send_path(calls):  # found by make fuzz
    msgs = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a", "tool_calls": calls},
            {"role": "assistant", "content": "b"}]
    out = openai_request(msgs)
    if isinstance(calls, (str, dict)):  # joined as Hermes joins them (list() of each side)
        assert [m["content"] for m in out] == ["q", "a\nb"]
        assert out[1]["tool_calls"] == list(calls)
        return
    assert [m["content"] for m in out] == ["q", "a", "b"]  # not merged with a turn it cannot join
    assert out[1]["tool_calls"] == calls


_CALL = st.fixed_dictionaries({"id": st.sampled_from(["a", "b", ""]), "type": st.just("function"),
                               "function": st.just({"name": "f", "arguments": "{}"})},
                              optional={"call_id": st.sampled_from(["a", "z"]), "extra_content": st.just({})})
_PARTS = st.lists(st.one_of(st.just({"type": "text", "text": "hi"}), st.just({"type": "text", "text": " "}),
                            st.just({"type": "image_url", "image_url": {"url": "x"}}), st.just("s"), st.just("")),
                  max_size=3)
_MESSAGE = st.one_of(
    st.fixed_dictionaries({"role": st.sampled_from(["user", "system", "developer"]),
                           "content": st.one_of(st.just("hello"), st.just(""), _PARTS)},
                          optional={"_meta": st.just(1), "timestamp": st.just(2), "name": st.just("n")}),
    st.fixed_dictionaries({"role": st.just("assistant"),
                           "content": st.one_of(st.none(), st.just("ok"), st.just(""), _PARTS)},
                          optional={"tool_calls": st.one_of(st.lists(_CALL, max_size=3), st.none(), st.just("odd")),
                                    "reasoning": st.just("r"), "reasoning_content": st.just("r"),
                                    "reasoning_details": st.just([{"type": "thinking"}]),
                                    "finish_reason": st.just("verification_required")}),
    st.fixed_dictionaries({"role": st.just("tool"), "tool_call_id": st.sampled_from(["a", "b", "", "z", None]),
                           "content": st.one_of(st.just("out"), _PARTS)}),
    st.just("not a message"),
)


@given(st.lists(_MESSAGE, max_size=8))
def test_the_clean_check_answers_true_only_when_the_send_path_changes_nothing(messages):
    """openai_unchanged is the shortcut of the send path: True means the full path gives the
    very same messages back and counts nothing."""
    counts: dict = {}
    full = list(send.openai_messages(messages, counts))
    if send.openai_unchanged(messages):
        assert len(full) == len(messages) and all(a is b for a, b in zip(full, messages))
        assert counts == {}
    assert openai_request({"messages": messages}, {}) is not None


def test_a_clean_transcript_is_given_back_as_the_same_object():
    doc = {"model": "m", "messages": [
        {"role": "system", "content": "s"}, {"role": "user", "content": "u"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "a", "content": "r"}, {"role": "assistant", "content": "done"}]}
    assert send.openai_unchanged(doc["messages"])
    assert openai_request(doc) is doc
