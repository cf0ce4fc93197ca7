"""Claude Code sessions as genuine 2.x files have them (found on sessions never seen before, where
up to 127 of 133 tool calls were read as absent): an entry written before its parent, a line left
out of the file in the middle of the chain, a tool result logged before the call it answers.
Every call and result is kept, in order, and what was joined is said."""

import json
import subprocess
import sys


def _event(uuid, parent, kind, content, msg_id=None):
    message = {"role": kind, "content": content}
    if kind == "assistant":
        message["id"] = msg_id or f"m-{uuid}"
    return {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s1", "isSidechain": False,
            "message": message}


def _call(cid, command):
    return [{"type": "tool_use", "id": cid, "name": "Bash", "input": {"command": command}}]


def _result(cid, text):
    return [{"type": "tool_result", "tool_use_id": cid, "content": text}]


def _read(tmp_path, events, *flags):
    path = tmp_path / "session.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    proc = subprocess.run([sys.executable, "-m", "hermesctx", "convert", "--to", "openai", *flags, str(path)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["messages"], proc.stderr


def _calls(messages):
    return [c["id"] for m in messages for c in m.get("tool_calls") or []]


def _results(messages):
    return [m["tool_call_id"] for m in messages if m.get("role") == "tool"]


def test_an_entry_written_before_its_parent_keeps_the_chain_whole(tmp_path):
    events = [
        _event("u1", None, "user", "run the tests"),
        _event("a1", "u1", "assistant", _call("t1", "pytest")),
        _event("r1", "a1", "user", _result("t1", "3 passed")),
        _event("u2", "x1", "user", "now lint"),  # written before the entry it answers
        _event("x1", "r1", "assistant", "Tests pass.", msg_id="m-x1"),
        _event("a2", "u2", "assistant", _call("t2", "ruff check")),
        _event("r2", "a2", "user", _result("t2", "All checks passed!")),
        _event("a3", "r2", "assistant", "Clean."),
    ]
    messages, err = _read(tmp_path, events)
    assert _calls(messages) == ["t1", "t2"] and _results(messages) == ["t1", "t2"]
    assert [m["content"] for m in messages if m["role"] == "user"] == ["run the tests", "now lint"]
    assert "absent from the log" not in err


def test_a_line_left_out_in_the_middle_is_joined_and_said(tmp_path):
    events = [
        _event("u1", None, "user", "fix the build"),
        _event("a1", "u1", "assistant", _call("t1", "make")),
        _event("r1", "a1", "user", _result("t1", "error: missing header")),
        # the assistant entry r1 led to was left out of the file; the next one names it
        _event("a3", "gone", "assistant", _call("t3", "make")),
        _event("r3", "a3", "user", _result("t3", "ok")),
        _event("a4", "r3", "assistant", "Built."),
    ]
    messages, err = _read(tmp_path, events)
    assert _calls(messages) == ["t1", "t3"] and _results(messages) == ["t1", "t3"]
    assert "1 entry on the way to the last message names a parent absent from the log" in err


def test_a_result_logged_before_its_call_waits_for_it(tmp_path):
    events = [
        _event("u1", None, "user", "check both"),
        _event("a1", "u1", "assistant", _call("t1", "git status")),
        _event("r2", "a2", "user", _result("t2", "2 files changed")),  # before the call it answers
        _event("r1", "a1", "user", _result("t1", "clean")),
        _event("a2", "r1", "assistant", _call("t2", "git diff --stat")),
        _event("a3", "r2", "assistant", "Done."),
    ]
    messages, _ = _read(tmp_path, events)
    assert _calls(messages) == ["t1", "t2"] and _results(messages) == ["t1", "t2"]
    call_at = {c["id"]: i for i, m in enumerate(messages) for c in m.get("tool_calls") or []}
    assert all(call_at[m["tool_call_id"]] < i for i, m in enumerate(messages) if m["role"] == "tool")
    assert not any(isinstance(m.get("content"), str) and m["content"].startswith("[tool result for")
                   for m in messages)  # no result turned into user text as an orphan


def test_a_session_opening_with_an_event_type_newer_than_the_reader_is_read(tmp_path):
    events = [{"type": "mode", "mode": "normal", "sessionId": "s1"},  # Claude Code 2.1.17x
              {"type": "permission-mode", "permissionMode": "default", "sessionId": "s1"},
              _event("u1", None, "user", "hello"), _event("a1", "u1", "assistant", "Hi.")]
    messages, err = _read(tmp_path, events)
    assert [m["content"] for m in messages] == ["hello", "Hi."]
    assert "unknown type" not in err


def test_a_boundary_naming_the_copy_kept_after_it_joins_the_segment_before(tmp_path):
    events = [
        _event("u1", None, "user", "first task"),
        _event("a1", "u1", "assistant", _call("t1", "ls")),
        _event("r1", "a1", "user", _result("t1", "a.py")),
        {"type": "system", "subtype": "compact_boundary", "uuid": "b1", "parentUuid": None,
         "logicalParentUuid": "r1c", "sessionId": "s1", "isSidechain": False},
        {**_event("s1", "b1", "user", "This session is being continued from a previous conversation."),
         "isCompactSummary": True},
        _event("r1c", "s1", "user", "[kept after the summary]"),
        _event("a2", "r1c", "assistant", _call("t2", "pytest")),
        _event("r2", "a2", "user", _result("t2", "1 passed")),
    ]
    messages, err = _read(tmp_path, events, "--all-segments")
    assert _calls(messages) == ["t1", "t2"] and _results(messages) == ["t1", "t2"]
    assert "names no entry before it in the log" in err
