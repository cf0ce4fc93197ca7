"""Differential: prune and both sanitizers vs Hermes 0.19.0 on seeded random transcripts
(`make oracle`)."""

import pytest
from transcripts import TOOLS, TranscriptGen

from hermesctx.stages.prune import prune_messages, truncate_args_json
from hermesctx.stages.sanitize import strip_orphans, stub_orphans
from hermesctx.stubs import summarize_tool_result
from oracle.harness import SEND, hermes, needs_oracle, wire_difference

pytestmark = [pytest.mark.oracle, needs_oracle]

CASES = [(seed, count, budget) for seed in range(60)
         for count, budget in [(3, None), (1, 100), (5, 400), (20, 30000), (0, 50), (2, 0)]]


def _batch():
    out = []
    for seed, count, budget in CASES:
        out.append({"messages": TranscriptGen(seed).transcript(), "count": count, "budget": budget})
    return out


def test_prune_matches_hermes():
    batch = _batch()
    theirs = hermes(SEND + """
from agent.context_compressor import ContextCompressor
c = ContextCompressor(model="claude-sonnet-4-5", quiet_mode=True, config_context_length=200000)
result = []
for case in data:
    msgs, n = c._prune_old_tool_results(case["messages"], case["count"], case["budget"])
    result.append([msgs, n, send(msgs)])
""", batch)
    used = set()
    for case, (msgs, n, sent) in zip(batch, theirs):
        ours, report = prune_messages(case["messages"], protect_tail_count=case["count"],
                                      protect_tail_tokens=case["budget"])
        assert report["pruned"] == n
        assert ours == msgs  # the stage itself: Hermes-exact
        used |= wire_difference(ours, sent)  # what goes on the wire (D12)
    print("wire exceptions used by prune:", sorted(used))


def test_sanitizers_match_hermes():
    batch = [TranscriptGen(1000 + s).transcript() for s in range(200)]
    theirs = hermes(SEND + """
from agent.context_compressor import ContextCompressor
from agent.agent_runtime_helpers import sanitize_api_messages
import copy
c = ContextCompressor(model="claude-sonnet-4-5", quiet_mode=True, config_context_length=200000)
result = []
for m in data:
    strip, stub = c._sanitize_tool_pairs(copy.deepcopy(m)), sanitize_api_messages(copy.deepcopy(m))
    result.append([strip, stub, send(strip), send(stub)])
""", batch)
    used = set()
    for msgs, (strip, stub, strip_sent, stub_sent) in zip(batch, theirs):
        assert strip_orphans(msgs)[0] == strip
        assert stub_orphans(msgs)[0] == stub
        used |= wire_difference(strip_orphans(msgs)[0], strip_sent)
        used |= wire_difference(stub_orphans(msgs)[0], stub_sent)
    print("wire exceptions used by sanitize:", sorted(used))


def test_stubs_match_hermes():
    gen = TranscriptGen(7)
    cases = []
    for i in range(600):
        tool = gen.rng.choice(TOOLS + [None, "browser_vision", "skill_manage"])
        cases.append([tool, gen.args(tool) if tool else '{"k": "v"}', gen.big() + "\n" * (i % 3)])
    cases += [["web_extract", '{"urls": [{"href": 5}, "https://b"]}', "z" * 4096],
              ["web_extract", '{"urls": [{"url": ["a"]}, "https://b"]}', "z" * 300],
              ["read_file", '{"offset": null}', "0123456789"], ["terminal", '{"command": 42}', "no json here\n"]]
    theirs = hermes("""
from agent.context_compressor import _summarize_tool_result, _truncate_tool_call_args_json
result = [[_summarize_tool_result(*c), _truncate_tool_call_args_json(c[1])] for c in data]
""", cases)
    for case, (stub, shrunk) in zip(cases, theirs):
        assert summarize_tool_result(*case) == stub, case
        assert truncate_args_json(case[1]) == shrunk


def test_valid_pairs_hermes_would_delete_are_kept():
    """D12 exception "input kept": a transcript the APIs accept keeps its pairs. Hermes's
    compressor repair matches a Codex call by ``call_id`` and deletes the pair whose result
    answers the call's ``id`` (what goes on the wire); its pre-API repair deletes an exchange whose
    id an earlier turn reused (live tau-bench / SWE-agent transcripts reuse ids) and leaves
    ``tool_calls: []``, which the API rejects."""
    from hermesctx.stages.sanitize import sanitize
    from hermesctx.wire.rules import check_pairing

    def call(cid, **extra):
        return {"id": cid, "type": "function", "function": {"name": "terminal", "arguments": "{}"}, **extra}

    codex = [{"role": "user", "content": "go"},
             {"role": "assistant", "content": "", "tool_calls": [call("fc_1", call_id="call_1")]},
             {"role": "tool", "tool_call_id": "fc_1", "content": "ok"},
             {"role": "assistant", "content": "done"}]
    reused = [{"role": "user", "content": "go"},
              {"role": "assistant", "content": None, "tool_calls": [call("t0")]},
              {"role": "tool", "tool_call_id": "t0", "content": "one"},
              {"role": "user", "content": "again"},
              {"role": "assistant", "content": None, "tool_calls": [call("t0")]},
              {"role": "tool", "tool_call_id": "t0", "content": "two"}]
    theirs = hermes("""
from agent.context_compressor import ContextCompressor
from agent.agent_runtime_helpers import sanitize_api_messages
import copy
c = ContextCompressor(model="claude-sonnet-4-5", quiet_mode=True, config_context_length=200000)
result = [[c._sanitize_tool_pairs(copy.deepcopy(m)), sanitize_api_messages(copy.deepcopy(m))] for m in data]
""", [codex, reused])
    (codex_strip, _), (_, reused_stub) = theirs
    assert check_pairing(codex) == check_pairing(reused) == []
    assert len(codex_strip) == 3 and codex_strip[1] == {"role": "assistant", "content": "(tool call removed)"}
    assert reused_stub[4]["tool_calls"] == [] and len(reused_stub) == 5
    assert check_pairing(reused_stub) != []
    for msgs in (codex, reused):
        for stub in (False, True):
            out, report = sanitize(msgs, stub=stub)
            assert out == msgs and report["repair"] == "none"
