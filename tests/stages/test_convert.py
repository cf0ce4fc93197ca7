"""`hermesctx convert` and the formats every command reads: Claude Code session logs, Codex
rollouts, OpenAI Responses items, ShareGPT / Hermes trajectories (fixtures in
tests/fixtures/formats/, written by make_fixtures.py beside them)."""

from __future__ import annotations

import io as _io
import json
import random

import pytest
from conftest import EXAMPLES, FIXTURES, invoke
from hypothesis import given
from hypothesis import strategies as st

from hermesctx import formats, jsonio
from hermesctx.formats import anthropic
from hermesctx.messages import content_text
from hermesctx.stages.convert import convert
from hermesctx.wire import send

F = FIXTURES / "formats"
CLAUDE = F / "claude-code-session.jsonl"
CLAUDE_CUT = F / "claude-code-cut.jsonl"
CODEX = F / "codex-rollout.jsonl"
CODEX_LEGACY = F / "codex-legacy-rollout.jsonl"
RESP_REQUEST = F / "responses-request.json"
RESP_OUTPUT = F / "responses-output.json"
SHAREGPT = F / "sharegpt-trajectories.jsonl"
INPUTS = [CLAUDE, CODEX, CODEX_LEGACY, RESP_REQUEST, RESP_OUTPUT, SHAREGPT,
          EXAMPLES / "coding-session.json", EXAMPLES / "anthropic-session.json"]


def text_of(messages: list) -> list[str]:
    """Every piece of text of a transcript, in order."""
    out = []
    for msg in messages:
        text = content_text(msg.get("content"))
        if text:
            out.append(text)
        if msg.get("reasoning"):
            out.append(msg["reasoning"])
    return out


def run(*args, stdin=b""):
    result = invoke([str(a) for a in args], stdin)
    assert result.status == 0, result.stderr
    return result


def messages_of(path, *args):
    """The reader's messages: what every command works on (``convert`` writes them as they go
    on the wire, D12)."""
    with open(path, "rb") as handle:
        (doc,) = formats.read_documents(handle, include_sidechains="--include-sidechains" in args,
                                        all_segments="--all-segments" in args)
    return doc.data["messages"]


def read(source):
    """Every document the readers give for a file or for bytes (before any writer)."""
    if isinstance(source, (bytes, str)) and not hasattr(source, "open"):
        handle = _io.BytesIO(source.encode() if isinstance(source, str) else source)
        return [doc.data for doc in formats.read_documents(handle)]
    with open(source, "rb") as handle:
        return [doc.data for doc in formats.read_documents(handle)]


def roles(messages):
    return [m["role"] for m in messages]


def texts(messages):
    return "\n".join(content_text(m.get("content")) for m in messages)


def is_valid_openai(messages) -> bool:
    """Every tool result right after the assistant message that made its call."""
    open_calls: set = set()
    for msg in messages:
        if msg["role"] == "tool":
            if msg["tool_call_id"] not in open_calls:
                return False
            continue
        open_calls = {c["id"] for c in msg.get("tool_calls") or ()}
    return True


# --- whole outputs ------------------------------------------------------------------------------

@pytest.mark.parametrize("target", formats.TARGETS)
@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.name)
def test_every_input_in_every_target(path, target, snapshot):
    model = {"openai": ["--model", "gpt-4o"], "anthropic": ["--model", "claude-sonnet-4-5"]}.get(target, [])
    result = run("convert", "--to", target, *model, path)
    outputs = result.lines
    assert outputs
    assert {"stdout": outputs, "stderr": result.stderr} == snapshot


def test_fixtures_are_what_the_script_writes(tmp_path, monkeypatch):
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_fixtures", F / "make_fixtures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "HERE", tmp_path)
    module.main()
    for made in tmp_path.iterdir():
        assert made.read_bytes() == (F / made.name).read_bytes(), made.name


# --- detection --------------------------------------------------------------------------------------

@pytest.mark.parametrize("path, name", [
    (CLAUDE, "claude-code"), (CODEX, "codex"), (CODEX_LEGACY, "codex"), (RESP_REQUEST, "responses"),
    (RESP_OUTPUT, "responses"), (SHAREGPT, "sharegpt"), (EXAMPLES / "coding-session.json", "openai"),
    (EXAMPLES / "anthropic-session.json", "anthropic")])
def test_auto_detection_says_what_it_read_with_v(path, name):
    result = run("convert", "-v", "--model", "gpt-4o", path)
    assert f"read as {name}\n" in result.stderr
    quiet = run("convert", "--model", "gpt-4o", path)
    assert "read as" not in quiet.stderr
    assert quiet.stdout == result.stdout
    forced = run("convert", "--from", name, "--model", "gpt-4o", path)
    assert forced.stdout == result.stdout


def test_from_overrides_detection():
    # a ShareGPT entry read as OpenAI has no messages: nothing converted, nothing lost
    result = invoke(["convert", "--from", "openai", str(SHAREGPT)])
    assert result.status == 0
    assert "conversations" in result.lines[0]


# --- Claude Code ------------------------------------------------------------------------------------

def test_claude_code_reads_the_last_segment_of_the_main_chain():
    msgs = messages_of(CLAUDE)
    assert roles(msgs) == ["user", "user", "assistant", "user", "assistant", "tool", "assistant"]
    assert msgs[0]["content"].startswith("This session is being continued")
    # the result whose call is in the earlier segment: kept as text, not as a dangling result
    assert msgs[1]["content"] == ("[tool result for toolu_05, whose call is not in this transcript]\n"
                                  "The file src/parser.py has been updated.")
    assert msgs[-1]["content"] == "Tout passe : 42 tests. 🎉"
    assert msgs[3]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,iVBOR")
    assert is_valid_openai(msgs)
    result = run("convert", "--report", "/dev/stdout", CLAUDE)
    assert "model" not in result.json  # Claude's model is never written into an OpenAI body
    assert "model (the other provider's: convert --model sets one): 1 not kept" in result.stderr
    assert run("convert", "--to", "anthropic", CLAUDE).json["model"] == "claude-sonnet-4-5-20250929"
    assert run("convert", "--model", "gpt-4o", CLAUDE).json["model"] == "gpt-4o"


def test_claude_code_all_segments_folds_split_replies_and_parallel_calls():
    msgs = messages_of(CLAUDE, "--all-segments")
    first = msgs[1]
    # thinking, text and two tool_use blocks were four events of one reply (msg_01A), the first
    # call's result logged between them
    assert first["role"] == "assistant"
    assert first["content"] == "Je lance les tests et je lis le parseur."
    assert first["reasoning"] == "Lancer pytest d'abord, puis lire le parseur."
    assert [c["id"] for c in first["tool_calls"]] == ["toolu_01", "toolu_02"]
    assert [m.get("tool_call_id") for m in msgs[2:4]] == ["toolu_01", "toolu_02"]
    joined = texts(msgs)
    # the interrupted call keeps its result text; the abandoned branch is left out
    assert "[Request interrupted by user for tool use]" in joined
    assert "Utilise une regex." not in joined and "re.split" not in joined
    assert "Non : garde csv, mais ajoute l'import." in joined
    # no subagent without --include-sidechains
    assert "Liste les appels" not in joined
    assert is_valid_openai(msgs)
    # the compaction summary separates toolu_05 from its result: kept as text
    assert any(m["role"] == "user" and m["content"].startswith("[tool result for toolu_05, whose call is earlier")
               for m in msgs if isinstance(m["content"], str))


def test_claude_code_sidechains_come_after_the_turn_that_ran_them():
    msgs = messages_of(CLAUDE, "--all-segments", "--include-sidechains")
    prompt = next(i for i, m in enumerate(msgs) if m["content"] == "Liste les appels de parse() dans le dépôt.")
    task_result = next(i for i, m in enumerate(msgs) if m.get("tool_call_id") == "toolu_03")
    assert prompt > task_result
    assert msgs[prompt + 1]["tool_calls"][0]["id"] == "toolu_s1"
    assert msgs[prompt + 3]["content"] == "Un seul appel : src/cli.py ligne 12."
    assert is_valid_openai(msgs)
    without = messages_of(CLAUDE, "--all-segments")
    assert len(msgs) == len(without) + 4


def test_claude_code_unknown_event_is_skipped_with_one_warning():
    result = run("convert", CLAUDE)
    assert "hermesctx: warning: line 27: skipped events of unknown type 'mystery-event'" in result.stderr
    assert result.stderr.count("mystery-event") == 1


def test_a_log_cut_off_mid_line_reads_up_to_the_cut():
    full, cut = run("convert", CLAUDE), run("convert", CLAUDE_CUT)
    assert cut.stdout == full.stdout
    assert "line 34: the log is cut off mid-line; the partial event was skipped" in cut.stderr


def test_a_broken_line_inside_the_log_is_skipped(tmp_path):
    lines = CLAUDE.read_bytes().splitlines(keepends=True)
    lines[5] = lines[5][:40] + b"\n"
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(lines))
    result = run("convert", "--all-segments", path)
    assert "line 6: not JSON; skipped" in result.stderr


def test_thinking_signatures_and_error_flags_are_reported_not_dropped_silently():
    result = run("convert", "--all-segments", "--to", "anthropic", CLAUDE)
    assert "thinking signatures" not in result.stderr  # kept verbatim (D12)
    assert "tool result is_error flags: 1 not kept in the anthropic output" in result.stderr
    body = result.json
    thinking = [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]
                if b.get("type") == "thinking"]
    assert len(thinking) == 1 and thinking[0]["thinking"] == "Lancer pytest d'abord, puis lire le parseur."
    assert thinking[0]["signature"].startswith("EqQBCkYIBxgCK")


def test_images_are_reported_when_sharegpt_cannot_hold_them():
    result = run("convert", "--to", "sharegpt", CLAUDE)
    assert "hermesctx: warning: images: 1 not kept in the sharegpt output" in result.stderr
    assert "lance la suite complète" in json.dumps(result.json, ensure_ascii=False)


def test_claude_code_report_counts_what_was_read(tmp_path):
    report = tmp_path / "r.json"
    run("convert", "--include-sidechains", "--report", report, CLAUDE)
    rep = json.loads(report.read_text())
    assert rep["from"] == "claude-code" and rep["to"] == "openai"
    assert rep["messages"] == 7 and rep["tool_calls"] == 1 and rep["tool_results"] == 1
    assert rep["segments"] == 2 and rep["orphan_tool_results"] == 1 and rep["sidechain_events"] == 0
    assert rep["skipped"] == {"events of unknown type 'mystery-event'": 1}
    assert rep["usage"]["cache_read_input_tokens"] == 19876
    full = tmp_path / "full.json"
    run("convert", "--all-segments", "--include-sidechains", "--report", full, CLAUDE)
    rep = json.loads(full.read_text())
    assert rep["sidechain_events"] == 4 and rep["abandoned_branch_entries"] == 2
    assert rep["subagents"] == {"inserted": 1, "missing": 0}
    assert rep["lost"] == {"tool result is_error flags": 1,
                           "model (the other provider's: convert --model sets one)": 1}


# --- Codex ------------------------------------------------------------------------------------------

def test_codex_rollout_starts_from_the_replacement_history():
    msgs = messages_of(CODEX)
    assert msgs[0] == {"role": "system", "content": formats_fixture().INSTRUCTIONS}
    assert msgs[4]["content"].startswith("Another language model started")
    # the result of a call made before the compaction
    assert msgs[5]["content"].startswith("[tool result for call_late, whose call is not in this transcript]")
    shell = msgs[6]["tool_calls"][0]
    assert shell["id"] == "call_ls1" and shell["function"]["name"] == "local_shell"
    assert json.loads(shell["function"]["arguments"])["command"] == ["sed", "-n", "1,5p", "src/lam.py"]
    # the interrupted call stays, without a result
    assert msgs[8]["tool_calls"][0]["id"] == "call_int"
    assert msgs[9]["content"] == "Stop — corrige plutôt beta() pour réduire (λx.x) y."
    assert is_valid_openai(msgs)
    result = run("convert", CODEX)
    assert result.json["model"] == "gpt-5-codex"
    assert "line 24: skipped lines of unknown type 'world_state'" in result.stderr


def test_codex_all_segments_keeps_parallel_calls_and_reasoning():
    msgs = messages_of(CODEX, "--all-segments")
    turn = next(m for m in msgs if m.get("tool_calls") and m["tool_calls"][0]["id"] == "call_a1")
    assert [c["id"] for c in turn["tool_calls"]] == ["call_a1", "call_a2"]
    assert turn["reasoning"] == "**Exploring the repo**"
    patch = next(m for m in msgs if m.get("tool_calls") and m["tool_calls"][0]["id"] == "call_p1")
    assert json.loads(patch["tool_calls"][0]["function"]["arguments"])["input"].startswith("*** Begin Patch")
    assert "J'ai ajouté tests/test_beta.py ; je lance la suite." in texts(msgs)
    assert is_valid_openai(msgs)
    result = run("convert", "--all-segments", CODEX)
    assert "encrypted reasoning items: 1 not kept in the openai output" in result.stderr


def test_codex_legacy_compaction_keeps_recent_user_messages():
    lines = [
        {"timestamp": "t", "type": "session_meta", "payload": {"id": "x", "timestamp": "t", "cwd": "/"}},
        {"timestamp": "t", "type": "response_item", "payload": {"type": "message", "role": "user",
                                                                "content": [{"type": "input_text", "text": "premier"}]}},
        {"timestamp": "t", "type": "response_item", "payload": {"type": "message", "role": "assistant",
                                                                "content": [{"type": "output_text", "text": "réponse"}]}},
        {"timestamp": "t", "type": "compacted", "payload": {"message": "le résumé"}},
        {"timestamp": "t", "type": "response_item", "payload": {"type": "message", "role": "user",
                                                                "content": [{"type": "input_text", "text": "suite"}]}},
    ]
    data = "".join(json.dumps(v, ensure_ascii=False) + "\n" for v in lines)
    (doc,) = read(data)
    assert [m["content"] for m in doc["messages"]] == ["premier", "le résumé", "suite"]
    wire = run("convert", stdin=data).json["messages"]  # Hermes's send path merges the user turns
    assert [m["content"] for m in wire] == ["premier\n\nle résumé\n\nsuite"]


def test_codex_developer_message_between_a_call_and_its_output_keeps_the_pair():
    """Codex 0.135 writes a developer message (a thread goal update) after a call and before its
    output: it comes after the output, so the call keeps its result (snapmed-pharmacv's rollout)."""
    def item(payload):
        return {"timestamp": "t", "type": "response_item", "payload": payload}

    lines = [
        {"timestamp": "t", "type": "session_meta", "payload": {"id": "x", "timestamp": "t", "cwd": "/"}},
        item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "check CORS"}]}),
        item({"type": "function_call", "call_id": "c1", "name": "exec_command", "arguments": '{"cmd":"curl -i x"}'}),
        item({"type": "function_call", "call_id": "c2", "name": "exec_command", "arguments": '{"cmd":"curl -i y"}'}),
        item({"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "goal updated"}]}),
        {"timestamp": "t", "type": "event_msg", "payload": {"type": "thread_goal_updated"}},
        item({"type": "function_call_output", "call_id": "c1", "output": "HTTP/1.1 200 OK"}),
        item({"type": "function_call_output", "call_id": "c2", "output": "HTTP/1.1 204 No Content"}),
        item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Both pass."}]}),
    ]
    (doc,) = read("".join(json.dumps(v) + "\n" for v in lines))
    msgs = doc["messages"]
    assert roles(msgs) == ["user", "assistant", "tool", "tool", "system", "assistant"]
    assert [m["tool_call_id"] for m in msgs if m["role"] == "tool"] == ["c1", "c2"]
    assert msgs[4]["content"] == "goal updated" and is_valid_openai(msgs)


def test_codex_legacy_layout():
    msgs = messages_of(CODEX_LEGACY)
    assert roles(msgs) == ["system", "user", "assistant", "tool", "assistant"]
    assert msgs[2]["tool_calls"][0]["id"] == "call_v1" and msgs[3]["tool_call_id"] == "call_v1"


# --- Responses ---------------------------------------------------------------------------------------

def test_responses_request_items():
    (doc,) = read(RESP_REQUEST)
    msgs = doc["messages"]
    assert roles(msgs) == ["system", "user", "assistant", "tool", "tool", "assistant", "user"]
    assert msgs[2]["reasoning"] == "Two cities: two calls."
    assert [c["id"] for c in msgs[2]["tool_calls"]] == ["call_zh", "call_kr"]
    assert msgs[6]["content"][1] == {"type": "image_url", "image_url": {"url": "https://example.com/chart.png"}}
    assert doc["model"] == "gpt-5"
    assert doc["tools"][0]["function"]["name"] == "get_weather"


def test_responses_output_object_reports_what_it_cannot_hold():
    result = run("convert", RESP_OUTPUT)
    assert "server-side tool items: 1 written as text in the openai output" in result.stderr
    msg, = result.json["messages"]
    assert msg["content"].startswith("Je vérifie la source des données.\n\n[server-side tool web_search_call] {")
    assert msg["tool_calls"][0]["id"] == "call_src"
    assert "usage" not in result.json  # a response's usage is no request key (D12)
    assert "wire: record keys removed from the top of the request" in result.stderr


def test_bare_item_list_and_mcp_call():
    items = [{"role": "user", "content": "liste les fichiers"},
             {"type": "mcp_call", "id": "mcp_1", "server_label": "fs", "name": "list", "arguments": "{}",
              "output": "a.txt\nb.txt"},
             {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "a et b"}]}]
    result = run("convert", "-v", stdin=items)
    msgs = result.json["messages"]
    # the API ran the MCP call itself: text in the reply, not a call the client must answer
    assert roles(msgs) == ["user", "assistant"]
    assert "tool_calls" not in msgs[1]
    assert msgs[1]["content"].startswith('[server-side tool mcp_call] {"id": "mcp_1"')
    assert '"output": "a.txt\\nb.txt"' in msgs[1]["content"]
    assert msgs[1]["content"].endswith("\n\na et b")
    assert "server-side tool items: 1 written as text" in result.stderr


# --- ShareGPT -------------------------------------------------------------------------------------------

def test_sharegpt_pairs_results_with_calls_by_their_ids():
    first, second = read(SHAREGPT)
    msgs = first["messages"]
    assert roles(msgs) == ["system", "user", "assistant", "tool", "tool", "assistant"]
    assert [c["id"] for c in msgs[2]["tool_calls"]] == ["call_1", "call_2"]
    assert msgs[2]["reasoning"] == "Deux fichiers : deux appels en parallèle."
    assert msgs[2]["content"] is None
    assert json.loads(msgs[3]["content"]) == {"output": "120 README.md", "exit_code": 0}
    assert msgs[5]["content"] == "README.md : 120 lignes ; setup.py : 45 lignes. ✓"
    assert first["model"] == "hermes-4-70b" and first["completed"] is True
    assert second["messages"][3]["content"] == "model: 日本語-7b\nthreshold: 0.5"


def test_openai_to_sharegpt_and_back_keeps_texts_and_pairs():
    doc = jsonio.loads((EXAMPLES / "coding-session.json").read_bytes())
    sharegpt, _ = convert(doc, target="sharegpt")
    assert all(t["from"] in ("system", "human", "gpt", "tool") for t in sharegpt["conversations"])
    back, _ = convert(sharegpt, source="sharegpt", target="openai")
    original = doc["messages"] if isinstance(doc, dict) else doc
    assert normalized(back["messages"]) == normalized(original)


# --- round trips ---------------------------------------------------------------------------------------

def normalized(messages):
    """What both OpenAI and Anthropic hold: roles, texts, reasoning, calls (arguments as
    parsed JSON) and their results; an empty and a missing text are the same."""
    out = []
    for msg in messages:
        content = msg.get("content")
        if isinstance(content, list) and all(isinstance(p, dict) and p.get("type") == "text" for p in content):
            content = content[0]["text"] if len(content) == 1 else [p["text"] for p in content]
        if content in (None, "") and msg.get("tool_calls"):
            content = None
        item = {"role": msg["role"], "content": content}
        if msg.get("reasoning"):
            item["reasoning"] = msg["reasoning"]
        if msg.get("tool_calls"):
            item["calls"] = [(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"] or "{}"))
                             for c in msg["tool_calls"]]
        if msg["role"] == "tool":
            item["for"] = msg["tool_call_id"]
        out.append(item)
    return out


def random_transcript(rnd: random.Random) -> dict:
    words = ["alpha", "β", "γάμμα", "naïve", "日本語", "emoji 🎉", "tab\tsep", "line\nbreak", "\"quoted\"", ""]

    def text():
        return " ".join(rnd.choice(words) for _ in range(rnd.randint(0, 6)))

    msgs: list[dict] = []
    if rnd.random() < 0.7:
        msgs.append({"role": "system", "content": text() or "system"})
    n = 0
    for _ in range(rnd.randint(1, 6)):
        if rnd.random() < 0.3:
            msgs.append({"role": "user", "content": [{"type": "text", "text": text()}] * rnd.randint(1, 2)})
        else:
            msgs.append({"role": "user", "content": text()})
        for _ in range(rnd.randint(0, 3)):
            calls = []
            for _ in range(rnd.randint(1, 3)):
                n += 1
                calls.append({"id": f"call_{n}", "type": "function", "function": {
                    "name": rnd.choice(["terminal", "read_file", "search"]),
                    "arguments": json.dumps({"q": text(), "n": rnd.randint(0, 9), "flags": [text()]},
                                            ensure_ascii=rnd.random() < 0.5)}})
            msg = {"role": "assistant", "content": rnd.choice([None, "", text()]), "tool_calls": calls}
            if rnd.random() < 0.4:
                msg["reasoning"] = text() or "thinking"
            msgs.append(msg)
            for call in calls:
                content = text()
                if rnd.random() < 0.2:
                    content = [{"type": "text", "text": content}]
                msgs.append({"role": "tool", "tool_call_id": call["id"], "content": content})
        msgs.append({"role": "assistant", "content": text() or "done"})
    return {"model": "gpt-4o", "messages": msgs}


@pytest.mark.parametrize("seed", range(300))
def test_openai_to_anthropic_to_openai_is_lossless(seed):
    doc = random_transcript(random.Random(seed))
    there, report = convert(doc, source="openai", target="anthropic", model="claude-sonnet-4-5")
    assert report["lost"] == {}
    assert there["model"] == "claude-sonnet-4-5" and there["max_tokens"] == 4096
    back, report = convert(there, source="anthropic", target="openai", model="gpt-4o")
    assert report["lost"] == {}
    assert normalized(back["messages"]) == normalized(doc["messages"])
    assert back["model"] == doc["model"]
    assert text_of(back["messages"]) == text_of(doc["messages"])


def test_round_trip_of_the_example_session_through_the_cli(tmp_path):
    there = run("convert", "--to", "anthropic", EXAMPLES / "coding-session.json")
    back = run("convert", "--to", "openai", stdin=there.stdout)
    original = json.loads((EXAMPLES / "coding-session.json").read_text())
    original = original["messages"] if isinstance(original, dict) else original
    assert normalized(back.json["messages"]) == normalized(original)
    # the tool messages' `name` has no place in an Anthropic body: said, not dropped silently
    assert there.stderr == "hermesctx: warning: message key 'name': 10 not kept in the anthropic output\n"
    assert back.stderr == ""


def test_what_anthropic_cannot_hold_is_reported():
    doc = {"messages": [{"role": "user", "content": "hi", "name": "alice"},
                        {"role": "assistant", "content": "yo"},
                        {"role": "system", "content": "late system"}]}
    result = run("convert", "--to", "anthropic", stdin=doc)
    assert "message key 'name': 1 not kept in the anthropic output" in result.stderr
    assert "system messages after the first turn (sent as user text): 1" in result.stderr
    assert result.json["messages"][2] == {"role": "user", "content": "late system"}


# --- streaming ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("pretty", [False, True])
@pytest.mark.parametrize("target", formats.TARGETS)
@pytest.mark.parametrize("path", [CLAUDE, CODEX], ids=lambda p: p.name)
def test_a_log_written_as_it_is_read_equals_the_whole_document(path, target, pretty):
    args = ["convert", "--all-segments", "--include-sidechains", "--to", target, path]
    streamed = run(*args, *(["--pretty"] if pretty else []))
    with open(path, "rb") as handle:
        (doc,) = formats.read_documents(handle, include_sidechains=True, all_segments=True)
    whole = send.request(convert(doc.data, target=target, info=doc.info)[0], target)
    assert streamed.stdout == jsonio.dumps(whole, pretty=pretty)


class Pipe(_io.BufferedReader):
    """A stream that cannot seek, like stdin from a pipe."""

    def seekable(self):
        return False

    def seek(self, *args):
        raise OSError("not seekable")


def test_a_piped_log_is_spooled_for_the_second_pass():
    with open(CLAUDE, "rb") as handle:
        (seekable,) = formats.read_documents(handle)
    piped = Pipe(_io.BytesIO(CLAUDE.read_bytes()))
    (spooled,) = formats.read_documents(piped)
    assert spooled.data == seekable.data and spooled.info == seekable.info


# --- the other commands read these formats too -----------------------------------------------------------

def test_estimate_reports_the_usage_a_claude_code_log_recorded():
    result = run("estimate", "--model", "claude-sonnet-4-5", CLAUDE)
    report = result.json
    recorded = report["recorded_usage"]
    assert recorded["source"] == "claude-code"
    assert recorded["prompt_tokens"] == 6 + 1204 + 19876
    assert recorded["output_tokens"] == 15
    assert recorded["context_tokens"] == 21101
    assert recorded["estimated_tokens"] == report["tokens"]["total"]
    assert recorded["difference"] == report["tokens"]["total"] - 21101
    assert report["model"] == "claude-sonnet-4-5"
    table = run("estimate", "--format", "table", CLAUDE)
    assert f"recorded by the log: 21,101 tokens (estimate {recorded['difference']:+,})" in table.stdout.decode()


def test_estimate_reports_codex_usage():
    report = run("estimate", "--method", "rough", CODEX).json
    assert report["model"] == "gpt-5-codex"
    assert report["recorded_usage"]["prompt_tokens"] == 12480
    assert report["recorded_usage"]["context_tokens"] == 12480 + 58


def test_estimate_tee_on_a_log_passes_the_openai_form_on():
    result = run("estimate", "--tee", CLAUDE)
    assert result.json["messages"] == messages_of(CLAUDE)


def test_sanitize_check_reads_a_codex_rollout():
    result = invoke(["sanitize", "--check", "--from", "codex", str(CODEX)])
    assert result.status == 1  # the interrupted call has no result
    assert "call_int" in result.stderr
    assert "1 problem in 1 of 1 transcript" in result.stderr


def test_sanitize_writes_a_log_as_openai_and_a_trajectory_as_sharegpt():
    fixed = run("sanitize", CODEX).json
    assert all(not m.get("tool_calls") or m["tool_calls"][0]["id"] != "call_int" for m in fixed["messages"])
    out = run("sanitize", SHAREGPT).lines
    assert [sorted(entry) for entry in out] == [["completed", "conversations", "model", "timestamp"]] * 2
    as_openai = run("sanitize", "--to", "openai", SHAREGPT).lines
    assert "messages" in as_openai[0]


def test_prune_on_sharegpt_stays_sharegpt(tmp_path):
    out = run("prune", "--protect-last-n", "1", "--tail-tokens", "0", SHAREGPT).lines
    assert "conversations" in out[0]


def test_prune_to_anthropic_from_openai():
    out = run("prune", "--to", "anthropic", EXAMPLES / "coding-session.json").json
    assert "system" in out and all(m["role"] in ("user", "assistant") for m in out["messages"])


def test_plain_input_passes_through_unchanged():
    plain = run("sanitize", EXAMPLES / "coding-session.json")
    forced = run("sanitize", "--from", "openai", EXAMPLES / "coding-session.json")
    assert plain.stdout == forced.stdout
    anth = run("cache-mark", EXAMPLES / "anthropic-session.json").json
    assert "system" in anth


def test_in_place_never_rewrites_a_log_as_json(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_bytes(CLAUDE.read_bytes())
    result = invoke(["sanitize", "--in-place", str(path)])
    assert result.status == 2
    assert "--in-place would rewrite a claude-code file as openai" in result.stderr
    assert path.read_bytes() == CLAUDE.read_bytes()


def test_run_pipeline_on_a_log_and_on_a_batch_in_parallel():
    seq = run("run", "--pipeline", "sanitize,cache-mark", CODEX)
    assert seq.json["messages"][0]["role"] == "system"
    par = run("run", "--pipeline", "sanitize,cache-mark", "--jobs", "2", CODEX)
    assert par.stdout == seq.stdout
    batch_seq = run("run", "--pipeline", "prune,sanitize", SHAREGPT)
    batch_par = run("run", "--pipeline", "prune,sanitize", "--jobs", "2", SHAREGPT)
    assert batch_par.stdout == batch_seq.stdout
    assert "conversations" in batch_seq.lines[0]


def test_compress_and_spill_accept_a_log(tmp_path):
    out = run("compress", "--summarizer", "extractive", "--protect-last-n", "2", "--tail-tokens", "50",
              CLAUDE).json
    assert out["messages"]
    spilled = run("spill", "--dir", tmp_path, "--threshold", "20", CODEX).json
    assert any("<persisted-output>" in content_text(m.get("content")) for m in spilled["messages"])


def test_a_log_with_no_jsonl_is_a_usage_error():
    result = invoke(["convert", "--no-jsonl", "--from", "claude-code", str(CLAUDE)])
    assert result.status == 2
    assert result.stderr.startswith("hermesctx: error: a claude-code session log is JSON Lines")


def test_anthropic_join_system_keeps_every_part():
    assert anthropic.join_system(["a", [{"type": "text", "text": "b"}]], {}) == [
        {"type": "text", "text": "a"}, {"type": "text", "text": "b"}]


def formats_fixture():
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_fixtures", F / "make_fixtures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- memory: a session log converts in bounded memory ------------------------------------------------------

def write_big_log(path, megabytes: int, seed: int = 11) -> int:
    """A seeded Claude Code log of about ``megabytes`` MB: turns of a user prompt, a tool call
    and a long tool result, chained by parentUuid. Returns the number of turns."""
    import orjson

    rnd = random.Random(seed)
    words = ["parse", "token", "budget", "λ", "contexte", "日本", "résultat", "🙂", "fichier", "tool"]
    texts = [" ".join(rnd.choice(words) for _ in range(rnd.randint(300, 1500))) for _ in range(16)]
    limit, size, n, parent = megabytes * 1_000_000, 0, 0, None
    with open(path, "wb") as handle:
        while size < limit:
            n += 1
            text = texts[n % len(texts)]
            events = [
                {"parentUuid": parent, "isSidechain": False, "type": "user", "sessionId": "s", "uuid": f"u{n}",
                 "message": {"role": "user", "content": f"étape {n} : {text[:120]}"}},
                {"parentUuid": f"u{n}", "isSidechain": False, "type": "assistant", "sessionId": "s",
                 "uuid": f"a{n}", "message": {
                     "id": f"msg_{n}", "role": "assistant", "model": "claude-sonnet-4-5",
                     "content": [{"type": "tool_use", "id": f"toolu_{n}", "name": "Bash",
                                  "input": {"command": f"cat f{n}.txt"}}],
                     "usage": {"input_tokens": 3, "cache_read_input_tokens": 100 * n, "output_tokens": 20}}},
                {"parentUuid": f"a{n}", "isSidechain": False, "type": "user", "sessionId": "s", "uuid": f"r{n}",
                 "message": {"role": "user", "content": [
                     {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": text}]}},
            ]
            parent = f"r{n}"
            for event in events:
                raw = orjson.dumps(event) + b"\n"
                size += len(raw)
                handle.write(raw)
    return n


def peak_rss_of_convert(path, *args) -> int:
    """Max RSS (KiB) of `hermesctx convert PATH > /dev/null` in a fresh process (RUSAGE_CHILDREN
    of a wrapper that runs only that child)."""
    import subprocess
    import sys

    code = ("import resource, subprocess, sys; "
            "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE); "
            "assert p.returncode == 0, p.stderr; "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code, sys.executable, "-m", "hermesctx", "convert", *args,
                          str(path)], capture_output=True, text=True, check=True)
    return int(out.stdout.strip())


def check_bounded(tmp_path, small_mb: int, big_mb: int):
    small, big = tmp_path / "small.jsonl", tmp_path / "big.jsonl"
    write_big_log(small, small_mb)
    turns = write_big_log(big, big_mb)
    rss_small = peak_rss_of_convert(small)
    rss_big = peak_rss_of_convert(big, "--to", "anthropic")
    growth = (rss_big - rss_small) * 1024
    # the log's bytes are never held: the big log's peak is the small one's plus a few bytes an event
    assert growth < 0.05 * (big.stat().st_size - small.stat().st_size), (rss_small, rss_big)
    assert rss_big < 64 * 1024, rss_big  # KiB: the interpreter and the package, little more
    return rss_small, rss_big, turns


def test_a_big_log_converts_in_bounded_memory(tmp_path):
    # both above jsonio.LONG_INPUT (16 MiB): both keep the memory they free alike
    check_bounded(tmp_path, 18, 48)


@pytest.mark.slow
def test_a_100_mb_log_converts_in_bounded_memory(tmp_path):
    check_bounded(tmp_path, 25, 100)


def test_a_chat_list_with_a_stray_message_type_stays_a_chat_list():
    chat = [{"type": "message", "role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "ok"}]
    assert formats.detect_document(chat) == "openai"
    assert formats.detect_document(chat[:1]) == "openai"
    items = [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "hi"}]}]
    assert formats.detect_document(items) == "responses"
    assert formats.detect_document([{"role": "user", "content": "go"},
                            {"type": "function_call", "call_id": "c", "name": "t", "arguments": "{}"}]) == "responses"
    r = invoke(["sanitize"], json.dumps(chat).encode())
    assert r.status == 0 and r.json == chat


@pytest.mark.parametrize("target", ["sharegpt", "anthropic"])
def test_a_role_that_is_not_a_string_cannot_be_converted(target):
    doc = json.dumps([{"role": ["x"], "content": "hi"}]).encode()
    r = invoke(["convert", "--to", target], doc)
    assert r.status == 3 and r.stdout == b""
    assert r.stderr.strip().endswith("messages[0]: role must be a string, got an array; no provider "
                                     "API accepts it (--lenient reads it as Hermes does)")
    r = invoke(["convert", "--lenient", "--to", target], doc)
    assert r.status == 3 and r.stdout == b""
    assert r.stderr.strip().endswith(f"messages[0]: role must be a string, got an array: it cannot be written as {target}")


def _responses_items(draw_steps) -> list[dict]:
    """Responses items from steps: a turn makes calls, messages may come before their outputs, an
    output may be missing (a call never answered)."""
    items, k = [], 0
    for step, n, answered, interrupt in draw_steps:
        if step == "say":
            items.append({"type": "message", "role": n, "content": [{"type": "input_text", "text": f"m{len(items)}"}]})
            continue
        ids = [f"c{k + j}" for j in range(n)]
        k += n
        items += [{"type": "function_call", "call_id": c, "name": "shell", "arguments": "{}"} for c in ids]
        if interrupt:
            items.append({"type": "message", "role": interrupt, "content": [{"type": "input_text", "text": f"m{len(items)}"}]})
        items += [{"type": "function_call_output", "call_id": c, "output": f"o-{c}"} for c in ids[:answered]]
    return items


_ROLES = st.sampled_from(["user", "developer", "assistant"])
_STEPS = st.lists(st.one_of(
    st.tuples(st.just("say"), _ROLES, st.just(0), st.none()),
    st.integers(1, 3).flatmap(lambda n: st.tuples(st.just("calls"), st.just(n), st.integers(0, n),
                                                  st.one_of(st.none(), _ROLES)))), max_size=12)


@given(steps=_STEPS)
def test_responses_items_fold_with_every_answered_call_next_to_its_result_and_nothing_lost(steps):
    from hermesctx.formats.responses import Folder

    items = _responses_items(steps)
    folder = Folder({})
    for item in items:
        folder.add(item)
    out = folder.finish()
    said = sorted(i["content"][0]["text"] for i in items if i["type"] == "message")
    assert sorted(content_text(m["content"]) for m in out if m["role"] != "tool" and m.get("content")) == said
    answered = {i["call_id"] for i in items if i["type"] == "function_call_output"}
    kept = [m["tool_call_id"] for m in out if m["role"] == "tool"]
    assert sorted(kept) == sorted(answered)  # every output read, once
    # an output comes right after its call's turn, unless an assistant turn came between (the model moved on)
    if not any(step == "calls" and interrupt == "assistant" for step, _n, _a, interrupt in steps):
        assert is_valid_openai(out)
