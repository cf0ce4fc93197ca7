"""Claude Code session logs (``~/.claude/projects/<p>/<session>.jsonl``) -> one OpenAI transcript.

One event per line: ``user`` / ``assistant`` events carry an Anthropic ``message``; each has a
``uuid`` and a ``parentUuid``. An assistant reply is often written as several events (one per
content block) sharing ``message.id``: they fold back into one message. ``system`` events with
``subtype: compact_boundary`` start a new segment (their ``parentUuid`` is null, the old chain
hangs off ``logicalParentUuid``); the next user event with ``isCompactSummary`` holds the
summary. ``summary`` events are session titles. Events are folded one at a time: only the
converted messages of the current segment (and a uuid -> parent map) are kept.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from hermesctx.formats import anthropic

EVENT_TYPES = frozenset({"user", "assistant", "system", "summary"})
# known events that are not part of the conversation: skipped without a warning
QUIET_TYPES = frozenset({"file-history-snapshot", "queue-operation", "progress", "custom-title",
                         "agent-name", "tag", "pr-link", "last-prompt"})


def looks_like(event: Any) -> bool:
    if not isinstance(event, dict):
        return False
    kind = event.get("type")
    if kind in ("user", "assistant", "system"):
        return "uuid" in event or "sessionId" in event or "parentUuid" in event
    if kind == "summary":
        return "leafUuid" in event or "summary" in event
    return kind in QUIET_TYPES


class Reader:
    """Fold events; :meth:`result` gives ``({"messages": [...]}, info)``."""

    def __init__(self, *, include_sidechains: bool = False, all_segments: bool = False,
                 warn: Callable[[str], None] = lambda m: None):
        self.include_sidechains = include_sidechains
        self.all_segments = all_segments
        self.warn = warn
        self.lost: dict = {}
        self.entries: list[list] = []  # [uuid, [messages], sidechain]
        self.parents: dict[str, str | None] = {}
        self.leaf: str | None = None
        self.usage: dict | None = None
        self.model: str | None = None
        self.session: str | None = None
        self.titles: list[str] = []
        self.segments = 1
        self.dropped = 0
        self.skipped: dict[str, int] = {}
        self.sidechain_events = 0
        self._last_msg_id: str | None = None
        self._last_entry: list | None = None

    # -- folding --------------------------------------------------------------------------

    def add(self, event: Any, where: str = "") -> None:
        if not isinstance(event, dict):
            self._skip("non-object lines", where)
            return
        kind = event.get("type")
        if kind in QUIET_TYPES:
            return
        if kind == "summary":
            if isinstance(event.get("summary"), str):
                self.titles.append(event["summary"])
            return
        if kind == "system":
            if event.get("subtype") == "compact_boundary":
                self._boundary(event)
            return
        if kind not in ("user", "assistant"):
            self._skip(f"unknown event type {kind!r}", where)
            return
        self.session = self.session or event.get("sessionId")
        uuid = event.get("uuid")
        parent = event.get("parentUuid")
        if parent is None and self.all_segments:
            parent = event.get("logicalParentUuid")
        sidechain = bool(event.get("isSidechain"))
        if sidechain:
            self.sidechain_events += 1
            if not self.include_sidechains:
                return
        message = event.get("message")
        if not isinstance(message, dict):
            self._skip(f"{kind} events without a message", where)
            return
        if isinstance(uuid, str):
            self.parents[uuid] = parent
        if not sidechain:
            self.leaf = uuid if isinstance(uuid, str) else self.leaf
        if kind == "assistant":
            self._assistant(message, uuid, sidechain)
            return
        self._last_msg_id = None
        msg = {"role": "user", "content": message.get("content", "")}
        converted = anthropic.message_to_openai(msg, self.lost)
        self._last_entry = [uuid, converted, sidechain]
        self.entries.append(self._last_entry)

    def _assistant(self, message: dict, uuid: Any, sidechain: bool) -> None:
        if isinstance(message.get("model"), str) and message["model"] != "<synthetic>":
            self.model = message["model"]
        usage = message.get("usage")
        if isinstance(usage, dict) and not sidechain:
            self.usage = usage
        msg_id = message.get("id")
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
        if (msg_id and msg_id == self._last_msg_id and self._last_entry is not None
                and self._last_entry[2] == sidechain):
            # another block of the same reply: fold into it
            self._last_entry[3].extend(blocks)
            self._last_entry[1] = anthropic.message_to_openai(
                {"role": "assistant", "content": self._last_entry[3]}, {})
            self._count_lost(blocks)
            return
        self._count_lost(blocks)
        converted = anthropic.message_to_openai({"role": "assistant", "content": blocks}, {})
        self._last_entry = [uuid, converted, sidechain, list(blocks)]
        self._last_msg_id = msg_id
        self.entries.append(self._last_entry)

    def _count_lost(self, blocks: list) -> None:
        anthropic.message_to_openai({"role": "assistant", "content": blocks}, self.lost)

    def _boundary(self, event: dict) -> None:
        self.segments += 1
        self._last_msg_id = None
        if self.all_segments:
            return
        self.dropped += sum(len(e[1]) for e in self.entries)
        self.entries = []
        self.parents = {}

    def _skip(self, what: str, where: str) -> None:
        self.skipped[what] = self.skipped.get(what, 0) + 1
        self.warn(f"{where + ': ' if where else ''}skipped {what}")

    # -- result ---------------------------------------------------------------------------

    def result(self) -> tuple[dict, dict]:
        chain: set = set()
        node = self.leaf
        while isinstance(node, str) and node not in chain:
            chain.add(node)
            node = self.parents.get(node)
        messages: list[dict] = []
        off_chain = 0
        for entry in self.entries:
            uuid, converted, sidechain = entry[0], entry[1], entry[2]
            keep = sidechain or uuid in chain or not isinstance(uuid, str) or not chain
            if keep:
                messages.extend(converted)
            else:
                off_chain += len(converted)
        messages, orphans = fix_orphans(messages)
        doc: dict = {"messages": messages}
        if self.model:
            doc["model"] = self.model
        info = {"format": "claude-code", "session": self.session, "model": self.model,
                "segments": self.segments, "dropped_before_compaction": self.dropped,
                "off_chain_messages": off_chain, "sidechain_events": self.sidechain_events,
                "orphan_tool_results": orphans, "skipped": dict(self.skipped),
                "lost": dict(self.lost), "titles": list(self.titles)}
        if self.usage is not None:
            info["usage"] = dict(self.usage)
        return doc, info


def fix_orphans(messages: list[dict]) -> tuple[list[dict], int]:
    """Tool results whose call is not earlier in the transcript (e.g. the call was before a
    compaction boundary) become user text, so the transcript stays valid; returns the count."""
    seen: set = set()
    orphans = 0
    out = messages
    for i, msg in enumerate(messages):
        for call in msg.get("tool_calls") or ():
            seen.add(call.get("id"))
        if msg.get("role") == "tool" and msg.get("tool_call_id") not in seen:
            if out is messages:
                out = list(messages)
            from hermesctx.messages import content_text

            out[i] = {"role": "user", "content": f"[tool result for {msg.get('tool_call_id')}, "
                      f"whose call is not in this transcript]\n{content_text(msg.get('content'))}"}
            orphans += 1
    return out, orphans


def read(events: Iterable[tuple[Any, str]], **kwargs) -> tuple[dict, dict]:
    reader = Reader(**kwargs)
    for event, where in events:
        reader.add(event, where)
    return reader.result()
