"""Reading and writing documents: one JSON value, or JSON Lines streamed one line at a time.

A *document* is whatever one transcript is: a JSON array of messages, a request body object
(``{"messages": [...], ...}``, OpenAI or Anthropic), or for ``normalize-usage`` a usage object.
Shape checks live in :mod:`hermesctx.messages`; this module only turns bytes into Python values
and back, losslessly:

* orjson does the work; the stdlib ``json`` module stands in for values orjson cannot
  represent exactly (integers beyond 64 bits, lone UTF-16 surrogates), and words the errors.
  A process's first :data:`SMALL_BYTES` go through the ``json`` module alone (its import costs
  about half orjson's, more than a tiny input's whole work), which gives the same values,
  errors and bytes; what it cannot be sure of takes orjson's path.
* Output is compact (or ``pretty``) UTF-8 with non-ASCII written as-is.
* Memory: a JSONL stream is parsed line by line, so it never grows with the number of lines.
"""

from __future__ import annotations

import io as _stdio
import os
import sys

from hermesctx import lazyre
from hermesctx.errors import FileIOError, InputError
from hermesctx.record import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any, BinaryIO

_BOM = b"\xef\xbb\xbf"
# The json module handles a process's first SMALL_BYTES of JSON, read and written; past them orjson
# is imported and does the rest (a file known to be larger: from its start). Measured (CPU, median
# of 21 runs): importing json costs ~12 ms, orjson ~20 ms (a bare interpreter start ~15 ms); json
# reads and writes more slowly than orjson, so past ~1 MiB handled it may cost more than it saves.
SMALL_BYTES = 1 << 20
_small_left = SMALL_BYTES  # what the json module may still handle in this process
_orjson: Any = None  # the module, once imported
_json_coders: Any = None  # (compact encoder, pretty encoder), once json is imported
READ_DEPTH = 1024  # the deepest nesting orjson reads (and so the readers here): the writers too
# orjson turns an integer outside the 64-bit range (20+ digits, or 19 after a minus sign) into
# a float (:func:`_rounded` looks for one)
_LONG_DIGITS = lazyre.compile(rb"\d{19}")
_INF = float("inf")


class _Deferred(type(sys)):
    """A module that is not imported yet: the first attribute read on it imports the real one."""

    def __getattr__(self, name: str):
        import importlib

        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        return getattr(importlib.import_module(self.__name__), name)


def _small(size: int) -> bool:
    """Whether the json module takes a document of ``size`` bytes, charged to its budget (0:
    output, charged once written): only while orjson is not imported, by us or anyone."""
    global _small_left
    if size > _small_left or _small_left <= 0 or "orjson" in sys.modules:
        return False
    _small_left -= size
    return True


def expect_input(size: int) -> None:
    """An input of ``size`` bytes is coming (a file's size, known before it is read): beyond
    the json module's budget, orjson reads it from the first line, not after the budget."""
    global _small_left
    if size > _small_left:
        _small_left = 0


def expect_files(paths: list[str]) -> None:
    """:func:`expect_input` for files read one after the other (a shell glob of many small
    transcripts): the size of the first few times their number (a stat of each of a thousand
    files would cost more than it can save)."""
    if _small_left <= 0:
        return
    sample = paths[:16]
    total = 0
    for path in sample:
        try:
            total += os.stat(path).st_size
        except (OSError, ValueError):  # stdin, or a file the read will report
            pass
    expect_input(total * len(paths) // len(sample))


def _orjson_module() -> Any:
    """orjson, imported on first use with ``inspect`` deferred: orjson imports dataclasses, and
    dataclasses imports inspect (with ast, dis and tokenize, ~40 % of orjson's import) only to
    word the docstring of a dataclass defined without one. While orjson is imported, ``import
    inspect`` gives a stand-in that imports the real module when an attribute of it is first
    read; afterwards ``import inspect`` anywhere gives the real module, as always."""
    global _orjson
    if _orjson is None:
        stand_in = None
        if "inspect" not in sys.modules:
            stand_in = sys.modules["inspect"] = _Deferred("inspect")
        try:
            import orjson
        finally:
            if stand_in is not None and sys.modules.get("inspect") is stand_in:
                del sys.modules["inspect"]
        _orjson = orjson
    return _orjson


@record
class Document:
    """One parsed document and where it came from."""

    data: Any
    index: int  # 0-based position in the stream
    line: int | None  # 1-based line number for JSON Lines input, None for a single document
    raw: bytes | None = None  # the bytes it was parsed from, when asked for (``keep_raw``)
    file: str | None = None  # the FILE it was read from, when a command reads several

    @property
    def where(self) -> str | None:
        """Where it was read, for messages: ``line 3``, ``b.jsonl: line 3``, ``a.json``."""
        place = self.place
        if self.file is None:
            return place
        return f"{self.file}: {place}" if place else self.file

    @property
    def place(self) -> str | None:
        return f"line {self.line}" if self.line is not None else None


INVALID: Any = object()  # what :func:`try_loads` gives for bytes that are not one JSON value


def _bytes(raw: bytes | str) -> bytes:
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogatepass")
    if raw.startswith(_BOM):
        raw = raw[len(_BOM) :]
    return raw


def loads(raw: bytes | str) -> Any:
    """Parse one JSON value exactly; raise :class:`InputError` with a position on failure."""
    raw = _bytes(raw)
    if _small(len(raw)):
        try:
            return _unique_keys(_stdlib_loads(raw), raw, small=True)
        except RecursionError:  # (deeper than the stdlib's stack goes: orjson reads 1,024 levels)
            pass
    return _unique_keys(_loads(raw), raw)


class _DuplicateKey(Exception):
    """An object of the text names a key twice (``args[0]``: the key)."""


def _pairs(pairs: list) -> dict:
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return value


def _duplicate_key(raw: bytes) -> str | None:
    """The first key an object of ``raw`` (one JSON value) names twice, or None (also when
    it is not JSON the stdlib reads: the reader's verdict is the one given)."""
    import json

    try:
        json.loads(raw.decode("utf-8", "surrogatepass"), object_pairs_hook=_pairs, parse_constant=_refuse_constant)
    except _DuplicateKey as dup:
        return dup.args[0]
    except Exception:  # noqa: BLE001 - not JSON here
        return None
    return None


def _unique_keys(value: Any, raw: bytes, *, small: bool = False) -> Any:
    """``value``, unless an object of ``raw`` names a key twice: readers disagree on which value
    wins (orjson, Python: the last; others: the first), so strict input refuses it (exit 3);
    ``--lenient`` takes the last, as Hermes does. Cheap when ``raw`` is written as we write
    (compact JSON Lines): written again, the value gives the same bytes, so no key was lost;
    otherwise the text is scanned for the key."""
    if type(value) is not dict and type(value) is not list:
        return value
    from hermesctx.messages import is_lenient

    if is_lenient():
        return value
    try:
        again = _stdlib_dumps(value, False) if small else _orjson_module().dumps(value, option=_orjson.OPT_APPEND_NEWLINE)
    except Exception:  # noqa: BLE001 - (what orjson cannot write: the scan decides)
        again = None
    if again is not None and (again == raw or (raw[-1:] != b"\n" and again[:-1] == raw)):
        return value
    if b":" not in raw:
        return value
    key = _duplicate_key(raw)
    if key is not None:
        shown = key if len(key) <= 40 else key[:39] + "…"
        raise InputError(f"an object names the key {shown!r} twice (JSON readers disagree on which "
                         "value wins)", hint="--lenient takes the last, as Hermes does")
    return value


def _within_depth(value: Any, raw: bytes) -> Any:
    """``value``, parsed from ``raw`` by the stdlib's scanner, unless it nests deeper than
    orjson reads (:data:`READ_DEPTH`; the command line's stack would let the scanner go
    further): every reader here has one limit. Walked only when ``raw`` has that many brackets."""
    if raw.count(b"[") + raw.count(b"{") > READ_DEPTH and _deeper_than(value, READ_DEPTH):
        raise InputError("not JSON we can read: nesting too deep")
    return value


def try_loads(raw: bytes | str) -> Any:
    """:func:`loads`, or :data:`INVALID` where it raises: whether a line is one whole JSON
    value, when nobody reads the error (a key named twice is still refused: it is one JSON
    value)."""
    raw = _bytes(raw)
    if _small(len(raw)):
        try:
            value = _stdlib_loads(raw)
        except RecursionError:
            pass
        except InputError:
            return INVALID
        else:
            return _unique_keys(value, raw, small=True)
    try:
        value = _loads(raw)
    except InputError:
        return INVALID
    return _unique_keys(value, raw)


def _finite_float(text: str) -> float:
    """A JSON number as a float; one beyond the float range is refused (a ValueError), not
    made infinite."""
    value = float(text)
    if value == _INF or value == -_INF:
        raise ValueError(f"number {text[:40]} is out of range")
    return value


def _refuse_constant(name: str) -> None:
    """NaN, Infinity and -Infinity are not JSON."""
    raise ValueError(f"{name} is not valid JSON")


def _loads(raw: bytes) -> Any:
    """orjson, and the stdlib parser for what orjson cannot give exactly or refuses."""
    orjson = _orjson_module()
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        pass  # let the stdlib parser decide, and word the error
    else:
        if not _rounded(value, raw):
            return value
    try:
        return _stdlib_loads(raw)
    except RecursionError:
        raise InputError("not JSON we can read: nesting too deep") from None


def _stdlib_loads(raw: bytes) -> Any:
    """The json module's value of ``raw`` (NaN, Infinity and numbers beyond the float range
    refused), an :class:`InputError` in its words, or RecursionError (deeper than its stack)."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"input is not valid UTF-8 (byte {exc.start})") from None
    import json

    try:
        return _within_depth(json.loads(text, parse_constant=_refuse_constant,
                                        parse_float=_finite_float), raw)
    except json.JSONDecodeError as exc:
        if not text.strip():
            raise InputError("empty input", hint="expected a JSON document") from None
        raise InputError(
            f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except ValueError as exc:
        raise InputError(f"not JSON: {exc}") from None


def _rounded(value: Any, raw: Any) -> bool:
    """Whether orjson may have turned an integer of ``raw`` (bytes or text) beyond 64 bits into
    a float of ``value`` (the walk first: the byte scan is slow, and only such a float can have
    been hit)."""
    if not _huge_float(value):
        return False
    if not isinstance(raw, bytes):
        raw = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else bytes(raw)
    return _LONG_DIGITS.search(raw) is not None


# A float orjson made of an integer outside the 64-bit range is at least this far from zero
# (2**64 and up, or -2**63 - 1 and down, rounded; a larger integer is refused as infinite): the
# floats of a usage record or a cost never send a line to the byte scan.
_HUGE = 2.0 ** 63


def _huge_float(value: Any) -> bool:
    """Whether a parsed value holds a float of magnitude >= 2**63 anywhere (iterative: any
    nesting depth; only the containers go on the stack, the leaves, mostly strings, are looked
    at where they are)."""
    kind = type(value)
    if kind is float:
        return abs(value) >= _HUGE
    if kind is not dict and kind is not list:
        return False
    stack = [value]
    pop, push = stack.pop, stack.append
    while stack:
        item = pop()
        for child in item.values() if type(item) is dict else item:
            kind = type(child)
            if kind is str:  # the usual leaf, told apart first
                continue
            if kind is dict or kind is list:
                push(child)
            elif kind is float and abs(child) >= _HUGE:
                return True
    return False


def loads_like_json(text: Any) -> Any:
    """``json.loads(text)``, the same value and the same exceptions: json itself within the
    small budget (:func:`_small`; unless the text is too deep for it, which orjson reads), else
    through orjson when it gives ``json.loads``'s value (it refuses NaN and lone surrogates, and
    turns 20-digit integers into floats: those go to the stdlib parser)."""
    if type(text) is str and _small(len(text)):
        import json

        try:
            return json.loads(text)
        except RecursionError:
            pass
    orjson = _orjson_module()
    try:
        value = orjson.loads(text)
    except (orjson.JSONDecodeError, TypeError):
        import json

        return json.loads(text)
    if _rounded(value, text):
        import json

        return json.loads(text)
    return value


def dumps(value: Any, *, pretty: bool = False) -> bytes:
    """Serialize one value as UTF-8 JSON with a trailing newline: orjson's bytes."""
    global _small_left
    if _small(0):
        data = _stdlib_dumps(value, pretty)
        if data is not None:
            _small_left -= len(data)
            return data
    orjson = _orjson_module()
    try:
        if pretty:
            return orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
        return orjson.dumps(value, option=orjson.OPT_APPEND_NEWLINE)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        # Big integers or lone surrogates: the stdlib writes them, and a lone surrogate
        # becomes its JSON escape (\udXXX) so the bytes stay valid UTF-8.
        # Deeper than orjson writes (254 levels): the stdlib, given the stack the readers' limit
        # (1,024 levels) needs; deeper than that was never read, and is refused (exit 3).
        import json

        if _deeper_than(value, READ_DEPTH):
            raise InputError(f"nesting too deep to write (more than {READ_DEPTH:,} levels, "
                             "what a JSON reader here takes)") from None
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, READ_DEPTH * 3 + 200))
        try:
            text = json.dumps(value, ensure_ascii=False, indent=2 if pretty else None,
                              separators=None if pretty else (",", ":"))
        except RecursionError:
            raise InputError(f"nesting too deep to write (more than {READ_DEPTH:,} levels, "
                             "what a JSON reader here takes)") from None
        finally:
            sys.setrecursionlimit(limit)
        return text.encode("utf-8", "backslashreplace") + b"\n"


# a float the json module writes with an exponent (1e-07, 1e+16; orjson: 1e-7, 1e16, and 0.00001
# for 1e-05), where a value starts and ends: its text goes to orjson (a string holding such a text
# between JSON's separators too, which costs only time)
_EXPONENT = lazyre.compile(r"(?:^|[\[,:]|: |\n +)-?\d+(?:\.\d+)?e[-+]\d+(?=[,\]}\n]|$)")


def _stdlib_dumps(value: Any, pretty: bool) -> bytes | None:
    """orjson's bytes for ``value`` written by the json module, or None where they may differ:
    what json writes otherwise (NaN, a type orjson writes its own way), a float with an
    exponent, a lone surrogate (orjson refuses it), nesting deeper than json's stack. json and
    orjson escape strings alike and lay out ``indent=2`` alike; what orjson refuses and json
    writes (big integers, keys that are not strings) is what orjson's path has json write."""
    global _json_coders
    if _json_coders is None:
        import json

        _json_coders = (json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False),
                        json.JSONEncoder(ensure_ascii=False, indent=2, allow_nan=False))
    try:
        text = _json_coders[pretty].encode(value)
        data = text.encode("utf-8")
    except (ValueError, TypeError, RecursionError, UnicodeEncodeError):
        return None
    if ("e-" in text or "e+" in text) and _EXPONENT.search(text):
        return None
    return data + b"\n"


def _deeper_than(value: Any, depth: int) -> bool:
    """Whether ``value`` nests containers more than ``depth`` levels deep (iterative)."""
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if type(item) is dict:
            children = item.values()
        elif type(item) is list:
            children = item
        else:
            continue
        if level > depth:
            return True
        stack.extend((child, level + 1) for child in children if type(child) in (dict, list))
    return False


_encoders: dict = {}  # (ensure_ascii, separators, sort_keys, default) -> its json.JSONEncoder


def dumps_like_json(value: Any, *, ensure_ascii: bool = True, separators: tuple[str, str] | None = None,
                    sort_keys: bool = False, default: Callable[[Any], Any] | None = None) -> str:
    """``json.dumps(value, ...)`` for these keywords (no ``indent``): one encoder kept per set
    of keywords, where ``json.dumps`` builds one per call."""
    key = (ensure_ascii, separators, sort_keys, default)
    encoder = _encoders.get(key)
    if encoder is None:
        import json

        encoder = _encoders[key] = json.JSONEncoder(ensure_ascii=ensure_ascii, separators=separators,
                                                    sort_keys=sort_keys, default=default)
    return encoder.encode(value)


GZIP_MAGIC = b"\x1f\x8b"


# What gzip input may inflate to when no cap is given (``--max-input-size``, ``input.max_bytes``):
# 4 GiB, and no more than INFLATE_RATIO times the compressed bytes read so far once past
# INFLATE_FLOOR (so min(4 GiB, 64x the compressed size) over the whole input, and a bomb, which
# inflates 1,000x, stops after ~9 MB, before its first line is whole). Real transcripts
# compress 4-20x.
INFLATE_CAP = 4 << 30
INFLATE_RATIO = 64
INFLATE_FLOOR = 8 << 20
_SIZE = lazyre.compile(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b?)\s*", flags=lazyre.IGNORECASE | lazyre.ASCII)


def parse_size(text: Any) -> int | None:
    """A byte count from ``4294967296``, ``512M``, ``4GiB``, ``1.5g`` (powers of 1024); None
    when ``text`` is none of these (or not above zero)."""
    if isinstance(text, bool):
        return None
    if isinstance(text, int):
        return text if text > 0 else None
    if not isinstance(text, str):
        return None
    match = _SIZE.fullmatch(text)
    if match is None or len(match.group(1)) > 30:
        return None
    size = int(float(match.group(1)) * (1 << (10 * " kmgt".index(match.group(2).lower() or " "))))
    return size if size > 0 else None


def shown_size(size: int) -> str:
    """``4 GiB``, ``96 MiB``, ``1000 bytes``: a cap as a person reads it."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if size >= 1 << shift and size % (1 << (shift - 10 if shift > 10 else 0)) == 0:
            value = size / (1 << shift)
            return f"{value:g} {unit}" if value == int(value) or value >= 10 else f"{value:.1f} {unit}"
    return f"{size} bytes"


def decompressed(stream: BinaryIO, limit: Callable[[], int | None] | None = None) -> BinaryIO:
    """``stream`` itself, or, when its first bytes are the gzip magic (whatever the file is
    called, stdin too), a stream of its decompressed bytes. Only two bytes are looked at, and
    nothing is consumed: plain input costs nothing more. ``limit()`` (asked only for gzip
    input): the most it may inflate to, None for the default (:data:`INFLATE_CAP`, at most
    :data:`INFLATE_RATIO` times the compressed size); past it reading is an :class:`InputError`."""
    peek = getattr(stream, "peek", None)
    if peek is None:
        stream = _stdio.BufferedReader(stream)  # type: ignore[arg-type]
        peek = stream.peek
    try:
        head = peek(2)[:2]
    except (OSError, ValueError):
        return stream
    if head != GZIP_MAGIC:
        return stream
    inflated = _stdio.BufferedReader(_Gunzip(stream, limit() if limit is not None else None), 1 << 20)
    inflated.gzipped = True  # type: ignore[attr-defined]  # (an error names it as gzip)
    return inflated  # type: ignore[return-value]


class _Counted(_stdio.RawIOBase):
    """The compressed stream, counting what was read from it."""

    def __init__(self, stream: BinaryIO):
        super().__init__()
        self._stream = stream
        self.count = 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        data = self._stream.read(size)
        self.count += len(data)
        return data

    def readinto(self, buffer: Any) -> int:  # (not used by gzip: for completeness)
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def seekable(self) -> bool:
        return False

    def close(self) -> None:  # the compressed stream belongs to the caller
        super().close()


class _Gunzip(_stdio.RawIOBase):
    """The raw side of a decompressed stream: damaged data is an :class:`InputError`, and so
    is inflating past the cap (checked on every read, before the bytes reach a line); it can
    seek only when the compressed stream can (a pipe cannot be read twice)."""

    def __init__(self, stream: BinaryIO, limit: int | None = None):
        import gzip

        super().__init__()
        self._seekable = False
        try:
            self._seekable = bool(stream.seekable())
        except (OSError, ValueError, AttributeError):
            pass
        self._counted = None if self._seekable else _Counted(stream)
        self._source = stream
        self._gz = gzip.GzipFile(fileobj=self._counted or stream, mode="rb")
        self.name = getattr(stream, "name", None)  # the file's path: subagent files are found beside it
        self._limit = limit
        self._inflated = 0
        try:
            self._start = stream.tell() if self._seekable else 0
        except (OSError, ValueError):
            self._start = 0

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return False

    def seekable(self) -> bool:
        return self._seekable

    def _compressed(self) -> int:
        if self._counted is not None:
            return self._counted.count
        try:
            return self._source.tell() - self._start
        except (OSError, ValueError):
            return 0

    def readinto(self, buffer: Any) -> int:
        import zlib

        try:
            n = self._gz.readinto(buffer)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"input is gzip-compressed but cannot be decompressed: {exc}") from None
        self._inflated = max(self._inflated, self._gz.tell())
        if self._inflated > INFLATE_FLOOR or (self._limit is not None and self._inflated > self._limit):
            self._check()
        return n

    def _check(self) -> None:
        if self._limit is not None:
            if self._inflated > self._limit:
                raise InputError(f"gzip input inflates past the input size cap ({shown_size(self._limit)})",
                                 hint="--max-input-size or input.max_bytes raises it")
            return
        compressed = self._compressed()
        if self._inflated > INFLATE_CAP or self._inflated > INFLATE_RATIO * compressed:
            cap = min(INFLATE_CAP, max(INFLATE_FLOOR, INFLATE_RATIO * compressed))
            raise InputError(f"gzip input inflates past the input size cap ({shown_size(cap)}: the default, "
                             f"{shown_size(INFLATE_CAP)} and at most {INFLATE_RATIO}x the compressed size)",
                             hint="--max-input-size or input.max_bytes raises it")

    def seek(self, offset: int, whence: int = 0) -> int:
        if not self._seekable:
            raise OSError("cannot seek a decompressed pipe")
        return self._gz.seek(offset, whence)

    def tell(self) -> int:
        return self._gz.tell()

    def close(self) -> None:  # the compressed stream belongs to the caller
        super().close()


class Lines:
    """Lines read, in order, as a list gives them (``len``, iteration, ``append``); a run of
    identical blank lines is kept once with its count (input of a million newlines before its
    first line costs no million list items)."""

    def __init__(self) -> None:
        self._runs: list[list] = []  # [line, count]
        self._len = 0

    def append(self, raw: bytes) -> None:
        self._len += 1
        if self._runs and self._runs[-1][0] == raw and raw.isspace():
            self._runs[-1][1] += 1
        else:
            self._runs.append([raw, 1])

    def __len__(self) -> int:
        return self._len

    def __bool__(self) -> bool:
        return self._len > 0

    def __iter__(self) -> Iterator[bytes]:
        for raw, count in self._runs:
            for _ in range(count):
                yield raw


def first_line(stream: Iterable[bytes]) -> tuple[Lines, bytes]:
    """Read up to the first non-blank line: the lines read (as they are) and that line, its BOM
    removed when it opens the input. An input with no such line is an error."""
    head = Lines()
    for raw in stream:
        head.append(raw)
        if raw.strip():
            return head, raw[len(_BOM):] if len(head) == 1 and raw.startswith(_BOM) else raw
    raise InputError("empty input", hint="expected a JSON document or JSON Lines")


def read_documents(stream: BinaryIO, *, jsonl: bool | None = None, keep_raw: bool = False,
                   first: tuple[list[bytes], bytes, Any] | None = None) -> Iterator[Document]:
    """Yield the documents of ``stream``.

    ``jsonl=None`` detects: when the first non-blank line is a whole JSON value the input is
    JSON Lines (a single one-line document is the same thing); otherwise the whole input is one
    (pretty-printed) document. ``jsonl=True`` forces line mode, ``False`` whole-input mode.
    Blank lines between JSON Lines are skipped. ``keep_raw`` keeps each document's bytes.
    ``first``: the input's first non-blank line, already read (:func:`first_line`) and parsed by
    the caller, as ``(head, line, value)``; ``stream`` then holds the lines after it.
    """
    if jsonl is False:
        yield _whole(stream.read(), keep_raw)
        return
    if first is not None:
        head, first_raw, value = first
        line_no = len(head)
    else:
        head, first_raw = first_line(stream)
        line_no = len(head)
        try:
            value = loads(first_raw) if jsonl else try_loads(first_raw)
        except InputError as err:
            raise err.located(f"line {line_no}") from None
        if value is INVALID:
            yield _whole(first_raw + stream.read(), keep_raw)
            return
    yield Document(value, 0, line_no or None, first_raw if keep_raw else None)  # (0: read whole)
    index = 1
    for raw in stream:
        line_no += 1
        if raw.isspace():  # (not raw.strip(): that copies every line)
            continue
        try:
            value = loads(raw)
        except InputError as err:
            raise err.located(f"line {line_no}") from None
        yield Document(value, index, line_no, raw if keep_raw else None)
        index += 1


LONG_INPUT = 16 << 20  # bytes: an input this long gets :func:`keep_freed_memory`
_tuned = False


def keep_freed_memory() -> None:
    """Have glibc's allocator keep the memory a finished document freed, for the next one.

    By default every block over 128 KiB (a long JSON line, its parsed strings, the output) is
    its own mmap, unmapped again when freed, and free memory at the top of the heap is given
    back at once: a batch of large transcripts then spends a good part of its time in the
    kernel, mapping, faulting in and unmapping the same pages (the 200 MB bench batch: about
    0.12 s of system time per command, 0.03-0.07 s with this; peak RSS no higher). Blocks up to
    32 MiB now come from the heap and up to 64 MiB of free heap is kept: memory stays flat
    over a batch. Called once, before a long input is opened (measured: set after the input's
    read buffer was allocated, it saves almost nothing); a small input does not pay for
    ctypes; a libc without ``mallopt`` (musl, macOS) is left as it is."""
    global _tuned
    if _tuned:
        return
    _tuned = True
    import sys

    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
        mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD
        mallopt(-1, 64 << 20)  # M_TRIM_THRESHOLD
    except (OSError, AttributeError, ImportError):
        pass


def read_entries(stream: BinaryIO, warn: Callable[[str], None]) -> Iterator[tuple[Any, str]]:
    """``(value, where)`` for the entries of a JSON Lines dataset read as Hermes reads one
    (``trajectory``): a line that is not JSON is skipped with a warning. The same detection as
    :func:`read_documents` first: when the first non-blank line is no whole JSON value the input
    is one (pretty-printed) document, its entries the items of an array (``record N``) or the
    document itself; it must then be JSON (else :class:`InputError`). Empty input: no entries."""
    try:
        head, first = first_line(stream)
    except InputError:
        return
    value = try_loads(first)
    if value is INVALID:
        value = _whole(first + stream.read()).data
        if isinstance(value, list):
            for k, item in enumerate(value, 1):
                yield item, f"record {k}"
        else:
            yield value, "document"
        return
    number = len(head)
    yield value, f"line {number}"
    for raw in stream:
        number += 1
        if raw.isspace():
            continue
        try:
            value = loads(raw)
        except InputError as err:
            warn(f"line {number}: {err}; skipped")
            continue
        yield value, f"line {number}"


def _whole(raw: bytes, keep_raw: bool = False) -> Document:
    if not raw.strip():
        raise InputError("empty input", hint="expected a JSON document")
    return Document(loads(raw), 0, None, raw if keep_raw else None)


def read_json_file(path: str) -> Any:
    """Read one JSON document from a file named on the command line (``--usage``, ``--against``)."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as exc:
        raise FileIOError(f"cannot read {path}: {exc.strerror}") from None
    try:
        return loads(raw)
    except InputError as err:
        raise err.located(path) from None


def write_atomic(path: str, data: bytes, *, mode: int = 0o644) -> None:
    """Write ``data`` to ``path`` through a temp file in the same directory, fsync, rename."""
    _write_atomic(path, data, mode, durable=True)


def write_atomic_nosync(path: str, data: bytes, *, mode: int = 0o644) -> None:
    """:func:`write_atomic` without the fsync: readers still see the old file or the whole
    new one, never a part, but a crash may lose it. For many files in a hot path (spill)."""
    _write_atomic(path, data, mode, durable=False)


def _write_atomic(path: str, data: bytes, mode: int, *, durable: bool) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    import tempfile  # only commands that write files need it: not on every start

    fd, tmp = tempfile.mkstemp(prefix=".hermesctx-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
