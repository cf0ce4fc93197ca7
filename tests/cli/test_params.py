"""The parameter records (hermesctx/cli/params.py) both the click options and the fast parser's
table are made from."""

from __future__ import annotations

import pytest

from hermesctx.cli.params import FILES, INPUT, KEEP_GOING, UNSET, Param


def test_a_param_is_read_only_and_takes_only_its_fields():
    with pytest.raises(AttributeError):
        FILES.kind = "text"  # type: ignore[misc]
    with pytest.raises(TypeError, match="no field 'nope'"):
        Param(("--x",), "x", nope=1)
    p = Param(("--x",), "x", kind="int", low=1)
    assert (p.kind, p.low, p.high, p.default, p.help) == ("int", 1, None, UNSET, "")
    assert Param(("--y",), "y").kind == "text"  # an undeclared field is the class's default


@pytest.mark.parametrize(("param", "expected"), [
    (FILES, ()),  # the FILE... argument
    (INPUT[1], None),  # --jsonl/--no-jsonl: not given
    (KEEP_GOING[0], None),  # a flag that sets "pass"
    (Param(("--pretty",), "pretty", kind="flag"), False),
    (Param(("--tag",), "tag", multiple=True), ()),
    (Param(("--n",), "n", kind="int", default=4), 4),
])
def test_the_default_click_gives(param, expected):
    assert param.default_value() == expected
