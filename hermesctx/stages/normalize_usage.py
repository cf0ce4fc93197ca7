"""normalize-usage: a provider's raw ``usage`` → canonical token buckets (Hermes ``normalize_usage``).

The branch is picked from the shape of the JSON (a usage object rarely names its provider) or forced with ``provider``:
``anthropic`` (Messages API), ``openai`` (Chat Completions and compatibles), ``codex``
(Responses API). The arithmetic is Hermes's, read from plain JSON: a missing key or ``null`` is
0, a nested object is used only when it is non-empty, ``int()`` truncates, only the derived
``input_tokens`` is clamped at 0.
"""

from __future__ import annotations

from hermesctx.errors import InputError
from hermesctx.options import option
from hermesctx.record import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ANTHROPIC = "anthropic"
OPENAI = "openai"
CODEX = "codex"
PROVIDERS = (ANTHROPIC, OPENAI, CODEX)

BUCKETS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
           "reasoning_tokens")


# The largest count a JSON number holds exactly in every parser (IEEE double): strict input
# refuses counts beyond it (a 1e308 would otherwise become a 309-digit count).
MAX_COUNT = 2**53


def _hermes_int(value: Any) -> int:
    """Hermes's reading of a count: ``int(value or 0)``, 0 when that fails (``"abc"``, ``[1]``)."""
    try:
        return int(value or 0)
    except (TypeError, ValueError, OverflowError):
        return 0


def _strict_int(value: Any, where: str) -> int:
    """A count as strict input takes it (a wrong count is a bug upstream, not a zero): absent or null is 0, a number is truncated to
    an integer as Hermes does; anything else (a string, a boolean, an array) or a number beyond
    ±2^53 is bad input naming the key."""
    if value is None:
        return 0
    kind = type(value)
    if kind is int or kind is float:
        if -MAX_COUNT <= value <= MAX_COUNT:
            return int(value)
        raise InputError(f"{where}: token count out of range ({str(value)[:24]}); counts go up to 2^53",
                         hint=_USAGE_HINT)
    from hermesctx.messages import type_name

    shown = f" ({value[:20]!r})" if kind is str else ""
    raise InputError(f"{where}: expected a number of tokens, got {type_name(value)}{shown}",
                     hint=_USAGE_HINT)


_USAGE_HINT = "--lenient reads counts as Hermes does (int(value), 0 when that fails)"


def _counter(lenient: bool | None):
    """``count(obj, key, path)``: the count under ``key`` of ``obj`` (at ``path`` for errors)."""
    from hermesctx.messages import is_lenient

    if is_lenient() if lenient is None else lenient:
        return lambda obj, key, path="": _hermes_int(obj.get(key))
    return lambda obj, key, path="": _strict_int(obj.get(key), f"{path}.{key}" if path else key)


def _sub(obj: dict, key: str) -> dict:
    value = obj.get(key)
    return value if isinstance(value, dict) and value else {}


def _envelope(obj: dict) -> dict:
    """The object that holds ``usage``: the response itself, the ``response`` of a Responses
    ``response.completed`` event, or the ``message`` of an Anthropic ``message_start`` event."""
    if isinstance(obj.get("usage"), dict):
        return obj
    for key in ("response", "message"):
        inner = obj.get(key)
        if isinstance(inner, dict) and isinstance(inner.get("usage"), dict):
            return inner
    return obj


_CODEX_LINES = ("event_msg", "response_item", "session_meta", "turn_context", "compacted")  # a tuple: input may be unhashable


def codex_usage(obj: dict) -> dict | None:
    """The usage a Codex rollout line carries: a ``token_count`` event's
    ``info.last_token_usage`` (``input_tokens`` with ``cached_input_tokens`` inside it,
    ``output_tokens`` with ``reasoning_output_tokens`` inside it), the ``info`` object alone, or
    a legacy ``turn.completed`` event's ``usage``. None for any other line."""
    payload = obj.get("payload")
    payload = payload if isinstance(payload, dict) else obj
    kind = payload.get("type")
    if kind == "token_count":
        info = payload.get("info")
        usage = info.get("last_token_usage") if isinstance(info, dict) else None
        return usage if isinstance(usage, dict) else None
    if kind == "turn.completed":
        usage = payload.get("usage")
        return usage if isinstance(usage, dict) else None
    usage = obj.get("last_token_usage")
    return usage if isinstance(usage, dict) and "total_token_usage" in obj else None


def _codex_line(obj: dict) -> bool:
    return obj.get("type") in _CODEX_LINES and "payload" in obj


def usage_of(obj: Any) -> dict:
    """The usage object inside a whole API response (or streaming event, or Codex rollout
    line), or the object itself."""
    if not isinstance(obj, dict):
        raise InputError("expected a usage object or an API response with a \"usage\" object")
    codex = codex_usage(obj)
    if codex is not None:
        return codex
    if _codex_line(obj):
        raise InputError(f"a Codex {obj.get('type')} line without usage",
                         hint="--skip-no-usage skips the lines of a rollout that hold none")
    holder = _envelope(obj)
    return holder["usage"] if holder is not obj or isinstance(obj.get("usage"), dict) else obj


def has_usage(obj: Any) -> bool:
    """Whether ``obj`` holds a usage object (streaming events other than the final ones do not:
    Chat chunks carry ``"usage": null``, Anthropic deltas and pings none at all)."""
    if not isinstance(obj, dict) or not obj:
        return False
    if codex_usage(obj) is not None:
        return True
    if _codex_line(obj):
        return False
    if _envelope(obj) is not obj or isinstance(obj.get("usage"), dict):
        return True
    if "usage" in obj or "type" in obj or "object" in obj or "choices" in obj:
        return False
    try:
        detect_provider(obj)
    except InputError:
        return False
    return True


def model_of(obj: Any) -> str | None:
    """The ``model`` a response (or streaming event) names, if any."""
    if not isinstance(obj, dict):
        return None
    for holder in (obj, _envelope(obj)):
        if isinstance(holder.get("model"), str) and holder["model"]:
            return holder["model"]
    return None


def _provider_from_envelope(obj: Any) -> str | None:
    if not isinstance(obj, dict) or not isinstance(obj.get("usage"), dict) and _envelope(obj) is obj:
        return None
    kind = str(obj.get("type") or "")
    kind_obj = str(obj.get("object") or "")
    if kind in ("message", "message_start", "message_delta"):
        return ANTHROPIC
    if kind_obj == "response" or kind.startswith("response."):
        return CODEX
    if kind_obj.startswith("chat.completion"):
        return OPENAI
    return None


# Keys only one family's usage carries (Hermes's Chat branch also reads the top-level
# cache_read/cache_creation_input_tokens that proxies send next to prompt_tokens).
_CHAT_ONLY = ("prompt_tokens", "completion_tokens", "prompt_tokens_details", "completion_tokens_details",
              "prompt_cache_hit_tokens", "prompt_cache_miss_tokens")
_RESPONSES_ONLY = ("input_tokens_details", "output_tokens_details",
                   "cached_input_tokens", "reasoning_output_tokens")  # the last two: Codex rollouts
_ANTHROPIC_ONLY = ("cache_read_input_tokens", "cache_creation_input_tokens", "cache_creation", "server_tool_use")


def detect_provider(usage: dict, envelope: Any = None) -> str:
    """Which branch the usage object's keys (or the response around it) belong to. An empty
    object is Hermes's default (Chat) branch: every branch reads it as zeros."""
    if any(k in usage for k in _CHAT_ONLY):
        return OPENAI
    if any(k in usage for k in _RESPONSES_ONLY):
        return CODEX
    hint = _provider_from_envelope(envelope)
    if hint:
        return hint
    # Anthropic usage never has total_tokens; Chat and Responses usage always do
    has_io = "input_tokens" in usage or "output_tokens" in usage
    has_total = "total_tokens" in usage
    if any(k in usage for k in _ANTHROPIC_ONLY):
        return OPENAI if has_total and not has_io else ANTHROPIC  # Chat via a proxy (U13)
    if has_io:
        return CODEX if has_total else ANTHROPIC
    if not usage or has_total:
        return OPENAI  # nothing to read: zeros in every branch
    seen = ", ".join(list(usage)[:10])
    raise InputError(f"unknown usage shape (keys seen: {seen})",
                     hint="pass --provider anthropic|openai|codex")


def normalize_usage(obj: Any, *, provider: str | None = None, lenient: bool | None = None) -> dict:
    """Canonical buckets plus ``prompt_tokens`` and ``total_tokens`` and the branch used.

    Counts are read strictly (a count that is no number is bad input, see
    :func:`_strict_int`) unless ``lenient`` (default: ``--lenient``,
    :func:`hermesctx.messages.is_lenient`), which reads them exactly as Hermes does."""
    usage = usage_of(obj)
    _int = _counter(lenient)
    branch = provider or detect_provider(usage, obj)
    unclamped = 0
    if branch == ANTHROPIC:
        input_tokens = _int(usage, "input_tokens")
        output_tokens = _int(usage, "output_tokens")
        cache_read = _int(usage, "cache_read_input_tokens")
        cache_write = _int(usage, "cache_creation_input_tokens")
    elif branch == CODEX:
        total = _int(usage, "input_tokens")
        output_tokens = _int(usage, "output_tokens")
        details, where = _sub(usage, "input_tokens_details"), "input_tokens_details"
        # Codex rollouts flatten the details: cached_input_tokens (cache_write_input_tokens)
        cache_read = _int(details, "cached_tokens", where) or _int(usage, "cached_input_tokens")
        cache_write = (_int(details, "cache_creation_tokens", where)
                       or _int(usage, "cache_write_input_tokens"))
        unclamped = total - cache_read - cache_write
        input_tokens = max(0, unclamped)
    elif branch == OPENAI:
        total = _int(usage, "prompt_tokens")
        output_tokens = _int(usage, "completion_tokens")
        details, where = _sub(usage, "prompt_tokens_details"), "prompt_tokens_details"
        cache_read = (_int(details, "cached_tokens", where)
                      or _int(usage, "cache_read_input_tokens")
                      or _int(usage, "prompt_cache_hit_tokens"))
        cache_write = (_int(details, "cache_write_tokens", where)
                       or _int(usage, "cache_creation_input_tokens"))
        unclamped = total - cache_read - cache_write
        input_tokens = max(0, unclamped)
    else:
        raise InputError(f"unknown provider {branch!r} (choose from {', '.join(PROVIDERS)})")
    reasoning = (_int(_sub(usage, "output_tokens_details"), "reasoning_tokens", "output_tokens_details")
                 or _int(_sub(usage, "completion_tokens_details"), "reasoning_tokens", "completion_tokens_details")
                 or (_int(usage, "reasoning_output_tokens") if branch == CODEX else 0))
    prompt = input_tokens + cache_read + cache_write
    out = {
        "provider": branch,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_read_tokens": cache_read,
        "cache_write_tokens": cache_write,
        "reasoning_tokens": reasoning,
        "prompt_tokens": prompt,
        "total_tokens": prompt + output_tokens,
        "request_count": 1,
    }
    split = _sub(usage, "cache_creation")
    if branch == ANTHROPIC and split:
        out["cache_write_5m_tokens"] = _int(split, "ephemeral_5m_input_tokens", "cache_creation")
        out["cache_write_1h_tokens"] = _int(split, "ephemeral_1h_input_tokens", "cache_creation")
    warnings = []
    negative = [k for k in BUCKETS if out[k] < 0]
    if negative:
        warnings.append(f"negative token count in {', '.join(negative)} (reported as given)")
    if unclamped < 0:
        warnings.append(f"cached tokens exceed the prompt total by {-unclamped:,}: input_tokens clamped to 0")
    if warnings:
        out["warnings"] = warnings
    return out


SUMMED = BUCKETS + ("prompt_tokens", "total_tokens", "request_count",
                    "cache_write_5m_tokens", "cache_write_1h_tokens")


def add_usage(total: dict | None, one: dict) -> dict:
    """Running sum of normalized usages (the provider is kept when all agree, else ``mixed``)."""
    if total is None:
        return {k: v for k, v in one.items() if k != "warnings"}
    out = dict(total)
    for key in SUMMED:
        if key in one or key in out:
            out[key] = out.get(key, 0) + one.get(key, 0)
    if out.get("provider") != one.get("provider"):
        out["provider"] = "mixed"
    return out


# the usage format also names the billing route, as Hermes's one provider drives both
# (--billing-provider wins)
_BILLING = {"anthropic": "anthropic", "openai": "openai", "codex": "openai"}
_ZERO = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens",
         "prompt_tokens", "total_tokens", "request_count")


@record(frozen=True)
class Options:
    usage_format: str | None = option(
        flag="--usage-format", choices=PROVIDERS, aliases=("--provider",),
        help="Force the usage shape: anthropic (Messages), openai (Chat Completions and "
             "compatibles), codex (Responses). Default: detected from the JSON. Also the "
             "billing route (codex: openai) unless --billing-provider is given.")
    model: str | None = option(flag="--model", short="-m",
                               help='Price the usage for this model (default: the response\'s own "model").')
    billing_provider: str | None = option(
        flag="--billing-provider",
        help="Billing route for the price, as in Hermes (anthropic, openai, bedrock, google, "
             "deepseek, fireworks, openai-codex, ...), or auto: the vendor of each input's usage "
             "shape. Without it only provider/model names such as anthropic/claude-opus-4.7 "
             "are priced, as in Hermes.")
    base_url: str | None = option(flag="--base-url", help="Endpoint the call went to (selects the billing route).")
    pricing_path: str | None = option(
        flag="--pricing", path="file",
        help='Price table JSON ({"prices": [...]}, USD per million tokens) replacing the built-in snapshot.')
    total: bool = option(False, flag="--sum", kind=bool,
                         help="One object: the session totals over every input (costs summed per call).")
    no_cost: bool = option(False, flag="--no-cost", kind=bool, help="Leave the cost out.")
    skip_no_usage: bool = option(
        False, flag="--skip-no-usage", kind=bool,
        help="Skip inputs that hold no usage (the other events of a recorded stream) instead of "
             "failing; the count goes to stderr.")


def run(options: Options, ctx, docs, *, pretty: bool = False) -> None:
    """``hermesctx normalize-usage`` over documents: each usage normalized and priced, on
    stdout one by one, or (``total``) summed into one object at the end."""
    from hermesctx import jsonio
    from hermesctx.transcripts import located

    env = ctx.env
    table = None
    if options.pricing_path:
        from hermesctx.pricing import parse_table

        table = parse_table(jsonio.read_json_file(options.pricing_path), options.pricing_path)
    summed = None
    costs: list[dict] = []
    skipped = 0
    line_model = None  # a Codex rollout names its model in turn_context lines, not with the usage

    def one(doc):
        nonlocal line_model
        line_model = _turn_model(doc.data) or line_model
        if options.skip_no_usage and not has_usage(doc.data):
            return None
        return normalize_usage(doc.data, provider=options.usage_format)

    for doc, usage in located(docs, one):
        if usage is None:
            skipped += 1
            continue
        for warning in usage.pop("warnings", ()):
            env.warn(f"{doc.where}: {warning}" if doc.where else warning)
        cost = _cost(options, env, usage, options.model or model_of(doc.data) or line_model, table)
        if options.total:
            summed = add_usage(summed, usage)
            if cost is not None:
                costs.append(cost)
            continue
        env.stdout.write(jsonio.dumps({**usage, "cost": cost} if cost is not None else usage, pretty=pretty))
    if skipped:
        env.info(f"normalize-usage: skipped {skipped} input(s) without usage")
    if options.total:
        if summed is None:
            summed = {"provider": None, **dict.fromkeys(_ZERO, 0)}
        if costs:
            from hermesctx.pricing import add_costs

            summed = {**summed, "cost": add_costs(costs)}
        env.stdout.write(jsonio.dumps(summed, pretty=pretty))


def _cost(options: Options, env, usage: dict, model: str | None, table) -> dict | None:
    """Hermes's cost estimate for one usage, or None (no model, or --no-cost)."""
    if not model or options.no_cost:
        return None
    from hermesctx.pricing import estimate_cost, guess_billing_provider

    route = options.billing_provider if options.billing_provider is not None else _BILLING.get(options.usage_format)
    if route == "auto":
        route = guess_billing_provider(usage["provider"], model, table, library=table is None)
    cost = estimate_cost(usage, model, provider=route, base_url=options.base_url, table=table,
                         library=table is None)  # the price library fills Hermes's gaps
    if cost["status"] == "unknown" and not options.billing_provider and not options.base_url:
        env.warn(f"no price for {model!r} without a billing route: pass --billing-provider")
    return cost


def _turn_model(data) -> str | None:
    if isinstance(data, dict) and data.get("type") == "turn_context":
        payload = data.get("payload")
        model = payload.get("model") if isinstance(payload, dict) else None
        return model if isinstance(model, str) and model else None
    return None
