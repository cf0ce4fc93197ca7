"""The shared stream runner: in-place rewrites, reports, interrupts, located errors."""

import io as _io
import json
import os

import pytest
from conftest import invoke

from hermesctx.context import Env
from hermesctx.errors import FileIOError, InputError, UsageError
from hermesctx.transcripts import transform_stream


def make_env(stdin: bytes = b"") -> Env:
    return Env(stdin=_io.BytesIO(stdin), stdout=_io.BytesIO(), stderr=_io.StringIO())


def add_marker(doc):
    return [*doc, {"role": "user", "content": "marker"}], {"messages": len(doc) + 1}


def test_in_place_rewrites_atomically_with_backup(tmp_path):
    target = tmp_path / "t.json"
    original = b'[{"role":"assistant","content":"a"}]\n'
    target.write_bytes(original)
    env = make_env()
    transform_stream(env, str(target), add_marker, jsonl=None, pretty=False, report=None,
                     in_place=True, backup=True)
    assert json.loads(target.read_bytes())[-1]["content"] == "marker"
    assert (tmp_path / "t.json.bak").read_bytes() == original
    assert env.stdout.getvalue() == b""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.json", "t.json.bak"]


def test_in_place_leaves_original_untouched_on_error(tmp_path):
    target = tmp_path / "t.jsonl"
    original = b'[]\n[]\n{broken\n'
    target.write_bytes(original)
    with pytest.raises(InputError, match="line 3"):
        transform_stream(make_env(), str(target), add_marker, jsonl=None, pretty=False, report=None,
                         in_place=True)
    assert target.read_bytes() == original
    assert [p.name for p in tmp_path.iterdir()] == ["t.jsonl"]


def test_interrupt_leaves_no_partial_files(tmp_path):
    target = tmp_path / "t.jsonl"
    target.write_bytes(b"[]\n[]\n")
    report = tmp_path / "r.json"

    def interrupted(doc):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        transform_stream(make_env(), str(target), interrupted, jsonl=None, pretty=False,
                         report=str(report), in_place=True)
    assert [p.name for p in tmp_path.iterdir()] == ["t.jsonl"]


def test_in_place_needs_a_file():
    with pytest.raises(UsageError):
        transform_stream(make_env(b"[]"), "-", add_marker, jsonl=None, pretty=False, report=None,
                         in_place=True)


def test_report_file_for_a_batch(tmp_path):
    report = tmp_path / "r.jsonl"
    env = make_env(b"[]\n[]\n")
    n = transform_stream(env, "-", add_marker, jsonl=None, pretty=False, report=str(report),
                         describe=lambda r: f"{r['messages']} messages")
    assert n == 2
    assert [json.loads(x) for x in report.read_text().splitlines()] == [
        {"line": 1, "messages": 1}, {"line": 2, "messages": 1}]
    assert env.stderr.getvalue() == "line 1: 1 messages\nline 2: 1 messages\n"
    assert len(env.stdout.getvalue().splitlines()) == 2


def test_report_dir_missing_is_io_error(tmp_path):
    with pytest.raises(FileIOError):
        transform_stream(make_env(b"[]"), "-", add_marker, jsonl=None, pretty=False,
                         report=str(tmp_path / "nope" / "r.json"))


def test_report_dash_is_json_on_stderr_and_nothing_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    doc = b'[{"role": "user", "content": "hi"}]'
    r = invoke(["prune", "--report", "-"], doc)
    assert r.status == 0 and r.json == [{"role": "user", "content": "hi"}]
    report = json.loads(r.stderr)
    assert report["pruned"] == 0 and report["tokens_before"] == report["tokens_after"]
    assert os.listdir(tmp_path) == []


def test_a_warning_is_given_once_redacted_and_never_when_quiet():
    env = make_env()
    secret = "sk-ant-api03-" + "A1b2C3d4" * 6
    for _ in range(3):
        env.warn("line 1: an odd message")
    env.warn(f"the key {secret} was refused")
    env.warn(f"the key {secret} was refused")
    lines = env.stderr.getvalue().splitlines()
    assert lines[0] == "hermesctx: warning: line 1: an odd message"
    assert len(lines) == 2 and secret not in lines[1] and "was refused" in lines[1]
    quiet = make_env()
    quiet.quiet = True
    quiet.warn("anything")
    assert quiet.stderr.getvalue() == ""
