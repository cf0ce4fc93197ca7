"""Summarizers: turn the middle of a transcript into a structured handoff summary.

:func:`choose` is the one rule that turns settings (and the command's flags) into a summarizer;
``compress``, ``trajectory`` and ``run`` all call it. ``compress`` builds a
:class:`SummaryRequest` (the whole prompt, already written, plus the raw turns for summarizers
that work without a model) and asks a summarizer for the body text; when it fails, the
extractive summarizer and then Hermes's static fallback (:mod:`hermesctx.summary.fallback`)
stand in, visibly.

* ``extractive`` (:mod:`hermesctx.summary.extractive`): no model, deterministic, offline.
* ``anthropic`` / ``openai`` (:mod:`hermesctx.summary.providers`): the real SDKs, imported
  lazily; timeouts, retries with backoff on 429/5xx, errors classified in
  :class:`SummarizerError` so a context-length failure is reported as such.
* any other name: a plugin summarizer registered in the entry-point group
  ``hermesctx.summarizers`` (:mod:`hermesctx.plugins`), built with the options the model
  summarizers take.
"""

from __future__ import annotations

from hermesctx import registry
from hermesctx.record import field, record, replace

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Protocol

    class Summarizer(Protocol):
        """What every summarizer is: a ``name`` and :meth:`summarize`."""

        name: str

        def summarize(self, request: SummaryRequest) -> str:
            """The summary body (no prefix). Raises :class:`SummarizerError`."""

NAMES = registry.names(registry.SUMMARIZERS)  # the built-in summarizers (declared in hermesctx.registry)
# Hermes's auxiliary.compression.provider values and the summarizer that speaks their API
# (anything else, "auto" included, means no model: the extractive summarizer)
PROVIDERS = {"anthropic": "anthropic", "openai": "openai", "openrouter": "openai", "custom": "openai",
             "ollama": "openai", "vllm": "openai", "lmstudio": "openai"}

# SummarizerError.kind values
CONTEXT_LENGTH = "context_length"
TIMEOUT = "timeout"
RATE_LIMIT = "rate_limit"
SERVER = "server"
AUTH = "auth"
CONNECTION = "connection"
EMPTY = "empty"
OTHER = "other"


@record(frozen=True)
class SummaryRequest:
    prompt: str  # the whole prompt; providers send it as one user message
    budget_tokens: int  # the summary's target size (named in the prompt, not sent as max_tokens)
    turns: list = field(default_factory=list)  # the middle messages, for model-free summarizers
    previous_summary: str | None = None  # body of the summary being updated, if any
    focus: str | None = None  # the focus topic, if any
    # the kept turns whose call arguments prune cut, before and after the middle: their files' states
    cut_before: list = field(default_factory=list)
    cut_after: list = field(default_factory=list)
    after: list = field(default_factory=list)  # the turns kept after the middle, as the agent wrote them
    # the ledgers of ``turns`` (summary.ledger.extract), when the caller extracted them already:
    # compress extracts once for the extractive summary and the drop ledger; never mutated
    ledgers: Any = None
    # the live prefix: the whole transcript as the agent sends it (unpruned), for a provider
    # summarizer to send as the cached start of its request (the agent's last request wrote that
    # cache) followed by ``instruction`` as the last user message; the summary replaces
    # ``live[live_from:live_to]``; ``live_top`` holds the body's ``system`` and ``tools`` (an
    # Anthropic body's system prompt is no message). Empty: ``prompt`` is sent alone.
    live: list = field(default_factory=list)
    live_from: int = 0
    live_to: int = 0
    live_top: dict = field(default_factory=dict)
    instruction: str = ""


class SummarizerError(Exception):
    """A summarizer could not produce a summary; ``kind`` is one of the constants above."""

    def __init__(self, message: str, *, kind: str = OTHER, status: int | None = None,
                 retry_after: float | None = None):
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.retry_after = retry_after  # seconds the server asked to wait, if it said


def outgoing(request: SummaryRequest) -> SummaryRequest:
    """The request as it may leave the process: its prompt (and live prefix) passed through the secret redactor
    (the compress prompt's parts are redacted before their cuts already; the trajectory prompt
    and anything else built elsewhere are covered here). The same object when nothing changes."""
    from hermesctx.redact import redact, redact_strings

    prompt = redact(request.prompt)
    live, top = redact_strings(request.live), redact_strings(request.live_top)
    instruction = redact(request.instruction)
    if prompt == request.prompt and live is request.live and top is request.live_top \
            and instruction == request.instruction:
        return request
    return replace(request, prompt=prompt, live=live, live_top=top, instruction=instruction)


def make_summarizer(name: str, **options: Any) -> Summarizer:
    """Build a summarizer by name; options (model, base_url, api_key, timeout, retries, env)
    go to its constructor. The SDKs are imported only here, on demand. A name that is not
    built in is looked up among the plugin summarizers (unknown there too: a usage error
    naming the installed ones)."""
    if name not in NAMES:
        from hermesctx import plugins

        return plugins.summarizer(name, NAMES, **options)
    if name == "extractive":
        return _Deferred(name, options)
    return _built(name, options)


def _built(name: str, options: dict) -> Summarizer:
    return registry.load(registry.find(registry.SUMMARIZERS, name))(**options)


class _Deferred:
    """The extractive summarizer, built when first used: its modules cost ~1.5 ms of a start,
    and a compress with nothing to compact (a short transcript) never asks it for a summary."""

    def __init__(self, name: str, options: dict):
        self.name = name
        self._options = options

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("__") or attribute in ("_options", "_made"):
            raise AttributeError(attribute)
        made = self.__dict__.get("_made")
        if made is None:
            made = self._made = _built(self.name, self._options)
        return getattr(made, attribute)


def summarizer_name(settings: Any, name: str | None = None) -> str:
    """Which summarizer applies: ``name`` (a flag) if given, else config ``summarizer.name``, else
    the one that speaks ``auxiliary.compression.provider``'s API (extractive when none does)."""
    if name:
        return name
    if settings["summarizer.name"]:
        return settings["summarizer.name"]
    provider = str(settings["auxiliary.compression.provider"] or "").strip().lower()
    return PROVIDERS.get(provider, "extractive")


def choose(settings: Any, *, name: str | None = None, model: str | None = None,
           base_url: str | None = None, api_key: str | None = None, timeout: float | None = None,
           retries: int | None = None, max_failures: int | None = None, environ: Any = None,
           warn: Any = None) -> Summarizer:
    """THE provider -> summarizer rule: the summarizer :func:`summarizer_name` picks, configured
    from ``auxiliary.compression.*`` (each overridden by its argument when given) and
    ``summarizer.retries`` / ``summarizer.max_failures`` (the arguments of those names win when
    given: ``trajectory`` makes its own attempts, without a circuit breaker). ``environ`` supplies the API key and
    endpoint variables; ``warn`` is told once when the circuit breaker opens."""
    name = summarizer_name(settings, name)
    if name == "extractive":
        return make_summarizer("extractive")
    return make_summarizer(
        name, model=model or settings["auxiliary.compression.model"],
        base_url=base_url or settings["auxiliary.compression.base_url"],
        api_key=api_key or settings["auxiliary.compression.api_key"],
        timeout=timeout or settings["auxiliary.compression.timeout"],
        retries=settings["summarizer.retries"] if retries is None else retries,
        env=environ if environ is not None else {},
        max_failures=settings["summarizer.max_failures"] if max_failures is None else max_failures,
        warn=warn)
