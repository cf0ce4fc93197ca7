"""Document reading and writing: shapes, JSON Lines detection, lossless round trips, errors."""

import io as _io
import json

import pytest

from hermesctx import jsonio
from hermesctx.errors import InputError


def docs(raw: bytes, **kw):
    return list(jsonio.read_documents(_io.BytesIO(raw), **kw))


def test_single_pretty_document():
    (doc,) = docs(b'[\n  {"role": "user", "content": "hi"}\n]\n')
    assert doc.data == [{"role": "user", "content": "hi"}]
    assert doc.line is None


def test_jsonl_detected_and_blank_lines_skipped():
    got = docs(b'[{"role":"user","content":"a"}]\n\n{"messages":[]}\n')
    assert [d.data for d in got] == [[{"role": "user", "content": "a"}], {"messages": []}]
    assert [d.line for d in got] == [1, 3]
    assert [d.index for d in got] == [0, 1]


def test_jsonl_bad_line_is_located():
    stream = jsonio.read_documents(_io.BytesIO(b'[]\n[]\n{oops\n'))
    assert next(stream).data == [] and next(stream).data == []
    with pytest.raises(InputError) as err:
        next(stream)
    assert str(err.value).startswith("line 3: not JSON")


@pytest.mark.parametrize("raw,message", [
    (b"", "empty input"), (b"  \n\n", "empty input"), (b"not json", "not JSON"),
    (b'[1] trailing', "not JSON"), (b'{"a": NaN}', "not JSON"), (b'"\xff\xfe"', "not valid UTF-8"),
    (b"[1e400]", "out of range"),
])
def test_bad_input(raw, message):
    with pytest.raises(InputError) as err:
        docs(raw)
    assert message in str(err.value)


def test_bom_is_accepted():
    assert docs(b'\xef\xbb\xbf[{"role":"user","content":"x"}]')[0].data[0]["content"] == "x"


def test_lossless_values_orjson_cannot_hold():
    raw = b'{"big": 123456789012345678901234567890, "s": "\\ud800x", "f": 1.0, "e": "\xc3\xa9"}'
    value = jsonio.loads(raw)
    assert value["big"] == 123456789012345678901234567890
    out = jsonio.dumps(value)
    assert jsonio.loads(out) == value
    assert b"123456789012345678901234567890" in out
    assert "é".encode() in out  # unicode stays as-is


def test_dumps_compact_pretty_and_unicode():
    assert jsonio.dumps({"a": [1, "日本"]}) == '{"a":[1,"日本"]}\n'.encode()
    assert jsonio.dumps({"a": 1}, pretty=True) == b'{\n  "a": 1\n}\n'


def test_keep_raw():
    (doc,) = docs(b'[1, 2]\n', keep_raw=True)
    assert doc.raw == b"[1, 2]\n"


def test_write_atomic(tmp_path):
    target = tmp_path / "out.json"
    jsonio.write_atomic(str(target), b"{}")
    assert target.read_bytes() == b"{}"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


@pytest.mark.parametrize("text", ['{"a": 1, "a": 2}', '[123456789012345678901234, 1.5]', '{"n": -12345678901234567890}',
                                  '"\\ud800"', "NaN", '{"x": Infinity}', "1e400", '  {"a": [1, {"b": null}]}  ',
                                  '{"a": "é日😀"}', "12345678901234567890123", "-0", "0.1"])
def test_loads_like_json_gives_what_json_gives(text):
    assert repr(jsonio.loads_like_json(text)) == repr(json.loads(text))


@pytest.mark.parametrize("text", ["", "{", '{"a": 1} x', "\ufeff{}", None, 12, {"a": 1}])
def test_loads_like_json_raises_what_json_raises(text):
    with pytest.raises(Exception) as ours:
        jsonio.loads_like_json(text)
    with pytest.raises(Exception) as theirs:
        json.loads(text)
    assert type(ours.value) is type(theirs.value)


@pytest.mark.parametrize("value,expected", [(1.5, True), (1, False), ("1.5", False), ([], False), ({}, False),
                                            ([[[[1.0]]]], True), ({"a": {"b": [1, 2, {"c": 0.5}]}}, True),
                                            ({"a": [1, "2", None, True]}, False), ([[], {}, [{}]], False)])
def test_has_float_looks_everywhere(value, expected):
    assert jsonio._has_float(value) is expected


def test_a_twenty_digit_integer_stays_exact():
    assert jsonio.loads(b'{"usage": {"n": 123456789012345678901234}, "x": [0.5]}')["usage"]["n"] == 123456789012345678901234


def test_a_long_input_keeps_freed_memory_for_the_next_document(tmp_path, monkeypatch):
    """The allocator is tuned once, before a long input is opened (its read buffer allocated),
    never for a short one; the documents read are the same either way."""
    from hermesctx import transcripts
    from hermesctx.context import Env

    path = tmp_path / "batch.jsonl"
    path.write_bytes(b'[{"role": "user", "content": "a"}]\n' * 3)
    monkeypatch.setattr(jsonio, "_tuned", False)
    env = Env.from_process()
    short = [d.data for d in transcripts.documents(env, str(path), None)]
    assert jsonio._tuned is False  # 105 bytes: not a long input
    monkeypatch.setattr(jsonio, "LONG_INPUT", 100)
    long = [d.data for d in transcripts.documents(env, str(path), None)]
    assert jsonio._tuned is True
    assert long == short and len(long) == 3
    jsonio.keep_freed_memory()  # once per process: a second call does nothing
