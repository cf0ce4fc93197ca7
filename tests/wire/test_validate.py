"""validate: one failing and one passing body per rule of wire-rules.md, the CLI (exit codes, line
format, --format json, batch line numbers, --strict, --reference), sanitize --check as its
tool-pairing subset, and the property that sanitize's output has no tool-pairing problem."""

import copy
import json
import random

import pytest
from builders import call, text, thinking, tool_result, tool_use
from conftest import FIXTURES, invoke
from hypothesis import given, settings
from hypothesis import strategies as st
from transcripts import TranscriptGen

from hermesctx.stages.convert import convert
from hermesctx.stages.sanitize import sanitize
from hermesctx.wire.rules import PAIRING_RULES, RULES, check, check_pairing

OA, AN = "openai", "anthropic"


def oa(*messages, **body):
    return {"model": "gpt-4o", "messages": list(messages), **body}


def an(*messages, **body):
    return {"model": "claude-sonnet-4-5", "max_tokens": 1024, "messages": list(messages), **body}


USER = {"role": "user", "content": "go"}
ASK = {"role": "assistant", "content": None, "tool_calls": [call("a"), call("b")]}
TOOL_A = {"role": "tool", "tool_call_id": "a", "content": "A"}
TOOL_B = {"role": "tool", "tool_call_id": "b", "content": "B"}


def fn(name, parameters=None):
    return {"type": "function", "function": {"name": name, "parameters": parameters or {"type": "object"}}}


def tool(name, schema=None):
    return {"name": name, "input_schema": schema or {"type": "object"}}


Q = {"role": "user", "content": "q"}
CC = {"type": "ephemeral"}
CC1H = {"type": "ephemeral", "ttl": "1h"}
A_USE = {"role": "assistant", "content": [tool_use("t1")]}
A_RES = {"role": "user", "content": [tool_result("t1")]}
THOUGHT = an({"role": "user", "content": "q"},
             {"role": "assistant", "content": [thinking(), tool_use("t1")]}, A_RES, system="S")

# rule -> (target, failing body, passing body, reference)
CASES = {
    "OA-SCHEMA": (OA, oa({"role": "user"}), oa(USER), None),
    "OA-UNKNOWN-PARAM": (OA, oa(USER, system="x"), oa(USER, temperature=0), None),
    "OA-TOOL-UNANSWERED": (OA, oa(USER, ASK, TOOL_A), oa(USER, ASK, TOOL_A, TOOL_B), None),
    "OA-TOOL-ORPHAN": (OA, oa(USER, TOOL_A), oa(USER, ASK, TOOL_B, TOOL_A), None),
    "OA-TOOL-ID-MISMATCH": (OA, oa(USER, ASK, TOOL_A, TOOL_B, {**TOOL_A, "tool_call_id": "z"}),
                            oa(USER, ASK, TOOL_A, TOOL_B), None),
    "OA-TOOL-CALLS-EMPTY": (OA, oa(USER, {"role": "assistant", "content": "x", "tool_calls": []}),
                            oa(USER, {"role": "assistant", "content": "x"}), None),
    "OA-ASSISTANT-NO-CONTENT": (OA, oa(USER, {"role": "assistant", "content": None}),
                                oa(USER, {"role": "assistant", "content": "ok"}), None),
    "OA-EXTRA-KEY": (OA, oa({**USER, "timestamp": 1}), oa(USER), None),
    "OA-CACHE-MAX4": (OA, oa({"role": "user", "content": [text("x", cache_control=CC)] * 5}),
                      oa({"role": "user", "content": [text("x", cache_control=CC)] * 4}), None),
    "OA-TOOL-DUP-ID": (OA, oa(USER, {**ASK, "tool_calls": [call("a"), call("a")]}, TOOL_A),
                       oa(USER, ASK, TOOL_A, TOOL_B, USER, ASK, TOOL_A, TOOL_B), None),
    "AN-SCHEMA": (AN, an({"role": "user", "content": "q"}, {"role": "assistant", "content": [{**tool_use("t1"), "text": "x"}]}, A_RES),
                  an({"role": "user", "content": "q"}, A_USE, A_RES), None),
    "AN-EMPTY-CONTENT": (AN, an({"role": "user", "content": ""}, {"role": "assistant", "content": "x"}),
                         an({"role": "user", "content": "q"}, {"role": "assistant", "content": ""}), None),
    "AN-EMPTY-TEXT": (AN, an({"role": "user", "content": [text("")]}), an({"role": "user", "content": [text("q")]}), None),
    "AN-WHITESPACE-TEXT": (AN, an({"role": "user", "content": [text("\n\n")]}),
                           an({"role": "user", "content": [text(" q ")]}), None),
    "AN-TOOL-UNANSWERED": (AN, an({"role": "user", "content": "q"}, A_USE, {"role": "user", "content": "next"}),
                           an({"role": "user", "content": "q"}, A_USE, A_RES), None),
    "AN-TOOL-RESULT-FIRST": (AN, an({"role": "user", "content": "q"}, A_USE, {"role": "user", "content": [text("x"), tool_result("t1")]}),
                             an({"role": "user", "content": "q"}, A_USE, {"role": "user", "content": [tool_result("t1"), text("x")]}), None),
    "AN-TOOL-ORPHAN": (AN, an({"role": "user", "content": [tool_result("t9")]}),
                       # results split over consecutive user messages: one turn, accepted
                       an({"role": "user", "content": "q"}, {"role": "assistant", "content": [tool_use("t1"), tool_use("t2")]},
                          {"role": "user", "content": [tool_result("t1")]}, {"role": "user", "content": [tool_result("t2")]}), None),
    "AN-TOOL-DUP-ID": (AN, an({"role": "user", "content": "q"}, A_USE, A_RES, A_USE, A_RES),
                       an({"role": "user", "content": "q"}, A_USE, A_RES), None),
    "AN-BLOCK-ROLE": (AN, an({"role": "user", "content": [text("q"), tool_use("t1")]}), an({"role": "user", "content": [text("q")]}), None),
    "AN-ROLE-SYSTEM": (AN, an({"role": "user", "content": "q"}, {"role": "system", "content": "s"}),
                       an({"role": "user", "content": "q"}, system="s"), None),
    "AN-FIRST-USER": (AN, an({"role": "assistant", "content": "hi"}), an({"role": "user", "content": "hi"}), None),
    "AN-CACHE-MAX4": (AN, an({"role": "user", "content": [text("x", cache_control=CC)] * 4}, cache_control=CC),
                      an({"role": "user", "content": [text("x", cache_control=CC)] * 4}), None),
    "AN-CACHE-TTL-ORDER": (AN, an({"role": "user", "content": [text("x", cache_control=CC1H)]}, system=[text("s", cache_control=CC)]),
                           an({"role": "user", "content": [text("x", cache_control=CC)]}, system=[text("s", cache_control=CC1H)]), None),
    "AN-CACHE-EMPTY-TEXT": (AN, an({"role": "user", "content": [text("q"), text("", cache_control=CC)]}),
                            an({"role": "user", "content": [text("q", cache_control=CC)]}), None),
    "AN-CACHE-NESTED": (AN, an({"role": "user", "content": "q"}, A_USE, {"role": "user", "content": [tool_result("t1", [text("x", cache_control=CC)])]}),
                        an({"role": "user", "content": "q"}, A_USE, {"role": "user", "content": [tool_result("t1", [text("x")], cache_control=CC)]}), None),
    "AN-THINK-MODIFIED": (AN, an({"role": "user", "content": "q"}, {"role": "assistant", "content": [thinking("edited"), tool_use("t1")]}, A_RES, system="S"),
                          THOUGHT, THOUGHT),
    "AN-THINK-FIRST": (AN, an({"role": "user", "content": "q"}, {"role": "assistant", "content": [text("x"), thinking(), tool_use("t1")]}, A_RES),
                       THOUGHT, None),
    "AN-THINK-LAST": (AN, an({"role": "user", "content": "q"}, {"role": "assistant", "content": [thinking()]}), THOUGHT, None),
    "AN-THINK-FINAL-TURN": (AN, an({"role": "user", "content": "q"}, A_USE, A_RES, thinking={"type": "enabled", "budget_tokens": 2000}),
                            {**THOUGHT, "thinking": {"type": "enabled", "budget_tokens": 2000}}, None),
    "AN-THINK-PREFIX": (AN, {**THOUGHT, "system": "changed"}, {**THOUGHT, "system": [text("S", cache_control=CC)]}, THOUGHT),
    "AN-MISSING-PARAM": (AN, {"messages": [{"role": "user", "content": "q"}]}, an({"role": "user", "content": "q"}), None),
    "AN-COMPACTION": (AN, an({"role": "user", "content": "q"}, {"role": "assistant", "content": [{"type": "compaction", "content": 7}]},
                             {"role": "user", "content": "go on"}),
                      an({"role": "user", "content": "q"}, {"role": "assistant", "content": [{"type": "compaction", "content": "Summary."}]},
                         {"role": "user", "content": "go on"}), None),
    # a Responses request read into chat's form: its compaction item alone in an assistant message
    "OA-COMPACTION": ("responses", oa(USER, {"role": "assistant", "content": [
                          {"type": "compaction", "id": "cmp_1", "encrypted_content": None}]}, USER),
                      oa(USER, {"role": "assistant", "content": [
                          {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAA"}]}, USER), None),
    # tool definitions and tool_choice (hermesctx.wire.tooldefs)
    "OA-TOOLDEF-NAME": (OA, oa(USER, tools=[fn("read file")]), oa(USER, tools=[fn("read_file")]), None),
    "OA-TOOLDEF-SCHEMA": (OA, oa(USER, tools=[fn("f", {"anyOf": [{"type": "object"}]})]),
                          oa(USER, tools=[fn("f", {"type": "object", "properties": {}})]), None),
    "OA-TOOLDEF-DUP": (OA, oa(USER, tools=[fn("f"), fn("f")]), oa(USER, tools=[fn("f"), fn("g")]), None),
    "OA-TOOLDEF-CHOICE": (OA, oa(USER, tool_choice="required"),
                          oa(USER, tools=[fn("f")], tool_choice={"type": "function", "function": {"name": "f"}}), None),
    "AN-TOOLDEF-NAME": (AN, an(Q, tools=[tool("read file")]), an(Q, tools=[tool("read_file")]), None),
    "AN-TOOLDEF-SCHEMA": (AN, an(Q, tools=[tool("f", {"type": "string"})]), an(Q, tools=[tool("f")]), None),
    "AN-TOOLDEF-DUP": (AN, an(Q, tools=[tool("f"), tool("f")]), an(Q, tools=[tool("f"), tool("g")]), None),
    "AN-TOOLDEF-CHOICE": (AN, an(Q, tools=[tool("f")], tool_choice={"type": "tool", "name": "g"}),
                          an(Q, tools=[tool("f")], tool_choice={"type": "tool", "name": "f"}), None),
}


def test_every_rule_has_a_case():
    assert set(CASES) == set(RULES)


@pytest.mark.parametrize("rule", sorted(CASES))
def test_rule_fails_and_passes(rule):
    target, bad, good, reference = CASES[rule]
    frozen = copy.deepcopy(bad)
    found = check(bad, target, reference=reference)
    assert rule in {p.rule for p in found}, found
    assert all(p.severity == RULES[p.rule] or p.severity == "info" for p in found)
    assert bad == frozen
    passing = check(good, target, reference=reference)
    assert rule not in {p.rule for p in passing} and not any(p.counted for p in passing), passing
    # (only OA-CACHE-MAX4's passing body shows another risk: cache_control is an extra key on
    # OpenAI parts, OA-EXTRA-KEY)
    assert passing == [] or rule == "OA-CACHE-MAX4"


def test_a_text_message_before_the_results_of_a_turn_makes_them_late():
    """The API joins consecutive user messages into one turn, where a message of plain text is a
    text block: results after it are not at the start (AN-TOOL-RESULT-FIRST). The one-pass
    check agrees, and sanitize moves the results first."""
    from hermesctx.wire.send import anthropic_ready

    late = an({"role": "user", "content": "q"}, A_USE, {"role": "user", "content": "wait"}, A_RES)
    assert [p.rule for p in check(late, AN)] == ["AN-TOOL-RESULT-FIRST"]
    assert anthropic_ready(late["messages"]) is False
    fixed, report = sanitize(late)
    assert report["repair"] == "positional" and check(fixed, AN) == []
    assert fixed["messages"][-1]["content"] == [tool_result("t1"), text("wait")]
    in_time = an({"role": "user", "content": "q"}, A_USE, A_RES, {"role": "user", "content": "wait"})
    assert check(in_time, AN) == [] and anthropic_ready(in_time["messages"]) is True


def test_messages_carry_the_real_index_and_ids():
    found = check(oa(USER, ASK, TOOL_A), OA)
    assert [(p.path, p.message) for p in found] == [(
        "messages[1]", "An assistant message with 'tool_calls' must be followed by tool messages "
        "responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: b")]
    body = CASES["AN-TOOL-ORPHAN"][1]
    (p,) = check(body, AN)
    assert p.path == "messages[0].content[0]" and p.message.startswith(
        "messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: t9.")
    (p,) = check(oa({"role": "user", "content": "q"}, {"role": "tool", "tool_call_id": "x", "content": "r"}), OA)
    assert (p.path, p.rule) == ("messages[1].role", "OA-TOOL-ORPHAN")


def test_openai_schema_details():
    msgs = [{"role": "robot", "content": "x"},
            {"role": "tool", "tool_call_id": "a", "content": [{"type": "image_url", "image_url": {"url": "u"}}]},
            {"role": "assistant", "content": [], "tool_calls": [{"id": 5, "function": {"name": "t"}}]}]
    found = {(p.path, p.message) for p in check(msgs, OA) if p.rule == "OA-SCHEMA"}
    assert ("messages[0].role", "Invalid value: 'robot'. Supported values are: 'system', 'assistant', "
            "'user', 'function', 'tool', and 'developer'.") in found
    assert ("messages[1].content[0].type", "Invalid value: 'image_url'. Supported values are: 'text'.") in found
    assert ("messages[2].tool_calls[0].type", "Missing required parameter: 'messages[2].tool_calls[0].type'.") in found
    assert ("messages[2].tool_calls[0].function.arguments",
            "Missing required parameter: 'messages[2].tool_calls[0].function.arguments'.") in found
    assert any(path == "messages[2].tool_calls[0].id" for path, _ in found)
    assert any(path == "messages[2].content" for path, _ in found)  # empty array


def test_an_empty_message_list_is_rejected_by_both_apis():
    assert [(p.rule, p.counted) for p in check({"model": "m", "messages": []}, OA)] == [("OA-SCHEMA", True)]
    found = [(p.rule, p.message) for p in check({"model": "m", "max_tokens": 1, "messages": []}, "anthropic")]
    assert found == [("AN-SCHEMA", "messages: at least one message is required")]
    assert check({"model": "m", "messages": [{"role": "user", "content": "q"}]}, OA) == []


def test_bare_list_and_risk_counting():
    msgs = [{"role": "user", "content": "q", "cache_control": CC}]
    (p,) = check(msgs)
    assert (p.rule, p.severity, p.counted) == ("OA-EXTRA-KEY", "risk", False)
    assert check(msgs, strict=True)[0].counted
    # name on a tool message is tolerated (recorded live transcripts carry it)
    assert check([USER, ASK, {**TOOL_A, "name": "terminal"}, TOOL_B]) == []


def test_pairing_subset_is_the_pairing_rules_of_check():
    for rule, (target, bad, _good, ref) in CASES.items():
        full = [p for p in check(bad, target, reference=ref) if p.rule in PAIRING_RULES]
        assert check_pairing(bad, target) == full, rule


# --- CLI ------------------------------------------------------------------------------------

def test_cli_exit_codes_and_line_format(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(CASES["AN-TOOL-ORPHAN"][1]))
    r = invoke(["validate", str(bad)])
    assert r.status == 1 and r.stdout == b""
    assert r.stderr.splitlines() == [
        "line 1: messages[0].content[0]: AN-TOOL-ORPHAN: messages.0.content.0: unexpected `tool_use_id` found in "
        "`tool_result` blocks: t9. Each `tool_result` block must have a corresponding `tool_use` block in the "
        "previous message.",
        "1 problem in 1 of 1 transcript"]
    ok = invoke(["validate", str(FIXTURES.parent.parent / "examples" / "anthropic-session.json")])
    assert ok.status == 0 and ok.stderr == "no problems in 1 transcript\n"


def test_cli_risk_counts_only_with_strict():
    body = json.dumps(CASES["OA-EXTRA-KEY"][1])
    r = invoke(["validate"], body)
    assert r.status == 0
    assert r.stderr.splitlines() == [
        "line 1: messages[0]: OA-EXTRA-KEY (risk): Additional properties are not allowed ('timestamp' was unexpected) "
        "- 'messages[0]'",
        "no problems in 1 transcript (1 risk not counted)"]
    assert invoke(["validate", "--strict"], body).status == 1


def test_cli_batch_line_numbers_and_json():
    lines = [CASES["OA-TOOL-ORPHAN"][2], CASES["OA-TOOL-ORPHAN"][1], CASES["AN-TOOL-DUP-ID"][1]]
    raw = "".join(json.dumps(doc) + "\n" for doc in lines)
    r = invoke(["validate"], raw)
    assert r.status == 1
    err = r.stderr.splitlines()
    assert err[0].startswith("line 2: messages[1].role: OA-TOOL-ORPHAN: Invalid parameter: messages with role")
    assert err[1] == "line 3: messages[3].content[0]: AN-TOOL-DUP-ID: messages.3.content.0: `tool_use` ids must be unique"
    assert err[-1] == "2 problems in 2 of 3 transcripts"
    j = invoke(["validate", "--format", "json"], raw)
    assert j.status == 1
    rows = [json.loads(line) for line in j.stdout.splitlines()]
    assert [(row["line"], row["rule"], row["path"], row["severity"], row["counted"]) for row in rows] == [
        (2, "OA-TOOL-ORPHAN", "messages[1].role", "reject", True),
        (3, "AN-TOOL-DUP-ID", "messages[3].content[0]", "reject", True)]


def test_cli_target_and_reference(tmp_path):
    body = CASES["AN-THINK-MODIFIED"][1]
    ref = tmp_path / "ref.json"
    ref.write_text(json.dumps(THOUGHT))
    assert invoke(["validate"], json.dumps(body)).status == 0  # no reference: not checked
    r = invoke(["validate", "--reference", str(ref)], json.dumps(body))
    assert r.status == 1 and "AN-THINK-MODIFIED: messages.1.content.0: Invalid `signature`" in r.stderr
    # an Anthropic body sent to OpenAI: its blocks are not OpenAI parts
    r = invoke(["validate", "--target", "openai"], json.dumps(THOUGHT))
    assert r.status == 1 and "OA-SCHEMA" in r.stderr and "OA-TOOL-" not in r.stderr


def test_cli_reads_logs_as_openai():
    r = invoke(["validate", str(FIXTURES / "formats" / "claude-code-session.jsonl")])
    assert r.status == 0, r.stderr


def test_sanitize_check_is_validate_pairing_subset():
    path = str(FIXTURES / "sanitize" / "orphans.json")
    check_lines = invoke(["sanitize", "--check", path]).stderr.splitlines()[:-1]
    validate_lines = invoke(["validate", path]).stderr.splitlines()[:-1]
    assert check_lines and check_lines == [line for line in validate_lines
                                           if line.split(": ")[1].split(" ")[0] in PAIRING_RULES]


# --- sanitize repairs what validate flags -----------------------------------------------------

def scramble_openai(msgs: list, rng: random.Random) -> list:
    """Misplace results: moved elsewhere, duplicated, a user message inside a run, an id reused
    by a later turn, an empty call list."""
    msgs = list(msgs)
    for _ in range(rng.randint(0, 4)):
        tools = [i for i, m in enumerate(msgs) if m.get("role") == "tool"]
        op = rng.randrange(5)
        if op == 0 and tools:
            msg = msgs.pop(rng.choice(tools))
            msgs.insert(rng.randrange(len(msgs) + 1), msg)
        elif op == 1 and tools:
            msgs.insert(rng.randrange(len(msgs) + 1), msgs[rng.choice(tools)])
        elif op == 2 and tools:
            msgs.insert(rng.choice(tools), {"role": "user", "content": "wait"})
        elif op == 3:
            asks = [i for i, m in enumerate(msgs) if m.get("tool_calls")]
            if asks:
                i = rng.choice(asks)
                end = i + 1
                while end < len(msgs) and msgs[end].get("role") == "tool":
                    end += 1
                msgs.extend(msgs[i:end])  # the same ids again, a later turn
        else:
            msgs.insert(rng.randrange(len(msgs) + 1), {"role": "assistant", "content": "x", "tool_calls": []})
    return msgs


def scramble_anthropic(msgs: list, rng: random.Random) -> list:
    """Misplace result blocks: moved to another user message, split into two user messages,
    text put before them, a tool_use id reused."""
    msgs = [dict(m) for m in msgs]
    for _ in range(rng.randint(0, 4)):
        holders = [i for i, m in enumerate(msgs) if m.get("role") == "user" and isinstance(m.get("content"), list)
                   and any(b.get("type") == "tool_result" for b in m["content"])]
        if not holders:
            break
        i = rng.choice(holders)
        blocks = list(msgs[i]["content"])
        op = rng.randrange(4)
        if op == 0:
            block = blocks.pop(rng.randrange(len(blocks)))
            msgs[i] = {**msgs[i], "content": blocks or [text("emptied")]}
            users = [k for k, m in enumerate(msgs) if m.get("role") == "user"]
            k = rng.choice(users)
            content = msgs[k]["content"]
            content = list(content) if isinstance(content, list) else [text(content or "q")]
            content.insert(rng.randrange(len(content) + 1), block)
            msgs[k] = {**msgs[k], "content": content}
        elif op == 1 and len(blocks) > 1:
            cut = rng.randrange(1, len(blocks))
            msgs[i: i + 1] = [{"role": "user", "content": blocks[:cut]}, {"role": "user", "content": blocks[cut:]}]
        elif op == 2:
            msgs[i] = {**msgs[i], "content": [text("note"), *blocks]}
        else:
            asks = [k for k, m in enumerate(msgs) if m.get("role") == "assistant" and isinstance(m.get("content"), list)
                    and any(b.get("type") == "tool_use" for b in m["content"])]
            if asks:
                k = rng.choice(asks)
                msgs.extend(msgs[k:k + 2])
    return msgs


def _transcript(seed: int, shape: str):
    msgs = [m for m in TranscriptGen(seed).transcript(8) if m.get("role") != "session_meta" or seed % 2]
    rng = random.Random(seed)
    if shape == OA:
        return scramble_openai(msgs, rng)
    body, _ = convert(msgs, target=AN)
    return {**body, "messages": scramble_anthropic(body["messages"], rng)}


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 10**6), shape=st.sampled_from([OA, AN]), stub=st.booleans())
def test_sanitize_output_has_no_pairing_problem(seed, shape, stub):
    doc = _transcript(seed, shape)
    frozen = copy.deepcopy(doc)
    out, report = sanitize(doc, stub=stub)
    assert doc == frozen
    assert check_pairing(out, shape) == [], (seed, report)
    assert sanitize(out, stub=stub)[0] == out  # a fixed point
    if report["repair"] == "none":
        assert stub or out is doc


def test_positional_repairs_are_counted():
    msgs = [USER, ASK, TOOL_A, {"role": "user", "content": "wait"}, TOOL_B, TOOL_B]
    out, report = sanitize(msgs)
    assert out == [USER, ASK, TOOL_A, TOOL_B, {"role": "user", "content": "wait"}]
    assert (report["repair"], report["results_moved"], report["duplicates_removed"]) == ("positional", 1, 1)
    body = an({"role": "user", "content": "q"}, {"role": "assistant", "content": [tool_use("t1"), tool_use("t2")]},
              {"role": "user", "content": [text("see"), tool_result("t2")]}, {"role": "user", "content": [tool_result("t1")]})
    out, report = sanitize(body)
    assert out["messages"][2:] == [{"role": "user", "content": [tool_result("t2"), tool_result("t1"), text("see")]}]
    assert report["results_moved"] == 2 and report["messages_joined"] == 1
    out, report = sanitize(CASES["AN-TOOL-DUP-ID"][1], stub=True)
    assert [b["id"] for m in out["messages"] for b in m["content"] if isinstance(b, dict) and b["type"] == "tool_use"] \
        == ["t1", "t1_2"]
    assert report["ids_renumbered"] == 1 and check_pairing(out) == []


def test_stub_never_leaves_an_empty_call_list_nor_drops_a_reused_exchange():
    msgs = [USER, ASK, TOOL_A, TOOL_B, USER, ASK, TOOL_A, TOOL_B,
            {"role": "assistant", "content": "x", "tool_calls": []}]
    out, report = sanitize(msgs, stub=True)
    assert out == msgs[:-1] + [{"role": "assistant", "content": "x"}]
    # (Hermes's pre-API repair drops the second exchange as a duplicate and leaves `tool_calls: []`)
    assert report["repair"] == "positional" and report["duplicates_removed"] == 0
    assert sanitize(msgs[:-1], stub=True)[0] == msgs[:-1]


def test_reference_may_be_a_session_log(tmp_path):
    # a log's events hold the thinking blocks deep inside; the body keeps one, changes another
    events = [{"type": "user", "message": {"role": "user", "content": "q"}},
              {"type": "assistant", "message": {"role": "assistant", "content": [thinking("a", "s1")]}},
              {"type": "assistant", "message": {"role": "assistant", "content": [thinking("b", "s2")]}}]
    log = tmp_path / "session.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in events))
    body = an({"role": "user", "content": "q"},
              {"role": "assistant", "content": [thinking("a", "s1"), thinking("b!", "s2"), text("answer")]})
    r = invoke(["validate", "--reference", str(log)], json.dumps(body, indent=1))
    assert r.status == 1
    assert r.stderr.splitlines()[0] == ("messages[1].content[1]: AN-THINK-MODIFIED: messages.1.content.1: "
                                        "Invalid `signature` in `thinking` block")
    assert r.stderr.splitlines()[-1] == "1 problem in 1 of 1 transcript"
    # one output per line (what `convert LOG` writes): each is checked against the whole log,
    # not against the log's line of the same number
    good = an({"role": "user", "content": "q"},
              {"role": "assistant", "content": [thinking("a", "s1"), thinking("b", "s2"), text("answer")]})
    r = invoke(["validate", "--jsonl", "--reference", str(log)], (json.dumps(good) + "\n") * 2)
    assert r.status == 0 and "AN-THINK-MODIFIED" not in r.stderr, r.stderr


def test_reference_batch_pairs_each_line_with_its_own(tmp_path):
    bodies = [an({"role": "user", "content": "q"},
                 {"role": "assistant", "content": [thinking(t, s), text("answer")]},
                 {"role": "user", "content": "more"}) for t, s in (("a", "s1"), ("b", "s2"))]
    ref = tmp_path / "in.jsonl"
    ref.write_text("".join(json.dumps(b) + "\n" for b in bodies))
    r = invoke(["validate", "--jsonl", "--reference", str(ref)], "".join(json.dumps(b) + "\n" for b in bodies))
    assert r.status == 0, r.stderr
    swapped = "".join(json.dumps(b) + "\n" for b in reversed(bodies))
    r = invoke(["validate", "--jsonl", "--reference", str(ref)], swapped)
    assert r.status == 1 and r.stderr.count("AN-THINK-MODIFIED") == 2, r.stderr


def test_sanitize_check_refuses_what_sanitize_refuses():
    for args in (["sanitize", "--check"], ["sanitize"]):
        r = invoke(args, b'[{"role": "user", "content": "x"}, 5]\n')
        assert r.status == 3 and "messages[1]" in r.stderr, args
    r = invoke(["validate"], b'[{"role": "user", "content": "x"}, 5]\n')
    assert r.status == 1 and "line 1: messages[1]: OA-SCHEMA: Invalid type for 'messages[1]': expected an object" in r.stderr


def test_sanitize_output_has_no_pairing_problem_on_adversarial_transcripts():
    from oracle.adversarial_prune import AdversarialGen

    from hermesctx.errors import HermesctxError
    from hermesctx.wire.rules import target_of

    for seed in range(300):
        for safe in (True, False):
            msgs = AdversarialGen(seed, hermes_safe=safe).transcript()
            target = target_of(msgs)
            for stub in (False, True):
                try:
                    out, _ = sanitize(msgs, stub=stub)
                except HermesctxError:  # refused as input (exit 3), not repaired
                    continue
                assert check_pairing(out, target) == [], (seed, safe, stub)
                check(out, OA)
                check(out, AN)  # never crashes


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=4)
                    | st.sampled_from(["user", "assistant", "tool", "text", "tool_use", "tool_result", "thinking",
                                       "id", "a", ""]),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.sampled_from(["role", "content", "type", "id", "tool_use_id", "tool_call_id",
                                                       "tool_calls", "text", "messages", "system", "cache_control",
                                                       "thinking", "signature", "input", "name", "function"]),
                                      inner, max_size=5),
                    max_leaves=30)


@settings(max_examples=300, deadline=None)
@given(doc=JSON, reference=JSON)
def test_check_never_crashes(doc, reference):
    for target in (OA, AN):
        check(doc, target, strict=True, reference=reference)
        check_pairing(doc, target)


_MESSAGE = st.builds(lambda m, role: {**m, "role": role},
                     st.dictionaries(st.sampled_from(["content", "tool_calls", "tool_call_id", "call_id"]), JSON, max_size=4),
                     st.sampled_from(["user", "assistant", "tool", "system", "x"]))


@settings(max_examples=300, deadline=None)
@given(msgs=st.lists(_MESSAGE, max_size=8), stub=st.booleans(), system=st.booleans())
def test_sanitize_repairs_malformed_messages_too(msgs, stub, system):
    from hermesctx.errors import HermesctxError
    from hermesctx.wire.rules import target_of

    doc = {"system": "s", "messages": msgs} if system else msgs
    try:
        out, _ = sanitize(doc, stub=stub)
    except HermesctxError:  # refused as input (exit 3)
        return
    assert check_pairing(out, target_of(doc)) == []
