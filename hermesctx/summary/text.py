"""The fixed texts of a compaction: the prefix every summary starts with, the markers around
it, the note added to the system prompt; and the predicates that find a summary in a
transcript. These strings are what Hermes 0.19.0 writes and recognises, character for
character, so transcripts move freely between the two.

The prose lives in ``texts/*.md`` (package data), one text per file, read once by
:func:`template`; :func:`render` fills a template's ``$name`` placeholders (the prompts of
:mod:`hermesctx.summary.prompt`).
"""

from __future__ import annotations

import os

from hermesctx import lazyre

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

TASK_HEADING = "## Historical Task Snapshot"
IN_PROGRESS_HEADING = "## Historical In-Progress State"
PENDING_ASKS_HEADING = "## Historical Pending User Asks"
REMAINING_WORK_HEADING = "## Historical Remaining Work"


_TEXTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "texts")


_READ: dict[str, str] = {}


def template(name: str) -> str:
    """The text of ``texts/<name>.md`` (package data), without its final newline (read once)."""
    text = _READ.get(name)
    if text is None:
        with open(os.path.join(_TEXTS, f"{name}.md"), encoding="utf-8") as handle:  # (importlib.resources: slower)
            text = handle.read()
        text = _READ[name] = text[:-1] if text.endswith("\n") else text
    return text


def render(name: str, **values: Any) -> str:
    """A template with its ``$name`` placeholders filled in (values are not parsed again)."""
    import string  # (it imports re: only when a summary is written)

    return string.Template(template(name)).substitute(values)


SUMMARY_PREFIX = template("prefix")
LEGACY_PREFIX = "[CONTEXT SUMMARY]:"
END_MARKER = template("end_marker")
MERGED_HEADER = '[PRIOR CONTEXT — for reference only; not a new message]'
MERGED_DELIMITER = '[END OF PRIOR CONTEXT — COMPACTION SUMMARY BELOW]'
NOTE_BASE = template("compaction_note")
# Hermes's sentence about its memory files: only for a Hermes transcript (or when asked for)
HERMES_MEMORY_SENTENCE = template("compaction_note_memory")
COMPACTION_NOTE = f'{NOTE_BASE} {HERMES_MEMORY_SENTENCE}]'  # Hermes's note, character for character
PLAIN_NOTE = f'{NOTE_BASE}]'


def compaction_note(hermes: bool) -> str:
    """The note added to the system prompt: Hermes's own for a Hermes transcript, else without
    the sentence about Hermes's memory files (which the user's agent does not have)."""
    return COMPACTION_NOTE if hermes else PLAIN_NOTE


def is_hermes_transcript(messages: list) -> bool:
    """A Hermes agent's transcript: its system prompt speaks of the memory files."""
    for msg in messages[:1]:
        if isinstance(msg, dict) and msg.get("role") == "system":
            text = text_view(msg.get("content"))
            return "MEMORY.md" in text or "USER.md" in text
    return False


# Prefixes of older releases, still recognised (and replaced) when found in a transcript.
_TOOLS_SENTENCE = template("prefix_tools_sentence") + " "  # the sentence older prefixes lack
_RIGHT_NOW = "right now. "
_ACTIVE_TASK_ENDING = template("prefix_active_task_ending")  # the second release's ending
_FIRST_PREFIX = template("prefix_first")
HISTORICAL_PREFIXES = (
    SUMMARY_PREFIX.replace(_TOOLS_SENTENCE, ""),
    SUMMARY_PREFIX[:SUMMARY_PREFIX.index(_RIGHT_NOW) + len(_RIGHT_NOW)] + _ACTIVE_TASK_ENDING,
    _FIRST_PREFIX,
)
# the prefix of a summary for an agent that is not Hermes: without the sentence that names
# Hermes's memory files (MEMORY.md, USER.md) as authoritative, which such an agent does not have
_MEMORY_SENTENCE = ("IMPORTANT: Your persistent memory (MEMORY.md, USER.md) in the system prompt is ALWAYS "
                    "authoritative and active — never ignore or deprioritize memory content due to this "
                    "compaction note. ")
PLAIN_PREFIX = SUMMARY_PREFIX.replace(_MEMORY_SENTENCE, "")
_ALL_PREFIXES = (SUMMARY_PREFIX, LEGACY_PREFIX, *HISTORICAL_PREFIXES, PLAIN_PREFIX)


_SPACES = lazyre.compile(r"\s+")


def folded(text: str) -> str:
    """Every run of whitespace as one space (how the summaries quote an ask or a turn)."""
    return _SPACES.sub(" ", text)


def text_view(content: Any) -> str:
    """Text of a content value: strings as they are; lists join their string parts and the
    ``text`` of their dict parts with newlines (empty ones dropped); other values ``str()``."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p if isinstance(p, str) else p.get("text") for p in content
                 if isinstance(p, str) or isinstance(p, dict)]
        return "\n".join(p for p in parts if isinstance(p, str) and p)
    return str(content)


def is_summary_content(content: Any) -> bool:
    """Does this content hold a compaction summary (ours, Hermes's, or an older release's)?"""
    text = text_view(content).lstrip()
    if MERGED_DELIMITER in text:
        text = text.split(MERGED_DELIMITER, 1)[1].lstrip()
    return text.startswith(_ALL_PREFIXES)


def strip_summary_prefix(summary: str | None) -> str:
    """The body of a summary: merged-message header, prefix and end marker removed."""
    text = (summary or "").strip()
    if MERGED_DELIMITER in text:
        text = text.split(MERGED_DELIMITER, 1)[1].strip()
    for prefix in _ALL_PREFIXES:
        if text.startswith(prefix):
            text = text[len(prefix):].lstrip()
            break
    if text.endswith(END_MARKER):
        text = text[:-len(END_MARKER)].rstrip()
    return text


def with_summary_prefix(summary: str | None, *, hermes: bool = True) -> str:
    """The summary's body under the prefix: Hermes's, or (``hermes`` false, a transcript of
    another agent) :data:`PLAIN_PREFIX`, which names no memory files."""
    prefix = SUMMARY_PREFIX if hermes else PLAIN_PREFIX
    body = strip_summary_prefix(summary)
    return f"{prefix}\n{body}" if body else prefix


def find_latest_summary(messages: list, start: int, end: int) -> tuple[int | None, str]:
    """Newest message in ``[start, end)`` holding a summary: ``(index, body)``, else ``(None, "")``."""
    for idx in range(end - 1, start - 1, -1):
        content = messages[idx].get("content")
        if is_summary_content(content):
            return idx, strip_summary_prefix(text_view(content))
    return None, ""


_TASK_SECTION = lazyre.compile(r"(?ms)^" + "".join(c if c.isalnum() else "\\" + c for c in TASK_HEADING)
                               + r"\s*\n.*?(?=^## |\Z)")


def replace_task_section(body: str, replacement: str) -> str:
    """Put ``replacement`` in place of the task-snapshot section, or in front when there is none."""
    if _TASK_SECTION.search(body):
        return _TASK_SECTION.sub(lambda _m: replacement, body, count=1).strip()
    return f"{replacement}{body}".strip()
