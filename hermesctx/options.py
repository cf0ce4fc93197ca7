"""A stage's options, declared once: each field of a stage's frozen ``Options`` record
(:mod:`hermesctx.record`) carries its default, its flag, its config key, its range and its help.

From that one declaration come the click options (:mod:`hermesctx.cli.options`), the options
a ``pipeline:`` entry of the config file accepts (:func:`from_mapping`), the flags a stage puts
over the config file (:func:`flags`), and through the click tree the man pages and the shell
completions. A field whose value is None was not given: the config key (or the stage's own
default) decides.
"""

from __future__ import annotations

from hermesctx.budgets import RULES
from hermesctx.errors import UsageError
from hermesctx.record import Field, field, fields, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


@record(frozen=True)
class Spec:
    flag: str  # the long flag, e.g. --protect-last-n (--x/--no-x for a negatable boolean)
    help: str = ""
    key: str | None = None  # the config key the flag overrides
    kind: type = str  # str, int, float or bool
    low: float | None = None
    high: float | None = None
    open_low: bool = False  # low itself excluded
    choices: tuple[str, ...] | None = None
    multiple: bool = False  # repeatable: a tuple of strings
    short: str | None = None  # e.g. -m
    metavar: str | None = None
    path: str | None = None  # "file" or "dir"
    show_default: bool = False
    aliases: tuple[str, ...] = ()  # old spellings, accepted and hidden
    own_range: bool = False  # the flag's range differs from the key's: not checked as the key


def option(default: Any = None, flag: str = "", help: str = "", **spec: Any) -> Any:
    """A record field declaring one option (see :class:`Spec`)."""
    return field(default=default, metadata=metadata(flag, help, **spec))


def metadata(flag: str, help: str = "", **spec: Any) -> dict:  # noqa: A002
    """The ``metadata`` of a field declaring one option (see :class:`Spec`): what a plugin's
    ``Options`` dataclass gives ``dataclasses.field(default=..., metadata=metadata("--x", ...))``."""
    return {"option": Spec(flag, help, **spec)}


def specs(cls) -> list[tuple[Field, Spec]]:
    return [(f, f.metadata["option"]) for f in fields(cls) if "option" in f.metadata]


def flags(options) -> dict[str, Any]:
    """The config keys the given options override (None: not given), for
    :meth:`hermesctx.context.Context.settings_with`."""
    return {spec.key: getattr(options, f.name) for f, spec in specs(type(options))
            if spec.key and not spec.own_range}


def from_mapping(cls, values: Mapping[str, Any], where: str, command: str):
    """``cls`` from a ``pipeline:`` entry's options: field names or flag names (``if_needed``,
    ``if-needed``, an old spelling), each value checked as its flag checks it."""
    by_name: dict[str, tuple[Field, Spec]] = {}
    for f, spec in specs(cls):
        for name in (f.name, spec.flag.split("/")[0], *spec.aliases):
            by_name[name.lstrip("-").replace("-", "_")] = (f, spec)
    given: dict[str, Any] = {}
    for key, value in values.items():
        found = by_name.get(str(key).replace("-", "_"))
        if found is None:
            raise UsageError(f"{where}: unknown option {key!r} for {command}",
                             hint=f"see `hermesctx {command} --help`")
        f, spec = found
        try:
            given[f.name] = convert(spec, value)
        except ValueError as exc:
            raise UsageError(f"{where}: {key}: {exc}") from None
    return cls(**given)


_TRUE = ("true", "1", "yes", "y", "on", "t")
_FALSE = ("false", "0", "no", "n", "off", "f")


def convert(spec: Spec, value: Any) -> Any:
    """A config value as the flag would have it, or ValueError saying why not."""
    if value is None:
        return () if spec.multiple else None
    if spec.multiple:  # one value, a list, or {K: V} for K=V
        if isinstance(value, dict):
            value = [f"{k}={v}" for k, v in value.items()]
        elif not isinstance(value, (list, tuple)):
            value = [value]
        return tuple(str(v) for v in value)
    if spec.kind is bool:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in _TRUE or text in _FALSE:
            return text in _TRUE
        raise ValueError(f"{value!r} is not a valid boolean.")
    if spec.kind in (int, float):
        if isinstance(value, bool):
            raise ValueError(f"{value!r} is not a valid {_words(spec.kind)}.")
        try:
            number = spec.kind(value)
        except (TypeError, ValueError):
            raise ValueError(f"{value!r} is not a valid {_words(spec.kind)}.") from None
        low_ok = spec.low is None or (number > spec.low if spec.open_low else number >= spec.low)
        if not low_ok or (spec.high is not None and number > spec.high):
            raise ValueError(f"{number} is not in the range {_range(spec)}.")
        return number
    value = str(value)
    if spec.choices is not None and value not in spec.choices:
        raise ValueError(f"{value!r} is not one of {', '.join(map(repr, spec.choices))}.")
    return value


def _words(kind: type) -> str:
    return "integer" if kind is int else "float range" if kind is float else kind.__name__


def _range(spec: Spec) -> str:
    low = "" if spec.low is None else f"{spec.low}{'<' if spec.open_low else '<='}x"
    return low + ("" if spec.high is None else f"<={spec.high}") if low else f"x<={spec.high}"


# --- the options several stages share --------------------------------------------------------

@record(frozen=True)
class ModelOptions:
    """Which model the transcript is for: its window, encoding and prices."""

    model: str | None = option(flag="--model", short="-m", key="model.default",
                               help="Model name: context window, encoding, prices.")
    context_length: int | None = option(flag="--context-length", kind=int, low=1, key="model.context_length",
                                        help="Context window in tokens (overrides the model table).")
    provider: str | None = option(flag="--provider", key="model.provider",
                                  help="Provider name (openai-codex selects the Codex context table).")


@record(frozen=True)
class BudgetOptions(ModelOptions):
    """How the compression budgets follow from the window."""

    threshold: float | None = option(flag="--threshold", kind=float, key="compression.threshold",
                                     help="Fraction of the window that triggers compression (default 0.50).")
    target_ratio: float | None = option(flag="--target-ratio", kind=float, key="compression.target_ratio",
                                        help="Tail budget as a fraction of the threshold (default 0.20).")
    budget_rules: str | None = option(flag="--budget-rules", choices=RULES, key="compression.budget_rules",
                                      help="documented (default) or hermes-0.19 (Hermes's runtime floors).")
    max_tokens: int | None = option(flag="--max-tokens", kind=int, low=1, key="model.max_tokens",
                                    help="Output reservation subtracted from the window (hermes-0.19 rules).")
