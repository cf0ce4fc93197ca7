"""The small JSON codec gives exactly what the full path (orjson, then the stdlib) gives:
the same values, the same errors, the same bytes; and a tiny run imports neither orjson nor
json (see tests/cli/test_startup.py)."""

import json
import math
import random

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from hermesctx import _smalljson, jsonio
from hermesctx.errors import InputError

FAST = settings(max_examples=400, deadline=None,  # (the fixture only patches: fine to share)
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
MANY = settings(max_examples=5000, deadline=None)

# --- strategies -------------------------------------------------------------------------

ODD = "\x00\x01\x08\x09\x0a\x0c\x0d\x1f\x20\x7f\x80\"\\/'\u2028\u2029\ufeff\ud800\udbff\udc00\udfffé日😀"
texts = (st.text(max_size=12)
         | st.text(st.characters(exclude_categories=()), max_size=8)  # lone surrogates too
         | st.text(st.sampled_from(ODD), max_size=8))
EDGE_INTS = [0, 1, -1, 2**31, 2**53 + 1, 2**63 - 1, -2**63, -2**63 - 1, 2**63, 2**64 - 1, 2**64,
             -2**64, 10**18, 10**19, -10**19, 10**20, 10**40]
ints = st.integers() | st.sampled_from(EDGE_INTS) | st.integers(-2**66, 2**66)
# every decimal exponent a double has, at a few mantissas (orjson's notation changes at some)
EDGE_FLOATS = [m * 10.0**e for e in range(-324, 309) for m in (1.0, 1.5, 9.999999999999998, 3.3333333333333335)
               if math.isfinite(m * 10.0**e)]
floats = st.floats() | st.sampled_from(EDGE_FLOATS) | st.sampled_from([0.0, -0.0, 5e-324, -5e-324,
                                                                        2.2250738585072014e-308, 1.7976931348623157e308])
leaves = st.none() | st.booleans() | ints | floats | texts
values = st.recursive(leaves, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(texts, inner, max_size=4), max_leaves=25)
# what orjson always writes and the small codec always takes
plain_floats = floats.filter(math.isfinite)
plain = st.recursive(st.none() | st.booleans() | st.integers(-2**63, 2**64 - 1) | plain_floats
                     | st.text(max_size=12),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                     max_leaves=25)
numbers = st.from_regex(r"-?(0|[1-9][0-9]{0,24})(\.[0-9]{1,24})?([eE][+-]?[0-9]{1,3})?", fullmatch=True)


def same(a, b) -> bool:
    """Equal, with the same types throughout, key order included; floats by their bits
    (iterative: documents 1,024 deep)."""
    stack = [(a, b)]
    while stack:
        a, b = stack.pop()
        if type(a) is not type(b):
            return False
        if type(a) is float:
            if repr(a) != repr(b):
                return False
        elif type(a) is dict:
            if list(a) != list(b):
                return False
            stack.extend((a[k], b[k]) for k in a)
        elif type(a) is list:
            if len(a) != len(b):
                return False
            stack.extend(zip(a, b))
        elif a != b:
            return False
    return True


def full_loads(raw):
    """What loads gives through orjson and the stdlib: the value, or the error's words."""
    try:
        data = jsonio._bytes(raw)
        return "ok", jsonio._unique_keys(jsonio._loads(data), data)  # (a key twice: refused, issue 31)
    except InputError as err:
        return "error", str(err)


@pytest.fixture
def small(monkeypatch):
    """jsonio with the small codec in use whatever is imported, its budget unlimited."""
    monkeypatch.setattr(jsonio, "_small", lambda size: True)
    return jsonio


def check_loads(small, raw):
    expected = full_loads(raw)
    try:
        got = "ok", small.loads(raw)
    except InputError as err:
        got = "error", str(err)
    assert got[0] == expected[0], (raw, got, expected)
    if got[0] == "ok":
        assert same(got[1], expected[1]), (raw, got, expected)
    else:
        assert got[1] == expected[1]
    try:
        probed = small.try_loads(raw)
    except InputError as err:  # one JSON value, refused: a key named twice
        assert "twice" in str(err) and got[1] == str(err), raw
        return
    if expected[0] == "ok":
        assert same(probed, expected[1]), raw
    else:
        assert probed is jsonio.INVALID, raw


# --- loads --------------------------------------------------------------------------------

def serialized(value, rnd: random.Random) -> bytes:
    """One of the ways a document is written: orjson's, the stdlib's (escapes, spaces,
    indent, NaN and big integers), with whitespace around."""
    way = rnd.randrange(4)
    if way == 0:
        try:
            raw = orjson.dumps(value)
        except TypeError:
            raw = json.dumps(value).encode("utf-8", "surrogatepass")
    else:
        raw = json.dumps(value, ensure_ascii=way == 1, indent=2 if way == 3 else None).encode(
            "utf-8", "surrogatepass")
    return rnd.choice([b"", b" ", b"\n\t", b"\xef\xbb\xbf"]) + raw + rnd.choice([b"", b"\n", b" \r\n"])


def mutated(raw: bytes, rnd: random.Random) -> bytes:
    pieces = [b"", b"x", b",", b"]", b"}", b"[", b"{", b'"', b"\\", b"\\u", b"\\ud800", b"e", b"-",
              b".", b"0", b"1e999", b"NaN", b"Infinity", b"\x00", b"\x0b", b"\x0c", b"\xa0", b"\xff",
              b"\xed\xa0\x80", b"\xc3", b"\xef\xbb\xbf", b"\xe2\x80\xa8", b" ", b"\n"]
    data = bytearray(raw)
    for _ in range(rnd.randint(1, 3)):
        at = rnd.randint(0, len(data))
        cut = rnd.choice([0, 0, 1, 2])
        data[at:at + cut] = rnd.choice(pieces)
    return bytes(data)


@FAST
@given(values, st.randoms(use_true_random=False))
def test_loads_of_valid_json_is_the_full_paths(small, value, rnd):
    check_loads(small, serialized(value, rnd))


@FAST
@given(values, st.randoms(use_true_random=False))
def test_loads_of_broken_json_is_the_full_paths(small, value, rnd):
    check_loads(small, mutated(serialized(value, rnd), rnd))


@FAST
@given(numbers, st.sampled_from(["%s", "[%s]", '{"n": %s}', "[1, %s, null]"]))
def test_loads_of_every_number_is_the_full_paths(small, number, shape):
    check_loads(small, (shape % number).encode())


@pytest.mark.parametrize("raw", [
    b"", b" ", b"\xef\xbb\xbf", b"\xef\xbb\xbf\xef\xbb\xbf[]", b"[1] trailing", b"[1]]", b"[1,]", b"{,}",
    b"NaN", b"-Infinity", b"[Infinity]", b"1e400", b"-1e400", b"1e-400", b"[1E+2, 1e-0, -0, -0.0]",
    b"18446744073709551615", b"18446744073709551616", b"-9223372036854775808", b"-9223372036854775809",
    b"1" * 4301, b"1" * 400, b'"\\ud800"', b'"\\udc00\\ud800"', b'"\\ud83d\\ude00"', b'"a\tb"', b'"\x7f"',
    b'"\xed\xa0\x80"', b'"\xff"', b'"\xc3"', b"\x0c[]", b"\x0b[]", b"[]\x00", b"\xa0[]",
    b'{"a": 1, "a": 2, "b": 3}', b'{"a": 1, "b": 2, "a": 3}', b"[" * 900 + b"]" * 900,
    b"[" * 1000 + b"]" * 1000, b"[" * 1024 + b"]" * 1024, b"[" * 1025 + b"]" * 1025, b"[" * 3000,
    b'{"a": [1, 2.5, "x", true, false, null, {}]}', b"  [1]  \n", b"01", b"1.", b".5", b"-", b"+1",
    b'"\\x"', b'"\\u12"', b'"unterminated', b"tru", b"nul", b"[1 2]", b'{"a" 1}', b'{"a":}', b"{1: 2}",
])
def test_loads_edge_cases_are_the_full_paths(small, raw):
    check_loads(small, raw)


def test_loads_of_a_str_is_the_full_paths(small):
    for text in ['["é"]', '["\\ud800"]', "[\"\ud800\"]", "\ufeff[1]", " {\"a\": 1} "]:
        check_loads(small, text)


@FAST
@given(values, st.randoms(use_true_random=False))
def test_loads_like_json_is_json_loads(small, value, rnd):
    text = serialized(value, rnd).decode("utf-8", "surrogatepass")
    for candidate in (text, mutated(text.encode("utf-8", "surrogatepass"), rnd).decode("utf-8", "replace")):
        try:
            expected = "ok", json.loads(candidate)
        except Exception as exc:  # noqa: BLE001 - whatever json.loads raises
            expected = "error", type(exc), str(exc)
        try:
            got = "ok", small.loads_like_json(candidate)
        except Exception as exc:  # noqa: BLE001
            got = "error", type(exc), str(exc)
        if expected[0] == "ok" and got[0] == "ok":
            assert same(got[1], expected[1])
        else:
            assert got == expected


def test_loads_like_json_reads_nan_and_raises_json_errors(small):
    assert math.isnan(small.loads_like_json("NaN")) and small.loads_like_json("[-Infinity]") == [-math.inf]
    with pytest.raises(json.JSONDecodeError, match="Extra data"):
        small.loads_like_json("[1] 2")
    with pytest.raises(json.JSONDecodeError, match="BOM"):
        small.loads_like_json("\ufeff[1]")
    with pytest.raises(TypeError):
        small.loads_like_json(5)
    assert small.loads_like_json(b'{"a": 1}') == {"a": 1}


def test_a_syntax_error_imports_no_json(tmp_path):
    """The scanner raises SystemError while json.decoder is not imported: still a failure."""
    import subprocess
    import sys

    code = ("import sys\nfrom hermesctx import jsonio\n"
            "print(jsonio.try_loads(b'[\\n') is jsonio.INVALID, jsonio.try_loads(b'{\"a\" 1}') is jsonio.INVALID,"
            " jsonio.try_loads(b'[1] x') is jsonio.INVALID, jsonio.try_loads(b'[1]'),"
            " sorted(m for m in ('json', 'json.decoder', 'orjson') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True True True [1] []"


# --- dumps --------------------------------------------------------------------------------

def full_dumps(value, pretty):
    try:
        return "ok", jsonio._dumps(value, pretty)
    except Exception as exc:  # noqa: BLE001 - whatever the full path raises
        return "error", type(exc), str(exc)


def check_dumps(small, value):
    for pretty in (False, True):
        expected = full_dumps(value, pretty)
        try:
            got = "ok", small.dumps(value, pretty=pretty)
        except Exception as exc:  # noqa: BLE001
            got = "error", type(exc), str(exc)
        assert got == expected, (value, pretty)


@FAST
@given(values)
def test_dumps_is_the_full_paths_bytes(small, value):
    check_dumps(small, value)


@FAST
@given(plain)
def test_the_small_codec_writes_plain_values_itself(value):
    """Not by giving up: what orjson writes, the small codec writes too, byte for byte."""
    for pretty, option in ((False, orjson.OPT_APPEND_NEWLINE),
                           (True, orjson.OPT_APPEND_NEWLINE | orjson.OPT_INDENT_2)):
        assert _smalljson.dumps(value, pretty) == orjson.dumps(value, option=option)


class Sub(str):
    pass


@pytest.mark.parametrize("value", [
    {1: "int key"}, {"a": (1, 2)}, [2**64, 1e-7], {"a": -2**63 - 1, "b": [1e-5, 1e16]}, ["\ud800", 1e-7], (1, [2, ()]), [Sub("x")], {Sub("k"): 1}, [2**64], [-2**63 - 1], [math.nan],
    [math.inf], {"s": "\ud800"}, {"\udfff": 1}, [{1, 2}], [b"bytes"], [True, False, None, -0.0, 1e16, 1e-7],
    {"deep": json.loads("[" * 199 + "]" * 199)}, json.loads("[" * 200 + "]" * 200),
    json.loads("[" * 254 + "]" * 254), json.loads("[" * 260 + "]" * 260), [], {}, "", "x", 0, 1.5, None,
])
def test_dumps_edge_cases_are_the_full_paths(small, value):
    check_dumps(small, value)


def test_dumps_of_a_circular_value_raises_as_before(small):
    loop: list = []
    loop.append(loop)
    check_dumps(small, loop)


@MANY
@given(st.floats(allow_nan=False, allow_infinity=False))
@example(1e16)
@example(1e-5)
@example(-1.2345678901234567e-5)
@example(9.999999999999999e-6)
@example(1e-4)
@example(5e-324)
def test_float_notation_is_orjsons(x):
    assert _smalljson.orjson_float(x) == orjson.dumps(x).decode()


def test_float_notation_at_every_exponent():
    for x in EDGE_FLOATS:
        for y in (x, -x, math.nextafter(x, 0), math.nextafter(x, math.inf)):
            assert _smalljson.orjson_float(y) == orjson.dumps(y).decode(), y


# --- dumps_like_json ----------------------------------------------------------------------

KWARGS = [{}, {"ensure_ascii": False}, {"ensure_ascii": False, "separators": (",", ":")},
          {"sort_keys": True, "default": str}, {"ensure_ascii": False, "sort_keys": True, "default": str},
          {"separators": (",", ":"), "default": str}]
odd_keys = texts | ints | st.floats() | st.booleans() | st.none()
odd_values = st.recursive(leaves | st.tuples(ints) | st.frozensets(st.integers(0, 3), max_size=2),
                          lambda inner: st.lists(inner, max_size=3) | st.dictionaries(odd_keys, inner, max_size=3),
                          max_leaves=15)


@FAST
@given(odd_values, st.sampled_from(KWARGS))
def test_dumps_like_json_is_json_dumps(value, kwargs):
    try:
        expected = "ok", json.dumps(value, **kwargs)
    except Exception as exc:  # noqa: BLE001
        expected = "error", type(exc), str(exc)
    try:
        got = "ok", _smalljson.dumps_like_json(value, **kwargs)
    except Exception as exc:  # noqa: BLE001
        got = "error", type(exc), str(exc)
    assert got == expected


# --- the engine ---------------------------------------------------------------------------

def test_the_budget_decides_and_a_big_input_goes_to_orjson(monkeypatch):
    monkeypatch.setattr(jsonio, "_small_left", 100)
    monkeypatch.delitem(__import__("sys").modules, "orjson")  # as in a fresh process
    monkeypatch.setattr(jsonio, "_orjson", orjson)  # (the full path still finds it)
    used = []
    monkeypatch.setattr(jsonio, "_loads", lambda raw: used.append(len(raw)) or "full")
    assert jsonio.loads(b"[1]") == [1] and jsonio._small_left == 97
    assert jsonio.loads(b"[" + b"1," * 60 + b"1]") == "full" and used == [123]
    assert jsonio.dumps({"a": "b" * 80}) == b'{"a":"' + b"b" * 80 + b'"}\n' and jsonio._small_left == 97 - 89
    jsonio.expect_input(50)  # a file larger than what is left: orjson from its first line
    assert jsonio._small_left == 0 and jsonio.loads(b"[2]") == "full"


def test_many_files_adding_up_past_the_budget_go_to_orjson_from_the_start(tmp_path, monkeypatch):
    from hermesctx.transcripts import paths_of

    paths = []
    for n in range(40):
        (tmp_path / f"{n}.json").write_bytes(b"[]" + b" " * 98)  # 100 bytes each
        paths.append(str(tmp_path / f"{n}.json"))
    monkeypatch.setattr(jsonio, "_small_left", 4000)
    assert paths_of(paths) == paths and jsonio._small_left == 4000  # 4,000 bytes: they fit
    monkeypatch.setattr(jsonio, "_small_left", 3999)
    assert paths_of(paths) == paths and jsonio._small_left == 0  # they do not: orjson reads them all
