"""hermesctx replay: recorded usage reproduced, the cache rules, compaction costs, the gate."""

from __future__ import annotations

import copy
import json
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hermesctx import cost
from hermesctx import replay as rp
from tests.conftest import ROOT, invoke
from tests.replay_logs import claude_code_log, codex_log

BUCKETS = ("requests", "prompt_tokens", "input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens")


def _replayed(path, recorded: dict) -> tuple[rp.Session, dict]:
    """The log's own policy replayed: every bucket as the log recorded it."""
    session = rp.read_session(str(path))
    out = rp.replay(session, rp.LOG)
    assert {k: out[k] for k in BUCKETS} == {k: recorded[k] for k in BUCKETS}
    return session, out


@pytest.mark.parametrize("kw", [{}, {"gap_at": 6}, {"warm": True}, {"ttl": "1h", "gap_at": 6}, {"turns": 30}],
                         ids=["steady", "ttl-expired", "warm-start", "1h-ttl", "long"])
def test_claude_code_log_reproduces_recorded_usage(tmp_path, kw):
    path = tmp_path / "session.jsonl"
    recorded = claude_code_log(path, **kw)
    session, _ = _replayed(path, recorded)
    assert rp.recorded_totals(session)["cache_write_tokens"] == recorded["cache_write_tokens"]


def test_ttl_decides_the_rewrite(tmp_path):
    path = tmp_path / "s.jsonl"
    claude_code_log(path, gap_at=6)
    session = rp.read_session(str(path))
    five = rp.replay(session, rp.LOG)
    hour = rp.replay(session, rp.Policy(name="1h", ttl="1h"))
    assert five["cache_write_tokens"] > hour["cache_write_tokens"]  # the 400 s pause outlives 5 minutes only
    assert five["prompt_tokens"] == hour["prompt_tokens"]


@pytest.mark.parametrize("kw", [{}, {"compact_at": 5}], ids=["steady", "compacted"])
def test_codex_log_reproduces_recorded_usage(tmp_path, kw):
    path = tmp_path / "rollout.jsonl"
    session, out = _replayed(path, codex_log(path, **kw))
    assert out["compactions"] == (1 if kw else 0)
    none = rp.replay(session, rp.NONE)
    if kw:  # without the log's compaction every later request carries the whole transcript
        assert none["prompt_tokens"] > out["prompt_tokens"]


def test_anthropic_cache_rules():
    cache = rp.CacheModel(rp.ANTHROPIC)
    hashes, ends = [1, 2, 3], [2000.0, 3000.0, 4000.0]
    first = cache.bill(hashes, ends, [0, 2], now=0.0, ttl=300.0, done=1.0)
    assert first == {"input_tokens": 0, "cache_read_tokens": 0, "cache_write_tokens": 4000}
    # sent before the first was answered: nothing to read yet
    assert cache.bill(hashes, ends, [0, 2], now=0.5, ttl=300.0)["cache_read_tokens"] == 0
    grown = cache.bill([1, 2, 3, 4], ends + [4500.0], [0, 3], now=10.0, ttl=300.0, done=11.0)
    assert grown == {"input_tokens": 0, "cache_read_tokens": 4000, "cache_write_tokens": 500}
    # an unmarked tail is plain input; past the TTL everything is written again
    late = cache.bill([1, 2, 3, 4, 5], ends + [4500.0, 4600.0], [0, 3], now=400.0, ttl=300.0)
    assert late == {"input_tokens": 100, "cache_read_tokens": 0, "cache_write_tokens": 4500}
    # under the minimum cacheable length nothing is written
    small = rp.CacheModel(rp.ANTHROPIC)
    assert small.bill([9], [500.0], [0], now=0.0, ttl=300.0) == \
        {"input_tokens": 500, "cache_read_tokens": 0, "cache_write_tokens": 0}


def test_anthropic_lookback_is_20_blocks():
    cache = rp.CacheModel(rp.ANTHROPIC)
    cache.bill([0], [2000.0], [0], now=0.0, ttl=300.0)
    keys = list(range(30))
    ends = [2000.0 + 10 * i for i in range(30)]
    cache.bill(keys[:3], ends[:3], [2], now=1.0, ttl=300.0)  # writes the prefix of 3 blocks
    far = cache.bill(keys, ends, [29], now=2.0, ttl=300.0)  # its last marker is 27 blocks on
    assert far["cache_read_tokens"] == 0
    near = cache.bill(keys[:20], ends[:20], [19], now=3.0, ttl=300.0)
    assert near["cache_read_tokens"] == round(ends[2])


def test_openai_cache_rules():
    cache = rp.CacheModel(rp.OPENAI)
    assert cache.bill([1], [1000.0], [], now=0.0, ttl=600.0)["cache_read_tokens"] == 0
    assert cache.bill([1, 2], [1000.0, 1500.0], [], now=1.0, ttl=600.0)["cache_read_tokens"] == 0  # under 1,024
    usage = cache.bill([1, 2, 3], [1000.0, 1500.0, 3000.0], [], now=2.0, ttl=600.0)
    assert usage == {"input_tokens": 3000 - 1408, "cache_read_tokens": 1500 // 128 * 128, "cache_write_tokens": 0}
    assert cache.bill([1, 2, 3], [1000.0, 1500.0, 3000.0], [], now=1000.0, ttl=600.0)["cache_read_tokens"] == 0


def _row(model: str) -> dict:
    table = json.loads((ROOT / "hermesctx" / "data" / "pricing.json").read_text())
    return next(r for r in table["prices"] if r["model"] == model and r["provider"] == "anthropic")


def test_compaction_cost_matches_the_price_table_to_the_cent():
    row = _row("claude-sonnet-4-5")
    read, write, inp, out = (Decimal(row[k]) for k in ("cache_read", "cache_write", "input", "output"))
    cost = rp.compaction_cost(before=150_000, after=40_000, cached=148_000,
                              summary_usage={"input_tokens": 90_000, "output_tokens": 5_000},
                              summary_model="claude-sonnet-4-5", model="claude-sonnet-4-5",
                              pricer=rp.Pricer(rp.ANTHROPIC), provider=rp.ANTHROPIC)
    summary = (90_000 * inp + 5_000 * out) / 10**6
    rebuild = (40_000 * write - 148_000 * read) / 10**6
    per_request = 110_000 * read / 10**6
    cents = Decimal("0.01")
    assert Decimal(cost["summary_call_usd"]).quantize(cents) == summary.quantize(cents)
    assert Decimal(cost["cache_break_usd"]).quantize(cents) == rebuild.quantize(cents)
    assert Decimal(cost["one_time_usd"]).quantize(cents) == (summary + rebuild).quantize(cents)
    assert Decimal(cost["saving_per_request_usd"]) == per_request
    assert cost["payback_requests"] == -(-(summary + rebuild) // per_request)
    assert cost["cached_prefix_broken"] == 148_000 and cost["saved_per_request"] == 110_000


def test_summary_model_is_priced_on_its_own():
    pricer = rp.Pricer(rp.ANTHROPIC)
    kw = dict(before=150_000, after=40_000, cached=148_000, summary_usage={"input_tokens": 90_000, "output_tokens": 5_000},
              model="claude-sonnet-4-5", pricer=pricer, provider=rp.ANTHROPIC)
    own = rp.compaction_cost(summary_model="claude-sonnet-4-5", **kw)
    cheap = rp.compaction_cost(summary_model="claude-haiku-4-5", **kw)
    assert Decimal(cheap["summary_call_usd"]) < Decimal(own["summary_call_usd"])
    assert cheap["cache_break_usd"] == own["cache_break_usd"]


def test_gate():
    cost = {"saved_per_request": 10_000, "payback_requests": 30, "saving_per_request_usd": "0.003",
            "one_time_usd": "0.09"}
    assert rp.gate(cost, 10, min_gain=None, min_saving_usd=None) is None  # no gate
    assert "would not repay" in rp.gate(cost, 10, min_gain=0, min_saving_usd=None)
    assert rp.gate(cost, 40, min_gain=0, min_saving_usd=None) is None
    assert "minimum gain" in rp.gate(cost, 40, min_gain=20_000, min_saving_usd=None)
    assert "under $0.5" in rp.gate(cost, 40, min_gain=None, min_saving_usd=Decimal("0.5"))
    assert rp.gate(cost, 10, min_gain=0, min_saving_usd=None, over_window=True) is None  # must compact
    assert "never pays back" in rp.gate({**cost, "payback_requests": None}, 10, min_gain=0, min_saving_usd=None)


def _small_window(**kw) -> rp.Policy:
    return rp.Policy(name="small", compaction="hermes", context_length=60_000, **kw)


def test_hermes_policy_compacts_and_bills_the_summary_call(tmp_path):
    path = tmp_path / "long.jsonl"
    claude_code_log(path, turns=40)
    session = rp.read_session(str(path))
    units = [copy.deepcopy(e[2].msg) for e in session.events if e[0] == "unit"]
    out = rp.replay(session, _small_window())
    assert out["compactions"] >= 1
    assert out["summary_requests"] == out["compactions"]
    assert out["requests"] == 40 + out["summary_requests"]
    report = next(r for r in out["compaction_reports"] if r["compressed"])
    assert report["tokens_after"] < report["tokens_before"]
    assert report["summary_call"]["usage"]["input_tokens"] > 0 and report["summary_call"]["usage"]["output_tokens"] > 0
    assert set(report["cost"]) >= {"cached_prefix_broken", "summary_call_usd", "cache_break_usd", "payback_requests"}
    none = rp.replay(session, rp.NONE)
    assert out["prompt_tokens"] < none["prompt_tokens"]
    assert [e[2].msg for e in session.events if e[0] == "unit"] == units  # nothing mutated


@pytest.mark.parametrize("turns", [25, 40, 60])
def test_gate_never_costs_more(tmp_path, turns):
    path = tmp_path / "long.jsonl"
    claude_code_log(path, turns=turns)
    session = rp.read_session(str(path))
    plain = rp.replay(session, _small_window())
    gated = rp.replay(session, _small_window(min_gain=0))
    assert Decimal(gated["cost_usd"]) <= Decimal(plain["cost_usd"])
    for report in gated["compaction_reports"]:
        assert report["compressed"] or report["reason"]


def test_gate_declines_with_its_reason(tmp_path):
    path = tmp_path / "long.jsonl"
    claude_code_log(path, turns=40)
    session = rp.read_session(str(path))
    out = rp.replay(session, _small_window(min_gain=10**9))
    declined = [r for r in out["compaction_reports"] if not r["compressed"]]
    assert out["declined"] == len(declined) > 0
    assert "minimum gain" in declined[0]["reason"]


def test_price_names():
    assert cost._price_names("gpt-5.1-codex-max") == ["gpt-5.1-codex-max", "gpt-5.1"]
    assert cost._price_names("claude-haiku-4-5-20251001") == ["claude-haiku-4-5-20251001", "claude-haiku-4-5"]
    assert rp.Pricer(rp.OPENAI).entry("gpt-5.1-codex-max") is not None


# --- the command ---------------------------------------------------------------------------------

def test_cli_json(tmp_path):
    cc, cx = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    rec = claude_code_log(cc)
    codex_log(cx)
    res = invoke(["replay", str(cc), str(cx), "--compare", "log", "--compare", "none", "--format", "json"])
    assert res.status == 0, res.stderr
    report = res.json
    assert [s["source"] for s in report["sessions"]] == ["claude-code", "codex"]
    first = {row["policy"]: row for row in report["sessions"][0]["policies"]}
    assert set(first) == {"recorded", "log", "no compaction"}
    assert first["log"]["cache_write_tokens"] == rec["cache_write_tokens"] == first["recorded"]["cache_write_tokens"]
    assert {row["policy"] for row in report["total"]} == {"recorded", "log", "no compaction"}
    assert report["note"]


def test_cli_table_snapshot(tmp_path, snapshot):
    path = tmp_path / "session.jsonl"
    claude_code_log(path, gap_at=6)
    res = invoke(["replay", str(path), "--compare", "log", "--compare", "none", "--format", "table"])
    assert res.status == 0
    text = res.stdout.decode()
    assert "recorded" in text and "TOTAL" in text
    assert text == snapshot


def test_cli_config_policy_and_gate(tmp_path):
    path = tmp_path / "long.jsonl"
    claude_code_log(path, turns=40)
    config = tmp_path / "small.yaml"
    config.write_text("model:\n  context_length: 60000\ncompression:\n  min_gain: 0\n")
    res = invoke(["replay", str(path), "--compare", "none", "--compare", str(config), "--format", "json"])
    assert res.status == 0, res.stderr
    rows = {row["policy"]: row for row in res.json["sessions"][0]["policies"]}
    assert rows["small.yaml"]["compactions"] >= 1  # the config's 60,000-token window
    assert rows["no compaction"]["compactions"] == 0
    assert Decimal(rows["small.yaml"]["cost_usd"]) <= Decimal(rows["no compaction"]["cost_usd"]) * 2


def test_cli_bad_log_is_reported_and_the_rest_replayed(tmp_path):
    good, bad = tmp_path / "good.jsonl", tmp_path / "bad.jsonl"
    claude_code_log(good)
    bad.write_text('{"type": "summary", "summary": "a title", "leafUuid": "x"}\n')
    res = invoke(["replay", str(bad), str(good), "--format", "json"])
    assert res.status == 3
    assert "bad.jsonl" in res.stderr and "Traceback" not in res.stderr
    assert [s["session"] for s in res.json["sessions"]] == ["good.jsonl"]


def test_cli_unknown_policy_is_a_usage_error(tmp_path):
    path = tmp_path / "s.jsonl"
    claude_code_log(path)
    res = invoke(["replay", str(path), "--compare", str(tmp_path / "missing.yaml")])
    assert res.status == 2


def test_cli_progress_on_stderr(tmp_path):
    path = tmp_path / "s.jsonl"
    claude_code_log(path)
    res = invoke(["replay", str(path), "--progress", "--format", "json"])
    assert res.status == 0 and "replay: 1/1 logs" in res.stderr


def test_clear_thinking_policy_breaks_the_cache_where_it_clears(tmp_path):
    path = tmp_path / "think.jsonl"
    claude_code_log(path, turns=10)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for line in lines:  # every reply thinks first (signed)
        if line["type"] == "assistant":
            line["message"]["content"].insert(0, {"type": "thinking", "thinking": "Let me weigh the options. " * 40,
                                                  "signature": "c2ln"})
    results = [i for i, line in enumerate(lines) if line["type"] == "user"]
    ask = {**lines[results[7]], "uuid": "ask2", "message": {"role": "user", "content": "Now the docs, please."}}
    lines.insert(results[7] + 1, ask)  # a new user turn: the tool loops before it are closed
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    session = rp.read_session(str(path))
    plain = rp.replay(session, rp.NONE)
    cleared = rp.replay(session, rp.Policy(name="clear", compaction="none", clear_thinking=1))
    assert cleared["thinking_cleared"] > 0 and plain["thinking_cleared"] == 0
    assert cleared["prompt_tokens"] < plain["prompt_tokens"]  # the thinking is no longer sent
    assert cleared["cache_write_tokens"] > plain["cache_write_tokens"]  # each clearing re-writes from there


def test_cli_clear_thinking_adds_a_variant_of_each_policy(tmp_path):
    path = tmp_path / "s.jsonl"
    claude_code_log(path)
    res = invoke(["replay", str(path), "--compare", "log", "--compare", "none", "--clear-thinking", "2",
                  "--format", "json"])
    names = [row["policy"] for row in res.json["sessions"][0]["policies"]]
    assert names == ["recorded", "log", "no compaction", "log + clear thinking 2", "no compaction + clear thinking 2"]


def test_legacy_codex_usage_events(tmp_path):
    path = tmp_path / "legacy.jsonl"
    events = [{"timestamp": "2025-10-30T12:00:00.000Z", "type": "session_meta", "payload": {"id": "x", "cwd": "/t"}},
              {"timestamp": "2025-10-30T12:00:05.000Z", "type": "event_msg",
               "payload": {"type": "turn.completed", "usage": {"input_tokens": 1420, "cached_input_tokens": 0,
                                                              "output_tokens": 90}}},
              {"timestamp": "2025-10-30T12:00:09.000Z", "type": "event_msg",
               "payload": {"type": "token_count", "info": {"prompt": 1620, "completion": 40}}},
              {"timestamp": "2025-10-30T12:00:11.000Z", "type": "event_msg", "payload": {"type": "token_count", "info": None}}]
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    session = rp.read_session(str(path))
    rec = rp.recorded_totals(session)
    assert rec["requests"] == 2 and rec["prompt_tokens"] == 1420 + 1620 and rec["output_tokens"] == 130
    assert rp.replay(session, rp.LOG)["prompt_tokens"] == 1420 + 1620


def test_a_log_without_calls_is_a_warning(tmp_path):
    path = tmp_path / "idle.jsonl"
    path.write_text(json.dumps({"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta",
                                "payload": {"id": "x", "cwd": "/t"}}) + "\n")
    res = invoke(["replay", str(path), "--format", "json"])
    assert res.status == 0 and "no request to replay" in res.stderr and res.json["sessions"] == []


def test_a_transcript_without_usage_is_replayed_from_its_counts():
    res = invoke(["replay", str(ROOT / "examples" / "anthropic-session.json"), "--compare", "log",
                  "--compare", "none", "--format", "json"])
    assert res.status == 0, res.stderr
    session = res.json["sessions"][0]
    assert [row["policy"] for row in session["policies"]] == ["log", "no compaction"]  # nothing recorded
    assert session["policies"][0]["requests"] >= 1 and session["policies"][0]["prompt_tokens"] > 0


def test_a_batch_is_one_session_per_transcript():
    res = invoke(["replay", str(ROOT / "examples" / "batch.jsonl"), "--format", "json"])
    assert res.status == 0, res.stderr
    names = [s["session"] for s in res.json["sessions"]]
    assert len(names) > 1 and all(n.startswith("batch.jsonl#") for n in names)
    assert res.json["total"][0]["requests"] == sum(s["policies"][0]["requests"] for s in res.json["sessions"])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(turns=st.integers(min_value=1, max_value=25), gap=st.one_of(st.none(), st.integers(min_value=1, max_value=24)),
       pause=st.floats(min_value=10, max_value=5000), warm=st.booleans(), ttl=st.sampled_from(["5m", "1h"]))
def test_any_claude_code_log_is_reproduced(tmp_path, turns, gap, pause, warm, ttl):
    path = tmp_path / "prop.jsonl"
    recorded = claude_code_log(path, turns=turns, gap_at=gap, gap_seconds=pause, warm=warm, ttl=ttl)
    session, out = _replayed(path, recorded)
    assert out["prompt_tokens"] == out["input_tokens"] + out["cache_read_tokens"] + out["cache_write_tokens"]
    none = rp.replay(session, rp.NONE)  # nothing to compact: the same bill
    assert {k: none[k] for k in BUCKETS} == {k: out[k] for k in BUCKETS}
