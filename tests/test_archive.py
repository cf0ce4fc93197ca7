"""--archive / --expand: the compacted-away transcript on disk, named by content hash, written
atomically, noted in the summary; expand restores the original exactly."""

import copy
import hashlib
import json
import os

from conftest import FIXTURES, invoke, load_example

from hermesctx import io
from hermesctx.archive import KEY, Archiver, expand
from hermesctx.stages.compress import compress
from hermesctx.summarizers.extractive import ExtractiveSummarizer
from hermesctx.summary_text import END_MARKER, is_summary_content


def _compressed(tmp_path, doc=None):
    doc = doc if doc is not None else load_example("coding-session.json")
    out, report = compress(doc, summarizer=ExtractiveSummarizer(), protect_last_n=6, tail_token_budget=400,
                           archive=Archiver(str(tmp_path / "arch")))
    assert report["compressed"]
    return doc, out


def test_round_trip_restores_exactly(tmp_path):
    doc, out = _compressed(tmp_path)
    snapshot = copy.deepcopy(doc)
    back, report = expand(out, directory=str(tmp_path / "arch"))
    assert back == snapshot and report["expanded"] and report["restored"] == len(doc)
    assert json.dumps(back, sort_keys=True) == json.dumps(snapshot, sort_keys=True)


def test_file_named_by_content_hash_and_noted(tmp_path):
    doc, out = _compressed(tmp_path)
    data = b"".join(io.dumps(m) for m in doc)
    path = tmp_path / "arch" / (hashlib.sha256(data).hexdigest()[:32] + ".jsonl")
    assert path.exists() and path.read_bytes() == data
    assert os.listdir(tmp_path / "arch") == [path.name]  # no temp files left behind
    summary = next(m for m in out if is_summary_content(m.get("content")))
    assert KEY not in summary and not any(k.startswith("_") for m in out for k in m)
    assert f"[The {len(doc)} messages before this compaction are archived in {path} " \
           f"(compressed to {len(out)} messages);" in summary["content"]
    assert summary["content"].endswith(END_MARKER)


def test_same_transcript_twice_is_one_file(tmp_path):
    _compressed(tmp_path)
    _compressed(tmp_path)
    assert len(os.listdir(tmp_path / "arch")) == 1


def test_messages_added_after_compression_are_kept(tmp_path):
    doc, out = _compressed(tmp_path)
    later = [{"role": "user", "content": "and now?"}, {"role": "assistant", "content": "done"}]
    back, report = expand(out + later, directory=str(tmp_path / "arch"))
    assert back == doc + later and report["kept_after"] == 2


def test_expand_without_archive_is_a_noop(tmp_path):
    doc = json.loads((FIXTURES / "compress" / "ops-session.json").read_text())
    back, report = expand(doc, directory=str(tmp_path))
    assert back is doc and report == {"expanded": False, "reason": "no archived compaction in this transcript"}


def test_cli_missing_archive_is_an_error(tmp_path):
    doc, out = _compressed(tmp_path)
    for name in os.listdir(tmp_path / "arch"):
        os.remove(tmp_path / "arch" / name)
    r = invoke(["compress", "--expand", "--archive", str(tmp_path / "arch")], out)
    assert r.status == 5 and "cannot read archive" in r.stderr and "Traceback" not in r.stderr


def test_cli_round_trip_jsonl_batch(tmp_path):
    doc = load_example("coding-session.json")
    batch = (json.dumps(doc) + "\n") * 2
    r = invoke(["compress", "--jsonl", "--protect-last-n", "6", "--tail-tokens", "400",
                "--archive", str(tmp_path / "a")], batch)
    assert r.status == 0, r.stderr
    assert all(len(x) < len(doc) for x in r.lines)
    back = invoke(["compress", "--expand", "--jsonl", "--archive", str(tmp_path / "a")], r.stdout)
    assert back.status == 0 and back.lines == [doc, doc]
