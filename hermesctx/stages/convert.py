"""Convert one transcript between formats: source -> OpenAI messages -> target.

Pure: plain dicts in, plain dicts out, the input untouched. What the target cannot hold is
counted in the report's ``lost`` (``what -> count``) for the caller to put on stderr.
"""

from __future__ import annotations

from typing import Any

from hermesctx import formats
from hermesctx.messages import content_text


def convert(doc: Any, *, source: str = formats.AUTO, target: str = formats.OPENAI,
            info: dict | None = None) -> tuple[Any, dict]:
    """``doc`` in format ``source`` (``auto``: detected) -> ``(converted, report)``.

    ``info`` is what a log reader already found (the document is then OpenAI messages)."""
    lost: dict = {}
    if info and info.get("format") in formats.LOG_FORMATS:
        found = info["format"]
        openai = doc
        lost.update(info.get("lost") or {})
    else:
        found = formats.detect_document(doc) if source == formats.AUTO else source
        if found == target and found in (formats.OPENAI, formats.ANTHROPIC, formats.SHAREGPT):
            return doc, _report(found, target, doc, lost)
        openai = formats.to_openai(doc, found, lost)
    out = formats.from_openai(openai, target, lost)
    return out, _report(found, target, openai, lost)


def _report(found: str, target: str, openai: Any, lost: dict) -> dict:
    messages = openai.get("messages") if isinstance(openai, dict) else openai
    messages = messages if isinstance(messages, list) else []
    calls = sum(len(m.get("tool_calls") or ()) for m in messages if isinstance(m, dict))
    results = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "tool")
    return {"from": found, "to": target, "messages": len(messages), "tool_calls": calls,
            "tool_results": results, "lost": dict(lost)}


def describe(report: dict) -> str:
    line = (f"{report['from']} -> {report['to']}: {report['messages']} messages, "
            f"{report['tool_calls']} tool calls, {report['tool_results']} results")
    if report["lost"]:
        line += "; not kept: " + ", ".join(f"{what} ({n})" for what, n in report["lost"].items())
    return line


def text_of(messages: list) -> list[str]:
    """Every piece of text of a transcript, in order (for tests of text preservation)."""
    out = []
    for msg in messages:
        text = content_text(msg.get("content"))
        if text:
            out.append(text)
        if msg.get("reasoning"):
            out.append(msg["reasoning"])
    return out


def usage_report(info: dict, estimate_report: dict) -> dict | None:
    """For ``estimate`` on a session log: the usage recorded in the log beside the estimate.

    Claude Code: the last main-thread reply's ``input_tokens + cache_creation_input_tokens +
    cache_read_input_tokens`` is what the model saw as prompt; Codex: ``last_token_usage``'s
    ``input_tokens``. The estimate side is ``estimate_report['tokens']['total']`` when present,
    else its ``total_tokens``/``tokens`` figure. Returns None when the log recorded no usage.
    """
    usage = info.get("usage") if isinstance(info, dict) else None
    if not isinstance(usage, dict):
        return None
    if info.get("format") == formats.CODEX:
        prompt = int(usage.get("input_tokens") or 0)
        output = int(usage.get("output_tokens") or 0)
    else:
        prompt = sum(int(usage.get(k) or 0) for k in (
            "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
        output = int(usage.get("output_tokens") or 0)
    estimated = _estimated_total(estimate_report)
    out = {"source": info.get("format"), "prompt_tokens": prompt, "output_tokens": output,
           "context_tokens": prompt + output}
    if estimated is not None:
        out["estimated_tokens"] = estimated
        out["difference"] = estimated - (prompt + output)
        out["difference_pct"] = (round(100.0 * (estimated - prompt - output) / (prompt + output), 1)
                                 if prompt + output else None)
    return out


def _estimated_total(report: dict) -> int | None:
    if not isinstance(report, dict):
        return None
    for key in ("total_tokens", "tokens", "prompt_tokens"):
        value = report.get(key)
        if isinstance(value, int):
            return value
        if isinstance(value, dict) and isinstance(value.get("total"), int):
            return value["total"]
    return None
