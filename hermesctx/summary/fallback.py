"""Hermes's deterministic fallback summary: what stands in when no summarizer could answer
(the requested summarizer failed, and the extractive one too). Its text is Hermes 0.19.0's ``_build_static_fallback_summary``, character for
character (the differential tests compare them), with secrets redacted before any cut.
"""

from __future__ import annotations

from hermesctx import lazyre
from hermesctx.jsonio import loads_like_json
from hermesctx.messages import calls_of
from hermesctx.redact import redact
from hermesctx.stubs import summarize_tool_result
from hermesctx.summary.text import (
    IN_PROGRESS_HEADING,
    PENDING_ASKS_HEADING,
    REMAINING_WORK_HEADING,
    TASK_HEADING,
    folded,
    text_view,
    with_summary_prefix,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FALLBACK_MAX_CHARS = 8000
FALLBACK_TURN_MAX_CHARS = 700
REASON_MAX_CHARS = 220
_PATH_MENTION = lazyre.compile(r"(?:/|~/?|[A-Za-z]:\\)[^\s`'\")\]}<>]+")
_GH_TOKEN = lazyre.compile(r"\bgh[pousr]_[A-Za-z0-9_]{8,}\b")
_GH_TOKEN_TAIL = lazyre.compile(r"\bgh[pousr]_[A-Za-z0-9_.-]+")
_BLOCKER = lazyre.compile(r"\b(error|failed|exception|traceback|timeout|timed out|fatal)\b", lazyre.I)


def _compact(value: Any) -> str:
    text = _GH_TOKEN.sub("[REDACTED]", redact(text_view(value)))
    text = folded(text).strip()
    if len(text) > FALLBACK_TURN_MAX_CHARS:
        text = text[:FALLBACK_TURN_MAX_CHARS - 15].rstrip() + " ...[truncated]"
    return _GH_TOKEN_TAIL.sub("[REDACTED]", text)


def _call_name_args(tc: Any) -> tuple[str, str]:
    if isinstance(tc, dict):
        fn = tc.get("function") or {}
        if not isinstance(fn, dict):
            fn = {}
        return str(fn.get("name") or "unknown"), str(fn.get("arguments") or "")
    return "unknown", ""


def _add_unique(items: list, value: str, limit: int) -> None:
    value = value.strip()
    if value and value not in items and len(items) < limit:
        items.append(value)


def _paths_in(text: str, files: list) -> None:
    for match in _PATH_MENTION.findall(text):
        _add_unique(files, match.rstrip(".,:;"), 12)


def _paths_in_json(value: Any, files: list) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if key in ("path", "workdir", "file_path", "output_path") and isinstance(item, str):
                _add_unique(files, item, 12)
            _paths_in_json(item, files)
    elif isinstance(value, list):
        for item in value:
            _paths_in_json(item, files)
    elif isinstance(value, str):
        _paths_in(value, files)


def _bullets(items: list, limit: int = 8) -> str:
    unique: list[str] = []
    for item in items:
        item = item.strip()
        if item and item not in unique:
            unique.append(item)
            if len(unique) >= limit:
                break
    return "\n".join(f"- {item}" for item in unique) if unique else "None."


def failure_reason(err: Any) -> str:
    """The failure reason Hermes records: the error text, stripped (the class name when it is
    empty), cut to 220 characters; redacted whole before the cut (again, forced, where written)."""
    text = redact(str(err)).strip() or type(err).__name__
    return text[:REASON_MAX_CHARS - 3].rstrip() + "..." if len(text) > REASON_MAX_CHARS else text


def static_fallback_summary(turns: list, *, reason: str | None = None, had_previous: bool = False) -> str:
    """Hermes's ``_build_static_fallback_summary`` (spec 30.7.4), prefix included."""
    asks, said, done, files, blockers, dropped = [], [], [], [], [], []
    calls: dict[str, tuple[str, str]] = {}
    for msg in turns:
        if msg.get("role") == "assistant" and msg.get("tool_calls"):
            for tc in calls_of(msg):
                name, raw = _call_name_args(tc)
                args = redact(raw)
                cid = str(tc.get("id") or "") if isinstance(tc, dict) else ""
                if cid:
                    calls[cid] = (name, args)
                if args:
                    try:
                        parsed = loads_like_json(args)
                    except Exception:  # noqa: BLE001 - arguments that are not JSON are text
                        parsed = args
                    _paths_in_json(parsed, files)
    for msg in turns:
        role = msg.get("role", "unknown")
        text = _compact(msg.get("content"))
        _paths_in(text, files)
        names = [_call_name_args(tc)[0] for tc in calls_of(msg)] \
            if role == "assistant" and msg.get("tool_calls") else []
        entry = text
        if names:
            prefix = "tool calls: " + ", ".join(names[:6])
            entry = f"{prefix}; {text}" if text else prefix
        if entry.strip():
            dropped.append(f"{str(role).upper()}: {entry.strip()}")
            del dropped[:-8]
        if len(text) > 600:
            text = text[:420].rstrip() + " ... " + text[-160:].lstrip()
        if role == "user" and text:
            asks.append(text)
        elif role == "assistant":
            if names:
                said.append("Called tool(s): " + ", ".join(names[:6]))
            elif text:
                said.append(text)
        elif role == "tool":
            name, args = calls.get(str(msg.get("tool_call_id") or ""), ("unknown", ""))
            done.append(summarize_tool_result(name, args, text or ""))
            if _BLOCKER.search(text):
                blockers.append(text[:500])
    completed = "\n".join(f"{i}. {item}" for i, item in enumerate((said + done)[:12], start=1)) \
        or "None recoverable from compacted turns."
    task = f"User asked: {asks[-1]!r}" if asks else "Unknown from deterministic fallback."
    previous = ("\n\nPrevious compaction summary was present and should still be treated as background "
                "continuity context, but the latest LLM summary update failed.") if had_previous else ""
    why = f" Summary failure reason: {reason}." if reason else ""
    sections = [
        (TASK_HEADING, task),
        ("## Goal", "Recovered from a deterministic fallback because the LLM context summarizer was unavailable. "
                    "Continue from the protected recent messages after this summary and use current file/system "
                    "state for exact details." + previous),
        ("## Constraints & Preferences", "- This fallback was generated locally without an LLM summary call.\n"
                                         "- Secrets and credentials were redacted before preservation.\n"
                                         "- The summary may be incomplete; prefer verifying current files, git state, "
                                         "processes, and test results instead of assuming omitted details."),
        ("## Completed Actions", completed),
        ("## Active State", "Unknown from deterministic fallback. Inspect current repository/session state if needed."),
        (IN_PROGRESS_HEADING, "Unknown from deterministic fallback — the latest user ask is recorded once under\n"
                              f'"{TASK_HEADING}" above as historical context only. Do NOT treat it as an\n'
                              "unfulfilled instruction to re-answer; verify current state and continue from the\n"
                              "protected recent messages after this summary."),
        ("## Blocked", _bullets(blockers, 5)),
        ("## Key Decisions", "None recoverable from deterministic fallback."),
        ("## Resolved Questions", "None recoverable from deterministic fallback."),
        (PENDING_ASKS_HEADING, "None recoverable from deterministic fallback. (The latest user ask is preserved once\n"
                               f'under "{TASK_HEADING}" as historical context — it is NOT necessarily\noutstanding.)'),
        ("## Relevant Files", _bullets(files, 12)),
        (REMAINING_WORK_HEADING, "Continue from the most recent unfulfilled user ask and protected tail messages. "
                                 "Verify state with tools before making claims."),
        ("## Last Dropped Turns", _bullets(dropped, 8)),
        ("## Critical Context", "Summary generation was unavailable, so this is a best-effort deterministic "
                                f"fallback for {len(turns)} compacted message(s).{why}"),
    ]
    body = "\n\n".join(f"{heading}\n{text}" for heading, text in sections)
    summary = with_summary_prefix(redact(body.strip()))
    if len(summary) > FALLBACK_MAX_CHARS:
        summary = summary[:FALLBACK_MAX_CHARS - 42].rstrip() + "\n...[fallback summary truncated]"
    return summary
