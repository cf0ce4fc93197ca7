"""Regular expressions compiled on first use, not at import.

Importing :mod:`re` (with :mod:`enum`) costs about half a bare interpreter start, and compiling
the package's ~150 patterns several times that; a ``hermesctx prune`` on a tiny file uses few or
none of them. ``lazyre.compile(pattern, flags)`` is written where ``re.compile`` would be: the
first attribute looked up on it (``sub``, ``search``, ``pattern``, ...) imports re and compiles
the pattern, and each attribute is then kept on the object, so later uses cost one plain
attribute read, as on a compiled pattern. The flags are re's own values (a test checks them),
so a module needs no ``import re`` to name them.
"""

from __future__ import annotations

ASCII = A = 256
IGNORECASE = I = 2  # noqa: E741 (re's own name)
MULTILINE = M = 8
DOTALL = S = 16
VERBOSE = X = 64


class compile:  # noqa: N801 (used as re.compile is)
    """A pattern compiled when first used (see the module docstring)."""

    def __init__(self, pattern: str | bytes, flags: int = 0):
        self._args = (pattern, flags)

    def __getattr__(self, name: str):
        if name.startswith("__") or name == "_args":
            raise AttributeError(name)
        import re

        value = getattr(re.compile(*self._args), name)
        setattr(self, name, value)
        return value

    def __repr__(self) -> str:
        return f"lazyre.compile({self._args[0]!r}, {self._args[1]})"
