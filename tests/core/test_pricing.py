"""Cost: Hermes's billing routes and price snapshot (spec 40 §C.2-C.7), --pricing override, and
the saving prompt caching gave (ours)."""

import json

import pytest
from conftest import invoke

from hermesctx.pricing import add_costs, billing_route, builtin_table, estimate_cost

A = (25, 410, 48000, 3100)
OA = (904, 900, 4096, 0)


def _usage(a, b, c, d):
    return {"input_tokens": a, "output_tokens": b, "cache_read_tokens": c, "cache_write_tokens": d}


# K rows of 40 §C.6: (model, provider, usage, amount_usd, status, source, label, pricing_version, notes)
K = [
    ("K1", "claude-sonnet-4-5", "anthropic", A, "0.032250", "estimated", "official_docs_snapshot", "~$0.03",
     "anthropic-pricing-2026-05", []),
    ("K2", "anthropic/claude-opus-4.7", None, A, "0.053750", "estimated", "official_docs_snapshot", "~$0.05",
     "anthropic-pricing-2026-05", []),
    ("K3", "claude-sonnet-4-5-20250929", "anthropic", A, None, "unknown", "none", "n/a", None, []),
    ("K4", "claude-sonnet-4-5", None, A, None, "unknown", "none", "n/a", None, []),
    ("K5", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "bedrock", A, "0.032250", "estimated",
     "official_docs_snapshot", "~$0.03", "bedrock-pricing-2026-04", []),
    ("K6", "gpt-4o", "openai", OA, "0.01638", "estimated", "official_docs_snapshot", "~$0.02",
     "openai-pricing-2026-03-16", []),
    ("K7", "gpt-4o", "openai", (1000, 200, 6000, 3000), None, "unknown", "official_docs_snapshot", "n/a", None,
     ["cache-write pricing unavailable for route"]),
    ("K8", "gemini-2.5-pro", "google", (3000, 300, 0, 0), "0.00675", "estimated", "official_docs_snapshot",
     "~$0.01", "google-pricing-2026-03-16", []),
    ("K9", "gemini-2.5-pro", "google", (3000, 300, 1000, 0), None, "unknown", "official_docs_snapshot", "n/a",
     None, ["cache-read pricing unavailable for route"]),
    ("K10", "gemini-2.5-pro", "vertex", (3000, 300, 0, 0), None, "unknown", "none", "n/a", None, []),
    ("K11", "gpt-5.6-sol", "openai-codex", OA, "0", "included", "none", "included", "included-route", []),
    ("K12", "deepseek-chat", "deepseek", (500, 100, 2500, 0), "0.000105", "estimated", "official_docs_snapshot",
     "~$0.00", "deepseek-pricing-2026-07", []),
    ("K13", "my-model", "together", OA, None, "unknown", "none", "n/a", None, []),
    ("K14", "claude-haiku-4-5", "anthropic", (0, 0, 0, 0), "0.00", "estimated", "official_docs_snapshot", "~$0.00",
     "anthropic-pricing-2026-05", []),
    ("K15", "claude-haiku-4-5", "anthropic", (5000, 0, 0, 0), "0.005", "estimated", "official_docs_snapshot",
     "~$0.00", "anthropic-pricing-2026-05", []),
    ("K16", "claude-haiku-4-5", "anthropic", (15000, 0, 0, 0), "0.015", "estimated", "official_docs_snapshot",
     "~$0.02", "anthropic-pricing-2026-05", []),
    ("K17", "claude-haiku-4-5", "anthropic", (25000, 0, 0, 0), "0.025", "estimated", "official_docs_snapshot",
     "~$0.02", "anthropic-pricing-2026-05", []),
    ("K18", "claude-haiku-4-5", "anthropic", (1000000, 1000000, 0, 0), "6.00", "estimated",
     "official_docs_snapshot", "~$6.00", "anthropic-pricing-2026-05", []),
    ("K19", "claude-3-haiku-20240307", "anthropic", (-1000, 0, 0, 0), "-0.00025", "estimated",
     "official_docs_snapshot", "~$-0.00", "anthropic-pricing-2026-05", []),
    ("K20", "MiniMax-M2.7", "minimax", (1000, 1000, 10, 0), None, "unknown", "official_docs_snapshot", "n/a",
     None, ["cache-read pricing unavailable for route"]),
]


@pytest.mark.parametrize("row", K, ids=[r[0] for r in K])
def test_spec_cost_examples(row):
    _, model, provider, usage, *expected = row
    r = estimate_cost(_usage(*usage), model, provider=provider)
    assert [r["amount_usd"], r["status"], r["source"], r["label"], r["pricing_version"], r["notes"]] == expected


@pytest.mark.parametrize("args, expected", [
    (("anthropic/claude-opus-4.7",), ("anthropic", "claude-opus-4.7", "official_docs_snapshot")),
    (("Anthropic/claude-opus-4.7",), ("unknown", "claude-opus-4.7", "unknown")),
    (("claude-sonnet-4-5",), ("unknown", "claude-sonnet-4-5", "unknown")),
    (("google/gemini-2.5-pro",), ("google", "gemini-2.5-pro", "unknown")),
    (("anthropic/claude-sonnet-4.5", "openrouter"), ("openrouter", "anthropic/claude-sonnet-4.5", "official_models_api")),
    (("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "bedrock"),
     ("bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "unknown")),
    (("accounts/fireworks/routers/kimi-k2p6-turbo", None, "https://api.fireworks.ai/inference/v1"),
     ("fireworks", "kimi-k2p6-turbo", "official_docs_snapshot")),
    (("m", None, "http://LOCALHOST:8000"), ("custom", "m", "unknown")),
    (("", ""), ("unknown", "", "unknown")),
])
def test_billing_routes(args, expected):
    route = billing_route(*args)
    assert (route.provider, route.model, route.billing_mode) == expected


def test_openrouter_is_unknown_offline():
    r = estimate_cost(_usage(*A), "anthropic/claude-sonnet-4.5", provider="openrouter")
    assert (r["amount_usd"], r["status"], r["source"], r["label"]) == (None, "unknown", "none", "n/a")


def test_snapshot_has_hermes_66_keys_with_source_and_date():
    table = builtin_table()
    assert len(table) == 66
    for (provider, model), entry in table.items():
        assert entry["source"] == "official_docs_snapshot"
        assert entry["pricing_version"] and any(ch.isdigit() for ch in entry["pricing_version"])
        assert model == model.lower()
        if provider != "minimax" and provider != "minimax-cn":
            assert entry["source_url"].startswith("https://")
    sonnet = table[("anthropic", "claude-sonnet-4-5")]
    assert [str(sonnet[k]) for k in ("input", "output", "cache_read", "cache_write")] == ["3.00", "15.00", "0.30", "3.75"]


def test_saving_from_caching_hand_computed():
    # K1: uncached = (25 + 48000 + 3100) * 3 / 1e6 + 410 * 15 / 1e6 = 0.153375 + 0.00615 = 0.159525
    r = estimate_cost(_usage(*A), "claude-sonnet-4-5", provider="anthropic")
    assert r["uncached_usd"] == "0.159525"
    assert r["saving_usd"] == "0.127275"  # 0.159525 - 0.032250
    # writing to the cache without reading it costs more than not caching: a negative saving
    w = estimate_cost(_usage(0, 0, 0, 1000000), "claude-sonnet-4-5", provider="anthropic")
    assert (w["amount_usd"], w["uncached_usd"], w["saving_usd"]) == ("3.75", "3.00", "-0.75")
    assert estimate_cost(_usage(*A), "claude-sonnet-4-5")["saving_usd"] is None


def test_pricing_file_overrides_the_snapshot(tmp_path):
    table = {"prices": [{"provider": "anthropic", "model": "claude-sonnet-4-5", "input": 1, "output": 2,
                         "cache_read": "0.1", "cache_write": "1.25", "source": "custom_contract",
                         "source_url": "https://example.com/contract", "pricing_version": "contract-2026-01"}]}
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(table))
    result = invoke(["normalize-usage", "--pricing", str(path), "--billing-provider", "anthropic",
                     "--model", "claude-sonnet-4-5"],
                    {"input_tokens": 1000000, "output_tokens": 1000000, "cache_read_input_tokens": 1000000})
    assert result.status == 0, result.stderr
    cost = result.json["cost"]
    assert Decimal_(cost["amount_usd"]) == Decimal_("3.1")
    assert (cost["source"], cost["pricing_version"], cost["source_url"]) == \
        ("custom_contract", "contract-2026-01", "https://example.com/contract")
    # the override replaces the table: a model only the snapshot knows is now unpriced
    other = invoke(["normalize-usage", "--pricing", str(path), "--billing-provider", "openai", "--model", "gpt-4o"],
                   {"prompt_tokens": 10, "completion_tokens": 1})
    assert other.json["cost"]["status"] == "unknown"


def Decimal_(text):  # noqa: N802 - local helper
    from decimal import Decimal

    return Decimal(text)


@pytest.mark.parametrize("doc, message", [
    ({"rows": []}, '"prices" array'),
    ({"prices": [{"provider": "x"}]}, "prices[0]"),
    ({"prices": [{"provider": "x", "model": "m", "input": "cheap"}]}, "numbers"),
])
def test_bad_pricing_file_is_bad_input(tmp_path, doc, message):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(doc))
    result = invoke(["normalize-usage", "--pricing", str(path), "--model", "m"], {"prompt_tokens": 1})
    assert result.status == 3
    assert message in result.stderr


def test_session_cost_is_the_sum_of_calls():
    calls = [estimate_cost(_usage(*A), "claude-sonnet-4-5", provider="anthropic"),
             estimate_cost(_usage(1200, 350, 0, 0), "claude-haiku-4-5", provider="anthropic")]
    total = add_costs(calls)
    assert total["amount_usd"] == "0.035200" and total["label"] == "~$0.04"
    assert total["saving_usd"] == "0.127275"
    unknown = add_costs(calls + [estimate_cost(_usage(*A), "nope", provider="anthropic")])
    assert (unknown["amount_usd"], unknown["status"], unknown["unpriced_calls"]) == (None, "unknown", 1)


@pytest.mark.parametrize("branch, model, expected", [
    ("anthropic", "claude-sonnet-4-5", "anthropic"), ("codex", "gpt-4.1", "openai"),
    ("openai", "deepseek-chat", "deepseek"), ("openai", "gpt-4o", "openai"), ("openai", "unknown-x", "openai"),
    ("openai", "kimi-k2p6", "fireworks"), ("anthropic", "anthropic/claude-opus-4.7", None),
])
def test_billing_provider_auto(branch, model, expected):
    from hermesctx.pricing import guess_billing_provider

    assert guess_billing_provider(branch, model) == expected


def test_auto_prices_a_mixed_session_log():
    from conftest import EXAMPLES

    result = invoke(["normalize-usage", "--sum", "--billing-provider", "auto", str(EXAMPLES / "usage-log.jsonl")])
    assert result.status == 0, result.stderr
    cost = result.json["cost"]
    # sonnet 0.032250 + o3 (904*10 + 900*40 + 4096*2.5)/1e6 + gpt-4o-mini (37*0.15 + 11*0.60)/1e6
    assert cost["amount_usd"] == "0.08754215" and cost["unpriced_calls"] == 0
    assert cost["models"] == ["claude-sonnet-4-5", "gpt-4o-mini", "o3"]
    default = invoke(["normalize-usage", "--sum", str(EXAMPLES / "usage-log.jsonl")])
    assert default.json["cost"]["status"] == "unknown"  # Hermes: a bare model name has no route


def test_pricing_file_with_a_1h_cache_write_rate(tmp_path):
    # Anthropic bills 1h cache writes at 2x the input price (5m writes: 1.25x)
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"prices": [{"provider": "anthropic", "model": "claude-sonnet-4-5", "input": "3",
                                            "output": "15", "cache_read": "0.30", "cache_write": "3.75",
                                            "cache_write_1h": "6", "pricing_version": "mine-2026-11"}]}))
    usage = {"input_tokens": 0, "output_tokens": 0, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 3100,
             "cache_creation": {"ephemeral_5m_input_tokens": 1000, "ephemeral_1h_input_tokens": 2100}}
    args = ["normalize-usage", "--billing-provider", "anthropic", "--model", "claude-sonnet-4-5"]
    builtin = invoke(args, usage).json["cost"]
    assert builtin["amount_usd"] == "0.011625"  # 3100 * 3.75 / 1e6, as Hermes
    mine = invoke([*args, "--pricing", str(path)], usage).json["cost"]
    assert Decimal_(mine["amount_usd"]) == Decimal_("0.01635")  # 1000 * 3.75 + 2100 * 6, per million
    assert mine["notes"] == ["1h cache writes priced at cache_write_1h"]
