"""Differential: Hermes 0.19.0's TrajectoryCompressor vs hermesctx.stages.trajectory on seeded
random trajectories, both with the same stub tokenizer (1 token = 1 whitespace word) and the
same stub summary (run with `make oracle`)."""

from __future__ import annotations

import random

import pytest

from hermesctx.stages import trajectory as T
from oracle.harness import hermes, needs_oracle

pytestmark = [pytest.mark.oracle, needs_oracle]

# Builds compressors without the constructor (it needs a HF tokenizer and credentials).
_SNIPPET = """
import logging
from types import SimpleNamespace
import trajectory_compressor as tc

class Words:
    def encode(self, text):
        if not isinstance(text, str):
            raise TypeError("not a string")
        return text.split()

def make(cfg, reply):
    comp = tc.TrajectoryCompressor.__new__(tc.TrajectoryCompressor)
    comp.config = tc.CompressionConfig(**cfg)
    comp.tokenizer = Words()
    comp.logger = logging.getLogger("oracle")
    comp.aggregate_metrics = tc.AggregateMetrics()
    comp._use_call_llm = False
    message = SimpleNamespace(content=reply)
    response = SimpleNamespace(choices=[SimpleNamespace(message=message)])
    comp.client = SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(
        create=lambda **kw: response)))
    return comp

result = []
for case in data:
    comp = make(case["config"], case["reply"])
    try:
        out, metrics = comp.process_entry(case["entry"])
        result.append({"entry": out, "metrics": metrics.to_dict()})
    except Exception as exc:
        result.append({"error": type(exc).__name__})
"""

ROLES = ["system", "human", "gpt", "tool", "tool", "gpt", "weird", None]
REPLIES = ["Read config.yaml: port 8080.", "  [CONTEXT SUMMARY]: padded  ", "", "x " * 30,
           "[CONTEXT SUMMARY]:nospace", "résumé ✓ 完成"]


def _turn(rng: random.Random) -> dict:
    role = rng.choice(ROLES)
    n = rng.choice([0, 1, 3, 8, 20, 60, 200])
    value = " ".join(rng.choice(["w", "é", "<tool_call>", "{\"a\": 1}", "x" * 700])
                     for _ in range(n))
    turn = {} if role is None else {"from": role}
    if rng.random() < 0.03:
        return turn  # no value
    turn["value"] = value
    if rng.random() < 0.05:
        turn["extra"] = {"keep": True}
    return turn


def _case(rng: random.Random) -> dict:
    n = rng.randint(0, 24)
    turns = [_turn(rng) for _ in range(n)]
    if n and rng.random() < 0.6:
        turns[0] = {"from": "system", "value": " ".join(["s"] * rng.randint(1, 80))}
    config = {
        "target_max_tokens": rng.choice([0, 20, 50, 100, 300, 1000]),
        "summary_target_tokens": rng.choice([0, 5, 10, 50]),
        "protect_first_system": rng.random() < 0.8, "protect_first_human": rng.random() < 0.8,
        "protect_first_gpt": rng.random() < 0.8, "protect_first_tool": rng.random() < 0.8,
        "protect_last_n_turns": rng.choice([0, 1, 2, 4, 6]),
        "add_summary_notice": rng.random() < 0.8,
        "metrics_per_trajectory": rng.random() < 0.8,
    }
    entry = {"id": rng.randint(0, 999), "conversations": turns, "model": "m"}
    if rng.random() < 0.05:
        entry = {"id": 1, "messages": []}
    return {"config": config, "reply": rng.choice(REPLIES), "entry": entry}


class Words:
    def encode(self, text):
        if not isinstance(text, str):
            raise TypeError("not a string")
        return text.split()


class Fixed:
    def __init__(self, reply):
        self.reply = reply

    def summarize(self, request):
        return self.reply


def ours(case: dict) -> dict:
    c = case["config"]
    config = T.TrajectoryConfig(
        target_max_tokens=c["target_max_tokens"], summary_target_tokens=c["summary_target_tokens"],
        protect_first_system=c["protect_first_system"], protect_first_human=c["protect_first_human"],
        protect_first_gpt=c["protect_first_gpt"], protect_first_tool=c["protect_first_tool"],
        protect_last_n_turns=c["protect_last_n_turns"], add_summary_notice=c["add_summary_notice"],
        metrics_per_trajectory=c["metrics_per_trajectory"])
    try:
        out, metrics = T.process_entry(case["entry"], config=config,
                                       count=T.encoder_counter(Words()),
                                       summarizer=Fixed(case["reply"]), sleep=lambda s: None)
    except Exception as exc:
        return {"error": type(exc).__name__}
    return {"entry": out, "metrics": metrics.to_dict()}


@pytest.mark.parametrize("seed", range(4))
def test_random_trajectories_match_hermes(seed):
    rng = random.Random(seed)
    cases = [_case(rng) for _ in range(150)]
    expected = hermes(_SNIPPET, cases)
    compressed = 0
    for case, want in zip(cases, expected):
        got = ours(case)
        assert got == want, case
        compressed += bool(got.get("metrics", {}).get("was_compressed"))
    assert compressed > 10  # the generator does reach the interesting branch


def test_malformed_values_fail_like_hermes():
    bad_value = {"conversations": [{"from": "system", "value": "s " * 50}, {"from": "human"},
                                   {"from": "gpt", "value": 5}] + [{"from": "gpt", "value": "w"}] * 6}
    none_in_region = {"conversations": [{"from": "system", "value": "s " * 50},
                                        {"from": "human", "value": "h"},
                                        {"from": "gpt", "value": "g " * 30},
                                        {"from": "tool", "value": "t " * 30},
                                        {"from": "gpt", "value": None},
                                        {"from": "gpt", "value": "x " * 40}] + [
        {"from": "gpt", "value": "w"}] * 5}
    cases = [{"config": {"target_max_tokens": 10}, "reply": "ok", "entry": entry}
             for entry in (bad_value, none_in_region)]
    for case in cases:
        case["config"].update(summary_target_tokens=5, protect_first_system=True,
                              protect_first_human=True, protect_first_gpt=True,
                              protect_first_tool=True, protect_last_n_turns=4,
                              add_summary_notice=True, metrics_per_trajectory=True)
    assert [ours(c) for c in cases] == hermes(_SNIPPET, cases)


_PARTS_SNIPPET = """
import trajectory_compressor as tc
TC = tc.TrajectoryCompressor
result = []
for case in data:
    comp = TC.__new__(TC)
    comp.config = tc.CompressionConfig(**case["config"])
    turns = case["turns"]
    protected, start, end = comp._find_protected_indices(turns)
    snaps = [TC._snap_boundary(turns, i, lo, hi) for i, lo, hi in case["snaps"]]
    try:
        rendered = comp._extract_turn_content_for_summary(turns, *case["render"])
    except Exception as exc:
        rendered = type(exc).__name__
    agg = tc.AggregateMetrics()
    for m in case["metrics"]:
        tm = tc.TrajectoryMetrics(**m)
        agg.add_trajectory_metrics(tm)
    agg.trajectories_failed = case["failed"]
    result.append({"protected": sorted(protected), "start": start, "end": end, "snaps": snaps,
                   "rendered": rendered, "aggregate": agg.to_dict()})
"""


def _parts_case(rng: random.Random) -> dict:
    turns = [_turn(rng) for _ in range(rng.randint(0, 20))]
    for turn in turns:
        if "value" in turn and rng.random() < 0.2:
            turn["value"] = "v" * rng.choice([2999, 3000, 3001, 5000])
    n = len(turns)
    snaps = [(i, lo, hi) for i, lo, hi in ((rng.randint(0, n), rng.randint(0, n), rng.randint(0, n))
                                           for _ in range(5))]
    start = rng.randint(0, n)
    metrics = []
    for _ in range(rng.randint(0, 5)):
        was = rng.random() < 0.5
        metrics.append({"original_tokens": rng.randint(0, 500), "compressed_tokens": rng.randint(0, 500),
                        "tokens_saved": rng.randint(-20, 300), "compression_ratio": rng.random(),
                        "original_turns": rng.randint(0, 30), "compressed_turns": rng.randint(0, 30),
                        "turns_removed": rng.randint(0, 9), "was_compressed": was,
                        "still_over_limit": rng.random() < 0.3,
                        "skipped_under_target": not was and rng.random() < 0.5,
                        "summarization_api_calls": rng.randint(0, 3),
                        "summarization_errors": rng.randint(0, 2)})
    return {"config": {"protect_first_system": rng.random() < 0.8,
                       "protect_first_human": rng.random() < 0.8,
                       "protect_first_gpt": rng.random() < 0.8,
                       "protect_first_tool": rng.random() < 0.8,
                       "protect_last_n_turns": rng.choice([0, 1, 4, 7])},
            "turns": turns, "snaps": snaps, "render": [start, rng.randint(start, n)],
            "metrics": metrics, "failed": rng.randint(0, 3)}


def test_parts_match_hermes():
    rng = random.Random(7)
    cases = [_parts_case(rng) for _ in range(300)]
    expected = hermes(_PARTS_SNIPPET, cases)
    renames = {"turns_compressed_start_idx": "start_idx", "turns_compressed_end_idx": "end_idx",
               "turns_in_compressed_region": "turns_count"}
    for case, want in zip(cases, expected):
        c = case["config"]
        config = T.TrajectoryConfig(**c)
        turns = case["turns"]
        protected, start, end = T.protected_region(turns, config)
        try:
            rendered = T.render_turns(turns, *case["render"])
        except Exception as exc:
            rendered = type(exc).__name__
        agg = T.AggregateMetrics()
        for m in case["metrics"]:
            agg.add(T.TrajectoryMetrics(**{renames.get(k, k): v for k, v in m.items()}))
        agg.failed = case["failed"]
        got = {"protected": sorted(protected), "start": start, "end": end,
               "snaps": [T.snap(turns, i, lo, hi) for i, lo, hi in case["snaps"]],
               "rendered": rendered, "aggregate": agg.to_dict()}
        assert got == want, case


# --- the whole command: tiktoken on both sides, a fixed summary from a local server ----------

_CLI_SNIPPET = """
import logging, sys
from types import SimpleNamespace
sys.path[:0] = data["paths"]
import trajectory_compressor as tc
from hermesctx.encodings import get_encoding

encoding = get_encoding("o200k_base")

class Tiktoken:  # special-token text is one token, as hermesctx counts it (and HF tokenizers do)
    def encode(self, text):
        return encoding.encode(text, allowed_special="all")

result = []
for case in data["cases"]:
    comp = tc.TrajectoryCompressor.__new__(tc.TrajectoryCompressor)
    comp.config = tc.CompressionConfig(**case["config"])
    comp.tokenizer = Tiktoken()
    comp.logger = logging.getLogger("oracle")
    comp.aggregate_metrics = tc.AggregateMetrics()
    comp._use_call_llm = False
    response = SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=case["reply"]))])
    comp.client = SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(create=lambda **kw: response)))
    entries = []
    for entry in case["entries"]:
        try:
            out, metrics = comp.process_entry(entry)
        except Exception:  # Hermes's batch loop counts it; hermesctx also writes it unchanged
            comp.aggregate_metrics.trajectories_failed += 1
            entries.append(entry)
            continue
        comp.aggregate_metrics.add_trajectory_metrics(metrics)
        entries.append(out)
    result.append({"entries": entries, "metrics": comp.aggregate_metrics.to_dict()})
"""


def test_cli_batches_match_hermes(tmp_path):
    """`hermesctx trajectory` on JSONL batches (o200k_base, openai summarizer on a local server
    replying a fixed text): every entry, its compression_metrics and the aggregate metrics."""
    import json
    import os

    import tiktoken
    from conftest import invoke
    from fakeserver import FakeServer

    import hermesctx

    rng = random.Random(77)
    cases = []
    for _ in range(50):
        config = _case(rng)["config"]
        config["protect_first_system"] = rng.random() < 0.9
        config["target_max_tokens"] = max(config["target_max_tokens"], 1) * rng.choice([1, 5, 20])
        entries = []
        for _ in range(rng.randint(1, 6)):
            entry = _case(rng)["entry"]
            for turn in entry.get("conversations", []):
                if isinstance(turn.get("value"), str) and rng.random() < 0.3:
                    turn["value"] += rng.choice([" 😀 日本語", " <|endoftext|>", " é\u3000"])
            entries.append(entry)
        cases.append({"config": config, "reply": rng.choice([r for r in REPLIES if r.strip()]),
                      "entries": entries})
    paths = [os.path.dirname(os.path.dirname(hermesctx.__file__)),
             os.path.dirname(os.path.dirname(tiktoken.__file__))]
    expected = hermes(_CLI_SNIPPET, {"paths": paths, "cases": cases})
    compressed = 0
    for k, (case, want) in enumerate(zip(cases, expected)):
        c = case["config"]
        roles = ",".join(role for role in ("system", "human", "gpt", "tool") if c[f"protect_first_{role}"])
        metrics_file = tmp_path / f"m{k}.json"
        with FakeServer(default_text=case["reply"]) as server:
            result = invoke(["trajectory", "--summarizer", "openai", "--base-url", server.url + "/v1",
                             "--api-key", "k", "--model", "m", "--retry-delay", "0", "--encoding", "o200k_base",
                             "--target-max-tokens", str(c["target_max_tokens"]),
                             "--summary-target-tokens", str(c["summary_target_tokens"]),
                             "--protect-first", roles, "--protect-last-n", str(c["protect_last_n_turns"]),
                             "--notice" if c["add_summary_notice"] else "--no-notice",
                             "--entry-metrics" if c["metrics_per_trajectory"] else "--no-entry-metrics",
                             "--metrics", str(metrics_file)],
                            "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in case["entries"]))
        assert result.status == 0, result.stderr
        assert result.lines == want["entries"], k
        metrics = json.loads(metrics_file.read_text())
        for section in ("summary", "tokens", "turns", "averages", "summarization"):
            assert metrics[section] == want["metrics"][section], (k, section)
        compressed += metrics["summary"]["trajectories_compressed"]
    assert compressed > 40
