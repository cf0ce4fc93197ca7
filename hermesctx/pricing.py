"""What a call cost: Hermes's billing routes and its built-in price snapshot.

Prices live in ``data/pricing.json`` (USD per million tokens, as exact decimal strings, with the
source page and snapshot version of each); in the commands, the keys it lacks come from
``data/pricing-library.json`` (the maintained library genai-prices, pinned; ``source``
``genai-prices``); ``--pricing FILE`` replaces both with one table of the same shape. A row may
add ``cache_write_1h`` (ours): Anthropic's 1-hour cache writes, reported in the usage's 5m/1h
split, are then priced at that rate (Hermes prices every write at ``cache_write``, as the built-in
table does), and ``tiers`` (ours): a price for every token once the prompt exceeds a start.
Offline only: the routes Hermes prices from a live models API (OpenRouter, Nous, custom
endpoints) are reported as unknown, never as 0.
"""

from __future__ import annotations

import os
from decimal import Decimal
from functools import lru_cache
from urllib.parse import urlparse

from hermesctx import lazyre
from hermesctx.errors import InputError
from hermesctx.jsonio import loads_like_json
from hermesctx.record import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SUBSCRIPTION = "subscription_included"
MODELS_API = "official_models_api"
SNAPSHOT = "official_docs_snapshot"
UNKNOWN = "unknown"
_MILLION = Decimal("1000000")
_NOUS_BASE = "https://inference-api.nousresearch.com/v1"
_BEDROCK_REGIONS = ("global.", "us.", "eu.", "apac.", "ap.", "au.", "jp.", "ca.", "sa.", "me.", "af.")
_DOT_VERSION = lazyre.compile(r"(\d+)\.(\d+)")
_BEDROCK_SUFFIXES = (lazyre.compile(r":\d+$"), lazyre.compile(r"-v\d+$"), lazyre.compile(r"-\d{8}$"))


@record(frozen=True)
class Route:
    provider: str
    model: str
    base_url: str = ""
    billing_mode: str = UNKNOWN


def _host(base_url: str) -> str:
    raw = (base_url or "").strip()
    if not raw:
        return ""
    try:
        return (urlparse(raw if "://" in raw else f"//{raw}").hostname or "").lower().rstrip(".")
    except ValueError:
        return ""


def _host_is(base_url: str, domain: str) -> bool:
    host = _host(base_url)
    return bool(host) and (host == domain or host.endswith("." + domain))


def _last(model: str) -> str:
    return model.split("/")[-1]


def billing_route(model: str | None, provider: str | None = None, base_url: str | None = None) -> Route:
    """Which price list applies (Hermes ``resolve_billing_route``; first rule wins)."""
    prov = (provider or "").strip().lower()
    base = base_url or ""
    name = (model or "").strip()
    if not prov and "/" in name:
        prefix, rest = name.split("/", 1)
        if prefix in ("anthropic", "openai", "google"):
            prov, name = prefix, rest
    if prov == "openai-codex":
        return Route("openai-codex", name, base, SUBSCRIPTION)
    if prov == "openrouter" or _host_is(base, "openrouter.ai"):
        return Route("openrouter", name, base, MODELS_API)
    if prov == "nous" or _host_is(base, "inference-api.nousresearch.com"):
        return Route("nous", name, base or _NOUS_BASE, MODELS_API)
    if prov == "anthropic":
        return Route("anthropic", _last(name), base, SNAPSHOT)
    if prov in ("openai", "openai-api"):
        return Route("openai", _last(name), base, SNAPSHOT)
    if prov in ("minimax", "minimax-cn"):
        return Route(prov, _last(name), base, SNAPSHOT)
    if prov == "vertex" or _host_is(base, "aiplatform.googleapis.com"):
        return Route("gemini", _last(name), base, SNAPSHOT)
    if prov == "fireworks" or _host_is(base, "api.fireworks.ai"):
        return Route("fireworks", _last(name), base, SNAPSHOT)
    if prov in ("custom", "local") or "localhost" in base.strip().lower():
        return Route(prov or "custom", name, base, UNKNOWN)
    return Route(prov or "unknown", _last(name) if name else "", base, UNKNOWN)


def _anthropic_name(model: str) -> str:
    name = model.lower().strip()
    name = name.removeprefix("anthropic/")
    return _DOT_VERSION.sub(r"\1-\2", name)


def _bedrock_name(model: str) -> str:
    name = model.lower().strip()
    for region in _BEDROCK_REGIONS:
        if name.startswith(region):
            name = name[len(region):]
            break
    name = _DOT_VERSION.sub(r"\1-\2", name)
    for suffix in _BEDROCK_SUFFIXES:  # in this order: "-20240229-v1:0" loses all three
        name = suffix.sub("", name)
    return name


_PRICES = ("input", "output", "cache_read", "cache_write", "cache_write_1h", "request")


def _entry(row: dict) -> dict:
    out = {"source": "user_override", "source_url": None, "pricing_version": None, **row}
    for key in _PRICES:
        value = row.get(key)
        out[key] = None if value is None else Decimal(str(value))
    tiers = row.get("tiers")
    if isinstance(tiers, dict):
        out["tiers"] = {key: sorted((int(start), Decimal(str(price))) for start, price in steps)
                        for key, steps in tiers.items() if key in _PRICES}
    return out


def _at_tier(entry: dict, usage: dict) -> dict:
    """A tiered row (``tiers``: a price that applies to every token once the prompt exceeds a
    start, as Google and Anthropic bill long prompts) at the tier this call's prompt reaches."""
    tiers = entry.get("tiers")
    if not tiers:
        return entry
    prompt = sum(usage.get(k, 0) for k in ("input_tokens", "cache_read_tokens", "cache_write_tokens"))
    out = dict(entry)
    for key, steps in tiers.items():
        for start, price in steps:
            if prompt > start:
                out[key] = price
    return out


def parse_table(doc: Any, origin: str = "pricing table") -> dict:
    """``{(provider, model): entry}`` from a pricing document (``{"prices": [...]}``)."""
    rows = doc.get("prices") if isinstance(doc, dict) else None
    if not isinstance(rows, list):
        raise InputError(f'{origin}: expected an object with a "prices" array')
    table = {}
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or not isinstance(row.get("provider"), str) \
                or not isinstance(row.get("model"), str):
            raise InputError(f"{origin}: prices[{i}]: needs string provider and model")
        try:
            table[(row["provider"], row["model"].lower())] = _entry(row)
        except ArithmeticError:
            raise InputError(f"{origin}: prices[{i}]: prices must be numbers") from None
    return table


def _shipped(name: str) -> dict:
    # a plain open: importlib.resources would cost every priced command ~20 ms of imports
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", name), encoding="utf-8") as handle:
        return parse_table(loads_like_json(handle.read()), f"built-in pricing ({name})")


@lru_cache(maxsize=1)
def builtin_table() -> dict:
    """Hermes's own snapshot: the default for every key it has (D9)."""
    return _shipped("pricing.json")


@lru_cache(maxsize=1)
def library_table() -> dict:
    """The rows of the maintained library genai-prices (pinned, shipped as data; no network):
    used for the (provider, model) keys Hermes's snapshot lacks (gpt-5, o4-mini, ...)."""
    return _shipped("pricing-library.json")


def lookup(route: Route, table: dict | None = None, *, library: bool = False) -> dict | None:
    """The price entry for a route (exact key, then Anthropic / Bedrock name normalization) in
    ``table``, by default Hermes's snapshot; with ``library``, the library's rows for what the
    snapshot lacks (the commands' default; the library API keeps Hermes's answers)."""
    if route.billing_mode == SUBSCRIPTION:
        zero = Decimal("0")
        return {"input": zero, "output": zero, "cache_read": zero, "cache_write": zero,
                "request": None, "source": "none", "pricing_version": "included-route", "source_url": None}
    if route.billing_mode == MODELS_API:
        return None  # live prices only; offline means unknown
    if table is not None:
        return _find(route, table)
    # Hermes's snapshot first (D9); the library, loaded only then, for what it lacks
    return _find(route, builtin_table()) or (_find(route, library_table()) if library else None)


def _find(route: Route, table: dict) -> dict | None:
    model = route.model.lower()
    entry = table.get((route.provider, model))
    if entry:
        return entry
    for provider, normalize in (("anthropic", _anthropic_name), ("bedrock", _bedrock_name)):
        if route.provider == provider:
            name = normalize(model)
            if name != model and table.get((provider, name)):
                return table[(provider, name)]
    return None


def _money(amount: Decimal | None) -> str | None:
    return None if amount is None else str(amount)


def estimate_cost(usage: dict, model: str | None, *, provider: str | None = None,
                  base_url: str | None = None, table: dict | None = None, library: bool = False) -> dict:
    """Hermes ``estimate_usage_cost`` on canonical buckets: ``amount_usd`` (a decimal string, or
    None when unknown), ``status``, ``source``, ``label``, ``pricing_version``, ``notes``.
    ``library``: price what Hermes's snapshot lacks from the library's rows (see :func:`lookup`)."""
    route = billing_route(model, provider, base_url)
    result = {"model": route.model, "route": route.provider, "billing_mode": route.billing_mode, "fetched_at": None}
    unknown = {**result, "amount_usd": None, "status": "unknown", "source": "none", "label": "n/a",
               "pricing_version": None, "notes": [], "uncached_usd": None, "saving_usd": None}
    if route.billing_mode == SUBSCRIPTION:
        return {**result, "amount_usd": "0", "status": "included", "source": "none", "label": "included",
                "pricing_version": "included-route", "notes": [], "uncached_usd": None, "saving_usd": None}
    entry = lookup(route, table, library=library)
    if entry is None:
        return unknown
    entry = _at_tier(entry, usage)
    unknown["source"] = entry["source"]
    for bucket, price, note in (("input_tokens", "input", None), ("output_tokens", "output", None),
                                ("cache_read_tokens", "cache_read", "cache-read pricing unavailable for route"),
                                ("cache_write_tokens", "cache_write", "cache-write pricing unavailable for route")):
        if usage.get(bucket, 0) and entry[price] is None:
            return {**unknown, "notes": [note] if note else []}
    amount = Decimal("0")
    for bucket, price in (("input_tokens", "input"), ("output_tokens", "output"),
                          ("cache_read_tokens", "cache_read"), ("cache_write_tokens", "cache_write")):
        if entry[price] is not None:
            amount += Decimal(usage.get(bucket, 0)) * entry[price] / _MILLION
    notes = []
    long_writes = usage.get("cache_write_1h_tokens", 0)
    if entry.get("cache_write_1h") is not None and long_writes and entry["cache_write"] is not None:
        # ours, only with a --pricing table that has cache_write_1h: 1h writes at their own rate
        amount += Decimal(long_writes) * (entry["cache_write_1h"] - entry["cache_write"]) / _MILLION
        notes.append("1h cache writes priced at cache_write_1h")
    requests = usage.get("request_count", 1)
    if entry.get("request") is not None and requests:
        amount += Decimal(requests) * entry["request"]
    status, label = "estimated", "~$" + format(amount, ".2f")
    if entry["source"] == "none" and amount == 0:
        status, label = "included", "included"
    out = {**result, "amount_usd": _money(amount), "status": status, "source": entry["source"],
           "label": label, "pricing_version": entry.get("pricing_version"),
           "source_url": entry.get("source_url"), "notes": notes}
    return {**out, **caching_saving(usage, entry, amount)}


def caching_saving(usage: dict, entry: dict, amount: Decimal) -> dict:
    """What the same tokens would have cost with no prompt cache (cache reads and writes billed
    as plain input) and the difference to ``amount``: ``uncached_usd`` and ``saving_usd`` (negative
    when cache writes cost more than the reads saved). Ours; Hermes does not report it."""
    if entry.get("input") is None:
        return {"uncached_usd": None, "saving_usd": None}
    prompt = sum(usage.get(k, 0) for k in ("input_tokens", "cache_read_tokens", "cache_write_tokens"))
    uncached = Decimal(prompt) * entry["input"] / _MILLION
    if entry.get("output") is not None:
        uncached += Decimal(usage.get("output_tokens", 0)) * entry["output"] / _MILLION
    requests = usage.get("request_count", 1)
    if entry.get("request") is not None and requests:
        uncached += Decimal(requests) * entry["request"]
    return {"uncached_usd": format(uncached, "f"), "saving_usd": format(uncached - amount, "f")}


def add_costs(costs: list[dict]) -> dict:
    """Session total of per-call costs (how Hermes accumulates a session's cost): the sum of the
    amounts when every call is priced (``included`` calls count as 0), else ``unknown``."""
    models = sorted({c["model"] for c in costs if c.get("model")})
    unpriced = sum(1 for c in costs if c["amount_usd"] is None)
    out: dict = {"models": models, "calls": len(costs), "unpriced_calls": unpriced}
    if unpriced or not costs:
        return {**out, "amount_usd": None, "status": "unknown", "label": "n/a",
                "uncached_usd": None, "saving_usd": None}
    amount = sum((Decimal(c["amount_usd"]) for c in costs), Decimal("0"))
    statuses = {c["status"] for c in costs}
    status = "included" if statuses == {"included"} else "estimated"
    label = "included" if status == "included" else "~$" + format(amount, ".2f")
    out.update(amount_usd=str(amount), status=status, label=label)
    if all(c.get("uncached_usd") is not None or c["status"] == "included" for c in costs):
        uncached = sum((Decimal(c["uncached_usd"] or c["amount_usd"]) for c in costs), Decimal("0"))
        out.update(uncached_usd=format(uncached, "f"), saving_usd=format(uncached - amount, "f"))
    else:
        out.update(uncached_usd=None, saving_usd=None)
    return out


def guess_billing_provider(branch: str, model: str | None, table: dict | None = None, *,
                           library: bool = False) -> str | None:
    """``--billing-provider auto`` (ours): the vendor whose API the usage shape belongs to; for the
    Chat Completions shape, the one provider of the price table that lists the model (Hermes's
    snapshot, else the library's rows), else ``openai``. A ``provider/model`` name keeps Hermes's own inference (None)."""
    name = (model or "").strip()
    if "/" in name and name.split("/", 1)[0] in ("anthropic", "openai", "google"):
        return None
    if branch == "anthropic":
        return "anthropic"
    if branch == "codex":
        return "openai"
    key = name.lower()
    tables = (table,) if table is not None else (builtin_table(), library_table()) if library else (builtin_table(),)
    for candidates in tables:
        owners = {provider for provider, model in candidates if model == key}
        if owners:
            return owners.pop() if len(owners) == 1 else "openai"
    return "openai"


def prompt_cost(tokens: int, model: str | None, provider: str | None = None) -> dict | None:
    """What ``tokens`` of prompt cost at the model's input price, with where the price came from
    (for ``estimate``); None when the model is not priced."""
    entry = _prompt_price(model, provider) if model else None
    if entry is None:
        return None
    route, entry = entry
    entry = _at_tier(entry, {"input_tokens": tokens})
    return {"amount_usd": format(Decimal(tokens) * entry["input"] / _MILLION, "f"),
            "input_usd_per_mtok": str(entry["input"]), "route": route.provider, "model": route.model,
            "source": entry["source"], "source_url": entry.get("source_url"),
            "pricing_version": entry.get("pricing_version")}


@lru_cache(maxsize=256)
def _prompt_price(model: str, provider: str | None) -> tuple[Route, dict] | None:
    """The route and price entry of a model (once per model: a batch asks for every line)."""
    route = billing_route(model, provider or guess_billing_provider("chat", model, library=True))
    entry = lookup(route, library=True)
    if entry is None or entry.get("input") is None or route.billing_mode == SUBSCRIPTION:
        return None
    return route, entry
