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


# --- adversarial requests: the stage function and the CLI against Hermes ---------------------

_REQUEST_SNIPPET = """
from agent.model_metadata import (estimate_messages_tokens_rough as messages_rough,
                                  estimate_request_tokens_rough as request_rough,
                                  _estimate_tools_tokens_rough as tools_rough)
import agent.model_metadata as mm
from agent.context_compressor import _estimate_msg_budget_tokens as tail

def safe(f):
    try:
        return f()
    except Exception as exc:
        return "error: " + type(exc).__name__

result = []
for case in data:
    msgs, tools, system = case["doc"]["messages"], case["doc"].get("tools"), case["system"] or ""
    mm._TOOLS_TOKENS_CACHE.clear()
    result.append({"request": safe(lambda: request_rough(msgs, system_prompt=system, tools=tools)),
                   "messages": safe(lambda: messages_rough(msgs)),
                   "per": [safe(lambda: messages_rough([m])) for m in msgs],
                   "tail": [safe(lambda: tail(m)) if isinstance(m, dict) else None for m in msgs]})
"""


def _request_doc(case: dict) -> dict:
    return case["doc"] if case["system"] is None else {"system": case["system"], **case["doc"]}


@pytest.mark.parametrize("batch", range(2))
def test_adversarial_requests_match_hermes(batch):
    """Images in every encoding, odd content types, escapes, surrogates, numbers, tool calls and
    schemas, odd items: ``estimate --method rough`` (stage and CLI) gives Hermes's figures."""
    from conftest import invoke

    from hermesctx.messages import lenient_input
    from hermesctx.stages.estimate import estimate
    from oracle.adversarial import Gen as Adversarial

    cases = [Adversarial(seed).case() for seed in range(batch * 1000, batch * 1000 + 1000)]
    expected = hermes(_REQUEST_SNIPPET, cases)
    compared = 0
    for k, (case, want) in enumerate(zip(cases, expected)):
        if isinstance(want["request"], str):  # Hermes raised (a list or object as a part type)
            continue
        raw = json.dumps(_request_doc(case))
        with lenient_input():  # odd items and roles, measured as Hermes measures them (D14)
            report = estimate(json.loads(raw), method="rough", context_length=1000, per_message=True)
        got = {"request": report["tokens"]["total"], "messages": report["tokens"]["messages"],
               "per": [row["tokens"] for row in report["per_message"]],
               "tail": [row["tail_tokens"] for row in report["per_message"]]}
        want = {**want, "tail": [t if isinstance(t, int) else None for t in want["tail"]]}
        got["tail"] = [t if w is not None else None for t, w in zip(got["tail"], want["tail"])]
        assert got == want, k
        if k % 10 == 0:
            r = invoke(["estimate", "--lenient", "--method", "rough", "--per-message", "--context-length", "1000"],
                       raw.encode())
            assert r.status == 0, r.stderr
            assert r.json["tokens"]["total"] == want["request"], k
            assert [row["tokens"] for row in r.json["per_message"]] == want["per"], k
        compared += 1
    assert compared > 950


_NUMBERS = ["1E5", "1.0e-3", "-0", "-0.0", "0.0000001", "1e16", "1e+16", "10000000000000000.0",
            "123456789012345678", "1.5e300", "1e-320", "2.50", "100", "9007199254740993",
            "-9223372036854775808", "9223372036854775808", "99999999999999999999", "0e0", "5E-324"]
_STRINGS = ['"\\u00e9"', '"\\ud83d\\ude00"', '"\\ud800"', '"a\\/b"', '"\\b\\f"', '"\\u0000"',
            '"caf\\u00e9 \\u2028"', '"\\"q\\""', "\"it's\"", '"\\udc00\\ud800"', '"\\uDBFF\\uDFFF"']


def _raw_request(rng: random.Random) -> str:
    """JSON text as a client may send it: duplicate keys, number spellings, escapes, spacing."""
    msgs = []
    for _ in range(rng.randint(1, 4)):
        values = _STRINGS + _NUMBERS + [
            "[" + ", ".join(rng.choice(_NUMBERS + _STRINGS) for _ in range(3)) + "]",
            '{"_multimodal": ' + rng.choice(_NUMBERS) + ', "text_summary": ' + rng.choice(_STRINGS) + "}"]
        items = ['"role": "user"', '"content": ' + rng.choice(values)]
        if rng.random() < 0.5:
            items.append('"role": ' + rng.choice(['"assistant"', '"tool"', "null", "1e2"]))
        if rng.random() < 0.5:
            items.append('"x": ' + rng.choice(_NUMBERS))
        if rng.random() < 0.3:
            items.append('"content": ' + rng.choice(_STRINGS))
        rng.shuffle(items)
        space = rng.choice(["", " ", "\n  ", "\t"])
        msgs.append("{" + space + ("," + space).join(items) + space + "}")
    return '{"messages": [' + ", ".join(msgs) + "]}"


def test_json_text_is_read_as_hermes_reads_it():
    """Duplicate keys (first place, last value), number spellings and escapes reach the printed
    form exactly as ``json.loads`` leaves them."""
    from conftest import invoke

    rng = random.Random(11)
    raws = [_raw_request(rng) for _ in range(400)]
    expected = hermes("""
from agent.model_metadata import estimate_messages_tokens_rough as rough
result = []
for raw in data:
    msgs = json.loads(raw)["messages"]
    result.append([rough(msgs), [rough([m]) for m in msgs]])
""", raws)
    for raw, want in zip(raws, expected):
        r = invoke(["estimate", "--lenient", "--method", "rough", "--per-message", "--context-length", "1000"],
                   raw.encode("utf-8", "surrogatepass"))
        assert r.status == 0, r.stderr
        assert [r.json["tokens"]["messages"], [row["tokens"] for row in r.json["per_message"]]] == want, raw


def _model_names() -> list[str]:
    from hermesctx.models import (
        BEDROCK_CONTEXT_LENGTHS,
        CODEX_CONTEXT_LENGTHS,
        CONTEXT_LENGTHS,
        PROVIDER_PREFIXES,
    )

    rng = random.Random(3)
    keys = [k for table in (CONTEXT_LENGTHS, CODEX_CONTEXT_LENGTHS, BEDROCK_CONTEXT_LENGTHS) for k, _ in table]
    prefixes = sorted(PROVIDER_PREFIXES) + ["unknown", "http", "Anthropic", " openrouter "]
    names = set(keys + ["", " ", "o3-mini", "gpt-3.5-turbo", "qwen:0.5b", "deepseek:latest", "https:claude",
                        "meta.llama3-70b-instruct-v1:0", "us.anthropic.claude-opus-4-7", "gemma4:31b-cloud"])
    for key in keys:
        names.update({key.upper(), key.title(), "anthropic/" + key, "openrouter/anthropic/" + key,
                      key + "-20250101", key + ":free", f" {key} ", key[: rng.randint(0, len(key))],
                      rng.choice(prefixes) + ":" + key,
                      rng.choice(prefixes) + ":" + rng.choice(["latest", "7b", "q4_0", "Chat", " 3b"]) + key})
    return sorted(names)


def test_every_table_row_and_its_variants_resolve_like_hermes():
    """Every key of the three tables, cased, prefixed (slash and ``provider:``), dated, tagged,
    cut short; no provider, Codex, Bedrock and near-miss provider spellings."""
    rng = random.Random(4)
    providers = ("", "openai-codex", "bedrock", "OpenAI-Codex", " openai-codex")
    cases = [[name, rng.choice(providers)] for name in _model_names()]  # ~1,600 (Hermes: ~15 ms each)
    got = hermes("""
from agent.model_metadata import get_model_context_length
result = [get_model_context_length(model, provider=provider) for model, provider in data]
""", cases)
    ours = [resolve_context_length(model, provider=provider).length for model, provider in cases]
    assert [(c, o, g) for c, o, g in zip(cases, ours, got) if o != g] == []


def test_hermes_budget_rules_for_models_and_overrides():
    """``--budget-rules hermes-0.19`` through the CLI: the context length found for the model,
    the per-model overrides (Codex autoraise, spark, Arcee, spaces and case in the name) and the
    compressor's floors, against the agent's threshold resolution plus ContextCompressor."""
    from conftest import invoke

    rng = random.Random(9)
    models = ["claude-sonnet-4-5", "claude-opus-4-6", "gpt-5.5", " gpt-5.5 ", "gpt-5.4-mini", "gpt-5.6-sol-pro",
              "gpt-5.3-codex-spark", "openai/gpt-5.5", "GPT-5.5", "gpt-5.55", "gpt-5.5.1", "gemma-2-9b",
              "trinity-large-thinking", "arcee/TRINITY-LARGE-THINKING ", "unknown-model", "solar-mini"]
    cases = []
    for _ in range(150):
        cases.append([rng.choice([None, None, 8_192, 65_536, 85_334, 200_000, 511_999, 512_000, rng.randint(1, 2_000_000)]),
                      rng.choice([0.5, 0.3, 0.57, 0.75, 0.85, 0.9, 1.0, round(rng.uniform(0.01, 1), 3)]),
                      rng.choice([0.2, 0.1, 0.333, 0.5, 0.8]),
                      rng.choice([None, None, 4096, 32_768, 100_000, rng.randint(1, 300_000)]),
                      rng.choice(models), rng.choice(["", "openai-codex", "openai", " OpenAI-Codex "])])
    expected = hermes("""
from agent.context_compressor import ContextCompressor
from agent.auxiliary_client import _compression_threshold_for_model, _is_codex_gpt54_or_gpt55, _is_codex_spark
from agent.agent_init import _resolve_compression_threshold
result = []
for ctx, pct, ratio, mt, model, provider in data:
    override = _compression_threshold_for_model(model, provider, allow_codex_gpt55_autoraise=True)
    codex = _is_codex_gpt54_or_gpt55(model, provider) or _is_codex_spark(model, provider)
    pct, _ = _resolve_compression_threshold(pct, override, model=model, is_codex_autoraise=codex)
    c = ContextCompressor(model, threshold_percent=pct, summary_target_ratio=ratio, config_context_length=ctx,
                          max_tokens=mt, provider=provider, quiet_mode=True)
    result.append([c.context_length, c.threshold_percent, c.threshold_tokens, c.tail_token_budget,
                   c.max_summary_tokens])
""", cases)
    for (ctx, pct, ratio, mt, model, provider), want in zip(cases, expected):
        args = ["estimate", "--method", "rough", "--budget-rules", "hermes-0.19", "--model", model,
                "--threshold", repr(pct), "--target-ratio", repr(ratio)]
        args += ["--context-length", str(ctx)] if ctx else []
        args += ["--max-tokens", str(mt)] if mt else []
        args += ["--provider", provider] if provider else []
        r = invoke(args, b"[]")
        assert r.status == 0, r.stderr
        b = r.json["budgets"]
        got = [r.json["context_length"], b["threshold_percent"], b["threshold_tokens"], b["tail_token_budget"],
               b["max_summary_tokens"]]
        assert got == want, (ctx, pct, ratio, mt, model, provider)
