"""OpenAI chat: a list of messages or a request body with ``messages``. It is the form every
other format is read into, so reading and writing it change nothing."""

from __future__ import annotations

from hermesctx.messages import detect_format as _chat_format

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

NAME = "openai"
PLAIN = True  # commands work on the body as it is
LOG = False  # a document, not a session log


def detect(value: Any) -> bool:
    """Chat messages or a body that are not Anthropic's (by their blocks and request keys)."""
    return _chat_format(value) == NAME


def read(doc: Any, lost: dict) -> Any:
    return doc


def write(doc: Any, lost: dict) -> Any:
    return doc


def stream(chunks: Iterator[list[dict]], lost: dict, wire: dict) -> tuple[dict, str, Iterator, Any]:
    """The streaming face of :func:`write` (see :func:`hermesctx.formats._logs.write_stream`)."""
    from hermesctx.wire import send

    items = send.openai_messages((msg for chunk in chunks for msg in chunk), wire)
    return {}, "messages", items, send.OPENAI_REQUEST_KEYS
