"""Codex CLI rollout files (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) -> one transcript.

Each line is ``{"timestamp", "type", "payload"}`` with ``type`` one of ``session_meta``,
``response_item`` (a Responses API item), ``compacted`` (``message`` = the summary, and, in newer
versions, ``replacement_history`` = the items that replace everything before), ``turn_context``
and ``event_msg`` (UI events; ``token_count`` ones carry the provider's usage). Older rollouts
have no wrapper: a first line with the session meta, then bare items and ``record_type`` lines.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from hermesctx.formats import responses

LINE_TYPES = frozenset({"session_meta", "response_item", "compacted", "turn_context", "event_msg"})


def looks_like(event: Any) -> bool:
    return (isinstance(event, dict) and event.get("type") in LINE_TYPES
            and "payload" in event)


class Reader:
    def __init__(self, *, all_segments: bool = False, warn: Callable[[str], None] = lambda m: None,
                 **_: Any):
        self.all_segments = all_segments
        self.warn = warn
        self.lost: dict = {}
        self.folder = responses.Folder(self.lost)
        self.meta: dict = {}
        self.model: str | None = None
        self.usage: dict | None = None
        self.window: int | None = None
        self.segments = 1
        self.dropped = 0
        self.skipped: dict[str, int] = {}

    def add(self, line: Any, where: str = "") -> None:
        if not isinstance(line, dict):
            self._skip("non-object lines", where)
            return
        kind = line.get("type")
        payload = line.get("payload")
        if kind not in LINE_TYPES:
            # legacy rollouts: bare items, a meta line, state lines
            if "record_type" in line:
                return
            if kind in responses.ITEM_TYPES:
                self.folder.add(line)
                return
            if kind is None and "id" in line and "timestamp" in line:
                self._meta(line)
                return
            self._skip(f"unknown line type {kind!r}", where)
            return
        if not isinstance(payload, dict):
            self._skip(f"{kind} lines without a payload object", where)
            return
        if kind == "session_meta":
            self._meta(payload.get("meta", payload))
        elif kind == "response_item":
            self.folder.add(payload)
        elif kind == "turn_context":
            if isinstance(payload.get("model"), str):
                self.model = payload["model"]
        elif kind == "event_msg":
            if payload.get("type") == "token_count" and isinstance(payload.get("info"), dict):
                info = payload["info"]
                if isinstance(info.get("last_token_usage"), dict):
                    self.usage = info["last_token_usage"]
                if isinstance(info.get("model_context_window"), int):
                    self.window = info["model_context_window"]
        elif kind == "compacted":
            self._compacted(payload)

    def _meta(self, meta: dict) -> None:
        self.meta = {k: meta[k] for k in ("id", "timestamp", "cwd", "cli_version", "model_provider")
                     if k in meta}
        instructions = meta.get("base_instructions") or meta.get("instructions")
        if isinstance(instructions, dict):
            instructions = instructions.get("text")
        if isinstance(instructions, str) and instructions and not self.folder.messages:
            self.folder.messages.append({"role": "system", "content": instructions})

    def _compacted(self, payload: dict) -> None:
        self.segments += 1
        history = payload.get("replacement_history")
        if self.all_segments:
            if isinstance(payload.get("message"), str) and payload["message"]:
                self.folder.add({"type": "message", "role": "user",
                                 "content": [{"type": "input_text", "text": payload["message"]}]})
            return
        system = [m for m in self.folder.messages[:1] if m.get("role") == "system"]
        self.dropped += len(self.folder.messages) - len(system)
        self.folder = responses.Folder(self.lost)
        self.folder.messages.extend(system)
        if isinstance(history, list):
            for item in history:
                if isinstance(item, dict):
                    self.folder.add(item)
        elif isinstance(payload.get("message"), str):
            self.folder.add({"type": "message", "role": "user",
                             "content": [{"type": "input_text", "text": payload["message"]}]})

    def _skip(self, what: str, where: str) -> None:
        self.skipped[what] = self.skipped.get(what, 0) + 1
        self.warn(f"{where + ': ' if where else ''}skipped {what}")

    def result(self) -> tuple[dict, dict]:
        from hermesctx.formats.claude_code import fix_orphans

        messages, orphans = fix_orphans(self.folder.finish())
        doc: dict = {"messages": messages}
        if self.model:
            doc["model"] = self.model
        info = {"format": "codex", "session": self.meta.get("id"), "model": self.model,
                "segments": self.segments, "dropped_before_compaction": self.dropped,
                "orphan_tool_results": orphans, "skipped": dict(self.skipped),
                "lost": dict(self.lost)}
        if self.usage is not None:
            info["usage"] = dict(self.usage)
        if self.window is not None:
            info["context_window"] = self.window
        return doc, info


def read(events: Iterable[tuple[Any, str]], **kwargs) -> tuple[dict, dict]:
    reader = Reader(**kwargs)
    for event, where in events:
        reader.add(event, where)
    return reader.result()
