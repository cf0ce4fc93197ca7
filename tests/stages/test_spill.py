"""spill: Hermes's tool-result persistence (spec 40 §D, decision D10), and --restore."""

from __future__ import annotations

import copy
import json
import math
import os
import re

import pytest
from builders import call, text, tool, tool_result, tool_use
from conftest import EXAMPLES, invoke

from hermesctx.errors import FileIOError
from hermesctx.stages.spill import (
    Budget,
    Writer,
    budget_for_window,
    persisted_block,
    preview,
    restore,
    safe_filename,
    spill,
    spill_messages,
)


def _names(directory) -> list:
    """The files of a directory, without the spill index (``.index``, also its lock)."""
    return [name for name in os.listdir(directory) if name != ".index"]

def _tool(cid, content, **extra):
    """A tool message; with no ``tool_call_id`` at all for ``_MISSING``."""
    if cid is _MISSING:
        return {"role": "tool", "content": content, **extra}
    return {**tool(cid, content), **extra}


_MISSING = object()


def _turn(*results, names=None):
    """An assistant turn calling one tool per result, then the results."""
    names = names or ["terminal"] * len(results)
    calls = [call(cid, name) for (cid, _), name in zip(results, names) if cid is not _MISSING]
    return ([{"role": "assistant", "content": None, "tool_calls": calls}]
            + [_tool(cid, content) for cid, content in results])


def _doc(*results, names=None):
    return {"messages": [{"role": "user", "content": "go"}, *_turn(*results, names=names),
                         {"role": "assistant", "content": "done"}]}


def _tools(doc):
    return [m for m in doc["messages"] if m["role"] == "tool"]


# --- budgets, names, preview, block: the spec's tables --------------------------------------

@pytest.mark.parametrize("window,per_result,turn", [
    (None, 100000, 200000), (0, 100000, 200000), (1000, 8000, 16000), (8000, 8000, 16000),
    (8192, 8000, 16000), (16000, 9600, 19200), (32000, 19200, 38400), (32768, 19660, 39321),
    (65536, 39321, 78643), (128000, 76800, 153600), (131072, 78643, 157286),
    (166666, 99999, 199999), (166667, 100000, 200000), (200000, 100000, 200000),
    (1000000, 100000, 200000)])
def test_budget_for_window(window, per_result, turn):
    budget = budget_for_window(window)
    assert (budget.default_result_size, budget.turn_budget, budget.preview_size) == (per_result, turn, 1500)


def test_thresholds_read_file_pinned_and_overrides():
    budget = Budget(tool_overrides={"terminal": 10, "read_file": 5})
    assert budget.threshold("read_file") == math.inf  # the pin beats an override
    assert budget.threshold("terminal") == 10
    assert budget.threshold("web_extract") == 100_000
    assert budget.threshold(None) == 100_000


@pytest.mark.parametrize("tool_id,name", [
    ("call_abc123", "call_abc123.txt"), ("call.1", "call.1.txt"),
    ("call_abc/def", "call_abc_def_5a91336115b4.txt"), ("../../etc/passwd", "etc_passwd_3754d6cb3a38.txt"),
    ("a" * 300, "a" * 120 + "_9835fa6bf4e2.txt"), ("x" * 120, "x" * 120 + ".txt"),
    ("x" * 121, "x" * 120 + "_79072a47bfaa.txt"), ("日本語", "tool_result_77710aedc74e.txt"),
    ("call_日本", "call_040e29d6b7bf.txt"), ("é", "tool_result_4a99557e4033.txt"),
    ("a b  c", "a_b_c_67f6081a4848.txt"), (".hidden", "hidden_1692419006a8.txt"),
    ("call-1-", "call-1_3dd218ed1c5f.txt"), ("...", "tool_result_ab5df625bc76.txt"),
    ("", "tool_result.txt"), (None, "tool_result.txt"), (12345, "12345.txt")])
def test_safe_filename_table(tool_id, name):
    assert safe_filename(tool_id) == name


@pytest.mark.parametrize("hostile", ["../../etc/passwd", "/etc/passwd", "..", ".", "a/../../b", "a\x00b",
                                     "\\..\\x", "~/.ssh/id", "x" * 5000, "/" * 300, "\n", "C:\\win"])
def test_hostile_ids_stay_in_the_directory(tmp_path, hostile):
    name = safe_filename(hostile)
    assert "/" not in name and "\x00" not in name and not name.startswith(".")
    assert len(name) <= 120 + 13 + 4
    writer = Writer(str(tmp_path / "spill"))
    path, _ = writer.write(hostile, "data")
    assert os.path.dirname(path) == str(tmp_path / "spill")
    assert _names(tmp_path) == ["spill"]


@pytest.mark.parametrize("content,size,expected", [
    ("short", 10, ("short", False)), ("abcdefghij", 10, ("abcdefghij", False)),
    ("line1\nline2\nline3\n", 12, ("line1\nline2\n", True)), ("abcde\nfghijklmnop", 10, ("abcde\nfghi", True)),
    ("abcdef\nghijklmnop", 10, ("abcdef\n", True)), ("abcdefghi\nXYZ", 10, ("abcdefghi\n", True)),
    ("ab\ncdefghijk", 5, ("ab\ncd", True)), ("abc", 0, ("", True))])
def test_preview_table(content, size, expected):
    assert preview(content, size) == expected


@pytest.mark.parametrize("n,size", [(0, "0.0 KB"), (1023, "1.0 KB"), (1536, "1.5 KB"), (150000, "146.5 KB"),
                                    (1048575, "1024.0 KB"), (1048576, "1.0 MB"), (1572864, "1.5 MB")])
def test_size_strings(n, size):
    block = persisted_block("x" * n, "/d/f.txt")
    assert block.splitlines()[1] == f"This tool result was too large ({n:,} characters, {size})."


S1 = "".join(f"line {i:03d} xxxxxxxxxx\n" for i in range(12))


def test_s1_block_exact(tmp_path):
    assert len(S1) == 240
    directory = str(tmp_path / "hermes-results")
    budget = Budget(default_result_size=100, turn_budget=250, preview_size=40)
    out, report = spill_messages([_tool("call_abc/def", S1)], Writer(directory), budget)
    path = f"{directory}/call_abc_def_5a91336115b4.txt"
    assert out[0]["content"] == (
        "<persisted-output>\n"
        "This tool result was too large (240 characters, 0.2 KB).\n"
        f"Full output saved to: {path}\n"
        "Use the read_file tool with offset and limit to access specific sections of this output.\n"
        "\n"
        "Preview (first 40 chars):\n"
        "line 000 xxxxxxxxxx\nline 001 xxxxxxxxxx\n\n...\n"
        "</persisted-output>")
    with open(path, "rb") as handle:
        assert handle.read() == S1.encode()
    assert report["spilled"] == 1 and report["files"] == [path]


def test_s2_strictly_greater_and_code_points(tmp_path):
    budget = Budget(default_result_size=100, turn_budget=10**9, preview_size=40)
    msgs = [_tool("a", "z" * 100), _tool("b", "z" * 101), _tool("c", "é" * 100)]
    out, _ = spill_messages(msgs, Writer(str(tmp_path)), budget)
    assert out[0]["content"] == "z" * 100
    assert out[1]["content"].startswith("<persisted-output>\n")
    assert out[2]["content"] == "é" * 100
    assert sorted(_names(tmp_path)) == ["b.txt"]


def test_s3_read_file_exempt_per_result_s4_length(tmp_path):
    content = "".join(f"row {i:04d}: " + "v" * 60 + "\n" for i in range(2000))
    assert len(content) == 142_000
    doc = _doc(("call_rf", "r" * 150_000), ("toolu_01XyZ", content), names=["read_file", "terminal"])
    out, report = spill(doc, directory=str(tmp_path))
    results = _tools(out)
    assert results[0]["content"] == "r" * 150_000  # read_file: never by size alone
    block = results[1]["content"]
    assert "Preview (first 1491 chars):\nrow 0000: vvvv" in block
    assert block.endswith("vvvv\n\n...\n</persisted-output>")
    assert len(block) - len(str(tmp_path)) == 1784 - len("/tmp/spill-demo/hermes-results")
    assert report["by_turn_budget"] == 0


def _lines(n, width=80):
    line = "y" * (width - 1) + "\n"
    return (line * (n // width + 1))[:n]


def test_b1_largest_first_only_until_under(tmp_path):
    doc = _doc(("call_1", _lines(90_000)), ("call_2", _lines(80_000)), ("call_3", _lines(50_000)))
    out, report = spill(doc, directory=str(tmp_path))
    first, second, third = (m["content"] for m in _tools(out))
    assert "Preview (first 1440 chars):" in first
    assert len(first) - len(str(tmp_path)) == 1726 - len("/tmp/spill-demo/hermes-results")
    assert second == _lines(80_000) and third == _lines(50_000)
    assert report["spilled"] == report["by_turn_budget"] == 1
    assert _names(tmp_path) == ["call_1.txt"]


def test_b2_exactly_at_budget_untouched(tmp_path):
    doc = _doc(("a", "q" * 100_000), ("b", "q" * 100_000))
    out, report = spill(doc, directory=str(tmp_path))
    assert out == doc and report["spilled"] == 0 and _names(tmp_path) == []


def test_b3_runs_out_of_candidates_over_budget(tmp_path):
    budget = Budget(default_result_size=100, turn_budget=200, preview_size=40)
    msgs = [_tool("call_1", "a" * 120), _tool("call_2", "b" * 90), _tool("call_3", "c" * 60)]
    out, report = spill_messages(msgs, Writer(str(tmp_path)), budget)
    hermes_dir = len("/tmp/spill-demo/hermes-results")
    assert [len(m["content"]) - len(str(tmp_path)) + hermes_dir for m in out] == [320, 319, 319]
    assert report["spilled"] == 3 and report["by_turn_budget"] == 2


def test_b4_skip_persisted_tie_order_budget_name(tmp_path):
    persisted = persisted_block("p" * 10, "/x/p.txt") + "p" * 150_000
    msgs = [_tool("call_p", persisted), _tool(_MISSING, "n" * 30_000), _tool("call_x", "x" * 30_000)]
    # the per-result layer would persist call_p again (S6); B4 is about the turn layer alone
    out, report = spill_messages(msgs, Writer(str(tmp_path)), Budget(default_result_size=10**9))
    assert out[0]["content"] == persisted
    assert f"Full output saved to: {tmp_path}/budget_1.txt" in out[1]["content"]
    assert out[2]["content"] == "x" * 30_000
    assert report["by_turn_budget"] == 1


def test_b6_none_id_and_b8_read_file_by_turn_budget(tmp_path):
    out, _ = spill_messages([_tool(None, "w" * 250_000)], Writer(str(tmp_path)), Budget())
    assert f"{tmp_path}/tool_result.txt" in out[0]["content"]
    doc = _doc(("call_rf", "r" * 250_000), names=["read_file"])
    out, report = spill(doc, directory=str(tmp_path))
    assert f"Full output saved to: {tmp_path}/call_rf.txt" in _tools(out)[0]["content"]
    assert report["by_turn_budget"] == 1


def test_b7_scaled_budget(tmp_path):
    budget = budget_for_window(32000)
    msgs = [_tool("a", _lines(15_000)), _tool("b", _lines(15_000)), _tool("c", _lines(12_000))]
    out, _ = spill_messages(msgs, Writer(str(tmp_path)), budget)
    assert out[0]["content"].startswith("<persisted-output>")
    assert [m["content"] for m in out[1:]] == [_lines(15_000), _lines(12_000)]


def test_turns_are_separate(tmp_path):
    doc = {"messages": [*_turn(("a", "a" * 120_000)), *_turn(("b", "b" * 90_000), ("c", "c" * 90_000))]}
    out, report = spill(doc, directory=str(tmp_path))
    assert report["spilled"] == 1  # a by size; b + c = 180,000 is under the turn budget
    assert [m["content"][:1] for m in _tools(out)] == ["<", "b", "c"]


def test_input_not_mutated_and_untouched_messages_shared(tmp_path):
    doc = _doc(("a", "a" * 120_000), ("b", "small"))
    before = copy.deepcopy(doc)
    out, _ = spill(doc, directory=str(tmp_path))
    assert doc == before
    assert out["messages"][0] is doc["messages"][0]  # copy-on-write
    assert out["messages"][3] is doc["messages"][3]


# --- files: atomic, no duplicates, no clobbering, failures ----------------------------------

def test_same_content_twice_one_file(tmp_path):
    doc = _doc(("call_1", "a" * 120_000))
    first, _ = spill(doc, directory=str(tmp_path))
    second, _ = spill(doc, directory=str(tmp_path))
    assert first == second
    assert _names(tmp_path) == ["call_1.txt"]


def test_same_name_other_content_takes_the_file_old_content_kept(tmp_path):
    """Hermes's file names even when two results share one (D10); the earlier content moves to
    .replaced/ so both blocks still restore."""
    first, rep1 = spill(_doc(("call_1", "a" * 120_000)), directory=str(tmp_path))
    second, rep2 = spill(_doc(("call_1", "b" * 120_001)), directory=str(tmp_path))
    path = f"{tmp_path}/call_1.txt"
    assert f"Full output saved to: {path}\n" in first["messages"][2]["content"]
    assert f"Full output saved to: {path}\n" in second["messages"][2]["content"]
    assert rep1["replaced"] == [] and rep2["replaced"] == [path]
    assert sorted(_names(tmp_path)) == [".replaced", "call_1.txt"]
    assert (tmp_path / "call_1.txt").read_text() == "b" * 120_001
    assert [p.read_text() for p in (tmp_path / ".replaced").iterdir()] == ["a" * 120_000]
    assert restore(first, directory=str(tmp_path))[0] == _doc(("call_1", "a" * 120_000))
    assert restore(second, directory=str(tmp_path))[0] == _doc(("call_1", "b" * 120_001))


def test_ids_sharing_a_name_in_one_transcript(tmp_path):
    """None, "" and a missing id all give tool_result.txt in Hermes; the last result keeps it."""
    doc = _doc((None, "x" * 100_001), ("", "y" * 100_002), ("tool_result", "z" * 100_003))
    result = invoke(["spill", "--dir", str(tmp_path)], doc)
    assert result.status == 0
    # on the wire, a result without an id answers no call: Hermes's send path drops it (D12); the
    # result of the call with id "" stays (Hermes drops it too, leaving that call unanswered: a
    # request the API rejects, so the rule wins)
    assert [m.get("tool_call_id") for m in _tools(result.json)] == ["", "tool_result"]
    staged, _ = spill(doc, directory=str(tmp_path / "stage"))
    paths = [re.search(r"saved to: (.*)", m["content"]).group(1) for m in _tools(staged)]
    assert paths == [f"{tmp_path}/stage/tool_result.txt"] * 3
    assert (tmp_path / "tool_result.txt").read_text() == "z" * 100_003
    assert sorted(p.read_text()[0] for p in (tmp_path / ".replaced").iterdir()) == ["x", "y"]
    assert result.stderr.count("warning: replaced") == 1  # the same path twice: one warning
    assert "replaced 2 files of the same name" in result.stderr
    back = invoke(["spill", "--restore", "--dir", str(tmp_path)], result.stdout)
    assert back.json == doc  # the original: what the send path dropped was kept (issue 31)
    assert "the send path changed it (stray tool results dropped: 1)" in result.stderr


def test_file_mode_and_no_temp_left(tmp_path):
    spill(_doc(("call_1", "a" * 120_000)), directory=str(tmp_path / "new" / "dir"))
    assert _names(tmp_path / "new" / "dir") == ["call_1.txt"]
    assert os.stat(tmp_path / "new" / "dir" / "call_1.txt").st_mode & 0o777 == 0o600


def test_write_failure_is_an_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(FileIOError):
        spill(_doc(("call_1", "a" * 120_000)), directory=str(blocker / "sub"))


def test_cli_write_failure_exit_5_nothing_emitted(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = invoke(["spill", "--dir", str(blocker / "sub")], _doc(("call_1", "a" * 120_000)))
    assert result.status == 5
    assert result.stdout == b""
    assert "cannot write spill file" in result.stderr and "Traceback" not in result.stderr


def test_dry_run_writes_nothing(tmp_path):
    doc = _doc(("call_1", "a" * 120_000))
    result = invoke(["spill", "--dry-run", "--dir", str(tmp_path / "s")], doc)
    assert result.status == 0
    assert result.json == doc
    assert not (tmp_path / "s").exists()
    assert f"would write {tmp_path}/s/call_1.txt" in result.stderr


# --- Anthropic ------------------------------------------------------------------------------

def _anthropic(*results, names=None):
    names = names or ["bash"] * len(results)
    return {"model": "claude-sonnet-4-5", "messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [tool_use(cid, name) for (cid, _), name in zip(results, names)]},
        {"role": "user", "content": [tool_result(cid, content) for cid, content in results] + [text("next")]},
    ]}


def test_anthropic_blocks(tmp_path):
    doc = _anthropic(("toolu_1", "a" * 120_000), ("toolu_2", "small"), ("toolu_rf", "r" * 150_000),
                     names=["bash", "bash", "read_file"])
    before = copy.deepcopy(doc)
    out, report = spill(doc, directory=str(tmp_path))
    assert doc == before
    blocks = out["messages"][2]["content"]
    assert blocks[0]["content"].startswith("<persisted-output>\nThis tool result was too large (120,000")
    assert blocks[1]["content"] == "small"
    assert blocks[2]["content"] == "r" * 150_000  # read_file pinned; turn total 121,7xx + 150,005 > 200,000?
    assert blocks[3] == {"type": "text", "text": "next"}
    assert report["spilled"] >= 1
    assert restore(out, directory=str(tmp_path))[0] == doc


def test_anthropic_turn_budget(tmp_path):
    doc = _anthropic(("toolu_1", "a" * 90_000), ("toolu_2", "b" * 90_000), ("toolu_3", "c" * 30_000))
    out, report = spill(doc, directory=str(tmp_path))
    assert report["by_turn_budget"] == 1
    assert [b["content"][:1] for b in out["messages"][2]["content"][:3]] == ["<", "b", "c"]


# --- restore --------------------------------------------------------------------------------

def test_round_trip_json_byte_for_byte(tmp_path):
    source = tmp_path / "in.json"
    doc = _doc(("call_1", _lines(150_000)), ("../../etc/passwd", "é" * 101_000), ("call_3", "tiny"))
    source.write_bytes(json.dumps(doc, ensure_ascii=False).encode())
    spill_dir = str(tmp_path / "spill")
    spilled = invoke(["spill", "--dir", spill_dir, str(source)])
    assert spilled.status == 0 and len(spilled.stdout) < 10_000
    back = invoke(["spill", "--restore", "--dir", spill_dir], spilled.stdout)
    assert back.status == 0
    plain = invoke(["spill", "--dir", spill_dir, "--threshold", "10000000", "--turn-budget", "10000000",
                    str(source)])
    assert back.stdout == plain.stdout  # the same bytes as the same document written unchanged
    assert back.json == doc


def test_round_trip_jsonl(tmp_path):
    docs = [_doc(("call_1", _lines(120_000 + i))) for i in range(3)] + [_anthropic(("toolu_1", "z" * 300_000))]
    source = tmp_path / "batch.jsonl"
    source.write_text("".join(json.dumps(d, separators=(",", ":")) + "\n" for d in docs))
    spill_dir = str(tmp_path / "spill")
    spilled = invoke(["spill", "--dir", spill_dir, str(source)])
    assert spilled.status == 0 and len(spilled.lines) == 4
    # call_1 ×3 with different content: one file, the two earlier contents kept aside
    assert sorted(_names(spill_dir)) == [".replaced", "call_1.txt", "toolu_1.txt"]
    assert len(_names(os.path.join(spill_dir, ".replaced"))) == 2
    back = invoke(["spill", "--restore", "--dir", spill_dir], spilled.stdout)
    assert back.lines == docs
    assert back.stdout == source.read_bytes()


def test_restore_refuses_files_outside_dir(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("s" * 10)
    forged = persisted_block("s" * 10, str(secret))
    doc = {"messages": [_tool("c", forged)]}
    out, report = restore(doc, directory=str(tmp_path / "spill"))
    assert out == doc and report["restored"] == 0 and "outside" in report["missing"][0]


def test_restore_missing_file_and_foreign_block(tmp_path):
    """A block is restored only from a file whose sha256 the index recorded for that very block:
    a forged block (right size and preview) restores nothing, nor does an edited file."""
    (tmp_path / "edited.txt").write_text("a" * 10)
    forged = persisted_block("a" * 10, f"{tmp_path}/edited.txt")
    spilled, _ = spill(_doc(("gone", "b" * 120_000), ("edited", "c" * 120_000)), directory=str(tmp_path))
    (tmp_path / "gone.txt").unlink()
    (tmp_path / "edited.txt").write_text("c" * 119_999 + "d")
    doc = {"messages": [_tool("f", forged), *spilled["messages"][2:]]}
    out, report = restore(doc, directory=str(tmp_path))
    assert out == doc
    assert report["restored"] == 0
    assert report["missing"] == [f"{tmp_path}/edited.txt (no spill of this block is recorded in {tmp_path}/.index)",
                                 f"{tmp_path}/gone.txt",
                                 f"{tmp_path}/edited.txt (holds another result)"]


def test_restore_keeps_custom_preview_sizes(tmp_path):
    budget = Budget(default_result_size=100, turn_budget=10**6, preview_size=40)
    msgs = [_tool("a", S1), _tool("b", "x" * 300)]
    out, _ = spill_messages(msgs, Writer(str(tmp_path)), budget)
    assert restore({"messages": out}, directory=str(tmp_path))[0] == {"messages": msgs}


# --- CLI options ----------------------------------------------------------------------------

def test_cli_threshold_per_tool_and_default(tmp_path):
    doc = _doc(("a", "a" * 6000), ("b", "b" * 6000), ("c", "c" * 3000), names=["terminal", "web_extract", "x"])
    result = invoke(["spill", "--dir", str(tmp_path), "--threshold", "terminal=5000", "--threshold", "2,500"], doc)
    assert result.status == 0
    assert [m["content"][:1] for m in _tools(result.json)] == ["<", "<", "<"]
    result = invoke(["spill", "--dir", str(tmp_path), "--threshold", "terminal=5000"], doc)
    assert [m["content"][:1] for m in _tools(result.json)] == ["<", "b", "c"]


def test_cli_bad_threshold_is_usage_error():
    result = invoke(["spill", "--threshold", "terminal=lots"], _doc(("a", "x")))
    assert result.status == 2 and "--threshold" in result.stderr


def test_cli_config_keys(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text(f"spill:\n  dir: {tmp_path}/cfg\n  default_threshold: 1000\n"
                      f"  turn_budget: 5000\n  thresholds:\n    web_extract: 10\n")
    doc = _doc(("a", "a" * 1001), ("b", "b" * 11), ("c", "c" * 999), names=["terminal", "web_extract", "x"])
    result = invoke(["spill", "--config", str(config)], doc)
    assert result.status == 0
    assert [m["content"][:1] for m in _tools(result.json)] == ["<", "<", "c"]
    assert sorted(_names(tmp_path / "cfg")) == ["a.txt", "b.txt"]


def test_cli_model_scales_the_budget(tmp_path):
    doc = _doc(("a", "a" * 20_000), ("b", "b" * 7_000))
    unscaled = invoke(["spill", "--dir", str(tmp_path)], doc)
    assert unscaled.json == doc
    scaled = invoke(["spill", "--dir", str(tmp_path), "--context-length", "32000"], doc)
    assert [m["content"][:1] for m in _tools(scaled.json)] == ["<", "b"]  # 19,200 per result
    small = invoke(["spill", "--dir", str(tmp_path), "--context-length", "8000"], doc)
    assert [m["content"][:1] for m in _tools(small.json)] == ["<", "b"]  # 8,000 / 16,000: 1,7xx + 7,000


def test_cli_report_file_and_quiet(tmp_path):
    report = tmp_path / "r.json"
    result = invoke(["--quiet", "spill", "--dir", str(tmp_path / "s"), "--report", str(report)],
                    _doc(("a", "a" * 120_000)))
    assert result.status == 0 and result.stderr == ""
    data = json.loads(report.read_text())
    assert data["spilled"] == 1 and data["files"] == [f"{tmp_path}/s/a.txt"]


def test_cli_in_place(tmp_path):
    source = tmp_path / "t.json"
    source.write_text(json.dumps(_doc(("a", "a" * 120_000))))
    result = invoke(["spill", "--dir", str(tmp_path / "s"), "--in-place", str(source)])
    assert result.status == 0 and result.stdout == b""
    assert _tools(json.loads(source.read_text()))[0]["content"].startswith("<persisted-output>")


# --- snapshots on the examples --------------------------------------------------------------

@pytest.mark.parametrize("name", ["coding-session.json", "anthropic-session.json", "batch.jsonl"])
def test_examples_snapshot(tmp_path, name, snapshot):
    result = invoke(["spill", "--dir", str(tmp_path / "spill"), "--threshold", "1000", "--turn-budget", "3000",
                     str(EXAMPLES / name)])
    assert result.status == 0
    text = result.stdout.decode().replace(str(tmp_path), "<TMP>")
    assert text == snapshot
    assert sorted(_names(tmp_path / "spill")) == snapshot(name="files")
    back = invoke(["spill", "--restore", "--dir", str(tmp_path / "spill")], result.stdout)
    original = invoke(["spill", "--dir", str(tmp_path / "none"), "--threshold", "10000000", str(EXAMPLES / name)])
    assert back.stdout == original.stdout


def test_anthropic_single_text_block_content(tmp_path):
    doc = _anthropic(("toolu_1", [{"type": "text", "text": "t" * 120_000}]),
                     ("toolu_2", [{"type": "text", "text": "a" * 120_000}, {"type": "text", "text": "b"}]),
                     ("toolu_3", [{"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                               "data": "A" * 120_000}}]))
    out, report = spill(doc, directory=str(tmp_path))
    blocks = out["messages"][2]["content"]
    assert blocks[0]["content"][0]["type"] == "text"
    assert blocks[0]["content"][0]["text"].startswith("<persisted-output>\nThis tool result was too large (120,000")
    assert blocks[1] == doc["messages"][2]["content"][1]  # several parts: left alone
    assert blocks[2] == doc["messages"][2]["content"][2]  # an image: never spilled
    assert report["spilled"] == 1 and _names(tmp_path) == ["toolu_1.txt"]
    assert restore(out, directory=str(tmp_path))[0] == doc


def test_non_string_openai_content_is_left_alone(tmp_path):
    msgs = [{"role": "tool", "tool_call_id": "a", "content": [{"type": "text", "text": "x" * 300_000}]},
            {"role": "tool", "tool_call_id": "b", "content": None}, {"role": "tool", "tool_call_id": "c"}]
    out, report = spill_messages(msgs, Writer(str(tmp_path)), Budget())
    assert out == msgs and report["spilled"] == 0


def test_array_document_and_no_change_shares_messages(tmp_path):
    msgs = _doc(("a", "small"))["messages"]
    out, report = spill(msgs, directory=str(tmp_path))
    assert out == msgs and isinstance(out, list)
    assert all(x is y for x, y in zip(out, msgs))
    assert report["spilled"] == 0 and not _names(tmp_path)


def test_cli_read_file_threshold_warns_and_is_ignored(tmp_path):
    doc = _doc(("rf", "r" * 6000), names=["read_file"])
    result = invoke(["spill", "--dir", str(tmp_path), "--threshold", "read_file=10"], doc)
    assert result.status == 0 and result.json == doc
    assert "read_file threshold is ignored" in result.stderr


try:
    from hypothesis import assume, given
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover
    given = None

if given is not None:
    _ids = st.one_of(st.none(), st.sampled_from(["call_1", "call_1", "../x", "", "日本", "a/b", "x" * 130]))
    _texts = st.text(alphabet=st.sampled_from("ab\n é'\"\\\t"), max_size=400)

    @given(turns=st.lists(st.lists(st.tuples(_ids, _texts), min_size=1, max_size=4), max_size=4),
           per_result=st.integers(0, 300), turn=st.integers(1, 600), preview_size=st.integers(0, 60))
    def test_round_trip_property(tmp_path_factory, turns, per_result, turn, preview_size):
        directory = str(tmp_path_factory.mktemp("spill"))
        messages = [{"role": "user", "content": "go"}]
        for results in turns:
            messages += _turn(*results)
        before = copy.deepcopy(messages)
        # a block names its file, size and preview: results sharing a file name are told apart
        # by those only (a tiny preview of equal-length texts is ambiguous)
        keys = [(safe_filename(cid), len(text)) for results in turns for cid, text in results]
        assume(len(keys) == len(set(keys)))
        budget = Budget(default_result_size=per_result, turn_budget=turn, preview_size=preview_size)
        out, report = spill_messages(messages, Writer(directory), budget)
        assert messages == before
        files = [f for _, _, names in os.walk(directory) for f in names if f != ".index"]
        assert len(files) <= report["spilled"]
        back, rep = restore({"messages": out}, directory=directory)
        assert back == {"messages": messages}
        assert rep["restored"] == report["spilled"] and rep["missing"] == []


def test_report_lines(tmp_path):
    result = invoke(["spill", "--dir", str(tmp_path)], _doc(("a", "a" * 120_000), ("b", "b")))
    assert result.stderr == f"line 1: spilled 1 tool result (0 by the turn budget) to {tmp_path}; 120,001 -> "\
        f"{len(result.json['messages'][2]['content']) + 1:,} chars\n"
    back = invoke(["spill", "--restore", "--dir", str(tmp_path / "other")], result.stdout)
    assert back.stderr == "line 1: restored 0 tool results, 1 file missing, outside the directory or replaced\n"


def test_tool_name_found_through_a_number_id(tmp_path):
    """The call's name decides the threshold whatever the id's type (here read_file: pinned)."""
    msgs = [{"role": "assistant", "content": None,
             "tool_calls": [{"id": 7, "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": 7, "content": "r" * 150}]
    out, report = spill_messages(msgs, Writer(str(tmp_path)), Budget(default_result_size=100, turn_budget=10**6))
    assert out == msgs and report["spilled"] == 0


def test_list_content_counts_its_items_toward_the_turn_total(tmp_path):
    """Hermes measures any content with len(): two parts push a 999-char turn over 1,000."""
    msgs = [_tool("a", "x" * 999), _tool("b", [{"type": "text", "text": "p"}, {"type": "text", "text": "q"}])]
    out, report = spill_messages(msgs, Writer(str(tmp_path)), Budget(default_result_size=10**6, turn_budget=1000))
    assert report["by_turn_budget"] == 1
    assert out[0]["content"].startswith("<persisted-output>") and out[1] is msgs[1]
    out, report = spill_messages(msgs[:1], Writer(str(tmp_path)), Budget(default_result_size=10**6, turn_budget=1000))
    assert report["spilled"] == 0
