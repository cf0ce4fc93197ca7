"""The shapes genuine logs have (issue 15; JSON Lines batches detected per line, issue 14 part 4),
on fixtures written for them (tests/fixtures/formats/: our own content, the logs' structure):
Responses first-turn requests and server-side items, Anthropic server-side blocks, ShareGPT
arrays and dialects, containers and refusals, gzip input, Codex usage."""

from __future__ import annotations

import gzip
import json

import pytest
from conftest import EXAMPLES, FIXTURES, invoke

from hermesctx import formats
from hermesctx.errors import InputError
from hermesctx.stages.normalize_usage import normalize_usage

F = FIXTURES / "formats"
FIRST_TURN = F / "responses-first-turn.json"
RESP_SERVER = F / "responses-server-items.json"
ANTH_SERVER = F / "anthropic-server-blocks.json"
SG_ARRAY = F / "sharegpt-array.json"
SG_LLAMA = F / "sharegpt-llamafactory.json"
SG_ROLES = F / "sharegpt-role-content.jsonl"
SWE_TRAJ = F / "swe-agent.traj"
TAU = F / "tau-bench-results.json"
CODEX = F / "codex-rollout.jsonl"
CODEX_EVENTS = F / "codex-event-only.jsonl"

# every command that reads a transcript, as a user would run it
COMMANDS = [["estimate"], ["prune"], ["sanitize"], ["sanitize", "--check"],
            ["compress", "--summarizer", "extractive"], ["cache-mark"], ["spill", "--dry-run"],
            ["convert", "--to", "openai"], ["convert", "--model", "claude-sonnet-4-5", "--to", "anthropic"]]


def run(*args, stdin=b""):
    result = invoke([str(a) for a in args], stdin)
    assert result.status == 0, result.stderr
    return result


def read_as(path) -> str:
    return run("convert", "-v", "--model", "gpt-4o", path).stderr.splitlines()[0]


def roles(messages):
    return [m["role"] for m in messages]


def refusal(args) -> str:
    """The one stderr line of a command that refused its input (exit 3, nothing on stdout)."""
    result = invoke(args)
    assert result.status == 3, result.stderr
    assert result.stdout == b""
    (line,) = result.stderr.strip().splitlines()
    return line


# --- detection ---------------------------------------------------------------------------------

@pytest.mark.parametrize("path, name", [
    (FIRST_TURN, "responses"), (RESP_SERVER, "responses"), (ANTH_SERVER, "anthropic"),
    (SG_ARRAY, "sharegpt"), (SG_LLAMA, "sharegpt"), (SG_ROLES, "sharegpt"), (SWE_TRAJ, "openai")])
def test_detected(path, name):
    assert read_as(path).endswith(f"read as {name}")


@pytest.mark.parametrize("args", COMMANDS)
def test_a_first_turn_responses_request_is_read_by_every_command(args):
    result = invoke(args + [str(FIRST_TURN)])
    assert result.status in (0, 1), result.stderr
    if args[0] == "convert":
        doc = result.json
        if args[-1] == "openai":
            assert doc["messages"] == [{"role": "user", "content": "Quelle est la capitale de la Patatie ?"}]
            assert doc["tools"][0]["function"]["name"] == "capitale"  # chat's form
        else:
            assert doc["messages"] == [{"role": "user", "content": "Quelle est la capitale de la Patatie ?"}]


def test_an_object_with_input_and_no_messages_is_a_responses_request():
    assert formats.detect_document({"model": "gpt-4o", "input": "Bonjour"}) == "responses"
    assert formats.detect_document({"input": [{"role": "user", "content": "a"}]}) == "responses"
    assert formats.detect_document({"input": [], "messages": [{"role": "user", "content": "a"}]}) == "openai"


def test_an_anthropic_body_is_told_by_its_top_level_keys_and_tool_shapes():
    user = [{"role": "user", "content": [{"type": "text", "text": "a"}]}]
    assert formats.detect_document({"mcp_servers": [], "messages": user}) == "anthropic"
    assert formats.detect_document({"tools": [{"name": "t", "input_schema": {}}], "messages": user}) == "anthropic"
    assert formats.detect_document({"tools": [{"type": "web_search_20250305", "name": "web_search"}],
                                    "messages": user}) == "anthropic"
    assert formats.detect_document({"tools": [{"type": "function", "function": {"name": "t"}}],
                                    "messages": user}) == "openai"
    assert formats.detect_document({"thinking": {"type": "enabled"}, "messages": user}) == "openai"


@pytest.mark.parametrize("args", COMMANDS)
def test_an_array_of_records_without_roles_is_refused_naming_what_it_is(args):
    line = refusal(args + [str(TAU)])
    assert line.startswith("hermesctx: error: a JSON array of 2 objects with keys task_id, reward, "
                           "info, traj: not chat messages")
    assert "jq -c '.[].traj'" in line


@pytest.mark.parametrize("value, seen", [
    ([{"a": 1}, {"b": 2}], "a JSON array of 2 objects with keys a, b: not chat messages"),
    ([{"a": 1}, 2], None),  # not all objects: the stages say which item is wrong
    ({"trajectory": [{"action": "ls"}]}, "an object with keys trajectory: not a transcript"),
])
def test_what_is_no_transcript_is_refused(value, seen):
    if seen is None:
        assert formats.detect_document(value) == "openai"
        assert "messages[0]: message without a role" in invoke(["prune"], value).stderr  # D14
        assert "messages[1]: expected a message object" in invoke(["prune", "--lenient"], value).stderr
        return
    with pytest.raises(InputError, match=seen.replace("(", r"\(").replace(")", r"\)")):
        formats.detect_document(value)
    assert invoke(["convert"], value).status == 3


def test_an_empty_array_is_still_an_empty_transcript():
    assert run("estimate", stdin=[]).json["messages"] == 0


def test_a_swe_agent_traj_is_read_from_its_history():
    result = run("convert", SWE_TRAJ)
    msgs = result.json["messages"]
    assert roles(msgs) == ["system", "user", "assistant", "user"]
    assert msgs[1]["content"] == "Corrige le bogue de src/budget.py"
    assert "trajectory" not in result.json
    assert "keys beside the 'history' messages (trajectory, info): 2 not kept" in result.stderr
    assert run("estimate", SWE_TRAJ).json["messages"] == 4
    assert run("sanitize", "--check", SWE_TRAJ).status == 0


def test_a_traj_key_is_read_too():
    doc = {"task_id": 3, "traj": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]}
    assert run("convert", stdin=doc).json == {"messages": doc["traj"]}


# --- JSON Lines batches: each line its own format ------------------------------------------------

def anthropic_line():
    return json.loads(EXAMPLES.joinpath("batch.jsonl").read_text(encoding="utf-8").splitlines()[2])


def test_the_anthropic_line_of_a_batch_is_converted_to_openai():
    lines = run("convert", "--to", "openai", "--model", "gpt-4o", EXAMPLES / "batch.jsonl").lines
    third = lines[2]
    assert "system" not in third
    uses = sum(1 for m in anthropic_line()["messages"] if isinstance(m["content"], list)
               for b in m["content"] if b.get("type") == "tool_use")
    assert uses and sum(len(m.get("tool_calls") or ()) for m in third["messages"]) == uses
    assert sum(m["role"] == "tool" for m in third["messages"]) == uses


def test_the_anthropic_line_of_a_batch_keeps_its_tool_calls_in_anthropic():
    lines = run("convert", "--to", "anthropic", EXAMPLES / "batch.jsonl").lines
    assert lines[2] == anthropic_line()


def test_a_stage_writes_each_line_in_its_own_format():
    lines = run("sanitize", EXAMPLES / "batch.jsonl").lines
    assert "system" in lines[2] and isinstance(lines[0], list)


def test_openai_lines_of_a_batch_share_one_info_and_are_not_converted():
    raw = EXAMPLES.joinpath("batch.jsonl").read_bytes()
    import io as _io

    docs = list(formats.documents(_io.BytesIO(raw)))
    assert [d.info["format"] for d in docs] == ["openai", "openai", "anthropic", "openai"]
    assert docs[0].info is docs[1].info is docs[3].info
    assert docs[2].data == anthropic_line()  # Anthropic bodies are worked on as they are


# --- ShareGPT ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("source", [[], ["--from", "sharegpt"]])
def test_a_json_array_of_sharegpt_records_is_a_batch(source):
    lines = run("convert", *source, "--to", "openai", SG_ARRAY).lines
    assert len(lines) == 2
    first = lines[0]["messages"]
    assert roles(first) == ["system", "user", "assistant", "tool", "assistant"]
    assert first[3]["tool_call_id"] == first[2]["tool_calls"][0]["id"]
    assert lines[1]["model"] == "modele-local"


@pytest.mark.parametrize("args", COMMANDS)
def test_every_command_reads_a_sharegpt_array_under_from_sharegpt(args):
    result = invoke(args[:1] + ["--from", "sharegpt"] + args[1:] + [str(SG_ARRAY)])
    assert result.status in (0, 1), result.stderr


def test_llamafactory_function_calls_are_paired_with_their_observations():
    doc = run("convert", "--to", "openai", SG_LLAMA).json
    msgs = doc["messages"]
    assert roles(msgs) == ["system", "user", "assistant", "tool", "tool", "assistant", "user",
                           "assistant", "tool", "assistant"]
    assert msgs[0]["content"] == "Tu donnes la météo."
    calls = msgs[2]["tool_calls"]
    assert [json.loads(c["function"]["arguments"])["ville"] for c in calls] == ["Nantes", "Brest"]
    assert [m["tool_call_id"] for m in msgs[3:5]] == [c["id"] for c in calls]
    assert msgs[8]["tool_call_id"] == msgs[7]["tool_calls"][0]["id"]
    assert doc["tools"] == [{"type": "function", "function": {
        "name": "meteo", "description": "La météo d'une ville",
        "parameters": {"type": "object", "properties": {"ville": {"type": "string"}}, "required": ["ville"]}}}]
    assert "system" not in doc
    assert run("sanitize", "--check", SG_LLAMA).status == 0


def test_llamafactory_calls_survive_a_round_to_anthropic():
    doc = run("convert", "--to", "anthropic", SG_LLAMA).json
    uses = [b for m in doc["messages"] if isinstance(m["content"], list) for b in m["content"]
            if b["type"] == "tool_use"]
    results = [b for m in doc["messages"] if isinstance(m["content"], list) for b in m["content"]
               if b["type"] == "tool_result"]
    assert len(uses) == len(results) == 3
    assert {u["id"] for u in uses} == {r["tool_use_id"] for r in results}


def test_an_observation_without_a_call_is_kept_as_user_text():
    record = {"conversations": [{"from": "human", "value": "a"}, {"from": "observation", "value": "42"}]}
    result = run("convert", "--to", "openai", stdin=record)
    # kept as user text, then merged with the user turn before it on the wire (D12)
    assert result.json["messages"] == [{"role": "user", "content": "a\n\n42"}]
    assert "observations without a function_call" in result.stderr


def test_role_content_turns_inside_conversations():
    msgs = run("convert", "--to", "openai", SG_ROLES).json["messages"]
    assert msgs == [{"role": "system", "content": "Tu es concis."},
                    {"role": "user", "content": "Deux plus deux ?"},
                    {"role": "assistant", "content": "Quatre."},
                    {"role": "user", "content": "Et trois plus trois ?"},
                    {"role": "assistant", "content": "Six."}]


# --- server-side tools ------------------------------------------------------------------------------

def test_responses_server_side_items_are_text_of_the_reply_and_reported():
    result = run("convert", "--to", "openai", RESP_SERVER)
    msgs = result.json["messages"]
    assert roles(msgs) == ["system", "user", "assistant", "user"]
    reply = msgs[2]
    assert "tool_calls" not in reply
    text = reply["content"]
    assert [line.split("]")[0] for line in text.splitlines() if line.startswith("[server-side")] == [
        "[server-side tool mcp_list_tools", "[server-side tool mcp_call", "[server-side tool web_search_call"]
    assert '"output": "Un analyseur de journaux."' in text
    assert text.endswith("\n\nUn analyseur de journaux ; à Lyon, 21 °C.")
    assert "server-side tool items: 3 written as text in the openai output" in result.stderr
    assert run("sanitize", "--check", RESP_SERVER).status == 0


def test_a_server_side_item_with_no_reply_after_it_is_a_message_of_its_own():
    items = [{"role": "user", "content": "a"},
             {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"query": "q"}},
             {"role": "user", "content": "b"}]
    msgs = run("convert", "--to", "openai", stdin={"input": items}).json["messages"]
    assert roles(msgs) == ["user", "assistant", "user"]
    assert msgs[1]["content"].startswith("[server-side tool web_search_call] ")


def test_anthropic_server_side_blocks_are_text_in_openai_output_and_reported():
    result = run("convert", "--to", "openai", "--model", "gpt-4o", ANTH_SERVER)
    reply = result.json["messages"][1]
    assert "tool_calls" not in reply
    texts = [p["text"] for p in reply["content"]]
    assert [t.split("]")[0] for t in texts[:4]] == [
        "[server-side tool mcp_tool_use", "[server-side tool mcp_tool_result",
        "[server-side tool server_tool_use", "[server-side tool web_search_tool_result"]
    assert texts[4] == "Un analyseur de journaux ; à Lyon, 21 °C."
    assert "Un analyseur de journaux." in texts[1]
    assert "server-side tool blocks: 4 written as text in the openai output" in result.stderr


def test_anthropic_server_side_blocks_stay_blocks_in_anthropic_output():
    assert run("convert", "--to", "anthropic", ANTH_SERVER).json == json.loads(ANTH_SERVER.read_text("utf-8"))


# --- gzip -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", [EXAMPLES / "coding-session.json", EXAMPLES / "batch.jsonl", CODEX,
                                  F / "sharegpt-trajectories.jsonl"])
@pytest.mark.parametrize("command", [["convert", "--to", "anthropic"], ["prune"], ["estimate"]])
def test_gzip_input_reads_as_the_plain_file(tmp_path, path, command):
    packed = tmp_path / "input.bin"  # no .gz name: the magic bytes decide
    packed.write_bytes(gzip.compress(path.read_bytes()))
    plain = run(*command, path)
    assert run(*command, packed).stdout == plain.stdout
    assert run(*command, stdin=gzip.compress(path.read_bytes())).stdout == plain.stdout


def test_damaged_gzip_is_one_line_exit_3(tmp_path):
    damaged = tmp_path / "cut.json.gz"
    damaged.write_bytes(gzip.compress(EXAMPLES.joinpath("coding-session.json").read_bytes())[:40])
    assert "gzip-compressed but cannot be decompressed" in refusal(["estimate", str(damaged)])


# --- Codex usage ------------------------------------------------------------------------------------

def token_count(info):
    return {"timestamp": "t", "type": "event_msg", "payload": {"type": "token_count", "info": info}}


USAGE = {"input_tokens": 9120, "cached_input_tokens": 8064, "output_tokens": 312,
         "reasoning_output_tokens": 104, "total_tokens": 9432}


@pytest.mark.parametrize("value", [
    token_count({"total_token_usage": USAGE, "last_token_usage": USAGE}),
    {"total_token_usage": USAGE, "last_token_usage": USAGE},
    USAGE,
])
def test_codex_token_counts_are_normalized(value):
    out = normalize_usage(value)
    assert out["provider"] == "codex"
    assert (out["input_tokens"], out["cache_read_tokens"], out["output_tokens"], out["reasoning_tokens"]) == (
        1056, 8064, 312, 104)
    assert out["prompt_tokens"] == 9120


def test_codex_cached_input_is_priced_as_cache_reads():
    event = token_count({"total_token_usage": USAGE, "last_token_usage": USAGE})
    cost = run("normalize-usage", "--model", "gpt-4o", "--billing-provider", "openai", stdin=event).json["cost"]
    assert cost["status"] == "estimated"
    assert float(cost["saving_usd"]) > 0
    assert float(cost["amount_usd"]) < float(cost["uncached_usd"])


def test_a_whole_rollout_sums_its_token_counts_with_its_model():
    result = run("normalize-usage", "--skip-no-usage", "--sum", CODEX)
    out = result.json
    events = [json.loads(line) for line in CODEX.read_text("utf-8").splitlines()]
    lasts = [e["payload"]["info"]["last_token_usage"] for e in events
             if e.get("type") == "event_msg" and e["payload"].get("type") == "token_count"
             and e["payload"].get("info")]
    assert out["request_count"] == len(lasts)
    assert out["cache_read_tokens"] == sum(u["cached_input_tokens"] for u in lasts)
    assert out["reasoning_tokens"] == sum(u["reasoning_output_tokens"] for u in lasts)
    model = next(e["payload"]["model"] for e in events if e.get("type") == "turn_context")
    assert out["cost"]["models"] == [model]


def test_a_rollout_line_without_usage_is_named():
    result = invoke(["normalize-usage"], token_count(None))
    assert result.status == 3 and "a Codex event_msg line without usage" in result.stderr
    assert invoke(["normalize-usage", "--skip-no-usage", "--sum", str(CODEX_EVENTS)]).json["request_count"] == 2


@pytest.mark.parametrize("args", COMMANDS)
def test_an_event_only_rollout_is_refused_by_every_command(args):
    line = refusal(args + [str(CODEX_EVENTS)])
    assert "a Codex rollout without any response item (session_meta, event_msg/token_count" in line


def test_later_lines_of_a_batch_get_a_cheap_shape_test():
    import orjson

    text = [{"role": "user", "content": [{"type": "text", "text": "a"}]}]
    assert formats.detect_quick(text, orjson.dumps(text)) == "openai"
    uses = {"messages": [{"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "lire", "input": {}}]}]}
    assert formats.detect_quick(uses, orjson.dumps(uses)) == "anthropic"
    body = {"system": "s", "messages": [{"role": "user", "content": "a"}]}
    assert formats.detect_quick(body, orjson.dumps(body)) == "anthropic"
    assert formats.detect_quick({"input": "a"}, b'{"input":"a"}') == "responses"


def test_the_first_line_is_parsed_once(monkeypatch):
    """Detection (a session log or a batch?) and reading share the first line's parse."""
    import io as _io

    from hermesctx import jsonio

    parsed: list[bytes] = []

    def counting(parse):
        def counted(raw):
            parsed.append(bytes(raw))
            return parse(raw)
        return counted

    monkeypatch.setattr(jsonio, "loads", counting(jsonio.loads))
    monkeypatch.setattr(jsonio, "try_loads", counting(jsonio.try_loads))
    lines = [b'{"messages": [{"role": "user", "content": "un"}]}\n',
             b'{"messages": [{"role": "user", "content": "deux"}]}\n']
    docs = list(formats.read_documents(_io.BytesIO(b"\n" + b"".join(lines))))
    assert [d.line for d in docs] == [2, 3]
    assert [d.data["messages"][0]["content"] for d in docs] == ["un", "deux"]
    assert parsed == lines


def test_every_format_module_has_the_same_face():
    for name, mod in formats.MODULES.items():
        assert mod.NAME == name
        assert isinstance(mod.PLAIN, bool) and isinstance(mod.LOG, bool)
        assert callable(mod.detect) and callable(mod.read)
        assert hasattr(mod, "Reader") == mod.LOG
        assert hasattr(mod, "write") == (name in formats.WRITTEN)
        assert hasattr(mod, "stream") == (name in formats.TARGETS)  # (--to writes a log too)
    assert formats.TARGETS == ("openai", "anthropic", "sharegpt")
    assert formats.WRITTEN == ("openai", "anthropic", "responses", "sharegpt")  # Responses: its own input
    assert formats.LOG_FORMATS == ("claude-code", "codex", "opencode-run", "copilot")
    assert set(formats.PLAIN) == {"openai", "anthropic"}
