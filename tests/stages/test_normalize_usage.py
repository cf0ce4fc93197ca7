"""normalize-usage: Hermes's numbers per branch (spec 40 §B.6), shape detection, real response
bodies (tests/fixtures/usage, written from each provider's API reference), --sum, D9 additions."""

import copy
import json

import pytest
from conftest import FIXTURES, invoke

from hermesctx.errors import InputError
from hermesctx.stages.normalize_usage import add_usage, detect_provider, model_of, normalize_usage

USAGE = FIXTURES / "usage"
KEYS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens",
        "prompt_tokens", "total_tokens")
U2 = {"input_tokens": 25, "output_tokens": 410, "cache_read_input_tokens": 48000,
      "cache_creation_input_tokens": 3100,
      "cache_creation": {"ephemeral_5m_input_tokens": 1000, "ephemeral_1h_input_tokens": 2100}}
U3 = {k: v for k, v in U2.items() if k != "cache_creation"}
U7 = {"input_tokens": 8000, "output_tokens": 1500, "total_tokens": 9500, "input_tokens_details": {"cached_tokens": 7000},
      "output_tokens_details": {"reasoning_tokens": 1024}}

# (id, raw usage, the branch Hermes's selectors pick, in, out, c_read, c_write, reason, prompt, total)
SPEC = [
    ("U1", {"input_tokens": 1200, "output_tokens": 350}, "anthropic", 1200, 350, 0, 0, 0, 1200, 1550),
    ("U2", U2, "anthropic", 25, 410, 48000, 3100, 0, 51125, 51535),
    ("U3", U3, "anthropic", 25, 410, 48000, 3100, 0, 51125, 51535),
    ("U4", U3, "openai", 0, 0, 48000, 3100, 0, 51100, 51100),
    ("U5", {"prompt_tokens": 5000, "completion_tokens": 900, "total_tokens": 5900,
            "prompt_tokens_details": {"cached_tokens": 4096, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 640}}, "openai", 904, 900, 4096, 0, 640, 5000, 5900),
    ("U6", {"prompt_tokens": 10000, "completion_tokens": 200,
            "prompt_tokens_details": {"cached_tokens": 6000, "cache_write_tokens": 3000}},
     "openai", 1000, 200, 6000, 3000, 0, 10000, 10200),
    ("U7", U7, "codex", 1000, 1500, 7000, 0, 1024, 8000, 9500),
    ("U8", {"input_tokens": 8000, "output_tokens": 10,
            "input_tokens_details": {"cached_tokens": 2000, "cache_creation_tokens": 5000}},
     "codex", 1000, 10, 2000, 5000, 0, 8000, 8010),
    ("U9", {k: v for k, v in U7.items() if k != "total_tokens"}, "openai", 0, 0, 0, 0, 1024, 0, 0),
    ("U10", {"prompt_tokens": None, "completion_tokens": None, "prompt_tokens_details": None,
             "completion_tokens_details": None}, "openai", 0, 0, 0, 0, 0, 0, 0),
    ("U11", {"input_tokens": 100, "output_tokens": None, "cache_read_input_tokens": None,
             "cache_creation_input_tokens": None}, "anthropic", 100, 0, 0, 0, 0, 100, 100),
    ("U12", {"prompt_tokens": 3000, "completion_tokens": 100, "prompt_cache_hit_tokens": 2500,
             "prompt_cache_miss_tokens": 500, "completion_tokens_details": {"reasoning_tokens": 80}},
     "openai", 500, 100, 2500, 0, 80, 3000, 3100),
    ("U13", {"prompt_tokens": 9000, "completion_tokens": 50, "cache_read_input_tokens": 7000,
             "cache_creation_input_tokens": 1500}, "openai", 500, 50, 7000, 1500, 0, 9000, 9050),
    ("U14", {"prompt_tokens": 9000, "completion_tokens": 50, "prompt_tokens_details": {"cached_tokens": 0},
             "cache_read_input_tokens": 7000}, "openai", 2000, 50, 7000, 0, 0, 9000, 9050),
    ("U15", {"prompt_tokens": 100, "completion_tokens": 5,
             "prompt_tokens_details": {"cached_tokens": 150, "cache_write_tokens": 20}},
     "openai", 0, 5, 150, 20, 0, 170, 175),
    ("U16", {"input_tokens": -5, "output_tokens": -7, "cache_read_input_tokens": -3},
     "anthropic", -5, -7, -3, 0, 0, -8, -15),
    ("U17", {"prompt_tokens": 100, "completion_tokens": 1, "prompt_tokens_details": {"cached_tokens": -20}},
     "openai", 120, 1, -20, 0, 0, 100, 101),
    ("U18", {"prompt_tokens": "120", "completion_tokens": 7.9, "prompt_tokens_details": {"cached_tokens": "20.5"}},
     "openai", 120, 7, 0, 0, 0, 120, 127),
    ("U19", {"prompt_tokens": 4000, "completion_tokens": 300, "total_tokens": 4300,
             "prompt_tokens_details": {"cached_tokens": 1000}}, "openai", 3000, 300, 1000, 0, 0, 4000, 4300),
    ("U20", {"prompt_tokens": 4000, "completion_tokens": 300, "total_tokens": 4300},
     "openai", 4000, 300, 0, 0, 0, 4000, 4300),
    ("U21", {"prompt_tokens": 10, "completion_tokens": 5, "output_tokens_details": {"reasoning_tokens": 3},
             "completion_tokens_details": {"reasoning_tokens": 4}}, "openai", 10, 5, 0, 0, 3, 10, 15),
    ("U22", {"prompt_tokens": 10, "completion_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
             "completion_tokens_details": {"reasoning_tokens": 4}}, "openai", 10, 5, 0, 0, 4, 10, 15),
    ("U23", {"input_tokens": 8000, "output_tokens": 1500, "input_tokens_details": {"cached_tokens": 7000}},
     "anthropic", 8000, 1500, 0, 0, 0, 8000, 9500),
    ("bools", {"prompt_tokens": True, "completion_tokens": False}, "openai", 1, 0, 0, 0, 0, 1, 1),
]


LENIENT_ONLY = {"U18", "bools"}  # Hermes's int(value or 0) on strings and booleans


@pytest.mark.parametrize("row", SPEC, ids=[r[0] for r in SPEC])
def test_spec_worked_examples(row):
    name, usage, branch, *expected = row
    before = copy.deepcopy(usage)
    if name in LENIENT_ONLY:  # counts that are no number: strict input refuses them (D14)
        with pytest.raises(InputError, match="expected a number of tokens"):
            normalize_usage(usage, provider=branch)
    out = normalize_usage(usage, provider=branch, lenient=name in LENIENT_ONLY)
    assert [out[k] for k in KEYS] == expected
    assert out["provider"] == branch and out["request_count"] == 1
    assert usage == before  # never mutates its input


@pytest.mark.parametrize("row", SPEC, ids=[r[0] for r in SPEC])
def test_spec_worked_examples_through_the_cli(row):
    name, usage, branch, *expected = row
    if name in LENIENT_ONLY:
        assert invoke(["normalize-usage", "--provider", branch], usage).status == 3
    result = invoke(["normalize-usage", "--provider", branch, *["--lenient"] * (name in LENIENT_ONLY)], usage)
    assert result.status == 0, result.stderr
    assert [result.json[k] for k in KEYS] == expected


@pytest.mark.parametrize("usage, branch", [
    (U3, "anthropic"), (U7, "codex"), ({"prompt_tokens": 1, "completion_tokens": 2}, "openai"),
    ({"input_tokens": 8000, "output_tokens": 10, "input_tokens_details": {"cached_tokens": 2000}}, "codex"),
    ({"input_tokens": 37, "output_tokens": 11, "total_tokens": 48}, "codex"),
    ({"cache_read_input_tokens": 5}, "anthropic"),
])
def test_detected_from_the_keys(usage, branch):
    assert detect_provider(usage) == branch
    assert normalize_usage(usage)["provider"] == branch


def test_forced_branch_wins_over_the_shape():
    # U4 / U9: what Hermes gives when its selectors do not match the shape
    assert normalize_usage(U3, provider="openai")["input_tokens"] == 0
    assert normalize_usage(U3)["input_tokens"] == 25


def test_unknown_shape_names_the_keys_seen():
    result = invoke(["normalize-usage"], {"tokens": 5, "cost": 1})
    assert result.status == 3
    assert "keys seen: tokens, cost" in result.stderr
    assert "--provider" in result.stderr
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize("name, provider, model, expected", [
    ("anthropic_message_cached.json", "anthropic", "claude-sonnet-4-5", (25, 410, 48000, 3100, 0, 51125, 51535)),
    ("anthropic_message_uncached.json", "anthropic", "claude-haiku-4-5", (1200, 350, 0, 0, 0, 1200, 1550)),
    ("anthropic_stream_message_start.json", "anthropic", "claude-opus-4-7", (472, 2, 20480, 0, 0, 20952, 20954)),
    ("anthropic_stream_message_delta.json", "anthropic", None, (472, 503, 20480, 0, 0, 20952, 21455)),
    ("openai_chat_reasoning_cached.json", "openai", "o3", (904, 900, 4096, 0, 640, 5000, 5900)),
    ("openai_chat_uncached.json", "openai", "gpt-4o", (19, 10, 0, 0, 0, 19, 29)),
    ("openai_chat_stream_final_chunk.json", "openai", "gpt-4o-mini", (1024, 120, 1024, 0, 0, 2048, 2168)),
    ("openai_responses_reasoning_cached.json", "codex", "gpt-4.1", (1000, 1500, 7000, 0, 1024, 8000, 9500)),
    ("openai_responses_stream_completed.json", "codex", "gpt-4o-mini", (37, 11, 0, 0, 0, 37, 48)),
    ("deepseek_chat_cached.json", "openai", "deepseek-chat", (500, 100, 2500, 0, 0, 3000, 3100)),
])
def test_real_response_bodies(name, provider, model, expected):
    body = json.loads((USAGE / name).read_text())
    out = normalize_usage(body)
    assert out["provider"] == provider
    assert tuple(out[k] for k in KEYS) == expected
    assert model_of(body) == model


def test_anthropic_cache_write_split_is_reported():
    out = normalize_usage(json.loads((USAGE / "anthropic_message_cached.json").read_text()))
    assert (out["cache_write_5m_tokens"], out["cache_write_1h_tokens"]) == (1000, 2100)
    assert out["cache_write_tokens"] == 3100  # Hermes's bucket is the total, split ignored
    assert "cache_write_5m_tokens" not in normalize_usage({"input_tokens": 1, "output_tokens": 1})


def test_negative_counts_are_kept_and_warned_about():
    result = invoke(["normalize-usage"], {"input_tokens": -5, "output_tokens": -7, "cache_read_input_tokens": -3})
    assert result.status == 0
    assert (result.json["input_tokens"], result.json["prompt_tokens"], result.json["total_tokens"]) == (-5, -8, -15)
    assert "warning" in result.stderr and "negative" in result.stderr
    assert "input_tokens, output_tokens, cache_read_tokens" in result.stderr
    assert "warnings" not in result.json
    quiet = invoke(["--quiet", "normalize-usage"], {"input_tokens": -5})
    assert quiet.status == 0 and quiet.stderr == ""


def _jsonl(*names):
    return "".join(json.dumps(json.loads((USAGE / n).read_text())) + "\n" for n in names)


def test_jsonl_per_line_records_and_sum(snapshot):
    log = _jsonl("anthropic_message_cached.json", "anthropic_message_uncached.json",
                 "anthropic_stream_message_delta.json")
    lines = invoke(["normalize-usage", "--jsonl", "--billing-provider", "anthropic"], log)
    assert lines.status == 0
    assert [r["input_tokens"] for r in lines.lines] == [25, 1200, 472]
    assert [r.get("cost", {}).get("label") for r in lines.lines] == ["~$0.03", "~$0.00", None]
    total = invoke(["normalize-usage", "--jsonl", "--sum", "--billing-provider", "anthropic"], log)
    assert total.status == 0
    out = total.json
    assert out["request_count"] == 3
    assert out["input_tokens"] == 25 + 1200 + 472
    assert out["output_tokens"] == 410 + 350 + 503
    assert out["total_tokens"] == 51535 + 1550 + 21455
    assert out["cache_write_5m_tokens"] == 1000 and out["cache_write_1h_tokens"] == 2100
    # two calls name a model (sonnet 0.032250, haiku 1200*1 + 350*5 = 0.002950); the delta event does not
    assert out["cost"]["amount_usd"] == "0.035200"
    assert out["cost"]["calls"] == 2 and out["cost"]["models"] == ["claude-haiku-4-5", "claude-sonnet-4-5"]
    assert out == snapshot


def test_empty_input_is_bad_input():
    result = invoke(["normalize-usage", "--jsonl", "--sum"], "")
    assert result.status == 3 and "empty input" in result.stderr


def test_sum_mixed_providers():
    total = add_usage(normalize_usage(U3), normalize_usage(U7))
    assert total["provider"] == "mixed"
    assert total["input_tokens"] == 25 + 1000 and total["request_count"] == 2


@pytest.mark.parametrize("name", sorted(p.name for p in USAGE.glob("*.json")))
def test_whole_outputs(name, snapshot):
    result = invoke(["normalize-usage", "--billing-provider", _billing(name), str(USAGE / name)])
    assert result.status == 0, result.stderr
    assert result.json == snapshot


def _billing(name):
    return name.split("_")[0]  # anthropic, openai, deepseek


def test_model_flag_overrides_the_response_model():
    body = USAGE / "openai_chat_uncached.json"
    result = invoke(["normalize-usage", "--model", "gpt-4o-mini", "--billing-provider", "openai", str(body)])
    assert result.json["cost"]["model"] == "gpt-4o-mini"
    # 19 * 0.15 + 10 * 0.60 per million
    assert result.json["cost"]["amount_usd"] == "0.00000885"


def test_no_cost_and_no_model():
    assert "cost" not in invoke(["normalize-usage", "--no-cost", str(USAGE / "openai_chat_uncached.json")]).json
    assert "cost" not in invoke(["normalize-usage"], {"prompt_tokens": 1, "completion_tokens": 1}).json


def test_unpriced_without_a_route_is_unknown_with_a_hint():
    result = invoke(["normalize-usage", str(USAGE / "anthropic_message_cached.json")])
    assert result.json["cost"]["status"] == "unknown" and result.json["cost"]["amount_usd"] is None
    assert "--billing-provider" in result.stderr


def test_not_an_object_is_bad_input():
    result = invoke(["normalize-usage"], [1, 2])
    assert result.status == 3


def test_a_recorded_stream_with_skip_no_usage():
    """Every event of an OpenAI chat stream with include_usage (usage null until the last chunk)
    and of an Anthropic stream (usage only on message_start / message_delta)."""
    chunk = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-mini",
             "choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": None}], "usage": None}
    final = json.loads((USAGE / "openai_chat_stream_final_chunk.json").read_text())
    stream = "".join(json.dumps(e) + "\n" for e in (chunk, chunk, final))
    assert invoke(["normalize-usage", "--jsonl"], stream).status == 3  # without the flag: bad input
    result = invoke(["normalize-usage", "--jsonl", "--skip-no-usage"], stream)
    assert result.status == 0
    assert [r["total_tokens"] for r in result.lines] == [2168]
    assert "skipped 2 input(s) without usage" in result.stderr
    events = [json.loads((USAGE / "anthropic_stream_message_start.json").read_text()),
              {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
              {"type": "ping"},
              {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hello"}},
              {"type": "content_block_stop", "index": 0},
              json.loads((USAGE / "anthropic_stream_message_delta.json").read_text()),
              {"type": "message_stop"}]
    result = invoke(["normalize-usage", "--jsonl", "--skip-no-usage", "--no-cost"],
                    "".join(json.dumps(e) + "\n" for e in events))
    assert [r["output_tokens"] for r in result.lines] == [2, 503]  # message_delta holds the final count


def test_has_usage():
    from hermesctx.stages.normalize_usage import has_usage

    assert has_usage({"prompt_tokens": 1}) and has_usage({"usage": {"input_tokens": 1}})
    assert not has_usage({"type": "ping"}) and not has_usage({"usage": None, "choices": []})
    assert not has_usage([1]) and not has_usage({"tokens": 3})


def test_clamping_is_warned_about():
    u15 = {"prompt_tokens": 100, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 150, "cache_write_tokens": 20}}
    result = invoke(["normalize-usage"], u15)
    assert result.status == 0 and result.json["input_tokens"] == 0 and result.json["prompt_tokens"] == 170
    assert "exceed the prompt total by 70: input_tokens clamped to 0" in result.stderr
    assert invoke(["normalize-usage"], SPEC[4][1]).stderr == ""  # U5: nothing to say


def test_provider_also_names_the_billing_route():
    # as in Hermes, where one provider drives both normalize_usage and estimate_usage_cost (K1)
    usage = {"input_tokens": 25, "output_tokens": 410, "cache_read_input_tokens": 48000,
             "cache_creation_input_tokens": 3100}
    forced = invoke(["normalize-usage", "--provider", "anthropic", "--model", "claude-sonnet-4-5"], usage)
    assert forced.json["cost"]["amount_usd"] == "0.032250" and forced.stderr == ""
    detected = invoke(["normalize-usage", "--model", "claude-sonnet-4-5"], usage)
    assert detected.json["cost"]["status"] == "unknown"  # K4: no provider, no route
    override = invoke(["normalize-usage", "--provider", "anthropic", "--billing-provider", "bedrock",
                       "--model", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"], usage)
    assert override.json["cost"]["pricing_version"] == "bedrock-pricing-2026-04"  # K5


# --- bugs found by the differential fuzzing (tests/oracle/test_oracle_cache_usage.py) ---------

@pytest.mark.parametrize("usage, branch, expected", [
    # Chat usage whose prompt/completion counts are missing: DeepSeek hit only, details only
    ({"prompt_cache_hit_tokens": 2500}, "openai", (0, 0, 2500, 0, 0, 2500, 2500)),
    ({"total_tokens": 50, "prompt_tokens_details": {"cached_tokens": 40}}, "openai", (0, 0, 40, 0, 0, 40, 40)),
    ({"completion_tokens_details": {"reasoning_tokens": 9}, "cache_read_input_tokens": 7}, "openai",
     (0, 0, 7, 0, 9, 7, 7)),
    # a proxy's Anthropic-style cache field next to total_tokens is the Chat branch (U13)
    ({"total_tokens": 9, "cache_creation_input_tokens": 5}, "openai", (0, 0, 0, 5, 0, 5, 5)),
    # Anthropic's TTL breakdown alone; an empty object (Hermes: zeros, Chat branch)
    ({"cache_creation": {"ephemeral_5m_input_tokens": 7}}, "anthropic", (0, 0, 0, 0, 0, 0, 0)),
    ({}, "openai", (0, 0, 0, 0, 0, 0, 0)),
    ({"total_tokens": 12}, "openai", (0, 0, 0, 0, 0, 0, 0)),
])
def test_shapes_with_missing_counts_are_detected(usage, branch, expected):
    out = normalize_usage(usage)
    assert out["provider"] == branch
    assert tuple(out[k] for k in KEYS) == expected
    result = invoke(["normalize-usage"], usage)
    assert result.status == 0 and tuple(result.json[k] for k in KEYS) == expected


def test_an_empty_object_holds_no_usage_for_skip_no_usage():
    from hermesctx.stages.normalize_usage import has_usage

    assert not has_usage({})
    result = invoke(["normalize-usage", "--jsonl", "--skip-no-usage", "--no-cost"], '{}\n{"prompt_tokens": 3}\n')
    assert [r["input_tokens"] for r in result.lines] == [3]


def test_an_empty_billing_provider_means_no_route():
    # --billing-provider "" is Hermes's provider="" (no route), not the --provider default (K4)
    usage = {"input_tokens": 25, "output_tokens": 410}
    result = invoke(["normalize-usage", "--provider", "anthropic", "--billing-provider", "", "--model",
                     "claude-sonnet-4-5"], usage)
    assert result.status == 0
    assert result.json["cost"]["status"] == "unknown" and result.json["cost"]["amount_usd"] is None
    assert result.json["cost"]["label"] == "n/a"
