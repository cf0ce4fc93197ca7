"""Provider summarizers: the real ``anthropic`` and ``openai`` SDKs, imported on first use.

* :class:`AnthropicSummarizer`: Messages API. The API requires ``max_tokens``; it is
  ``2 × budget_tokens`` clamped to [1024, 32000] (room for the summary without letting the
  output cap truncate it).
* :class:`OpenAISummarizer`: Chat Completions (any OpenAI-compatible ``base_url``: vLLM,
  Ollama, OpenRouter, LM Studio), no ``max_tokens`` and no ``temperature`` (as Hermes).

What both send: a request with a live prefix (:attr:`SummaryRequest.live`) is the transcript
as the agent sends it (its system prompt and tools included, on the send path of
:mod:`hermesctx.wire.send`), then the instruction as the last user message, tools off: the
provider reads the prefix from the prompt cache the agent's own last request wrote (Anthropic:
a ``cache_control`` breakpoint on the prefix's last block; OpenAI: its automatic prefix
caching). A prefix the model's window cannot hold (a context-length error) or the provider
refuses (another 400) is asked again as Hermes asks, the serialized turns in one user message
(:attr:`SummaryRequest.prompt`), as is a request without a prefix. The usage of the
call that answered (input, output, cache read and write tokens) is kept in ``last_usage``.

Both take keyword options ``model``, ``base_url``, ``api_key``, ``timeout``, ``retries`` and
``env`` (a mapping read for ``ANTHROPIC_API_KEY`` / ``ANTHROPIC_BASE_URL`` or ``OPENAI_API_KEY``
/ ``OPENAI_BASE_URL`` when the options are None). The SDKs' own retries are off: this module
retries 429, 5xx, timeouts and connection errors itself, with exponential backoff
(``backoff_base · 2^k``, capped at ``max_backoff``), honouring ``retry-after``: one
:class:`RetryPolicy` and one loop (:func:`with_retries`), which ``trajectory`` uses too with
Hermes's own attempts and jitter.

``timeout`` is a deadline on the whole of each attempt (connect, send, wait, read), not per read:
the SDK call runs in a daemon thread and is abandoned when the deadline passes, so a server that
trickles a byte a second costs ``timeout``, not hours. Total time is therefore bounded by
``(retries + 1) × timeout + retries × max_backoff``; a ``retry-after`` longer than
``max_backoff`` ends the retries at once. Failures raise :class:`SummarizerError` with a
``kind``: context_length, timeout, rate_limit, server, auth, connection, empty, other.

Circuit breaker: after ``max_failures`` consecutive failed summaries (default 3) the summarizer
stops calling the provider for the rest of the run (a batch): every later summary fails at once
with kind ``circuit_open``, so the caller's fallback stands in; ``warn`` (if given) says so once.
"""

from __future__ import annotations

import email.utils
import random
import threading
import time
import warnings
from typing import TypeVar

from hermesctx.record import record
from hermesctx.summary import (
    AUTH,
    CONNECTION,
    CONTEXT_LENGTH,
    EMPTY,
    OTHER,
    RATE_LIMIT,
    SERVER,
    TIMEOUT,
    SummarizerError,
    SummaryRequest,
    outgoing,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

DEFAULT_TIMEOUT = 300.0  # seconds per attempt (Hermes's floor for compression calls)
CONNECT_TIMEOUT = 3.0  # seconds to open a connection: an endpoint that does not answer is said at once
CONNECTION_ATTEMPTS = 2  # a refused or unreachable endpoint is tried this often, not as often as a busy one
DEFAULT_RETRIES = 2  # retries after the first attempt
DEFAULT_BACKOFF_BASE = 1.0
DEFAULT_MAX_BACKOFF = 30.0
DEFAULT_MAX_FAILURES = 3  # consecutive failed summaries before the circuit opens
RETRYABLE = frozenset({RATE_LIMIT, SERVER, TIMEOUT, CONNECTION})
CIRCUIT_OPEN = "circuit_open"


class RequestTimeout(Exception):
    """One attempt passed its deadline (classified as a timeout)."""


T = TypeVar("T")


@record(frozen=True)
class RetryPolicy:
    """How often and how long to wait: the one retry policy of every summarizer call.

    ``attempts`` in all; after attempt k the wait is ``backoff_base · 2^(k−1)`` capped at
    ``max_backoff`` (none when ``backoff_base`` is 0), plus up to ``jitter`` of it again at
    random. ``kinds``: the error kinds retried (None: every kind but an empty answer, which is
    an answer). ``retry_after``: a server's ``retry-after`` lengthens the wait, and one longer
    than ``max_backoff`` ends the retries at once."""

    attempts: int
    backoff_base: float = DEFAULT_BACKOFF_BASE
    max_backoff: float = DEFAULT_MAX_BACKOFF
    jitter: float = 0.0
    kinds: frozenset | None = RETRYABLE
    retry_after: bool = True

    def delay(self, attempt: int, rng: random.Random | None = None) -> float:
        if self.backoff_base <= 0:
            return 0.0
        wait = self.max_backoff if attempt > 60 else min(self.backoff_base * 2 ** (attempt - 1), self.max_backoff)
        return wait + (rng or random).uniform(0, self.jitter * wait) if self.jitter else wait

    def retries(self, kind: str) -> bool:
        return kind != EMPTY if self.kinds is None else kind in self.kinds


def with_retries(call: Callable[[int], T], policy: RetryPolicy, *,
                 sleep: Callable[[float], None] = time.sleep,
                 on_failure: Callable[[SummarizerError], None] | None = None) -> T:
    """``call(attempt)`` (1, 2, ...) until it returns, retrying a :class:`SummarizerError` as
    ``policy`` says; the last error is raised. ``on_failure`` hears of every failed attempt."""
    attempt = 0
    while True:
        attempt += 1
        try:
            return call(attempt)
        except SummarizerError as err:
            if on_failure is not None:
                on_failure(err)
            if attempt >= policy.attempts or not policy.retries(err.kind) or (
                    err.kind == CONNECTION and attempt >= CONNECTION_ATTEMPTS):
                raise
            wait = policy.delay(attempt)
            if policy.retry_after and err.retry_after is not None:
                if err.retry_after > policy.max_backoff:
                    raise SummarizerError(f"{err} (retry-after {err.retry_after:g}s exceeds {policy.max_backoff:g}s)",
                                          kind=err.kind, status=err.status) from err
                wait = max(wait, err.retry_after)
            if wait > 0:
                sleep(wait)

# Lower-cased fragments of the context-length errors providers return (Anthropic "prompt is too
# long: N tokens > M maximum", OpenAI code context_length_exceeded / "maximum context length",
# and the wordings of the common OpenAI-compatible servers).
_CONTEXT_PHRASES = (
    "prompt is too long", "context_length_exceeded", "maximum context length",
    "context length", "context window", "too many tokens", "input is too long",
    "exceeds the model's context", "reduce the length of the messages", "request too large",
    "prompt too long", "max_tokens_exceeded", "input length",
)


def _lower(value: Any) -> str:
    return value.lower() if isinstance(value, str) else ""


def classify(exc: BaseException) -> tuple[str, int | None]:
    """``(kind, http status)`` for an exception raised by either SDK (or anything else)."""
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    if not isinstance(status, int):
        response = getattr(exc, "response", None)
        status = getattr(response, "status_code", None)
        status = status if isinstance(status, int) else None
    body = getattr(exc, "body", None)
    error = body.get("error") if isinstance(body, dict) else None
    error = error if isinstance(error, dict) else {}
    text = " ".join((_lower(str(exc)), _lower(error.get("message")), _lower(error.get("code")),
                     _lower(error.get("type"))))
    if status is None:
        if "Timeout" in name or "timed out" in text:
            return TIMEOUT, None
        if "Connection" in name:
            return CONNECTION, None
        return OTHER, None
    if status == 413 or (status in (400, 422)
                         and any(phrase in text for phrase in _CONTEXT_PHRASES)):
        return CONTEXT_LENGTH, status  # 413: the request body itself is too large
    if status in (401, 402, 403):
        return AUTH, status
    if status == 429:
        return RATE_LIMIT, status
    if status == 408:
        return TIMEOUT, status
    if status >= 500:
        return SERVER, status
    return OTHER, status


def retry_after(exc: BaseException) -> float | None:
    """Seconds the server asked to wait (``retry-after-ms``, ``retry-after`` seconds or date)."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    value = headers.get("retry-after-ms")
    if value:
        try:
            return max(0.0, float(value) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class _ProviderSummarizer:
    name = ""
    key_env = ""
    base_url_env = ""
    default_base_url = ""
    default_model = ""

    def __init__(self, *, model: str | None = None, base_url: str | None = None,
                 api_key: str | None = None, timeout: float | None = None,
                 retries: int | None = None, env: Mapping[str, str] | None = None,
                 backoff_base: float = DEFAULT_BACKOFF_BASE,
                 max_backoff: float = DEFAULT_MAX_BACKOFF,
                 sleep: Callable[[float], None] = time.sleep,
                 max_failures: int | None = None, warn: Callable[[str], None] | None = None,
                 **_ignored: Any):
        from hermesctx.extras import require

        require(self.name)  # the SDK is an extra: say which, before any input is read
        env = env if env is not None else {}
        self.model = model or self.default_model
        self.base_url = base_url or env.get(self.base_url_env) or self.default_base_url
        self.api_key = api_key or env.get(self.key_env) or None
        self.timeout = float(timeout) if timeout is not None else DEFAULT_TIMEOUT
        self.retries = max(0, int(retries)) if retries is not None else DEFAULT_RETRIES
        self.backoff_base = backoff_base
        self.max_backoff = max_backoff
        self.sleep = sleep
        self.attempts = 0  # attempts made by the last summarize() call (diagnostics)
        self.max_failures = DEFAULT_MAX_FAILURES if max_failures is None else int(max_failures)
        self.failures = 0  # consecutive failed summaries
        self.warn = warn
        self._client = None
        self.last_usage: dict | None = None  # the usage of the call that wrote the last summary

    # subclasses: _make_client() and _call(client, request) -> (text, raw usage or None)
    def _make_client(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def _call(self, client, request: SummaryRequest) -> tuple[str, dict | None]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _live_body(self, request: SummaryRequest, fmt: str) -> dict | None:
        """The live prefix as a ``fmt`` request body (``messages``, and ``system`` / ``tools``
        when it has them), the instruction not yet added; None without a prefix, or when the
        transcript cannot be written so (the serialized prompt is then sent)."""
        if not request.live:
            return None
        from hermesctx import formats

        body = {**request.live_top, "messages": request.live}
        try:
            found = formats.detect_document(body)
            if found not in formats.PLAIN:
                return None
            out = formats.write_back(body, {"format": found}, fmt, {}, {})
        except Exception:  # noqa: BLE001 - odd input the send path refuses: the serialized prompt goes instead
            return None
        if not isinstance(out, dict) or not out.get("messages"):
            return None
        return {k: v for k, v in out.items() if k in ("system", "messages", "tools")}

    def _timeouts(self, sdk):
        """The SDK's timeouts (``sdk.Timeout``): ``timeout`` for each phase, but at most
        ``CONNECT_TIMEOUT`` to connect."""
        return sdk.Timeout(self.timeout, connect=min(self.timeout, CONNECT_TIMEOUT))

    def _no_key(self) -> str | None:
        return None if self.api_key else (
            f"no API key for the {self.name} summarizer: set {self.key_env} or pass --api-key")

    @property
    def client(self):
        if self._client is None:
            problem = self._no_key()
            if problem:
                raise SummarizerError(problem, kind=AUTH)
            self._client = self._make_client()
        return self._client

    def summarize(self, request: SummaryRequest) -> str:
        """One summary; a failure counts toward the circuit breaker, a success resets it."""
        if self.max_failures and self.failures >= self.max_failures:
            self.attempts = 0
            raise SummarizerError(f"{self.name} summarizer ({self.model}): not called after "
                                  f"{self.failures} consecutive failures", kind=CIRCUIT_OPEN)
        self.last_usage = None
        try:
            text = self._summarize(request)
        except SummarizerError as err:
            self.failures += 1
            if self.max_failures and self.failures == self.max_failures and self.warn is not None:
                self.warn(f"the {self.name} summarizer failed {self.failures} times in a row ({err.kind}); "
                          "it is not called again in this run: the fallback summarizes the rest")
            raise
        self.failures = 0
        return text

    def _bounded(self, request: SummaryRequest) -> str:
        """``_call`` with a deadline on the whole attempt: run in a daemon thread, abandoned
        (with its client and connection) when ``timeout`` passes."""
        client = self.client
        box: dict = {}

        def attempt() -> None:
            try:
                box["text"], box["usage"] = self._call(client, request)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                box["error"] = exc

        thread = threading.Thread(target=attempt, name=f"hermesctx-{self.name}-summarizer", daemon=True)
        thread.start()
        thread.join(self.timeout)
        if thread.is_alive():
            self._client = None  # the next attempt gets a new connection
            raise RequestTimeout(f"no complete answer within {self.timeout:g}s")
        if "error" in box:
            raise box["error"]
        self.last_usage = _usage(self.name, box.get("usage"), live=bool(request.live))
        return box["text"]

    def _summarize(self, request: SummaryRequest) -> str:
        policy = RetryPolicy(attempts=self.retries + 1, backoff_base=self.backoff_base, max_backoff=self.max_backoff)
        try:
            return with_retries(lambda attempt: self._attempt(attempt, request), policy, sleep=self.sleep)
        except SummarizerError as err:
            if err.kind not in (CONTEXT_LENGTH, OTHER) or not request.live:
                raise
        # the transcript is more than the model's window, or a request the provider refuses (a
        # 400: a call left without its result, a block it does not take): the serialized turns
        # in one message, cut as Hermes cuts them
        from hermesctx.record import replace

        request = replace(request, live=[], live_top={}, instruction="")
        return with_retries(lambda attempt: self._attempt(attempt, request), policy, sleep=self.sleep)

    def _attempt(self, attempt: int, request: SummaryRequest) -> str:
        self.attempts = attempt
        try:
            text = self._bounded(outgoing(request))
        except SummarizerError:
            raise
        except Exception as exc:  # every SDK error ends up classified
            kind, status = classify(exc)
            raise SummarizerError(f"{self.name} summarizer ({self.model}): {_describe(exc, status)}",
                                  kind=kind, status=status, retry_after=retry_after(exc)) from exc
        if not isinstance(text, str) or not text.strip():
            raise SummarizerError(f"{self.name} summarizer ({self.model}) returned empty content", kind=EMPTY)
        return text.strip()


def _describe(exc: BaseException, status: int | None) -> str:
    body = getattr(exc, "body", None)
    error = body.get("error") if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    text = message if isinstance(message, str) and message else (str(exc) or type(exc).__name__)
    text = " ".join(text.split())
    if len(text) > 300:
        text = text[:297] + "..."
    return f"HTTP {status}: {text}" if status else f"{type(exc).__name__}: {text}"


class AnthropicSummarizer(_ProviderSummarizer):
    name = "anthropic"
    key_env = "ANTHROPIC_API_KEY"
    base_url_env = "ANTHROPIC_BASE_URL"
    default_base_url = "https://api.anthropic.com"
    default_model = "claude-haiku-4-5"

    def __init__(self, *, max_tokens: int | None = None, **options: Any):
        super().__init__(**options)
        self.max_tokens = max_tokens

    def output_cap(self, budget_tokens: int) -> int:
        if self.max_tokens:
            return int(self.max_tokens)
        return max(1024, min(2 * int(budget_tokens or 0), 32000))

    def _make_client(self):
        import anthropic

        return anthropic.Anthropic(api_key=self.api_key, base_url=self.base_url,
                                   timeout=self._timeouts(anthropic), max_retries=0)

    def _call(self, client, request: SummaryRequest) -> tuple[str, dict | None]:
        live = self._live_body(request, "anthropic")
        extra: dict = {}
        if live is None:
            messages: list = [{"role": "user", "content": request.prompt}]
        else:
            fixed = _marks(live.get("system")) + _marks(live.get("tools"))
            messages = _with_instruction(_cache_marked(live["messages"], fixed), request.instruction)
            if live.get("system"):
                extra["system"] = live["system"]
            tools = live.get("tools") or _tools_named(messages)
            if tools:  # (the API wants the tools of the tool_use blocks it reads defined)
                extra.update(tools=tools, tool_choice={"type": "none"})
        with warnings.catch_warnings():  # the SDK warns about deprecated model names
            warnings.simplefilter("ignore", DeprecationWarning)
            response = client.messages.create(
                model=self.model, max_tokens=self.output_cap(request.budget_tokens), messages=messages, **extra)
        parts = [getattr(block, "text", "") for block in (response.content or [])
                 if getattr(block, "type", None) == "text"]
        return "".join(part for part in parts if isinstance(part, str)), _dumped(getattr(response, "usage", None))


class OpenAISummarizer(_ProviderSummarizer):
    name = "openai"
    key_env = "OPENAI_API_KEY"
    base_url_env = "OPENAI_BASE_URL"
    default_base_url = "https://api.openai.com/v1"
    default_model = "gpt-4o-mini"

    def _no_key(self) -> str | None:
        # local OpenAI-compatible servers (vLLM, Ollama, LM Studio) take any key
        if not self.api_key and self.base_url != self.default_base_url:
            self.api_key = "not-needed"
        return super()._no_key()

    def _make_client(self):
        import openai

        return openai.OpenAI(api_key=self.api_key, base_url=self.base_url,
                             timeout=self._timeouts(openai), max_retries=0)

    def _call(self, client, request: SummaryRequest) -> tuple[str, dict | None]:
        live = self._live_body(request, "openai")
        extra: dict = {}
        if live is None:
            messages = [{"role": "user", "content": request.prompt}]
        else:  # the same prefix the agent sent: the provider's automatic prefix caching applies
            messages = [*live["messages"], {"role": "user", "content": request.instruction}]
            if live.get("tools"):
                extra.update(tools=live["tools"], tool_choice="none")
        response = client.chat.completions.create(model=self.model, messages=messages, **extra)
        choices = getattr(response, "choices", None)
        if not choices:
            raise SummarizerError(f"openai summarizer ({self.model}) returned no choices",
                                  kind=EMPTY)
        content = choices[0].message.content
        usage = _dumped(getattr(response, "usage", None))
        if isinstance(content, str):
            return content, usage
        return (str(content) if content else ""), usage


# --- the live prefix --------------------------------------------------------------------------

CACHE_MARK = {"type": "ephemeral"}
_UNMARKABLE = ("thinking", "redacted_thinking")  # (a tuple: a block's type may be unhashable)


def _cache_marked(messages: list, fixed: int = 0) -> list:
    """Anthropic messages with a ``cache_control`` breakpoint on the last block that can hold
    one (not thinking), the markers already there kept, the earliest dropped so that with the
    ``fixed`` ones of the system prompt and tools at most four are left (the API's limit); when
    those hold four already, the messages as they are. The input is not changed."""
    from hermesctx.wire.send import MAX_CACHE_BREAKPOINTS

    if fixed >= MAX_CACHE_BREAKPOINTS:
        return messages
    out = [dict(m) for m in messages]
    marked = [(i, j) for i, m in enumerate(out) if isinstance(m.get("content"), list)
              for j, b in enumerate(m["content"]) if isinstance(b, dict) and "cache_control" in b]
    for i in range(len(out) - 1, -1, -1):
        content = out[i].get("content")
        if isinstance(content, str) and content:
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            continue
        j = next((j for j in range(len(content) - 1, -1, -1) if isinstance(content[j], dict)
                  and content[j].get("type") not in _UNMARKABLE), None)
        if j is None:
            continue
        content = list(content)
        content[j] = {**content[j], "cache_control": dict(CACHE_MARK)}
        out[i]["content"] = content
        marked = [m for m in marked if m != (i, j)]
        break
    for i, j in marked[:max(0, len(marked) - (MAX_CACHE_BREAKPOINTS - 1 - fixed))]:
        content = list(out[i]["content"])
        content[j] = {k: v for k, v in content[j].items() if k != "cache_control"}
        out[i]["content"] = content
    return out


def _marks(blocks: Any) -> int:
    """The ``cache_control`` markers of a system prompt's blocks or of a tool list."""
    return sum(1 for b in blocks if isinstance(b, dict) and "cache_control" in b) if isinstance(blocks, list) else 0


def _with_instruction(messages: list, instruction: str) -> list:
    """The instruction as the last user turn: a block of its own after a user message (two user
    messages in a row are one turn to the API anyway), else a message of its own."""
    block = {"type": "text", "text": instruction}
    last = messages[-1] if messages else None
    if last is not None and last.get("role") == "user":
        content = last.get("content")
        content = [{"type": "text", "text": content}] if isinstance(content, str) and content else \
            list(content) if isinstance(content, list) else []
        return [*messages[:-1], {**last, "content": [*content, block]}]
    return [*messages, {"role": "user", "content": [block]}]


def _tools_named(messages: list) -> list:
    """A bare definition for each tool a ``tool_use`` block names (a body without its tools)."""
    names = dict.fromkeys(b.get("name") for m in messages if isinstance(m.get("content"), list)
                          for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_use"
                          and isinstance(b.get("name"), str) and b.get("name"))
    return [{"name": n, "description": "", "input_schema": {"type": "object"}} for n in names]


def _dumped(usage: Any) -> dict | None:
    """A response's usage as a plain dict (the SDKs return a model)."""
    if usage is None:
        return None
    if isinstance(usage, dict):
        return usage
    dump = getattr(usage, "model_dump", None)
    return dump() if callable(dump) else None


def _usage(provider: str, raw: dict | None, *, live: bool) -> dict | None:
    """The summary call's usage as ``normalize-usage`` counts it: input, output, cache read and
    cache write tokens, and whether the transcript went as a live prefix."""
    if not raw:
        return None
    from hermesctx.stages.normalize_usage import normalize_usage

    try:
        usage = normalize_usage(raw, provider=provider, lenient=True)
    except Exception:  # noqa: BLE001 - a report figure must not fail a summary
        return None
    return {"provider": provider, "live_prefix": live,
            **{k: usage[k] for k in ("input_tokens", "output_tokens", "cache_read_tokens",
                                     "cache_write_tokens", "prompt_tokens")}}
