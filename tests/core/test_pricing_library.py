"""Prices from the maintained library genai-prices (pinned, shipped as data/pricing-library.json):
in the commands they fill the keys Hermes's snapshot lacks, never override it (D9), and say where
each price came from; the library API keeps Hermes's answers unless asked (library=True)."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from hermesctx.pricing import (
    builtin_table,
    estimate_cost,
    guess_billing_provider,
    library_table,
    parse_table,
    prompt_cost,
)
from tests.conftest import invoke


@pytest.mark.parametrize("model,provider,price", [("gpt-5", "openai", "1.25"), ("o4-mini", "openai", "1.1"),
                                                  ("gemini-2.5-pro", "google", "1.25")])
def test_models_the_issue_named_are_priced(model, provider, price):
    usage = {"input_tokens": 1_000_000, "output_tokens": 0, "cache_read_tokens": 0, "cache_write_tokens": 0}
    cost = estimate_cost(usage, model, provider=provider, library=True)
    assert cost["status"] == "estimated" and Decimal(cost["amount_usd"]) == Decimal(price)
    assert cost["pricing_version"] and cost["source_url"].startswith("https://")


def test_library_rows_fill_gaps_and_never_override_hermes():
    library, hermes = library_table(), builtin_table()
    assert ("openai", "gpt-5") in library and ("openai", "gpt-5") not in hermes
    assert all(e["source"] == "genai-prices" and e["pricing_version"].startswith("genai-prices-")
               for e in library.values())
    gpt5 = estimate_cost({"input_tokens": 10}, "gpt-5", provider="openai", library=True)
    assert (gpt5["source"], gpt5["pricing_version"]) == ("genai-prices", "genai-prices-0.2.3")
    assert estimate_cost({"input_tokens": 10}, "gpt-5", provider="openai")["status"] == "unknown"  # as Hermes
    sonnet = estimate_cost({"input_tokens": 10}, "claude-sonnet-4-5", provider="anthropic", library=True)
    assert sonnet["source"] == "official_docs_snapshot"  # Hermes's row, though the library has one


def test_normalize_usage_prices_gpt5_from_the_library(tmp_path):
    result = invoke(["normalize-usage", "--model", "gpt-5", "--billing-provider", "auto"],
                    {"prompt_tokens": 2_000_000, "completion_tokens": 100_000})
    cost = result.json["cost"]
    assert Decimal(cost["amount_usd"]) == Decimal("2.5") + Decimal("1.0")
    assert cost["source"] == "genai-prices"
    table = {"prices": [{"provider": "openai", "model": "gpt-4o", "input": 1, "output": 1}]}
    (tmp_path / "p.json").write_text(json.dumps(table))
    replaced = invoke(["normalize-usage", "--model", "gpt-5", "--billing-provider", "openai",
                       "--pricing", str(tmp_path / "p.json")], {"prompt_tokens": 1, "completion_tokens": 1})
    assert replaced.json["cost"]["status"] == "unknown"  # --pricing FILE replaces both tables


def test_guess_prefers_hermes_table_owners():
    # the library lists claude-sonnet-4-5 under anthropic and google; Hermes's table only anthropic
    assert guess_billing_provider("chat", "claude-sonnet-4-5", library=True) == "anthropic"
    assert guess_billing_provider("chat", "o4-mini", library=True) == "openai"
    assert guess_billing_provider("chat", "mistral-large", library=True) == "mistral"
    assert guess_billing_provider("chat", "mistral-large") == "openai"  # Hermes's table only


def test_tiered_price_applies_to_every_token_past_the_start():
    table = parse_table({"prices": [{"provider": "google", "model": "g", "input": "1", "output": "2",
                                     "cache_read": "0.1", "tiers": {"input": [[200000, "3"]],
                                                                     "output": [[200000, "4"]]}}]})
    small = estimate_cost({"input_tokens": 100_000, "output_tokens": 1_000_000}, "g", provider="google", table=table)
    assert Decimal(small["amount_usd"]) == Decimal("0.1") + Decimal("2")
    at = estimate_cost({"input_tokens": 200_000}, "g", provider="google", table=table)
    assert Decimal(at["amount_usd"]) == Decimal("0.2")  # not past the start
    big = estimate_cost({"input_tokens": 150_000, "cache_read_tokens": 60_000, "output_tokens": 1_000_000},
                        "g", provider="google", table=table)  # the prompt (210,000) decides
    assert Decimal(big["amount_usd"]) == Decimal("0.45") + Decimal("0.006") + Decimal("4")


def test_estimate_reports_the_prompt_cost_and_its_source():
    doc = [{"role": "user", "content": "hello"}]
    report = invoke(["estimate", "--model", "gpt-5"], doc).json
    cost = report["prompt_cost"]
    assert Decimal(cost["amount_usd"]) == Decimal(report["prompt_tokens"]) * Decimal("1.25") / 1_000_000
    assert (cost["source"], cost["input_usd_per_mtok"]) == ("genai-prices", "1.25")
    assert "prompt_cost" not in invoke(["estimate", "--model", "my-own-model"], doc).json
    table = invoke(["estimate", "--model", "gpt-5", "--format", "table"], doc).stdout.decode()
    assert "\nprompt cost        $" in table and "(genai-prices, genai-prices-0.2.3)" in table
    assert prompt_cost(10, None) is None


def test_the_shipped_library_file_is_well_formed():
    from importlib import resources

    doc = json.loads(resources.files("hermesctx").joinpath("data/pricing-library.json").read_text())
    assert "genai-prices 0.2.3" in doc["about"]
    keys = [(r["provider"], r["model"]) for r in doc["prices"]]
    assert len(keys) == len(set(keys)) and keys == sorted(keys)
