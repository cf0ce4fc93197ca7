"""The fixed texts of a compaction (spec 30.5-30.6): the prefix every summary starts with, the
markers around it, the note added to the system prompt; and the predicates that find a summary
in a transcript. These strings are what Hermes 0.19.0 writes and recognises, character for
character, so transcripts move freely between the two.
"""

from __future__ import annotations

import re
from typing import Any

TASK_HEADING = "## Historical Task Snapshot"
IN_PROGRESS_HEADING = "## Historical In-Progress State"
PENDING_ASKS_HEADING = "## Historical Pending User Asks"
REMAINING_WORK_HEADING = "## Historical Remaining Work"

SUMMARY_PREFIX = (
    '[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns were compacted into the summary below. This '
    'is a handoff from a previous context window — treat it as background reference, NOT as active in'
    'structions. Do NOT answer questions or fulfill requests mentioned in this summary; they were alr'
    'eady addressed. Respond ONLY to the latest user message that appears AFTER this summary — that m'
    'essage is the single source of truth for what to do right now. Topic overlap with the summary do'
    'es NOT mean you should resume its task: even on similar topics, the latest user message WINS. Tr'
    "eat ONLY the latest message as the active task and discard stale items from '## Historical Task "
    "Snapshot' / '## Historical In-Progress State' / '## Historical Pending User Asks' / '## Historic"
    "al Remaining Work' entirely — do not 'wrap up' or 'finish' work described there unless the lates"
    "t message explicitly asks for it. Reverse signals in the latest message (e.g. 'stop', 'undo', 'r"
    "oll back', 'just verify', 'don't do that anymore', 'never mind', a new topic) must immediately e"
    'nd any in-flight work described in the summary; do not re-surface it in later turns. IMPORTANT: '
    'Your persistent memory (MEMORY.md, USER.md) in the system prompt is ALWAYS authoritative and act'
    'ive — never ignore or deprioritize memory content due to this compaction note. None of the above'
    ' restricts HOW you work: your tools remain fully active — keep calling them normally for the act'
    'ive task (edit files, run commands, search) instead of merely narrating what you would do. The c'
    'urrent session state (files, config, etc.) may reflect work described here — avoid repeating it:'
)
LEGACY_PREFIX = "[CONTEXT SUMMARY]:"
END_MARKER = '--- END OF CONTEXT SUMMARY — respond to the message below, not the summary above ---'
MERGED_HEADER = '[PRIOR CONTEXT — for reference only; not a new message]'
MERGED_DELIMITER = '[END OF PRIOR CONTEXT — COMPACTION SUMMARY BELOW]'
NOTE_BASE = (
    '[Note: Some earlier conversation turns have been compacted into a handoff summary to preserve co'
    'ntext space. The current session state may still reflect earlier work, so build on that summary '
    'and state rather than re-doing work.'
)
# Hermes's sentence about its memory files: only for a Hermes transcript (or when asked for)
HERMES_MEMORY_SENTENCE = 'Your persistent memory (MEMORY.md, USER.md) remains fully authoritative regardless of compaction.'
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
_TOOLS_SENTENCE = (
    'None of the above restricts HOW you work: your tools remain fully active — keep calling them nor'
    'mally for the active task (edit files, run commands, search) instead of merely narrating what yo'
    'u would do. '
)
_RIGHT_NOW = "right now. "
_ACTIVE_TASK_ENDING = (
    "If the latest user message is consistent with the '## Active Task' section, you may use the summ"
    'ary as background. If the latest user message contradicts, supersedes, changes topic from, or in'
    " any way diverges from '## Active Task' / '## In Progress' / '## Pending User Asks' / '## Remain"
    "ing Work', the latest message WINS — discard those stale items entirely and do not 'wrap up the "
    "old task first'. Reverse signals in the latest message (e.g. 'stop', 'undo', 'roll back', 'just "
    "verify', 'don't do that anymore', 'never mind', a new topic) must immediately end any in-flight "
    'work described in the summary; do not re-surface it in later turns. IMPORTANT: Your persistent m'
    'emory (MEMORY.md, USER.md) in the system prompt is ALWAYS authoritative and active — never ignor'
    'e or deprioritize memory content due to this compaction note. The current session state (files, '
    'config, etc.) may reflect work described here — avoid repeating it:'
)
_FIRST_PREFIX = (
    '[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns were compacted into the summary below. This '
    'is a handoff from a previous context window — treat it as background reference, NOT as active in'
    'structions. Do NOT answer questions or fulfill requests mentioned in this summary; they were alr'
    "eady addressed. Your current task is identified in the '## Active Task' section of the summary —"
    ' resume exactly from there. Respond ONLY to the latest user message that appears AFTER this summ'
    'ary. The current session state (files, config, etc.) may reflect work described here — avoid rep'
    'eating it:'
)
HISTORICAL_PREFIXES = (
    SUMMARY_PREFIX.replace(_TOOLS_SENTENCE, ""),
    SUMMARY_PREFIX[:SUMMARY_PREFIX.index(_RIGHT_NOW) + len(_RIGHT_NOW)] + _ACTIVE_TASK_ENDING,
    _FIRST_PREFIX,
)
_ALL_PREFIXES = (SUMMARY_PREFIX, LEGACY_PREFIX, *HISTORICAL_PREFIXES)


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


def with_summary_prefix(summary: str | None) -> str:
    body = strip_summary_prefix(summary)
    return f"{SUMMARY_PREFIX}\n{body}" if body else SUMMARY_PREFIX


def find_latest_summary(messages: list, start: int, end: int) -> tuple[int | None, str]:
    """Newest message in ``[start, end)`` holding a summary: ``(index, body)``, else ``(None, "")``."""
    for idx in range(end - 1, start - 1, -1):
        content = messages[idx].get("content")
        if is_summary_content(content):
            return idx, strip_summary_prefix(text_view(content))
    return None, ""


_TASK_SECTION = re.compile(rf"(?ms)^{re.escape(TASK_HEADING)}\s*\n.*?(?=^## |\Z)")


def replace_task_section(body: str, replacement: str) -> str:
    """Put ``replacement`` in place of the task-snapshot section, or in front when there is none."""
    if _TASK_SECTION.search(body):
        return _TASK_SECTION.sub(lambda _m: replacement, body, count=1).strip()
    return f"{replacement}{body}".strip()
