"""Document reading and writing: shapes, JSON Lines detection, lossless round trips, errors."""

import io as _io
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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


@pytest.mark.parametrize("value,expected", [(1e19, True), (-2.0 ** 63, True), (1.5, False), (1, False),
                                            (2 ** 70, False), ("1e19", False), ([], False), ({}, False),
                                            ([[[[1e20]]]], True), ({"a": {"b": [1, 2, {"c": -1e30}]}}, True),
                                            ({"a": [0.5, "2", None, True, 9.2e18]}, False), ([[], {}, [{}]], False)])
def test_huge_float_looks_everywhere(value, expected):
    assert jsonio._huge_float(value) is expected


def _huge_floats(value):
    """The reference: a plain recursive walk."""
    if isinstance(value, dict):
        return any(_huge_floats(v) for v in value.values())
    if isinstance(value, list):
        return any(_huge_floats(v) for v in value)
    return type(value) is float and abs(value) >= 2.0 ** 63


@settings(max_examples=300, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5)
                    | st.floats(allow_nan=False, allow_infinity=False),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=4),
                    max_leaves=30))
def test_huge_float_agrees_with_a_plain_walk(value):
    assert jsonio._huge_float(value) is _huge_floats(value)


@pytest.mark.parametrize("text", ["[18446744073709551616, 0.5]", '{"a": [-9223372036854775809]}',
                                  '{"cost": 0.25, "n": 1e19, "id": "12345678901234567890"}'])
def test_integers_beyond_64_bits_stay_exact_and_floats_stay_floats(text):
    """Through orjson and the guard after it."""
    assert repr(jsonio._loads(text.encode())) == repr(json.loads(text))
    assert repr(jsonio.loads_like_json(text)) == repr(json.loads(text))


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


# --- the json-module faces: loads_like_json is json.loads, dumps_like_json json.dumps -------------

ODD = "\x00\x01\x1f\x7f\"\\/'\u2028\ufeff\ud800\udc00é日😀"
_texts = st.text(max_size=10) | st.text(st.sampled_from(ODD), max_size=6)
_ints = st.integers() | st.sampled_from([2**63 - 1, -2**63, -2**63 - 1, 2**64 - 1, 2**64, 10**20])
_leaves = st.none() | st.booleans() | _ints | st.floats() | _texts
_values = st.recursive(_leaves, lambda inner: st.lists(inner, max_size=4)
                       | st.dictionaries(_texts, inner, max_size=4), max_leaves=20)


def _outcome(fn, *args, **kwargs):
    try:
        return "ok", repr(fn(*args, **kwargs))
    except Exception as exc:  # noqa: BLE001 - whatever the json module raises
        return "error", type(exc), str(exc)


@settings(max_examples=300, deadline=None)
@given(_values, st.sampled_from([{}, {"ensure_ascii": False}, {"indent": 2}]), st.integers(0, 3))
def test_loads_like_json_is_json_loads(value, dump, cut):
    """The same value (types, key order, float bits) or the same exception, on text the stdlib
    writes (NaN, big integers, lone surrogates) and on that text cut short."""
    text = json.dumps(value, **dump)
    for candidate in (text, text[:len(text) - cut]):
        assert _outcome(jsonio.loads_like_json, candidate) == _outcome(json.loads, candidate)


KWARGS = [{}, {"ensure_ascii": False}, {"ensure_ascii": False, "separators": (",", ":")},
          {"sort_keys": True, "default": str}, {"ensure_ascii": False, "sort_keys": True, "default": str},
          {"separators": (",", ":"), "default": str}]
_odd_keys = _texts | _ints | st.floats() | st.booleans() | st.none()
_odd_values = st.recursive(_leaves | st.tuples(_ints) | st.frozensets(st.integers(0, 3), max_size=2),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_odd_keys, inner, max_size=3),
                           max_leaves=15)


@settings(max_examples=300, deadline=None)
@given(_odd_values, st.sampled_from(KWARGS))
def test_dumps_like_json_is_json_dumps(value, kwargs):
    """Byte for byte (the token counts of Hermes-exact stages measure these strings), errors too."""
    assert _outcome(jsonio.dumps_like_json, value, **kwargs) == _outcome(json.dumps, value, **kwargs)
    assert _outcome(jsonio.dumps_like_json, value, **kwargs) == _outcome(json.dumps, value, **kwargs)  # (kept encoder)


@settings(max_examples=300, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers(-2**63, 2**64 - 1) | st.floats(allow_nan=False, allow_infinity=False)
                    | st.text(max_size=12), lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=25))
def test_dumps_writes_orjsons_bytes_and_loads_reads_them_back(value):
    import orjson

    for pretty, option in ((False, orjson.OPT_APPEND_NEWLINE), (True, orjson.OPT_APPEND_NEWLINE | orjson.OPT_INDENT_2)):
        data = jsonio.dumps(value, pretty=pretty)
        assert data == orjson.dumps(value, option=option)
        assert repr(jsonio.loads(data)) == repr(json.loads(data)) == repr(value) or value != value


# --- the json module's path (a process's first MiB): orjson's values, errors and bytes ----------

_EDGE_FLOATS = [m * 10.0**e for e in range(-324, 309, 7) for m in (1.0, 1.5, 3.3333333333333335)
                if math.isfinite(m * 10.0**e)] + [0.0, -0.0, 5e-324, 1e-5, 1.2e-7, 1e16, 1e22, 123456789.123]
_values_with_floats = st.recursive(
    st.none() | st.booleans() | _ints | st.floats() | st.sampled_from(_EDGE_FLOATS) | _texts,
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner) | st.dictionaries(_texts | _ints, inner, max_size=4),
    max_leaves=20)


@settings(max_examples=500, deadline=None)
@given(_values_with_floats, st.booleans())
def test_the_json_modules_bytes_are_orjsons_or_none(value, pretty):
    """(orjson is imported in this process: jsonio.dumps is orjson's path.)"""
    try:
        expected = jsonio.dumps(value, pretty=pretty)
    except Exception:  # noqa: BLE001 - what the full path refuses, json's path must not write
        expected = None
    got = jsonio._stdlib_dumps(value, pretty)
    assert got is None or got == expected


def test_the_json_module_writes_plain_values_itself():
    value = {"role": "user", "content": "héllo \x00 \u2028 \"q\" \\", "n": [1, -2, 2**70, 0.5, -0.0, 1e15],
             "e": [], "o": {}, "deep": [[{"a": None, "b": True}]]}
    for pretty in (False, True):
        assert jsonio._stdlib_dumps(value, pretty) == jsonio.dumps(value, pretty=pretty)
    assert jsonio._stdlib_dumps([1e-7], False) is None and jsonio._stdlib_dumps([1e16], False) is None
    assert jsonio._stdlib_dumps([math.nan], False) is None and jsonio._stdlib_dumps(["\ud800"], False) is None


def _read(reader, raw):
    try:
        return "ok", repr(reader(raw))
    except InputError as err:
        return "error", str(err)


@settings(max_examples=500, deadline=None)
@given(_values_with_floats, st.sampled_from([{}, {"ensure_ascii": False}, {"indent": 2}]), st.integers(0, 3),
       st.sampled_from([b"", b" ", b"\n"]))
def test_the_json_modules_reading_is_orjsons_path(value, dump, cut, around):
    """The same value (types, key order, float bits) or the same error words."""
    try:
        text = json.dumps(value, **dump)
    except ValueError:  # (a circular or odd value: nothing to read)
        return
    raw = around + text.encode("utf-8", "surrogatepass") + around
    for candidate in (raw, raw[:len(raw) - cut]):
        assert _read(jsonio._stdlib_loads, candidate) == _read(jsonio._loads, candidate), candidate


@pytest.mark.parametrize("raw", [
    b"", b" ", b"[1] trailing", b"[1,]", b"NaN", b"[Infinity]", b"1e400", b"-1e400", b"1e-400",
    b"18446744073709551616", b"-9223372036854775809", b'"\\ud800"', b'"\xff"', b'"\xc3"', b"[]\x00",
    b'{"a": 1, "a": 2}', b"[" * 900 + b"]" * 900, b"01", b"1.", b"tru", b'{"a" 1}',
])
def test_the_json_modules_reading_edge_cases(raw):
    assert _read(jsonio._stdlib_loads, raw) == _read(jsonio._loads, raw)


def test_a_tiny_process_reads_and_writes_without_orjson(tmp_path):
    import subprocess
    import sys

    code = ("import sys\nfrom hermesctx import jsonio\n"
            "v = jsonio.loads(b'{\"a\": [1, 2.5, \"\\\\u00e9\"]}')\n"
            "print(jsonio.dumps(v).decode().strip(), jsonio.try_loads(b'[1') is jsonio.INVALID,"
            " jsonio.loads_like_json('[1]'), 'orjson' in sys.modules)\n"
            "jsonio.dumps([1e16])\nprint('orjson' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == '{"a":[1,2.5,"é"]} True [1] False\nTrue\n'


def test_the_budget_decides_and_a_big_input_goes_to_orjson(tmp_path):
    import subprocess
    import sys

    code = ("import sys\nfrom hermesctx import jsonio\n"
            "jsonio.loads(b'[1]')\nprint(jsonio._small_left == jsonio.SMALL_BYTES - 3, 'orjson' in sys.modules)\n"
            "jsonio.expect_input(jsonio.SMALL_BYTES)\njsonio.loads(b'[2]')\nprint(jsonio._small_left, 'orjson' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == "True False\n0 True\n"
