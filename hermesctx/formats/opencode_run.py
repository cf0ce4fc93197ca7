"""``opencode run --format json`` output (OpenCode, the TypeScript agent, run headless: CI jobs,
scripts) -> one transcript.

Each line is an event ``{"type", "timestamp", "sessionID", "part"}`` (``step_start``, ``text``,
``reasoning``, ``tool_use``, ``step_finish``, ``error``) whose ``part`` is the OpenCode part as it
is stored (``messageID``; a ``tool`` part with ``callID`` and its ``state``). The parts are
gathered into their messages, in the order they came, and read as :mod:`opencode` reads
messages. The prompt is the command line's, not in the stream: the transcript opens with the
agent's reply.
"""

from __future__ import annotations

from hermesctx.errors import InputError
from hermesctx.formats import opencode
from hermesctx.formats._logs import LogReader, read_event

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any

NAME = "opencode-run"
PLAIN = False  # read as OpenAI chat
LOG = True  # one JSON Lines file, one transcript, one event per line

EVENT_TYPES = ("step_start", "text", "reasoning", "tool_use", "step_finish", "error")


def detect(event: Any) -> bool:
    return (isinstance(event, dict) and event.get("type") in EVENT_TYPES
            and isinstance(event.get("part"), dict) and "sessionID" in event)


class Reader(LogReader):
    format = NAME

    def __init__(self, *, warn: Callable[[str], None] = lambda m: None, **_: Any):
        super().__init__(warn=warn)
        self.errors = 0
        self.usage: dict | None = None
        self.model: str | None = None

    def scan(self, events: Iterable[tuple[Any, str]]) -> None:
        if not any(detect(event) for event, _ in events):
            raise InputError("an opencode run stream without any event: no transcript in it")

    def messages(self, events: Iterable[tuple[Any, str]]) -> Iterator[dict]:
        order: dict = {}  # message id -> its parts, in the order they came
        for event, where in events:
            if not detect(event):
                self.lost["lines that are no opencode run event"] = (
                    self.lost.get("lines that are no opencode run event", 0) + 1)
                continue
            self.session = event.get("sessionID")
            if event.get("type") == "error":
                self.errors += 1
                self.warn(f"{where}: the run reported an error: {str(event.get('error'))[:120]}")
                continue
            part = event["part"]
            order.setdefault(part.get("messageID"), []).append(part)
        messages = [{"info": {"id": mid, "sessionID": self.session, "role": "assistant"}, "parts": parts}
                    for mid, parts in order.items()]
        if not messages:
            raise InputError("an opencode run stream without any part: no transcript in it")
        self.usage = opencode.usage(messages)
        yield from opencode.read(messages, self.lost)["messages"]

    def info(self) -> dict:
        info = {"format": NAME, "session": self.session, "lost": dict(self.lost),
                "errors": self.errors}
        if self.usage:
            info["usage"] = dict(self.usage)
        return info


def read(event: Any, lost: dict) -> dict:
    """One event given alone as a document, as OpenAI chat."""
    return read_event(Reader(), event, lost)
