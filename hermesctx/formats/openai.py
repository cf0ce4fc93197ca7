"""OpenAI chat (the canonical form inside hermesctx): ``{"messages": [...], ...}`` or a bare
list of messages. Reading and writing it change nothing; its stream writer goes through the
OpenAI send path (:mod:`hermesctx.wire.send`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hermesctx.formats._common import OPENAI, Streamed, chat_format

NAME = OPENAI
LOG = False
PLAIN = True  # commands work on its bodies as they are
WRITABLE = True


def detect(value: Any) -> bool:
    return chat_format(value) == OPENAI


def read(doc: Any, lost: dict) -> Any:
    return doc


def write(body: dict, lost: dict) -> dict:
    return body


def stream(chunks: Iterable[list[dict]], lost: dict, wire: dict) -> Streamed:
    from hermesctx.wire import send

    messages = (msg for chunk in chunks for msg in chunk)
    return Streamed("messages", send.openai_messages(messages, wire), None, send.OPENAI_REQUEST_KEYS)
