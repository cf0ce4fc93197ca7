"""Codex CLI rollout files (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``) -> one transcript.

Each line is ``{"timestamp", "type", "payload"}`` with ``type`` one of ``session_meta`` (the
session's id, cwd, version, and its base instructions), ``response_item`` (a Responses API item:
what the model saw and said), ``compacted`` (``message``: the summary; ``replacement_history``:
the items that replace everything before, in newer versions), ``turn_context`` (the model of
the turn) and ``event_msg`` (UI events; ``token_count`` ones carry the provider's usage).
Older rollouts have no wrapper: a first line with the session meta, then bare items and
``record_type`` lines. Only what follows the last compaction is the context the model saw, so
by default reading starts there (the first pass finds it).
"""

from __future__ import annotations

from hermesctx.errors import InputError
from hermesctx.formats import responses
from hermesctx.formats._logs import LogReader, fix_orphans, read_event

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections import deque
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any

LINE_TYPES = ("session_meta", "response_item", "compacted", "turn_context", "event_msg")  # a tuple: unhashable input
# response items that are Codex bookkeeping, not context
QUIET_ITEMS = ("ghost_snapshot",)  # a tuple: an item type from input may be unhashable
# a legacy compaction (no replacement_history) keeps the user messages before it, up to
# about 20,000 tokens of them, as Codex rebuilds its history
LEGACY_USER_CHARS = 80_000


NAME = "codex"
PLAIN = False  # read as OpenAI chat
LOG = True  # a session log: one file, one transcript, one event per line


def detect(event: Any) -> bool:
    if not isinstance(event, dict):
        return False
    if event.get("type") in LINE_TYPES and "payload" in event:
        return True
    # a legacy rollout's first line: the session meta, unwrapped
    return ("id" in event and "timestamp" in event and ("instructions" in event or "git" in event)
            and not {"type", "role", "messages", "content"} & set(event))


class Reader(LogReader):
    format = NAME

    def __init__(self, *, all_segments: bool = False, warn: Callable[[str], None] = lambda m: None,
                 **_: Any):
        self.all_segments = all_segments
        self.warn = warn
        self.lost: dict = {}
        self.start = -1  # index of the last compaction (-1: none)
        self.legacy = False  # whether it has no replacement history
        self.segments = 1
        self.dropped = 0
        self.meta: dict = {}
        self.model: str | None = None
        self.usage: dict | None = None
        self.window: int | None = None
        self.skipped: dict[str, int] = {}
        self.orphans = [0]

    def scan(self, events: Iterable[tuple[Any, str]]) -> None:
        """First pass: where the last compaction is. A rollout with no response item and no
        compaction (only session and event lines: early event-only rollouts) holds nothing the
        model saw, and is refused rather than read as an empty transcript."""
        items = 0
        kinds: dict = {}
        for index, (line, _) in enumerate(events):
            if not isinstance(line, dict):
                continue
            kind = line.get("type")
            if kind == "response_item" or kind in responses.ITEM_TYPES or "role" in line:
                items += 1
            elif len(kinds) < 4 and isinstance(kind, str):
                inner = line.get("payload")
                inner = inner.get("type") if isinstance(inner, dict) else None
                label = f"{kind}/{inner}" if isinstance(inner, str) else kind
                kinds[label] = kinds.get(label, 0) + 1
            if line.get("type") == "compacted":
                items += 1
                self.segments += 1
                payload = line.get("payload")
                if not self.all_segments and isinstance(payload, dict):
                    self.start = index
                    self.legacy = not isinstance(payload.get("replacement_history"), list)
        if not items:
            seen = ", ".join(kinds) or "no events"
            raise InputError(f"a Codex rollout without any response item ({seen}): no "
                             "transcript in it", hint="its usage: hermesctx normalize-usage "
                             "--skip-no-usage --sum FILE")

    def messages(self, events: Iterable[tuple[Any, str]]) -> Iterator[dict]:
        return fix_orphans(self._fold(events), set(), self.orphans)

    def _fold(self, events: Iterable[tuple[Any, str]]) -> Iterator[dict]:
        folder = responses.Folder(self.lost)
        from collections import deque  # (only when a Codex log is read)

        before: deque = deque()  # user messages before a legacy compaction
        before_chars = 0
        for index, (line, where) in enumerate(events):
            if not isinstance(line, dict):
                self._skip("lines that are not JSON objects", where)
                continue
            kind, payload = line.get("type"), line.get("payload")
            if kind not in LINE_TYPES:  # legacy rollouts: bare items, a meta line, state lines
                if "record_type" in line:
                    continue
                if kind in responses.ITEM_TYPES or kind in QUIET_ITEMS:
                    kind, payload = "response_item", line
                elif detect(line):
                    kind, payload = "session_meta", line
                else:
                    self._skip(f"lines of unknown type {kind!r}", where)
                    continue
            if not isinstance(payload, dict):
                self._skip(f"{kind} lines without a payload object", where)
                continue
            if kind == "session_meta":
                self._meta(payload, folder)
            elif kind == "turn_context":
                if isinstance(payload.get("model"), str):
                    self.model = payload["model"]
            elif kind == "event_msg":
                info = payload.get("info")
                if payload.get("type") == "token_count" and isinstance(info, dict):
                    if isinstance(info.get("last_token_usage"), dict):
                        self.usage = info["last_token_usage"]
                    if isinstance(info.get("model_context_window"), int):
                        self.window = info["model_context_window"]
            elif kind == "response_item":
                if payload.get("type") in QUIET_ITEMS:
                    continue
                if index < self.start:
                    self.dropped += 1
                    if self.legacy and payload.get("role") == "user":
                        before.append(payload)
                        before_chars += len(str(payload.get("content")))
                        while before_chars > LEGACY_USER_CHARS and len(before) > 1:
                            before_chars -= len(str(before.popleft().get("content")))
                    continue
                folder.add(payload)
            elif kind == "compacted":
                if index == self.start:
                    yield from self._compacted(payload, folder, before)
                    before.clear()
                elif self.all_segments and isinstance(payload.get("message"), str) and payload["message"]:
                    folder.add(_user(payload["message"]))
            yield from folder.drain()
        yield from folder.finish()

    def _meta(self, meta: dict, folder: responses.Folder) -> None:
        meta = meta.get("meta", meta) if isinstance(meta.get("meta"), dict) else meta
        self.meta = {k: meta[k] for k in ("id", "timestamp", "cwd", "cli_version", "model_provider")
                     if k in meta}
        instructions = meta.get("base_instructions") or meta.get("instructions")
        if isinstance(instructions, dict):
            instructions = instructions.get("text")
        if isinstance(instructions, str) and instructions and not folder.started:
            folder.add({"type": "message", "role": "system", "content": instructions})

    def _compacted(self, payload: dict, folder: responses.Folder, before: deque) -> Iterator[dict]:
        history = payload.get("replacement_history")
        if isinstance(history, list):
            for item in history:
                if isinstance(item, dict):
                    folder.add(item)
        else:
            for item in before:
                folder.add(item)
            if isinstance(payload.get("message"), str):
                folder.add(_user(payload["message"]))
        yield from folder.drain()

    def _skip(self, what: str, where: str) -> None:
        count = self.skipped.get(what, 0)
        self.skipped[what] = count + 1
        if not count:
            self.warn(f"{where}: skipped {what} (first of them)")

    def tail(self) -> dict:
        return {"model": self.model} if self.model else {}

    def info(self) -> dict:
        info = {"format": NAME, "session": self.meta.get("id"), "model": self.model,
                "segments": self.segments, "dropped_before_compaction": self.dropped,
                "orphan_tool_results": self.orphans[0], "skipped": dict(self.skipped),
                "lost": dict(self.lost)}
        if self.usage is not None:
            info["usage"] = dict(self.usage)
        if self.window is not None:
            info["context_window"] = self.window
        return info


def _user(text: str) -> dict:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def read(event: Any, lost: dict) -> dict:
    """One event given alone as a document, as OpenAI chat."""
    return read_event(Reader(), event, lost)
