"""Probe evaluation of the extractive summarizer (issue 18): ``make eval`` (never CI).

For each transcript, the head and tail are those ``compress`` chooses; the probes come from the
compacted middle, by rules of their own (not the summarizer's ledgers):

* files: every path a tool call names (path keys, apply_patch headers);
* changes: the last change of each modified file (the start of its new text);
* commands: every command run (tool call or fenced in-text command);
* errors: every failing call (the command or target that failed);
* asks: every user ask (injected text left out);
* decisions: assistant sentences with a decision cue;
* next: the start of the last assistant text.

A probe is kept when its text (whitespace folded) is in the output: the summary for ``extractive``,
the pruned middle for ``prune`` (observation masking alone, same head and tail). Also measured:
the reduction of the middle's tokens, the budget (the summary with its prefix, the same tokenizer
as compress), the latest ask verbatim, and four rounds of re-compression (share of the first
round's files and errors still named, within budget).

    python eval/run.py                        # the fixtures of eval/fixtures.py
    python eval/run.py --dir ../shared/real-logs [--exclude NAME ...]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fixtures import transcripts as fixture_transcripts  # noqa: E402

from hermesctx import tokens  # noqa: E402
from hermesctx.messages import calls_of  # noqa: E402
from hermesctx.stages.compress import compress_messages  # noqa: E402
from hermesctx.stages.prune import prune_messages  # noqa: E402
from hermesctx.summary import SummaryRequest  # noqa: E402
from hermesctx.summary.extractive import ExtractiveSummarizer  # noqa: E402
from hermesctx.summary.prompt import is_real_user_message  # noqa: E402
from hermesctx.summary.text import (  # noqa: E402
    is_summary_content,
    strip_summary_prefix,
    text_view,
    with_summary_prefix,
)

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


def named(probe: str, text: str, category: str, root: str) -> bool:
    if probe in text:
        return True
    if category == "files":
        rel = probe[len(root) + 1:] if root and probe.startswith(root + "/") else None
        return bool(rel and f"`{rel}`" in text)
    return False


def _root(summary: str) -> str:
    found = re.search(r"Paths are relative to `([^`]+)`", summary)
    return found.group(1) if found else ""


def middle_text(messages: list) -> str:
    parts = []
    for m in messages:
        parts.append(text_view(m.get("content")))
        for c in calls_of(m):
            if isinstance(c, dict) and isinstance(c.get("function"), dict):
                args = c["function"].get("arguments")
                parts.append(args if isinstance(args, str) else json.dumps(args))
                parsed = _args(c["function"])
                parts += [str(v) for v in parsed.values() if isinstance(v, str)]
                command = _command(parsed)
                parts.append(command)
    return fold("\n".join(parts))


def evaluate(name: str, messages: list, args) -> dict | None:
    summarizer = ExtractiveSummarizer()
    try:
        out, report = compress_messages(messages, summarizer=summarizer, protect_last_n=args.protect_last_n,
                                        tail_token_budget=args.tail_tokens, max_summary_tokens=args.max_summary_tokens)
    except Exception as err:  # noqa: BLE001 - one bad transcript must not end the evaluation
        print(f"{name}: {type(err).__name__}: {err}", file=sys.stderr)
        return None
    if not report.get("compressed") or report.get("summarizer") != "extractive":
        return None
    start, end = report["start"], report["end"]
    middle = messages[start:end]
    summary_msg = next((m for m in out if is_summary_content(m.get("content"))), None)
    if summary_msg is None:
        return None
    summary = text_view(summary_msg["content"])
    summary_only = fold(summary)
    pruned, _ = prune_messages(messages, protect_tail_count=args.protect_last_n,
                               protect_tail_tokens=args.tail_tokens)
    pruned_middle = middle_text(pruned[start:end])
    found = probes(middle)
    root = _root(summary)
    row = {"name": name, "messages": len(messages), "middle": len(middle)}
    for method, text in (("extractive", summary_only), ("prune", pruned_middle)):
        for cat in CATEGORIES:
            row[f"{method}:{cat}"] = (sum(named(p, text, cat, root) for p in found[cat]), len(found[cat]))
    middle_tokens = tokens.rough_messages(middle)
    summary_tokens = tokens.rough_text(with_summary_prefix(strip_summary_prefix(summary)))
    row["reduction:extractive"] = 1 - summary_tokens / middle_tokens if middle_tokens else 0.0
    row["reduction:prune"] = 1 - tokens.rough_messages(pruned[start:end]) / middle_tokens if middle_tokens else 0.0
    row["budget"] = report["summary_budget"]
    row["summary_tokens"] = summary_tokens
    row["over_budget"] = summary_tokens > report["summary_budget"]
    asks = [text_view(m.get("content")).strip() for m in middle if is_real_user_message(m)
            and not _INJECTED.match(text_view(m.get("content")))]
    row["last_ask"] = fold(asks[-1]) in summary_only if asks else None  # whole, whitespace folded
    row.update(rounds(middle, report["summary_budget"]))
    return row


def rounds(middle: list, budget: int, n: int = 4) -> dict:
    """Four rounds: the middle cut in four, each round summarizing the previous summary and its part."""
    if len(middle) < 2 * n:
        return {}
    size = len(middle) // n
    parts = [middle[k * size:(k + 1) * size if k < n - 1 else len(middle)] for k in range(n)]
    first = probes(parts[0])
    previous, worst = None, 0
    for part in parts:
        previous = ExtractiveSummarizer().summarize(SummaryRequest(prompt="", budget_tokens=budget, turns=part,
                                                                   previous_summary=previous))
        worst = max(worst, tokens.rough_text(with_summary_prefix(previous)))
    text, root = fold(previous), _root(previous)
    kept = sum(named(p, text, "files", root) for p in first["files"]) + sum(
        named(p, text, "errors", root) for p in first["errors"])
    total = len(first["files"]) + len(first["errors"])
    return {"rounds": (kept, total), "rounds_over_budget": worst > budget}


def load_dir(path: Path, exclude: list[str]) -> dict[str, list]:
    out = {}
    files = sorted(p for p in path.rglob("*") if p.is_file() and p.name != "PROVENANCE.md"
                   and not any(x in str(p) for x in exclude))
    for f in files:
        proc = subprocess.run([sys.executable, "-m", "hermesctx", "convert", "--to", "openai", str(f)],
                              capture_output=True, text=True)
        if proc.returncode:
            continue
        lines = proc.stdout.splitlines() if "\n" in proc.stdout.strip() else [proc.stdout]
        for k, line in enumerate(lines):
            try:
                doc = json.loads(line)
            except ValueError:
                continue
            messages = doc.get("messages") if isinstance(doc, dict) else doc
            if isinstance(messages, list) and len(messages) >= 30:
                out[f"{f.parent.name}/{f.name}" + (f"#{k}" if len(lines) > 1 else "")] = messages
    return out


def _pct(pair_list: list) -> str:
    kept = sum(k for k, _ in pair_list)
    total = sum(t for _, t in pair_list)
    return f"{100 * kept / total:.0f} % ({kept}/{total})" if total else "n/a"


def table(rows: list[dict]) -> str:
    lines = ["| category | extractive | prune alone |", "|---|---|---|"]
    for cat in CATEGORIES:
        lines.append(f"| {cat} | {_pct([r[f'extractive:{cat}'] for r in rows])} | "
                     f"{_pct([r[f'prune:{cat}'] for r in rows])} |")
    overall = {m: _pct([r[f"{m}:{c}"] for r in rows for c in CATEGORIES]) for m in ("extractive", "prune")}
    lines.append(f"| **overall** | {overall['extractive']} | {overall['prune']} |")
    mean = {m: sum(r[f"reduction:{m}"] for r in rows) / len(rows) for m in ("extractive", "prune")}
    lines.append(f"| mean reduction of the middle | {100 * mean['extractive']:.0f} % | {100 * mean['prune']:.0f} % |")
    over = sum(r["over_budget"] or r.get("rounds_over_budget", False) for r in rows)
    asks = [r["last_ask"] for r in rows if r["last_ask"] is not None]
    four = [r["rounds"] for r in rows if "rounds" in r]
    lines += ["", f"transcripts: {len(rows)}; summaries over budget (any round): {over}; "
                  f"last ask verbatim: {sum(asks)}/{len(asks)}; four rounds, first-round files and errors still "
                  f"named: {_pct(four)}"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", help="a directory of agent logs (any format hermesctx reads)")
    parser.add_argument("--exclude", action="append", default=[], help="skip paths containing this (repeatable)")
    parser.add_argument("--protect-last-n", type=int, default=10)
    parser.add_argument("--tail-tokens", type=int, default=4000)
    parser.add_argument("--max-summary-tokens", type=int, default=10_000)
    parser.add_argument("--rows", action="store_true", help="one line per transcript too")
    args = parser.parse_args(argv)
    sources = load_dir(Path(args.dir), args.exclude) if args.dir else fixture_transcripts()
    rows = [row for name, messages in sources.items() if (row := evaluate(name, messages, args))]
    if not rows:
        print("no transcript had a middle to compress", file=sys.stderr)
        return 1
    if args.rows:
        for r in rows:
            cells = " ".join(f"{c}={r[f'extractive:{c}'][0]}/{r[f'extractive:{c}'][1]}" for c in CATEGORIES)
            print(f"{r['name']}: {cells} red={100 * r['reduction:extractive']:.0f}% "
                  f"tokens={r['summary_tokens']}/{r['budget']} rounds={r.get('rounds')} last_ask={r['last_ask']}")
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
