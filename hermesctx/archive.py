"""The compacted-away turns, kept on disk so ``compress --expand`` can bring them back.

``compress --archive DIR`` writes the whole input transcript (one message per line, JSON
Lines) to ``DIR/<sha256 of its content>.jsonl`` (atomic; the same transcript twice is one
file) and names the file in the summary's own text (:func:`note_line`: path, message counts),
so the note survives every send path (a message key would not: it is internal). ``expand``
swaps a compressed transcript back for the archived one, keeping any messages that were
appended after compression; it also reads the ``_hermesctx_archive`` key older releases put on
the summary message.
"""

from __future__ import annotations

import hashlib
import os
import re
from typing import Any

from hermesctx import io
from hermesctx.errors import FileIOError, InputError
from hermesctx.messages import messages_of, with_messages

KEY = "_hermesctx_archive"  # where releases before the wire-ready output kept the note
_LINE = re.compile(r"\[The (\d+) messages before this compaction are archived in (.+?) "
                   r"\(compressed to (\d+) messages\); `hermesctx compress --expand` restores them\.\]")


def note_line(note: dict) -> str:
    """The archive note, as a line of the summary text."""
    return (f"[The {note['messages']} messages before this compaction are archived in {note['path']} "
            f"(compressed to {note['compressed_messages']} messages); "
            "`hermesctx compress --expand` restores them.]")


def _find_note(messages: list) -> dict | None:
    """The newest archive note: a line in a message's text, or (older releases) its key."""
    from hermesctx.summary_text import text_view

    for msg in reversed(messages):
        if not isinstance(msg, dict):
            continue
        if isinstance(msg.get(KEY), dict):
            return msg[KEY]
        found = _LINE.findall(text_view(msg.get("content")))
        if found:
            count, path, compressed = found[-1]
            return {"path": path, "messages": int(count), "compressed_messages": int(compressed)}
    return None


class Archiver:
    def __init__(self, directory: str):
        self.directory = os.path.abspath(directory)

    def __call__(self, messages: list, compressed_length: int) -> dict:
        data = b"".join(io.dumps(m) for m in messages)
        path = os.path.join(self.directory, hashlib.sha256(data).hexdigest()[:32] + ".jsonl")
        try:
            os.makedirs(self.directory, exist_ok=True)
            if not os.path.exists(path):
                io.write_atomic(path, data, mode=0o600)
        except OSError as exc:
            raise FileIOError(f"cannot write archive {path}: {exc.strerror or exc}") from None
        return {"path": path, "messages": len(messages), "compressed_messages": compressed_length}


def expand(doc: Any) -> tuple[Any, dict]:
    """The transcript from before compression (plus messages added since), from its archive."""
    messages = messages_of(doc)
    note = _find_note(messages)
    if note is None:
        return doc, {"expanded": False, "reason": "no archived compaction in this transcript"}
    path = note.get("path")
    try:
        with open(path, "rb") as handle:
            original = [io.loads(line) for line in handle.read().splitlines() if line.strip()]
    except (OSError, TypeError) as exc:
        raise FileIOError(f"cannot read archive {path}: {getattr(exc, 'strerror', None) or exc}") from None
    if len(original) != note.get("messages"):
        raise InputError(f"archive {path} holds {len(original)} messages, the note says {note.get('messages')}")
    later = messages[note.get("compressed_messages", len(messages)):]
    return with_messages(doc, original + later), {"expanded": True, "archive": path, "restored": len(original),
                                                  "kept_after": len(later)}
