"""What the summarizer is given: the middle turns as text, the focus topic, the structured
handoff prompt, and the deterministic task snapshot grafted onto its answer; and, side by
side, the prompt of ``trajectory``. The prose is in ``texts/*.md``.

The turn serialization, focus topic and snapshot are Hermes's (they decide what reaches the
output); the prompt wording is ours, with the structure Hermes uses: a preamble, the turns (or
the previous summary and the new turns), the 13-section template, the size target, a date
anchor, and the focus guidance.
"""

from __future__ import annotations

import itertools

from hermesctx import lazyre
from hermesctx.messages import IMAGE_PART_TYPES, calls_of, part_type
from hermesctx.redact import hermes_only, redact
from hermesctx.summary.text import (
    LEGACY_PREFIX,
    TASK_HEADING,
    folded,
    is_summary_content,
    render,
    replace_task_section,
    strip_summary_prefix,
    template,
    text_view,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CONTENT_MAX, CONTENT_HEAD, CONTENT_TAIL = 6000, 4000, 1500
ARGS_MAX, ARGS_HEAD = 1500, 1200
_MEDIA = lazyre.compile(r"MEDIA:\S+")
_THINK_TAGS = ("think", "thinking", "reasoning", "REASONING_SCRATCHPAD", "thought")
_TOOL_XML = ("tool_call", "tool_calls", "tool_result", "function_call", "function_calls")
_F = lazyre.DOTALL | lazyre.IGNORECASE
_THINK_PAIRS = [lazyre.compile(rf"<{tag}>.*?</{tag}>", _F) for tag in _THINK_TAGS]
_XML_PAIRS = [lazyre.compile(rf"<{tag}\b[^>]*>.*?</{tag}>", _F) for tag in _TOOL_XML]
_FUNCTION_BLOCK = lazyre.compile(r"(?:(?<=^)|(?<=[\n\r.!?:]))[ \t]*<function\b[^>]*\bname\s*=[^>]*>"
                             r"(?:(?:(?!</function>).)*)</function>", _F)
_OPEN_THINK_TO_END = lazyre.compile(r"(?:^|\n)[ \t]*<(?:think|thinking|reasoning|thought|REASONING_SCRATCHPAD)\b[^>]*>.*$", _F)
_STRAY_THINK = lazyre.compile(r"</?(?:think|thinking|reasoning|thought|REASONING_SCRATCHPAD)>\s*", lazyre.IGNORECASE)
_STRAY_XML = lazyre.compile(r"</(?:tool_call|tool_calls|tool_result|function_call|function_calls|function)>\s*",
                        lazyre.IGNORECASE)

FOCUS_TURNS, FOCUS_TURN_CHARS, FOCUS_CHARS = 3, 260, 700
SNAPSHOT_CHARS = 1400
_SYNTHETIC_FLAGS = ("_todo_snapshot_synthetic", "_empty_recovery_synthetic", "_verification_stop_synthetic",
                    "_pre_verify_synthetic")
_SYNTHETIC_PREFIXES = ("[System: Your previous response was truncated", "[System: The previous response was cut off",
                       "[System: Your previous tool call",
                       "[Your active task list was preserved across context compression]",
                       "[IMPORTANT: Background process ")


def strip_think_tags(text: str) -> str:
    """An assistant reply with its reasoning kept and the tags around it removed."""
    return _STRAY_THINK.sub("\n", text)


def strip_think_blocks(text: str) -> str:
    """Visible text of an assistant reply: reasoning blocks and tool-call XML removed."""
    if not text:
        return ""
    for pattern in (*_THINK_PAIRS, *_XML_PAIRS, _FUNCTION_BLOCK, _OPEN_THINK_TO_END):
        text = pattern.sub("", text)
    return _STRAY_XML.sub("", _STRAY_THINK.sub("", text))


def _clip(text: str) -> str:
    if len(text) > CONTENT_MAX:
        return text[:CONTENT_HEAD] + "\n...[truncated]...\n" + text[-CONTENT_TAIL:]
    return text


def _image_label(part: dict) -> str:
    image = part.get("image_url")
    url = str(image.get("url") or "") if isinstance(image, dict) else image if isinstance(image, str) else (
        part["url"] if isinstance(part.get("url"), str) else "")
    return f"[image: {url}]" if url.startswith(("http://", "https://")) else "[image]"


def _flatten(content: Any) -> Any:
    if not isinstance(content, list):
        return content
    out = []
    for part in content:
        if isinstance(part, dict):
            kind = part.get("type")
            if kind == "text":
                text = part.get("text")  # null or a number: Hermes's join would fail; kept readable
                out.append(text if isinstance(text, str) else "" if text is None else str(text))
            elif part_type(part) in IMAGE_PART_TYPES:
                out.append(_image_label(part))
            else:
                out.append(f"[{kind or 'attachment'}]")
        elif isinstance(part, str):
            out.append(part)
    return "\n".join(out)


def serialize_turns(turns: list) -> str:
    """The middle as the summarizer reads it: ``[ROLE]: text`` blocks, secrets redacted,
    reasoning stripped, long texts cut to head + tail, tool calls listed under the assistant."""
    blocks = []
    for msg in turns:
        role = msg.get("role", "unknown")
        text = _MEDIA.sub("[media attachment]", redact(_flatten(msg.get("content")) or ""))
        if role == "assistant" and text:
            text = strip_think_blocks(text)
        text = _clip(text)
        if role == "tool":
            blocks.append(f"[TOOL RESULT {msg.get('tool_call_id', '')}]: {text}")
        elif role == "assistant":
            calls = calls_of(msg) if "tool_calls" in msg else []
            if calls:
                lines = []
                for tc in calls:
                    if isinstance(tc, dict):
                        fn = tc.get("function") if isinstance(tc.get("function"), dict) else {}
                        args = redact(fn.get("arguments", "")) or ""
                        if len(args) > ARGS_MAX:
                            args = args[:ARGS_HEAD] + "..."
                        lines.append(f"  {fn.get('name', '?')}({args})")
                    else:
                        lines.append("  ?(...)")
                text += "\n[Tool calls:\n" + "\n".join(lines) + "\n]"
            blocks.append(f"[ASSISTANT]: {text}")
        else:
            blocks.append(f"[{str(role).upper()}]: {text}")
    return "\n\n".join(blocks)


def auto_focus_topic(messages: list) -> str | None:
    """The last three real user asks of the whole transcript, as the default focus."""
    picked: list[str] = []
    for msg in reversed(messages):
        if msg.get("role") != "user" or is_summary_content(msg.get("content")):
            continue
        text = redact(text_view(msg.get("content")).strip())
        if not text:
            continue
        text = " ".join(text.split())
        if len(text) > FOCUS_TURN_CHARS:
            text = text[:FOCUS_TURN_CHARS - 1].rstrip() + "…"
        picked.append(text)
        if len(picked) >= FOCUS_TURNS:
            break
    if not picked:
        return None
    focus = "Recent user focus:\n" + "\n".join(f"- {item}" for item in reversed(picked))
    return focus[:FOCUS_CHARS - 1].rstrip() + "…" if len(focus) > FOCUS_CHARS else focus


def _message_text(msg: dict) -> str:
    content = msg.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text") or p.get("content") or "") for p in content if isinstance(p, dict))
    return ""


def is_real_user_message(msg: Any) -> bool:
    """A user turn typed by a person (not runtime scaffolding, not a summary)."""
    if not isinstance(msg, dict) or msg.get("role") != "user":
        return False
    if any(msg.get(flag) for flag in _SYNTHETIC_FLAGS):
        return False
    text = _message_text(msg).strip()
    return bool(text) and not text.startswith(_SYNTHETIC_PREFIXES) and not is_summary_content(text)


def latest_user_ask(turns: list) -> tuple[int, str] | None:
    """Index and normalized text of the newest real user ask among ``turns``."""
    for i in range(len(turns) - 1, -1, -1):
        msg = turns[i]
        if msg.get("role") != "user" or not is_real_user_message(msg):
            continue
        text = redact(text_view(msg.get("content")).strip())
        if text:
            return i, folded(text)
    return None


def task_snapshot(turns: list) -> str | None:
    found = latest_user_ask(turns)
    if found is None:
        return None
    text = found[1]
    if len(text) > SNAPSHOT_CHARS:
        text = text[:SNAPSHOT_CHARS - 15].rstrip() + " ...[truncated]"
    return (f"User asked (deterministic, from compacted turns): {text!r}\n"
            "Historical only; newer protected-tail messages after this summary win.")


def ground_snapshot(summary: str, turns: list) -> str:
    """The summary with its task-snapshot section replaced by the deterministic one."""
    snapshot = task_snapshot(turns)
    if not snapshot:
        return summary
    return replace_task_section(strip_summary_prefix(summary), f"{TASK_HEADING}\n{snapshot}\n\n")


# --- the prompt (our wording) --------------------------------------------------------------

# the 13 sections of the structured summary, as ``(heading, what it holds)``: read off the template
SECTIONS = [(heading, what[1:-1]) for heading, what in itertools.pairwise(template("compress_template").split("\n"))
            if heading.startswith("## ") and len(heading) > 3 and what.startswith("[") and what.endswith("]")]
_PREAMBLE = template("compress_preamble")


def build_prompt(turns_text: str, *, budget: int, previous_summary: str | None = None,
                 focus: str | None = None, today: str | None = None) -> str:
    """The compress prompt (``texts/compress_*.md``): preamble, the turns (or the previous summary
    and the new turns), the section template with the size target and date anchor, the focus."""
    if today is None:
        from datetime import date

        today = date.today().isoformat()
    if not hermes_only():
        # the turns are redacted already (before their cuts); Hermes sends these two as they are
        previous_summary, focus = redact(previous_summary), redact(focus)
    if previous_summary:
        body = render("compress_update", previous=previous_summary, turns=turns_text, fold=template("compress_fold"))
    else:
        body = render("compress_first", turns=turns_text)
    return _with_template([_PREAMBLE, body], budget, focus, today)


def _with_template(parts: list, budget: int, focus: str | None, today: str) -> str:
    """``parts``, then the section template with the size target and date anchor, then the focus."""
    parts = [*parts, render("compress_template", budget=budget,
                            date=render("compress_date", today=today) + "\n\n" if today else "")]
    if focus:
        parts.append(render("compress_focus", focus=focus))
    return "\n\n".join(parts)


OPENING_CHARS = 100  # of the first replaced message, quoted to say where the summary starts


def _describe_first(msg: dict) -> str:
    """The first message a summary replaces, told so a model finds it in the conversation: by
    the start of its text, else by the tools it calls."""
    text = folded(text_view(msg.get("content"))).strip()
    if text:
        if len(text) > OPENING_CHARS:
            text = text[:OPENING_CHARS - 1].rstrip() + "…"
        return f'the message that begins "{text}"'
    calls = [(fn.get("name"), fn.get("arguments")) for tc in calls_of(msg) if isinstance(tc, dict)
             and isinstance(fn := tc.get("function"), dict)] if "tool_calls" in msg else []
    content = msg.get("content")
    if isinstance(content, list):
        calls += [(b.get("name"), b.get("input")) for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]
    calls = [(name, args) for name, args in calls if isinstance(name, str) and name]
    if calls:
        from hermesctx.jsonio import dumps_like_json

        name, args = calls[0]
        args = folded(args if isinstance(args, str) else dumps_like_json(args, ensure_ascii=False, default=str))
        if len(args) > OPENING_CHARS:
            args = args[:OPENING_CHARS - 1].rstrip() + "…"
        more = f" (and {len(calls) - 1} more call{'s' * (len(calls) > 2)})" if len(calls) > 1 else ""
        return f"the {msg.get('role') or 'assistant'} message that calls {name}({args}){more}"
    return f"the {msg.get('role') or 'next'} message there"


def live_request(messages: list, start: int, end: int, *, top: dict | None = None, budget: int,
                 previous_summary: str | None = None, focus: str | None = None,
                 today: str | None = None) -> dict:
    """The live-prefix fields of a :class:`~hermesctx.summary.SummaryRequest`: the whole
    transcript as the agent sent it (a provider reads it from the prompt cache the agent's last
    request wrote) and the instruction sent after it as the last user message, with the
    structure of :func:`build_prompt` (preamble, first or update, template, date, focus); the
    turns are not written out again: the preamble says which messages the summary replaces
    (``messages[start:end]``) and that the others stay."""
    if today is None:
        from datetime import date

        today = date.today().isoformat()
    if not hermes_only():
        focus = redact(focus)
    span = f"everything from {_describe_first(messages[start])}" if start > 0 else "everything from its start"
    span += f" up to, not including, {_describe_first(messages[end])}" if end < len(messages) else " to its end"
    body = render("compress_live_update", fold=template("compress_fold")) if previous_summary \
        else template("compress_live_first")
    instruction = _with_template([render("compress_live", span=span), body], budget, focus, today)
    return {"live": messages, "live_from": start, "live_to": end, "live_top": dict(top or {}),
            "instruction": instruction}


TRAJECTORY_CUT_OVER, TRAJECTORY_CUT_HEAD, TRAJECTORY_CUT_TAIL = 3000, 1500, 500  # characters of a turn
TRAJECTORY_CUT_MARK = "\n...[truncated]...\n"


def render_trajectory_turns(turns: list, start: int, end: int) -> str:
    """ShareGPT turns ``[start, end)`` as the trajectory summarizer reads them:
    ``[Turn i - ROLE]:\\nvalue``, secrets redacted before a long value is cut to head + tail
    (a cut could leave half a key that no rule matches any more)."""
    parts = []
    for index in range(start, end):
        turn = turns[index]
        value = turn.get("value", "")
        value = redact(value) if isinstance(value, str) else value
        if len(value) > TRAJECTORY_CUT_OVER:
            value = value[:TRAJECTORY_CUT_HEAD] + TRAJECTORY_CUT_MARK + value[-TRAJECTORY_CUT_TAIL:]
        parts.append(f"[Turn {index} - {turn.get('from', 'unknown').upper()}]:\n{value}")
    return "\n\n".join(parts)


def trajectory_prompt(rendered_turns: str, summary_target_tokens: int) -> str:
    """The trajectory prompt (``texts/trajectory.md``): the turns, the size target, and the
    prefix the reply must begin with."""
    return render("trajectory", turns=rendered_turns, target=summary_target_tokens, prefix=LEGACY_PREFIX)


def clean_response(text: Any) -> str:
    """A summarizer's reply, reasoning removed when that leaves text, secrets redacted."""
    text = str(text) if text and not isinstance(text, str) else (text or "")
    if not text.strip():
        return ""
    stripped = strip_think_blocks(text).strip()
    return redact(stripped or text.strip())

