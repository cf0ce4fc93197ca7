"""Clearing old thinking and reasoning (``prune --clear-thinking KEEP``, issue 34).

The thinking of all but the last KEEP assistant turns is removed: Anthropic ``thinking`` and
``redacted_thinking`` content blocks, and the reasoning an OpenAI-shaped message carries
(``reasoning``, ``reasoning_content``, ``reasoning_details``, ``codex_reasoning_items``).
A block or item is removed whole or kept as it is, never edited, so a signature is never
broken. The assistant turns of the tool-use loop still open (every assistant message after the
last user message that is not a tool result) always keep theirs: the API requires the last
assistant turn's thinking to come back unchanged while its tool calls are answered. A message
whose content would be left empty keeps its blocks. Pure: the input is never mutated.
"""

from __future__ import annotations

REASONING_KEYS = ("reasoning", "reasoning_content", "reasoning_details", "codex_reasoning_items")
THINKING_BLOCKS = frozenset({"thinking", "redacted_thinking"})


def _is_user_turn(msg: dict) -> bool:
    """A user message that is not only tool results (an Anthropic tool_result list is not)."""
    if msg.get("role") != "user":
        return False
    content = msg.get("content")
    if isinstance(content, list):
        return not all(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    return True


def clear_thinking(messages: list, keep: int) -> tuple[list, dict]:
    """``(new_messages, report)``; report: ``cleared_blocks`` (Anthropic blocks),
    ``cleared_fields`` (OpenAI reasoning fields), ``messages_changed``, ``chars_removed``,
    ``kept_open_loop`` (assistant turns kept because their tool-use loop is open) and
    ``kept_nonempty`` (messages left alone so their content stays non-empty)."""
    assistants = [i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "assistant"]
    last_user = max((i for i, m in enumerate(messages) if isinstance(m, dict) and _is_user_turn(m)), default=-1)
    open_loop = {i for i in assistants if i > last_user}
    kept = set(assistants[-keep:]) if keep > 0 else set()
    report = {**new_report(keep), "kept_open_loop": len(open_loop - kept)}
    out = list(messages)
    for i in assistants:
        if i in kept or i in open_loop:
            continue
        new = strip(messages[i], report)
        if new is not None:
            out[i] = new
            report["messages_changed"] += 1
    report["tokens_saved"] = report["chars_removed"] // 4
    return (out if report["messages_changed"] else messages), report


def strip(msg: dict, report: dict) -> dict | None:
    """``msg`` without its thinking blocks and reasoning fields (None: nothing to remove, or
    only thinking in its content, which must stay non-empty); counts into ``report``."""
    new = dict(msg)
    removed = 0
    for key in REASONING_KEYS:
        if key in new and new[key]:
            report["chars_removed"] += len(str(new.pop(key)))
            report["cleared_fields"] += 1
            removed += 1
    content = msg.get("content")
    if isinstance(content, list):
        rest = [b for b in content if not (isinstance(b, dict) and b.get("type") in THINKING_BLOCKS)]
        if len(rest) != len(content):
            if rest:
                for b in content:
                    if isinstance(b, dict) and b.get("type") in THINKING_BLOCKS:
                        report["chars_removed"] += len(str(b.get("thinking") or b.get("data") or ""))
                report["cleared_blocks"] += len(content) - len(rest)
                new["content"] = rest
                removed += 1
            else:
                report["kept_nonempty"] += 1
    return new if removed else None


def new_report(keep: int) -> dict:
    return {"keep": keep, "cleared_blocks": 0, "cleared_fields": 0, "messages_changed": 0, "chars_removed": 0,
            "kept_open_loop": 0, "kept_nonempty": 0}


def describe(report: dict) -> str:
    line = (f"cleared thinking of {report['messages_changed']} assistant turns ({report['cleared_blocks']} blocks, "
            f"{report['cleared_fields']} reasoning fields, ~{report['tokens_saved']:,} tokens), kept the last "
            f"{report['keep']}")
    if report["kept_open_loop"]:
        line += f" and {report['kept_open_loop']} of the open tool-use loop"
    return line
