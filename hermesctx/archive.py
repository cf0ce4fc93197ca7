"""The compacted-away turns, kept on disk so ``compress --expand`` can bring them back.

``compress --archive DIR`` writes the whole input transcript (one message per line, JSON
Lines) to ``DIR/<sha256 of its content>.jsonl`` (atomic; the same transcript twice is one
file) and notes the file on the summary message (``_hermesctx_archive``: path, message count
of the compressed output). ``expand`` swaps a compressed transcript back for the archived one,
keeping any messages that were appended after compression.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any

from hermesctx import io
from hermesctx.errors import FileIOError, InputError
from hermesctx.messages import messages_of, with_messages

KEY = "_hermesctx_archive"


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
        return {KEY: {"path": path, "messages": len(messages), "compressed_messages": compressed_length}}


def expand(doc: Any) -> tuple[Any, dict]:
    """The transcript from before compression (plus messages added since), from its archive."""
    messages = messages_of(doc)
    marks = [i for i, m in enumerate(messages) if isinstance(m, dict) and isinstance(m.get(KEY), dict)]
    if not marks:
        return doc, {"expanded": False, "reason": "no archived compaction in this transcript"}
    note = messages[marks[-1]][KEY]
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
