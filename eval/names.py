"""The name-based probes of issue 18, kept for ``make eval-archive`` (eval/archive.py: can
``recall`` find the middle's files and errors in the archive?). ``make eval`` no longer scores
these: every method keeps the paths and commands they name (issue 28; see eval/probes.py).

* files: every path a tool call names (path keys, apply_patch headers);
* changes: the last change of each modified file (the start of its new text);
* commands: every command run (tool call or fenced in-text command);
* errors: every failing call (the command or target that failed);
* asks: every user ask (injected text left out);
* decisions: assistant sentences with a decision cue;
* next: the start of the last assistant text.
"""

from __future__ import annotations

import json
import re

from hermesctx.messages import calls_of
from hermesctx.summary.prompt import is_real_user_message
from hermesctx.summary.text import text_view

CATEGORIES = ("files", "changes", "commands", "errors", "asks", "decisions", "next")
_PATH_KEYS = ("path", "file_path", "filename", "notebook_path")
_EDITOR_COMMANDS = {"view", "create", "str_replace", "insert", "undo_edit"}
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.M)
_FENCE = re.compile(r"```[\w-]*\n(.*?)```", re.S)
_FAIL = re.compile(r"<returncode>\s*[1-9]|exited with code [1-9]|Exit code:? [1-9]|\"exit_code\":\s*[1-9]|"
                   r"exit code [1-9]|<tool_use_error>|^Error:|Traceback \(most recent|verification failed", re.M)
_DECISION = re.compile(r"\b(because|decided|instead of|going with|I'll use|the cause is)\b", re.I)
_INJECTED = re.compile(r"^\s*(<[a-z_-]+>|Caveat:|Base directory for this skill|# AGENTS\.md|\[Request interrupted|"
                       r"This session is being continued|<returncode>)", re.I)


def fold(text: str) -> str:
    return " ".join(text.split())


def _args(fn: dict) -> dict:
    try:
        value = json.loads(fn.get("arguments") or "{}")
    except (ValueError, TypeError):
        return {}
    return value if isinstance(value, dict) else {}


def _command(args: dict) -> str:
    value = args.get("command", args.get("cmd"))
    if isinstance(value, list):
        value = value[2] if len(value) >= 3 and value[1] in ("-lc", "-c") else " ".join(map(str, value))
    return value.strip() if isinstance(value, str) else ""


def probes(middle: list) -> dict[str, set]:
    out: dict[str, set] = {c: set() for c in CATEGORIES}
    results = {}
    last_change: dict[str, str] = {}
    last_text = ""
    for m in middle:
        if m.get("role") == "tool":
            results.setdefault(m.get("tool_call_id"), text_view(m.get("content")))
    for k, m in enumerate(middle):
        role = m.get("role")
        text = text_view(m.get("content"))
        if role == "user" and is_real_user_message(m) and text.strip() and not _INJECTED.match(text):
            out["asks"].add(fold(text)[:80])
        if role != "assistant":
            continue
        if text.strip():
            last_text = text
            for s in re.split(r"(?<=[.!?])\s+|\n+", text):  # a sentence ends at a line break too
                if _DECISION.search(s) and "?" not in s:
                    out["decisions"].add(fold(s)[:50])
        calls = [c for c in calls_of(m) if isinstance(c, dict) and isinstance(c.get("function"), dict)]
        for c in calls:
            args = _args(c["function"])
            result = results.get(c.get("id"), "")
            paths = [args[key] for key in _PATH_KEYS if isinstance(args.get(key), str)]
            blob = args.get("input") or _command(args)
            paths += _PATCH_FILE.findall(blob) if isinstance(blob, str) else []
            out["files"].update(p.strip() for p in paths)
            new = args.get("new_string", args.get("new_str"))
            if isinstance(args.get("edits"), list) and args["edits"] and isinstance(args["edits"][-1], dict):
                new = args["edits"][-1].get("new_string")
            if isinstance(new, str) and new.strip() and paths:
                last_change[paths[0]] = fold(new)[:30]
            command = _command(args)
            if command in _EDITOR_COMMANDS:  # str_replace_editor's sub-command, not a shell command
                command = ""
            if command and "*** Begin Patch" not in command:
                out["commands"].add(fold(command)[:50])
            if result and _FAIL.search(result[:3000]):
                out["errors"].add(fold(command or (paths[0] if paths else c["function"].get("name", "")))[:50])
        if not calls and k + 1 < len(middle):
            blocks = _FENCE.findall(text)
            nxt = text_view(middle[k + 1].get("content"))
            if blocks and nxt.lstrip().startswith("<returncode>"):
                command = fold(blocks[-1])[:50]
                out["commands"].add(command)
                if _FAIL.search(nxt[:300]):
                    out["errors"].add(command)
    out["changes"] = set(last_change.values())
    if last_text.strip():
        out["next"].add(fold(last_text)[:40])
    return out
