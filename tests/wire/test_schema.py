"""validate checks the whole body against the providers' published request schemas (the data
files `make schemas` writes): it agrees with the schema itself (checked here with jsonschema
directly) on generated bodies, names the schema path, takes beta features as a risk, and loads
the schemas only for a body that has parameters."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from hermesctx.tools import gen_schemas
from hermesctx.wire import schema
from hermesctx.wire.rules import check, failed

DATA = Path(schema.__file__).resolve().parent.parent / "data"
SHARED_OPENAI = Path(__file__).resolve().parents[3] / "shared" / "wire-rules" / "openai-openapi-f85dbe2-chat.json"


def independent(target: str, root: str) -> Draft202012Validator:
    doc = json.loads((DATA / schema.FILES[target]).read_text())
    return Draft202012Validator({"$ref": f"#/components/schemas/{root}", "components": doc["components"]})


OPENAI = independent("openai", "CreateChatCompletionRequest")
ANTHROPIC = independent("anthropic", "CreateMessageParams")
ANTHROPIC_BETA = independent("anthropic", "BetaCreateMessageParams")


def test_the_data_files_say_their_source_and_version():
    for target, (root, beta) in schema.ROOTS.items():
        doc = json.loads((DATA / schema.FILES[target]).read_text())
        assert doc["source"] and doc["version"] and len(doc["sha256"]) == 64
        assert root in doc["components"]["schemas"] and (beta is None or beta in doc["components"]["schemas"])
        assert "\"examples\"" not in json.dumps(doc["components"]) and "\"nullable\"" not in json.dumps(doc["components"])


@pytest.mark.skipif(not SHARED_OPENAI.exists(), reason="needs ../shared/wire-rules")
def test_make_schemas_writes_the_openai_file_as_it_is(tmp_path):
    openai, digest = gen_schemas.load(str(SHARED_OPENAI))
    made = gen_schemas.trimmed(openai, ["CreateChatCompletionRequest"], gen_schemas.OPENAI_SOURCE, digest, "f85dbe2")
    assert made == json.loads((DATA / gen_schemas.OPENAI_FILE).read_text())


def test_nullable_becomes_a_null_type_and_property_names_stay():
    cleaned = gen_schemas.clean({"type": "object", "description": "x", "properties": {
        "description": {"type": "string", "nullable": True, "description": "d"},
        "mode": {"enum": ["a"], "type": "string", "nullable": True}, "ref": {"$ref": "#/x", "nullable": True}}})
    assert cleaned == {"type": "object", "properties": {
        "description": {"type": ["string", "null"]}, "mode": {"enum": ["a", None], "type": ["string", "null"]},
        "ref": {"anyOf": [{"$ref": "#/x"}, {"type": "null"}]}}}


USER = {"role": "user", "content": "hi"}


def found(body, target):
    return [(p.path, p.rule, p.severity) for p in check(body, target)]


def test_what_the_sdk_types_reject_is_rejected_naming_the_schema_path():
    problems = check({"model": "gpt-4o", "messages": [USER], "user": None}, "openai")
    (p,) = problems
    assert (p.path, p.rule, p.severity) == ("user", "OA-SCHEMA", "reject")
    assert "schema: CreateChatCompletionRequest/" in p.message and p.message.endswith("/user/type)")
    # Responses-style tools in a chat body, another API's tool_choice
    responses_tool = {"type": "function", "name": "f", "parameters": {"type": "object"}}
    assert ("tools[0].function", "OA-SCHEMA", "reject") in found(
        {"model": "m", "messages": [USER], "tools": [responses_tool]}, "openai")
    tool = {"type": "function", "function": {"name": "f"}}
    assert ("tool_choice", "OA-SCHEMA", "reject") in found(
        {"model": "m", "messages": [USER], "tools": [tool], "tool_choice": {"type": "any"}}, "openai")
    assert ("tool_choice", "AN-SCHEMA", "reject") in found(
        {"model": "m", "max_tokens": 5, "messages": [USER], "tool_choice": "auto",
         "tools": [{"name": "f", "input_schema": {"type": "object"}}]}, "anthropic")
    assert ("service_tier", "OA-SCHEMA", "reject") in found({"model": "m", "messages": [USER], "service_tier": "gold"}, "openai")
    assert ("temperature", "AN-SCHEMA", "reject") in found({"model": "m", "max_tokens": 5, "messages": [USER],
                                                            "temperature": 1.5}, "anthropic")


def test_beta_features_are_a_risk_not_a_rejection():
    body = {"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": [
        USER, {"role": "assistant", "content": [
            {"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "ask", "server_name": "wiki", "input": {}},
            {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_1", "is_error": False,
             "content": [{"type": "text", "text": "yes"}]},
            {"type": "text", "text": "done"}]}],
        "mcp_servers": [{"type": "url", "url": "https://mcp.example/sse", "name": "wiki"}],
        "context_management": {"edits": [{"type": "clear_tool_uses_20250919"}]}}
    problems = check(body, "anthropic")
    assert problems and not failed(problems), problems
    assert {p.severity for p in problems} == {"risk"}
    assert {p.path for p in problems} >= {"mcp_servers", "context_management", "messages[1].content[0]"}


def test_a_small_body_never_loads_the_schemas():
    code = ("import sys; from hermesctx.wire.rules import check\n"
            "hi = [{'role': 'user', 'content': 'hi'}]\n"
            "check(hi, 'openai'); check({'model': 'm', 'max_tokens': 9, 'stream': True, 'messages': hi}, 'anthropic')\n"
            "a = 'jsonschema' in sys.modules\n"
            "check({'model': 'm', 'max_tokens': 0, 'messages': hi}, 'anthropic')\n"
            "print(a, 'jsonschema' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(os.environ))
    assert out.stdout.split() == ["False", "True"], out.stderr
    # a plain parameter's value other than the usual: the schema judges it
    for body in ({"model": "m", "max_tokens": 0}, {"model": "", "max_tokens": 5}, {"model": "m", "max_tokens": 5, "top_p": 1.5},
                 {"model": "m", "max_tokens": True}, {"model": "m" * 300, "max_tokens": 5}):
        body = {**body, "messages": [USER]}
        assert schema.needed(body) and failed(check(body, "anthropic")) == (not ANTHROPIC.is_valid(body)), body
    body = {"model": "m", "max_tokens": 5, "stream": False, "temperature": 0.5, "top_p": 1, "messages": [USER]}
    assert not schema.needed(body) and ANTHROPIC.is_valid(body) and OPENAI.is_valid(body)
    assert not schema.needed({**body, "system": "s"}) and ANTHROPIC.is_valid({**body, "system": "s"})


# --- agreement with the schemas themselves, on generated bodies ------------------------------

VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 5000), st.sampled_from([0.5, 1.5, 2.5, -1.0]),
                   st.sampled_from(["auto", "none", "required", "any", "x", "default", "flex", ""]),
                   st.lists(st.sampled_from(["a", "b"]), max_size=5),
                   st.sampled_from([{}, {"type": "auto"}, {"type": "any"}, {"type": "tool", "name": "f"},
                                    {"type": "function", "function": {"name": "f"}}, {"user_id": "u"},
                                    {"type": "enabled", "budget_tokens": 2048}, {"type": "disabled"}]))
OA_KEYS = ["temperature", "top_p", "max_tokens", "max_completion_tokens", "stop", "user", "service_tier",
           "tool_choice", "parallel_tool_calls", "n", "seed", "stream", "metadata", "reasoning_effort",
           "presence_penalty", "logprobs"]
AN_KEYS = ["temperature", "top_p", "top_k", "max_tokens", "stop_sequences", "service_tier", "tool_choice",
           "metadata", "stream", "thinking", "system"]
OA_TOOL = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
AN_TOOL = {"name": "f", "input_schema": {"type": "object"}}


@settings(max_examples=150, deadline=None)
@given(params=st.dictionaries(st.sampled_from(OA_KEYS), VALUES, max_size=4), tools=st.booleans())
def test_openai_agrees_with_the_schema(params, tools):
    body = {"model": "gpt-4o", "messages": [USER], **params, **({"tools": [OA_TOOL]} if tools else {})}
    if not OPENAI.is_valid(body):
        assert failed(check(body, "openai")), body


@settings(max_examples=150, deadline=None)
@given(params=st.dictionaries(st.sampled_from(AN_KEYS), VALUES, max_size=4), tools=st.booleans())
def test_anthropic_agrees_with_the_schema(params, tools):
    body = {"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": [USER], **params,
            **({"tools": [AN_TOOL]} if tools else {})}
    problems = check(body, "anthropic")
    if not ANTHROPIC_BETA.is_valid(body):
        assert failed(problems), body
    elif not ANTHROPIC.is_valid(body):
        assert problems, body  # what only the beta API takes: said, as a risk
