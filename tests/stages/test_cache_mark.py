"""cache-mark: the worked examples of spec 40 §A.7 / §A.9 through the CLI, D8 (old markers removed,
at most 4, TTL validated), idempotence, both shapes, --strategy, minimum length, --check."""

import copy
import json

import pytest
from conftest import invoke

from hermesctx.stages.cache_mark import cache_mark, count_markers, mark_anthropic, minimum_cacheable

E = {"type": "ephemeral"}
H = {"type": "ephemeral", "ttl": "1h"}


def txt(t, mark=E):
    return [{"type": "text", "text": t, "cache_control": mark}]


CALL = [{"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]
CM1 = [{"role": "system", "content": "S"}, {"role": "user", "content": "u1"}, {"role": "assistant", "content": "a1"},
       {"role": "user", "content": "u2"}, {"role": "assistant", "content": "a2"}, {"role": "user", "content": "u3"}]
CM6 = [{"role": "system", "content": "S"}, {"role": "user", "content": "u1"},
       {"role": "assistant", "content": None, "tool_calls": CALL},
       {"role": "tool", "tool_call_id": "call_1", "content": "result"},
       {"role": "assistant", "content": "", "tool_calls": CALL},
       {"role": "tool", "tool_call_id": "call_1", "content": ""}]
CM8 = [{"role": "system", "content": [{"type": "text", "text": "S1"}, {"type": "text", "text": "S2"}]},
       {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "data:x"}}]},
       {"role": "user", "content": ["plain string part"]},
       {"role": "user", "content": []},
       {"role": "user", "content": {"_multimodal": True, "content": []}}]
CM10 = [{"role": "system", "content": ""}, {"role": "user", "content": ""}, {"role": "user", "content": None},
        {"role": "assistant", "content": ""}, {"role": "user", "content": "x"}]

EXAMPLES = {
    "CM1": (CM1, [], [
        {"role": "system", "content": txt("S")}, CM1[1], CM1[2],
        {"role": "user", "content": txt("u2")}, {"role": "assistant", "content": txt("a2")},
        {"role": "user", "content": txt("u3")}]),
    "CM2": (CM1[:2], ["--ttl", "1h"], [{"role": "system", "content": txt("S", H)}, {"role": "user", "content": txt("u1", H)}]),
    "CM4": (CM1[1:], [], [CM1[1]] + [{"role": m["role"], "content": txt(m["content"])} for m in CM1[2:]]),
    "CM5": ([{"role": "user", "content": "u0"}, {"role": "system", "content": "S"}, {"role": "user", "content": "u1"}], [],
            [{"role": "user", "content": txt("u0")}, {"role": "system", "content": "S"}, {"role": "user", "content": txt("u1")}]),
    "CM6": (CM6, [], [{"role": "system", "content": txt("S")}, {"role": "user", "content": txt("u1")}, CM6[2],
                      {**CM6[3], "content": txt("result")}, CM6[4], CM6[5]]),
    "CM7": (CM6, ["--native-anthropic"], [{"role": "system", "content": txt("S")}, CM6[1], CM6[2],
                                          {**CM6[3], "cache_control": E}, {**CM6[4], "cache_control": E},
                                          {**CM6[5], "cache_control": E}]),
    "CM8": (CM8, [], [
        {"role": "system", "content": [{"type": "text", "text": "S1"}, {"type": "text", "text": "S2", "cache_control": E}]},
        {"role": "user", "content": [{"type": "text", "text": "look"},
                                     {"type": "image_url", "image_url": {"url": "data:x"}, "cache_control": E}]},
        CM8[2], CM8[3], CM8[4]]),
    "CM9": (CM8, ["--native-anthropic"], [
        {"role": "system", "content": [{"type": "text", "text": "S1"}, {"type": "text", "text": "S2", "cache_control": E}]},
        CM8[1], CM8[2], CM8[3], CM8[4]]),
    "CM10": (CM10, [], [{**CM10[0], "cache_control": E}, CM10[1], CM10[2], CM10[3], {"role": "user", "content": txt("x")}]),
    "CM11": (CM10, ["--native-anthropic"], [{**CM10[0], "cache_control": E}, CM10[1], {**CM10[2], "cache_control": E},
                                            {**CM10[3], "cache_control": E}, {"role": "user", "content": txt("x")}]),
    "CM16": ([], ["--lenient"], []),  # an empty list is no request (D12): Hermes's example under --lenient
}


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_spec_examples_through_the_cli(name):
    messages, flags, expected = EXAMPLES[name]
    frozen = copy.deepcopy(messages)
    result = invoke(["cache-mark", *flags], messages)
    assert result.status == 0, result.stderr
    assert result.json == expected
    assert messages == frozen
    again = invoke(["cache-mark", *flags], result.json)  # idempotent
    assert again.json == expected


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_spec_examples_in_a_request_body(name):
    messages, flags, expected = EXAMPLES[name]
    body = {"model": "some-router-model", "messages": messages, "temperature": 0}
    result = invoke(["cache-mark", *flags], body)
    assert result.json == {**body, "messages": expected}


def test_cm3_any_other_ttl_is_a_usage_error_not_5m():
    result = invoke(["cache-mark", "--ttl", "30m"], CM1)
    assert result.status == 2
    assert "5m or 1h" in result.stderr and result.stdout == b""
    assert invoke(["cache-mark", "--ttl", "1H"], CM1).status == 2


def test_ttl_from_config(tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text("prompt_caching:\n  cache_ttl: 1h\n")
    result = invoke(["cache-mark", "--config", str(config)], CM1[:2])
    assert result.json[1]["content"] == txt("u1", H)
    assert invoke(["cache-mark", "--config", str(config), "--ttl", "5m"], CM1[:2]).json[1]["content"] == txt("u1")
    config.write_text("prompt_caching:\n  cache_ttl: 2h\n")
    bad = invoke(["cache-mark", "--config", str(config)], CM1[:2])
    assert bad.status == 2 and "cache_ttl" in bad.stderr


def test_d8_stale_markers_removed_cm12():
    first = invoke(["cache-mark"], CM1[:4]).json
    grown = first + [{"role": "assistant", "content": "a2"}, {"role": "user", "content": "u3"}]
    out = invoke(["cache-mark"], grown).json
    assert count_markers(out) == 4  # Hermes leaves 6
    assert out == EXAMPLES["CM1"][2][:1] + [{"role": "user", "content": [{"type": "text", "text": "u1"}]},
                                           {"role": "assistant", "content": [{"type": "text", "text": "a1"}]}] \
        + EXAMPLES["CM1"][2][3:]


def test_d8_ttl_change_rewrites_cm13():
    first = invoke(["cache-mark"], CM1).json
    out = invoke(["cache-mark", "--ttl", "1h"], first).json
    assert count_markers(out) == 4
    assert out[0]["content"][0]["cache_control"] == H and out[5]["content"][0]["cache_control"] == H


def test_d8_non_last_part_and_top_level_markers_removed_cm14_cm15():
    cm14 = [{"role": "user", "content": [{"type": "text", "text": "a", "cache_control": H}, {"type": "text", "text": "b"}]}]
    assert invoke(["cache-mark"], cm14).json == [
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b", "cache_control": E}]}]
    cm15 = [{"role": "user", "content": "hi", "cache_control": E}]
    assert invoke(["cache-mark"], cm15).json == [{"role": "user", "content": txt("hi")}]


def test_never_more_than_four_even_from_a_crowded_input():
    crowded = [{"role": m["role"], "content": txt(m["content"])} for m in CM1 * 3]
    out, report = cache_mark(crowded)
    assert count_markers(out) == 4 and report["removed"] == 18 and report["markers"] == 4


def test_strategy_none_removes_every_marker_in_both_shapes():
    marked = invoke(["cache-mark"], CM6).json
    assert invoke(["cache-mark", "--strategy", "none"], marked).json == \
        [{**m, "content": [{"type": "text", "text": m["content"]}]} if m.get("content") in ("S", "u1", "result") else m
         for m in CM6]
    body = invoke(["cache-mark"], BODY).json
    cleared = invoke(["cache-mark", "--strategy", "none"], body).json
    assert count_markers(cleared["messages"], cleared["system"]) == 0


BODY = {
    "model": "claude-sonnet-4-5", "max_tokens": 1024,
    "system": "You are S.",
    "messages": [
        {"role": "user", "content": "u1"},
        {"role": "assistant", "content": [{"type": "text", "text": "let me look"},
                                          {"type": "tool_use", "id": "call_1", "name": "read_file", "input": {"path": "a"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "result"}]},
    ],
}


def test_ad1b_anthropic_body():
    out = invoke(["cache-mark"], BODY).json
    assert out["system"] == txt("You are S.")
    assert out["messages"] == [
        {"role": "user", "content": txt("u1")},
        {"role": "assistant", "content": [{"type": "text", "text": "let me look", "cache_control": E},
                                          {"type": "tool_use", "id": "call_1", "name": "read_file", "input": {"path": "a"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "result", "cache_control": E}]}]
    assert {k: out[k] for k in ("model", "max_tokens")} == {"model": "claude-sonnet-4-5", "max_tokens": 1024}


def test_ad2_anthropic_body_without_system():
    body = {"messages": [
        {"role": "user", "content": "u1"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "call_1", "name": "f", "input": {}},
                                          {"type": "tool_use", "id": "call_2", "name": "g", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "r1"},
                                     {"type": "tool_result", "tool_use_id": "call_2", "content": "r2"}]}]}
    out, report = mark_anthropic(body)
    assert out["messages"] == [
        {"role": "user", "content": txt("u1")},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "call_1", "name": "f", "input": {}},
                                          {"type": "tool_use", "id": "call_2", "name": "g", "input": {}, "cache_control": E}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "r1", "cache_control": E},
                                     {"type": "tool_result", "tool_use_id": "call_2", "content": "r2", "cache_control": E}]}]
    assert "system" not in out


def test_anthropic_body_system_blocks_and_thinking_never_marked():
    body = {"system": [{"type": "text", "text": "a"}, {"type": "text", "text": "b", "cache_control": H}],
            "messages": [{"role": "user", "content": "q"},
                         {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm", "signature": "s"},
                                                           {"type": "text", "text": "ans"}]}]}
    out = invoke(["cache-mark"], body).json
    assert out["system"] == [{"type": "text", "text": "a"}, {"type": "text", "text": "b", "cache_control": E}]
    assert "cache_control" not in out["messages"][1]["content"][0]
    assert out["messages"][1]["content"][1]["cache_control"] == E
    assert invoke(["cache-mark"], out).json == out


def test_minimum_cacheable_length_is_reported_not_fatal():
    assert minimum_cacheable("claude-haiku-4-5") == 4096
    assert minimum_cacheable("claude-3-haiku-20240307") == 2048
    assert minimum_cacheable("claude-sonnet-4-5") == 1024
    assert minimum_cacheable("gpt-4o") is None
    result = invoke(["cache-mark"], BODY)  # the body names its model
    assert result.status == 0
    assert "under the 1,024-token minimum of claude-sonnet-4-5" in result.stderr
    assert "cache_control" in result.stdout.decode()
    quiet = invoke(["--quiet", "cache-mark"], BODY)
    assert quiet.stderr == ""
    big = {**BODY, "system": "x" * 8000}
    assert "minimum" not in invoke(["cache-mark"], big).stderr


def test_report_file(tmp_path):
    report = tmp_path / "r.json"
    result = invoke(["cache-mark", "--report", str(report), "--model", "claude-sonnet-4-5"], CM1)
    assert result.status == 0
    data = json.loads(report.read_text())
    text = json.dumps(data)
    assert '"breakpoints"' in text and "envelope" in text


def test_check_reports_breakpoints_and_the_limit(tmp_path):
    marked = invoke(["cache-mark"], CM1).json
    result = invoke(["cache-mark", "--check"], marked)
    assert result.status == 0
    assert [b["message"] for b in result.json["breakpoints"]] == [0, 3, 4, 5]
    assert result.json["over_limit"] is False
    crowded = [{"role": m["role"], "content": txt(m["content"])} for m in CM1]
    over = invoke(["cache-mark", "--check"], crowded)
    assert over.status == 1 and over.json["count"] == 6 and over.json["over_limit"] is True
    assert invoke(["cache-mark", "--check"], crowded).stdout  # --check changes nothing, outputs the report


def test_check_against_previous_gives_the_cache_hit_prefix(tmp_path):
    turn1 = invoke(["cache-mark"], CM1[:4]).json
    prev = tmp_path / "prev.json"
    prev.write_text(json.dumps(turn1))
    turn2 = invoke(["cache-mark"], CM1[:4] + [{"role": "assistant", "content": "a2"}, {"role": "user", "content": "u3"}]).json
    result = invoke(["cache-mark", "--check", "--against", str(prev)], turn2)
    assert result.status == 0
    report = result.json
    assert report["stable_messages"] == 4  # S, u1, a1, u2 are unchanged (markers ignored)
    assert [b["prefix_stable"] for b in report["breakpoints"]] == [True, True, False, False]
    assert report["cache_hit_tokens"] == report["breakpoints"][1]["prefix_tokens"] > 0
    assert report["request_tokens"] >= report["cache_hit_tokens"]
    assert "first_difference" not in report  # the previous request is a prefix of this one
    # a changed system prompt invalidates everything: exit 1, no hit
    edited = [dict(turn2[0], content=txt("S2"))] + turn2[1:]
    miss = invoke(["cache-mark", "--check", "--against", str(prev)], edited)
    assert miss.status == 1
    assert miss.json["cache_hit_tokens"] == 0 and miss.json["first_difference"] == "messages[0]"


def test_against_needs_check(tmp_path):
    prev = tmp_path / "p.json"
    prev.write_text("[]")
    assert invoke(["cache-mark", "--against", str(prev)], CM1).status == 2


def test_unknown_strategy_and_bad_input():
    assert invoke(["cache-mark", "--strategy", "all"], CM1).status == 2
    assert invoke(["cache-mark"], {"no": "messages"}).status == 3
    assert invoke(["cache-mark"], "not json").status == 3


def test_jsonl_batch(snapshot):
    batch = "".join(json.dumps(x) + "\n" for x in (CM1, CM6, BODY))
    result = invoke(["cache-mark", "--jsonl"], batch)
    assert result.status == 0
    lines = result.lines
    assert [count_markers(x if isinstance(x, list) else x["messages"],
                          x.get("system") if isinstance(x, dict) else None) for x in lines] == [4, 3, 4]
    assert lines == snapshot


def _random_docs():
    import random

    from transcripts import TranscriptGen

    rng = random.Random(7)
    for seed in range(60):
        msgs = TranscriptGen(seed).transcript(rng.randint(1, 8))
        yield msgs
        yield {"model": "x", "messages": msgs}
    yield BODY
    yield {**BODY, "system": [{"type": "text", "text": "a", "cache_control": E}]}


@pytest.mark.parametrize("native", [False, True])
@pytest.mark.parametrize("ttl", ["5m", "1h"])
def test_random_transcripts_idempotent_at_most_four_input_untouched(native, ttl):
    for doc in _random_docs():
        frozen = copy.deepcopy(doc)
        once, report = cache_mark(doc, ttl=ttl, native=native)
        assert doc == frozen
        twice, _ = cache_mark(once, ttl=ttl, native=native)
        assert twice == once
        msgs = once if isinstance(once, list) else once["messages"]
        system = once.get("system") if isinstance(once, dict) else None
        assert count_markers(msgs, system) == report["markers"] <= 4
        cleared, _ = cache_mark(once, strategy="none")
        assert count_markers(cleared if isinstance(cleared, list) else cleared["messages"],
                             cleared.get("system") if isinstance(cleared, dict) else None) == 0


def test_copy_on_write_unmarked_messages_are_shared():
    msgs = [{"role": "user", "content": f"m{i}"} for i in range(50)]
    out, _ = cache_mark(msgs)
    assert all(a is b for a, b in zip(out[:46], msgs[:46]))  # untouched messages are not copied
    assert out[47] is not msgs[47]


def test_tool_definition_markers_count_and_are_removed():
    body = {**BODY, "tools": [{"name": "read_file", "input_schema": {"type": "object"}, "cache_control": E}]}
    out, report = cache_mark(body)
    assert "cache_control" not in out["tools"][0] and report["removed"] == 1 and report["markers"] == 4
    assert body["tools"][0]["cache_control"] == E  # input untouched
    points = invoke(["cache-mark", "--check"], body).json["breakpoints"]
    assert points == [{"message": "tools", "where": "tools[0]"}]


def test_check_against_an_unmarked_previous_body(tmp_path):
    """Markers and string-vs-block forms do not change the cached prefix."""
    prev = tmp_path / "prev.json"
    prev.write_text(json.dumps(BODY))
    grown = {**BODY, "messages": BODY["messages"] + [{"role": "assistant", "content": "It says hi."},
                                                     {"role": "user", "content": "ok"}]}
    marked = invoke(["cache-mark"], grown).json
    report = invoke(["cache-mark", "--check", "--against", str(prev)], marked)
    assert report.status == 0
    assert report.json["system_and_tools_stable"] is True and report.json["stable_messages"] == 3
    stable = {b["where"]: b["prefix_stable"] for b in report.json["breakpoints"]}
    assert stable == {"system[0]": True, "messages[2].content[0]": True, "messages[3].content[0]": False,
                      "messages[4].content[0]": False}


# --- bugs found by the differential fuzzing (tests/oracle/test_oracle_cache_usage.py) ---------

def test_wrapped_openai_messages_with_tool_use_parts_keep_hermes_placement():
    """An object with a messages array is an Anthropic body only when nothing in it is
    OpenAI-only: a ``function`` role or an ``image_url`` part keeps Hermes's placement (the
    last element of any type), not the adapter-style Anthropic one."""
    tool_use = {"type": "tool_use", "id": "t1", "name": "f", "input": {}}
    doc = {"messages": [{"role": "user", "content": [{"type": "text", "text": "look"}, tool_use]},
                        {"role": "function", "content": "r"}]}
    out = invoke(["cache-mark"], doc)
    assert out.status == 0
    assert out.json == {"messages": [
        {"role": "user", "content": [{"type": "text", "text": "look"}, {**tool_use, "cache_control": E}]},
        {"role": "function", "content": txt("r")}]}
    assert "envelope" in out.stderr
    result = {"type": "tool_result", "tool_use_id": "t1", "content": "r"}
    image = {"type": "image_url", "image_url": {"url": "data:x"}}
    doc = {"messages": [{"role": "user", "content": [result, image]}]}
    assert cache_mark(doc, native=True)[0] == {"messages": [{"role": "user", "content": [result, {**image, "cache_control": E}]}]}
    # a real Anthropic body without a system prompt is still one
    body = {"messages": [{"role": "user", "content": [result]}, {"role": "assistant", "content": "ok"}]}
    assert cache_mark(body)[1]["layout"] == "anthropic"


def test_d8_removes_markers_inside_tool_result_contents():
    """The API counts a marker on a block of a tool_result's content toward the 4: D8 removes it."""
    inner = [{"type": "text", "text": "print(1)", "cache_control": H}]
    body = {"system": "S", "messages": [
        {"role": "user", "content": "u1"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": inner}]},
        {"role": "assistant", "content": "a"}, {"role": "user", "content": "u2"}]}
    check = invoke(["cache-mark", "--check"], body).json
    assert check["breakpoints"] == [{"message": 2, "where": "messages[2].content[0].content[0]"}]
    out, report = cache_mark(body)
    assert report["removed"] == 1 and report["markers"] == 4
    assert out["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "print(1)"}],
         "cache_control": E}]
    assert body["messages"][2]["content"][0]["content"] == inner  # input untouched
    # the same in OpenAI-shaped messages
    msgs = [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": inner}, {"type": "text", "text": "x"}]}]
    assert cache_mark(msgs)[0] == [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "print(1)"}]},
        {"type": "text", "text": "x", "cache_control": E}]}]
