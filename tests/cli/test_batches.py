"""Batches: several FILE arguments in one process, --keep-going / --skip-bad."""

import json
import os

import pytest
from conftest import EXAMPLES, FIXTURES, invoke

BAD = b'[{"role":"user","content":"x"}]\n{bad\n[{"role":"user","content":"y"}]\n{"nope": 1}\n'


@pytest.mark.parametrize("command", [["prune"], ["sanitize"], ["cache-mark"], ["compress", "--if-needed"],
                                     ["estimate", "--method", "rough"], ["validate"], ["convert", "--model", "gpt-4o"],
                                     ["run", "--pipeline", "prune,sanitize"]])
def test_several_files_equal_the_files_one_by_one(command):
    files = [str(EXAMPLES / "coding-session.json"), str(EXAMPLES / "batch.jsonl")]
    together = invoke(["-q", *command, *files])
    apart = [invoke(["-q", *command, f]) for f in files]
    assert together.status == 0 and all(r.status == 0 for r in apart), together.stderr
    if command[0] == "estimate":  # its reports name their file when there are several: the rest is equal
        reports = [json.loads(line) for line in together.stdout.splitlines()]
        assert [r.pop("file") for r in reports] == [files[0]] + [files[1]] * (len(reports) - 1)
        assert [r.pop("line", None) for r in reports] == [None, *range(1, len(reports))]
        assert reports == [json.loads(line) for r in apart for line in r.stdout.splitlines()]
        return
    assert together.stdout == b"".join(r.stdout for r in apart)


def test_an_error_in_the_second_file_names_it(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(BAD)
    r = invoke(["-q", "prune", str(EXAMPLES / "coding-session.json"), str(bad)])
    assert r.status == 3 and f"{bad}: line 2: not JSON" in r.stderr
    assert len(r.stdout.splitlines()) == 2  # the first file and the good first line


def test_several_files_in_place_each_rewritten(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.jsonl"
    a.write_bytes((EXAMPLES / "coding-session.json").read_bytes())
    b.write_bytes((EXAMPLES / "batch.jsonl").read_bytes())
    r = invoke(["-q", "cache-mark", "--in-place", str(a), str(b)])
    assert r.status == 0, r.stderr
    assert b"cache_control" in a.read_bytes() and all(b"cache_control" in line for line in b.read_bytes().splitlines())


@pytest.mark.parametrize("flag,kept", [("--keep-going", True), ("--skip-bad", False)])
def test_keep_going_reports_bad_lines_and_goes_on(tmp_path, flag, kept):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(BAD)
    r = invoke(["prune", flag, str(bad)])
    assert r.status == 3
    assert "line 2: not JSON" in r.stderr and "line 4: " in r.stderr and "not a transcript" in r.stderr
    lines = r.stdout.splitlines()
    if kept:
        assert lines[1] == b"{bad" and lines[3] == b'{"nope": 1}' and len(lines) == 4
    else:
        assert len(lines) == 2
    assert json.loads(lines[0]) == [{"role": "user", "content": "x"}]


@pytest.mark.parametrize("command", [["prune"], ["sanitize", "--stub"], ["cache-mark"], ["compress", "--if-needed"],
                                     ["spill", "--result-threshold", "1000"]])
def test_keep_going_on_good_input_changes_nothing(tmp_path, command):
    raw = (EXAMPLES / "batch.jsonl").read_bytes()
    extra = ["--dir", str(tmp_path / "s")] if command[0] == "spill" else []
    plain = invoke(["-q", *command, *extra], raw)
    going = invoke(["-q", *command, *extra, "--keep-going"], raw)
    assert plain.status == going.status == 0, going.stderr
    assert plain.stdout == going.stdout


def _tty_run(args, tmp_path):
    import io

    from hermesctx.cli import run
    from hermesctx.context import Env

    out, err = io.BytesIO(), io.StringIO()
    status = run(args, Env(io.BytesIO(), out, err, environ={}, stderr_isatty=True))
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("command", [["prune"], ["estimate", "--method", "rough"], ["run", "--pipeline", "prune"]])
def test_progress_line_on_a_terminal(tmp_path, command):
    status, out, err = _tty_run([*command, str(EXAMPLES / "batch.jsonl")], tmp_path)
    assert status == 0
    last = err.rstrip("\n").split("\r")[-1]
    assert last.startswith("4 transcripts, ") and " kB, " in last and "B/s" in last  # (a small file: kB, not 0.0 MB)
    read = int(last.split(", ")[1].split()[0].replace(",", ""))
    assert read == round((EXAMPLES / "batch.jsonl").stat().st_size / 1000)  # the last frame: what was read, not 0 kB
    quiet = _tty_run(["-q", *command, str(EXAMPLES / "batch.jsonl")], tmp_path)
    assert "transcripts, " not in quiet[2] and quiet[1] == out


def test_estimate_check_names_the_line():
    r = invoke(["estimate", "--check", "--method", "rough", "--context-length", "8000", str(EXAMPLES / "batch.jsonl")])
    assert r.status == 1 and "line 1: 5,240 prompt tokens reach the compression threshold of 4,000" in r.stderr


# --- how a FILE is read: a small regular file at once, a larger one through a buffered reader ---

@pytest.mark.parametrize("path", [EXAMPLES / "coding-session.json", EXAMPLES / "batch.jsonl",
                                  FIXTURES / "formats" / "claude-code-session.jsonl",
                                  FIXTURES / "formats" / "codex-rollout.jsonl"])
@pytest.mark.parametrize("command", [["prune"], ["estimate", "--method", "rough"], ["convert", "--model", "gpt-4o"]])
def test_a_file_read_at_once_or_streamed_gives_the_same(monkeypatch, path, command):
    from hermesctx import transcripts

    path = str(path)
    at_once = invoke(["-q", *command, path])
    monkeypatch.setattr(transcripts, "_SMALL_FILE", -1)  # every file through the buffered reader
    streamed = invoke(["-q", *command, path])
    assert at_once.status == streamed.status == 0, at_once.stderr
    assert at_once.stdout == streamed.stdout and at_once.stderr == streamed.stderr


@pytest.mark.parametrize("told", [-200, -1, 1, 200])
def test_a_small_file_whose_size_changed_since_fstat_is_read_whole(tmp_path, monkeypatch, told):
    from hermesctx.context import Env
    from hermesctx.transcripts import open_input

    path = tmp_path / "t.jsonl"
    data = b'[{"role": "user", "content": "x"}]\n' * 40
    path.write_bytes(data)
    real = os.fstat

    def fstat(fd):  # the size the file had a moment before it grew or shrank
        info = real(fd)
        return os.stat_result((*info[:6], info.st_size + told, *info[7:]))

    monkeypatch.setattr(os, "fstat", fstat)
    with open_input(Env(None, None, None), str(path)) as stream:
        assert stream.read() == data


def test_a_file_in_proc_is_read_to_its_end():
    from hermesctx.context import Env
    from hermesctx.transcripts import open_input

    if not os.path.exists("/proc/self/status"):
        pytest.skip("no /proc")
    assert os.stat("/proc/self/status").st_size == 0  # what makes it a case: its size says nothing
    with open_input(Env(None, None, None), "/proc/self/status") as stream:
        assert b"\nPid:" in stream.read()


def test_a_directory_is_one_line_naming_it(tmp_path):
    from hermesctx.context import Env
    from hermesctx.errors import FileIOError
    from hermesctx.transcripts import open_input

    with pytest.raises(FileIOError, match=f"cannot read {tmp_path}: Is a directory"):
        with open_input(Env(None, None, None), str(tmp_path)):
            pass


def test_a_warning_while_reading_several_files_names_the_file(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for path in (a, b):
        path.write_text('{"history": [{"role": "user", "content": "x"}], "meta": 1}\n')
    r = invoke(["estimate", "--method", "rough", str(a), str(b)])
    assert r.status == 0, r.stderr
    for path in (a, b):  # each its own warning (one text for both would be said once)
        assert f"warning: {path}: line 1: keys beside the 'history' messages (meta)" in r.stderr


# --- every line said about one of several files names the file, in each way they are read ---

CONTAINER = '{"history": [{"role": "user", "content": "x"}], "meta": 1}\n'
LOST = "keys beside the 'history' messages (meta)"
EMPTIED = '[{"role": "user", "content": "x"}]\n[{"role": "tool", "tool_call_id": "zz", "content": "x"}]\n'


@pytest.mark.parametrize("args", [["prune"], ["prune", "--in-place"], ["prune", "--keep-going"],
                                  ["run", "--pipeline", "prune"], ["run", "--pipeline", "prune", "--jobs", "2"]])
def test_warnings_and_reports_name_their_file(tmp_path, args):
    files = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    for path in files:
        path.write_text(CONTAINER * 2)
    r = invoke([*args, *map(str, files)])
    assert r.status == 0, r.stderr
    for path in files:
        for line in (1, 2):
            assert f"warning: {path}: line {line}: {LOST}" in r.stderr
            assert f"\n{path}: line {line}: " in "\n" + r.stderr.replace("hermesctx: warning: ", "")


@pytest.mark.parametrize("args", [["sanitize"], ["sanitize", "--in-place"],
                                  ["run", "--pipeline", "sanitize"], ["run", "--pipeline", "sanitize", "--jobs", "2"]])
def test_a_send_path_refusal_names_its_file_and_line(tmp_path, args):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text('[{"role": "user", "content": "x"}]\n')
    b.write_text(EMPTIED)
    r = invoke([*args, str(a), str(b)])
    assert r.status == 3
    assert r.stderr.count(str(b)) == 2  # the report line of line 1, then the error, named once
    assert f"error: {b}: line 2: no message to send" in r.stderr
    alone = invoke([*args, str(b)])
    assert "error: line 2: no message to send" in alone.stderr


def test_keep_going_names_each_file_once(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_bytes(BAD)
    b.write_text(EMPTIED)
    r = invoke(["sanitize", "--keep-going", str(a), str(b)])
    assert r.status == 3
    assert f"error: {a}: line 2: not JSON" in r.stderr
    assert f"error: {b}: line 2: no message to send" in r.stderr and f"{b}: {b}" not in r.stderr


def test_convert_names_the_file_of_a_bad_line(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.jsonl"
    a.write_text(CONTAINER)
    b.write_bytes(BAD)
    r = invoke(["convert", str(a), str(b)])
    assert r.status == 3 and f"error: {b}: line 2: not JSON" in r.stderr
    b.write_text(EMPTIED)
    r = invoke(["convert", str(a), str(b)])
    assert r.status == 3 and f"error: {b}: line 2: no message is left that an API accepts" in r.stderr


@pytest.mark.parametrize("args", [["estimate", "--method", "rough"], ["prune"], ["convert", "-v"],
                                  ["run", "--pipeline", "prune", "--jobs", "2"]])
def test_what_a_log_reader_says_names_its_file(tmp_path, args):
    files = [tmp_path / "one.jsonl", tmp_path / "two.jsonl"]
    for path in files:
        path.write_bytes((FIXTURES / "formats" / "codex-rollout.jsonl").read_bytes())
    r = invoke([*args, *map(str, files)])
    assert r.status == 0, r.stderr
    for path in files:
        assert f"warning: {path}: line 24: skipped lines of unknown type" in r.stderr
        if "-v" in args:
            assert f"{path}: read as codex" in r.stderr


def test_trajectory_reads_several_files_as_their_concatenation(tmp_path):
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    data = (EXAMPLES / "trajectories.jsonl").read_bytes()
    one.write_bytes(data)
    two.write_bytes(data + b"{bad\n")
    both = invoke(["trajectory", "--target-max-tokens", "300", str(one), str(two)])
    alone = invoke(["trajectory", "--target-max-tokens", "300"], data)
    assert both.status == alone.status == 0, both.stderr
    assert both.stdout == alone.stdout * 2
    bad_line = len(data.splitlines()) + 1
    assert f"warning: {two}: line {bad_line}: not JSON" in both.stderr
    metrics = json.loads(both.stderr.strip().splitlines()[-1])
    assert metrics["summary"]["total_trajectories"] == 2 * json.loads(alone.stderr)["summary"]["total_trajectories"]


def test_a_missing_file_among_several_is_named_once(tmp_path):
    missing = tmp_path / "missing.json"
    for args in (["prune"], ["trajectory"], ["convert"], ["run", "--pipeline", "prune", "--jobs", "2"]):
        r = invoke([*args, str(EXAMPLES / "coding-session.json"), str(missing)])
        assert r.status == 5, (args, r.stderr)
        assert r.stderr.strip().splitlines()[-1] == f"hermesctx: error: cannot read {missing}: No such file or directory"


def test_what_cache_marks_send_path_changed_is_warned_with_its_line(tmp_path):
    batch = tmp_path / "k.jsonl"
    batch.write_text('[{"role": "user", "content": "x", "_k": 1}]\n[{"role": "user", "content": "y", "_k": 2}]\n')
    r = invoke(["cache-mark", str(batch)])
    assert r.status == 0, r.stderr
    assert [line for line in r.stderr.splitlines() if "warning" in line] == [
        "hermesctx: warning: line 1: wire: internal keys removed: 1",
        "hermesctx: warning: line 2: wire: internal keys removed: 1"]
    report = invoke(["cache-mark", "--report", "-", str(batch)])
    assert [json.loads(line)["wire"] for line in report.stderr.splitlines() if line.startswith("{")] == [
        {"internal keys removed": 1}] * 2


def test_quiet_is_taken_after_the_subcommand_too(tmp_path):
    from hermesctx.cli import hoist_quiet

    assert hoist_quiet(["prune", "-q", "a.json"]) == ["--quiet", "prune", "a.json"]
    assert hoist_quiet(["-q", "prune", "a.json"]) == ["-q", "prune", "a.json"]
    assert hoist_quiet(["prune", "--", "-q"]) == ["prune", "--", "-q"]  # a file named -q
    doc = tmp_path / "a.json"
    doc.write_text('[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "' + "x" * 50 + '"}]')
    loud, quiet = invoke(["prune", str(doc)]), invoke(["prune", "-q", str(doc)])
    assert loud.status == quiet.status == 0 and loud.stderr and not quiet.stderr


def test_keep_going_goes_past_a_file_that_fails_as_a_whole_and_sums_up(tmp_path):
    good = tmp_path / "a.json"
    good.write_text(json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]))
    bad = tmp_path / "b.json"
    bad.write_text("not json\n")
    r = invoke(["sanitize", "--keep-going", str(good), str(bad), str(good)])
    assert r.status == 3  # a failure: exit 3, after every file was read
    assert len(r.stdout.splitlines()) == 2  # both good files written, nothing of the bad one
    err = r.stderr.splitlines()
    assert any("b.json: not JSON" in line and line.endswith("(file skipped)") for line in err)
    assert err[-1] == "hermesctx: 3 files: 2 done (2 documents), 1 failed"
    stopped = invoke(["sanitize", str(good), str(bad), str(good)])
    assert stopped.status == 3 and "3 files" not in stopped.stderr  # without the flag the first failure ends it


@pytest.mark.parametrize("command", [["estimate", "--format", "json"], ["sanitize", "--check"],
                                     ["cache-mark", "--check"]])
def test_commands_that_only_read_keep_going_past_a_file_too(tmp_path, command):
    good = tmp_path / "a.json"
    good.write_text(json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]))
    bad = tmp_path / "b.json"
    bad.write_bytes(b"\x1f\x8b not a gzip either")
    r = invoke([*command, "--keep-going", str(good), str(bad), str(good)])
    assert r.status == 3
    assert "(file skipped)" in r.stderr
    assert r.stderr.splitlines()[-1] == "hermesctx: 3 files: 2 done (2 documents), 1 failed"  # the last line
    stopped = invoke([*command, str(good), str(bad), str(good)])
    assert stopped.status in (3, 5) and "3 files" not in stopped.stderr


def test_in_place_leaves_an_unchanged_file_untouched_and_keeps_a_pretty_layout(tmp_path):
    doc = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"},
           {"role": "assistant", "content": "hello"}]
    clean, pretty = tmp_path / "clean.json", tmp_path / "pretty.json"
    clean.write_text(json.dumps(doc, indent=1))
    pretty.write_text(json.dumps(doc, indent=2))
    os.utime(clean, (1_000_000_000, 1_000_000_000))
    before = clean.read_bytes()
    assert invoke(["-q", "sanitize", "--in-place", str(clean)]).status == 0
    assert clean.read_bytes() == before and clean.stat().st_mtime == 1_000_000_000  # nothing to do: not rewritten
    assert invoke(["-q", "cache-mark", "--in-place", str(pretty)]).status == 0
    text = pretty.read_text()
    assert "cache_control" in text and text.startswith("[\n  {")  # rewritten, in its own layout


@pytest.mark.parametrize("command", [["validate"], ["convert", "--to", "openai"]])
def test_validate_and_convert_keep_going_past_a_file(tmp_path, command):
    good = tmp_path / "a.json"
    good.write_text(json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]))
    bad = tmp_path / "b.json"
    bad.write_text("not json")
    r = invoke([*command, "--keep-going", str(good), str(bad), str(good)])
    assert r.status == 3 and "(file skipped)" in r.stderr
    assert r.stderr.splitlines()[-1] == "hermesctx: 3 files: 2 done (2 documents), 1 failed"  # the last line


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_run_keeps_going_past_a_file_and_past_bad_lines(tmp_path, jobs):
    """`run --keep-going`, one process or shared out: a bad line is said and written through unchanged, a
    file that fails as a whole is said and skipped, the summary line ends the batch, exit 3."""
    good = tmp_path / "a.json"
    good.write_text(json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]))
    bad = tmp_path / "b.json"
    bad.write_text("not json\n")
    mixed = tmp_path / "c.jsonl"
    mixed.write_bytes(BAD)
    argv = ["run", "--pipeline", "prune,sanitize", "--jobs", jobs, "--keep-going"]
    r = invoke([*argv, str(good), str(bad), str(mixed)])
    assert r.status == 3
    out = r.stdout.splitlines()
    assert len(out) == 5 and out[1:] == BAD.splitlines()  # c.jsonl's bad lines as they were, in their place
    err = r.stderr.splitlines()
    assert any(line.startswith("hermesctx: error: ") and "b.json: not JSON" in line
               and line.endswith("(file skipped)") for line in err)
    assert any("c.jsonl: line 2: not JSON" in line and line.endswith("(written unchanged)") for line in err)
    assert any("c.jsonl: line 4: " in line and line.endswith("(written unchanged)") for line in err)
    assert err[-1] == "hermesctx: 3 files: 2 done (3 documents), 1 failed; 2 lines failed inside them"
    clean = invoke([*argv, str(good), str(good)])
    assert clean.status == 0 and clean.stdout == invoke(["-q", "run", "--pipeline", "prune,sanitize",
                                                         str(good), str(good)]).stdout
    stopped = invoke(["run", "--pipeline", "prune,sanitize", "--jobs", jobs, str(good), str(bad), str(good)])
    assert stopped.status == 3 and "3 files" not in stopped.stderr


@pytest.mark.parametrize("command", [["prune"], ["convert", "--to", "openai"], ["run", "--pipeline", "prune"],
                                     ["run", "--pipeline", "prune", "--jobs", "2"]])
def test_pretty_is_for_one_document(tmp_path, command):
    """`--pretty` indents one document (a one-line JSON file too); JSON Lines input or several FILEs
    into one stream are refused, one line, exit 2, nothing written (indented, they could not be read back)."""
    one = json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}])
    single = tmp_path / "one.jsonl"
    single.write_text(one + "\n")
    r = invoke(["-q", *command, "--pretty", str(single)])
    assert r.status == 0 and r.stdout.startswith(b"[\n") and json.loads(r.stdout) == json.loads(one)
    batch = tmp_path / "two.jsonl"
    batch.write_text(one + "\n" + one + "\n")
    for args in ([str(batch)], [str(single), str(single)]):
        r = invoke(["-q", *command, "--pretty", *args])
        assert r.status == 2 and r.stdout == b"" and len(r.stderr.splitlines()) == 1
        assert r.stderr.startswith("hermesctx: error: --pretty indents one document, and ")
        assert r.stderr.rstrip().endswith("leave --pretty out to write one compact document per line")


def test_a_folder_stands_for_the_files_in_it(tmp_path):
    """A directory that is not an OpenCode storage tree: its files in name order (not hidden ones,
    not subdirectories), each a FILE of the batch, named in every row."""
    folder = tmp_path / "logs"
    (folder / "sub").mkdir(parents=True)
    doc = json.dumps([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}])
    (folder / "b.json").write_text(doc)
    (folder / "a.jsonl").write_text(doc + "\n" + doc + "\n")
    (folder / "notes.md").write_text("# not a transcript\n")
    (folder / ".hidden.json").write_text(doc)
    (folder / "sub" / "c.json").write_text(doc)
    r = invoke(["estimate", "--method", "rough", "--format", "table", "--keep-going", str(folder)])
    assert r.status == 3
    rows = r.stdout.decode().splitlines()
    assert [row.split()[0] for row in rows[1:4]] == [str(folder / "a.jsonl")] * 2 + [str(folder / "b.json")]
    assert rows[-1].startswith("total") and len(rows) == 6  # header, 3 rows, rule, total
    assert "notes.md: not JSON" in r.stderr and "sub" not in r.stderr and "hidden" not in r.stderr
    assert r.stderr.splitlines()[-1] == "hermesctx: 3 files: 2 done (3 documents), 1 failed"
    check = invoke(["sanitize", "--check", str(folder / "b.json"), str(folder / "sub")])
    assert check.status == 0 and "2 transcripts" in check.stderr
