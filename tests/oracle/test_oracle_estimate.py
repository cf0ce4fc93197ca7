"""Differential: Hermes 0.19.0's estimators, context lengths and budgets vs hermesctx, on seeded
random inputs (run with `make oracle`)."""

import json
import random

import pytest

from hermesctx import tokens
from hermesctx.budgets import compute_budgets
from hermesctx.models import resolve_context_length
from oracle.harness import hermes, needs_oracle

pytestmark = [pytest.mark.oracle, needs_oracle]

_ALPHABET = ["a", "é", "你", "😀", "\n", "\t", "'", '"', "\\", "\x00", "\u2028", "\u00a0", "\u3000",
             "\ufeff", " ", "xxxxx", "\x7f", "\u00ad", "\u200b"]


class Gen:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def text(self, n=None):
        n = self.rng.randint(0, 30) if n is None else n
        return "".join(self.rng.choice(_ALPHABET) for _ in range(n))

    def value(self, depth=0):
        r = self.rng.random()
        if depth > 2 or r < 0.3:
            return self.text()
        if r < 0.4:
            return self.rng.choice([None, True, False, 0, 1.5, -3, 1e20, 12345678901234567])
        if r < 0.55:
            return [self.value(depth + 1) for _ in range(self.rng.randint(0, 3))]
        return {(self.text(4) or "k"): self.value(depth + 1) for _ in range(self.rng.randint(0, 3))}

    def part(self):
        kind = self.rng.choice(["text", "image_url", "input_image", "image", "input_text", "tool_result"])
        if kind in ("text", "input_text"):
            return {"type": kind, "text": self.text()}
        if kind == "tool_result":
            return {"type": kind, "tool_use_id": self.text(5), "content": self.text()}
        return {"type": kind, "image_url": {"url": "data:" + self.text(10)}}

    def message(self):
        rng = self.rng
        msg = {"role": rng.choice(["user", "assistant", "tool", "system"])}
        r = rng.random()
        if r < 0.4:
            msg["content"] = self.text(rng.randint(0, 200))
        elif r < 0.6:
            msg["content"] = [self.part() if rng.random() < 0.8 else self.text() for _ in range(rng.randint(0, 4))]
        elif r < 0.7:
            msg["content"] = None
        elif r < 0.8:
            msg["content"] = {"_multimodal": True, "text_summary": self.text(), "content": [self.part(), self.part()]}
        else:
            msg["content"] = self.value()
        if rng.random() < 0.3:
            msg["tool_calls"] = [{"id": self.text(5), "type": "function",
                                  "function": {"name": self.text(5), "arguments": json.dumps({"p": self.text()})}}
                                 for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.1:
            msg["_anthropic_content_blocks"] = [self.part(), self.part()]
        for key in ("reasoning", "reasoning_details", "extra", "codex_reasoning_items"):
            if rng.random() < 0.1:
                msg[key] = self.value()
        return msg


def test_rough_estimators_match_hermes():
    gen = Gen(20261123)
    cases = [[gen.message() for _ in range(gen.rng.randint(0, 6))] for _ in range(300)]
    tools = [[{"type": "function", "function": {"name": gen.text(6), "description": gen.text(),
                                                "parameters": gen.value()}}
              for _ in range(gen.rng.randint(0, 3))] for _ in range(60)]
    got = hermes("""
from agent.model_metadata import estimate_messages_tokens_rough, _estimate_tools_tokens_rough
import agent.model_metadata as mm
from agent.context_compressor import _estimate_msg_budget_tokens
result = {"rough": [estimate_messages_tokens_rough(c) for c in data["cases"]],
          "tail": [[_estimate_msg_budget_tokens(m) for m in c] for c in data["cases"]],
          "tools": []}
for t in data["tools"]:
    mm._TOOLS_TOKENS_CACHE.clear()
    result["tools"].append(_estimate_tools_tokens_rough(t))
""", {"cases": cases, "tools": tools})
    assert [tokens.rough_messages(c) for c in cases] == got["rough"]
    assert [[tokens.tail_tokens(m) for m in c] for c in cases] == got["tail"]
    assert [tokens.rough_tools(t) for t in tools] == got["tools"]


MODELS = ["claude-sonnet-4-5", "CLAUDE-OPUS-4-7", "ollama/mistral", "gpt-4o", "gpt-5.2", "o3",
          "local:my-model", "openrouter:claude-opus-4-6", "ollama:qwen3:8b", "deepseek:latest",
          "qwen:0.5b", "claude:latest", "deepseek-ai/DeepSeek-V3.2", "gemma-2-9b", "",
          "grok-2-vision-1212", "x-ai/grok-4.20-0309-reasoning", "moonshotai/kimi-k3", "gpt-5.5",
          "gpt-5.3-codex-spark", "MiniMax-M3", "glm-4.6", "solar-pro2", "hy3-preview", "trinity-x"]


def test_context_lengths_match_hermes():
    got = hermes("""
from agent.model_metadata import get_model_context_length as g
result = [g(m) for m in data] + [g(m, provider="openai-codex") for m in data]
""", MODELS)
    ours = ([resolve_context_length(m).length for m in MODELS]
            + [resolve_context_length(m, provider="openai-codex").length for m in MODELS])
    assert ours == got


def test_hermes_budget_rules_match_the_compressor():
    rng = random.Random(5)
    cases = [(rng.choice([8_192, 32_768, 65_536, 85_333, 85_335, 128_000, 200_000, 262_144, 511_999,
                          512_000, 600_000, 1_000_000, 1_050_000]),
              rng.choice([0.3, 0.5, 0.57, 0.75, 0.85, 1.0]), rng.choice([0.1, 0.2, 0.333, 0.5, 0.8]),
              rng.choice([None, 8_192, 32_768, 100_000])) for _ in range(80)]
    got = hermes("""
from agent.context_compressor import ContextCompressor
result = []
for ctx, pct, ratio, mt in data:
    c = ContextCompressor("claude-sonnet-4-5", threshold_percent=pct, summary_target_ratio=ratio,
                          config_context_length=ctx, max_tokens=mt, quiet_mode=True)
    result.append([c.threshold_tokens, c.tail_token_budget, c.max_summary_tokens])
""", cases)
    ours = []
    for ctx, pct, ratio, mt in cases:
        b = compute_budgets(ctx, threshold=pct, target_ratio=ratio, rules="hermes-0.19", max_tokens=mt,
                            model="claude-sonnet-4-5")
        ours.append([b.threshold_tokens, b.tail_token_budget, b.max_summary_tokens])
    assert ours == got
