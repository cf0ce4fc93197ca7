"""Compression budgets derived from a context window. Hermes's documentation and its code disagree, so both are offered.

Two rule sets:

* ``documented`` (default): what Hermes's documentation says.
  ``threshold_tokens = int(ctx × threshold)``, ``tail_token_budget = int(threshold_tokens ×
  target_ratio)``, ``max_summary_tokens = min(int(ctx × 0.05), 12,000)``.
* ``hermes-0.19``: what Hermes Agent 0.19.0 computes at run time: per-model
  threshold overrides, the 0.75 floor below 512K, the output reservation (``max_tokens``), the
  64,000 minimum with its 85 % fallback, the target-ratio clamp and a 10,000 summary cap.

Every product is a float product truncated with ``int()``, as in Hermes.
"""

from __future__ import annotations

from hermesctx.record import asdict, record

DOCUMENTED = "documented"
HERMES_019 = "hermes-0.19"
RULES = (DOCUMENTED, HERMES_019)

DEFAULT_THRESHOLD = 0.50
DEFAULT_TARGET_RATIO = 0.20
SUMMARY_FLOOR = 2_000
SUMMARY_RATIO = 0.20
HYGIENE_RATIO = 0.85  # gateway hygiene line (int(ctx × 0.85), no floors)
HYGIENE_WARN_RATIO = 0.95

_SUMMARY_CAP = {DOCUMENTED: 12_000, HERMES_019: 10_000}
_SMALL_WINDOW = 512_000
_SMALL_WINDOW_FLOOR = 0.75
_MINIMUM_THRESHOLD = 64_000
_FALLBACK_TRIGGER = 0.85


@record(frozen=True)
class Budgets:
    rules: str
    context_length: int
    threshold: float  # as configured
    threshold_percent: float  # as applied
    target_ratio: float  # as applied
    threshold_tokens: int
    tail_token_budget: int
    max_summary_tokens: int
    hygiene_tokens: int
    hygiene_warn_tokens: int
    max_tokens: int | None = None
    override: dict | None = None  # a per-model threshold override, when one applied

    def as_dict(self) -> dict:
        out = asdict(self)
        if out["max_tokens"] is None:
            del out["max_tokens"]
        if out["override"] is None:
            del out["override"]
        return out


def compute_budgets(context_length: int, *, threshold: float = DEFAULT_THRESHOLD,
                    target_ratio: float = DEFAULT_TARGET_RATIO, rules: str = DOCUMENTED,
                    max_tokens: int | None = None, model: str | None = None,
                    provider: str | None = None, codex_autoraise: bool = True) -> Budgets:
    if rules not in RULES:
        raise ValueError(f"unknown budget rules {rules!r} (choose from {', '.join(RULES)})")
    ctx = context_length
    hygiene = int(ctx * HYGIENE_RATIO), int(ctx * HYGIENE_WARN_RATIO)
    max_summary = min(int(ctx * 0.05), _SUMMARY_CAP[rules])
    if rules == DOCUMENTED:
        threshold_tokens = int(ctx * threshold)
        return Budgets(rules, ctx, threshold, threshold, target_ratio, threshold_tokens,
                       int(threshold_tokens * target_ratio), max_summary, *hygiene,
                       max_tokens=max_tokens)

    configured = threshold
    override = None
    model_threshold = model_threshold_override(model, provider, codex_autoraise)
    if model_threshold is not None:
        value, is_codex = model_threshold
        if not is_codex:
            override = {"model": model, "from": configured, "to": value}
            threshold = value
        elif value > threshold + 1e-9:
            override = {"model": model, "from": configured, "to": value}
            threshold = value
    ratio = max(0.10, min(target_ratio, 0.80))
    percent = max(threshold, _SMALL_WINDOW_FLOOR) if ctx and ctx < _SMALL_WINDOW else threshold
    reserve = _coerce_max_tokens(max_tokens)
    threshold_tokens = _threshold_tokens(ctx, percent, reserve)
    return Budgets(rules, ctx, configured, percent, ratio, threshold_tokens,
                   int(threshold_tokens * ratio), max_summary, *hygiene,
                   max_tokens=reserve, override=override)


def _coerce_max_tokens(value) -> int | None:
    if value is None:
        return None
    try:
        value = int(value)
    except (TypeError, ValueError):
        return None
    return value if value > 0 else None


def _threshold_tokens(ctx: int, percent: float, reserve: int | None) -> int:
    window = ctx - (reserve or 0)
    if window <= 0:
        window = ctx
    floored = max(int(window * percent), _MINIMUM_THRESHOLD)
    if window > 0 and floored >= window:
        return max(1, min(int(window * _FALLBACK_TRIGGER), window - 1))
    return floored


_CODEX_AUTORAISE_FAMILIES = ("gpt-5.4", "gpt-5.5", "gpt-5.6")


def model_threshold_override(model: str | None, provider: str | None,
                             codex_autoraise: bool = True) -> tuple[float, bool] | None:
    """Hermes 0.19.0's per-model thresholds: ``(threshold, is_codex_rule)`` or None."""
    bare = (model or "").strip().lower().rsplit("/", 1)[-1]
    provider = (provider or "").strip().lower()
    if bare == "trinity-large-thinking":
        return 0.75, False
    if provider == "openai-codex":
        if codex_autoraise and any(
            bare == fam or bare.startswith((fam + "-", fam + ".")) for fam in _CODEX_AUTORAISE_FAMILIES
        ):
            return 0.85, True
        if bare == "gpt-5.3-codex-spark":
            return 0.70, True
    return None


def summary_budget(middle_tokens: int, max_summary_tokens: int) -> int:
    """Tokens the summary may use: 20 % of the middle, at least 2,000, at most the cap
    (the floor is applied last, so it wins over a cap below 2,000)."""
    return max(SUMMARY_FLOOR, min(int(middle_tokens * SUMMARY_RATIO), max_summary_tokens))


def pressure_percent(tokens: int, context_length: int) -> int:
    """Hermes's displayed pressure: ``round(tokens / ctx × 100)`` (half to even), clamped 0-100."""
    if context_length <= 0:
        return 0
    return max(0, min(100, round(tokens / context_length * 100)))


def resolve_budgets(model: str | None = None, *, context_length: int | None = None,
                    provider: str | None = None, threshold: float | None = None,
                    target_ratio: float | None = None, rules: str | None = None,
                    max_tokens: int | None = None):
    """``(Budgets, ContextWindow)`` for a model (or an explicit window), as every stage that
    derives a tail budget needs it."""
    from hermesctx.models import resolve_context_length

    window = resolve_context_length(model, context_length=context_length, provider=provider)
    budgets = compute_budgets(window.length,
                              threshold=DEFAULT_THRESHOLD if threshold is None else threshold,
                              target_ratio=DEFAULT_TARGET_RATIO if target_ratio is None else target_ratio,
                              rules=rules or DOCUMENTED, max_tokens=max_tokens, model=model,
                              provider=provider)
    return budgets, window
