"""ShareGPT records: a JSON array of them is a batch, and --in-place keeps it an array."""

from __future__ import annotations

import json

import pytest
from conftest import invoke

RECORDS = [
    {"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}]},
    {"conversations": [{"from": "human", "value": "yo"}, {"from": "gpt", "value": "hey"}]},
]


@pytest.mark.parametrize("pretty", [[], ["--pretty"]])
@pytest.mark.parametrize("command", ["sanitize", "prune"])
def test_in_place_keeps_a_json_array_of_records_an_array(tmp_path, command, pretty):
    path = tmp_path / "records.json"
    path.write_text(json.dumps(RECORDS, indent=2))
    result = invoke([command, "--in-place", *pretty, str(path)])
    assert result.status == 0, result.stderr
    written = json.loads(path.read_text())  # one JSON document, not JSON Lines
    assert isinstance(written, list) and len(written) == 2
    assert [r["conversations"][0]["value"] for r in written] == ["hi", "yo"]


def test_in_place_keeps_each_array_line_of_a_batch_an_array(tmp_path):
    path = tmp_path / "records.jsonl"
    path.write_text(f"{json.dumps(RECORDS)}\n{json.dumps(RECORDS[0])}\n{json.dumps(RECORDS[:1])}\n")
    result = invoke(["sanitize", "--in-place", str(path)])
    assert result.status == 0, result.stderr
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [type(v).__name__ for v in lines] == ["list", "dict", "list"]
    assert [len(lines[0]), len(lines[2])] == [2, 1]


def test_stdout_still_gets_one_record_a_line():
    result = invoke(["sanitize"], RECORDS)
    assert result.status == 0, result.stderr
    assert len(result.stdout.splitlines()) == 2
