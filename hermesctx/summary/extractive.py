"""The extractive summarizer: no model, deterministic, offline (the default).

It fills the 13 sections of the handoff template by rules from the middle turns: the latest
user ask verbatim, every tool call as a numbered action with its target and outcome
(``3. RUN `pytest -q` — exit 1, 2 failed [tool: terminal]``), files read and written, commands,
errors and test results, URLs, questions asked and whether they were answered. With a previous
summary it keeps that summary's sections and continues its numbering.
"""

from __future__ import annotations

import json
import re
from typing import Any

from hermesctx.messages import calls_of
from hermesctx.redact import redact, redact_value
from hermesctx.stubs import summarize_tool_result
from hermesctx.summary import SummaryRequest
from hermesctx.summary.prompt import SECTIONS, is_real_user_message, strip_think_blocks
from hermesctx.summary.text import text_view

_VERBS = {"read_file": "READ", "write_file": "WRITE", "patch": "PATCH", "terminal": "RUN",
          "execute_code": "RUN", "search_files": "SEARCH", "web_search": "SEARCH", "web_extract": "FETCH",
          "browser_navigate": "OPEN", "delegate_task": "DELEGATE", "process": "PROCESS", "memory": "MEMORY",
          "todo": "TODO"}
_TARGET_KEYS = ("path", "file_path", "command", "cmd", "code", "url", "urls", "query", "pattern", "goal", "name")
_WRITES = ("write_file", "patch")
_ERROR = re.compile(r"\b(error|failed|failure|exception|traceback|timed out|fatal|denied)\b", re.I)
_TESTS = re.compile(r'\b\d+ (?:passed|failed|errors?)\b(?:[^\n"]*?\b\d+ (?:passed|failed|skipped))*[^\n"=]*', re.I)
_URL = re.compile(r"https?://[^\s`'\"<>)\]]+")
_PATH = re.compile(r"(?<![\w/])(?:~/|/|\./)?(?:[\w.-]+/)+[\w.-]+\.\w+|\b[\w-]+\.(?:py|js|ts|go|rs|md|json|ya?ml|toml|txt|sh|c|h|java|rb)\b")
_DECISION = re.compile(r"\b(decided|decide to|will use|instead of|because|chose|going with|prefer)\b", re.I)
_CONSTRAINT = re.compile(r"\b(always|never|don't|do not|must|should|prefer|please use|make sure|only)\b", re.I)
_NUMBERED = re.compile(r"^\s*(\d+)\.\s+", re.M)


def _one_line(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def _args(raw: Any) -> dict:
    try:
        value = json.loads(raw) if isinstance(raw, str) and raw else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _target(name: str, args: dict) -> str:
    for key in _TARGET_KEYS:
        value = args.get(key)
        if isinstance(value, list) and value:
            value = value[0] if not isinstance(value[0], dict) else value[0].get("url", "")
        if isinstance(value, (str, int, float)) and str(value).strip():
            text = _one_line(value, 120)
            return f"`{text}`" if key in ("command", "cmd", "code") else text
    return ""


def _plain(result: str) -> str:
    """A JSON tool result's text fields (output, error, ...) as plain lines; other text as is."""
    if result[:1] == "{":
        try:
            value = json.loads(result)
        except ValueError:
            value = None
        if isinstance(value, dict):
            texts = [value[k] for k in ("output", "stdout", "stderr", "error", "content", "message", "result")
                     if isinstance(value.get(k), str) and value[k].strip()]
            if texts:
                return "\n".join(texts)
    return result.replace("\\n", "\n")


def _last_tests(text: str):
    found = list(_TESTS.finditer(text))
    return found[-1] if found else None


def _error_line(text: str) -> str:
    return next((ln.strip() for ln in text.splitlines() if _ERROR.search(ln)), "")


def _outcome(name: str, args_raw: str, result: str) -> str:
    if not result:
        return "no output"
    exit_code = re.search(r'"exit_code"\s*:\s*(-?\d+)', result)
    tests = _last_tests(_plain(result))
    parts = []
    if exit_code:
        parts.append(f"exit {exit_code.group(1)}")
    if tests:
        parts.append(_one_line(tests.group(0), 80))
    error = _ERROR.search(result)
    if error and not tests:
        line = _error_line(_plain(result))
        parts.append(_one_line(line, 120))
    if not parts:
        parts.append(re.sub(r"^\[[^\]]*\]\s*", "", summarize_tool_result(name, args_raw, result)))
    return "; ".join(parts)


def _change(name: str, args: dict) -> str:
    """What a write or patch changed, in one line."""
    if name == "write_file":
        content = args.get("content")
        if isinstance(content, str):
            return f"written ({len(content.splitlines())} lines, {len(content)} chars)"
        return "written"
    old, new = args.get("old_string"), args.get("new_string")
    if isinstance(old, str) and isinstance(new, str):
        return f"patched `{_one_line(old, 80)}` → `{_one_line(new, 80)}`"
    patch = args.get("patch")
    if isinstance(patch, str) and patch.strip():
        return f"patched: {_one_line(patch, 160)}"
    return "patched"


def _previous_sections(previous: str | None) -> dict[str, str]:
    sections: dict[str, str] = {}
    if not previous:
        return sections
    current = None
    for line in previous.splitlines():
        if line.startswith("## "):
            current = line.strip()
            sections[current] = ""
        elif current:
            sections[current] += line + "\n"
    return {k: v.strip() for k, v in sections.items()}


class ExtractiveSummarizer:
    name = "extractive"

    def __init__(self, **_options: Any):
        pass

    def summarize(self, request: SummaryRequest) -> str:
        turns = request.turns
        prev = _previous_sections(request.previous_summary)
        results = {m["tool_call_id"]: text_view(m.get("content")) for m in turns
                   if m.get("role") == "tool" and isinstance(m.get("tool_call_id"), str)}
        actions, files, written, errors, tests, urls, decisions, constraints = [], [], [], [], [], [], [], []
        asks: list[tuple[int, str]] = []
        changes: list[str] = []
        answered: list[str] = []
        last_assistant = ""
        for i, msg in enumerate(turns):
            role = msg.get("role")
            text = redact(text_view(msg.get("content")))
            if role == "user" and is_real_user_message(msg):
                asks.append((i, text.strip()))
                constraints += [s for s in re.split(r"(?<=[.!?])\s+", text) if _CONSTRAINT.search(s)]
            elif role == "assistant":
                visible = strip_think_blocks(text).strip()
                if visible:
                    last_assistant = visible
                    decisions += [s for s in re.split(r"(?<=[.!?])\s+", visible) if _DECISION.search(s)]
                for tc in calls_of(msg):
                    if not isinstance(tc, dict) or not isinstance(tc.get("function"), dict):
                        continue
                    name = str(tc["function"].get("name") or "unknown")
                    # redacted whole, before any cut below (a cut key or URL no longer matches a rule)
                    raw = tc["function"].get("arguments") or ""
                    args = _args(raw)
                    masked = redact(raw) if isinstance(raw, str) else raw
                    if masked != raw:  # a secret somewhere: every value of the parsed arguments too
                        args, raw = redact_value(args), masked
                    rid = tc.get("call_id") or tc.get("id")
                    result = redact(results.get(rid, "") if isinstance(rid, str) else "")
                    verb = _VERBS.get(name, name.upper())
                    target = _target(name, args)
                    actions.append(f"{verb} {target}".strip() + f" — {_outcome(name, raw, result)} [tool: {name}]")
                    for key in ("path", "file_path"):
                        if isinstance(args.get(key), str):
                            (written if name in _WRITES else files).append(args[key])
                            if name in _WRITES:
                                changes.append(f"{args[key]}: {_change(name, args)}")
                    plain = _plain(result) if result else ""
                    found = _last_tests(plain)
                    if plain and _ERROR.search(plain) and not found:
                        errors += [_one_line(ln, 240) for ln in plain.splitlines() if _ERROR.search(ln)][:3]
                    if found:
                        tests.append(_one_line(found.group(0), 100))
            for url in _URL.findall(text):
                urls.append(url.rstrip(".,;:"))
            files += [p for p in _PATH.findall(text.replace("\\n", "\n")) if not p.startswith("http")]
        for k, (i, ask) in enumerate(asks):
            if "?" in ask:
                replied = any(t.get("role") == "assistant" and text_view(t.get("content")).strip()
                              for t in turns[i + 1:(asks[k + 1][0] if k + 1 < len(asks) else len(turns))])
                answered.append(ask) if replied else None

        def unique(items: list, limit: int = 20) -> list:
            out: list = []
            for item in items:
                item = _one_line(item, 300)
                if item and item not in out:
                    out.append(item)
            return out[:limit]

        def bullets(items: list, limit: int = 20, empty: str = "None.") -> str:
            items = unique(items, limit)
            return "\n".join(f"- {x}" for x in items) if items else empty

        def merged(heading: str, text: str) -> str:
            old = prev.get(heading, "")
            if old and old not in ("None.", "None") and text not in ("None.", "None"):
                return f"{old}\n{text}"
            return old if text in ("None.", "None") and old else text

        numbered = prev.get("## Completed Actions", "")
        start = max([int(n) for n in _NUMBERED.findall(numbered)] or [0])
        completed = "\n".join(f"{start + k}. {a}" for k, a in enumerate(actions, start=1))
        completed = "\n".join(x for x in (numbered if start else "", completed) if x) or "None."
        latest = f"User asked: {asks[-1][1]!r}" if asks else prev.get(TASK_HEADING_KEY, "None")
        goal = _one_line(asks[0][1], 400) if asks and not prev.get("## Goal") else prev.get("## Goal", "Unknown.")
        state = []
        if written:
            state.append("Modified files: " + ", ".join(unique(written, 12)))
            state += unique(changes, 20)
        if tests:
            state.append("Latest test result: " + tests[-1])
        pending = [a for _, a in asks[:-1] if "?" in a and a not in answered]
        body = {
            "## Goal": goal,
            "## Constraints & Preferences": merged("## Constraints & Preferences", bullets(constraints, 10)),
            "## Completed Actions": completed,
            "## Active State": "\n".join(f"- {s}" for s in state) or prev.get("## Active State", "Unknown."),
            SECTIONS[5][0]: _one_line(last_assistant, 500) if last_assistant else "None.",
            "## Blocked": bullets(errors, 5),
            "## Key Decisions": merged("## Key Decisions", bullets(decisions, 8)),
            "## Resolved Questions": merged("## Resolved Questions", bullets(answered, 8)),
            SECTIONS[9][0]: bullets(pending, 8),
            "## Relevant Files": merged("## Relevant Files", bullets(written + files, 20)),
            SECTIONS[11][0]: prev.get(SECTIONS[11][0], "None recorded."),
            "## Critical Context": bullets(tests[-3:] + urls + errors[:3], 15),
        }
        lines = [f"{TASK_HEADING_KEY}\n{latest}"]
        lines += [f"{heading}\n{body[heading]}" for heading, _ in SECTIONS[1:]]
        return redact("\n\n".join(lines))


TASK_HEADING_KEY = SECTIONS[0][0]
