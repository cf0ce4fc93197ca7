"""Summarizers: turn the middle of a transcript into a structured handoff summary.

``compress`` builds a :class:`SummaryRequest` (the whole prompt, already written, plus the raw
turns for summarizers that work without a model) and asks a summarizer for the body text.

* ``extractive`` (:mod:`hermesctx.summary.extractive`): no model, deterministic, offline.
* ``anthropic`` / ``openai`` (:mod:`hermesctx.summary.providers`): the real SDKs, imported
  lazily; timeouts, retries with backoff on 429/5xx, errors classified in
  :class:`SummarizerError` so a context-length failure is reported as such.
"""

from __future__ import annotations

import dataclasses
import importlib
from dataclasses import dataclass, field
from typing import Any, Protocol

NAMES = ("extractive", "anthropic", "openai")

# SummarizerError.kind values
CONTEXT_LENGTH = "context_length"
TIMEOUT = "timeout"
RATE_LIMIT = "rate_limit"
SERVER = "server"
AUTH = "auth"
CONNECTION = "connection"
EMPTY = "empty"
OTHER = "other"


@dataclass(frozen=True)
class SummaryRequest:
    prompt: str  # the whole prompt; providers send it as one user message
    budget_tokens: int  # the summary's target size (named in the prompt, not sent as max_tokens)
    turns: list = field(default_factory=list)  # the middle messages, for model-free summarizers
    previous_summary: str | None = None  # body of the summary being updated, if any
    focus: str | None = None  # the focus topic, if any


class SummarizerError(Exception):
    """A summarizer could not produce a summary; ``kind`` is one of the constants above."""

    def __init__(self, message: str, *, kind: str = OTHER, status: int | None = None):
        super().__init__(message)
        self.kind = kind
        self.status = status


class Summarizer(Protocol):
    name: str

    def summarize(self, request: SummaryRequest) -> str:
        """The summary body (no prefix). Raises :class:`SummarizerError`."""


def outgoing(request: SummaryRequest) -> SummaryRequest:
    """The request as it may leave the process: its prompt passed through the secret redactor
    (the compress prompt's parts are redacted before their cuts already; the trajectory prompt
    and anything else built elsewhere are covered here). The same object when nothing changes."""
    from hermesctx.redact import redact

    prompt = redact(request.prompt)
    return request if prompt == request.prompt else dataclasses.replace(request, prompt=prompt)


_MODULES = {"extractive": ("hermesctx.summary.extractive", "ExtractiveSummarizer"),
            "anthropic": ("hermesctx.summary.providers", "AnthropicSummarizer"),
            "openai": ("hermesctx.summary.providers", "OpenAISummarizer")}


def make_summarizer(name: str, **options: Any) -> Summarizer:
    """Build a summarizer by name; options (model, base_url, api_key, timeout, retries, env)
    go to its constructor. The SDKs are imported only here, on demand."""
    if name not in _MODULES:
        raise ValueError(f"unknown summarizer {name!r} (choose from {', '.join(NAMES)})")
    module_name, class_name = _MODULES[name]
    return getattr(importlib.import_module(module_name), class_name)(**options)
