"""Trajectory mode: Hermes's TrajectoryCompressor for ShareGPT training data.

An entry is a JSON object whose ``conversations`` is a list of turns ``{"from", "value"}``
(roles ``system``, ``human``, ``gpt``, ``tool``). A trajectory over ``target_max_tokens`` gets
one pass:

1. protected turns: the first system, human, gpt and tool turn (each unless turned off) and the
   last ``protect_last_n_turns``; split at ``n // 2`` into head and tail; the compressible
   region is ``[max(head) + 1, min(tail))``;
2. the region's start moves forward off ``tool`` turns (a response whose call is in the head);
3. turns are taken greedily from the start until they add up to
   ``(total - target_max_tokens) + summary_target_tokens`` (else the whole region);
4. the end snaps off a ``tool`` turn: forward if it can, else back to the call;
5. the taken turns become one ``{"from": "human", "value": "[CONTEXT SUMMARY]: ..."}`` turn,
   every system turn before it gets the notice text appended;
6. ``compression_metrics`` (Hermes's names) is added to compressed entries.

Tokens are counted per turn (``value`` only, no role overhead) by an injectable counter;
:func:`tiktoken_counter` gives Hermes's counting rules on a tiktoken encoding. Nothing here
mutates its input; kept turns are shallow copies.

:func:`compress_stream` runs entries through a thread pool, summaries requested concurrently,
results yielded in input order with a bounded window of in-flight entries.
"""

from __future__ import annotations

import collections
import datetime
import json
import time
from concurrent.futures import ThreadPoolExecutor

from hermesctx import lazyre, registry
from hermesctx.options import option
from hermesctx.record import field, record, replace
from hermesctx.redact import redact
from hermesctx.summary import EMPTY, SummarizerError, SummaryRequest
from hermesctx.summary.prompt import render_trajectory_turns as render_turns
from hermesctx.summary.prompt import trajectory_prompt
from hermesctx.summary.providers import RetryPolicy, with_retries
from hermesctx.summary.text import LEGACY_PREFIX

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any
    Counter = Callable[[Any], int]

SUMMARY_PREFIX = LEGACY_PREFIX  # "[CONTEXT SUMMARY]:"
DEFAULT_NOTICE = "\n\nSome of your previous tool responses may be summarized to preserve context."
FAILED_SUMMARY = ("[CONTEXT SUMMARY]: [Summary generation failed - previous turns contained tool "
                  "calls and responses that have been compressed to save context space.]")
MAX_BACKOFF = 30.0



@record(frozen=True)
class TrajectoryConfig:
    target_max_tokens: int = 15250
    summary_target_tokens: int = 750
    protect_first_system: bool = True
    protect_first_human: bool = True
    protect_first_gpt: bool = True
    protect_first_tool: bool = True
    protect_last_n_turns: int = 4
    add_summary_notice: bool = True
    summary_notice_text: str = DEFAULT_NOTICE
    max_retries: int = 3  # attempts in total, as Hermes
    retry_delay: float = 2.0  # backoff base in seconds
    metrics_per_trajectory: bool = True

    def with_(self, **changes: Any) -> TrajectoryConfig:
        return replace(self, **{k: v for k, v in changes.items() if v is not None})


@record
class TrajectoryMetrics:
    original_tokens: int = 0
    compressed_tokens: int = 0
    tokens_saved: int = 0
    compression_ratio: float = 1.0
    original_turns: int = 0
    compressed_turns: int = 0
    turns_removed: int = 0
    start_idx: int = -1
    end_idx: int = -1
    turns_count: int = 0
    was_compressed: bool = False
    still_over_limit: bool = False
    skipped_under_target: bool = False
    summarization_api_calls: int = 0
    summarization_errors: int = 0

    def to_dict(self) -> dict:
        return {
            "original_tokens": self.original_tokens,
            "compressed_tokens": self.compressed_tokens,
            "tokens_saved": self.tokens_saved,
            "compression_ratio": round(self.compression_ratio, 4),
            "original_turns": self.original_turns,
            "compressed_turns": self.compressed_turns,
            "turns_removed": self.turns_removed,
            "compression_region": {"start_idx": self.start_idx, "end_idx": self.end_idx,
                                   "turns_count": self.turns_count},
            "was_compressed": self.was_compressed,
            "still_over_limit": self.still_over_limit,
            "skipped_under_target": self.skipped_under_target,
            "summarization_api_calls": self.summarization_api_calls,
            "summarization_errors": self.summarization_errors,
        }


# ---------------------------------------------------------------- token counting


def tiktoken_counter(encoding) -> Counter:
    """Hermes's counting rules over ``encoding.encode``: a falsy value counts 0; special-token
    text counts as one token each; a value that cannot be encoded counts ``len(value) // 4``
    (and one without a length raises ``TypeError``: the trajectory fails)."""

    def count(value: Any) -> int:
        if not value:
            return 0
        try:
            return len(encoding.encode(value, allowed_special="all"))
        except Exception:
            return len(value) // 4

    return count


def encoder_counter(encoder) -> Counter:
    """The same rules over any object with ``encode(text) -> sized`` (e.g. a test tokenizer)."""

    def count(value: Any) -> int:
        if not value:
            return 0
        try:
            return len(encoder.encode(value))
        except Exception:
            return len(value) // 4

    return count


def turn_tokens(turns: list, count: Counter) -> list[int]:
    return [count(turn.get("value", "")) for turn in turns]


# ---------------------------------------------------------------- boundaries


def protected_region(turns: list, config: TrajectoryConfig) -> tuple[set, int, int]:
    """``(protected indices, start, end)`` of the compressible region (before snapping)."""
    n = len(turns)
    firsts: dict[str, int] = {}
    for i, turn in enumerate(turns):
        role = turn.get("from", "")
        if role in ("system", "human", "gpt", "tool") and role not in firsts:
            firsts[role] = i
    flags = {"system": config.protect_first_system, "human": config.protect_first_human,
             "gpt": config.protect_first_gpt, "tool": config.protect_first_tool}
    protected = {index for role, index in firsts.items() if flags[role]}
    protected.update(range(max(0, n - config.protect_last_n_turns), n))
    half = n // 2
    head = [i for i in protected if i < half]
    tail = [i for i in protected if i >= half]
    return protected, (max(head) + 1 if head else 0), (min(tail) if tail else n)


def _clean(turns: list, index: int) -> bool:
    return index >= len(turns) or turns[index].get("from") != "tool"


def snap(turns: list, index: int, lo: int, hi: int) -> int:
    """Move a boundary off a ``tool`` turn: forward up to ``hi`` if that finds a clean index,
    else backward from ``index`` down to ``lo``."""
    ahead = index
    while ahead < hi and not _clean(turns, ahead):
        ahead += 1
    if _clean(turns, ahead):
        return ahead
    back = index
    while back > lo and not _clean(turns, back):
        back -= 1
    return back


# ---------------------------------------------------------------- summary


def normalize_summary(content: Any) -> str:
    """Model output → summary turn value: text stripped, ``[CONTEXT SUMMARY]:`` prefix once."""
    if not isinstance(content, str):
        content = str(content) if content else ""
    text = content.strip()
    if text.startswith(SUMMARY_PREFIX):
        return text
    return f"{SUMMARY_PREFIX} {text}" if text else SUMMARY_PREFIX


_ROLE_FOR = {"system": "system", "human": "user", "gpt": "assistant", "tool": "tool"}
_CALL = lazyre.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", lazyre.S)
_RESPONSE = lazyre.compile(r"<tool_response>\s*(.*?)\s*</tool_response>", lazyre.S)


def _json_object(text: str) -> dict | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def as_messages(turns: list) -> list[dict]:
    """ShareGPT turns as OpenAI chat messages, for summarizers that read turns (extractive):
    ``<tool_call>`` blocks of a gpt turn become ``tool_calls``, the ``<tool_response>`` blocks
    of a tool turn become one ``tool`` message each (ids paired by position when missing)."""
    messages: list[dict] = []
    pending: list[str] = []  # ids of the last assistant turn's calls, in order
    for index, turn in enumerate(turns):
        role = _ROLE_FOR.get(turn.get("from"), "user")
        value = turn.get("value")
        text = value if isinstance(value, str) else ("" if value is None else str(value))
        if role == "assistant":
            calls = []
            for k, block in enumerate(_CALL.findall(text)):
                call = _json_object(block) or {}
                args = call.get("arguments", {})
                calls.append({"id": f"call_{index}_{k}", "type": "function", "function": {
                    "name": str(call.get("name") or "unknown"),
                    "arguments": args if isinstance(args, str) else json.dumps(args)}})
            message = {"role": "assistant", "content": _CALL.sub("", text).strip()}
            if calls:
                message["tool_calls"] = calls
            pending = [call["id"] for call in calls]
            messages.append(message)
        elif role == "tool":
            blocks = _RESPONSE.findall(text) or [text]
            for k, block in enumerate(blocks):
                data = _json_object(block) or {}
                content = data.get("content", block if not data else "")
                call_id = pending[k] if k < len(pending) else f"call_{index}_{k}"
                messages.append({"role": "tool", "tool_call_id": call_id,
                                 "content": content if isinstance(content, str)
                                 else json.dumps(content, ensure_ascii=False)})
            pending = []
        else:
            messages.append({"role": role, "content": text})
    return messages


def retry_policy(config: TrajectoryConfig) -> RetryPolicy:
    """Hermes's: ``max_retries`` attempts whatever the error (an empty reply is kept, not
    retried), ``min(retry_delay·2^(k−1), 30)`` plus up to half again between them, no wait
    when ``retry_delay`` is 0, ``retry-after`` not consulted."""
    return RetryPolicy(attempts=config.max_retries, backoff_base=config.retry_delay, max_backoff=MAX_BACKOFF,
                       jitter=0.5, kinds=None, retry_after=False)


def generate_summary(summarizer, prompt: str, region: list, config: TrajectoryConfig,
                     metrics: TrajectoryMetrics, *, sleep: Callable[[float], None] = time.sleep
                     ) -> str | None:
    """Up to ``max_retries`` attempts (:func:`retry_policy`); the fixed failure text after the
    last one; ``None`` when ``max_retries <= 0`` (no attempt at all, as Hermes). The summary
    text goes through the secret redactor (:mod:`hermesctx.redact`; ``HERMESCTX_REDACT=false``
    turns it off)."""
    if config.max_retries <= 0:
        return None
    request = SummaryRequest(prompt=prompt, budget_tokens=config.summary_target_tokens,
                             turns=as_messages(region))

    def attempt(_: int) -> Any:
        metrics.summarization_api_calls += 1
        try:
            return summarizer.summarize(request)
        except SummarizerError:
            raise
        except Exception as exc:  # noqa: BLE001 - any failure is one failed attempt
            raise SummarizerError(f"{type(exc).__name__}: {exc}") from exc

    def failed(err: SummarizerError) -> None:
        if err.kind != EMPTY:
            metrics.summarization_errors += 1

    try:
        text = with_retries(attempt, retry_policy(config), sleep=sleep, on_failure=failed)
    except SummarizerError as err:
        return normalize_summary("") if err.kind == EMPTY else FAILED_SUMMARY  # Hermes keeps an empty reply
    return normalize_summary(redact(text) if isinstance(text, str) else text)


# ---------------------------------------------------------------- one trajectory


def compress_trajectory(turns: list, *, config: TrajectoryConfig, count: Counter, summarizer,
                        sleep: Callable[[float], None] = time.sleep
                        ) -> tuple[list, TrajectoryMetrics]:
    """One pass of Hermes's algorithm over a turn list; returns ``(turns, metrics)``. The input
    list is returned as is when nothing changes."""
    metrics = TrajectoryMetrics(original_turns=len(turns))
    tokens = turn_tokens(turns, count)
    total = sum(tokens)
    metrics.original_tokens = total
    target = config.target_max_tokens
    if total <= target:
        metrics.skipped_under_target = True
        metrics.compressed_tokens, metrics.compressed_turns = total, len(turns)
        return turns, metrics

    def unchanged() -> tuple[list, TrajectoryMetrics]:
        metrics.compressed_tokens, metrics.compressed_turns = total, len(turns)
        metrics.still_over_limit = total > target
        return turns, metrics

    _, start, end = protected_region(turns, config)
    start = snap(turns, start, start, end)
    if start >= end:
        return unchanged()
    need = (total - target) + config.summary_target_tokens
    taken, until = 0, start
    for index in range(start, end):
        taken += tokens[index]
        until = index + 1
        if taken >= need:
            break
    until = snap(turns, until, start, end)
    if until <= start:
        return unchanged()
    metrics.start_idx, metrics.end_idx, metrics.turns_count = start, until, until - start

    prompt = trajectory_prompt(render_turns(turns, start, until), config.summary_target_tokens)
    summary = generate_summary(summarizer, prompt, turns[start:until], config, metrics,
                               sleep=sleep)
    out = []
    for turn in turns[:start]:
        turn = dict(turn)
        if turn.get("from") == "system" and config.add_summary_notice:
            turn["value"] = turn["value"] + config.summary_notice_text
        out.append(turn)
    out.append({"from": "human", "value": summary})
    out.extend(dict(turn) for turn in turns[until:])

    metrics.compressed_turns = len(out)
    metrics.compressed_tokens = sum(turn_tokens(out, count))
    metrics.turns_removed = metrics.original_turns - metrics.compressed_turns
    metrics.tokens_saved = metrics.original_tokens - metrics.compressed_tokens
    metrics.compression_ratio = metrics.compressed_tokens / max(metrics.original_tokens, 1)
    metrics.was_compressed = True
    metrics.still_over_limit = metrics.compressed_tokens > target
    return out, metrics


def process_entry(entry: Any, *, config: TrajectoryConfig, count: Counter, summarizer,
                  sleep: Callable[[float], None] = time.sleep) -> tuple[Any, TrajectoryMetrics]:
    """One JSONL entry: a shallow copy with ``conversations`` replaced and, for a compressed
    trajectory, ``compression_metrics`` added; an entry without ``conversations`` is returned
    as is. Raises on malformed turns (the caller writes the entry unchanged)."""
    if isinstance(entry, (list, str)) and "conversations" not in entry:
        return entry, TrajectoryMetrics()
    if not isinstance(entry, dict):
        raise TypeError(f"entry is a JSON {type(entry).__name__}, not an object")
    if "conversations" not in entry:
        return entry, TrajectoryMetrics()
    turns, metrics = compress_trajectory(entry["conversations"], config=config, count=count,
                                         summarizer=summarizer, sleep=sleep)
    result = dict(entry)
    result["conversations"] = turns
    if config.metrics_per_trajectory and metrics.was_compressed:
        result["compression_metrics"] = metrics.to_dict()
    return result, metrics


# ---------------------------------------------------------------- aggregate


@record
class AggregateMetrics:
    total_trajectories: int = 0
    compressed: int = 0
    skipped: int = 0
    still_over: int = 0
    failed: int = 0
    tokens_before: int = 0
    tokens_after: int = 0
    tokens_saved: int = 0
    turns_before: int = 0
    turns_after: int = 0
    turns_removed: int = 0
    api_calls: int = 0
    api_errors: int = 0
    ratios: list = field(default_factory=list)
    saved_list: list = field(default_factory=list)
    removed_list: list = field(default_factory=list)
    start_time: str = ""
    end_time: str = ""
    duration: float = 0.0
    _started: float = 0.0

    def start(self) -> None:
        self.start_time = datetime.datetime.now().isoformat()
        self._started = time.monotonic()

    def finish(self) -> None:
        self.end_time = datetime.datetime.now().isoformat()
        self.duration = time.monotonic() - self._started

    def add(self, m: TrajectoryMetrics) -> None:
        self.total_trajectories += 1
        self.tokens_before += m.original_tokens
        self.tokens_after += m.compressed_tokens
        self.tokens_saved += m.tokens_saved
        self.turns_before += m.original_turns
        self.turns_after += m.compressed_turns
        self.turns_removed += m.turns_removed
        self.api_calls += m.summarization_api_calls
        self.api_errors += m.summarization_errors
        if m.was_compressed:
            self.compressed += 1
            self.ratios.append(m.compression_ratio)
            self.saved_list.append(m.tokens_saved)
            self.removed_list.append(m.turns_removed)
        self.skipped += bool(m.skipped_under_target)
        self.still_over += bool(m.still_over_limit)

    def to_dict(self) -> dict:
        def mean(values, default):
            return sum(values) / len(values) if values else default

        return {
            "summary": {
                "total_trajectories": self.total_trajectories,
                "trajectories_compressed": self.compressed,
                "trajectories_skipped_under_target": self.skipped,
                "trajectories_still_over_limit": self.still_over,
                "trajectories_failed": self.failed,
                "compression_rate": round(self.compressed / max(self.total_trajectories, 1), 4),
            },
            "tokens": {
                "total_before": self.tokens_before,
                "total_after": self.tokens_after,
                "total_saved": self.tokens_saved,
                "overall_compression_ratio": round(self.tokens_after / max(self.tokens_before, 1), 4),
            },
            "turns": {
                "total_before": self.turns_before,
                "total_after": self.turns_after,
                "total_removed": self.turns_removed,
            },
            "averages": {
                "avg_compression_ratio": round(mean(self.ratios, 1.0), 4),
                "avg_tokens_saved_per_compressed": round(mean(self.saved_list, 0), 1),
                "avg_turns_removed_per_compressed": round(mean(self.removed_list, 0), 2),
            },
            "summarization": {
                "total_api_calls": self.api_calls,
                "total_errors": self.api_errors,
                "success_rate": round(1 - self.api_errors / max(self.api_calls, 1), 4),
            },
            "processing": {
                "start_time": self.start_time,
                "end_time": self.end_time,
                "duration_seconds": round(self.duration, 2),
            },
        }


# ---------------------------------------------------------------- a stream of entries


@record
class Outcome:
    entry: Any  # what to write: the result, or the input unchanged on failure
    metrics: TrajectoryMetrics | None  # None when the entry failed
    error: str | None = None
    tag: Any = None  # whatever the caller passed along with the entry (e.g. its line number)


def compress_stream(items: Iterable[tuple[Any, Any]], *, config: TrajectoryConfig,
                    count: Counter, summarizer, concurrency: int = 1,
                    window: int | None = None, aggregate: AggregateMetrics | None = None,
                    sleep: Callable[[float], None] = time.sleep) -> Iterator[Outcome]:
    """Process ``(entry, tag)`` pairs; yield an :class:`Outcome` per entry in input order.

    With ``concurrency > 1`` entries run in a thread pool (summaries requested concurrently);
    at most ``window`` (default ``4 × concurrency``) entries are in flight, so memory does not
    grow with the batch. A failing entry is yielded unchanged with its error and counted in
    ``aggregate.failed``; the others are added to ``aggregate``.
    """

    def job(entry: Any, tag: Any) -> Outcome:
        try:
            result, metrics = process_entry(entry, config=config, count=count,
                                            summarizer=summarizer, sleep=sleep)
        except Exception as exc:  # malformed turns: write the entry unchanged, count it failed
            return Outcome(entry, None, f"{type(exc).__name__}: {exc}", tag)
        return Outcome(result, metrics, None, tag)

    def record(outcome: Outcome) -> Outcome:
        if aggregate is not None:
            if outcome.metrics is None:
                aggregate.failed += 1
            else:
                aggregate.add(outcome.metrics)
        return outcome

    if concurrency <= 1:
        for entry, tag in items:
            yield record(job(entry, tag))
        return
    limit = max(window or 4 * concurrency, concurrency)
    pending: collections.deque = collections.deque()
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="trajectory")
    finished = False
    try:
        for entry, tag in items:
            pending.append(pool.submit(job, entry, tag))
            while len(pending) >= limit or (pending and pending[0].done()):
                yield record(pending.popleft().result())
        while pending:
            yield record(pending.popleft().result())
        finished = True
    finally:
        # closed early (stdout gone, Ctrl-C): drop queued work, do not wait for it
        pool.shutdown(wait=finished, cancel_futures=True)


ROLES = ("system", "human", "gpt", "tool")


@record(frozen=True)
class Options:
    target_max_tokens: int = option(15250, flag="--target-max-tokens", kind=int, low=0, show_default=True,
                                    help="Compress trajectories over this many tokens.")
    summary_target_tokens: int = option(750, flag="--summary-target-tokens", kind=int, low=0,
                                        show_default=True, help="Budget of the summary turn.")
    protect_first: str = option("system,human,gpt,tool", flag="--protect-first", show_default=True,
                                help="Roles whose first turn is always kept (comma list; '' for none).")
    protect_last_turns: int = option(4, flag="--protect-last-turns", kind=int, low=0, show_default=True,
                                     aliases=("--protect-last-n",), help="Turns always kept at the end.")
    notice: bool = option(True, flag="--notice/--no-notice", kind=bool, show_default=True,
                          help="Append the notice text to the system turns before the summary.")
    notice_text: str | None = option(flag="--notice-text", help="The notice appended to system turns.")
    entry_metrics: bool = option(True, flag="--entry-metrics/--no-entry-metrics", kind=bool, show_default=True,
                                 help="Add compression_metrics to each compressed entry.")
    metrics_path: str | None = option(flag="--metrics", path="file",
                                      help="Write the aggregate metrics (JSON) to FILE instead of stderr.")
    encoding: str = option("o200k_base", flag="--encoding", choices=("o200k_base", "cl100k_base"),
                           show_default=True, help="tiktoken encoding that counts the tokens.")
    summarizer: str | None = option(
        flag="--summarizer", choices=registry.names(registry.SUMMARIZERS),
        help="Who writes the summaries (default: auxiliary.compression.provider if it is "
             "anthropic or openai, else extractive).")
    summary_model: str | None = option(flag="--summary-model", key="auxiliary.compression.model",
                                       aliases=("--model",), help="Summarizer model.")
    base_url: str | None = option(flag="--base-url", key="auxiliary.compression.base_url",
                                  help="Summarizer endpoint (any OpenAI-compatible URL).")
    api_key: str | None = option(flag="--api-key", key="auxiliary.compression.api_key",
                                 help="Summarizer API key (default: ANTHROPIC_API_KEY / OPENAI_API_KEY).")
    timeout: float | None = option(flag="--timeout", kind=float, low=0, open_low=True,
                                   key="auxiliary.compression.timeout",
                                   help="Seconds per summary request (default: auxiliary.compression.timeout, 120).")
    max_retries: int = option(3, flag="--max-retries", kind=int, low=0, show_default=True,
                              help="Summary attempts per trajectory before the fixed failure text.")
    retry_delay: float = option(2.0, flag="--retry-delay", kind=float, low=0, show_default=True,
                                help="Backoff base in seconds between attempts (0: no wait).")
    concurrency: int = option(4, flag="--concurrency", short="-j", kind=int, low=1, show_default=True,
                              help="Trajectories summarized at once (output order is kept).")


def roles(value: str) -> tuple[str, ...]:
    """``--protect-first``'s comma list; ValueError naming an unknown role."""
    found = tuple(part.strip() for part in value.split(",") if part.strip())
    bad = [role for role in found if role not in ROLES]
    if bad:
        raise ValueError(f"unknown role {bad[0]!r} (choose from {', '.join(ROLES)})")
    return found


def run(options: Options, ctx, entries: Iterable[tuple[Any, str]]) -> None:
    """``hermesctx trajectory``: every entry (``(value, where)``, as
    :func:`hermesctx.transcripts.entries` reads them) compressed to the budget, written in input
    order on stdout as soon as it is ready; the aggregate metrics on stderr or in
    ``metrics_path``."""
    from contextlib import closing

    from hermesctx import jsonio
    from hermesctx.encodings import EncodingUnavailable, get_encoding
    from hermesctx.errors import FileIOError, UsageError
    from hermesctx.options import flags

    env = ctx.env
    settings = ctx.settings_with(flags(options))
    try:
        protect_first = roles(options.protect_first)
    except ValueError as exc:
        raise UsageError(f"--protect-first: {exc}") from None
    config = TrajectoryConfig(
        target_max_tokens=options.target_max_tokens, summary_target_tokens=options.summary_target_tokens,
        protect_first_system="system" in protect_first, protect_first_human="human" in protect_first,
        protect_first_gpt="gpt" in protect_first, protect_first_tool="tool" in protect_first,
        protect_last_n_turns=options.protect_last_turns, add_summary_notice=options.notice,
        max_retries=options.max_retries, retry_delay=options.retry_delay,
        metrics_per_trajectory=options.entry_metrics,
    ).with_(summary_notice_text=options.notice_text)
    try:
        count = tiktoken_counter(get_encoding(options.encoding))
    except EncodingUnavailable as exc:
        raise UsageError(f"encoding {options.encoding}: {exc}") from None
    engine = _make_summarizer(options.summarizer, settings, env.environ)

    aggregate = AggregateMetrics()
    aggregate.start()
    progress = env.stderr_isatty and not env.quiet
    done = 0
    with closing(compress_stream(entries, config=config, count=count,
                                 summarizer=engine, concurrency=options.concurrency,
                                 aggregate=aggregate)) as outcomes:
        for outcome in outcomes:
            env.stdout.write(jsonio.dumps(outcome.entry))
            done += 1
            if outcome.error:
                env.warn(f"{outcome.tag}: trajectory failed ({outcome.error}); written unchanged")
            if progress:
                env.stderr.write(f"\rtrajectory: {done} done, {aggregate.compressed} compressed, "
                                 f"{aggregate.failed} failed")
                env.stderr.flush()
            env.stdout.flush()  # a line is out as soon as it is ready
    env.stdout.flush()
    if progress:
        env.stderr.write("\n")
    aggregate.finish()
    report = aggregate.to_dict()
    if options.metrics_path:
        try:
            jsonio.write_atomic(options.metrics_path, (json.dumps(report, indent=2) + "\n").encode())
        except OSError as exc:
            raise FileIOError(f"cannot write metrics {options.metrics_path}: {exc.strerror}") from None
    elif not env.quiet:
        env.stderr.write(json.dumps(report) + "\n")


def _make_summarizer(name: str | None, settings, environ):
    """The summarizer :func:`hermesctx.summary.choose` picks (the rule ``compress`` uses), with
    no retries inside: the stage makes Hermes's --max-retries attempts itself."""
    from hermesctx.errors import UpstreamError, UsageError
    from hermesctx.summary import choose

    try:
        engine = choose(settings, name=name, retries=0, max_failures=0, environ=environ)
    except ModuleNotFoundError:
        raise UsageError("the extractive summarizer is not available in this build",
                         hint="use --summarizer anthropic or openai") from None
    if engine.name not in ("anthropic", "openai"):  # extractive, or a plugin summarizer
        return engine
    try:
        engine.client  # noqa: B018 - fails now (like Hermes's constructor) when there is no key
    except SummarizerError as err:
        raise UpstreamError(str(err)) from None
    return engine
