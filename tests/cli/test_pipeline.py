"""The pipeline registry (parse/build/run_document) and the ordered, bounded parallel map."""

import copy
import json
import os

import pytest
from conftest import EXAMPLES, invoke

from hermesctx import pipeline
from hermesctx.context import Context, Env
from hermesctx.errors import UsageError
from hermesctx.parallel import ordered_map


def _square_factory(offset):
    def run(x):
        if x == "boom":
            raise ValueError("boom")
        return x * x + offset
    return run


def test_ordered_map_keeps_input_order():
    assert list(ordered_map(_square_factory, (1,), range(50), jobs=3)) == [x * x + 1 for x in range(50)]


def test_ordered_map_reads_at_most_a_window_ahead():
    consumed = []

    def items():
        for i in range(100):
            consumed.append(i)
            yield i

    results = ordered_map(_square_factory, (0,), items(), jobs=2, window=5)
    assert next(results) == 0
    assert len(consumed) <= 7  # the window, one item queued by the reader and one in its hand
    assert list(results)[-1] == 99 * 99
    assert len(consumed) == 100


def test_ordered_map_raises_at_the_failing_item():
    out = []
    with pytest.raises(ValueError, match="boom"):
        for value in ordered_map(_square_factory, (0,), [1, 2, "boom", 4], jobs=2):
            out.append(value)
    assert out == [1, 4]


@pytest.mark.parametrize("entries,message", [
    ([], "expected a non-empty list"),
    ("prune", "expected a non-empty list"),
    (["prune", "bogus"], "pipeline[1]: unknown stage 'bogus'"),
    ([{"prune": 3}], "pipeline[0] (prune): options must be a mapping"),
    ([{"prune": {}, "sanitize": {}}], "pipeline[0]: expected a stage name"),
])
def test_parse_errors_name_the_entry(entries, message):
    with pytest.raises(UsageError) as err:
        pipeline.parse(entries)
    assert message in str(err.value)


def test_parse_accepts_names_and_one_key_mappings():
    assert pipeline.parse(["prune", {"compress": {"if_needed": True}}, {"cache-mark": None}]) == [
        ("prune", {}), ("compress", {"if_needed": True}), ("cache-mark", {})]


def test_option_values_are_type_checked():
    assert "protect_last_n" in " ".join(pipeline.validate([{"prune": {"protect_last_n": "many"}}]))
    assert pipeline.validate([{"cache-mark": {"ttl": "1h"}}, {"prune": {"protect-last-n": 4}}]) == []


def test_run_document_does_not_mutate_its_input():
    import io as _io

    env = Env(_io.BytesIO(), _io.BytesIO(), _io.StringIO(), environ={}, quiet=True)
    stages = pipeline.build(["prune", "sanitize", "cache-mark"], Context(env))
    doc = json.loads(open(os.path.join(EXAMPLES, "coding-session.json"), "rb").read())
    before = copy.deepcopy(doc)
    out, reports = pipeline.run_document(stages, doc)
    assert doc == before and out != before
    assert [r["stage"] for r in reports] == ["prune", "sanitize", "cache-mark"]


def test_jobs_on_a_single_document_and_pretty_output():
    raw = open(os.path.join(EXAMPLES, "coding-session.json"), "rb").read()
    pretty = json.dumps(json.loads(raw), indent=2).encode()  # not JSON Lines
    one = invoke(["-q", "run", "--pipeline", "prune,sanitize", "--pretty"], pretty)
    two = invoke(["-q", "run", "--pipeline", "prune,sanitize", "--pretty", "--jobs", "2"], pretty)
    assert one.status == two.status == 0 and one.stdout == two.stdout and b"\n  " in one.stdout


def test_jobs_on_jsonl_with_blank_lines_and_pretty(tmp_path):
    raw = open(os.path.join(EXAMPLES, "batch.jsonl"), "rb").read()
    raw = b"\n" + raw.replace(b"\n", b"\n\n")
    path = tmp_path / "b.jsonl"
    path.write_bytes(raw)
    one = invoke(["-q", "run", "--pipeline", "prune,cache-mark", str(path)])
    two = invoke(["-q", "run", "--pipeline", "prune,cache-mark", "--jobs", "3", str(path)])
    assert one.status == two.status == 0 and one.stdout == two.stdout
    one = invoke(["-q", "run", "--pipeline", "prune,cache-mark", "--pretty", str(path)])
    two = invoke(["-q", "run", "--pipeline", "prune,cache-mark", "--pretty", "--jobs", "3", str(path)])
    assert one.status == two.status == 2 and one.stderr == two.stderr  # --pretty: one document only
    r = invoke(["run", "--pipeline", "prune", "--jobs", "2", "--report", str(tmp_path / "r.jsonl"), str(path)])
    lines = [json.loads(x)["line"] for x in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert r.status == 0 and lines == [2, 4, 6, 8]  # the input's own line numbers


def test_jobs_with_invalid_json_line_fails_at_that_line():
    raw = b'[{"role": "user", "content": "x"}]\n{not json\n[{"role": "user", "content": "y"}]\n'
    one = invoke(["-q", "run", "--pipeline", "prune"], raw)
    two = invoke(["-q", "run", "--pipeline", "prune", "--jobs", "2"], raw)
    assert one.status == two.status == 3
    assert one.stdout == two.stdout and one.stderr == two.stderr and "line 2" in two.stderr


def test_repeatable_options_take_a_value_a_list_or_a_mapping(tmp_path):
    raw = open(os.path.join(EXAMPLES, "coding-session.json"), "rb").read()
    d = str(tmp_path / "s")
    cases = [
        ({"threshold": "1000"}, ["--threshold", "1000"]),
        ({"threshold": ["terminal=500", "2000"]}, ["--threshold", "terminal=500", "--threshold", "2000"]),
        ({"threshold": {"terminal": 500, "read_file": 2000}}, ["--threshold", "terminal=500", "--threshold", "read_file=2000"]),
    ]
    for options, flags in cases:
        cfg = tmp_path / "c.yaml"
        cfg.write_text(json.dumps({"pipeline": [{"spill": {"dir": d, **options}}]}))  # JSON is YAML
        r = invoke(["-q", "run", "--config", str(cfg)], raw)
        by_flag = invoke(["-q", "spill", "--dir", d, *flags], raw)
        assert r.status == by_flag.status == 0, r.stderr
        assert r.stdout == by_flag.stdout and b"<persisted-output>" in r.stdout, options
