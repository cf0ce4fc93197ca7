"""GitHub Copilot CLI session logs (``~/.copilot/session-state/<session>/events.jsonl``) -> one
transcript.

Each line is an event ``{"type", "data", "id", "timestamp", "parentId"}``. What the model saw:
``system.message`` (the system prompt), ``user.message`` (``transformedContent``: the prompt as
sent, with what the CLI injects around what was typed, ``content``), ``assistant.message`` (its
text, ``reasoningText``, and ``toolRequests``: the calls, by ``toolCallId``) and
``tool.execution_complete`` (a call's result: ``result.content``, or ``error.message`` when
``success`` is false), which may come after other events: each result is placed right after the
message holding its call. The session's bookkeeping (``session.*``, turn starts and ends, tool
starts, deltas, hooks) is no part of the context; a ``session.compaction_complete`` is counted
(the messages before it are kept: the log holds no summary the model was given instead).
"""

from __future__ import annotations

from hermesctx.errors import InputError
from hermesctx.formats._logs import LogReader, fix_orphans, read_event
from hermesctx.jsonio import dumps_like_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any

NAME = "copilot"
PLAIN = False  # read as OpenAI chat
LOG = True  # one JSON Lines file, one transcript, one event per line

MESSAGE_TYPES = ("system.message", "user.message", "assistant.message", "tool.execution_complete")
# what a log starts with (its first line decides the format)
FIRST_TYPES = ("session.start", "session.resume", "session.model_change", "session.info", *MESSAGE_TYPES)
# bookkeeping of the session and its turns: no part of what the model saw
QUIET_PREFIXES = ("session.", "assistant.turn_", "assistant.message_delta", "assistant.reasoning",
                  "assistant.usage", "tool.execution_start", "tool.execution_partial", "tool.user_requested",
                  "hook.", "permission.", "skill.", "subagent.", "abort", "pending_messages.")


def detect(event: Any) -> bool:
    """A Copilot CLI event: a known ``type`` and a ``data`` object (``session.start`` says
    ``producer`` ``copilot-agent`` or a ``copilotVersion``)."""
    if not (isinstance(event, dict) and isinstance(event.get("data"), dict)):
        return False
    kind = event.get("type")
    if kind == "session.start":
        data = event["data"]
        return data.get("producer") == "copilot-agent" or "copilotVersion" in data
    return kind in FIRST_TYPES and ("parentId" in event or "timestamp" in event)


class Reader(LogReader):
    format = NAME

    def __init__(self, *, warn: Callable[[str], None] = lambda m: None, **_: Any):
        super().__init__(warn=warn)
        self.model: str | None = None
        self.compactions = 0
        self.orphans = [0]

    def scan(self, events: Iterable[tuple[Any, str]]) -> None:
        if not any(isinstance(e, dict) and e.get("type") in MESSAGE_TYPES for e, _ in events):
            raise InputError("a Copilot CLI session log without any message: no transcript in it")

    def messages(self, events: Iterable[tuple[Any, str]]) -> Iterator[dict]:
        slots: list[list[dict]] = []  # each message and then the results of its calls
        owner: dict = {}  # call id -> the slot of the message holding it
        for event, _where in events:
            kind = event.get("type") if isinstance(event, dict) else None
            data = event.get("data") if isinstance(event, dict) else None
            if not isinstance(data, dict):
                self._lose("lines that are no Copilot CLI event")
                continue
            if kind == "session.start":
                self.session = data.get("sessionId")
            elif kind == "session.model_change" and isinstance(data.get("newModel"), str):
                self.model = data["newModel"]
            elif kind == "session.compaction_complete":
                self.compactions += 1
            elif kind == "system.message":
                slots.append([{"role": "system", "content": _text(data.get("content"))}])
            elif kind == "user.message":
                sent = data.get("transformedContent")
                slots.append([{"role": "user", "content": _text(sent if isinstance(sent, str) else
                                                                 data.get("content"))}])
            elif kind == "assistant.message":
                slots.append([self._assistant(data)])
                for call in slots[-1][0].get("tool_calls") or ():
                    owner[call["id"]] = slots[-1]
            elif kind == "tool.execution_complete":
                call_id = str(data.get("toolCallId") or "")
                result = {"role": "tool", "tool_call_id": call_id, "content": _result(data)}
                slot = owner.pop(call_id, None)
                if slot is None:  # (its call is not in the log: user text, by fix_orphans)
                    slot = []
                    slots.append(slot)
                slot.append(result)
            elif not isinstance(kind, str) or not kind.startswith(QUIET_PREFIXES):
                self._lose(f"{kind} events")
        if self.compactions:
            self.warn(f"the log holds {self.compactions} compaction(s); the messages before them are "
                      "kept (it records no summary the model was given instead)")
        yield from fix_orphans((msg for slot in slots for msg in slot), set(), self.orphans)

    def _assistant(self, data: dict) -> dict:
        if isinstance(data.get("model"), str):
            self.model = data["model"]
        text = _text(data.get("content"))
        msg: dict = {"role": "assistant", "content": text or None}
        if isinstance(data.get("reasoningText"), str) and data["reasoningText"]:
            msg["reasoning"] = data["reasoningText"]
        for request in data.get("toolRequests") or ():
            if not isinstance(request, dict):
                continue
            args = request.get("arguments")
            msg.setdefault("tool_calls", []).append({
                "id": str(request.get("toolCallId") or ""), "type": "function",
                "function": {"name": str(request.get("name") or ""),
                             "arguments": args if isinstance(args, str)
                             else dumps_like_json(args if args is not None else {}, ensure_ascii=False)}})
        if msg["content"] is None and "tool_calls" not in msg:
            msg["content"] = ""
        return msg

    def _lose(self, what: str) -> None:
        self.lost[what] = self.lost.get(what, 0) + 1

    def tail(self) -> dict:
        return {"model": self.model} if self.model else {}

    def info(self) -> dict:
        return {"format": NAME, "session": self.session, "model": self.model,
                "compactions": self.compactions, "orphan_tool_results": self.orphans[0],
                "lost": dict(self.lost)}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return "" if content is None else dumps_like_json(content, ensure_ascii=False)


def _result(data: dict) -> str:
    """A ``tool.execution_complete``'s result as the model got it: ``result.content`` (the text
    sent back; ``detailedContent`` is what the terminal showed), or the error."""
    if data.get("success") is False or "error" in data and "result" not in data:
        error = data.get("error")
        message = error.get("message") if isinstance(error, dict) else error
        return f"Error: {message if isinstance(message, str) else dumps_like_json(error)}"
    result = data.get("result")
    if isinstance(result, dict):
        return _text(result.get("content"))
    return _text(result)


def read(event: Any, lost: dict) -> dict:
    """One event given alone as a document, as OpenAI chat."""
    return read_event(Reader(), event, lost)
