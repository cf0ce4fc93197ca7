"""A Claude Code session read from its last compaction boundary says what it left out (found on
a genuine 733-line session whose 189 tool calls read as 15 without a word)."""

import json
import subprocess
import sys


def _event(uuid, parent, kind, message=None, **extra):
    event = {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s1", "isSidechain": False, **extra}
    if message is not None:
        event["message"] = message
    return event


def _session() -> str:
    events = [
        _event("u1", None, "user", {"role": "user", "content": "fix the flaky test"}),
        _event("a1", "u1", "assistant", {"id": "m1", "role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest -x"}}]}),
        _event("r1", "a1", "user", {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "1 failed"}]}),
        _event("b1", None, "system", subtype="compact_boundary", logicalParentUuid="r1"),
        _event("s1", "b1", "user", {"role": "user", "content": "This session is being continued from a previous "
                                                               "conversation. Summary: a test failed."},
               isCompactSummary=True),
        _event("a2", "s1", "assistant", {"id": "m2", "role": "assistant", "content": [
            {"type": "text", "text": "Fixed it."}]}),
    ]
    return "\n".join(json.dumps(e) for e in events) + "\n"


def _convert(tmp_path, *flags, session=None):
    path = tmp_path / "session.jsonl"
    path.write_text(session or _session())
    proc = subprocess.run([sys.executable, "-m", "hermesctx", "convert", "--to", "openai", *flags, str(path)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["messages"], proc.stderr


def test_the_segments_before_the_last_compaction_are_said_when_left_out(tmp_path):
    messages, err = _convert(tmp_path)
    assert not any(m.get("tool_calls") for m in messages)  # the context the model saw: the summary, the reply
    assert "3 message events before the session's last compaction boundary not read" in err
    assert "--all-segments reads them" in err


def test_all_segments_reads_them_and_says_nothing(tmp_path):
    messages, err = _convert(tmp_path, "--all-segments")
    assert [c["id"] for m in messages for c in m.get("tool_calls") or []] == ["t1"]
    assert "compaction boundary" not in err


def test_the_branch_a_rewind_left_is_said_when_left_out(tmp_path):
    """A user who goes back and asks again leaves a branch the model no longer sees: the
    transcript is the branch the session went on with, and the entries left are counted aloud
    (a genuine 2.1 session with 4 rewinds read 202 of its 216 calls without a word)."""
    events = [
        _event("u1", None, "user", {"role": "user", "content": "write the parser"}),
        _event("a1", "u1", "assistant", {"id": "m1", "role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}]}),
        _event("r1", "a1", "user", {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "src"}]}),
        _event("u2", None, "user", {"role": "user", "content": "write the parser in Rust instead"}),
        _event("a2", "u2", "assistant", {"id": "m2", "role": "assistant", "content": [
            {"type": "text", "text": "Done in Rust."}]}),
    ]
    messages, err = _convert(tmp_path, session="\n".join(json.dumps(e) for e in events) + "\n")
    assert [m["content"] for m in messages] == ["write the parser in Rust instead", "Done in Rust."]
    assert "3 entries on branches a rewind left not read" in err
