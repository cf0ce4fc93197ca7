"""The ShareGPT module: a JSON array of records is read as a batch, one transcript per record,
and written back by --in-place as the same JSON array (not as JSON Lines)."""

from __future__ import annotations

import json

from conftest import invoke

RECORDS = [
    {"id": "a", "conversations": [{"from": "human", "value": "Bonjour"},
                                  {"from": "gpt", "value": "<think>\n</think>\nSalut"}]},
    {"id": "b", "conversations": [{"from": "human", "value": "Ciao"},
                                  {"from": "gpt", "value": "<think>\n</think>\nCiao!"}]},
]


def test_in_place_keeps_a_json_array_of_records_an_array(tmp_path):
    for pretty in ([], ["--pretty"]):
        path = tmp_path / "records.json"
        path.write_text(json.dumps(RECORDS, ensure_ascii=False, indent=1), encoding="utf-8")
        result = invoke(["prune", "--in-place", *pretty, str(path)])
        assert result.status == 0, result.stderr
        assert json.loads(path.read_text(encoding="utf-8")) == RECORDS


def test_in_place_keeps_each_line_of_arrays_a_line(tmp_path):
    path = tmp_path / "records.jsonl"
    lines = [json.dumps(RECORDS), json.dumps(RECORDS[:1]), json.dumps(RECORDS[1])]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = invoke(["prune", "--in-place", str(path)])
    assert result.status == 0, result.stderr
    written = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in written] == [RECORDS, RECORDS[:1], RECORDS[1]]


def test_without_in_place_each_record_is_one_line_of_stdout():
    result = invoke(["sanitize"], RECORDS)
    assert result.status == 0, result.stderr
    assert [json.loads(line)["id"] for line in result.stdout.splitlines()] == ["a", "b"]
