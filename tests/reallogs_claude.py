"""Figures of the Claude Code reader on the genuine logs of ../shared/real-logs/ (a local check,
not collected by pytest: the logs are other people's sessions and never enter the repository).

    .venv/bin/python tests/reallogs_claude.py [--real-logs DIR] [--json]

For every Claude Code log (``*.jsonl`` / ``*.jsonl.gz`` of the Claude Code folders) it counts, from
the raw JSON and independently of hermesctx, the tool_use blocks and tool_result blocks of the
log's own thread (the main thread; for a standalone subagent file, the agent's), and those on the
model-visible path of the last segment (the API messages met walking the parent chain back from
the last message, their calls and the results that answer them). It then runs
``hermesctx convert -v --report``, ``convert --all-segments`` and ``sanitize --check`` and prints
what came out: calls and results kept, entries reported as on an abandoned branch, false
orphans, exit codes, messages, whether the last typed user ask is kept, the detected format.

Files are copied to a temporary directory in Claude Code's own layout first (``.gz`` expanded,
``<session>.subagents.agent-X.jsonl`` put back at ``<session>/subagents/agent-X.jsonl``) so
``--include-sidechains`` finds the subagent files as it would under ~/.claude/projects.

:func:`measure` returns the rows, for the all-formats ``make reallogs`` driver.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REAL_LOGS = ROOT.parent / "shared" / "real-logs"
FOLDERS = ("spotter-marot", "claude-history-kfischer", "claude-code-viewer-dkimuson",
           "sniffly-chiphuyen", "agent-sessions-jazzyalex")
NOT_GENUINE = ("agent-sessions-jazzyalex",)  # schema fixtures assembled from many versions


def _files(real_logs: Path) -> list[Path]:
    found = []
    for folder in FOLDERS:
        for path in sorted((real_logs / folder).glob("*.jsonl*")):
            if folder == "agent-sessions-jazzyalex" and not path.name.startswith("claude__"):
                continue
            found.append(path)
    return found


def _read(path: Path) -> list:
    opener = gzip.open if path.suffix == ".gz" else open
    events = []
    with opener(path, "rt", encoding="utf-8") as handle:
        for raw in handle:
            if raw.strip():
                try:
                    events.append(json.loads(raw))
                except ValueError:
                    pass
    return [e for e in events if isinstance(e, dict)]


def _message_blocks(event: dict) -> list:
    message = event.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _typed_text(event: dict) -> str | None:
    """The text a person typed, if this user entry is one."""
    if event.get("type") != "user" or event.get("isMeta") or event.get("isCompactSummary"):
        return None
    message = event.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        if any(b.get("type") == "tool_result" for b in content if isinstance(b, dict)):
            return None
        content = "\n".join(b.get("text", "") for b in content
                            if isinstance(b, dict) and b.get("type") == "text")
    if not isinstance(content, str) or not content.strip():
        return None
    text = content.strip()
    if text.startswith(("<command-", "<local-command-", "[Request interrupted", "Caveat:",
                        "<system-reminder>", "<bash-")):
        return None
    return text


def independent_counts(events: list) -> dict:
    """What the log holds, counted from the raw JSON without hermesctx."""
    convo = [e for e in events if e.get("type") in ("user", "assistant")
             and isinstance(e.get("message"), dict)]
    standalone = bool(convo) and all(e.get("isSidechain") for e in convo)
    thread = [e for e in events if bool(e.get("isSidechain")) == standalone]
    raw_calls = sum(b.get("type") == "tool_use" for e in thread for b in _message_blocks(e))
    raw_results = sum(b.get("type") == "tool_result" for e in thread for b in _message_blocks(e))
    # the last segment
    last = max((i for i, e in enumerate(thread) if e.get("subtype") == "compact_boundary"), default=-1)
    segment = thread[last + 1:]
    by_uuid = {e["uuid"]: e for e in segment if isinstance(e.get("uuid"), str)}
    leaf = next((e for e in reversed(segment) if e.get("type") in ("user", "assistant")
                 and isinstance(e.get("message"), dict)), None)
    chain_ids, seen = set(), set()
    node = leaf
    while node is not None and node["uuid"] not in seen:
        seen.add(node["uuid"])
        if node.get("type") == "assistant":
            chain_ids.add(node["message"].get("id"))
        node = by_uuid.get(node.get("parentUuid"))
    calls = {b.get("id") for e in segment if e.get("type") == "assistant"
             and e["message"].get("id") in chain_ids for b in _message_blocks(e)
             if b.get("type") == "tool_use"}
    answered = {b.get("tool_use_id") for e in segment if e.get("type") == "user"
                for b in _message_blocks(e) if b.get("type") == "tool_result"} & calls
    typed = [t for t in (_typed_text(e) for e in segment if e.get("uuid") in seen) if t]
    task_agents = [e["toolUseResult"]["agentId"] for e in thread
                   if isinstance(e.get("toolUseResult"), dict) and e["toolUseResult"].get("agentId")]
    return {"events": len(events), "standalone_agent": standalone, "raw_tool_use": raw_calls,
            "raw_tool_result": raw_results, "visible_tool_use": len(calls),
            "visible_tool_result": len(answered), "last_ask": typed[-1] if typed else None,
            "task_agents": task_agents}


def _layout(path: Path, into: Path) -> Path:
    """Copy ``path`` into ``into`` as Claude Code lays it out; return the copy's path."""
    name = path.name[:-3] if path.suffix == ".gz" else path.name
    if ".subagents." in name:
        session, agent = name.split(".subagents.", 1)
        target = into / session / "subagents" / agent
    else:
        target = into / name
    target.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".gz":
        with gzip.open(path, "rb") as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst)
    else:
        shutil.copyfile(path, target)
    return target


def _hermesctx(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hermesctx", *args], capture_output=True,
                          text=True, cwd=ROOT)


def _convert(path: Path, *flags: str) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".json") as report:
        run = _hermesctx("convert", "-v", "--report", report.name, *flags, str(path))
        try:
            rep = json.loads(Path(report.name).read_text() or "null")
        except ValueError:
            rep = None
    out = None
    if run.returncode == 0:
        try:
            out = json.loads(run.stdout)
        except ValueError:
            out = None
    if isinstance(rep, list):
        rep = rep[0] if rep else None
    return {"exit": run.returncode, "out": out, "report": rep or {}, "stderr": run.stderr}


def _texts(messages: list) -> str:
    parts = []
    for msg in messages:
        content = msg.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(p.get("text", "") for p in content if isinstance(p, dict))
    return "\n".join(parts)


def measure_file(path: Path, copy: Path) -> dict:
    counts = independent_counts(_read(path))
    row = {"file": f"{path.parent.name}/{path.name}", **counts}
    default = _convert(copy)
    messages = (default["out"] or {}).get("messages") or []
    row["convert_exit"] = default["exit"]
    row["messages_out"] = len(messages)
    row["kept_tool_calls"] = sum(len(m.get("tool_calls") or ()) for m in messages)
    row["kept_tool_results"] = sum(m.get("role") == "tool" for m in messages)
    rep = default["report"]
    row["abandoned_branch_entries"] = rep.get("abandoned_branch_entries", rep.get("off_chain_events"))
    row["detached_entries"] = rep.get("detached_entries", 0)
    row["orphan_tool_results"] = rep.get("orphan_tool_results")
    row["detected"] = next((line.rsplit(" ", 1)[-1] for line in default["stderr"].splitlines()
                            if "read as " in line), None)
    row["warnings"] = [line for line in default["stderr"].splitlines() if "warning" in line]
    ask = counts["last_ask"]
    row["last_ask_kept"] = None if ask is None else ask in _texts(messages)
    full = _convert(copy, "--all-segments")
    full_msgs = (full["out"] or {}).get("messages") or []
    row["all_segments_exit"] = full["exit"]
    row["all_segments_tool_calls"] = sum(len(m.get("tool_calls") or ()) for m in full_msgs)
    row["all_segments_tool_results"] = sum(m.get("role") == "tool" for m in full_msgs)
    side = _convert(copy, "--include-sidechains")
    side_msgs = (side["out"] or {}).get("messages") or []
    row["sidechains_exit"] = side["exit"]
    row["sidechains_messages_added"] = len(side_msgs) - len(messages)
    check = _hermesctx("sanitize", "--check", str(copy))
    row["sanitize_check_exit"] = check.returncode
    last = check.stderr.strip().splitlines()[-1] if check.stderr.strip() else ""
    row["sanitize_problems"] = int(last.split()[0]) if last[:1].isdigit() else last
    # a call the log itself never answered (the session ended while it ran) is a true orphan
    unanswered = counts["visible_tool_use"] - counts["visible_tool_result"]
    empty = row["messages_out"] == 0  # reported as a problem on purpose: the log gave nothing
    row["false_orphans"] = (row["sanitize_problems"] - unanswered - empty
                            if isinstance(row["sanitize_problems"], int) else None)
    wide = _hermesctx("sanitize", "--check", "--all-segments", "--include-sidechains", str(copy))
    last = wide.stderr.strip().splitlines()[-1] if wide.stderr.strip() else ""
    row["sanitize_problems_all_segments_sidechains"] = int(last.split()[0]) if last[:1].isdigit() else last
    row["genuine"] = path.parent.name not in NOT_GENUINE
    return row


def measure(real_logs: Path = REAL_LOGS) -> list[dict] | None:
    """One row per Claude Code log of ``real_logs``; None when the folder is absent."""
    if not real_logs.is_dir():
        return None
    rows = []
    with tempfile.TemporaryDirectory(prefix="hermesctx-reallogs-") as tmp:
        paths = _files(real_logs)
        copies = {p: _layout(p, Path(tmp) / p.parent.name) for p in paths}
        for path in paths:
            rows.append(measure_file(path, copies[path]))
    return rows


def _print(rows: list[dict]) -> None:
    cols = [("file", 58), ("raw_tool_use", 4), ("raw_tool_result", 4), ("visible_tool_use", 4),
            ("visible_tool_result", 4), ("kept_tool_calls", 4), ("kept_tool_results", 4),
            ("abandoned_branch_entries", 4), ("sanitize_problems", 4), ("false_orphans", 3),
            ("sanitize_problems_all_segments_sidechains", 3), ("convert_exit", 2),
            ("sanitize_check_exit", 2), ("messages_out", 4), ("last_ask_kept", 5),
            ("detected", 11), ("sidechains_messages_added", 4)]
    print("file | tool_use/tool_result: raw, model-visible, kept by convert | abandoned-branch "
          "entries | sanitize --check problems, false orphans, problems with --all-segments "
          "--include-sidechains | exit convert, sanitize --check | messages | last ask kept | "
          "detected | messages added by --include-sidechains")
    for row in rows:
        print(" ".join(str(row.get(name))[-width:].rjust(width) if name != "file"
                       else str(row[name])[-width:].ljust(width) for name, width in cols))
        for warning in row["warnings"]:
            print("    " + warning)
    genuine = [r for r in rows if r["genuine"]]

    def total(key: str) -> int:
        return sum(r[key] for r in genuine if isinstance(r[key], int))

    kept_calls = sum(min(r["kept_tool_calls"], r["visible_tool_use"]) for r in genuine)
    kept_results = sum(min(r["kept_tool_results"], r["visible_tool_result"]) for r in genuine)
    print(f"genuine logs: {len(genuine)} of {len(rows)}")
    print(f"  model-visible tool calls kept: {kept_calls}/{total('visible_tool_use')}, results: "
          f"{kept_results}/{total('visible_tool_result')}; --all-segments keeps "
          f"{total('all_segments_tool_calls')}/{total('raw_tool_use')} calls, "
          f"{total('all_segments_tool_results')}/{total('raw_tool_result')} results of the raw logs")
    print(f"  sanitize --check: {total('sanitize_problems')} problems, "
          f"{sum(max(r['false_orphans'] or 0, 0) for r in genuine)} false orphans; "
          f"abandoned-branch entries: {total('abandoned_branch_entries')}, detached: "
          f"{total('detached_entries')}")
    print(f"  0-message logs with exit 0 and no warning: "
          f"{sum(r['messages_out'] == 0 and r['convert_exit'] == 0 and not r['warnings'] for r in genuine)}; "
          f"exit 70: {sum(70 in (r['convert_exit'], r['sanitize_check_exit']) for r in rows)}; "
          f"last typed ask lost: {sum(r['last_ask_kept'] is False for r in genuine)}; "
          f"detected wrong: {sum(r['detected'] != 'claude-code' for r in rows)}; "
          f"messages: {total('messages_out')}; added by --include-sidechains: "
          f"{total('sidechains_messages_added')}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--real-logs", type=Path, default=REAL_LOGS)
    parser.add_argument("--json", action="store_true", help="one JSON row per log")
    args = parser.parse_args(argv)
    rows = measure(args.real_logs)
    if rows is None:
        print(f"skipped: {args.real_logs} is absent", file=sys.stderr)
        return 0
    if args.json:
        for row in rows:
            print(json.dumps(row, ensure_ascii=False))
    else:
        _print(rows)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONIOENCODING", "utf-8")
    sys.exit(main())
