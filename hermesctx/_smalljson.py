"""JSON for small documents on ``_json`` alone, the C half of the stdlib's ``json`` package.

Importing orjson costs about twice a bare interpreter start (it brings dataclasses, inspect,
uuid, platform, datetime, enum), and ``json`` brings ``re``: more than a tiny input's whole
work. :mod:`hermesctx.jsonio` sends the first few hundred KiB of a run through this module
instead, which gives exactly what its full path would give, or gives up:

* :func:`parse` is ``json.loads`` with the hooks of :func:`hermesctx.jsonio.loads` (the
  stdlib's own scanner: the same values, big integers and lone surrogates included).
* :func:`dumps` writes orjson's bytes (floats in orjson's notation, :func:`orjson_float`), and
  raises :class:`Unsure` for anything orjson would refuse or write some other way.
* :func:`dumps_like_json` is ``json.dumps`` without ``indent``: the stdlib's own C encoder.

A failure here is never an answer: the caller takes its full path, which words the errors.
"""

from __future__ import annotations

import _json

WHITESPACE = " \t\n\r"  # JSON's four: str.strip() would take more
MAX_DEPTH = 200  # dumps: deeper goes to orjson, whose own limit (254) then words the refusal
_INT_MIN, _INT_MAX = -(1 << 63), (1 << 64) - 1  # what orjson writes as an integer
_INF = float("inf")
_NAN = float("nan")
_encode_str = _json.encode_basestring  # escapes ", \ and controls, as orjson does


class Unsure(Exception):
    """Not something this module can answer exactly: the caller takes its full path."""


def finite_float(text: str) -> float:
    """A JSON number as a float; one beyond the float range is refused (a ValueError), not
    made infinite."""
    value = float(text)
    if value == _INF or value == -_INF:
        raise ValueError(f"number {text[:40]} is out of range")
    return value


def refuse_constant(name: str) -> None:
    """NaN, Infinity and -Infinity are not JSON."""
    raise ValueError(f"{name} is not valid JSON")


class _Context:
    """The attributes ``_json.make_scanner`` reads from a ``json.JSONDecoder``."""

    def __init__(self, parse_float, parse_constant, object_pairs_hook=None):
        self.strict = True
        self.object_hook = None
        self.object_pairs_hook = object_pairs_hook
        self.parse_float = parse_float
        self.parse_int = int  # (the exact type: the scanner's own fast path)
        self.parse_constant = parse_constant


_scan = _json.make_scanner(_Context(finite_float, refuse_constant))
# json.loads's: NaN and Infinity are floats (the same objects every time, as in json.decoder)
_scan_std = _json.make_scanner(_Context(float, {"NaN": _NAN, "Infinity": _INF,
                                                "-Infinity": -_INF}.__getitem__))


class DuplicateKey(Exception):
    """An object of the text names a key twice (``args[0]``: the key)."""


def _pairs(pairs: list) -> dict:
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(key)
            seen.add(key)
    return value


_scan_pairs = _json.make_scanner(_Context(finite_float, refuse_constant, _pairs))


def duplicate_key(text: str) -> str | None:
    """The first key an object of ``text`` (one JSON value) names twice, or None (also when
    the text is not JSON: its reader says so)."""
    start = len(text) - len(text.lstrip(WHITESPACE)) if text[:1] in WHITESPACE else 0
    try:
        _scan_pairs(text, start)
    except DuplicateKey as dup:
        return dup.args[0]
    except Exception:  # noqa: BLE001 - not JSON here: the reader's verdict is the one given
        return None
    return None


def parse(text: str, *, standard: bool = False) -> object:
    """The value of ``text``, one JSON value with JSON whitespace around it: the stdlib's
    scanner with :func:`hermesctx.jsonio.loads`'s rules (NaN, Infinity and numbers beyond
    the float range refused), or ``json.loads``'s (``standard``). Raises on anything else:
    :class:`Unsure` for input around the value, the scanner's own exceptions inside it (a
    syntax error is a ``SystemError`` until ``json.decoder`` is imported: ``_json`` takes
    ``JSONDecodeError`` from there), ``ValueError`` from the hooks."""
    start = len(text) - len(text.lstrip(WHITESPACE)) if text[:1] in WHITESPACE else 0
    value, end = (_scan_std if standard else _scan)(text, start)
    if end != len(text) and text[end:].strip(WHITESPACE):
        raise Unsure("trailing data")
    return value


def orjson_float(value: float) -> str:
    """A finite float as orjson writes it: ``repr()``, except that an exponent below zero has
    no leading zero (``1e-7``, not ``1e-07``) and the exponent -5 is written out
    (``0.000012``): orjson's plain notation reaches one decimal place further down."""
    text = repr(value)
    cut = text.find("e-")
    if cut < 0:
        return text
    exponent = text[cut + 2:]
    if exponent != "05":
        return f"{text[:cut]}e-{exponent.lstrip('0')}"
    digits = text[:cut].replace(".", "")
    return f"-0.0000{digits[1:]}" if digits[0] == "-" else f"0.0000{digits}"


def dumps(value: object, pretty: bool = False) -> bytes:
    """orjson's bytes for ``value`` (``OPT_APPEND_NEWLINE``, and ``OPT_INDENT_2`` when
    ``pretty``), or :class:`Unsure` / ``UnicodeEncodeError`` (a lone surrogate) when it cannot
    be sure of them: only exact dicts with str keys, lists, tuples, str, int in orjson's range,
    finite floats, bools and None, nested at most :data:`MAX_DEPTH` deep."""
    out: list[str] = []
    if pretty:
        _pretty(value, out, 0)
    else:
        _compact(value, out, 0)
    out.append("\n")
    return "".join(out).encode("utf-8")


def _scalar(value: object, kind: type) -> str:
    if kind is int:
        if _INT_MIN <= value <= _INT_MAX:  # type: ignore[operator]
            return repr(value)
    elif kind is float:
        if value - value == 0:  # finite (inf - inf and nan - nan are nan)
            return orjson_float(value)  # type: ignore[arg-type]
    elif value is None:
        return "null"
    elif value is True:
        return "true"
    elif value is False:
        return "false"
    raise Unsure(kind.__name__)


def _compact(value: object, out: list[str], depth: int) -> None:
    kind = type(value)
    if kind is str:
        out.append(_encode_str(value))
        return
    if kind is dict:
        if depth >= MAX_DEPTH:
            raise Unsure("nesting")
        sep = "{"
        for key, item in value.items():  # type: ignore[union-attr]
            if type(key) is not str:
                raise Unsure("key")
            kind = type(item)
            if kind is str:
                out.append(f"{sep}{_encode_str(key)}:{_encode_str(item)}")
            elif kind is dict or kind is list or kind is tuple:
                out.append(f"{sep}{_encode_str(key)}:")
                _compact(item, out, depth + 1)
            else:
                out.append(f"{sep}{_encode_str(key)}:{_scalar(item, kind)}")
            sep = ","
        out.append("}" if sep == "," else "{}")
    elif kind is list or kind is tuple:
        if depth >= MAX_DEPTH:
            raise Unsure("nesting")
        sep = "["
        for item in value:  # type: ignore[union-attr]
            kind = type(item)
            if kind is str:
                out.append(sep + _encode_str(item))
            elif kind is dict or kind is list or kind is tuple:
                out.append(sep)
                _compact(item, out, depth + 1)
            else:
                out.append(sep + _scalar(item, kind))
            sep = ","
        out.append("]" if sep == "," else "[]")
    else:
        out.append(_scalar(value, kind))


def _pretty(value: object, out: list[str], depth: int) -> None:
    kind = type(value)
    if kind is str:
        out.append(_encode_str(value))
        return
    if kind is dict or kind is list or kind is tuple:
        if depth >= MAX_DEPTH:
            raise Unsure("nesting")
        if not value:
            out.append("{}" if kind is dict else "[]")
            return
        inner = "\n" + "  " * (depth + 1)
        sep = "{" + inner if kind is dict else "[" + inner
        if kind is dict:
            for key, item in value.items():  # type: ignore[union-attr]
                if type(key) is not str:
                    raise Unsure("key")
                out.append(f"{sep}{_encode_str(key)}: ")
                _pretty(item, out, depth + 1)
                sep = "," + inner
        else:
            for item in value:  # type: ignore[union-attr]
                out.append(sep)
                _pretty(item, out, depth + 1)
                sep = "," + inner
        out.append("\n" + "  " * depth + ("}" if kind is dict else "]"))
    else:
        out.append(_scalar(value, kind))


def _not_serializable(value: object) -> None:
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


def dumps_like_json(value: object, *, ensure_ascii: bool = True, separators: tuple[str, str] | None = None,
                    sort_keys: bool = False, default=None) -> str:
    """``json.dumps(value, ...)`` for these keywords (no ``indent``), through the encoder
    ``json.dumps`` itself uses. Whatever it raises is raised by ``json.dumps`` itself, so the
    exception is the stdlib's in every version."""
    encode_str = _json.encode_basestring_ascii if ensure_ascii else _encode_str
    if type(value) is str:
        return encode_str(value)
    item_sep, key_sep = separators if separators is not None else (", ", ": ")
    try:
        chunks = _json.make_encoder({}, default or _not_serializable, encode_str, None, key_sep,
                                    item_sep, sort_keys, False, True)(value, 0)
        return "".join(chunks)
    except Exception:  # noqa: BLE001 - json.dumps raises it again, in its own words
        import json

        return json.dumps(value, ensure_ascii=ensure_ascii, separators=separators,
                          sort_keys=sort_keys, default=default)
