"""Trajectory mode core (hermesctx.stages.trajectory): the worked examples of spec part 50 §8,
with its stated stub tokenizer (1 token = 1 whitespace word) and a stub summarizer."""

from __future__ import annotations

import copy
import json
import threading
import time

import pytest

from hermesctx.stages import trajectory as T
from hermesctx.summary import SummarizerError

NOTICE = "\n\nSome of your previous tool responses may be summarized to preserve context."


def call(name, args, cid):
    return ("<think>\n</think>\n<tool_call>\n"
            + json.dumps({"name": name, "arguments": args}) + "\n</tool_call>")


def resp(cid, name, content):
    return ("<tool_response>\n" + json.dumps({"tool_call_id": cid, "name": name, "content": content})
            + "\n</tool_response>")


def e2() -> list:
    think = "<think>\n" + " ".join(f"r{i}" for i in range(40)) + "\n</think>\n"
    return [
        {"from": "system", "value": "Tools: list_files read_file."},
        {"from": "human", "value": "Find the port"},
        {"from": "gpt", "value": call("list_files", {"path": "."}, "c1")},
        {"from": "tool", "value": resp("c1", "list_files", ["config.yaml", "main.py"])},
        {"from": "gpt", "value": think + "<tool_call>\n" + json.dumps(
            {"name": "read_file", "arguments": {"path": "config.yaml"}}) + "\n</tool_call>"},
        {"from": "tool", "value": resp("c2", "read_file", "port: 8080")},
        {"from": "gpt", "value": call("read_file", {"path": "main.py"}, "c3")},
        {"from": "tool", "value": resp("c3", "read_file", "app.run()")},
        {"from": "gpt", "value": call("list_files", {"path": "docs"}, "c4")},
        {"from": "tool", "value": resp("c4", "list_files", [])},
        {"from": "gpt", "value": call("read_file", {"path": "README"}, "c5")},
        {"from": "tool", "value": resp("c5", "read_file", "none")},
        {"from": "gpt", "value": "<think>\n</think>\nThe port is 8080."},
    ]


def e3() -> list:
    turns = e2()
    turns[0] = {"from": "system", "value": " ".join(f"s{i}" for i in range(150))}
    return turns


def e4() -> list:
    turns = e2()
    turns[1] = {"from": "human", "value": "Find the port in config.yaml"}
    return turns


def words(value) -> int:
    return T.encoder_counter(WordTokenizer())(value)


class WordTokenizer:
    def encode(self, text):
        if not isinstance(text, str):
            raise TypeError("not a string")
        return text.split()


class Stub:
    """A summarizer that answers from a script (text, or an exception to raise)."""

    name = "stub"

    def __init__(self, *replies, default="Read config.yaml: port 8080."):
        self.replies = list(replies)
        self.default = default
        self.requests = []
        self.lock = threading.Lock()

    def summarize(self, request):
        with self.lock:
            self.requests.append(request)
            reply = self.replies.pop(0) if self.replies else self.default
        if isinstance(reply, BaseException):
            raise reply
        return reply


CFG = T.TrajectoryConfig(target_max_tokens=100, summary_target_tokens=10)


def run(turns, cfg=CFG, summarizer=None, sleep=None):
    summarizer = summarizer or Stub()
    sleeps = []
    out, metrics = T.compress_trajectory(turns, config=cfg, count=words, summarizer=summarizer,
                                         sleep=sleep or sleeps.append)
    return out, metrics.to_dict(), summarizer, sleeps


def test_word_counts_of_the_examples():
    assert T.turn_tokens(e2(), words) == [3, 3, 9, 9, 49, 9, 9, 8, 9, 8, 9, 8, 6]
    assert sum(T.turn_tokens(e3(), words)) == 286
    assert sum(T.turn_tokens(e4(), words)) == 141


def test_e1_under_target_is_skipped():
    turns = e2()[:2] + [{"from": "gpt", "value": "<think>\n</think>\n4"}]
    out, metrics, stub, _ = run(turns)
    assert out is turns
    assert metrics["skipped_under_target"] is True
    assert metrics["compression_region"] == {"start_idx": -1, "end_idx": -1, "turns_count": 0}
    assert (metrics["compressed_tokens"], metrics["compressed_turns"]) == (9, 3)
    assert stub.requests == []


def test_e2_forward_tail_snap(snapshot):
    source = e2()
    before = copy.deepcopy(source)
    out, metrics, stub, _ = run(source)
    assert source == before  # input not mutated
    assert metrics == {
        "original_tokens": 139, "compressed_tokens": 99, "tokens_saved": 40,
        "compression_ratio": 0.7122, "original_turns": 13, "compressed_turns": 12,
        "turns_removed": 1, "compression_region": {"start_idx": 4, "end_idx": 6, "turns_count": 2},
        "was_compressed": True, "still_over_limit": False, "skipped_under_target": False,
        "summarization_api_calls": 1, "summarization_errors": 0}
    assert out[0]["value"] == "Tools: list_files read_file." + NOTICE
    assert out[4] == {"from": "human", "value": "[CONTEXT SUMMARY]: Read config.yaml: port 8080."}
    assert out[5:] == source[6:]
    assert [words(t["value"]) for t in out] == [15, 3, 9, 9, 6, 9, 8, 9, 8, 9, 8, 6]
    [request] = stub.requests
    assert request.budget_tokens == 10
    rendered = T.render_turns(source, 4, 6)
    assert rendered.startswith("[Turn 4 - GPT]:\n<think>\nr0 r1")
    assert "\n\n[Turn 5 - TOOL]:\n<tool_response>\n" in rendered
    assert rendered in request.prompt
    assert "approximately" not in request.prompt and "roughly 10 tokens" in request.prompt
    assert request.prompt.rstrip().endswith('"[CONTEXT SUMMARY]:".')
    assert [m["role"] for m in request.turns] == ["assistant", "tool"]
    assert out == snapshot


def test_e3_backward_tail_snap_still_over():
    out, metrics, _, _ = run(e3())
    assert metrics["compression_region"] == {"start_idx": 4, "end_idx": 8, "turns_count": 4}
    assert (metrics["original_tokens"], metrics["compressed_tokens"], metrics["tokens_saved"]) == (
        286, 229, 57)
    assert metrics["compression_ratio"] == 0.8007
    assert metrics["still_over_limit"] is True and metrics["was_compressed"] is True
    assert [words(t["value"]) for t in out] == [162, 3, 9, 9, 6, 9, 8, 9, 8, 6]
    assert [t["from"] for t in out] == ["system", "human", "gpt", "tool", "human", "gpt", "tool",
                                       "gpt", "tool", "gpt"]


def test_e4_unbudgeted_notice_leaves_it_over():
    _, metrics, _, _ = run(e4())
    assert metrics["compression_region"] == {"start_idx": 4, "end_idx": 6, "turns_count": 2}
    assert (metrics["compressed_tokens"], metrics["tokens_saved"]) == (101, 40)
    assert metrics["compression_ratio"] == 0.7163
    assert metrics["still_over_limit"] is True


def test_nothing_compressible():
    turns = [{"from": "system", "value": " ".join(["w"] * 60)}, {"from": "human", "value": "x"},
             {"from": "gpt", "value": "y " * 40}, {"from": "tool", "value": "z " * 30},
             {"from": "gpt", "value": "q " * 10}, {"from": "tool", "value": "t " * 10}]
    assert T.protected_region(turns, CFG) == ({0, 1, 2, 3, 4, 5}, 3, 3)
    out, metrics, stub, _ = run(turns)
    assert out is turns
    assert metrics["was_compressed"] is False and metrics["still_over_limit"] is True
    assert metrics["compression_region"]["start_idx"] == -1 and metrics["compression_ratio"] == 1.0
    assert stub.requests == []


def test_region_collapses_after_snapping():
    roles = ["system", "human", "gpt", "tool", "gpt", "tool", "gpt", "tool", "gpt"]
    turns = [{"from": r, "value": "w " * (150 if i == 0 else 12)} for i, r in enumerate(roles)]
    assert T.protected_region(turns, CFG)[1:] == (4, 5)
    out, metrics, stub, _ = run(turns)
    assert out is turns and metrics["still_over_limit"] is True and stub.requests == []


def test_head_snap_keeps_orphan_tool_turn():
    roles = ["system", "human", "gpt", "tool", "tool", "gpt", "tool", "gpt", "tool", "gpt", "tool",
             "gpt", "tool", "gpt"]
    turns = [{"from": r, "value": "w " * (48 if i == 4 else 9)} for i, r in enumerate(roles)]
    out, metrics, _, _ = run(turns)
    assert metrics["compression_region"] == {"start_idx": 5, "end_idx": 9, "turns_count": 4}
    assert [t["from"] for t in out] == ["system", "human", "gpt", "tool", "tool", "human", "gpt",
                                       "tool", "gpt", "tool", "gpt"]


@pytest.mark.parametrize("index,lo,hi,expected", [(5, 4, 9, 6), (9, 4, 9, 8), (4, 4, 4, 4),
                                                  (13, 4, 13, 13), (6, 4, 9, 6)])
def test_snap(index, lo, hi, expected):
    assert T.snap(e2(), index, lo, hi) == expected


def test_summary_failure_gives_fixed_text_after_three_attempts():
    boom = RuntimeError("down")
    out, metrics, stub, sleeps = run(e2(), summarizer=Stub(boom, boom, boom))
    assert out[4]["value"] == T.FAILED_SUMMARY
    assert (metrics["summarization_api_calls"], metrics["summarization_errors"]) == (3, 3)
    assert metrics["was_compressed"] is True and metrics["compressed_tokens"] == 114
    assert len(sleeps) == 2 and 2 <= sleeps[0] <= 3 and 4 <= sleeps[1] <= 6


def test_summary_recovers_on_second_attempt():
    err = SummarizerError("503", kind="server", status=503)
    out, metrics, _, sleeps = run(e2(), summarizer=Stub(err, "  recovered  "))
    assert out[4]["value"] == "[CONTEXT SUMMARY]: recovered"
    assert (metrics["summarization_api_calls"], metrics["summarization_errors"]) == (2, 1)
    assert len(sleeps) == 1


def test_empty_summary_is_bare_prefix_not_an_error():
    out, metrics, _, _ = run(e2(), summarizer=Stub(SummarizerError("empty", kind="empty")))
    assert out[4]["value"] == "[CONTEXT SUMMARY]:"
    assert (metrics["summarization_api_calls"], metrics["summarization_errors"]) == (1, 0)


def test_zero_retries_gives_null_summary():
    out, metrics, stub, _ = run(e2(), cfg=CFG.with_(max_retries=0))
    assert out[4] == {"from": "human", "value": None}
    assert metrics["compressed_tokens"] == 93 and metrics["still_over_limit"] is False
    assert metrics["summarization_api_calls"] == 0 and stub.requests == []


def test_no_sleep_when_retry_delay_zero():
    boom = RuntimeError("x")
    _, _, _, sleeps = run(e2(), cfg=CFG.with_(retry_delay=0), summarizer=Stub(boom, boom, boom))
    assert sleeps == []


@pytest.mark.parametrize("content,value", [
    ("", "[CONTEXT SUMMARY]:"), ("   ", "[CONTEXT SUMMARY]:"), (None, "[CONTEXT SUMMARY]:"),
    (0, "[CONTEXT SUMMARY]:"), ("  plain text  ", "[CONTEXT SUMMARY]: plain text"),
    ("[CONTEXT SUMMARY]: already", "[CONTEXT SUMMARY]: already"),
    ("[CONTEXT SUMMARY]:nospace", "[CONTEXT SUMMARY]:nospace"),
    ("  [CONTEXT SUMMARY]: padded  ", "[CONTEXT SUMMARY]: padded"),
    ("[context summary]: lower", "[CONTEXT SUMMARY]: [context summary]: lower"),
    ("CONTEXT SUMMARY: x", "[CONTEXT SUMMARY]: CONTEXT SUMMARY: x"),
    (42, "[CONTEXT SUMMARY]: 42"), (["a", "b"], "[CONTEXT SUMMARY]: ['a', 'b']"),
    ({"k": 1}, "[CONTEXT SUMMARY]: {'k': 1}"),
])
def test_normalize_summary(content, value):
    assert T.normalize_summary(content) == value


def test_two_system_turns_in_head_both_get_notice():
    turns = e2()
    turns.insert(1, {"from": "system", "value": "More rules."})
    out, metrics, _, _ = run(turns)
    assert metrics["compression_region"]["start_idx"] == 5
    assert metrics["compression_region"]["end_idx"] == 7
    assert out[0]["value"].endswith(NOTICE) and out[1]["value"] == "More rules." + NOTICE
    out, _, _, _ = run(e2(), cfg=CFG.with_(add_summary_notice=False))
    assert out[0]["value"] == "Tools: list_files read_file."


def test_custom_notice_text():
    out, _, _, _ = run(e2(), cfg=CFG.with_(summary_notice_text=" [trimmed]"))
    assert out[0]["value"] == "Tools: list_files read_file. [trimmed]"


@pytest.mark.parametrize("target,compressed", [(139, False), (138, True)])
def test_skip_boundary_is_inclusive(target, compressed):
    _, metrics, _, _ = run(e2(), cfg=CFG.with_(target_max_tokens=target))
    assert metrics["was_compressed"] is compressed
    assert metrics["skipped_under_target"] is (not compressed)


def test_render_truncation_and_unknown_roles():
    turns = [{"value": "v1"}, {"from": "weird", "value": "v2"}, {"from": "gpt"}]
    assert T.render_turns(turns, 0, 3) == "[Turn 0 - UNKNOWN]:\nv1\n\n[Turn 1 - WEIRD]:\nv2\n\n[Turn 2 - GPT]:\n"
    long = [{"from": "tool", "value": "x" * 3001}]
    assert len(T.render_turns(long, 0, 1)) == len("[Turn 0 - TOOL]:\n") + 2019
    exact = [{"from": "tool", "value": "x" * 3000}]
    assert T.render_turns(exact, 0, 1) == "[Turn 0 - TOOL]:\n" + "x" * 3000


def test_token_count_corners():
    class Broken:
        def encode(self, text):
            raise ValueError

    count = T.encoder_counter(Broken())
    assert [count("abcdefg"), count("abcdefgh"), count(""), count(None)] == [1, 2, 0, 0]
    assert words(["a", "b", "c", "d", "e"]) == 1
    with pytest.raises(TypeError):
        words(5)


def test_tiktoken_counter_allows_special_tokens():
    from hermesctx.encodings import get_encoding

    count = T.tiktoken_counter(get_encoding("o200k_base"))
    assert count("<|endoftext|>") == 1
    assert count("hello world") == 2
    assert count("") == 0 and count(["abcdefgh"]) == 0  # a list cannot be encoded: len // 4 = 0


def test_process_entry_keys():
    entry = {"id": 7, "conversations": e2(), "model": "m", "completed": True}
    before = copy.deepcopy(entry)
    result, metrics = T.process_entry(entry, config=CFG, count=words, summarizer=Stub())
    assert entry == before and result is not entry
    assert list(result) == ["id", "conversations", "model", "completed", "compression_metrics"]
    assert result["compression_metrics"] == metrics.to_dict()
    skipped, _ = T.process_entry({"id": 1, "conversations": e2()[:3]}, config=CFG, count=words,
                                 summarizer=Stub())
    assert list(skipped) == ["id", "conversations"]
    other = {"id": 9, "messages": []}
    same, metrics = T.process_entry(other, config=CFG, count=words, summarizer=Stub())
    assert same is other and metrics.to_dict() == T.TrajectoryMetrics().to_dict()
    off, _ = T.process_entry(entry, config=CFG.with_(metrics_per_trajectory=False), count=words,
                             summarizer=Stub())
    assert list(off) == ["id", "conversations", "model", "completed"]


def test_malformed_turns_raise():
    bad = e2()
    bad[7]["value"] = 12345
    with pytest.raises(TypeError):
        T.process_entry({"conversations": bad}, config=CFG, count=words, summarizer=Stub())


def test_aggregate_empty_and_filled():
    agg = T.AggregateMetrics()
    empty = agg.to_dict()
    assert empty["summary"]["compression_rate"] == 0.0
    assert empty["averages"] == {"avg_compression_ratio": 1.0, "avg_tokens_saved_per_compressed": 0,
                                 "avg_turns_removed_per_compressed": 0}
    assert empty["summarization"]["success_rate"] == 1.0
    assert empty["processing"] == {"start_time": "", "end_time": "", "duration_seconds": 0.0}
    small = [{"from": "system", "value": "Tools: list_files read_file."},
             {"from": "human", "value": "hi"}, {"from": "gpt", "value": "héllo"}]
    for turns in (e2(), small, e3()):  # spec 50 §8.6: ids 1, 3, 6 (+ id 2 without turns)
        agg.add(T.compress_trajectory(turns, config=CFG, count=words, summarizer=Stub())[1])
    agg.add(T.TrajectoryMetrics())
    agg.failed += 2
    d = agg.to_dict()
    assert d["summary"] == {"total_trajectories": 4, "trajectories_compressed": 2,
                            "trajectories_skipped_under_target": 1,
                            "trajectories_still_over_limit": 1, "trajectories_failed": 2,
                            "compression_rate": 0.5}
    assert d["tokens"] == {"total_before": 430, "total_after": 333, "total_saved": 97,
                           "overall_compression_ratio": 0.7744}
    assert d["averages"] == {"avg_compression_ratio": 0.7565,
                             "avg_tokens_saved_per_compressed": 48.5,
                             "avg_turns_removed_per_compressed": 2.0}
    assert d["turns"] == {"total_before": 29, "total_after": 25, "total_removed": 4}


class SlowStub(Stub):
    def __init__(self):
        super().__init__()
        self.active = 0
        self.peak = 0

    def summarize(self, request):
        with self.lock:
            self.active += 1
            self.peak = max(self.peak, self.active)
        time.sleep(0.02)
        with self.lock:
            self.active -= 1
        return f"summary of {request.prompt.count('[Turn ')} turns"


def test_stream_keeps_order_and_runs_concurrently():
    entries = []
    for i in range(24):
        turns = e2() if i % 3 else e2()[:3]
        entries.append(({"id": i, "conversations": turns}, i))
    entries.insert(5, ({"id": "bad", "conversations": [{"from": "gpt", "value": 5}]}, "bad"))
    stub = SlowStub()
    agg = T.AggregateMetrics()
    outcomes = list(T.compress_stream(iter(entries), config=CFG, count=words, summarizer=stub,
                                      concurrency=4, aggregate=agg))
    assert [o.tag for o in outcomes] == [tag for _, tag in entries]
    assert stub.peak > 1
    bad = outcomes[5]
    assert bad.metrics is None and bad.entry == entries[5][0] and "TypeError" in bad.error
    assert agg.failed == 1 and agg.total_trajectories == 24 and agg.compressed == 16
    sequential = list(T.compress_stream(iter(entries), config=CFG, count=words,
                                        summarizer=SlowStub(), concurrency=1))
    assert [o.entry for o in sequential] == [o.entry for o in outcomes]


def test_stream_window_bounds_in_flight_entries():
    pulled = []

    def source():
        for i in range(40):
            pulled.append(i)
            yield {"id": i, "conversations": e2()}, i

    stream = T.compress_stream(source(), config=CFG, count=words, summarizer=SlowStub(),
                               concurrency=2, window=4)
    first = next(stream)
    assert first.tag == 0
    assert len(pulled) <= 5  # never more than the window ahead of the output
    rest = list(stream)
    assert len(rest) == 39


def test_as_messages_turns_tags_into_tool_calls():
    messages = T.as_messages(e2()[1:8] + [{"from": "weird", "value": None}])
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant", "tool",
                                             "assistant", "tool", "user"]
    call = messages[1]["tool_calls"][0]
    assert call["function"] == {"name": "list_files", "arguments": '{"path": "."}'}
    assert messages[2] == {"role": "tool", "tool_call_id": call["id"],
                           "content": '["config.yaml", "main.py"]'}
    assert messages[3]["content"].startswith("<think>\nr0") and "<tool_call>" not in messages[3]["content"]
    assert messages[4]["content"] == "port: 8080"
    assert messages[7] == {"role": "user", "content": ""}


def test_as_messages_parallel_calls_and_plain_tool_text():
    gpt = {"from": "gpt", "value": "<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>\n"
                                   "<tool_call>\nnot json\n</tool_call>"}
    tool = {"from": "tool", "value": "<tool_response>\n{\"content\": \"one\"}\n</tool_response>\n"
                                     "<tool_response>\n{\"content\": {\"k\": 2}}\n</tool_response>"}
    messages = T.as_messages([gpt, tool, {"from": "tool", "value": "bare text"}])
    ids = [c["id"] for c in messages[0]["tool_calls"]]
    assert [c["function"]["name"] for c in messages[0]["tool_calls"]] == ["a", "unknown"]
    assert [(m["tool_call_id"], m["content"]) for m in messages[1:3]] == [
        (ids[0], "one"), (ids[1], '{"k": 2}')]
    assert messages[3]["content"] == "bare text"


def test_provider_summary_is_redacted():
    secret = "sk-proj-" + "A1b2C3d4E5f6G7h8J9k0L1m2N3p4"
    out, _, _, _ = run(e2(), summarizer=Stub(f"Used key {secret} to call the API."))
    assert secret not in out[4]["value"]
    assert out[4]["value"].startswith("[CONTEXT SUMMARY]: Used key ")


def test_stream_closed_early_does_not_drain_the_batch():
    class Sleepy(Stub):
        def summarize(self, request):
            time.sleep(0.2)
            return "s"

    entries = (({"id": i, "conversations": e2()}, i) for i in range(100))
    start = time.monotonic()
    stream = T.compress_stream(entries, config=CFG, count=words, summarizer=Sleepy(),
                               concurrency=4)
    assert next(stream).tag == 0
    stream.close()
    assert time.monotonic() - start < 1.5  # 100 × 0.2 s / 4 would be 5 s
