"""prune and sanitize on adversarial inputs, without Hermes: the bugs the differential tests
found (hand-built inputs, explicit expected outputs), properties over the adversarial generator,
and snapshots of outputs that `tests/oracle/test_oracle_prune_sanitize_adversarial.py` checks against Hermes."""

import copy
import json
import random

import pytest
from builders import call
from conftest import invoke
from oracle.adversarial_prune import AdversarialGen

from hermesctx.stages.prune import anthropic_blocks_apply, prune_messages
from hermesctx.stages.sanitize import STUB_TEXT, find_problems, strip_orphans, stub_orphans
from hermesctx.wire.send import openai_request

STRAY_RESULT = {"type": "tool_result", "tool_use_id": "toolu_x", "content": "p" * 300}
STRAY_USE = {"type": "tool_use", "id": "toolu_y", "name": "read_file", "input": {"path": "q" * 600}}

# An OpenAI transcript whose user message happens to hold Anthropic-looking parts.
MIXED = [
    {"role": "user", "content": [{"type": "text", "text": "look"}, STRAY_RESULT]},
    {"role": "assistant", "content": [STRAY_USE], "tool_calls": [call("c1", "terminal", {"command": "ls"})]},
    {"role": "tool", "tool_call_id": "c1", "content": "a.py\n" * 60},
    {"role": "assistant", "content": "", "tool_calls": [call("c2", "web_search", {"query": "x"})]},
    {"role": "user", "content": "thanks"},
]


# --- bug: Anthropic blocks inside an OpenAI transcript were repaired / pruned ---------------
# Hermes leaves such parts alone; hermesctx now handles blocks only in a transcript without
# OpenAI tool messages (D5/D6), so an OpenAI transcript comes out exactly as Hermes's.

def test_strip_leaves_blocks_of_an_openai_transcript_alone():
    out, report = strip_orphans(MIXED)
    assert out == [MIXED[0], MIXED[1], MIXED[2], {"role": "assistant", "content": "(tool call removed)"}, MIXED[4]]
    assert report["results_removed"] == 0 and report["calls_removed"] == 1


def test_stub_leaves_blocks_of_an_openai_transcript_alone():
    out, report = stub_orphans(MIXED)
    assert out == [*MIXED[:4], {"role": "tool", "name": "web_search", "content": STUB_TEXT, "tool_call_id": "c2"},
                   MIXED[4]]
    assert report["stubs_added"] == 1 and report["results_removed"] == 0


def test_check_reports_only_what_sanitize_repairs():
    assert [(p["index"], p["kind"], p["id"]) for p in find_problems(MIXED)] == [(3, "orphan_call", "c2")]


def test_prune_leaves_blocks_of_an_openai_transcript_alone():
    out, report = prune_messages(MIXED, protect_tail_count=1)
    assert out[0] == MIXED[0] and out[1] == MIXED[1]  # 300-char tool_result, 600-char input: kept
    assert out[2]["content"] == "[terminal] ran `ls` -> exit ?, 61 lines output"
    assert report["pruned"] == 1 and report["args_truncated"] == 0


def test_blocks_without_openai_tool_messages_are_still_repaired():
    msgs = [MIXED[0], {"role": "assistant", "content": [STRAY_USE]}, {"role": "user", "content": "ok"}]
    assert anthropic_blocks_apply(msgs) and not anthropic_blocks_apply(MIXED)
    out, _ = strip_orphans(msgs)
    assert out == [{"role": "user", "content": [{"type": "text", "text": "look"}]},
                   {"role": "assistant", "content": [{"type": "text", "text": "(tool call removed)"}]}, msgs[2]]


# --- bug: `prune --protect-last-n 0` was refused although the help says x>=0 ---------------

TAIL = [{"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [call("c1", "read_file", {"path": "a.py"})]},
        {"role": "tool", "tool_call_id": "c1", "content": "r" * 300}]


def test_cli_prune_protect_last_n_zero_is_hermes_count_zero():
    r = invoke(["prune", "--protect-last-n", "0", "--tail-tokens", "0"], TAIL)
    assert r.status == 0, r.stderr
    assert r.json[2]["content"] == "[read_file] read a.py from line 1 (300 chars)"  # nothing protected
    # budget only: the last message (the overflowing one) is protected, as in Hermes
    r = invoke(["prune", "--protect-last-n", "0", "--tail-tokens", "1"], TAIL)
    assert r.status == 0 and r.json == TAIL


def test_config_protect_last_n_zero_is_still_refused(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("compression:\n  protect_last_n: 0\n")
    r = invoke(["prune", "--config", str(cfg)], TAIL)
    assert r.status == 2 and "compression.protect_last_n" in r.stderr


# --- the tail estimate counts a list/object `text` as Hermes does: len() of it --------------

def test_tail_walk_counts_odd_text_parts_like_hermes():
    odd = {"role": "user", "content": [{"type": "text", "text": ["a" * 400]}, {"type": "text", "text": {"k": 1}}]}
    msgs = [*TAIL, odd]  # odd costs (1 + 1) // 4 + 10 = 10 tokens, not ~110
    out, report = prune_messages(msgs, protect_tail_count=1, protect_tail_tokens=11)
    assert report["boundary"] == 2 and out[2]["content"] == "r" * 300  # overflow at #2: protected


# --- Hermes's own non-idempotence, kept -------------------------------------------------------

def test_stub_mode_leaves_an_empty_tool_calls_list_that_the_next_run_drops():
    msgs = [{"role": "assistant", "content": "", "tool_calls": [call("c1", "terminal", {})]},
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
            {"role": "assistant", "content": "again", "tool_calls": [call("c1", "terminal", {})]},
            {"role": "user", "content": "?"}]
    once, _ = stub_orphans(msgs)
    assert once[2] == {"role": "assistant", "content": "again", "tool_calls": []}
    twice, _ = stub_orphans(once)
    assert twice[2] == {"role": "assistant", "content": "again"}
    assert stub_orphans(twice)[0] == twice


def test_multimodal_text_over_200_chars_is_summarised_again_by_a_second_prune():
    msgs = [{"role": "tool", "tool_call_id": "c9", "content": {"_multimodal": True, "text_summary": "s" * 260}},
            {"role": "user", "content": "next"}]
    once, report = prune_messages(msgs, protect_tail_count=1)
    assert once[0]["content"] == "[screenshot removed] " + "s" * 200 and report["pruned"] == 1
    twice, report = prune_messages(once, protect_tail_count=1)
    assert twice[0]["content"] == "[unknown] (221 chars result)" and report["pruned"] == 1


# --- properties over the adversarial generator ------------------------------------------------

SEEDS = range(300)


@pytest.mark.parametrize("safe", [True, False])
def test_pure_and_never_crash(safe):
    for seed in SEEDS:
        msgs = AdversarialGen(seed, hermes_safe=safe).transcript()
        frozen = copy.deepcopy(msgs)
        for count, budget in ((1, None), (3, 50), (20, 30000), (0, 0)):
            prune_messages(msgs, protect_tail_count=count, protect_tail_tokens=budget)
        strip_orphans(msgs)
        stub_orphans(msgs)
        find_problems(msgs)
        assert msgs == frozen, seed


def _anthropic_transcript(seed: int) -> list:
    """Anthropic turns of text, image, ``tool_use`` (long inputs too) and ``tool_result`` blocks
    (long, duplicated, with images), some with a stash: what prune's block passes rewrite."""
    rng = random.Random(seed)
    texts = ["ok", "x" * 250, "it's \"q\"\\\n" * 40, "é日\t" * 90]
    image = {"type": "image", "source": {"type": "base64", "data": "AAAA"}}
    msgs: list = []
    for turn in range(rng.randint(1, 6)):
        uses = [{"type": "tool_use", "id": f"tu_{turn}_{k}", "name": rng.choice(["terminal", "read_file", "x"]),
                 "input": rng.choice([{"command": "ls"}, {"path": "a.py", "content": rng.choice(texts)},
                                      {"deep": [{"v": "y" * 600}]}, None])}
                for k in range(rng.randint(0, 3))]
        msgs.append({"role": "assistant", "content": [{"type": "text", "text": rng.choice(texts)}, *uses]})
        results = [{"type": "tool_result", "tool_use_id": u["id"],
                    "content": rng.choice([*texts, [{"type": "text", "text": "shot"}, image]])} for u in uses]
        user = {"role": "user", "content": [*results, *([image] if rng.random() < 0.2 else [])]}
        if rng.random() < 0.1:
            user["_anthropic_content_blocks"] = [image]
        msgs.append(user)
    return msgs


def test_tokens_saved_counted_at_each_rewrite_is_the_measure_of_the_changed_messages():
    """prune counts what each rewrite removes as it makes it: the same figure as measuring the
    changed messages afterwards (tokens.rough_saved), whatever the messages hold."""
    from transcripts import TranscriptGen

    from hermesctx import tokens
    from hermesctx.stages.prune import _pruned

    for seed in range(120):
        gens = (AdversarialGen(seed, hermes_safe=False).transcript(), TranscriptGen(seed).transcript(8),
                _anthropic_transcript(seed))
        for msgs in gens:
            for count, budget in ((1, None), (3, 50), (0, 0)):
                saved = [0, 0]
                new, _ = _pruned(msgs, count, budget, saved)
                assert saved[0] // 4 + tokens.IMAGE_TOKENS * saved[1] == tokens.rough_saved(msgs, new), seed


def test_cli_never_fails_on_malformed_calls_and_ids():
    for seed in range(60):
        msgs = AdversarialGen(seed, hermes_safe=False).transcript()
        for args in (["prune", "--protect-last-n", "2", "--tail-tokens", "100"], ["sanitize"], ["sanitize", "--stub"]):
            r = invoke([*args, "--lenient"], msgs)  # the generator's roles are Hermes's, not the API's (D14)
            assert r.status == 0, (seed, args, r.stderr)


def test_strip_is_idempotent_and_leaves_no_orphans():
    for seed in SEEDS:
        msgs = AdversarialGen(seed).transcript()
        once, _ = strip_orphans(msgs)
        if anthropic_blocks_apply(msgs) or not anthropic_blocks_apply(once):
            # (a mixed transcript whose OpenAI tool messages all go is Anthropic-shaped afterwards)
            assert strip_orphans(once)[0] == once, seed
            assert [p for p in find_problems(once)] == [], seed


def test_stub_reaches_a_fixed_point_in_two_runs():
    for seed in SEEDS:
        msgs = AdversarialGen(seed).transcript()
        twice = stub_orphans(stub_orphans(msgs)[0])[0]
        assert stub_orphans(twice)[0] == twice, seed


@pytest.mark.parametrize("seed", [3, 17, 42, 101, 256])
def test_outputs_match_the_recorded_hermes_outputs(seed, snapshot):
    # equal to Hermes 0.19.0's output: tests/oracle/test_oracle_prune_sanitize_adversarial.py
    # ::test_recorded_snapshot_seeds_match_hermes
    msgs = AdversarialGen(seed).transcript(8)
    assert not anthropic_blocks_apply(msgs)
    pruned = prune_messages(msgs, protect_tail_count=3, protect_tail_tokens=400)
    assert {"prune": [pruned[0], pruned[1]["pruned"]], "strip": strip_orphans(msgs)[0],
            "stub": stub_orphans(msgs)[0]} == snapshot


ODD_ROLES = [{"role": "system", "content": "s"}, {"role": 1, "content": "x"}, {"role": ["u"], "content": "y"},
             {"role": {"a": 1}, "content": "z"}, {"role": True, "content": "w"}, {"role": "user", "content": "hi"}]


@pytest.mark.parametrize("argv", [["prune"], ["sanitize"], ["cache-mark"], ["estimate", "--method", "rough"]])
def test_a_role_that_is_not_a_string_is_kept_as_hermes_keeps_it(argv):
    r = invoke(argv, json.dumps(ODD_ROLES).encode())  # strict input (D14): refused
    assert r.status == 3 and r.stderr.endswith("messages[1]: role must be a string, got a number; no provider "
                                               "API accepts it (--lenient reads it as Hermes does)\n")
    r = invoke([*argv, "--lenient"], json.dumps(ODD_ROLES).encode())
    assert r.status == 0, r.stderr
    if argv[0] in ("prune", "sanitize"):
        assert r.json == ODD_ROLES


def test_the_pre_api_repair_drops_roles_the_api_does_not_take():
    r = invoke(["sanitize", "--stub", "--lenient"], json.dumps(ODD_ROLES).encode())
    assert r.status == 0, r.stderr
    assert r.json == [ODD_ROLES[0], ODD_ROLES[-1]]
    assert "4 messages with unknown roles dropped" in r.stderr


def test_a_part_type_that_is_not_a_string_is_no_image():
    odd = [{"role": "user", "content": [{"type": ["x"]}]},
           {"role": "tool", "tool_call_id": "a", "content": [{"type": {"a": 1}, "text": "x" * 300}]},
           {"role": "user", "content": "a"}]
    r = invoke(["prune", "--tail-tokens", "0", "--protect-last-n", "0"], json.dumps(odd).encode())
    assert r.status == 0, r.stderr
    # a list result is not stubbed; its odd part is not taken for an image (the result answers
    # no call: the send path drops it, D12)
    assert prune_messages(odd, protect_tail_count=0, protect_tail_tokens=0)[0] == odd
    assert r.json == openai_request(odd) == [odd[0], odd[2]]


def test_a_body_with_an_odd_role_is_marked_as_openai_messages():
    body = {"model": "gpt-4o", "max_tokens": 1024,
            "messages": [{"role": [], "content": [{"type": "tool_use", "id": "x", "name": "", "input": None}]}]}
    r = invoke(["cache-mark", "--lenient"], json.dumps(body).encode())
    assert r.status == 0, r.stderr
    assert r.json["messages"][0]["content"][-1]["cache_control"] == {"type": "ephemeral"}
