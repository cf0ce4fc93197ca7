"""--archive / --expand: the compacted-away transcript on disk, named by content hash, written
atomically, noted in the summary; expand restores the original exactly."""

import copy
import hashlib
import json
import os

from conftest import FIXTURES, invoke, load_example

from hermesctx import jsonio
from hermesctx.archive import KEY, Archiver, expand
from hermesctx.stages.compress import compress
from hermesctx.summary.extractive import ExtractiveSummarizer
from hermesctx.summary.text import END_MARKER, is_summary_content


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
    data = b"".join(jsonio.dumps(m) for m in doc)
    path = tmp_path / "arch" / (hashlib.sha256(data).hexdigest()[:32] + ".jsonl")
    assert path.exists() and path.read_bytes() == data
    assert os.listdir(tmp_path / "arch") == [path.name]  # no temp files left behind
    summary = next(m for m in out if is_summary_content(m.get("content")))
    assert KEY not in summary and not any(k.startswith("_") for m in out for k in m)
    assert f"[The {len(doc)} messages before this compaction are archived in {path.name} " \
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


# --- hostile notes and planted files (issue 16, item 4) -----------------------------------
# A note is text anyone can write: --expand must read only DIR/<sha256>.jsonl, a regular file
# whose content hashes to its name, and say nothing about any other file.

def _note(path, messages=3, compressed=2):
    return [{"role": "user", "content": "hi"},
            {"role": "assistant", "content": f"[The {messages} messages before this compaction are archived in {path} "
                                        f"(compressed to {compressed} messages); "
                                        "`hermesctx compress --expand` restores them.]"},
            {"role": "user", "content": "ok"}]


def _expand(arch, doc):
    return invoke(["compress", "--expand", "--archive", str(arch)], doc)


def _archived(tmp_path):
    """A genuine archive in tmp_path/arch, and the compressed transcript naming it."""
    doc, out = _compressed(tmp_path)
    (name,) = os.listdir(tmp_path / "arch")
    return doc, out, tmp_path / "arch" / name


def test_expand_needs_the_archive_directory(tmp_path):
    doc, out, _ = _archived(tmp_path)
    r = invoke(["compress", "--expand"], out)
    assert r.status == 2 and "--archive PATH" in r.stderr and r.stdout == b""
    config = tmp_path / "h.yaml"
    config.write_text(f"archive:\n  dir: {tmp_path / 'arch'}\n")
    r = invoke(["compress", "--expand", "--config", str(config)], out)
    assert r.status == 0 and r.json == doc


def test_forged_note_pointing_outside_reads_nothing(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text('{"role": "user", "content": "TOP SECRET"}\n' * 3)
    (tmp_path / "arch").mkdir()
    for target in (secret, "/etc/passwd", "../secret.txt", "/proc/self/environ"):
        r = _expand(tmp_path / "arch", _note(target))
        assert r.status == 3, (target, r.stderr)
        assert "does not name an archive" in r.stderr and "TOP SECRET" not in r.stdout.decode() + r.stderr
        assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_forged_note_naming_an_archive_elsewhere_reads_only_the_archive_directory(tmp_path):
    doc, out, real = _archived(tmp_path)
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    os.replace(real, elsewhere / real.name)  # a valid archive, but outside the configured directory
    text = json.dumps(out).replace(str(tmp_path / "arch"), str(elsewhere))
    r = _expand(tmp_path / "arch", text)
    assert r.status == 5 and "cannot read archive" in r.stderr and r.stdout == b""
    # the same note with the file in the configured directory works: only the name counts
    os.replace(elsewhere / real.name, real)
    r = _expand(tmp_path / "arch", text)
    assert r.status == 0 and r.json == doc


def test_dev_zero_is_refused_at_once(tmp_path):
    arch = tmp_path / "arch"
    arch.mkdir()
    r = _expand(arch, _note("/dev/zero"))
    assert r.status == 3 and "does not name an archive" in r.stderr
    name = "0" * 32 + ".jsonl"
    os.symlink("/dev/zero", arch / name)
    r = _expand(arch, _note(arch / name))
    assert r.status == 5 and "symlink" in r.stderr


def test_a_fifo_is_refused_without_blocking(tmp_path):
    import subprocess
    import sys

    arch = tmp_path / "arch"
    arch.mkdir()
    name = "1" * 32 + ".jsonl"
    os.mkfifo(arch / name)
    proc = subprocess.run([sys.executable, "-m", "hermesctx", "compress", "--expand", "--archive", str(arch)],
                          input=json.dumps(_note(arch / name)).encode(), capture_output=True, timeout=60)
    assert proc.returncode == 5 and b"not a regular file" in proc.stderr and proc.stdout == b""


def test_a_symlink_to_a_genuine_archive_is_refused(tmp_path):
    doc, out, real = _archived(tmp_path)
    elsewhere = tmp_path / "elsewhere.jsonl"
    os.replace(real, elsewhere)
    os.symlink(elsewhere, real)
    r = _expand(tmp_path / "arch", out)
    assert r.status == 5 and "symlink" in r.stderr and r.stdout == b""


def test_a_tampered_archive_is_refused(tmp_path):
    doc, out, real = _archived(tmp_path)
    real.write_bytes(real.read_bytes().replace(b'"user"', b'"system"', 1))
    r = _expand(tmp_path / "arch", out)
    assert r.status == 5 and "does not match its name" in r.stderr and r.stdout == b""


def test_an_oversized_archive_is_refused_before_reading(tmp_path, monkeypatch):
    import hermesctx.archive as archive

    doc, out, real = _archived(tmp_path)
    monkeypatch.setattr(archive, "MAX_BYTES", real.stat().st_size - 1)
    r = _expand(tmp_path / "arch", out)
    assert r.status == 5 and "larger than" in r.stderr and r.stdout == b""


def test_count_mismatch_does_not_reveal_the_file(tmp_path):
    doc, out, real = _archived(tmp_path)
    text = json.dumps(out).replace(f"The {len(doc)} messages before", "The 999 messages before")
    r = _expand(tmp_path / "arch", text)
    assert r.status == 3 and r.stderr.strip().endswith(
        f"archive {real.name} does not hold the 999 messages its note says")
    assert f" {len(doc)} " not in r.stderr


def test_old_key_notes_still_expand_and_are_checked(tmp_path):
    doc, out, real = _archived(tmp_path)
    from hermesctx.archive import note_line

    old = copy.deepcopy(out)
    summary = next(m for m in old if is_summary_content(m.get("content")))
    note = {"path": str(real), "messages": len(doc), "compressed_messages": len(out)}
    summary["content"] = summary["content"].replace(note_line(note), "")
    summary[KEY] = note
    back, report = expand(old, directory=str(tmp_path / "arch"))
    assert back == doc and report["restored"] == len(doc)
    summary[KEY] = {"path": "/dev/zero", "messages": 3, "compressed_messages": 2}
    assert _expand(tmp_path / "arch", old).status == 3
    summary[KEY] = {"path": str(real), "messages": [1], "compressed_messages": {}}
    r = _expand(tmp_path / "arch", old)
    assert r.status == 3 and "Traceback" not in r.stderr


def test_archiving_replaces_a_planted_symlink(tmp_path):
    doc = load_example("coding-session.json")
    data = b"".join(jsonio.dumps(m) for m in doc)
    arch = tmp_path / "arch"
    arch.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    planted = arch / (hashlib.sha256(data).hexdigest()[:32] + ".jsonl")
    os.symlink(outside, planted)
    _, out = _compressed(tmp_path, doc)
    assert outside.read_text() == "keep me" and not planted.is_symlink() and planted.read_bytes() == data
    assert expand(out, directory=str(arch))[0] == doc


def test_expand_takes_the_newest_compaction_when_an_older_summary_stays_in_the_tail(tmp_path):
    """A transcript can keep an older summary in its tail after the newer one (a Codex log does):
    the newest compaction is the one whose archive holds the other's note, not the last note."""
    from hermesctx.archive import note_line

    arch = Archiver(str(tmp_path / "arch"))
    system = {"role": "system", "content": "be brief"}
    first = [system] + [{"role": r, "content": f"turn {i}"} for i, r in enumerate(["user", "assistant"] * 3)]
    older = {"role": "user", "content": "summary one\n" + note_line(arch(first, 3))}
    second = [system, older, {"role": "user", "content": "go on"}, {"role": "assistant", "content": "done"}]
    newer = {"role": "user", "content": "summary two\n" + note_line(arch(second, 5))}
    compressed = [system, newer, older, {"role": "user", "content": "go on"},
                  {"role": "assistant", "content": "done"}]
    later = [{"role": "user", "content": "and now?"}]
    back, report = expand(compressed + later, directory=str(tmp_path / "arch"))
    assert back == second + later and report["restored"] == len(second)
    again, _ = expand(back, directory=str(tmp_path / "arch"))
    assert again == first + second[3:] + later


def test_a_second_compaction_carries_one_note_and_both_expand(tmp_path):
    """The previous summary's note is not carried into the new summary (one note per summary, not
    one per round); the older archive stays reachable through the newer one."""
    doc, out = _compressed(tmp_path)
    grown = out + [{"role": "user", "content": f"now fix src/other{i}.py"} if i % 2 == 0 else
                   {"role": "assistant", "content": f"edited src/other{i}.py"} for i in range(12)]
    again, report = compress(grown, summarizer=ExtractiveSummarizer(), protect_last_n=4, tail_token_budget=200,
                             archive=Archiver(str(tmp_path / "arch")))
    assert report["compressed"] and report["previous_summary"]
    text = json.dumps(again)
    assert text.count("messages before this compaction are archived") == 1
    back, _ = expand(again, directory=str(tmp_path / "arch"))
    assert back == grown
    first, _ = expand(back, directory=str(tmp_path / "arch"))
    assert first[:len(doc)] == doc
