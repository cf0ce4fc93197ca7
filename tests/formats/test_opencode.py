"""The OpenCode (TypeScript) reader, on the structures of ../shared/real-logs/opencode-Krenuds
(``{info, parts}`` as the server answers: step-start, reasoning, text, step-finish; the system
prompt on the assistant's info) and of OpenCode's storage tree (message/<session>/,
part/<message>/) given as a directory: a ``tool`` part is a call and its result, each step its
own assistant turn, a compaction summary where the session starts."""

from __future__ import annotations

import json

from conftest import invoke

from hermesctx import formats


def _part(pid, kind, **rest):
    return {"id": pid, "messageID": "msg_2", "sessionID": "ses_1", "type": kind, **rest}


USER = {"info": {"id": "msg_1", "sessionID": "ses_1", "role": "user", "time": {"created": 1}},
        "parts": [_part("prt_1", "text", text="list the files")]}
ASSISTANT = {"info": {"id": "msg_2", "sessionID": "ses_1", "role": "assistant", "system": ["Be brief."],
                      "modelID": "grok-code", "providerID": "opencode", "tokens": {"input": 9, "output": 3}},
             "parts": [_part("prt_2", "step-start"),
                       _part("prt_3", "reasoning", text="ls will do"),
                       _part("prt_4", "tool", callID="call_1", tool="bash",
                             state={"status": "completed", "input": {"command": "ls"}, "output": "a.py"}),
                       _part("prt_5", "tool", callID="call_2", tool="read",
                             state={"status": "error", "input": {"path": "b"}, "error": "no such file"}),
                       _part("prt_6", "step-finish", tokens={"input": 9, "output": 3}, cost=0),
                       _part("prt_7", "step-start"),
                       _part("prt_8", "text", text="One file: a.py"),
                       _part("prt_9", "step-finish", tokens={"input": 12, "output": 5}, cost=0)]}
OTHER = {"info": {"id": "msg_9", "sessionID": "ses_2", "role": "assistant", "modelID": "grok-code"},
         "parts": [_part("prt_a", "text", text="pwd: /w")], "blocked": False}


def _openai(value_or_path):
    args = ["convert", "--to", "openai"]
    result = invoke([*args, str(value_or_path)]) if not isinstance(value_or_path, list) else invoke(args, value_or_path)
    assert result.status == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def _check(doc):
    messages = doc["messages"]
    assert messages[0] == {"role": "system", "content": "Be brief."}
    assert messages[1] == {"role": "user", "content": "list the files"}
    assert [c["id"] for c in messages[2]["tool_calls"]] == ["call_1", "call_2"]
    assert messages[3:5] == [{"role": "tool", "tool_call_id": "call_1", "content": "a.py"},
                             {"role": "tool", "tool_call_id": "call_2", "content": "[error] no such file"}]
    assert messages[5] == {"role": "assistant", "content": "One file: a.py"}
    assert doc["model"] == "grok-code"


def test_messages_of_a_session_and_one_document_per_session():
    assert formats.detect_document(USER) == formats.detect_document([USER, ASSISTANT]) == "opencode"
    docs = _openai([USER, ASSISTANT, OTHER])
    assert len(docs) == 2
    _check(docs[0])
    assert docs[1]["messages"] == [{"role": "assistant", "content": "pwd: /w"}]


def test_the_storage_tree_as_a_directory(tmp_path):
    storage = tmp_path / "storage"
    for msg in (USER, ASSISTANT):
        folder = storage / "message" / "ses_1"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{msg['info']['id']}.json").write_text(json.dumps(msg["info"]))
        parts = storage / "part" / msg["info"]["id"]
        parts.mkdir(parents=True)
        for part in msg["parts"]:
            (parts / f"{part['id']}.json").write_text(json.dumps(part))
    for path in (tmp_path, storage):
        (doc,) = _openai(path)
        _check(doc)
    assert invoke(["estimate", str(storage)]).status == 0


def test_a_directory_that_is_no_storage_tree_is_refused(tmp_path):
    result = invoke(["estimate", str(tmp_path)])
    assert result.status == 5  # (as any directory)
    assert "Is a directory; name a transcript file, or an OpenCode storage tree" in result.stderr


def test_a_compacted_session_starts_at_its_summary():
    summary = {"info": {"id": "msg_4", "sessionID": "ses_1", "role": "assistant", "summary": True},
               "parts": [_part("prt_s", "text", text="Summary: a.py listed.")]}
    ask = {"info": {"id": "msg_3", "sessionID": "ses_1", "role": "user"},
           "parts": [_part("prt_c", "text", text="summarize")]}
    result = invoke(["convert", "--to", "openai"], [USER, ASSISTANT, ask, summary])
    messages = json.loads(result.stdout)["messages"]
    assert [m["content"] for m in messages] == ["summarize", "Summary: a.py listed."]
    assert "messages before the session's compaction summary: 2 not kept" in result.stderr


def test_anthropic_output_pairs_every_call():
    result = invoke(["convert", "--to", "anthropic"], [USER, ASSISTANT])
    blocks = [b for m in json.loads(result.stdout)["messages"] if isinstance(m["content"], list)
              for b in m["content"]]
    assert [b["id"] for b in blocks if b["type"] == "tool_use"] == ["call_1", "call_2"]
    assert [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"] == ["call_1", "call_2"]


def test_estimate_sets_the_last_steps_tokens_beside_its_count():
    recorded = json.loads(invoke(["estimate"], [USER, ASSISTANT]).stdout)["recorded_usage"]
    assert (recorded["source"], recorded["prompt_tokens"], recorded["output_tokens"]) == ("opencode", 12, 5)
