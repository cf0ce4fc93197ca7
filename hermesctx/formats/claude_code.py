"""Claude Code session logs (``~/.claude/projects/<p>/<session>.jsonl``) -> one OpenAI transcript.

One event per line. ``user`` / ``assistant`` events carry an Anthropic ``message``; every event
has a ``uuid`` and a ``parentUuid`` (``system``, ``progress`` and other bookkeeping events sit in
the chain too). The transcript is the parent chain that ends at the last main-thread message;
branches left by "redo from here" are off that chain and left out, as are sidechain (subagent)
events unless asked for. An assistant reply is often written as several events (one per
content block) sharing ``message.id``; they fold back into one message, also when the results
of its first tool calls were logged between them. A ``system`` event with ``subtype:
compact_boundary`` starts a new segment (``parentUuid`` null, the old chain reachable through
``logicalParentUuid``); the next user event (``isCompactSummary``) holds the summary. Only the
last segment is the context the model saw, so by default only it is read. ``summary`` events are
session titles.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from hermesctx.formats import CLAUDE_CODE, LogReader, anthropic, fix_orphans

# events that are not part of the conversation: skipped without a warning
QUIET_TYPES = frozenset({"file-history-snapshot", "queue-operation", "progress", "custom-title",
                         "agent-name", "tag", "pr-link", "last-prompt", "summary", "system"})
SYNTHETIC_MODEL = "<synthetic>"


def looks_like(event: Any) -> bool:
    if not isinstance(event, dict):
        return False
    kind = event.get("type")
    if kind in ("user", "assistant", "system"):
        return "uuid" in event and ("parentUuid" in event or "sessionId" in event)
    if kind == "summary":
        return "leafUuid" in event
    return kind in QUIET_TYPES and "messages" not in event and "role" not in event


class _Thread:
    """Folds one thread's events (the main thread, or one subagent) into OpenAI messages. The
    open assistant reply and the tool results logged after it wait in memory until the next
    reply or user message shows the reply is complete."""

    def __init__(self, lost: dict):
        self.lost = lost
        self.open_id: Any = None
        self.blocks: list | None = None  # the open reply's content blocks
        self.results: list[dict] = []  # tool results logged after it

    def assistant(self, message: dict) -> list[dict]:
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
        msg_id = message.get("id")
        if self.blocks is not None and msg_id and msg_id == self.open_id:
            self.blocks.extend(blocks)  # another block of the same reply
            return []
        out = self.flush()
        self.open_id, self.blocks = msg_id, list(blocks)
        return out

    def user(self, message: dict) -> tuple[list[dict], bool]:
        """-> (complete messages, whether this event starts a new turn)."""
        converted = anthropic.message_to_openai(
            {"role": "user", "content": message.get("content", "")}, self.lost)
        results = [m for m in converted if m.get("role") == "tool"]
        rest = [m for m in converted if m.get("role") != "tool"]
        if self.blocks is not None:
            self.results.extend(results)
            if not rest:
                return [], False
            return self.flush() + rest, True
        return converted, bool(rest)

    def flush(self) -> list[dict]:
        out: list[dict] = []
        if self.blocks is not None:
            out = anthropic.message_to_openai({"role": "assistant", "content": self.blocks}, self.lost)
        out.extend(self.results)
        self.open_id, self.blocks, self.results = None, None, []
        return out


class Reader(LogReader):
    format = CLAUDE_CODE

    def __init__(self, *, include_sidechains: bool = False, all_segments: bool = False,
                 warn: Callable[[str], None] = lambda m: None):
        self.include_sidechains = include_sidechains
        self.all_segments = all_segments
        self.warn = warn
        self.lost: dict = {}
        # first pass
        self.start = 0  # index of the first event read (after the last compaction boundary)
        self.chain = bytearray()  # by position of the main events with a uuid: 1 on the chain
        self.chained = False  # whether a chain was found (else every event is kept)
        self.segments = 1
        self.dropped = 0
        # second pass
        self.usage: dict | None = None
        self.model: str | None = None
        self.session: str | None = None
        self.titles: list[str] = []
        self.skipped: dict[str, int] = {}
        self.off_chain = 0
        self.sidechain_events = 0
        self.orphans = [0]

    # -- first pass: which events make the transcript ------------------------------------

    def scan(self, events: Iterable[tuple[Any, str]]) -> None:
        """Find the last segment and the parent chain that ends at the last main-thread message.

        Memory is 9 bytes an event: the uuid hashes of the main-thread events in file order
        (``array``), their parents only where a parent is not the event just before (branch
        points, roots), and a bitmap of the chain."""
        hashes = array("q")
        links: dict[int, int | None] = {}  # position -> parent hash, where not the previous event
        leaf = -1
        main_events = 0
        for index, (event, _) in enumerate(events):
            if not isinstance(event, dict) or event.get("isSidechain"):
                continue
            uuid = event.get("uuid")
            kind = event.get("type")
            parent = event.get("parentUuid")
            if kind == "system" and event.get("subtype") == "compact_boundary":
                self.segments += 1
                if not self.all_segments:
                    self.start, hashes, links, leaf = index + 1, array("q"), {}, -1
                    self.dropped += main_events
                    main_events = 0
                    continue
                parent = parent or event.get("logicalParentUuid")
            if kind in ("user", "assistant"):
                main_events += 1
            if not isinstance(uuid, str):
                continue
            link = hash(parent) if isinstance(parent, str) else None
            if not hashes or link != hashes[-1]:
                links[len(hashes)] = link
            if kind in ("user", "assistant") and isinstance(event.get("message"), dict):
                leaf = len(hashes)
            hashes.append(hash(uuid))
        self.chain = bytearray(len(hashes))
        self.chained = leaf >= 0
        position = leaf
        while position >= 0 and not self.chain[position]:
            self.chain[position] = 1
            if position not in links:
                position -= 1
                continue
            link = links[position]
            position -= 1
            while position >= 0 and (link is None or hashes[position] != link):
                position = -1 if link is None else position - 1

    # -- second pass: fold -----------------------------------------------------------------

    def messages(self, events: Iterable[tuple[Any, str]]) -> Iterator[dict]:
        return fix_orphans(self._fold(events), set(), self.orphans)

    def _fold(self, events: Iterable[tuple[Any, str]]) -> Iterator[dict]:
        main = _Thread(self.lost)
        agents: dict[Any, _Thread] = {}
        side: list[dict] = []  # subagent messages, written before the next main turn
        position = -1  # of the main-thread event with a uuid, as counted by scan
        for index, (event, where) in enumerate(events):
            if index < self.start:
                continue
            if (isinstance(event, dict) and not event.get("isSidechain")
                    and isinstance(event.get("uuid"), str)):
                position += 1
            if not isinstance(event, dict):
                self._skip("lines that are not JSON objects", where)
                continue
            kind = event.get("type")
            if kind not in ("user", "assistant"):
                if kind == "summary" and isinstance(event.get("summary"), str):
                    self.titles.append(event["summary"])
                elif kind not in QUIET_TYPES:
                    self._skip(f"events of unknown type {kind!r}", where)
                continue
            message = event.get("message")
            if not isinstance(message, dict):
                self._skip(f"{kind} events without a message", where)
                continue
            if event.get("isSidechain"):
                self.sidechain_events += 1
                if self.include_sidechains:
                    thread = agents.setdefault(event.get("agentId"), _Thread(self.lost))
                    if kind == "assistant":
                        side.extend(thread.assistant(message))
                    else:
                        side.extend(thread.user(message)[0])
                continue
            if self.chained and isinstance(event.get("uuid"), str) and not self.chain[position]:
                self.off_chain += 1
                continue
            self.session = self.session or event.get("sessionId")
            if kind == "assistant":
                model = message.get("model")
                if model != SYNTHETIC_MODEL:
                    if isinstance(model, str):
                        self.model = model
                    if isinstance(message.get("usage"), dict):
                        self.usage = message["usage"]
                yield from main.assistant(message)
                continue
            out, new_turn = main.user(message)
            if new_turn and (side or agents):
                # the user message ends the turn: its subagents' messages go before it
                for thread in agents.values():
                    side.extend(thread.flush())
                agents = {}
                user = out.pop() if out and out[-1].get("role") == "user" else None
                yield from out
                yield from side
                side = []
                out = [user] if user is not None else []
            yield from out
        yield from main.flush()
        for thread in agents.values():
            side.extend(thread.flush())
        yield from side

    def _skip(self, what: str, where: str) -> None:
        count = self.skipped.get(what, 0)
        self.skipped[what] = count + 1
        if not count:  # once per kind: a log can hold thousands
            self.warn(f"{where}: skipped {what} (first of them)")

    # -- result ----------------------------------------------------------------------------

    def tail(self) -> dict:
        return {"model": self.model} if self.model else {}

    def info(self) -> dict:
        info = {"format": CLAUDE_CODE, "session": self.session, "model": self.model,
                "segments": self.segments, "dropped_before_compaction": self.dropped,
                "off_chain_events": self.off_chain, "sidechain_events": self.sidechain_events,
                "orphan_tool_results": self.orphans[0], "skipped": dict(self.skipped),
                "lost": dict(self.lost), "titles": list(self.titles)}
        if self.usage is not None:
            info["usage"] = dict(self.usage)
        return info
