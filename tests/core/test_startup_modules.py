"""The stand-ins that keep start-up lean: hermesctx.record behaves as dataclasses does for what
hermesctx uses (checked side by side with the same class bodies declared as real dataclasses),
hermesctx.lazyre as re.compile does."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from hermesctx import record as rec


def _declare(decorate, field, frozen):
    @decorate(frozen=frozen)
    class Base:
        a: int
        b: str = "b"
        tags: list = field(default_factory=list)
        secret: str = field(default="s", repr=False)

    @decorate(frozen=frozen)
    class Child(Base):
        c: float = 1.5
        b: str = "child-b"  # a redeclared field keeps its place

    return Base, Child


@pytest.mark.parametrize("frozen", [False, True])
def test_same_behaviour_as_dataclasses(frozen):
    ours = _declare(rec.record, rec.field, frozen)
    theirs = _declare(dataclasses.dataclass, dataclasses.field, frozen)
    for mine, real in zip(ours, theirs):
        assert [f.name for f in rec.fields(mine)] == [f.name for f in dataclasses.fields(real)]
        x, y = mine(1), real(1)
        assert repr(x).split("(", 1)[1] == repr(y).split("(", 1)[1]
        assert {f.name: getattr(x, f.name) for f in rec.fields(x)} == dataclasses.asdict(y)
        assert x == mine(1) and x != mine(2) and x != real(1)
        assert x.tags is not mine(1).tags  # a fresh default per instance
        assert (x.__hash__ is None) == (y.__hash__ is None)
        if frozen:
            assert hash(mine(1, tags=())) == hash(mine(1, tags=()))
            with pytest.raises(AttributeError):
                x.a = 5
        else:
            x.a = 5
            assert x.a == 5
        changed = rec.replace(mine(1), a=9)
        assert changed.a == 9 and changed.b == mine(1).b
        with pytest.raises(TypeError):
            rec.replace(mine(1), nope=1)
    with pytest.raises(TypeError):
        ours[0]()  # a field without a default is required


def test_field_metadata_default_and_class_attribute():
    @rec.record(frozen=True)
    class Options:
        width: int | None = rec.field(default=80, metadata={"option": "w"})
        items: tuple = ()

    (width, items) = rec.fields(Options)
    assert width.metadata == {"option": "w"} and width.default == 80 and items.metadata == {}
    assert Options.width == 80  # the class attribute is the default, as dataclasses leaves it
    assert rec.asdict(Options()) == {"width": 80, "items": ()}
    assert rec.is_record(Options) and rec.is_record(Options()) and not rec.is_record(object())


def test_non_default_after_default_is_refused():
    with pytest.raises(TypeError, match="non-default argument 'b'"):
        @rec.record
        class Bad:
            a: int = 1
            b: int


def test_fields_and_replace_accept_a_real_dataclass():
    @dataclasses.dataclass(frozen=True)
    class Plain:
        a: int = 1

    assert [f.name for f in rec.fields(Plain)] == ["a"]
    assert rec.replace(Plain(), a=2) == Plain(2)
    assert rec.is_record(Plain)



def test_lazyre_flags_are_re_flags_and_patterns_compile_on_use():
    import re

    from hermesctx import lazyre

    for name in ("ASCII", "A", "IGNORECASE", "I", "MULTILINE", "M", "DOTALL", "S", "VERBOSE", "X"):
        assert getattr(lazyre, name) == getattr(re, name).value, name
    pattern = lazyre.compile(r"a(b+)", lazyre.IGNORECASE)
    assert "sub" not in vars(pattern)
    assert pattern.sub("-", "xABBy") == "x-y" and pattern.search("ab").group(1) == "b"
    assert "sub" in vars(pattern)  # kept: the next use is a plain attribute read
    assert pattern.pattern == "a(b+)" and pattern.flags & re.IGNORECASE


def test_orjson_is_imported_without_inspect_and_dataclasses_still_work():
    """jsonio imports orjson with inspect deferred (jsonio._orjson_module): dataclasses gets a
    stand-in, which imports the real inspect when a dataclass first needs it; afterwards
    ``import inspect`` anywhere gives the one real module."""
    code = """
import sys
from hermesctx import jsonio
jsonio._orjson_module()
assert "orjson" in sys.modules and "inspect" not in sys.modules, sorted(sys.modules)
import dataclasses

@dataclasses.dataclass
class Point:
    x: int = 1

assert Point.__doc__ == "Point(x: int = 1)", Point.__doc__
import inspect
assert str(inspect.signature(Point)) == "(x: int = 1) -> None"
assert sys.modules["inspect"] is inspect and type(inspect).__name__ == "module"
assert jsonio.dumps({"p": dataclasses.asdict(Point())}) == b'{"p":{"x":1}}\\n'
print("ok")
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout == "ok\n", proc.stderr


def test_orjson_import_leaves_an_imported_inspect_alone():
    code = ("import inspect, sys\nfrom hermesctx import jsonio\njsonio._orjson_module()\n"
            "assert sys.modules['inspect'] is inspect and 'orjson' in sys.modules\nprint('ok')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout == "ok\n", proc.stderr
