"""compress: the cost in a compaction's report and the minimum-gain gate (issue 34)."""

from __future__ import annotations

import json
from decimal import Decimal

from hermesctx import cost as costs
from tests.conftest import ROOT, invoke


def _session(turns: int = 30, model: str = "claude-sonnet-4-5") -> dict:
    msgs = [{"role": "system", "content": "You are a coding agent."}]
    for i in range(turns):
        msgs.append({"role": "user", "content": f"Step {i}: look at src/m{i}.py"})
        msgs.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": "read", "arguments": json.dumps({"path": f"src/m{i}.py"})}}]})
        msgs.append({"role": "tool", "tool_call_id": f"c{i}",
                     "content": "\n".join(f"line {j} of m{i}: x = {j} * {i}" for j in range(150))})
        msgs.append({"role": "assistant", "content": f"Done with step {i}."})
    return {"model": model, "messages": msgs}


def _report(tmp_path, *args, doc=None):
    src = tmp_path / "in.json"
    src.write_text(json.dumps(doc or _session()))
    rep = tmp_path / "report.jsonl"
    res = invoke(["compress", str(src), "--tail-tokens", "3000", "--report", str(rep), *args])
    return res, json.loads(rep.read_text().splitlines()[0])


def test_report_carries_the_cost_to_the_cent(tmp_path):
    res, report = _report(tmp_path)
    assert res.status == 0 and report["compressed"]
    cost = report["cost"]
    row = next(r for r in json.loads((ROOT / "hermesctx" / "data" / "pricing.json").read_text())["prices"]
               if r["provider"] == "anthropic" and r["model"] == "claude-sonnet-4-5")
    read, write, inp, out = (Decimal(row[k]) for k in ("cache_read", "cache_write", "input", "output"))
    before, after = report["tokens_before"], report["tokens_after"]
    call = cost["summary_call"]
    summary = (call["input_tokens"] * inp + call["output_tokens"] * out) / 10**6
    rebuild = (after * write - before * read) / 10**6
    cents = Decimal("0.01")
    assert Decimal(cost["summary_call_usd"]).quantize(cents) == summary.quantize(cents)
    assert Decimal(cost["cache_break_usd"]).quantize(cents) == rebuild.quantize(cents)
    assert Decimal(cost["saving_per_request_usd"]) == ((before - after) * read / 10**6).quantize(Decimal("0.000001"))
    assert cost["cached_prefix_broken"] == before and cost["expected_requests"] == 60
    assert cost["payback_requests"] == -(-(summary + rebuild) // ((before - after) * read / 10**6))


def test_gate_declines_keeps_the_input_and_exits_0(tmp_path):
    doc = _session()
    res, report = _report(tmp_path, "--min-gain", "1000000", doc=doc)
    assert res.status == 0
    assert json.loads(res.stdout) == doc
    assert report["compressed"] is False and report["declined"] is True
    assert "minimum gain" in report["reason"] and "input kept" in report["reason"]
    assert "declined by the minimum-gain gate" in res.stderr


def test_gate_lets_a_paying_compaction_through(tmp_path):
    res, report = _report(tmp_path, "--min-gain", "0")
    assert report["compressed"] and report["cost"]["payback_requests"] <= report["cost"]["expected_requests"]


def test_gate_in_money(tmp_path):
    res, report = _report(tmp_path, "--min-saving-usd", "1000")
    assert res.status == 0 and report["declined"] and "under $1000" in report["reason"]


def test_gate_from_the_config(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("compression:\n  min_gain: 1000000\n")
    src = tmp_path / "in.json"
    src.write_text(json.dumps(_session()))
    res = invoke(["compress", str(src), "--tail-tokens", "3000", "--config", str(config)])
    assert res.status == 0 and "minimum gain of 1,000,000" in res.stderr


def test_gate_declines_when_it_would_not_repay():
    cost = {"saved_per_request": 2_000, "payback_requests": 40, "saving_per_request_usd": "0.0006",
            "one_time_usd": "0.024"}
    assert "pays back after 40 requests, 3 expected" in costs.gate(cost, 3, min_gain=0, min_saving_usd=None)


def test_expected_requests_count_from_the_last_summary():
    from hermesctx.summary.text import LEGACY_PREFIX

    msgs = [{"role": "assistant", "content": "a"}, {"role": "user", "content": f"{LEGACY_PREFIX} old turns"},
            {"role": "assistant", "content": "b"}, {"role": "assistant", "content": "c"}]
    assert costs.expected_requests(msgs) == 2
    assert costs.expected_requests(msgs[:1]) == 1
    assert costs.expected_requests([{"role": "user", "content": "hi"}]) == 1  # at least one


def test_unpriced_model_has_token_figures_only(tmp_path):
    res, report = _report(tmp_path, doc=_session(model="my-local-model"))
    assert report["compressed"] and report["cost"]["priced"] is False
    assert report["cost"]["summary_call_usd"] is None and report["cost"]["saved_per_request"] > 0


def test_estimate_forecast(tmp_path):
    src = tmp_path / "in.json"
    src.write_text(json.dumps(_session()))
    res = invoke(["estimate", str(src), "--forecast", "--format", "json"])
    assert res.status == 0
    fc = res.json["forecast"]
    assert fc["compressible"] and fc["saves_per_request"] > 0 and fc["breaks_cached"] > fc["saves_per_request"]
    assert fc["payback_requests"] == fc["cost"]["payback_requests"] and fc["worth_it"] is (
        fc["payback_requests"] <= fc["expected_requests"])
    table = invoke(["estimate", str(src), "--forecast", "--format", "table"]).stdout.decode()
    assert table.splitlines()[1] == fc["line"]
    assert f"pays back after {fc['payback_requests']:,} requests" in fc["line"]
    plain = invoke(["estimate", str(src), "--format", "json"]).json
    assert "forecast" not in plain  # only when asked


def test_estimate_forecast_of_a_short_transcript(tmp_path):
    src = tmp_path / "in.json"
    src.write_text(json.dumps({"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "hi"}]}))
    fc = invoke(["estimate", str(src), "--forecast", "--format", "json"]).json["forecast"]
    assert fc["compressible"] is False and "too few messages" in fc["line"]
