"""The SQLite archive store (hermesctx.store): verbatim spans, chains, search with and without FTS5."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

import pytest
from builders import assistant, call, system, text, tool, user

from hermesctx import jsonio
from hermesctx.errors import FileIOError, InputError
from hermesctx.store import Store, fts5_available, is_store_path, message_text, query_words, timestamp

needs_fts = pytest.mark.skipif(not fts5_available(), reason="this sqlite build has no FTS5")


def convo(topic: str, secret: str = "") -> list:
    return [
        system("You are a coding agent."),
        user(f"please fix {topic} in src/app.py"),
        assistant(None, call("c1", "read_file", '{"path": "src/app.py"}')),
        tool("c1", f"Traceback: KeyError {topic} {secret}"),
        assistant([text(f"{topic} is fixed, 1.50 ünïcode")]),
    ]


@pytest.fixture(params=[True, False], ids=["fts5", "scan"])
def store(request, tmp_path):
    if request.param and not fts5_available():
        pytest.skip("no FTS5")
    with Store.open(str(tmp_path / "a.sqlite"), fts=request.param) as s:
        yield s


def test_span_keeps_every_message_byte_for_byte(store):
    msgs = convo("latency") + [{"role": "user", "content": "big 123456789012345678901234567890 and 1.0e5 ok"}]
    span = store.add(msgs, session="s1", summary="summary of latency", compressed=3, start=1, end=4)
    assert span.startswith("hx-") and len(span) == 15
    assert store.expand_bytes(span) == [jsonio.dumps(m) for m in msgs]
    assert store.expand(span) == msgs
    assert store.add(msgs, session="s1", summary="again") == span  # the same compaction is one span
    record = store.span(span)
    assert (record["compressed"], record["start"], record["end"], record["summary"]) == (3, 1, 4, "summary of latency")
    assert store.spans() == [{"span": span, "session": "s1", "parent": None, "created": record["created"],
                              "messages": 6, "summary_chars": 18}]
    assert os.stat(store.path).st_mode & 0o777 == 0o600


def test_parents_form_a_chain_and_unknown_parents_are_not_recorded(store):
    one = store.add(convo("alpha"), session="s", summary="first")
    two = store.add(convo("beta"), session="s", summary="second", parent=one)
    three = store.add(convo("gamma"), session="s", summary="third", parent=two)
    orphan = store.add(convo("delta"), session="s", parent="hx-000000000000")
    assert store.chain(three) == [three, two, one]
    assert store.span(orphan)["parent"] is None
    assert [s["parent"] for s in store.spans(session="s")] == [None, one, two, None]


def test_search_finds_paths_errors_tool_calls_and_summaries(store):
    span = store.add(convo("overflow"), session="s1", summary="We fixed the overflow bug in src/app.py")
    hits = store.search("src/app.py")
    assert {(h["kind"], h["position"]) for h in hits} == {("message", 1), ("message", 2), ("summary", None)}
    assert all(h["span"] == span for h in hits)
    assert [h["position"] for h in store.search("KeyError overflow")] == [3]
    assert [h["tool"] for h in store.search("read_file")] == ["read_file"]
    assert store.search("unicode") == []  # a word is matched whole: ünïcode is not unicode
    assert [h["position"] for h in store.search("ÜNÏCODE")] == [4]
    assert store.search("nowhere") == []
    hit = store.search("Traceback")[0]
    assert set(hit) == {"span", "kind", "session", "position", "role", "tool", "created", "score", "snippet"}
    assert "Traceback" in hit["snippet"]


def test_snippets_are_redacted(store):
    store.add(convo("leak", secret="sk-proj-abcdefghijklmnopqrstuvwxyz0123"), session="s")
    (hit,) = store.search("Traceback")
    assert "abcdefghijklmnop" not in hit["snippet"] and "sk-pro" in hit["snippet"]


def test_filters_session_role_tool_time(store):
    store.add(convo("zebra"), session="s1", created="2026-01-05T10:00:00Z")
    store.add(convo("zebra") + [{"role": "user", "content": "zebra again"}], session="s2",
              summary="zebra summary", created="2026-03-01T00:00:00Z")
    assert {h["session"] for h in store.search("zebra")} == {"s1", "s2"}
    assert {h["session"] for h in store.search("zebra", session="s2")} == {"s2"}
    assert {h["role"] for h in store.search("zebra", role="tool")} == {"tool"}
    assert {(h["session"], h["position"]) for h in store.search("zebra", tool="read_file")} == {("s1", 3), ("s2", 3)}
    assert store.search("zebra", tool="read") == []  # a tool name is matched whole
    assert {h["session"] for h in store.search("zebra", since="2026-02-01")} == {"s2"}
    assert {h["session"] for h in store.search("zebra", until="2026-01-05")} == {"s1"}  # the whole day
    assert store.search("zebra", since="2026-01-06", until="2026-02-28") == []
    assert len(store.search("zebra", limit=2)) == 2


@needs_fts
def test_plain_scan_finds_the_same_hits_as_fts5(tmp_path):
    path = str(tmp_path / "a.sqlite")
    with Store.open(path) as s:
        for i, topic in enumerate(["alpha", "beta", "alpha beta", "gamma"]):
            s.add(convo(topic) + [{"role": "user", "content": f"round {i} {topic}"}], session=f"s{i % 2}",
                  summary=f"summary {topic}")
    queries = ["alpha", "beta alpha", "src/app.py", "KeyError", "read_file", "summary", "fixed 1.50", "nothing"]
    with Store.open(path) as fts, Store.open(path, fts=False) as scan:
        assert fts.fts and not scan.fts
        for q in queries:
            for kw in ({}, {"session": "s1"}, {"role": "user"}, {"tool": "read_file"}):
                a = {(h["span"], h["kind"], h["position"]) for h in fts.search(q, limit=100, **kw)}
                b = {(h["span"], h["kind"], h["position"]) for h in scan.search(q, limit=100, **kw)}
                assert a == b, (q, kw)


@needs_fts
def test_a_store_made_without_fts5_is_indexed_when_opened_with_it(tmp_path):
    path = str(tmp_path / "a.sqlite")
    with Store.open(path, fts=False) as s:
        s.add(convo("kiwi"), session="s", summary="kiwi summary")
        assert not s._has_fts()
    with Store.open(path) as s:
        assert s._has_fts()
        assert {h["kind"] for h in s.search("kiwi")} == {"message", "summary"}


def test_unknown_forged_and_malformed_span_ids_are_input_errors(store):
    store.add(convo("x"), session="s")
    for bad in ("hx-000000000000", "../../etc/passwd", "hx-ABCDEF012345", "", "hx-0123456789abc"):
        with pytest.raises(InputError) as err:
            store.expand(bad)
        assert err.value.status == 3
    with pytest.raises(InputError, match="unknown span hx-000000000000"):
        store.expand("hx-000000000000")


def bad_stores(tmp_path) -> dict:
    """Paths where a store cannot be, by the words of their refusal: a symlink to a genuine store,
    a FIFO, a text file, a missing file (opened with create=False)."""
    real = tmp_path / "real.sqlite"
    Store.open(str(real)).close()
    link = tmp_path / "link.sqlite"
    link.symlink_to(real)
    fifo = tmp_path / "fifo.sqlite"
    os.mkfifo(fifo)
    text = tmp_path / "text.db"
    text.write_text("not a database at all, just some text\n")
    return {"a symlink": link, "not a regular file": fifo, "not a SQLite database": text,
            "no archive store": tmp_path / "missing.sqlite"}


def test_paths_that_are_not_stores_are_refused_without_opening_them(tmp_path):
    for why, path in bad_stores(tmp_path).items():
        with pytest.raises(FileIOError, match=why) as err:
            Store.open(str(path), create=path.name != "missing.sqlite")
        assert err.value.status == 5
    assert not (tmp_path / "missing.sqlite").exists()


def test_a_newer_schema_is_refused(tmp_path):
    path = str(tmp_path / "a.sqlite")
    Store.open(path).close()
    con = sqlite3.connect(path)
    con.execute("PRAGMA user_version = 99")
    con.commit()
    con.close()
    with pytest.raises(FileIOError, match="schema version 99"):
        Store.open(path)


def test_is_store_path(tmp_path):
    assert is_store_path("x/a.sqlite") and is_store_path("a.db")
    assert not is_store_path(str(tmp_path))
    plain = tmp_path / "store"
    Store.open(str(tmp_path / "s.sqlite")).close()
    os.rename(tmp_path / "s.sqlite", plain)
    assert is_store_path(str(plain))
    assert not is_store_path(str(tmp_path / "newdir"))


def test_query_words_and_message_text():
    assert query_words("src/app.py  KeyError") == [["src", "app", "py"], ["keyerror"]]
    with pytest.raises(InputError):
        query_words(" /// ")
    text = message_text({"role": "assistant", "tool_calls": [{"id": "call_9", "type": "function",
                                                              "function": {"name": "grep", "arguments": "{}"}}],
                         "content": [{"type": "image", "source": {"data": "QUJD"}}, {"type": "text", "text": "hi"}]})
    assert "grep" in text and "hi" in text and "call_9" not in text and "QUJD" not in text
    assert timestamp("2026-01-05") == "2026-01-05T00:00:00Z"
    assert timestamp("2026-01-05", end=True) == "2026-01-05T23:59:59Z"
    assert timestamp("2026-01-05T12:00:00+02:00") == "2026-01-05T10:00:00Z"
    with pytest.raises(InputError):
        timestamp("yesterday")


_WRITER = """
import sys
from hermesctx.store import Store
path, who = sys.argv[1], sys.argv[2]
with Store.open(path) as s:
    for i in range(40):
        s.add([{"role": "user", "content": f"{who} message {i}"}], session=who, summary=f"{who} {i}")
"""


def test_two_processes_write_one_store(tmp_path):
    path = str(tmp_path / "shared.sqlite")
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, path, who]) for who in ("left", "right")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    with Store.open(path) as s:
        assert len(s.spans(session="left")) == 40 and len(s.spans(session="right")) == 40
        assert len(s.search("message", limit=1000)) == 80


_OPENER = """
import sys
from hermesctx.store import Store
with Store.open(sys.argv[1]) as s:
    s.add([{"role": "user", "content": sys.argv[2]}], session=sys.argv[2], summary="x")
"""


def test_two_processes_creating_one_store_at_once(tmp_path):
    """Two compactions starting together on a new store: the switch to WAL journaling (which
    SQLite answers "locked" without waiting) made one of them fail about one time in four."""
    for i in range(20):
        path = str(tmp_path / f"new{i}.sqlite")
        procs = [subprocess.Popen([sys.executable, "-c", _OPENER, path, who], stderr=subprocess.PIPE)
                 for who in ("left", "right")]
        assert [p.wait(timeout=60) for p in procs] == [0, 0], [p.stderr.read() for p in procs]
        with Store.open(path) as s:
            assert len(s.spans()) == 2


@needs_fts
def test_only_the_newest_summary_of_a_session_is_searched(tmp_path):
    path = str(tmp_path / "a.sqlite")
    with Store.open(path) as s:
        s.add(convo("alpha"), session="s", summary="summary kiwi one")
        s.add(convo("beta"), session="s", summary="summary kiwi two")
        s.add(convo("gamma"), session="t", summary="summary kiwi three")
    with Store.open(path) as fts, Store.open(path, fts=False) as scan:
        for store in (fts, scan):
            hits = [h for h in store.search("kiwi", limit=100) if h["kind"] == "summary"]
            assert sorted(h["snippet"] for h in hits) == ["summary kiwi three", "summary kiwi two"]
        assert {h["kind"] for h in fts.search("alpha")} == {"message"}  # its messages stay found
