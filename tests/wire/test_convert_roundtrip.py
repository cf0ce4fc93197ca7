"""`convert --to anthropic | convert --to openai` (and back from Anthropic) over generated request
bodies: every tool call is answered exactly once on each side (a tool id repeated within one turn
gets distinct ids, each result pointing to its own call), every call, result and translatable
parameter comes back, and what each step writes passes `validate` (the published schemas
included)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from hermesctx.wire.rules import check, failed
from tests.conftest import invoke

NAMES = ("terminal", "read_file", "search")
WORDS = st.text(alphabet="abcdefgh ", min_size=1, max_size=12).filter(lambda t: t.strip())
SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}}


@st.composite
def openai_bodies(draw):
    msgs: list = [{"role": "user", "content": draw(WORDS)}]
    n = 0
    for _ in range(draw(st.integers(0, 4))):
        calls = []
        for _ in range(draw(st.integers(1, 3))):
            n += 1
            # ids repeat within a turn and across turns (OpenAI takes both)
            cid = draw(st.sampled_from([f"call_{n}", "call_1", "dup"]))
            calls.append({"id": cid, "type": "function", "function": {
                "name": draw(st.sampled_from(NAMES)), "arguments": json.dumps({"q": str(n)})}})
        msgs.append({"role": "assistant", "content": draw(st.sampled_from([None, "let me see"])),
                     "tool_calls": calls})
        msgs += [{"role": "tool", "tool_call_id": c["id"], "content": f"result {k}"} for k, c in enumerate(calls)]
        msgs.append({"role": "user", "content": draw(WORDS)})
    body = {"model": "gpt-4o", "messages": msgs}
    if draw(st.booleans()):
        body[draw(st.sampled_from(["max_tokens", "max_completion_tokens"]))] = draw(st.integers(1, 9000))
    if draw(st.booleans()):
        body["stop"] = draw(st.one_of(WORDS, st.lists(WORDS, min_size=1, max_size=4)))
    for key in ("temperature", "top_p"):
        if draw(st.booleans()):
            body[key] = draw(st.sampled_from([0, 0.25, 0.5, 1]))
    if draw(st.booleans()):
        body["stream"] = draw(st.booleans())
    if draw(st.booleans()):
        body["user"] = draw(WORDS)
    if draw(st.booleans()):
        body["tools"] = [{"type": "function", "function": {"name": name, "description": f"the {name} tool",
                                                            "parameters": SCHEMA}} for name in NAMES]
        body["tool_choice"] = draw(st.sampled_from(
            ["auto", "required", "none", {"type": "function", "function": {"name": "search"}}]))
        if draw(st.booleans()):
            body["parallel_tool_calls"] = draw(st.booleans())
    return body


@st.composite
def anthropic_bodies(draw):
    msgs: list = [{"role": "user", "content": draw(WORDS)}]
    for turn in range(draw(st.integers(0, 4))):
        uses = [{"type": "tool_use", "id": f"toolu_{turn}_{k}", "name": draw(st.sampled_from(NAMES)),
                 "input": {"q": str(k)}} for k in range(draw(st.integers(1, 3)))]
        msgs.append({"role": "assistant", "content": [{"type": "text", "text": "let me see"}, *uses]})
        msgs.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": u["id"], "content": f"result {k}"} for k, u in enumerate(uses)]})
    body = {"model": "claude-sonnet-4-5", "max_tokens": draw(st.integers(1, 9000)), "messages": msgs}
    if draw(st.booleans()):
        body["system"] = draw(WORDS)
    if draw(st.booleans()):
        body["stop_sequences"] = draw(st.lists(WORDS, min_size=1, max_size=4))
    for key in ("temperature", "top_p"):
        if draw(st.booleans()):
            body[key] = draw(st.sampled_from([0, 0.5, 1]))
    if draw(st.booleans()):
        body["metadata"] = {"user_id": draw(WORDS)}
    if draw(st.booleans()):
        body["tools"] = [{"name": name, "description": f"the {name} tool", "input_schema": SCHEMA} for name in NAMES]
        choice = draw(st.sampled_from([{"type": "auto"}, {"type": "any"}, {"type": "none"},
                                       {"type": "tool", "name": "search"}]))
        if choice["type"] != "none" and draw(st.booleans()):  # ({type: none} takes no flag)
            choice["disable_parallel_tool_use"] = draw(st.booleans())
        body["tool_choice"] = choice
    return body


def convert(body, target, model):
    # (--from: a body with no system, Anthropic tool or block is OpenAI's too, as far as its
    # shape tells; `convert --to openai` reads it so unless told)
    source = "openai" if target == "anthropic" else "anthropic"
    result = invoke(["convert", "--from", source, "--to", target, "--model", model], body)
    assert result.status == 0, result.stderr
    out = result.json
    problems = check(out, target)
    assert not failed(problems), problems
    return out


def openai_pairs(messages, unique: bool = True) -> list[tuple[str, str]]:
    """``(call name + arguments, result content)`` of every call, each answered exactly once
    by a tool message of the run right after its assistant message (``unique``: the ids of a
    turn all differ; else the results of a repeated id answer its calls in order)."""
    pairs = []
    for i, msg in enumerate(messages):
        calls = msg.get("tool_calls") or []
        if msg["role"] != "assistant" or not calls:
            continue
        run = []
        for later in messages[i + 1:]:
            if later["role"] != "tool":
                break
            run.append(later)
        ids = [c["id"] for c in calls]
        assert len(set(ids)) == len(ids) or not unique
        assert sorted(t["tool_call_id"] for t in run) == sorted(ids)
        answers: dict = {}
        for t in run:
            answers.setdefault(t["tool_call_id"], []).append(t["content"])
        pairs += [(c["function"]["name"] + c["function"]["arguments"].replace(" ", ""),
                   answers[c["id"]].pop(0)) for c in calls]
    return pairs


def anthropic_pairs(messages) -> list[tuple[str, str]]:
    """The same of an Anthropic body: every tool_use answered once by the next user turn, ids
    unique over the whole body."""
    pairs, seen = [], set()
    for i, msg in enumerate(messages):
        uses = [b for b in msg["content"] if isinstance(b, dict) and b["type"] == "tool_use"] \
            if isinstance(msg["content"], list) else []
        if not uses:
            continue
        results = [b for b in messages[i + 1]["content"] if b["type"] == "tool_result"]
        ids = [u["id"] for u in uses]
        assert not seen & set(ids) and len(set(ids)) == len(ids)
        seen |= set(ids)
        assert sorted(r["tool_use_id"] for r in results) == sorted(ids)
        answer = {r["tool_use_id"]: r["content"] for r in results}
        pairs += [(u["name"] + str(u["input"]).replace(" ", "").replace("'", '"'), answer[u["id"]]) for u in uses]
    return pairs


def openai_params(body: dict) -> dict:
    out = {k: v for k, v in body.items() if k not in ("messages", "model", "max_tokens", "max_completion_tokens")}
    tokens = body.get("max_completion_tokens", body.get("max_tokens"))
    if tokens is not None:
        out["max_tokens"] = tokens
    if isinstance(out.get("stop"), str):
        out["stop"] = [out["stop"]]
    if "parallel_tool_calls" in out and "tool_choice" not in out:
        out["tool_choice"] = "auto"  # (Anthropic holds the flag on a tool_choice)
    if out.get("tool_choice") == "none":
        out.pop("parallel_tool_calls", None)  # (no calls: Anthropic's {type: none} takes no flag)
    return out


@settings(max_examples=60, deadline=None)
@given(body=openai_bodies())
def test_openai_to_anthropic_and_back_keeps_calls_results_and_parameters(body):
    assert not failed(check(body, "openai"))  # an accepted input
    there = convert(body, "anthropic", "claude-sonnet-4-5")
    assert there["model"] == "claude-sonnet-4-5"
    pairs = openai_pairs(body["messages"], unique=False)
    assert anthropic_pairs(there["messages"]) == pairs
    back = convert(there, "openai", "gpt-4o")
    assert openai_pairs(back["messages"]) == pairs
    # (Anthropic requires max_tokens: a body without one gets convert's default, 4096)
    assert openai_params(back) == {"max_tokens": 4096, **openai_params(body)}
    assert back["model"] == "gpt-4o"


@settings(max_examples=60, deadline=None)
@given(body=anthropic_bodies())
def test_anthropic_to_openai_and_back_keeps_calls_results_and_parameters(body):
    assert not failed(check(body, "anthropic"))  # an accepted input
    there = convert(body, "openai", "gpt-4o")
    pairs = anthropic_pairs(body["messages"])
    assert openai_pairs(there["messages"]) == pairs
    back = convert(there, "anthropic", "claude-sonnet-4-5")
    assert anthropic_pairs(back["messages"]) == pairs
    assert {k: v for k, v in back.items() if k != "messages"} == {k: v for k, v in body.items() if k != "messages"}


def test_without_model_crossing_exits_2_naming_the_flag():
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
    result = invoke(["convert", "--to", "anthropic"], body)
    assert result.status == 2 and "--model" in result.stderr and result.stdout == b""
    # the same provider: the model stays; a bare list has none to carry
    assert invoke(["convert", "--to", "openai"], body).json["model"] == "gpt-4o"
    out = invoke(["convert", "--to", "anthropic"], body["messages"]).json
    assert "model" not in out and "max_tokens" not in out
    out = invoke(["convert", "--to", "anthropic", "--model", "claude-x", "--max-tokens", "100"], body).json
    assert out["model"] == "claude-x" and out["max_tokens"] == 100


def test_a_parameter_with_no_counterpart_is_dropped_and_counted(tmp_path):
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], "seed": 7, "n": 1,
            "temperature": 1.6, "logit_bias": {"50256": -100}}
    report = tmp_path / "r.json"
    result = invoke(["convert", "--to", "anthropic", "--model", "claude-x", "--report", str(report)], body)
    assert result.status == 0
    out = result.json
    assert out == {"model": "claude-x", "messages": [{"role": "user", "content": "hi"}], "temperature": 1,
                   "max_tokens": 4096}

    lost = json.loads(report.read_text())["lost"]
    assert lost == {"parameter 'seed' (no counterpart)": 1, "parameter 'n' (no counterpart)": 1,
                    "temperature above Anthropic's 1 (lowered to 1)": 1,
                    "parameter 'logit_bias' (no counterpart)": 1}
    assert "parameter 'seed' (no counterpart): 1 not kept in the anthropic output" in result.stderr


def test_legacy_function_messages_become_tool_results():
    body = {"model": "gpt-4o", "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "function_call": {"name": "f", "arguments": '{"a": 1}'}},
        {"role": "function", "name": "f", "content": "5"}, {"role": "assistant", "content": "ok"}],
        "functions": [{"name": "f", "parameters": SCHEMA}], "function_call": {"name": "f"}}
    out = convert(body, "anthropic", "claude-x")
    assert out["messages"][1:3] == [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "fn_1", "name": "f", "input": {"a": 1}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "fn_1", "content": "5"}]}]
    assert out["tools"] == [{"name": "f", "input_schema": SCHEMA}]
    assert out["tool_choice"] == {"type": "tool", "name": "f"}


_SDK: dict = {}


def sdk_types():
    """The official SDKs' own request types (pydantic over MessageCreateParams /
    CompletionCreateParams), built once: the third judge of what convert writes."""
    if not _SDK:
        from anthropic.types import MessageCreateParams
        from openai.types.chat import CompletionCreateParams
        from pydantic import TypeAdapter

        _SDK["anthropic"] = TypeAdapter(MessageCreateParams)
        _SDK["openai"] = TypeAdapter(CompletionCreateParams)
    return _SDK


@settings(max_examples=25, deadline=None)
@given(body=st.one_of(openai_bodies(), anthropic_bodies()))
def test_what_convert_writes_the_sdk_types_accept(body):
    for target, model in (("anthropic", "claude-sonnet-4-5"), ("openai", "gpt-4o")):
        result = invoke(["convert", "--to", target, "--model", model], body)
        assert result.status == 0, result.stderr
        sdk_types()[target].validate_python(result.json)  # raises on what the SDK rejects


def test_tool_definitions_the_target_rejects_are_warned_of(tmp_path):
    long = "a" * 100  # Anthropic's schema takes up to 128 characters, OpenAI 64
    body = {"model": "claude-x", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}],
            "tools": [{"name": long, "input_schema": {"type": "object"}}, {"name": "b", "input_schema": {"type": "object"}}]}
    assert not failed(check(body, "anthropic"))
    report = tmp_path / "r.json"
    result = invoke(["convert", "--to", "openai", "--model", "gpt-4o", "--report", str(report)], body)
    assert result.status == 0
    assert ("line 1: tool definitions: tools[0].function.name: OA-TOOLDEF-NAME: Invalid "
            "'tools[0].function.name': string does not match pattern") in result.stderr
    assert json.loads(report.read_text())["tool_definitions"][0].startswith("tools[0].function.name: OA-TOOLDEF-NAME")
    clean = invoke(["convert", "--to", "openai", "--model", "gpt-4o"], {**body, "tools": body["tools"][1:]})
    assert "tool definitions" not in clean.stderr
