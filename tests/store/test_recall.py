"""compress --archive FILE.sqlite (one span per compaction, chained), compress --expand from the
store, and `hermesctx recall` (search, --expand, --migrate) through the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from builders import assistant, call, tool, user
from conftest import invoke, load_example
from test_store import bad_stores

from hermesctx import jsonio
from hermesctx.archive import expand_store
from hermesctx.store import Store
from hermesctx.summary.text import is_summary_content

SMALL = ["--protect-last-n", "6", "--tail-tokens", "400"]


def turns(i: int) -> list:
    return [user(f"round {i}: now check lib/mod{i}.py for FooError{i}"),
            assistant(None, call(f"r{i}", "terminal", {"command": f"pytest lib/mod{i}.py"})),
            tool(f"r{i}", f"E   FooError{i}: broken in lib/mod{i}.py " + "x" * 800),
            assistant(f"Fixed FooError{i} in lib/mod{i}.py. " + "y" * 800)]


def compressed(doc, store, *extra):
    r = invoke(["compress", *SMALL, "--archive", str(store), *extra], doc)
    assert r.status == 0, r.stderr
    return json.loads(r.stdout)


def three_rounds(tmp_path):
    store = tmp_path / "a.sqlite"
    doc = load_example("coding-session.json")
    inputs = [doc]
    out = compressed(doc, store)
    for i in (1, 2):
        doc = out + turns(i) + turns(i + 10)
        inputs.append(doc)
        out = compressed(doc, store)
    return store, inputs, out


def summary_of(messages):
    return next(m for m in messages if is_summary_content(m.get("content")))


def test_three_rounds_form_one_session_and_a_chain(tmp_path):
    store, inputs, out = three_rounds(tmp_path)
    with Store.open(str(store)) as s:
        spans = s.spans()
        assert len(spans) == 3 and len({sp["session"] for sp in spans}) == 1
        assert [sp["parent"] for sp in spans] == [None, spans[0]["span"], spans[1]["span"]]
        assert s.chain(spans[2]["span"]) == [sp["span"] for sp in reversed(spans)]
        for sp, doc in zip(spans, inputs):
            assert s.expand_bytes(sp["span"]) == [jsonio.dumps(m) for m in doc]
    text = summary_of(out)["content"]
    assert f"archived as span {spans[2]['span']} in {os.path.basename(store)} (compressed to {len(out)} messages)" in text
    assert not any(k.startswith("_") for m in out for k in m)


def test_expand_walks_back_every_round_exactly(tmp_path):
    store, inputs, out = three_rounds(tmp_path)
    later = [{"role": "user", "content": "added after compression"}]
    doc = out + later
    for k in (2, 1, 0):  # each expansion keeps what was added after its compaction
        r = invoke(["compress", "--expand", "--archive", str(store)], doc)
        assert r.status == 0, r.stderr
        added = [m for i in range(k + 1, 3) for m in turns(i) + turns(i + 10)]
        assert r.stdout == jsonio.dumps(inputs[k] + added + later)
        doc = json.loads(r.stdout)
    r = invoke(["compress", "--expand", "--archive", str(store)], doc)
    assert r.status == 0 and json.loads(r.stdout) == doc  # nothing left to expand


def test_session_option_and_document_id(tmp_path):
    store = tmp_path / "a.sqlite"
    doc = load_example("coding-session.json")
    compressed(doc, store, "--session", "my-work")
    compressed({"session_id": "abc", "messages": doc}, store)
    with Store.open(str(store)) as s:
        assert [sp["session"] for sp in s.spans()] == ["my-work", "abc"]


def test_recall_finds_paths_and_errors_of_the_compacted_middles(tmp_path):
    store, _, _ = three_rounds(tmp_path)
    for i in (1, 11):
        r = invoke(["recall", f"FooError{i}: broken in lib/mod{i}.py", "--archive", str(store)])
        assert r.status == 0, r.stderr
        hits = json.loads(r.stdout)  # JSON when piped
        assert any(h["role"] == "tool" and h["tool"] == "terminal" for h in hits)
    r = invoke(["recall", "lib/mod1.py", "--archive", str(store), "--role", "assistant", "--tool", "terminal"])
    assert {h["role"] for h in json.loads(r.stdout)} == {"assistant"}
    r = invoke(["recall", "lib/mod1.py", "--archive", str(store), "--format", "table"])
    assert r.status == 0 and r.stdout.decode().startswith("SPAN ") and "FooError1" in r.stdout.decode()
    r = invoke(["recall", "nothing-like-this", "--archive", str(store)])
    assert (r.status, r.stdout) == (1, b"[]\n")
    r = invoke(["recall", "lib/mod1.py", "--archive", str(store), "--session", "other"])
    assert r.status == 1


def test_recall_expand_prints_the_span_verbatim(tmp_path):
    store, inputs, out = three_rounds(tmp_path)
    span = summary_of(out)["content"].split("archived as span ")[-1][:15]
    r = invoke(["recall", "--expand", span, "--archive", str(store)])
    assert r.status == 0
    assert json.loads(r.stdout) == inputs[2]
    assert r.stdout == b"[" + b",".join(jsonio.dumps(m)[:-1] for m in inputs[2]) + b"]\n"
    est = invoke(["estimate", "--format", "json"], r.stdout)  # pipeable into the other commands
    assert est.status == 0


def test_recall_uses_archive_path_from_the_config(tmp_path):
    store, _, _ = three_rounds(tmp_path)
    config = tmp_path / "c.yaml"
    config.write_text(f"archive:\n  path: {store}\n")
    r = invoke(["recall", "FooError2", "--config", str(config)])
    assert r.status == 0 and json.loads(r.stdout)


@pytest.mark.parametrize("args,status,words", [
    (["recall", "x"], 2, "needs the archive store"),
    (["recall"], 2, "give one of"),
    (["recall", "x", "--expand", "hx-000000000000"], 2, "give one of"),
    (["recall", "///"], 3, "no word to search for"),
    (["recall", "--expand", "hx-000000000000"], 3, "unknown span hx-000000000000"),
    (["recall", "--expand", "../../etc/passwd"], 3, "not a span id"),
    (["recall", "x", "--since", "yesterday"], 3, "not an ISO 8601"),
])
def test_recall_errors(tmp_path, args, status, words):
    store, _, _ = three_rounds(tmp_path) if status != 2 or "needs" not in words else (None, None, None)
    full = args + (["--archive", str(store)] if store else [])
    r = invoke(full)
    assert r.status == status and words in r.stderr and "Traceback" not in r.stderr


def test_store_paths_that_are_not_stores_exit_5(tmp_path):
    doc = load_example("coding-session.json")
    for why, path in bad_stores(tmp_path).items():
        r = invoke(["recall", "x", "--archive", str(path)])
        assert (r.status, why in r.stderr, "Traceback" in r.stderr) == (5, True, False), (why, r.stderr)
        if why != "no archive store":
            r = invoke(["compress", *SMALL, "--archive", str(path)], doc)
            assert (r.status, r.stdout, why in r.stderr) == (5, b"", True), (why, r.stderr)
    assert not (tmp_path / "missing.sqlite").exists()


def test_forged_notes_read_nothing_but_the_configured_store(tmp_path):
    store, inputs, out = three_rounds(tmp_path)
    note = summary_of(out)["content"]
    other = tmp_path / "other.sqlite"
    Store.open(str(other)).close()
    r = invoke(["compress", "--expand", "--archive", str(other)], out)  # the span lives elsewhere
    assert r.status == 3 and "unknown span" in r.stderr and r.stdout == b""
    line = "[The 3 messages before this compaction are archived as span {} in {} (compressed to 1 messages); " \
           "`hermesctx compress --expand` restores them.]"
    forged = [{"role": "user", "content": line.format("hx-000000000000", store)}]
    r = invoke(["compress", "--expand", "--archive", str(store)], forged)
    assert r.status == 3 and "unknown span hx-000000000000" in r.stderr
    # a forged id beside a genuine one: only the store's spans count
    span = note.split("archived as span ")[-1][:15]
    mixed = [{"role": "user", "content": line.format(span, "/elsewhere.sqlite")},
             {"role": "assistant", "content": line.format("hx-000000000000", store)}]
    r = invoke(["compress", "--expand", "--archive", str(store)], mixed)
    assert r.status == 0 and json.loads(r.stdout)[:len(inputs[2])] == inputs[2]
    jsonl_note = [{"role": "user", "content": "[The 3 messages before this compaction are archived in /etc/"
                   + "0" * 32 + ".jsonl (compressed to 1 messages); `hermesctx compress --expand` restores them.]"}]
    r = invoke(["compress", "--expand", "--archive", str(store)], jsonl_note)
    assert r.status == 3 and "names no span of this store" in r.stderr
    r = invoke(["compress", "--expand", "--archive", str(tmp_path / "missing.sqlite")], out)
    assert r.status == 5 and not (tmp_path / "missing.sqlite").exists()


def test_migrate_jsonl_archives(tmp_path):
    arch = tmp_path / "arch"
    doc = load_example("coding-session.json")
    r = invoke(["compress", *SMALL, "--archive", str(arch)], doc)
    out1 = json.loads(r.stdout)
    out2 = json.loads(invoke(["compress", *SMALL, "--archive", str(arch)], out1 + turns(1) + turns(2)).stdout)
    (arch / ("f" * 32 + ".jsonl")).write_text('{"role": "user", "content": "tampered"}\n')
    store = tmp_path / "m.sqlite"
    r = invoke(["recall", "--migrate", str(arch), "--archive", str(store)])
    assert r.status == 0, r.stderr
    assert json.loads(r.stdout)["imported"] == 2 and "f" * 32 + ".jsonl" in r.stderr
    again = json.loads(invoke(["recall", "--migrate", str(arch), "--archive", str(store)]).stdout)
    assert (again["imported"], again["already"]) == (0, 2)
    with Store.open(str(store)) as s:
        spans = s.spans()
        assert len(spans) == 2 and spans[1]["parent"] == spans[0]["span"]
        assert spans[0]["session"] == spans[1]["session"]
    # the JSON Lines notes now expand from the store
    back = invoke(["compress", "--expand", "--archive", str(store)], out2)
    assert back.status == 0 and json.loads(back.stdout) == out1 + turns(1) + turns(2)
    assert json.loads(invoke(["recall", "FooError1", "--archive", str(store)]).stdout)


def test_two_processes_compact_into_one_store(tmp_path):
    store = tmp_path / "shared.sqlite"
    base = load_example("coding-session.json")
    procs = []
    for i in range(2):
        doc = tmp_path / f"d{i}.json"
        doc.write_text(json.dumps(base[:1] + [{"role": "user", "content": f"process {i}"}] + base[1:]))
        procs.append(subprocess.Popen([sys.executable, "-m", "hermesctx", "compress", *SMALL, "--archive",
                                       str(store), str(doc)], stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    with Store.open(str(store)) as s:
        assert len(s.spans()) == 2 and len({sp["session"] for sp in s.spans()}) == 2
    for i, (stdout, _) in enumerate(outs):
        back, report = expand_store(json.loads(stdout), path=str(store))
        assert back[1] == {"role": "user", "content": f"process {i}"} and report["expanded"]


def test_the_newest_compaction_wins_wherever_its_summary_sits(tmp_path):
    """An older summary can stay in the protected tail after a newer one: expand and the next
    compaction's parent follow the store's order, not the place in the transcript."""
    store, inputs, out = three_rounds(tmp_path)
    with Store.open(str(store)) as s:
        spans = [sp["span"] for sp in s.spans()]
    line = "[The 9 messages before this compaction are archived as span {} in x.sqlite (compressed to {} messages); " \
           "`hermesctx compress --expand` restores them.]"
    with Store.open(str(store)) as s:
        newest = s.span(spans[2])
    doc = [{"role": "user", "content": line.format(spans[2], newest["compressed"])}] \
        + [{"role": "user", "content": f"filler {i}"} for i in range(newest["compressed"] - 2)] \
        + [{"role": "assistant", "content": line.format(spans[0], 1)}]
    back, report = expand_store(doc, path=str(store))
    assert report["span"] == spans[2] and back == inputs[2]
