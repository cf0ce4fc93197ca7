"""The agent tools (hermesctx.agent_tools): their schemas as the APIs take them, the one dispatcher
on a real store, and `hermesctx mcp` answering a real MCP client session (the SDK's stdio client
spawning the installed command)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hermesctx import agent_tools
from hermesctx.store import Store
from tests.conftest import EXAMPLES, invoke

SESSION = json.loads((EXAMPLES / "coding-session.json").read_text())
NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # both APIs' rule for a tool name


@pytest.fixture
def store_path(tmp_path) -> str:
    path = str(tmp_path / "archive.sqlite")
    with Store.open(path) as store:
        store.add(SESSION, session="demo", summary="the budget fix", start=3, end=20)
    return path


@pytest.fixture
def store(store_path):
    with Store.open(store_path, create=False) as opened:
        yield opened


def _declared(typed_dict) -> set:
    return set(typed_dict.__required_keys__) | set(typed_dict.__optional_keys__)


def test_openai_schemas_are_function_tools():
    from openai.types.chat import ChatCompletionToolParam
    from openai.types.shared_params import FunctionDefinition

    tools = agent_tools.schemas("openai")
    assert [t["function"]["name"] for t in tools] == ["recall", "expand"]
    for tool in tools:
        assert set(tool) <= _declared(ChatCompletionToolParam) and tool["type"] == "function"
        assert set(tool["function"]) <= _declared(FunctionDefinition)
        assert NAME.match(tool["function"]["name"]) and tool["function"]["description"]
        params = tool["function"]["parameters"]
        assert params["type"] == "object" and set(params["required"]) <= set(params["properties"])


def test_anthropic_schemas_are_tools():
    from anthropic.types import ToolParam

    tools = agent_tools.schemas("anthropic")
    assert [t["name"] for t in tools] == ["recall", "expand"]
    for tool in tools:
        assert set(tool) <= _declared(ToolParam) and {"name", "input_schema"} <= set(tool)
        assert NAME.match(tool["name"]) and tool["input_schema"]["type"] == "object"
    assert agent_tools.schemas("mcp")[0]["inputSchema"] == tools[0]["input_schema"]
    with pytest.raises(ValueError, match="unknown tool-schema target"):
        agent_tools.schemas("gemini")


def _openai_request(result: dict) -> dict:
    call = {"id": "call_1", "type": "function",
            "function": {"name": "recall", "arguments": json.dumps({"query": "src/budget.py"})}}
    return {"model": "gpt-4o", "tools": agent_tools.schemas("openai"), "messages": [
        {"role": "user", "content": "What did we change in src/budget.py?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_1", "content": json.dumps(result)}]}


def _anthropic_request(result: dict) -> dict:
    return {"model": "claude-sonnet-4-5", "max_tokens": 1024, "tools": agent_tools.schemas("anthropic"),
            "messages": [
                {"role": "user", "content": "What did we change in src/budget.py?"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "recall",
                                                   "input": {"query": "src/budget.py"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                              "content": json.dumps(result)}]}]}


@pytest.mark.parametrize(("target", "request_of"), [("openai", _openai_request),
                                                      ("anthropic", _anthropic_request)])
def test_a_request_with_the_tools_and_a_call_passes_validate(store, target, request_of):
    result = agent_tools.call(store, "recall", {"query": "src/budget.py"})
    assert result["count"] > 0
    checked = invoke(["validate", "--strict", "--target", target], request_of(result))
    assert checked.status == 0, checked.stderr


def test_recall_finds_a_file_path_of_the_archived_messages(store):
    result = agent_tools.call(store, "recall", json.dumps({"query": "src/budget.py", "limit": 3}))
    assert 0 < result["count"] <= 3
    for hit in result["hits"]:
        assert hit["span"].startswith("hx-") and "budget" in hit["snippet"]
        message = SESSION[hit["position"]] if hit["kind"] == "message" else None
        assert message is None or "src/budget.py" in json.dumps(message)


def test_expand_gives_back_the_messages(store):
    span = agent_tools.call(store, "recall", {"query": "src/budget.py"})["hits"][0]["span"]
    result = agent_tools.call(store, "expand", {"span": span})
    assert result["count"] == len(SESSION) and result["session"] == "demo"
    assert result["messages"] == SESSION  # (no secrets in it: redaction changes nothing)


def test_expand_redacts_what_it_hands_to_the_model(tmp_path):
    secret = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0" * 2
    messages = [{"role": "user", "content": f"use OPENAI_API_KEY={secret}"},
                {"role": "assistant", "content": "ok"}]
    with Store.open(str(tmp_path / "s.sqlite")) as store:
        span = store.add(messages, session="x")
        result = agent_tools.call(store, "expand", {"span": span})
        assert secret not in json.dumps(result)
        assert store.expand(span) == messages  # the store itself stays lossless


@pytest.mark.parametrize(("name", "arguments", "error"), [
    ("grep", {}, "unknown tool 'grep' (tools: recall, expand)"),
    ("recall", {}, "recall: query is required"),
    ("recall", {"query": 3}, "recall: query must be a string"),
    ("recall", "{not json", "recall: arguments are not valid JSON"),
    ("recall", ["q"], "recall: arguments must be an object, not list"),
    ("recall", {"query": "x", "limit": 0}, "recall: limit must be between 1 and 100"),
    ("recall", {"query": "x", "limit": True}, "recall: limit must be an integer"),
    ("recall", {"query": "x", "role": "robot"}, "recall: role must be one of system, user, assistant, tool"),
    ("recall", {"query": "x", "scope": "all"}, "recall: unknown argument 'scope' (accepted: query, session, "
                                               "role, tool, limit)"),
    ("recall", {"query": "///"}, "recall: the query '///' has no word to search for (letters or digits)"),
    ("expand", {"span": "nope"}, "expand: 'nope' is not a span id (hx- and 12 hex digits)"),
])
def test_bad_arguments_are_an_error_result(store, name, arguments, error):
    assert agent_tools.call(store, name, arguments) == {"error": error}


def test_an_unknown_span_is_an_error_result(store, store_path):
    result = agent_tools.call(store, "expand", {"span": "hx-000000000000"})
    assert result == {"error": f"expand: unknown span hx-000000000000 in {os.path.abspath(store_path)}"}


# --- hermesctx mcp, with a real client ---------------------------------------------------------

HERMESCTX = str(Path(sys.executable).parent / "hermesctx")


def test_mcp_server_answers_a_real_client(tmp_path):
    """The store written by `compress --archive`; the span quoted in the summary is the one
    the client expands."""
    pytest.importorskip("mcp")
    store_path = str(tmp_path / "archive.sqlite")
    compressed = invoke(["compress", "--archive", store_path, "--protect-last-n", "4", "--tail-tokens", "200",
                         str(EXAMPLES / "coding-session.json")])
    assert compressed.status == 0, compressed.stderr
    quoted = set(re.findall(r"hx-[0-9a-f]{12}", compressed.stdout.decode()))
    assert len(quoted) == 1
    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    async def session() -> dict:
        params = StdioServerParameters(command=HERMESCTX, args=["mcp", "--archive", store_path],
                                       env={"HERMESCTX_CONFIG": os.devnull})
        with anyio.fail_after(60):  # a hung server fails the test instead of the suite
            async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
                init = await client.initialize()
                listed = await client.list_tools()
                recall = await client.call_tool("recall", {"query": "src/budget.py", "limit": 2})
                span = recall.structured_content["hits"][0]["span"]
                expand = await client.call_tool("expand", {"span": span})
                bad = await client.call_tool("expand", {"span": "hx-000000000000"})
                return {"init": init, "tools": listed.tools, "recall": recall, "expand": expand, "bad": bad}

    got = anyio.run(session)
    assert got["init"].server_info.name == "hermesctx"
    assert [t.name for t in got["tools"]] == ["recall", "expand"]
    assert got["tools"][0].input_schema == agent_tools.schemas("mcp")[0]["inputSchema"]
    recall = got["recall"]
    assert not recall.is_error and recall.structured_content["count"] == 2
    assert {h["span"] for h in recall.structured_content["hits"]} == quoted
    assert json.loads(recall.content[0].text) == recall.structured_content
    assert got["expand"].structured_content["messages"] == SESSION
    assert got["bad"].is_error and "unknown span hx-000000000000" in got["bad"].content[0].text


def test_mcp_with_a_missing_store_is_one_line(tmp_path):
    missing = str(tmp_path / "none.sqlite")
    out = subprocess.run([HERMESCTX, "mcp", "--archive", missing], capture_output=True, text=True,
                         stdin=subprocess.DEVNULL, timeout=60)
    assert out.returncode == 5
    assert len(out.stderr.splitlines()) == 1 and missing in out.stderr
    assert not os.path.exists(missing)


# an import hook that makes `mcp` missing in a fresh interpreter, as without the extra
_WITHOUT_MCP = """
import sys
class Hide:
    def find_spec(self, name, path=None, target=None):
        if name == "mcp" or name.startswith("mcp."):
            raise ModuleNotFoundError(name)
sys.meta_path.insert(0, Hide())
from hermesctx.launch import main
sys.argv = ["hermesctx", "mcp", "--archive", sys.argv[1]]
main()
"""


def test_mcp_without_the_extra_names_it(store_path):
    out = subprocess.run([sys.executable, "-c", _WITHOUT_MCP, store_path], capture_output=True, text=True,
                         stdin=subprocess.DEVNULL, timeout=60)
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip() == (
        "hermesctx: error: hermesctx mcp needs the mcp SDK, which is not installed: "
        "pipx inject hermesctx mcp, or from a checkout: pip install '.[mcp]' (uv tool install '.[mcp]')")


@pytest.mark.parametrize("target", ["openai", "anthropic", "mcp"])
def test_recall_tool_schema_prints_the_definitions(target):
    result = invoke(["recall", "--tool-schema", "--target", target])
    assert result.status == 0, result.stderr
    assert result.json == agent_tools.schemas(target)
    assert invoke(["recall", "--tool-schema"]).json == agent_tools.schemas("openai")


def test_recall_target_needs_tool_schema():
    result = invoke(["recall", "src", "--target", "anthropic", "--archive", "x.sqlite"])
    assert result.status == 2 and "--target goes with --tool-schema" in result.stderr


def test_mcp_needs_a_store():
    result = invoke(["mcp"], environ={"HERMESCTX_CONFIG": os.devnull})
    assert result.status == 2
    assert "give --archive FILE.sqlite (or archive.path in the config)" in result.stderr


def test_expand_pages_a_large_span_and_says_what_is_left(tmp_path):
    from hermesctx.store import Store

    messages = [{"role": "user", "content": f"turn {k} " + "x" * 9000} for k in range(20)]
    with Store.open(str(tmp_path / "big.sqlite")) as store:
        span = store.add(messages, session="s")
        pages, offset = [], 0
        while offset is not None:
            page = agent_tools.call(store, "expand", {"span": span, "offset": offset})
            assert len(json.dumps(page["messages"])) <= agent_tools.PAGE_CHARS  # under ~15,000 tokens
            assert page["total"] == 20 and page["left"] == 20 - page["offset"] - page["count"]
            pages.append(page)
            offset = page["next_offset"]
        assert [m for p in pages for m in p["messages"]] == messages and len(pages) > 1
        two = agent_tools.call(store, "expand", {"span": span, "offset": 3, "limit": 2})
        assert two["messages"] == messages[3:5] and two["next_offset"] == 5
