"""Context windows (Hermes's offline resolution) and the two budget rule sets (decision D1)."""

import pytest

from hermesctx.budgets import compute_budgets, pressure_percent, summary_budget
from hermesctx.models import DEFAULT_CONTEXT_LENGTH, resolve_context_length, strip_provider_prefix


@pytest.mark.parametrize("model,length", [
    ("claude-sonnet-4-5", 200_000), ("anthropic/claude-sonnet-4", 200_000),
    ("claude-opus-4-6", 1_000_000), ("CLAUDE-OPUS-4-7", 1_000_000),
    ("openrouter/anthropic/claude-opus-4.6", 1_000_000), ("gpt-4o", 128_000),
    ("gpt-4.1-mini", 1_047_576), ("gpt-5.4-mini", 400_000), ("gpt-5.1-chat-latest", 128_000),
    ("gpt-5.5-pro", 1_050_000), ("gemini-2.5-pro", 1_048_576), ("gemma-2-9b", 8_192),
    ("gemma-4-31b-it", 256_000), ("meta-llama/Llama-3.1-8B-Instruct", 131_072),
    ("ollama/mistral", 131_072),  # contains "llama"
    ("deepseek-ai/DeepSeek-V3.2", 128_000),  # capitalised keys never match
    ("grok-2-vision-1212", 8_192), ("x-ai/grok-4.20-0309-reasoning", 2_000_000),
    ("local:my-model", 256_000), ("openrouter:claude-opus-4-6", 1_000_000),
    ("ollama:qwen3:8b", 131_072), ("claude:latest", 200_000), ("o3-mini", 256_000), ("", 256_000),
])
def test_context_length_table(model, length):
    assert resolve_context_length(model).length == length


def test_unknown_model_is_flagged_as_default_and_flag_wins():
    window = resolve_context_length("my-own-model")
    assert (window.length, window.source) == (DEFAULT_CONTEXT_LENGTH, "default")
    assert resolve_context_length("my-own-model", context_length=4096).length == 4096
    assert resolve_context_length("gpt-4o", context_length=0).length == 128_000  # 0 is ignored


def test_codex_table_only_for_openai_codex():
    assert resolve_context_length("gpt-5.5", provider="openai-codex").length == 272_000
    assert resolve_context_length("gpt-5.3-codex-spark", provider="openai-codex").length == 128_000
    assert resolve_context_length("gpt-4.1", provider="openai-codex").length == 1_047_576
    assert resolve_context_length("gpt-5.5").length == 1_050_000


def test_strip_provider_prefix_keeps_ollama_tags():
    assert strip_provider_prefix("local:my-model") == "my-model"
    assert strip_provider_prefix("qwen:0.5b") == "qwen:0.5b"
    assert strip_provider_prefix("deepseek:latest") == "deepseek:latest"
    assert strip_provider_prefix("https://x:1/y") == "https://x:1/y"


def test_documented_rules():
    b = compute_budgets(200_000)
    assert (b.threshold_tokens, b.tail_token_budget, b.max_summary_tokens) == (100_000, 20_000, 10_000)
    b = compute_budgets(262_144)
    assert (b.threshold_tokens, b.tail_token_budget, b.max_summary_tokens) == (131_072, 26_214, 12_000)
    assert compute_budgets(200_000, threshold=0.5).threshold_percent == 0.5
    assert compute_budgets(200_000).hygiene_tokens == 170_000


# (ctx, threshold_tokens, tail, max_summary) from Hermes 0.19.0 (spec 10 §3.8)
HERMES_TABLE = [
    (8_192, 6_963, 1_392, 409), (32_768, 27_852, 5_570, 1_638), (64_000, 54_400, 10_880, 3_200),
    (65_536, 64_000, 12_800, 3_276), (128_000, 96_000, 19_200, 6_400), (200_000, 150_000, 30_000, 10_000),
    (262_144, 196_608, 39_321, 10_000), (400_000, 300_000, 60_000, 10_000),
    (512_000, 256_000, 51_200, 10_000), (1_000_000, 500_000, 100_000, 10_000),
]


@pytest.mark.parametrize("ctx,threshold,tail,summary", HERMES_TABLE)
def test_hermes_rules_table(ctx, threshold, tail, summary):
    b = compute_budgets(ctx, rules="hermes-0.19")
    assert (b.threshold_tokens, b.tail_token_budget, b.max_summary_tokens) == (threshold, tail, summary)


def test_hermes_rules_corners():
    assert compute_budgets(600_000, threshold=0.57, rules="hermes-0.19").threshold_tokens == 341_999
    assert compute_budgets(200_000, rules="hermes-0.19", max_tokens=32_768).threshold_tokens == 125_424
    assert compute_budgets(128_000, rules="hermes-0.19", max_tokens=100_000).threshold_tokens == 23_800
    assert compute_budgets(8_192, rules="hermes-0.19", max_tokens=32_768).threshold_tokens == 6_963
    assert compute_budgets(85_333, rules="hermes-0.19").threshold_tokens == 64_000
    assert compute_budgets(200_000, rules="hermes-0.19", target_ratio=0.05).tail_token_budget == 15_000
    b = compute_budgets(272_000, rules="hermes-0.19", model="gpt-5.5", provider="openai-codex")
    assert (b.threshold_tokens, b.tail_token_budget) == (231_200, 46_240)
    assert b.override == {"model": "gpt-5.5", "from": 0.5, "to": 0.85}
    # the Codex autoraise never lowers a higher global threshold
    assert compute_budgets(272_000, rules="hermes-0.19", threshold=0.9, model="gpt-5.5",
                           provider="openai-codex").override is None


def test_summary_budget_floor_and_cap():
    assert summary_budget(33, 10_000) == 2_000
    assert summary_budget(12_508, 10_000) == 2_501
    assert summary_budget(100_008, 10_000) == 10_000
    assert summary_budget(100_000, 1_638) == 2_000  # the floor wins over a small cap


def test_pressure_rounds_half_to_even():
    assert pressure_percent(1_000, 200_000) == 0
    assert pressure_percent(3_000, 200_000) == 2
    assert pressure_percent(300_000, 200_000) == 100


def test_provider_is_compared_as_given():
    """Hermes's resolver compares the provider string exactly: only ``openai-codex`` is Codex."""
    assert resolve_context_length("gpt-5.5", provider="openai-codex").length == 272_000
    assert resolve_context_length("gpt-5.5", provider="OpenAI-Codex").length == 1_050_000
    assert resolve_context_length("gpt-5.2", provider=" openai-codex").length == 400_000


@pytest.mark.parametrize("model,length", [
    ("anthropic.claude-sonnet-4-6-20250514-v1:0", 1_000_000),
    ("us.anthropic.claude-opus-4-20250514-v1:0", 200_000),
    ("amazon.nova-pro-v1:0", 300_000),
    ("amazon.nova-micro-v1:0", 128_000),
    ("meta.llama3-70b-instruct-v1:0", 128_000),  # not in the Bedrock table: its default
    ("gpt-4.1", 128_000),
])
def test_bedrock_table(model, length):
    window = resolve_context_length(model, provider="bedrock")
    assert window.length == length
    assert window.source == ("default" if window.matched is None else "bedrock-table")


def test_bedrock_only_for_the_exact_provider_name():
    assert resolve_context_length("amazon.nova-pro-v1:0", provider="Bedrock").length == 256_000
    assert resolve_context_length("gpt-4.1", provider="Bedrock").length == 1_047_576


def test_model_threshold_override_ignores_surrounding_spaces():
    b = compute_budgets(272_000, rules="hermes-0.19", model=" gpt-5.5 ", provider="openai-codex")
    assert (b.threshold_percent, b.threshold_tokens) == (0.85, 231_200)
    b = compute_budgets(200_000, threshold=0.9, rules="hermes-0.19", model="trinity-large-thinking ")
    assert (b.threshold_percent, b.threshold_tokens) == (0.75, 150_000)
