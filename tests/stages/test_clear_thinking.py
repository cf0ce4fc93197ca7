"""prune --clear-thinking KEEP (issue 34): old thinking goes, whole; the API's own stays."""

from __future__ import annotations

import copy
import json

from hypothesis import given
from hypothesis import strategies as st

from hermesctx.stages.thinking import clear_thinking
from tests.conftest import invoke


def _anthropic_session(turns: list[str]) -> list[dict]:
    """Turns: 'u' a user ask, 't' an assistant tool call with thinking (and its result), 'a'
    an assistant answer with thinking."""
    msgs, n = [], 0
    for kind in turns:
        n += 1
        if kind == "u":
            msgs.append({"role": "user", "content": f"ask {n}"})
        elif kind == "t":
            msgs.append({"role": "assistant", "content": [
                {"type": "thinking", "thinking": f"plan {n}", "signature": f"sig{n}"},
                {"type": "tool_use", "id": f"t{n}", "name": "run", "input": {"n": n}}]})
            msgs.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{n}", "content": "ok"}]})
        else:
            msgs.append({"role": "assistant", "content": [
                {"type": "redacted_thinking", "data": f"enc{n}"}, {"type": "text", "text": f"answer {n}"}]})
    return msgs


SESSIONS = st.lists(st.sampled_from("uta"), min_size=1, max_size=25).map(lambda t: _anthropic_session(["u", *t]))


@given(SESSIONS, st.integers(min_value=0, max_value=6))
def test_blocks_are_removed_whole_never_edited(messages, keep):
    before = copy.deepcopy(messages)
    out, report = clear_thinking(messages, keep)
    assert messages == before  # pure
    assert len(out) == len(messages)
    for old, new in zip(messages, out):
        if isinstance(new["content"], list):
            assert all(b in old["content"] for b in new["content"])  # every block as it was
            assert new["content"]
    assistants = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    for i in assistants[-keep:] if keep else ():
        assert out[i] is messages[i]
    assert clear_thinking(out, keep)[1]["messages_changed"] == 0  # idempotent


@given(SESSIONS)
def test_the_open_tool_loop_keeps_its_thinking(messages):
    out, _ = clear_thinking(messages, 0)
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user" and isinstance(m["content"], str))
    for i in range(last_user + 1, len(messages)):
        assert out[i] == messages[i]
    for i in range(last_user):
        if messages[i]["role"] == "assistant":
            assert not any(b["type"] in ("thinking", "redacted_thinking") for b in out[i]["content"])


def test_openai_reasoning_fields():
    msgs = [{"role": "user", "content": "a"},
            {"role": "assistant", "content": "x", "reasoning": "long thought", "reasoning_details": [{"type": "thinking", "signature": "s"}]},
            {"role": "user", "content": "b"},
            {"role": "assistant", "content": "y", "reasoning_content": "kept"}]
    out, report = clear_thinking(msgs, 1)
    assert out[1] == {"role": "assistant", "content": "x"}
    assert out[3] is msgs[3]
    assert report["cleared_fields"] == 2 and report["messages_changed"] == 1
    assert report["chars_removed"] == len("long thought") + len(str(msgs[1]["reasoning_details"]))


def test_only_thinking_is_kept_to_stay_valid():
    msgs = [{"role": "user", "content": "a"},
            {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "s"}]},
            {"role": "user", "content": "b"}]
    out, report = clear_thinking(msgs, 0)
    assert out is msgs and report["kept_nonempty"] == 1


def test_cli(tmp_path):
    doc = {"model": "claude-sonnet-4-5", "system": "be brief", "messages": _anthropic_session(list("utaututa"))}
    src = tmp_path / "in.json"
    src.write_text(json.dumps(doc))
    rep = tmp_path / "r.jsonl"
    res = invoke(["prune", "--clear-thinking", "1", "--report", str(rep), str(src)])
    assert res.status == 0, res.stderr
    out = res.json
    kinds = [[b["type"] for b in m["content"]] for m in out["messages"] if m["role"] == "assistant"]
    assert kinds[-1][0] == "redacted_thinking"  # the last turn (KEEP 1)
    assert kinds[-2][0] == "thinking"  # the open tool-use loop's, beyond KEEP
    assert sum(k.count("thinking") + k.count("redacted_thinking") for k in kinds) == 2
    report = json.loads(rep.read_text())
    assert report["thinking"]["cleared_blocks"] == 3 and report["thinking"]["kept_open_loop"] == 1
    assert "cleared thinking of 3 assistant turns" in res.stderr
