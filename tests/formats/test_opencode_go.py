"""The OpenCode (Go) / Crush reader, on the structures of the genuine stores in
../shared/real-logs/opencode-go-*: a SQLite database whose rows sit in its write-ahead log,
gzipped or not, and the JSON export of its rows (``parts`` parsed). Sessions are documents, a
sub-agent session (its id the ``tool_call`` that started it) its own; a compacted session starts
at its summary."""

from __future__ import annotations

import gzip
import json
import shutil
import sqlite3

import pytest
from conftest import invoke

from hermesctx import formats

SESSIONS = [
    {"id": "s1", "parent_session_id": None, "title": "Docs", "message_count": 5, "prompt_tokens": 90,
     "completion_tokens": 9, "cost": 0.01, "updated_at": 20, "created_at": 10, "summary_message_id": None},
    {"id": "toolu_A", "parent_session_id": "s1", "title": "New Agent Session", "message_count": 2,
     "prompt_tokens": 40, "completion_tokens": 4, "cost": 0.0, "updated_at": 16, "created_at": 15,
     "summary_message_id": None},
]


def _row(mid, sid, role, parts, at, model=""):
    return {"id": mid, "session_id": sid, "role": role, "parts": parts, "model": model,
            "created_at": at, "updated_at": at, "finished_at": None}


def _text(text):
    return {"type": "text", "data": {"text": text}}


FINISH = {"type": "finish", "data": {"reason": "stop", "time": 0}}
ROWS = [
    _row("m1", "s1", "user", [_text("Document the package"), FINISH], 10),
    _row("m2", "s1", "assistant", [
        {"type": "tool_call", "data": {"id": "call_1", "name": "glob", "input": "{\"pattern\": \"*.go\"}",
                                       "type": "function", "finished": True}},
        {"type": "tool_call", "data": {"id": "toolu_A", "name": "agent", "input": "{\"prompt\": \"look\"}",
                                       "type": "function", "finished": True}},
        {"type": "finish", "data": {"reason": "tool_use", "time": 0}}], 11, "claude-4-sonnet"),
    _row("m3", "s1", "tool", [
        {"type": "tool_result", "data": {"tool_call_id": "call_1", "name": "", "content": "a.go",
                                         "metadata": "{}", "is_error": False}},
        {"type": "tool_result", "data": {"tool_call_id": "toolu_A", "name": "", "content": "denied",
                                         "metadata": "", "is_error": True}}, FINISH], 12),
    _row("m4", "s1", "assistant", [_text("Done."), FINISH], 13, "claude-4-sonnet"),
    _row("m5", "s1", "assistant", [{"type": "finish", "data": {"reason": "canceled", "time": 0}}], 14),
    _row("a1", "toolu_A", "user", [_text("look"), FINISH], 15),
    _row("a2", "toolu_A", "assistant", [_text("Nothing there."), FINISH], 16, "claude-4-sonnet"),
]


def export(rows=ROWS, sessions=SESSIONS):
    return {"sessions": sessions, "messages": rows}


def _database(path, rows=ROWS, sessions=SESSIONS):
    """The store as OpenCode writes it: WAL mode, the rows still in the -wal file (copied while
    the connection is open, before a checkpoint could move them into the database)."""
    work = path.parent / "work"
    work.mkdir()
    con = sqlite3.connect(work / "opencode.db")
    con.execute("pragma journal_mode=wal")
    con.execute("pragma wal_autocheckpoint=0")
    con.execute("create table sessions (id text primary key, parent_session_id text, title text, "
                "message_count integer, prompt_tokens integer, completion_tokens integer, cost real, "
                "updated_at integer, created_at integer, summary_message_id text)")
    con.execute("create table messages (id text primary key, session_id text, role text, parts text, "
                "model text, created_at integer, updated_at integer, finished_at integer)")
    con.commit()
    con.execute("pragma wal_checkpoint(truncate)")
    shutil.copy(work / "opencode.db", path)  # the main file: tables, no rows
    for s in sessions:
        con.execute("insert into sessions values (?,?,?,?,?,?,?,?,?,?)", tuple(s.values()))
    for r in rows:
        con.execute("insert into messages values (?,?,?,?,?,?,?,?)",
                    (r["id"], r["session_id"], r["role"], json.dumps(r["parts"]), r["model"],
                     r["created_at"], r["updated_at"], r["finished_at"]))
    con.commit()
    shutil.copy(work / "opencode.db-wal", str(path) + "-wal")
    con.close()
    return path


def _docs(result):
    assert result.status == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def _check_store(docs):
    assert len(docs) == 2
    main, agent = docs
    calls = [c["id"] for m in main["messages"] for c in m.get("tool_calls") or ()]
    results = [m["tool_call_id"] for m in main["messages"] if m["role"] == "tool"]
    assert calls == results == ["call_1", "toolu_A"]
    assert main["messages"][0] == {"role": "user", "content": "Document the package"}
    assert main["messages"][1]["tool_calls"][0]["function"] == {"name": "glob",
                                                                "arguments": "{\"pattern\": \"*.go\"}"}
    assert main["messages"][3]["content"] == "[error] denied"
    assert main["messages"][-1] == {"role": "assistant", "content": "Done."}  # the canceled row: nothing
    assert main["model"] == "claude-4-sonnet"
    assert [m["content"] for m in agent["messages"]] == ["look", "Nothing there."]


def test_the_export_reads_one_document_per_session():
    _check_store(_docs(invoke(["convert", "--to", "openai"], export())))


def test_the_database_is_read_with_its_wal(tmp_path):
    db = _database(tmp_path / "opencode.db")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    _check_store(_docs(invoke(["convert", "--to", "openai", str(db)])))
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    assert after == before  # read-only: no -shm beside it, nothing checkpointed


def test_a_gzipped_database_finds_its_gzipped_wal(tmp_path):
    (tmp_path / "plain").mkdir()
    db = _database(tmp_path / "plain" / "opencode.db")
    for name in ("opencode.db", "opencode.db-wal"):
        (tmp_path / f"{name}.gz").write_bytes(gzip.compress((db.parent / name).read_bytes()))
    _check_store(_docs(invoke(["convert", "--to", "openai", str(tmp_path / "opencode.db.gz")])))


def test_without_its_wal_the_database_holds_what_was_checkpointed(tmp_path):
    db = _database(tmp_path / "opencode.db")
    (tmp_path / "opencode.db-wal").unlink()
    result = invoke(["estimate", str(db)])
    assert result.status == 3 and result.stdout == b""  # never an empty read with exit 0
    assert "without any message" in result.stderr and "-wal file beside" in result.stderr


def test_anthropic_output_pairs_every_call():
    docs = _docs(invoke(["convert", "--to", "anthropic"], export()))
    blocks = [b for d in docs for m in d["messages"] if isinstance(m["content"], list) for b in m["content"]]
    uses = [b["id"] for b in blocks if b["type"] == "tool_use"]
    assert uses == [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"] == ["call_1", "toolu_A"]


def test_estimate_and_compress_count_the_same_transcript():
    est = _docs(invoke(["estimate"], export()))
    assert [d["messages"] for d in est] == [5, 2]
    assert est[0]["tokens"]["total"] > 20
    out = _docs(invoke(["compress", "--summarizer", "extractive"], export()))
    assert len(out) == 2 and out[0]["messages"][0]["content"] == "Document the package"


def test_a_compacted_session_starts_at_its_summary():
    summary = _row("m9", "s1", "assistant", [_text("Summary: docs written."), FINISH], 17, "claude-4-sonnet")
    later = _row("m10", "s1", "user", [_text("Now the tests"), FINISH], 18)
    session = {**SESSIONS[0], "summary_message_id": "m9"}
    result = invoke(["convert", "--to", "openai"], export([*ROWS[:5], summary, later], [session]))
    docs = _docs(result)  # (the wire joins the two user messages, as the API would need)
    assert docs[0]["messages"] == [{"role": "user", "content": "Summary: docs written.\n\nNow the tests"}]
    assert "messages before the session's compaction summary: 5 not kept" in result.stderr


def test_parts_as_json_text_and_rows_alone():
    rows = [{**r, "parts": json.dumps(r["parts"])} for r in ROWS]
    assert formats.detect_document(rows) == "opencode-go"
    _check_store(_docs(invoke(["convert", "--to", "openai"], rows)))


def test_a_database_that_is_no_session_store_is_refused(tmp_path):
    path = tmp_path / "other.db"
    con = sqlite3.connect(path)
    con.execute("create table notes (x)")
    con.commit()
    con.close()
    result = invoke(["estimate", str(path)])
    assert result.status == 3
    assert "SQLite database with tables notes" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("shape", [
    {"messages": [{"role": "user", "parts": [{"type": "text", "text": "hi"}]}]},
    [{"role": "user", "parts": [{"type": "text", "text": "hi"}]}],
])
def test_messages_without_a_content_key_are_refused_not_read_empty(shape):
    for command in (["estimate"], ["compress"], ["convert", "--to", "anthropic"]):
        result = invoke(command, shape)
        assert result.status == 3, (command, result.stdout)
        assert "they hold parts" in result.stderr


def test_a_gzip_holding_no_transcript_is_named_as_gzip():
    result = invoke(["estimate"], gzip.compress(b"\x00\x01binary"))
    assert result.status == 3
    assert result.stderr.startswith("hermesctx: error: gzip-compressed input that holds no JSON")


def test_a_session_that_says_nothing_is_no_document_and_alone_is_refused():
    canceled = [_row("c1", "s9", "assistant", [{"type": "finish", "data": {"reason": "canceled", "time": 0}}], 30)]
    docs = _docs(invoke(["convert", "--to", "openai"], export([*ROWS, *canceled])))
    assert len(docs) == 2  # (s9: nothing to write)
    result = invoke(["estimate"], export(canceled, []))
    assert result.status == 3 and "say nothing" in result.stderr
