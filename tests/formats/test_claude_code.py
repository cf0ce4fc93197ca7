"""The Claude Code reader on the structures of genuine logs (fixtures written by
tests/fixtures/formats/claude-code/make_claude_code.py): parallel calls as a chain of entries,
results hanging off their own tool_use entries, rewound branches, subagent files (2.1, 2.0),
inline sidechains (1.0), a dangling compaction link, a standalone subagent file, a log of only
summaries."""

from __future__ import annotations

import importlib.util
import io as _io
import json
import shutil
import tempfile
from pathlib import Path

import pytest
from conftest import FIXTURES, invoke
from hypothesis import given
from hypothesis import strategies as st

from hermesctx import formats
from hermesctx.messages import content_text
from hermesctx.stages.sanitize import find_problems

CC = FIXTURES / "formats" / "claude-code"
S21 = CC / "2.1" / "7f1e2d3c-4b5a-4c6d-8e9f-0a1b2c3d4e5f.jsonl"
AGENT21 = CC / "2.1" / "7f1e2d3c-4b5a-4c6d-8e9f-0a1b2c3d4e5f" / "subagents" / "agent-a5e6f7a.jsonl"
S20 = CC / "2.0" / "3a4b5c6d-7e8f-4a0b-9c1d-2e3f4a5b6c7d.jsonl"
AGENT20 = CC / "2.0" / "agent-b7c8d9e.jsonl"
COMPACTION_AGENT = AGENT21.parent / "agent-acompact-c0ffee.jsonl"
INLINE = CC / "1.0-inline-sidechains.jsonl"
DANGLING = CC / "dangling-logical-parent.jsonl"
SUMMARIES = CC / "summaries-only.jsonl"
LOGS = [S21, AGENT21, COMPACTION_AGENT, S20, AGENT20, INLINE, DANGLING]
FLAGS = [(), ("--all-segments",), ("--include-sidechains",), ("--all-segments", "--include-sidechains")]


def convert(path, *args):
    """(messages, report, stderr) of `hermesctx convert`."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        result = invoke(["convert", "--report", str(report), *map(str, args), str(path)])
        assert result.status == 0, result.stderr
        return result.json["messages"], json.loads(report.read_text()), result.stderr


def read(path, *args):
    """The reader's own messages (before the wire rules the commands apply on output, which
    merge e.g. an agent's last reply with the main thread's next one)."""
    flags = {"include_sidechains": "--include-sidechains" in args, "all_segments": "--all-segments" in args}
    with open(path, "rb") as stream:
        (doc,) = formats.read_documents(stream, **flags)
    return doc.data["messages"]


def calls_of(messages):
    return [c["id"] for m in messages for c in m.get("tool_calls") or ()]


def texts(messages):
    return [content_text(m.get("content")) for m in messages]


def answered_right_after(messages) -> bool:
    """Every tool call has exactly one result, among the tool messages right after its
    assistant message, and every tool message answers a call of that message."""
    i = 0
    while i < len(messages):
        msg = messages[i]
        if msg["role"] == "tool":
            return False  # a result not right after its call's message
        i += 1
        calls = [c["id"] for c in msg.get("tool_calls") or ()]
        results = []
        while i < len(messages) and messages[i]["role"] == "tool":
            results.append(messages[i]["tool_call_id"])
            i += 1
        if sorted(results) != sorted(calls):
            return False
    return True


def test_fixtures_are_what_the_script_writes(tmp_path):
    spec = importlib.util.spec_from_file_location("make_claude_code", CC / "make_claude_code.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(tmp_path)
    made = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    kept = sorted(p.relative_to(CC) for p in CC.rglob("*.jsonl"))
    assert made == kept
    for name in made:
        assert (tmp_path / name).read_bytes() == (CC / name).read_bytes(), name


# --- the API message is the unit ----------------------------------------------------------

def test_parallel_calls_written_as_a_chain_keep_every_call_and_result():
    msgs, report, _ = convert(S21)
    first = msgs[1]
    # thinking, text and three tool_use entries of one API message, progress entries between
    assert "reasoning" not in first  # OpenAI output carries no reasoning (D12), counted:
    assert report["wire"] == {"reasoning not replayable in this format dropped": 2}
    assert first["content"] == "Je regarde trois choses en parallèle."
    assert calls_of([first]) == ["toolu_21a", "toolu_21b", "toolu_21c"]
    # the results of the first two hang off their own tool_use entries, off the parent chain
    assert [m.get("tool_call_id") for m in msgs[2:5]] == ["toolu_21a", "toolu_21b", "toolu_21c"]
    assert msgs[2]["content"].endswith("return strptime(s)\n")
    # calls and results interleaved in the log: one message, then its results
    assert calls_of([msgs[5]]) == ["toolu_21d", "toolu_21e"]
    assert calls_of(msgs) == ["toolu_21a", "toolu_21b", "toolu_21c", "toolu_21d", "toolu_21e",
                              "toolu_21f", "toolu_21h"]
    assert answered_right_after(msgs)
    assert report["tool_calls"] == report["tool_results"] == 7
    assert report["orphan_tool_results"] == 0
    assert report["lost"] == {"tool result is_error flags": 1,
                              "model (the other provider's: convert --model sets one)": 1}


def test_a_rewound_branch_stays_out_and_is_counted_apart():
    msgs, report, _ = convert(S21)
    joined = "\n".join(texts(msgs))
    assert "fromisoformat" not in joined and "toolu_21g" not in calls_of(msgs)
    assert report["abandoned_branch_entries"] == 4  # u2, a10, r7, a11
    # the last ask typed is kept, and what answers it
    assert texts(msgs)[-4:] == ["Non : garde strptime, ajoute juste un test pour report.py.",
                                "Compris, j'ajoute le test.",
                                "File created successfully at: test_report.py", "Test ajouté ✅"]
    assert report["usage"]["cache_read_input_tokens"] == 21000


def test_four_branches_from_one_point_keep_the_last():
    msgs, report, _ = convert(S20)
    assert report["abandoned_branch_entries"] == 4
    assert texts(msgs)[-2:] == ["Résume le fichier en une phrase.", "Un titre et une section Usage."]
    joined = "\n".join(texts(msgs))
    assert "Licence" not in joined and "supprimée" not in joined
    assert report["sidechain_events"] == 0 and "subagents" not in report


# --- subagents ----------------------------------------------------------------------------------

@pytest.mark.parametrize("session, agent, task, prompt, added", [
    (S21, AGENT21, "toolu_21f", "Trouve les appels de parse_date.", 4),
    (S20, AGENT20, "toolu_20b", "Ajoute une section Usage à notes.md.", 6)])
def test_include_sidechains_inserts_the_subagent_file_after_its_task_result(session, agent, task,
                                                                            prompt, added):
    without = read(session)
    _, report, _ = convert(session, "--include-sidechains")
    msgs = read(session, "--include-sidechains")
    assert report["subagents"] == {"inserted": 1, "missing": 0}
    assert len(msgs) == len(without) + added
    result = next(i for i, m in enumerate(msgs) if m.get("tool_call_id") == task)
    assert msgs[result + 1] == {"role": "user", "content": prompt}
    alone = read(agent)
    assert msgs[result + 1:result + 1 + added] == alone
    assert msgs[:result + 1] + msgs[result + 1 + added:] == without
    assert answered_right_after(msgs)


def test_a_missing_subagent_file_is_a_warning(tmp_path):
    lonely = tmp_path / S21.name
    shutil.copyfile(S21, lonely)
    msgs, report, stderr = convert(lonely, "--include-sidechains")
    assert f"warning: subagent file agent-a5e6f7a.jsonl not found beside {lonely}" in stderr
    assert report["subagents"] == {"inserted": 0, "missing": 1}
    without, _, _ = convert(S21)
    assert msgs == without
    piped = invoke(["convert", "--include-sidechains"], S21.read_bytes())
    assert piped.status == 0
    assert "not found (the log was read from stdin)" in piped.stderr


def test_a_20_agent_file_beside_the_session_is_found(tmp_path):
    # the 2.1 place is tried first, then beside the session
    folder = tmp_path / "p"
    folder.mkdir()
    shutil.copyfile(S20, folder / S20.name)
    shutil.copyfile(AGENT20, folder / AGENT20.name)
    _, report, stderr = convert(folder / S20.name, "--include-sidechains")
    assert report["subagents"] == {"inserted": 1, "missing": 0} and "warning: subagent" not in stderr


def test_a_gzipped_session_finds_its_subagent_files(tmp_path):
    import gzip

    shutil.copytree(S21.parent, tmp_path / "s")
    plain = tmp_path / "s" / S21.name
    packed = plain.with_name(plain.name + ".gz")
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    plain.unlink()
    msgs, report, stderr = convert(packed, "--include-sidechains")
    assert report["subagents"] == {"inserted": 1, "missing": 0}, stderr
    assert msgs == convert(S21, "--include-sidechains")[0]


def test_a_standalone_subagent_file_is_read_as_the_agents_transcript():
    msgs, report, stderr = convert(AGENT21)
    assert "every conversation event is a sidechain: read as the transcript of agent a5e6f7a" in stderr
    assert report["agent"] == "a5e6f7a"
    assert texts(msgs)[0] == "Trouve les appels de parse_date."
    assert calls_of(msgs) == ["toolu_21s"] and answered_right_after(msgs)
    assert texts(msgs)[-1] == "Deux appels : cli.py:8 et report.py:21."


def test_entries_hanging_off_entries_absent_from_the_file_are_detached_not_abandoned():
    msgs, report, _ = convert(COMPACTION_AGENT)
    assert report["detached_entries"] == 2 and report["abandoned_branch_entries"] == 0
    assert texts(msgs) == ["Your task is to create a detailed summary of the conversation so far.",
                           "<summary>Module de dates rangé, test ajouté.</summary>"]
    # a compaction agent is named by no Task call: never inserted
    _, report, _ = convert(S21, "--include-sidechains")
    assert report["subagents"] == {"inserted": 1, "missing": 0}


def test_10_inline_sidechains_are_grouped_by_root_and_matched_by_prompt():
    _, report, _ = convert(INLINE)
    without = read(INLINE)
    assert report["sidechain_events"] == 6
    assert texts(without) == ["Analyse le dépôt : dépendances et structure.", "Je lance deux agents.",
                              "Aucune dépendance externe.", "Trois entrées à la racine, un dossier tests/.",
                              "Pas de dépendance ; trois fichiers et tests/."]
    _, report, _ = convert(INLINE, "--include-sidechains")
    msgs = read(INLINE, "--include-sidechains")
    assert report["subagents"] == {"inserted": 2, "missing": 0}
    # after both Task results, each agent in the order of its Task call (the second was logged first)
    assert texts(msgs)[4:10] == ["Liste les dépendances.", "Aucune dépendance externe.",
                                 "Décris la structure des dossiers.", "", "dates.py\ncli.py\ntests/\n",
                                 "Trois entrées à la racine, un dossier tests/."]
    assert msgs[-1] == without[-1]
    assert answered_right_after(msgs)


# --- compaction, empty logs ----------------------------------------------------------------------

def test_a_dangling_logical_parent_joins_the_segment_before_with_a_warning():
    _, report, stderr = convert(DANGLING)
    last = read(DANGLING)
    assert report["dropped_before_compaction"] == 6 and report["segments"] == 2
    assert texts(last)[1:] == ["Continue avec cli.py.", "cli.py a 12 lignes."]
    assert "logicalParentUuid" not in stderr
    _, report, stderr = convert(DANGLING, "--all-segments")
    msgs = read(DANGLING, "--all-segments")
    assert "warning: a compaction boundary's logicalParentUuid names no entry before it in the log" in stderr
    assert report["dropped_before_compaction"] == 0 and report["abandoned_branch_entries"] == 0
    assert len(msgs) == 9 and msgs[3:] == [m for m in msgs if m not in msgs[:3]]
    assert texts(msgs)[0] == "Compte les lignes de dates.py." and msgs[-3:] == last
    assert calls_of(msgs) == ["toolu_da"] and answered_right_after(msgs)


def test_a_log_of_only_summaries_is_refused_and_read_empty_under_lenient():
    # no API takes an empty message list (D12): bad input, as a rollout without items (D14)
    for args in (["convert"], ["sanitize", "--check"], ["estimate"], ["prune"]):
        result = invoke([*args, str(SUMMARIES)])
        assert result.status == 3 and result.stdout == b"", args
        assert result.stderr == ("hermesctx: error: the log holds only session titles (summary events) "
                                 "but no message: nothing to read; --lenient reads it as an empty transcript\n")
    result = invoke(["convert", "--lenient", str(SUMMARIES)])
    assert result.status == 0 and result.json == {"messages": []}
    assert "warning: the log holds only session titles (summary events) but no message" in result.stderr
    check = invoke(["sanitize", "--check", "--lenient", str(SUMMARIES)])
    assert check.status == 1
    assert "messages: EMPTY-LOG: the log holds events but no message" in check.stderr


# --- invariants ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("flags", FLAGS, ids=lambda f: " ".join(f) or "default")
@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_every_call_is_answered_right_after_and_sanitize_check_finds_nothing(path, flags):
    msgs, report, _ = convert(path, *flags)
    assert msgs and answered_right_after(msgs)
    assert find_problems(msgs) == []
    check = invoke(["sanitize", "--check", *flags, str(path)])
    assert check.status == 0, check.stderr
    assert check.stderr.endswith("no problems in 1 transcript\n")


@pytest.mark.parametrize("path", [S21, INLINE], ids=lambda p: p.name)
def test_a_piped_log_reads_like_the_file_but_the_subagent_files(path):
    with open(path, "rb") as handle:
        (seekable,) = formats.read_documents(handle, include_sidechains=True)
    (piped,) = formats.read_documents(_io.BytesIO(path.read_bytes()), include_sidechains=True)
    if path == INLINE:  # inline sidechains need no file
        assert piped.data == seekable.data
    else:
        assert piped.info["subagents"] == {"inserted": 0, "missing": 1}


def _parallel_log(n_calls: int, order: list[int], progress: list[bool], rewind: bool) -> bytes:
    """A 2.1 log: one API message with ``n_calls`` calls as a chain of entries (a progress entry
    after call i when ``progress[i]``), their results logged in ``order``, each hanging off its
    own call; the next turn continues from the result logged last; optionally a rewound turn."""
    events = [{"type": "user", "uuid": "u0", "parentUuid": None, "isSidechain": False, "sessionId": "s",
               "message": {"role": "user", "content": "go"}}]
    parent = "u0"
    for i in range(n_calls):
        events.append({"type": "assistant", "uuid": f"c{i}", "parentUuid": parent, "isSidechain": False,
                       "sessionId": "s", "message": {"id": "msg_P", "role": "assistant", "content": [
                           {"type": "tool_use", "id": f"toolu_{i}", "name": "Read", "input": {"i": i}}]}})
        parent = f"c{i}"
        if progress[i]:
            events.append({"type": "progress", "uuid": f"p{i}", "parentUuid": parent, "isSidechain": False,
                           "data": {"type": "hook_progress"}})
            parent = f"p{i}"
    for i in order:
        events.append({"type": "user", "uuid": f"r{i}", "parentUuid": f"c{i}", "isSidechain": False,
                       "sessionId": "s", "sourceToolAssistantUUID": f"c{i}", "message": {"role": "user", "content": [
                           {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": f"out {i}"}]}})
    last = f"r{order[-1]}"
    if rewind:
        events.append({"type": "user", "uuid": "x1", "parentUuid": last, "isSidechain": False,
                       "sessionId": "s", "message": {"role": "user", "content": "abandoned ask"}})
        events.append({"type": "assistant", "uuid": "x2", "parentUuid": "x1", "isSidechain": False,
                       "sessionId": "s", "message": {"id": "msg_X", "role": "assistant", "content": [
                           {"type": "tool_use", "id": "toolu_x", "name": "Bash", "input": {}}]}})
    events.append({"type": "assistant", "uuid": "f1", "parentUuid": last, "isSidechain": False,
                   "sessionId": "s", "message": {"id": "msg_F", "role": "assistant",
                                                 "content": [{"type": "text", "text": "done"}]}})
    return b"".join(json.dumps(e).encode() + b"\n" for e in events)


@given(st.integers(1, 6).flatmap(lambda n: st.tuples(
    st.permutations(range(n)), st.lists(st.booleans(), min_size=n, max_size=n), st.booleans())))
def test_any_order_of_parallel_results_keeps_every_pair(case):
    order, progress, rewind = case
    raw = _parallel_log(len(order), list(order), progress, rewind)
    (doc,) = formats.read_documents(_io.BytesIO(raw))
    msgs = doc.data["messages"]
    assert calls_of(msgs) == [f"toolu_{i}" for i in range(len(order))]
    assert answered_right_after(msgs) and find_problems(msgs) == []
    assert doc.info["abandoned_branch_entries"] == (2 if rewind else 0)
    assert texts(msgs)[-1] == "done"
