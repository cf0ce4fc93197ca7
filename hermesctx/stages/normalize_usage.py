"""normalize-usage: a provider's raw ``usage`` → canonical token buckets (Hermes ``normalize_usage``).

The branch is picked from the shape of the JSON (decision D9) or forced with ``provider``:
``anthropic`` (Messages API), ``openai`` (Chat Completions and compatibles), ``codex``
(Responses API). The arithmetic is Hermes's, read from plain JSON: a missing key or ``null`` is
0, a nested object is used only when it is non-empty, ``int()`` truncates, only the derived
``input_tokens`` is clamped at 0.
"""

from __future__ import annotations

from typing import Any

from hermesctx.errors import InputError

ANTHROPIC = "anthropic"
OPENAI = "openai"
CODEX = "codex"
PROVIDERS = (ANTHROPIC, OPENAI, CODEX)

BUCKETS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
           "reasoning_tokens")


def _int(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def _sub(obj: dict, key: str) -> dict:
    value = obj.get(key)
    return value if isinstance(value, dict) and value else {}


def usage_of(obj: Any) -> dict:
    """The usage object inside a whole API response, or the object itself."""
    if not isinstance(obj, dict):
        raise InputError("expected a usage object or an API response with a \"usage\" object")
    if isinstance(obj.get("usage"), dict):
        return obj["usage"]
    response = obj.get("response")  # Responses API streaming: response.completed event
    if isinstance(response, dict) and isinstance(response.get("usage"), dict):
        return response["usage"]
    message = obj.get("message")  # Anthropic streaming: message_start event
    if isinstance(message, dict) and isinstance(message.get("usage"), dict):
        return message["usage"]
    return obj


def detect_provider(usage: dict) -> str:
    """Which branch the usage object's keys belong to."""
    if "prompt_tokens" in usage or "completion_tokens" in usage:
        return OPENAI
    if "input_tokens_details" in usage or "output_tokens_details" in usage:
        return CODEX
    if {"input_tokens", "output_tokens", "cache_read_input_tokens",
            "cache_creation_input_tokens"} & usage.keys():
        return ANTHROPIC
    seen = ", ".join(list(usage)[:10]) or "none"
    raise InputError(f"unknown usage shape (keys seen: {seen})",
                     hint="pass --provider anthropic|openai|codex")


def normalize_usage(obj: Any, *, provider: str | None = None) -> dict:
    """Canonical buckets plus ``prompt_tokens`` and ``total_tokens`` and the branch used."""
    usage = usage_of(obj)
    branch = provider or detect_provider(usage)
    if branch == ANTHROPIC:
        input_tokens = _int(usage.get("input_tokens"))
        output_tokens = _int(usage.get("output_tokens"))
        cache_read = _int(usage.get("cache_read_input_tokens"))
        cache_write = _int(usage.get("cache_creation_input_tokens"))
    elif branch == CODEX:
        total = _int(usage.get("input_tokens"))
        output_tokens = _int(usage.get("output_tokens"))
        details = _sub(usage, "input_tokens_details")
        cache_read = _int(details.get("cached_tokens"))
        cache_write = _int(details.get("cache_creation_tokens"))
        input_tokens = max(0, total - cache_read - cache_write)
    elif branch == OPENAI:
        total = _int(usage.get("prompt_tokens"))
        output_tokens = _int(usage.get("completion_tokens"))
        details = _sub(usage, "prompt_tokens_details")
        cache_read = (_int(details.get("cached_tokens"))
                      or _int(usage.get("cache_read_input_tokens"))
                      or _int(usage.get("prompt_cache_hit_tokens")))
        cache_write = (_int(details.get("cache_write_tokens"))
                       or _int(usage.get("cache_creation_input_tokens")))
        input_tokens = max(0, total - cache_read - cache_write)
    else:
        raise InputError(f"unknown provider {branch!r} (choose from {', '.join(PROVIDERS)})")
    reasoning = (_int(_sub(usage, "output_tokens_details").get("reasoning_tokens"))
                 or _int(_sub(usage, "completion_tokens_details").get("reasoning_tokens")))
    prompt = input_tokens + cache_read + cache_write
    return {
        "provider": branch,
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "cache_read_tokens": cache_read,
        "cache_write_tokens": cache_write,
        "reasoning_tokens": reasoning,
        "prompt_tokens": prompt,
        "total_tokens": prompt + output_tokens,
    }
