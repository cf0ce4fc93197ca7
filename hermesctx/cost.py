"""What a compaction costs when the provider bills a prompt cache, and the minimum-gain gate
that declines one that would not repay the cache it breaks.

Shared by ``replay`` (every compaction of a replayed session) and ``compress`` (its report's
``cost`` and ``--min-gain`` / ``--min-saving-usd``). Prices come from the price table
(:mod:`hermesctx.pricing`: Hermes's snapshot, then the library's rows).
"""

from __future__ import annotations

from decimal import Decimal

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ANTHROPIC, OPENAI = "anthropic", "openai"
MILLION = Decimal(1_000_000)


def _price_names(model: str | None) -> list[str]:
    """The names a model's price is looked up under: its own, without a date suffix
    (``claude-haiku-4-5-20251001``), and a Codex variant as its base model (``gpt-5.1-codex-max``
    is billed at ``gpt-5.1``'s rates)."""
    if not model:
        return []
    import re

    names = [model]
    undated = re.sub(r"-\d{8}$", "", model)
    base = re.sub(r"-codex(-max|-mini)?$", "", undated)
    for name in (undated, base):
        if name not in names:
            names.append(name)
    return names


class Pricer:
    """Per-request prices from the price table (Hermes's snapshot, then the library's rows)."""

    def __init__(self, provider: str, table: dict | None = None):
        self.provider = provider
        self.table = table
        self._entries: dict = {}
        self.priced_as: dict[str, str] = {}  # model -> the name its price was found under

    def entry(self, model: str | None) -> dict | None:
        if model not in self._entries:
            from hermesctx import pricing

            found = None
            for name in _price_names(model):
                route = pricing.billing_route(name, self.provider)
                found = pricing.lookup(route, self.table, library=self.table is None)
                if found is not None:
                    if name != model:
                        self.priced_as[model] = name
                    break
            self._entries[model] = found
        return self._entries[model]

    def cost(self, usage: dict, model: str | None, ttl: str | None = None) -> Decimal | None:
        from hermesctx import pricing

        entry = self.entry(model)
        if entry is None:
            return None
        entry = pricing._at_tier(entry, usage) if entry.get("tiers") else entry
        amount = Decimal("0")
        for bucket, price in (("input_tokens", "input"), ("output_tokens", "output"),
                              ("cache_read_tokens", "cache_read"), ("cache_write_tokens", "cache_write")):
            tokens = usage.get(bucket, 0)
            if tokens:
                rate = entry.get(price)
                if price == "cache_write" and ttl == "1h" and entry.get("cache_write_1h") is not None:
                    rate = entry["cache_write_1h"]
                if rate is None:
                    if price == "cache_write" and self.provider == OPENAI:
                        continue
                    return None
                amount += Decimal(tokens) * rate / MILLION
        return amount

    def rate(self, model: str | None, price: str) -> Decimal:
        entry = self.entry(model)
        value = entry.get(price) if entry else None
        return value if value is not None else Decimal("0")


def compaction_cost(*, before: float, after: float, cached: float, summary_usage: dict, summary_model: str | None,
                    model: str | None, pricer: Pricer, provider: str, ttl: float | None = None) -> dict:
    """The price of one compaction: the summary call, the cache it breaks (the cached prefix is
    read no more and the new prompt is written again) and what each later request saves; the
    number of later requests after which it has paid for itself (None: never)."""
    read = pricer.rate(model, "cache_read")
    write = pricer.rate(model, "cache_write") if provider == ANTHROPIC else pricer.rate(model, "input")
    summary = pricer.cost(summary_usage, summary_model) or Decimal("0")
    # next request: the new prompt is written (or sent uncached) instead of the cached prefix read
    rebuild = Decimal(round(after)) * write / MILLION
    kept_read = Decimal(round(cached)) * read / MILLION
    one_time = summary + rebuild - kept_read
    per_request = Decimal(max(round(before - after), 0)) * read / MILLION
    payback = None
    if per_request > 0:
        payback = max(int(-(-max(one_time, Decimal(0)) // per_request)), 0)
    return {"tokens_before": round(before), "tokens_after": round(after), "saved_per_request": round(before - after),
            "cached_prefix_broken": round(cached), "summary_call_usd": _usd(summary),
            "cache_break_usd": _usd(rebuild - kept_read), "one_time_usd": _usd(one_time),
            "saving_per_request_usd": _usd(per_request), "payback_requests": payback}


def _usd(amount: Decimal) -> str:
    return format(amount.quantize(Decimal("0.000001")), "f")


def gate(cost: dict, remaining: int, *, min_gain: int | None, min_saving_usd: Decimal | None,
         over_window: bool = False) -> str | None:
    """Why a compaction is declined (None: make it). With the gate on (``min_gain`` or
    ``min_saving_usd`` given, 0 included): it saves fewer than ``min_gain`` tokens per later
    request (Anthropic's ``clear_at_least``), it would not repay the cache it breaks within the
    ``remaining`` requests expected, or its net saving over them is under ``min_saving_usd``. A
    request that no longer fits the window is always compacted."""
    if (min_gain is None and min_saving_usd is None) or over_window:
        return None
    if min_gain is not None and cost["saved_per_request"] < min_gain:
        return f"saves {cost['saved_per_request']:,} tokens per request, under the minimum gain of {min_gain:,}"
    payback = cost["payback_requests"]
    if payback is None or payback > remaining:
        when = "never pays back" if payback is None else f"pays back after {payback} requests"
        return f"would not repay the cache it breaks: {when}, {remaining} expected"
    net = Decimal(cost["saving_per_request_usd"]) * remaining - Decimal(cost["one_time_usd"])
    if min_saving_usd is not None and net < min_saving_usd:
        return f"saves ${net:.4f} over the {remaining} requests expected, under ${min_saving_usd}"
    return None


SUMMARY_PROMPT_TOKENS = 1_200  # the summarization template around the serialized turns


def provider_of(model: str | None, provider: str | None = None) -> str:
    """Whose cache rules apply: Anthropic's (explicit breakpoints, billed writes) for a Claude
    model or the anthropic provider, else OpenAI's (automatic, unbilled writes)."""
    if (provider or "").lower() in (ANTHROPIC, "bedrock", "vertex") or "claude" in (model or "").lower():
        return ANTHROPIC
    return OPENAI


def expected_requests(messages: list) -> int:
    """How many more requests a session is expected to make: as many as it made since its
    last compaction (its assistant messages after the last summary), at least one."""
    from hermesctx.summary.text import is_summary_content

    count = 0
    for msg in reversed(messages):
        if not isinstance(msg, dict):
            continue
        if is_summary_content(msg.get("content")):
            break
        count += msg.get("role") == "assistant"
    return max(count, 1)


def compress_cost(before: list, after: list, report: dict, *, model: str | None, provider: str | None = None,
                  summary_model: str | None = None, window: int | None = None, min_gain: int | None = None,
                  min_saving_usd: Decimal | None = None) -> tuple[dict, str | None]:
    """``compress``'s cost figures for one compaction (its report's tokens, the whole request
    taken as cached, as it is in an agent's steady state) and the gate's reason to decline it
    (None: keep it). An unpriced model gets the token figures only; the gate then applies
    ``min_gain`` alone."""
    from hermesctx import tokens
    from hermesctx.summary.text import is_summary_content

    kind = provider_of(model, provider)
    pricer = Pricer(kind)
    start, end = report.get("start", 0), report.get("end", 0)
    summary_in = tokens.rough_messages(before[start:end]) + SUMMARY_PROMPT_TOKENS
    summary_out = sum(tokens.rough_messages([m]) for m in after
                      if isinstance(m, dict) and is_summary_content(m.get("content")))
    usage = {"input_tokens": summary_in, "cache_read_tokens": 0, "cache_write_tokens": 0, "output_tokens": summary_out}
    remaining = expected_requests(before)
    priced = pricer.entry(model) is not None
    cost = compaction_cost(before=report["tokens_before"], after=report["tokens_after"], cached=report["tokens_before"],
                           summary_usage=usage, summary_model=summary_model or model, model=model, pricer=pricer,
                           provider=kind)
    cost.update(model=model, summary_model=summary_model or model, summary_call=usage, cache_rules=kind,
                expected_requests=remaining, priced=priced)
    if not priced:
        for key in ("summary_call_usd", "cache_break_usd", "one_time_usd", "saving_per_request_usd", "payback_requests"):
            cost[key] = None
        if min_gain is not None and cost["saved_per_request"] < min_gain and not (window and report["tokens_before"] >= window):
            return cost, (f"saves {cost['saved_per_request']:,} tokens per request, under the minimum gain "
                          f"of {min_gain:,}")
        return cost, None
    return cost, gate(cost, remaining, min_gain=min_gain, min_saving_usd=min_saving_usd,
                      over_window=bool(window) and report["tokens_before"] >= window)


def forecast(messages: list, *, model: str | None, provider: str | None = None, summary_model: str | None = None,
             budgets: Any) -> dict:
    """``estimate --forecast``: what compacting now would do (the compressor's boundaries and
    the offline extractive summary, so no model is called): tokens saved per request, cached
    tokens it breaks, the requests after which it pays back, against those expected."""
    from hermesctx.stages.compress import compress_messages
    from hermesctx.summary import make_summarizer

    out, report = compress_messages(messages, summarizer=make_summarizer("extractive"),
                                    tail_token_budget=budgets.tail_token_budget,
                                    max_summary_tokens=budgets.max_summary_tokens)
    if not report.get("compressed"):
        return {"compressible": False, "reason": report.get("reason"),
                "line": f"compacting now would change nothing: {report.get('reason')}"}
    cost, reason = compress_cost(messages, out, report, model=model, provider=provider, summary_model=summary_model,
                                 window=budgets.context_length, min_gain=0)
    payback = cost["payback_requests"]
    line = (f"compacting now saves ~{cost['saved_per_request']:,} tokens per request, breaks "
            f"~{cost['cached_prefix_broken']:,} cached tokens, ")
    if not cost["priced"]:
        line += "pays back: unknown (the model is not priced)"
    else:
        line += ("never pays back" if payback is None else f"pays back after {payback:,} requests") + \
            f" ({cost['expected_requests']:,} expected: {'worth it' if reason is None else 'not worth it yet'})"
    return {"compressible": True, "saves_per_request": cost["saved_per_request"],
            "breaks_cached": cost["cached_prefix_broken"], "payback_requests": payback,
            "expected_requests": cost["expected_requests"], "worth_it": reason is None if cost["priced"] else None,
            "cost": cost, "line": line}
