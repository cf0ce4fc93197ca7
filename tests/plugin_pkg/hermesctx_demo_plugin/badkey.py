"""A stage whose option names a config key hermesctx does not have (refused when loaded)."""

from __future__ import annotations

from hermesctx.options import option
from hermesctx.record import record


@record(frozen=True)
class Options:
    level: int | None = option(flag="--level", kind=int, key="demo.level", help="Not a hermesctx setting.")


def build(options, ctx):
    return lambda doc: (doc, {})
