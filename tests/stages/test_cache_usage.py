"""cache-mark, normalize-usage and pricing: spec worked examples, D8/D9 additions, the CLI."""

import copy
import json

import pytest
from conftest import invoke, load_example

from hermesctx.stages.cache_mark import cache_mark, check, count_markers, mark_messages
from hermesctx.stages.normalize_usage import normalize_usage

E = {"type": "ephemeral"}
H = {"type": "ephemeral", "ttl": "1h"}


def text(t, mark=E):
    return [{"type": "text", "text": t, "cache_control": mark}]


CM1 = [{"role": "system", "content": "S"}, {"role": "user", "content": "u1"}, {"role": "assistant", "content": "a1"},
       {"role": "user", "content": "u2"}, {"role": "assistant", "content": "a2"}, {"role": "user", "content": "u3"}]
CALL = [{"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]
CM6 = [{"role": "system", "content": "S"}, {"role": "user", "content": "u1"},
       {"role": "assistant", "content": None, "tool_calls": CALL},
       {"role": "tool", "tool_call_id": "call_1", "content": "result"},
       {"role": "assistant", "content": "", "tool_calls": CALL},
       {"role": "tool", "tool_call_id": "call_1", "content": ""}]


def test_system_and_last_three():
    frozen = copy.deepcopy(CM1)
    out, placed = mark_messages(CM1)
    assert CM1 == frozen
    assert placed == [0, 3, 4, 5]
    assert out[0]["content"] == text("S") and out[5]["content"] == text("u3")
    assert out[1] == CM1[1] and out[2] == CM1[2]
    assert mark_messages(CM1, ttl="1h")[0][0]["content"] == text("S", H)


def test_without_system_the_last_four():
    out, placed = mark_messages(CM1[1:])
    assert placed == [1, 2, 3, 4]


def test_envelope_skips_empty_carriers_native_marks_top_level():
    out, placed = mark_messages(CM6)
    assert placed == [0, 1, 3]
    assert out[3]["content"] == text("result") and out[5] == CM6[5]
    out, placed = mark_messages(CM6, native=True)
    assert placed == [0, 3, 4, 5]
    assert out[3] == {**CM6[3], "cache_control": E} and out[4]["cache_control"] == E
    assert out[1] == CM6[1]


def test_existing_markers_are_replaced_never_added():
    first, _ = mark_messages(CM1[:4])
    grown = first + [{"role": "assistant", "content": "a2"}, {"role": "user", "content": "u3"}]
    out, _ = mark_messages(grown)
    assert count_markers(out) == 4  # Hermes would leave 6 (D8)
    assert out[1] == {"role": "user", "content": [{"type": "text", "text": "u1"}]}
    assert mark_messages(out)[0] == out


def test_bad_ttl_is_a_usage_error():
    r = invoke(["cache-mark", "--ttl", "30m"], json.dumps(CM1).encode())
    assert r.status == 2 and r.stdout == b"" and "5m or 1h" in r.stderr


def test_strategy_none_removes_everything():
    marked, _ = mark_messages(CM1)
    out, placed = mark_messages(marked, strategy="none")
    assert placed == [] and count_markers(out) == 0


def test_anthropic_body(snapshot):
    doc = load_example("anthropic-session.json")
    out, report = cache_mark(doc, ttl="1h", model="claude-sonnet-4-5")
    assert out["system"][-1]["cache_control"] == H
    assert report["layout"] == "anthropic" and len(report["breakpoints"]) == 4
    assert count_markers(out["messages"], out["system"]) == 4
    assert cache_mark(out, ttl="1h")[0] == out
    assert out == snapshot


def test_anthropic_units_tool_results_count_each():
    doc = {"system": "S", "messages": [
        {"role": "user", "content": "u1"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "f", "input": {}},
                                          {"type": "tool_use", "id": "c2", "name": "g", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "r1"},
                                     {"type": "tool_result", "tool_use_id": "c2", "content": "r2"}]}]}
    out, report = cache_mark(doc)
    msgs = out["messages"]
    assert msgs[1]["content"][1]["cache_control"] == E and "cache_control" not in msgs[1]["content"][0]
    assert all(b["cache_control"] == E for b in msgs[2]["content"])
    assert msgs[0] == {"role": "user", "content": "u1"}
    assert report["breakpoints"] == ["system", 1, 2, 2]


def test_minimum_cacheable_is_reported_not_fatal():
    out, report = cache_mark(CM1, model="claude-haiku-4-5")
    assert "4,096-token minimum" in report["warning"]
    r = invoke(["cache-mark", "--model", "claude-haiku-4-5"], json.dumps(CM1).encode())
    assert r.status == 0 and "minimum" not in r.stdout.decode()


def test_check_against_previous(tmp_path):
    first, _ = mark_messages(CM1)
    prev = tmp_path / "prev.json"
    prev.write_text(json.dumps(first))
    grown = CM1 + [{"role": "assistant", "content": "a3"}, {"role": "user", "content": "u4"}]
    marked = invoke(["cache-mark"], json.dumps(grown).encode())
    r = invoke(["cache-mark", "--check", "--against", str(prev)], marked.stdout)
    assert r.status == 0
    rep = r.json
    assert rep["count"] == 4 and rep["stable_messages"] == 6
    assert [p["prefix_stable"] for p in rep["breakpoints"]] == [True, True, False, False]
    changed = copy.deepcopy(first)
    changed[0]["content"][0]["text"] = "S2"
    prev.write_text(json.dumps(changed))
    r = invoke(["cache-mark", "--check", "--against", str(prev)], marked.stdout)
    assert r.status == 1 and r.json["cache_hit_tokens"] == 0 and r.json["first_difference"] == "messages[0]"


def test_check_flags_too_many_breakpoints():
    doc = [{"role": "user", "content": text(f"u{i}")} for i in range(6)]
    rep = check(doc)
    assert rep["count"] == 6 and rep["over_limit"]
    assert invoke(["cache-mark", "--check"], json.dumps(doc).encode()).status == 1


# --- normalize-usage -------------------------------------------------------------------------

@pytest.mark.parametrize("usage,provider,expected", [
    ({"input_tokens": 25, "output_tokens": 410, "cache_read_input_tokens": 48000, "cache_creation_input_tokens": 3100},
     None, (25, 410, 48000, 3100, 0, 51125, 51535)),
    ({"prompt_tokens": 5000, "completion_tokens": 900, "prompt_tokens_details": {"cached_tokens": 4096},
      "completion_tokens_details": {"reasoning_tokens": 640}}, None, (904, 900, 4096, 0, 640, 5000, 5900)),
    ({"input_tokens": 8000, "output_tokens": 1500, "input_tokens_details": {"cached_tokens": 7000},
      "output_tokens_details": {"reasoning_tokens": 1024}}, None, (1000, 1500, 7000, 0, 1024, 8000, 9500)),
    ({"prompt_tokens": 3000, "completion_tokens": 100, "prompt_cache_hit_tokens": 2500}, None, (500, 100, 2500, 0, 0, 3000, 3100)),
    ({"prompt_tokens": "120", "completion_tokens": 7.9, "prompt_tokens_details": {"cached_tokens": "20.5"}},
     None, (120, 7, 0, 0, 0, 120, 127)),
    ({"input_tokens": 25, "output_tokens": 410, "cache_read_input_tokens": 48000}, "openai", (0, 0, 48000, 0, 0, 48000, 48000)),
])
def test_usage_buckets(usage, provider, expected):
    keys = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens",
            "prompt_tokens", "total_tokens")
    out = normalize_usage(usage, provider=provider, lenient=True)  # Hermes's reading, strings too
    assert tuple(out[k] for k in keys) == expected


def test_usage_from_whole_response_with_cost():
    response = {"id": "msg_1", "model": "claude-sonnet-4-5", "usage": {
        "input_tokens": 25, "output_tokens": 410, "cache_read_input_tokens": 48000,
        "cache_creation_input_tokens": 3100, "cache_creation": {"ephemeral_5m_input_tokens": 1000,
                                                                "ephemeral_1h_input_tokens": 2100}}}
    r = invoke(["normalize-usage", "--billing-provider", "anthropic"], json.dumps(response).encode())
    assert r.status == 0
    out = r.json
    assert out["cache_write_5m_tokens"] == 1000 and out["cache_write_1h_tokens"] == 2100
    assert out["cost"]["amount_usd"] == "0.032250" and out["cost"]["label"] == "~$0.03"
    unknown = invoke(["normalize-usage", "--model", "my-model", "--billing-provider", "together"],
                     json.dumps(response).encode()).json
    assert unknown["cost"]["amount_usd"] is None and unknown["cost"]["label"] == "n/a"


def test_usage_jsonl_sum_and_pricing_override(tmp_path):
    calls = [{"prompt_tokens": 1000, "completion_tokens": 10}, {"prompt_tokens": 2000, "completion_tokens": 20,
                                                                "prompt_tokens_details": {"cached_tokens": 500}}]
    raw = ("\n".join(json.dumps(c) for c in calls) + "\n").encode()
    r = invoke(["normalize-usage"], raw)
    assert [x["input_tokens"] for x in r.lines] == [1000, 1500]
    prices = tmp_path / "p.json"
    prices.write_text(json.dumps({"prices": [{"provider": "openai", "model": "m", "input": "1", "output": "2",
                                              "cache_read": "0.5", "cache_write": None}]}))
    r = invoke(["normalize-usage", "--sum", "--model", "m", "--billing-provider", "openai", "--pricing", str(prices)], raw)
    total = r.json
    assert total["request_count"] == 2 and total["prompt_tokens"] == 3000 and total["cache_read_tokens"] == 500
    assert total["cost"]["amount_usd"] == "0.00281"


def test_usage_errors_and_warnings():
    r = invoke(["normalize-usage"], b'{"tokens": 5}')
    assert r.status == 3 and "unknown usage shape" in r.stderr and "tokens" in r.stderr
    r = invoke(["normalize-usage"], b'{"input_tokens": -5, "output_tokens": 1}')
    assert r.status == 0 and "negative" in r.stderr and r.json["input_tokens"] == -5
