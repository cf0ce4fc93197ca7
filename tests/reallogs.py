"""`make reallogs`: every command over every genuine log of ../shared/real-logs (a local check,
not collected by pytest: the logs are other people's sessions and never enter the repository).

For each file: the format it should be read as (the small table below, from each folder's
PROVENANCE.md), then every command run in-process on it. Printed per format:

* files, those every command must refuse (:data:`REFUSED`: exit 3, one line), and how many
  of the others were detected as expected (``convert --report``'s ``from``);
* exit codes (any 70 is a failure) and outputs of 0 messages that exited 0;
* tool calls, tool results and server-side tool items kept by ``convert --to openai`` and
  ``--to anthropic``, against an independent count made from the raw file by a per-format
  counter (:data:`COUNTERS`; Claude Code's comes from ``tests/reallogs_claude.py`` when present);
* false orphans: what ``sanitize --check`` reports on the raw log beyond the pairs that are
  really unanswered in it;
* the last typed user ask: found in the converted output; for Codex also every call and result
  of the rollout kept by ``convert --all-segments``;
* with ``hermesctx validate`` (when it exists): problems in each output that its input did not have.

Usage: ``python tests/reallogs.py [DIR] [--only FORMAT] [--verbose]``. Exit 1 when any
figure is a failure (an exit 70, a wrong detection, a 0-message output with exit 0, a call,
result or ask lost, a false orphan, a new validate problem).
"""

from __future__ import annotations

import fnmatch
import gzip
import io as _io
import json
import os
import re
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from hermesctx import registry  # noqa: E402
from hermesctx.cli import run  # noqa: E402
from hermesctx.context import Env  # noqa: E402

# (folder glob, file glob) -> expected format; the first match wins. None: not a transcript
# hermesctx reads (said so in the table, not run).
EXPECTED = [
    ("*-codex", "*", "codex"),
    ("agent-sessions-jazzyalex", "claude__*", "claude-code"),
    ("agent-sessions-jazzyalex", "codex*", "codex"),
    ("claude-*", "*", "claude-code"),
    ("sniffly-*", "*", "claude-code"),
    ("spotter-*", "*", "claude-code"),
    ("hermes-trajectories-*", "*", "sharegpt"),
    ("mini-swe-agent", "*.traj.json", "openai"),
    ("pydantic-ai-cassettes", "anthropic__*.json", "anthropic"),
    ("pydantic-ai-cassettes", "openai_responses__*.json", "responses"),
    ("pydantic-ai-cassettes", "*.yaml", None),  # VCR cassettes: their bodies are the *.derived.json
    ("aider-*", ".aider.*", "aider"),
    ("cline-*", "*.json", "cline"),
    ("opencode-go-*", "*.db.gz", "opencode-go"),
    ("opencode-go-*", "*.db-wal.gz", "opencode-go"),  # refused: the database beside it is the store
    ("opencode-go-*", "*.derived.json", "opencode-go"),
    ("opencode-*", "*.derived.json", "opencode"),
    ("opencode-*", "CONVO.md", "opencode"),  # refused: a client's console log around the messages
    ("openhands-*", "*.json", "openhands"),
    ("gemini-cli-*", "*.json", "gemini"),
    ("copilot-cli-*", "*.jsonl", "copilot"),
    ("goose-*", "*.db", "goose"),
    # the held-out sets of docs/eval.md: OWNER-REPO-AGENT folders
    ("*-claude", "*.jsonl", "claude-code"),
    ("*-claude-code", "*.jsonl", "claude-code"),
    ("*-codex-legacy", "*.jsonl", "codex"),
    ("*-opencode", "*.db", "opencode-go"),
    ("*-gemini", "*.json", "gemini"),
]

# Files every command must refuse (exit 3, one line), with why: no transcript in them.
REFUSED = [
    ("agent-sessions-jazzyalex", "codex_05[0-3]_*", "event-only Codex rollout: no response item"),
    ("agent-sessions-jazzyalex", "codex__schema_drift.jsonl",
     "a session browser's schema-drift lines, not a Codex rollout"),
    # genuine, but only session titles: no message, and no API takes an empty list (D12, D14)
    ("claude-history-kfischer", "be89c3cd-*", "summaries-only Claude Code file: no message"),
    ("sniffly-chiphuyen", "ff71dbed-*", "summaries-only Claude Code file: no message"),
    ("cline-*", "ui_messages.json", "Cline's UI events alone: its api_conversation_history.json is the transcript"),
    ("opencode-go-*", "*.db-wal.gz", "a SQLite write-ahead log alone: the database beside it is read"),
    ("opencode-*", "CONVO.md", "an Electron client's console log (the messages are the *.derived.json)"),
]

# how a pipeline stage (hermesctx.registry) runs here when not by its name alone: [(label, argv,
# whether it writes a transcript)]; a stage not listed runs as `hermesctx NAME FILE` and writes one
STAGE_RUNS = {
    "spill": [("spill", ["spill", "--dry-run"], False)],
    "sanitize": [("sanitize-check", ["sanitize", "--check"], False), ("sanitize", ["sanitize"], True)],
    "compress": [("compress", ["compress", "--summarizer", "extractive", "--report", "-"], True)],
}
_RUNS = [("estimate", ["estimate"], False),
         *(run for name in registry.names(registry.STAGES) for run in STAGE_RUNS.get(name, [(name, [name], True)])),
         ("to-openai", ["convert", "--to", "openai", "--model", "gpt-4o"], True),
         ("to-anthropic", ["convert", "--to", "anthropic", "--model", "claude-sonnet-4-5"], True)]
COMMANDS = [(label, args) for label, args, _writes in _RUNS]
WRITERS = tuple(label for label, _args, writes in _RUNS if writes)


def expected_format(folder: str, name: str) -> str | None | bool:
    for folder_glob, file_glob, fmt in EXPECTED:
        if fnmatch.fnmatch(folder, folder_glob) and fnmatch.fnmatch(name, file_glob):
            return fmt
    return False  # not in the table


def refused(folder: str, name: str) -> str | None:
    for folder_glob, file_glob, why in REFUSED:
        if fnmatch.fnmatch(folder, folder_glob) and fnmatch.fnmatch(name, file_glob):
            return why
    return None


def check_refused(path: Path, fmt: str, why: str) -> dict:
    row: dict = {"file": f"{path.parent.name}/{path.name}", "fails": [], "refused": why,
                 "detected": fmt, "exits": {}, "outputs": {}}
    for label, args in COMMANDS:
        status, _, err = invoke(args + [str(path)])
        row["exits"][label] = status
        if status != 3 or len(err.strip().splitlines()) != 1:
            row["fails"].append(f"{label}: exit {status}, expected a refusal (exit 3, one line)")
    if fmt == "codex":
        status, _, err = invoke(["normalize-usage", "--skip-no-usage", "--sum", str(path)])
        row["exits"]["normalize-usage"] = status
        if status != 0:
            row["fails"].append(f"normalize-usage: exit {status} {err.strip()[:160]}")
    return row


def read_bytes(path: Path) -> bytes:
    raw = path.read_bytes()
    return gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw


def json_lines(raw: bytes) -> list:
    """The JSON values of a file: one document, or one per line (unparseable lines skipped)."""
    try:
        return [json.loads(raw)]
    except ValueError:
        out = []
        for line in raw.splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
        return out


def text_of(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(text_of(p) for p in content)
    if isinstance(content, dict):
        for key in ("text", "input_text", "output_text", "value", "content"):
            if isinstance(content.get(key), (str, list)):
                return text_of(content[key])
    return ""


# --- independent counters: raw file -> {calls, results, server, unanswered, ask} ---------------

def _tally(calls: set, results: set, server: int, ask: str | None) -> dict:
    return {"calls": len(calls), "results": len(results), "server": server,
            "unanswered": len(calls ^ results), "ask": ask}


def count_codex(raw: bytes) -> dict:
    lines = [v for v in json_lines(raw) if isinstance(v, dict)]
    last = max((i for i, v in enumerate(lines) if v.get("type") == "compacted"), default=-1)
    items: list = []
    for i, line in enumerate(lines):
        payload = line.get("payload") if "payload" in line else line
        if i == last and isinstance(payload, dict):
            items = list(payload.get("replacement_history") or [])
            if not payload.get("replacement_history"):
                items = [it for it in _items(lines[:i]) if it.get("role") == "user"]
                items.append({"type": "message", "role": "user", "content": payload.get("message", "")})
        if i > last and (line.get("type") == "response_item" or "payload" not in line):
            if isinstance(payload, dict):
                items.append(payload)
    out = _count_items(items)
    every = _count_items(_items(lines))  # --all-segments: every item the rollout recorded
    out["all_calls"], out["all_results"] = every["calls"], every["results"]
    return out


def _items(lines: list) -> list:
    return [v.get("payload", v) for v in lines
            if isinstance(v, dict) and (v.get("type") == "response_item" or "payload" not in v)]


def _count_items(items: list) -> dict:
    calls, results, server, ask = set(), set(), 0, None
    for item in items:
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind in ("function_call", "custom_tool_call", "local_shell_call", "computer_call"):
            calls.add(item.get("call_id") or item.get("id"))
        elif kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output",
                      "computer_call_output"):
            results.add(item.get("call_id"))
        elif kind in ("mcp_call", "web_search_call", "mcp_list_tools", "file_search_call", "image_generation_call",
                      "code_interpreter_call", "mcp_approval_request", "mcp_approval_response"):
            server += 1
        elif item.get("role") == "user" and (kind in (None, "message")):
            text = text_of(item.get("content")).strip()
            if text and not text.startswith(("<", "# AGENTS.md", "<environment_context>")):
                ask = text
    return _tally(calls, results, server, ask)


def count_responses(raw: bytes) -> dict:
    doc = json.loads(raw)
    items = []
    if isinstance(doc, dict):
        for key in ("input", "output"):
            value = doc.get(key)
            if isinstance(value, str):
                items.append({"role": "user", "content": value})
            elif isinstance(value, list):
                items.extend(value)
    else:
        items = doc
    return _count_items(items)


def count_anthropic(raw: bytes) -> dict:
    doc = json.loads(raw)
    calls, results, server, ask = set(), set(), 0, None
    for msg in doc.get("messages") or []:
        content = msg.get("content")
        if msg.get("role") == "user":
            text = text_of(content if isinstance(content, str) else
                           [b for b in content if isinstance(b, dict) and b.get("type") == "text"])
            if text.strip():
                ask = text.strip()
        for block in content if isinstance(content, list) else ():
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "tool_use":
                calls.add(block.get("id"))
            elif kind == "tool_result":
                results.add(block.get("tool_use_id"))
            elif kind in ("server_tool_use", "mcp_tool_use", "web_search_tool_result", "mcp_tool_result",
                          "web_fetch_tool_result", "code_execution_tool_result"):
                server += 1
    return _tally(calls, results, server, ask)


_CALL = re.compile(r"<tool_call>")
_RESP = re.compile(r"<tool_response>")


def count_sharegpt(raw: bytes) -> dict:
    records = []
    for value in json_lines(raw):
        records.extend(value if isinstance(value, list) else [value])
    calls = results = 0
    ask = None
    for record in records:
        turns = record.get("conversations") or record.get("messages") or [] if isinstance(record, dict) else []
        for turn in turns:
            if not isinstance(turn, dict):
                continue
            role = turn.get("from") or turn.get("role")
            value = text_of(turn.get("value", turn.get("content")))
            if role in ("gpt", "assistant"):
                calls += len(_CALL.findall(value))
            elif role == "function_call":
                calls += 1
            elif role == "tool":
                results += max(1, len(_RESP.findall(value)))
            elif role == "observation":
                results += 1
            elif role in ("human", "user") and value.strip():
                ask = value.strip()
    return {"calls": calls, "results": results, "server": 0, "unanswered": abs(calls - results),
            "ask": ask}


def count_chat(raw: bytes) -> dict:
    """OpenAI chat (mini-swe-agent): native tool calls, and the last user message that is not an
    observation (``<returncode>…``)."""
    doc = json.loads(raw)
    messages = doc if isinstance(doc, list) else doc.get("messages") or doc.get("history") or []
    calls, results, ask = set(), set(), None
    for msg in messages:
        for call in msg.get("tool_calls") or ():
            calls.add(call.get("id"))
        if msg.get("role") == "tool":
            results.add(msg.get("tool_call_id"))
        if msg.get("role") == "user":
            text = text_of(msg.get("content")).strip()
            if text and not text.startswith("<returncode>"):
                ask = text
    return _tally(calls, results, 0, ask)


def count_claude_naive(raw: bytes) -> dict:
    """A stand-in until tests/reallogs_claude.py is merged: every main-thread tool_use and
    tool_result, deduplicated by id (blind to rewound branches)."""
    calls, results, ask = set(), set(), None
    for event in json_lines(raw):
        if not isinstance(event, dict) or event.get("isSidechain"):
            continue
        msg = event.get("message")
        if not isinstance(msg, dict):
            continue
        content = msg.get("content")
        if event.get("type") == "user" and isinstance(content, str) and content.strip() \
                and not content.startswith("<"):
            ask = content.strip()
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use":
                calls.add(block.get("id"))
            elif block.get("type") == "tool_result":
                results.add(block.get("tool_use_id"))
            elif block.get("type") == "text" and event.get("type") == "user" \
                    and not str(block.get("text", "")).startswith("<"):
                ask = str(block.get("text", "")).strip() or ask
    return _tally(calls, results, 0, ask)


def _claude_counter():
    """Claude Code's counter: ``independent_counts(events)`` of tests/reallogs_claude.py (the
    Claude Code helper's, branch h-claude) when it is there, else :func:`count_claude_naive`."""
    try:
        import reallogs_claude
    except ImportError:
        return count_claude_naive, "naive"
    counts = getattr(reallogs_claude, "independent_counts", None)
    if counts is None:
        return count_claude_naive, "naive"

    def count(raw: bytes) -> dict:
        c = counts([v for v in json_lines(raw) if isinstance(v, dict)])
        return {"calls": c["visible_tool_use"], "results": c["visible_tool_result"], "server": 0,
                "unanswered": c["visible_tool_use"] - c["visible_tool_result"], "ask": c["last_ask"]}

    return count, "reallogs_claude"


def count_aider(raw: bytes) -> dict:
    """Aider has no tool calls: the last typed prompt (``#### `` lines of the chat history, the
    last ``USER`` message of the last request of the LLM history)."""
    text = raw.decode("utf-8")
    ask = None
    if text.lstrip().startswith("# aider chat started at"):
        for line in text.splitlines():
            if line.startswith("#### ") and not line[5:].startswith("/"):
                ask = line[5:].rstrip()
    else:
        last = text.rsplit("\nTO LLM ", 1)[-1].split("\nLLM RESPONSE ", 1)[0]
        block = last.split("\n-------\n")
        users = [b for b in block if b.startswith("USER ")]
        if users:
            ask = "\n".join(line[5:] for line in users[-1].splitlines())[:200].rstrip()
    return {"calls": 0, "results": 0, "server": 0, "unanswered": 0, "ask": ask}


def count_opencode_go(path: Path) -> dict:
    """The ``tool_call`` and ``tool_result`` parts of every message row: of the JSON export, or
    of the database itself (unzipped with its WAL into a temporary directory)."""
    import sqlite3

    if path.name.endswith(".json"):
        rows = json.loads(path.read_bytes())["messages"]
        parts = [p for r in rows for p in (json.loads(r["parts"]) if isinstance(r["parts"], str) else r["parts"])]
    else:
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "x.db"
            db.write_bytes(read_bytes(path))
            wal = path.parent / path.name.replace(".db.gz", ".db-wal.gz")
            if wal.exists():
                Path(str(db) + "-wal").write_bytes(read_bytes(wal))
            con = sqlite3.connect(db)
            parts = [p for (text,) in con.execute("select parts from messages") for p in json.loads(text)]
            con.close()
    calls = {p["data"]["id"] for p in parts if p.get("type") == "tool_call"}
    results = {p["data"]["tool_call_id"] for p in parts if p.get("type") == "tool_result"}
    return _tally(calls, results, 0, None)


count_opencode_go.wants_path = True  # type: ignore[attr-defined]


def count_opencode(raw: bytes) -> dict:
    """``tool`` parts (a call; its result once completed or failed) of ``{info, parts}`` messages."""
    doc = json.loads(raw)
    calls, results = set(), set()
    for msg in doc if isinstance(doc, list) else [doc]:
        for part in msg.get("parts") or []:
            if part.get("type") == "tool":
                calls.add(part.get("callID"))
                if (part.get("state") or {}).get("status") in ("completed", "error"):
                    results.add(part.get("callID"))
    return _tally(calls, results, 0, None)


def count_openhands(raw: bytes) -> dict:
    """Actions with ``tool_call_metadata`` are calls; observations whose ``cause`` is one of them
    are results; the last ``message`` action of the user is the ask."""
    calls, results, ask, ids = set(), set(), None, {}
    for event in json.loads(raw):
        meta = event.get("tool_call_metadata")
        if "action" in event:
            if meta:
                calls.add(meta["tool_call_id"])
                ids[event["id"]] = meta["tool_call_id"]
            elif event.get("action") == "message" and event.get("source") == "user":
                ask = (event.get("args") or {}).get("content") or event.get("message")
        elif event.get("cause") in ids:
            results.add(ids[event["cause"]])
    return _tally(calls, results, 0, ask)


def count_gemini(raw: bytes) -> dict:
    """A Gemini CLI chats/session-*.json: every ``toolCalls`` entry of a ``gemini`` message is a
    call, answered when its ``result`` holds anything; the last ``user`` text is the ask."""
    calls, results, ask = set(), set(), None
    for msg in json.loads(raw)["messages"]:
        for call in msg.get("toolCalls") or ():
            calls.add(call["id"])
            if call.get("result"):
                results.add(call["id"])
        content = msg.get("content")
        if msg.get("type") == "user":
            text = content if isinstance(content, str) else "\n".join(
                p["text"] for p in content if isinstance(p, dict) and "text" in p)
            ask = text or ask
    return _tally(calls, results, 0, ask)


def count_copilot(raw: bytes) -> dict:
    """A Copilot CLI events.jsonl: every ``toolRequests`` entry of an ``assistant.message`` is a
    call, each ``tool.execution_complete`` of one of them its result; the last ``user.message``
    (as typed) is the ask."""
    calls, results, ask = set(), set(), None
    events = [json.loads(line) for line in raw.splitlines() if line.strip()]
    for event in events:
        data = event.get("data") or {}
        if event.get("type") == "assistant.message":
            calls.update(r["toolCallId"] for r in data.get("toolRequests") or ())
        elif event.get("type") == "user.message":
            ask = data.get("content") or ask
    for event in events:
        if event.get("type") == "tool.execution_complete" and event["data"].get("toolCallId") in calls:
            results.add(event["data"]["toolCallId"])
    return _tally(calls, results, 0, ask)


def count_goose(path: Path) -> dict:
    """A Goose sessions.db: every ``toolRequest`` part of a message the agent still saw is a
    call, every ``toolResponse`` one a result; the last ``user`` text the ask."""
    import sqlite3

    calls, results, ask = set(), set(), None
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        for role, content, meta in con.execute("select role, content_json, metadata_json from messages order by rowid"):
            if meta and json.loads(meta).get("agentVisible") is False:
                continue
            for part in json.loads(content):
                if part.get("type") == "toolRequest":
                    calls.add(part["id"])
                elif part.get("type") == "toolResponse":
                    results.add(part["id"])
                elif part.get("type") == "text" and role == "user":
                    ask = part["text"]
    finally:
        con.close()
    return _tally(calls, results, 0, ask)


count_goose.wants_path = True  # type: ignore[attr-defined]


_CLINE_RESULT = re.compile(r"^\[[A-Za-z_][\w-]*(?: for '.*?')?\] Result:", re.S)


def count_cline(raw: bytes) -> dict:
    """An api_conversation_history.json: every ``tool_use``; a result for each of an assistant
    turn's calls that the next user turn answers (``tool_result`` blocks, or ``[...] Result:``
    texts, at most one per call)."""
    doc = json.loads(raw)
    calls, results, ask = set(), set(), None
    for msg, following in zip(doc, [*doc[1:], None]):
        content = msg.get("content") if isinstance(msg.get("content"), list) else []
        uses = [b["id"] for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]
        calls.update(uses)
        if msg.get("role") == "user":
            for b in content:
                if b.get("type") == "text" and "<user_message>" in b.get("text", ""):
                    ask = b["text"].split("<user_message>", 1)[1].split("</user_message>")[0].strip()
        if not uses or following is None or not isinstance(following.get("content"), list):
            continue
        blocks = following["content"]
        answered = {b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"}
        marks = sum(1 for b in blocks if b.get("type") == "text" and _CLINE_RESULT.match(b.get("text", "")))
        results.update(answered or uses[:marks])
    return _tally(calls, results, 0, ask)


COUNTERS = {"codex": count_codex, "responses": count_responses, "anthropic": count_anthropic,
            "sharegpt": count_sharegpt, "openai": count_chat, "aider": count_aider,
            "opencode-go": count_opencode_go, "opencode": count_opencode, "openhands": count_openhands,
            "cline": count_cline, "gemini": count_gemini,
            "copilot": count_copilot, "goose": count_goose}


# --- counting what came out ------------------------------------------------------------------

SERVER_MARK = re.compile(r"\[server-side (?:tool|item) ")


def count_output(stdout: bytes, target: str) -> dict:
    docs = json_lines(stdout)
    calls = results = server = 0
    sizes, texts = [], []
    for doc in docs:
        messages = doc.get("messages", doc.get("conversations", doc.get("input"))) if isinstance(doc, dict) else doc
        messages = messages if isinstance(messages, list) else []
        sizes.append(len(messages))
        for msg in messages:
            if not isinstance(msg, dict):
                continue
            content = msg.get("content")
            texts.append(text_of(content))
            server += len(SERVER_MARK.findall(texts[-1]))
            if target == "openai":
                calls += len(msg.get("tool_calls") or ())
                results += msg.get("role") == "tool"
            for block in content if isinstance(content, list) else ():
                kind = block.get("type") if isinstance(block, dict) else None
                if kind == "tool_use":
                    calls += 1
                elif kind == "tool_result":
                    results += 1
                    texts.append(text_of(block.get("content")))
                elif kind in ("server_tool_use", "mcp_tool_use", "web_search_tool_result",
                              "mcp_tool_result"):
                    server += 1
        if isinstance(doc, dict) and isinstance(doc.get("system"), (str, list)):
            texts.append(text_of(doc["system"]))
    return {"calls": calls, "results": results, "server": server, "sizes": sizes,
            "text": "\n".join(texts)}


# --- running ---------------------------------------------------------------------------------

def invoke(args: list[str]) -> tuple[int, bytes, str]:
    out, err = _io.BytesIO(), _io.StringIO()
    env = Env(stdin=_io.BytesIO(b""), stdout=out, stderr=err,
              environ={k: v for k, v in os.environ.items() if not k.startswith("HERMESCTX_")})
    try:
        status = int(run(list(args), env))
    except SystemExit as exc:  # pragma: no cover
        status = int(exc.code or 0)
    return status, out.getvalue(), err.getvalue()


def has_validate() -> bool:
    import contextlib

    with contextlib.redirect_stdout(_io.StringIO()):  # click writes --help to sys.stdout
        return invoke(["validate", "--help"])[0] == 0


def validate_count(path: str, target: str | None = None) -> int | None:
    args = ["validate", "--format", "json", path] + (["--target", target] if target else [])
    status, out, err = invoke(args)
    if status not in (0, 1):
        return None
    count = 0
    for value in json_lines(out):
        if isinstance(value, dict) and "rule" in value:  # one problem per line
            count += bool(value.get("counted", True))
    return count


def detected(path: str) -> str | None:
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
        report = handle.name
    try:
        status, _, _ = invoke(["convert", "--to", "openai", "--model", "gpt-4o", "--report", report, path])
        found = {v.get("from") for v in json_lines(Path(report).read_bytes())
                 if isinstance(v, dict)} if os.path.getsize(report) else set()
    finally:
        os.unlink(report)
    return ",".join(sorted(f for f in found if f)) or None


def check_file(path: Path, fmt: str, counter, validate: bool) -> dict:
    raw = read_bytes(path)
    name = str(path)
    row: dict = {"file": f"{path.parent.name}/{path.name}", "fails": []}
    try:
        truth = counter(path) if getattr(counter, "wants_path", False) else counter(raw)
    except Exception as exc:  # noqa: BLE001 (a counter that cannot read the file is reported)
        truth = None
        row["fails"].append(f"counter: {type(exc).__name__}: {exc}")
    row["truth"] = truth
    found = detected(name)
    row["detected"] = found
    if found != fmt:
        row["fails"].append(f"detected as {found}, expected {fmt}")
    exits: dict = {}
    outputs: dict = {}
    for label, args in COMMANDS:
        status, out, err = invoke(args + [name])
        exits[label] = status
        first_error = next((line for line in err.splitlines() if "error" in line), "")
        if status == 70 or status not in (0, 1):
            row["fails"].append(f"{label}: exit {status} {first_error[:160]}")
        if label in ("estimate", "compress") and status == 0:  # what each read, transcript by transcript
            reported = json_lines(out if label == "estimate" else err.encode())
            outputs.setdefault("read", {})[label] = [
                d.get("messages" if label == "estimate" else "messages_before") for d in reported
                if isinstance(d, dict) and ("messages" if label == "estimate" else "messages_before") in d]
        if label == "sanitize-check":
            match = re.search(r"(\d+) problems? in", err)
            row["orphans"] = int(match.group(1)) if match else None
        if label in WRITERS and status == 0:
            target = "anthropic" if label == "to-anthropic" else "openai"
            outputs[label] = count_output(out, target)
            if any(size == 0 for size in outputs[label]["sizes"]) and raw.strip():
                row["fails"].append(f"{label}: 0 messages with exit 0")
            if validate and label in ("to-openai", "to-anthropic", "sanitize"):
                with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
                    handle.write(out)
                before = validate_count(name, target)
                after = validate_count(handle.name, target)
                os.unlink(handle.name)
                if before is not None and after is not None and after > before:
                    row.setdefault("new_problems", 0)
                    row["new_problems"] += after - before
                    row["fails"].append(f"{label}: validate finds {after - before} new problem(s)")
    if fmt == "codex":
        status, out, err = invoke(["normalize-usage", "--skip-no-usage", "--sum", name])
        exits["normalize-usage"] = status
        if status not in (0,):
            row["fails"].append(f"normalize-usage: exit {status} {err.strip()[:160]}")
        status, out, err = invoke(["convert", "--all-segments", "--to", "openai", "--model", "gpt-4o", name])
        exits["all-segments"] = status
        got = count_output(out, "openai") if status == 0 else None
        if truth and got and (got["calls"] < truth["all_calls"] or got["results"] < truth["all_results"]):
            row["fails"].append(f"convert --all-segments: calls {got['calls']} of {truth['all_calls']}, "
                                f"results {got['results']} of {truth['all_results']}")
    read = outputs.pop("read", {})
    if len(read) == 2 and read["estimate"] != read["compress"]:
        row["fails"].append(f"estimate and compress read different messages: {read['estimate'][:5]} "
                            f"vs {read['compress'][:5]}")
    row["exits"] = exits
    row["outputs"] = {k: {kk: vv for kk, vv in v.items() if kk != "text"} for k, v in outputs.items()}
    if truth:
        false_orphans = (row.get("orphans") or 0) - truth["unanswered"]
        row["false_orphans"] = max(0, false_orphans)
        if false_orphans > 0:
            row["fails"].append(f"sanitize --check: {false_orphans} false orphan(s)")
        for label in ("to-openai", "to-anthropic"):
            got = outputs.get(label)
            if got is None:
                continue
            for what in ("calls", "results", "server"):
                if got[what] < truth[what]:
                    row["fails"].append(f"{label}: {what} {got[what]} of {truth[what]}")
            ask = truth.get("ask")
            if ask and ask[:200] not in got["text"]:
                row["fails"].append(f"{label}: last typed ask not kept ({ask[:40]!r})")
    return row


def main(argv: list[str]) -> int:
    args = [a for a in argv if not a.startswith("--")]
    only = next((argv[i + 1] for i, a in enumerate(argv) if a == "--only" and i + 1 < len(argv)), None)
    if only in args:
        args.remove(only)
    verbose = "--verbose" in argv
    base = Path(args[0]) if args else ROOT.parent / "shared" / "real-logs"
    if not base.is_dir():
        print(f"reallogs: {base} not found; nothing to check (skipped)")
        return 0
    claude, claude_source = _claude_counter()
    counters = {**COUNTERS, "claude-code": claude}
    validate = has_validate()
    rows: dict = defaultdict(list)
    skipped: Counter = Counter()
    for folder in sorted(p for p in base.iterdir() if p.is_dir()):
        for path in sorted(folder.iterdir()):
            if path.name == "PROVENANCE.md" or not path.is_file():
                continue
            fmt = expected_format(folder.name, path.name)
            if fmt is False:
                print(f"reallogs: {folder.name}/{path.name}: not in the table of expected formats")
                skipped["not in the table"] += 1
                continue
            if fmt is None:
                skipped[f"{path.suffix} (not JSON)"] += 1
                continue
            if only and fmt != only:
                continue
            why = refused(folder.name, path.name)
            if why:
                rows[fmt].append(check_refused(path, fmt, why))
                continue
            rows[fmt].append(check_file(path, fmt, counters[fmt], validate))
    return report(rows, skipped, claude_source, validate, verbose)


def report(rows: dict, skipped: Counter, claude_source: str, validate: bool, verbose: bool) -> int:
    header = ("format", "files", "refused", "detect", "exit70", "exit!=0", "0-msg files", "calls oa/an/raw",
              "results oa/an/raw", "server oa/an/raw", "false-orph", "ask kept", "new-valid")
    table = [header]
    failed = 0
    for fmt in sorted(rows):
        group = rows[fmt]
        n = len(group)
        sums = Counter()
        for row in group:
            truth = row.get("truth") or {}
            sums["detect"] += row["detected"] == fmt and "refused" not in row
            sums["refused"] += "refused" in row
            sums["refused-ok"] += "refused" in row and not row["fails"]
            sums["exit70"] += sum(1 for s in row["exits"].values() if s == 70)
            sums["nonzero"] += "refused" not in row and sum(
                1 for k, s in row["exits"].items() if s not in (0, 1) or s == 1 and k != "sanitize-check")
            sums["zero"] += any("0 messages" in f for f in row["fails"])
            for what in ("calls", "results", "server"):
                sums[f"{what}-raw"] += truth.get(what, 0)
                for label, short in (("to-openai", "oa"), ("to-anthropic", "an")):
                    sums[f"{what}-{short}"] += (row["outputs"].get(label) or {}).get(what, 0)
            sums["orph"] += row.get("false_orphans", 0)
            sums["asks"] += bool(truth.get("ask"))
            sums["asks-kept"] += bool(truth.get("ask")) and not any("ask not kept" in f for f in row["fails"])
            sums["newval"] += row.get("new_problems", 0)
            failed += bool(row["fails"])
        table.append((fmt + (f" ({claude_source})" if fmt == "claude-code" else ""), str(n),
                      f"{sums['refused-ok']}/{sums['refused']}", f"{sums['detect']}/{n - sums['refused']}", str(sums["exit70"]), str(sums["nonzero"]), str(sums["zero"]),
                      f"{sums['calls-oa']}/{sums['calls-an']}/{sums['calls-raw']}",
                      f"{sums['results-oa']}/{sums['results-an']}/{sums['results-raw']}",
                      f"{sums['server-oa']}/{sums['server-an']}/{sums['server-raw']}",
                      str(sums["orph"]), f"{sums['asks-kept']}/{sums['asks']}",
                      str(sums["newval"]) if validate else "n/a"))
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    for r in table:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
    if skipped:
        print("skipped: " + ", ".join(f"{n} {what}" for what, n in skipped.items()))
    if not validate:
        print("hermesctx validate: not on this branch (new-valid n/a)")
    for fmt in sorted(rows):
        for row in rows[fmt]:
            if row["fails"] or verbose:
                note = f" (refused as meant: {row['refused']})" if "refused" in row else ""
                print(f"{row['file']}: " + ("; ".join(row["fails"]) or "ok") + note)
    print(f"{failed} file(s) with a failure")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
