"""Spill oversized tool results to files (Hermes's tool-result persistence; spec 40 §D, D10).

Two layers, as Hermes runs them after every turn:

1. per result: a result longer than its tool's threshold (``read_file`` never) is written to
   ``<dir>/<safe id>.txt`` and replaced by a ``<persisted-output>`` block: its size, the path,
   how to read it, and a preview cut at a line end;
2. per turn: when the results of one assistant turn together exceed the turn budget, the
   largest not-yet-spilled ones are spilled (threshold 0) until the turn fits.

Thresholds scale with the context window when one is given (``budget_for_window``). File names
are Hermes's (decision D10): a later result whose id gives the same name takes the file, as in
Hermes, but the earlier content is first moved to ``<dir>/.replaced/`` (listed in the report),
so :func:`restore` still finds it. Unlike Hermes, a failed write is an error (nothing is
emitted, nothing truncated), writes are atomic, and :func:`restore` reverses a spill.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from hermesctx.errors import FileIOError
from hermesctx.io import write_atomic_nosync
from hermesctx.messages import check_messages, messages_of, with_messages
from hermesctx.redact import redact_head

DEFAULT_RESULT_SIZE = 100_000
DEFAULT_TURN_BUDGET = 200_000
PREVIEW_SIZE = 1_500
OPEN_TAG = "<persisted-output>"
CLOSE_TAG = "</persisted-output>"
PINNED = {"read_file": math.inf}  # a read_file result is never spilled by the per-result layer
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_MAX_STEM = 120
_SAVED_TO = re.compile(r"^Full output saved to: (.*)$", re.MULTILINE)
REPLACED_DIR = ".replaced"  # earlier contents of files a later result with the same name took


@dataclass(frozen=True)
class Budget:
    default_result_size: int = DEFAULT_RESULT_SIZE
    turn_budget: int = DEFAULT_TURN_BUDGET
    preview_size: int = PREVIEW_SIZE
    tool_overrides: dict = field(default_factory=dict)

    def threshold(self, tool: Any) -> float:
        if isinstance(tool, str) and tool in PINNED:
            return PINNED[tool]
        if isinstance(tool, str) and tool in self.tool_overrides:
            return self.tool_overrides[tool]
        return self.default_result_size


def budget_for_window(context_length: int | None, **overrides: Any) -> Budget:
    """Hermes ``budget_for_context_window``: 15 % / 30 % of the window in characters, floored
    at 8,000 / 16,000 and capped at 100,000 / 200,000."""
    if not context_length or context_length <= 0:
        base = Budget()
    else:
        chars = context_length * 4
        base = Budget(max(8_000, min(int(chars * 0.15), DEFAULT_RESULT_SIZE)),
                      max(16_000, min(int(chars * 0.30), DEFAULT_TURN_BUDGET)))
    return Budget(**{**base.__dict__, **{k: v for k, v in overrides.items() if v is not None}})


def default_dir(environ=None) -> str:
    """Hermes's location: ``$TMPDIR/hermes-results`` (``/tmp/hermes-results``)."""
    environ = os.environ if environ is None else environ
    return os.path.join(environ.get("TMPDIR") or tempfile.gettempdir(), "hermes-results")


def safe_filename(tool_use_id: Any) -> str:
    """A file name no id can turn into a path outside the directory (spec D.5)."""
    raw = str(tool_use_id) if tool_use_id else "tool_result"
    stem = _UNSAFE.sub("_", raw).strip("._-")
    changed = stem != raw
    if not stem:
        stem, changed = "tool_result", True
    if changed or len(stem) > _MAX_STEM:
        digest = hashlib.sha256(raw.encode("utf-8", errors="surrogatepass")).hexdigest()[:12]
        stem = (stem[:_MAX_STEM].rstrip("._-") or "tool_result") + "_" + digest
    return stem + ".txt"


def preview(content: str, size: int = PREVIEW_SIZE) -> tuple[str, bool]:
    if len(content) <= size:
        return content, False
    window = content[:size]
    cut = window.rfind("\n")
    if cut > size // 2:
        window = window[:cut + 1]
    return window, True


def _size(chars: int) -> str:
    kb = chars / 1024
    return f"{kb / 1024:.1f} MB" if kb >= 1024 else f"{kb:.1f} KB"


def persisted_block(content: str, path: str, preview_size: int = PREVIEW_SIZE) -> str:
    head, more = preview(redact_head(content, preview_size), preview_size)
    return _block(head, more, len(content), path)


def _block(head: str, more: bool, size: int, path: str) -> str:
    return "\n".join([
        OPEN_TAG,
        f"This tool result was too large ({size:,} characters, {_size(size)}).",
        f"Full output saved to: {path}",
        "Use the read_file tool with offset and limit to access specific sections of this output.",
        "",
        f"Preview (first {len(head)} chars):",
        head + ("\n..." if more else ""),
        CLOSE_TAG,
    ])


class Writer:
    """Writes spilled results into one directory, atomically, under Hermes's file names.

    A file that already holds exactly the result is left alone. One with other content is
    replaced, as Hermes replaces it, after its content is kept as
    ``.replaced/<name>.<sha256 prefix>``; its path is added to ``replaced``.
    """

    def __init__(self, directory: str, *, dry_run: bool = False):
        self.directory = os.path.abspath(directory)
        self.dry_run = dry_run
        self.replaced: list[str] = []
        self._made = False

    def write(self, tool_use_id: Any, content: str) -> str:
        data = content.encode("utf-8", errors="surrogatepass")
        path = os.path.join(self.directory, safe_filename(tool_use_id))
        present = os.path.exists(path)
        if present and _same(path, data):
            return path
        if present:
            self.replaced.append(path)
        if self.dry_run:
            return path
        try:
            if not self._made:
                os.makedirs(self.directory, exist_ok=True)
                self._made = True
            if present:
                _keep_replaced(path)
            write_atomic_nosync(path, data, mode=0o600)
        except OSError as exc:
            raise FileIOError(f"cannot write spill file {path}: {exc.strerror or exc}") from None
        return path


def _keep_replaced(path: str) -> None:
    with open(path, "rb") as handle:
        old = handle.read()
    keep = os.path.join(os.path.dirname(path), REPLACED_DIR)
    os.makedirs(keep, exist_ok=True)
    name = f"{os.path.basename(path)}.{hashlib.sha256(old).hexdigest()[:16]}"
    if not os.path.exists(os.path.join(keep, name)):
        write_atomic_nosync(os.path.join(keep, name), old, mode=0o600)


def _same(path: str, data: bytes) -> bool:
    try:
        if os.path.getsize(path) != len(data):
            return False
        with open(path, "rb") as handle:
            return handle.read() == data
    except OSError:
        return False


# --- the two layers over a transcript -----------------------------------------------------
#
# A *slot* is where one tool result lives: ``(i, None)`` for an OpenAI ``tool`` message
# ``messages[i]``, ``(i, j)`` for the Anthropic block ``messages[i]["content"][j]``. A turn is
# a run of consecutive tool messages, or the tool_result blocks of one message.

def _turns(messages: list) -> list[list[tuple[int, int | None]]]:
    turns: list = []
    run: list = []
    for i, msg in enumerate(messages):
        if msg.get("role") == "tool":
            run.append((i, None))
            continue
        if run:
            turns.append(run)
            run = []
        content = msg.get("content")
        if type(content) is list:
            blocks = [(i, j) for j, block in enumerate(content)
                      if type(block) is dict and block.get("type") == "tool_result"]
            if blocks:
                turns.append(blocks)
    if run:
        turns.append(run)
    return turns


def _item(messages: list, slot: tuple) -> dict:
    i, j = slot
    return messages[i] if j is None else messages[i]["content"][j]


def _text(item: dict, anthropic: bool) -> Any:
    """The text of one result: a string; for an Anthropic block also the text of a content
    list holding exactly one text block (the other shapes are never spilled)."""
    content = item.get("content", "")
    if anthropic and type(content) is list and len(content) == 1:
        part = content[0]
        if type(part) is dict and part.get("type") == "text" and type(part.get("text")) is str:
            return part["text"]
    return content


def _with_text(item: dict, text: str) -> dict:
    content = item.get("content")
    if type(content) is list:
        return {**item, "content": [{**content[0], "text": text}]}
    return {**item, "content": text}


def _tool_names(messages: list) -> dict:
    names: dict = {}
    for msg in messages:
        calls = msg.get("tool_calls")
        if type(calls) is list:
            for tc in calls:
                if isinstance(tc, dict) and isinstance(tc.get("function"), dict):
                    for key in ("id", "call_id"):
                        if key in tc and _hashable(tc[key]):
                            names[tc[key]] = tc["function"].get("name")
        content = msg.get("content")
        if type(content) is list:
            for block in content:
                if type(block) is dict and block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                    names[block["id"]] = block.get("name")
    return names


def spill_messages(messages: list, writer: Writer, budget: Budget = Budget()) -> tuple[list, dict]:
    """Both layers over a message list (OpenAI tool messages and Anthropic tool_result blocks).
    Returns a new list; messages that change are copied, the others are shared."""
    report = {"spilled": 0, "by_turn_budget": 0, "chars_before": 0, "chars_after": 0, "files": []}
    replaced_before = len(writer.replaced)
    lowest = min([budget.default_result_size, *budget.tool_overrides.values()])
    names = None
    changed: dict = {}  # slot -> new content

    for turn in _turns(messages):
        contents = []
        for slot in turn:
            item = _item(messages, slot)
            content = _text(item, slot[1] is not None)
            if type(content) is str:
                report["chars_before"] += len(content)
            if type(content) is str and len(content) > lowest:
                if slot[1] is None:
                    tool = item.get("tool_name") or item.get("name")
                else:
                    tool = None
                rid = item.get("tool_call_id" if slot[1] is None else "tool_use_id")
                if not tool and _hashable(rid):
                    if names is None:
                        names = _tool_names(messages)
                    tool = names.get(rid)
                if len(content) > budget.threshold(tool):
                    content = changed[slot] = _spill_one(writer, rid, content, budget, report)
                    report["spilled"] += 1
            contents.append(content)
        # Hermes takes len() of any content: a list or object counts its items or keys toward
        # the turn total (it is never spilled: only text is written to a file)
        sizes = [len(c) if type(c) is str or (type(c) in (list, dict) and slot[1] is None) else 0
                 for c, slot in zip(contents, turn)]
        total = sum(sizes)
        if total > budget.turn_budget:
            candidates = sorted((k for k, c in enumerate(contents) if type(c) is str and OPEN_TAG not in c),
                                key=lambda k: -sizes[k])
            for k in candidates:
                if total <= budget.turn_budget:
                    break
                if not contents[k]:
                    continue
                slot = turn[k]
                item = _item(messages, slot)
                key = "tool_call_id" if slot[1] is None else "tool_use_id"
                file_id = item[key] if key in item else f"budget_{k}"
                block = changed[slot] = _spill_one(writer, file_id, contents[k], budget, report)
                total += len(block) - sizes[k]
                contents[k] = block
                report["spilled"] += 1
                report["by_turn_budget"] += 1
        report["chars_after"] += sum(len(c) for c in contents if type(c) is str)
    report["replaced"] = writer.replaced[replaced_before:]
    if not changed:
        return list(messages), report
    out = list(messages)
    for (i, j), text in changed.items():
        if j is None:
            out[i] = {**out[i], "content": text}
        else:
            blocks = out[i]["content"]
            if blocks is messages[i]["content"]:
                blocks = list(blocks)
                out[i] = {**out[i], "content": blocks}
            blocks[j] = _with_text(blocks[j], text)
    return out, report


def _hashable(value: Any) -> bool:
    return not isinstance(value, (list, dict))


def _spill_one(writer: Writer, file_id: Any, content: str, budget: Budget, report: dict) -> str:
    path = writer.write(file_id, content)
    report["files"].append(path)
    return persisted_block(content, path, budget.preview_size)


def spill(doc: Any, *, directory: str | None = None, budget: Budget = Budget(),
          dry_run: bool = False, writer: Writer | None = None) -> tuple[Any, dict]:
    """The ``spill`` stage on a document: ``(new_doc, report)``; files are written as it goes."""
    messages = messages_of(doc)
    check_messages(messages)
    writer = writer or Writer(directory or default_dir(), dry_run=dry_run)
    new, report = spill_messages(messages, writer, budget)
    report["dir"] = writer.directory
    return with_messages(doc, new), report


# --- restore ------------------------------------------------------------------------------

def _restore_text(text: Any, directory: str, missing: list) -> Any:
    if not isinstance(text, str) or not text.startswith(OPEN_TAG) or not text.endswith(CLOSE_TAG):
        return text
    match = _SAVED_TO.search(text)
    if not match:
        return text
    path = match.group(1)
    real = os.path.realpath(path)
    if os.path.dirname(real) != os.path.realpath(directory):
        missing.append(f"{path} (outside the spill directory {directory})")
        return text
    try:
        with open(real, "rb") as handle:
            data = handle.read().decode("utf-8", errors="surrogatepass")
    except OSError:
        missing.append(path)
        return text
    if _is_block_of(text, data, path):
        return data
    for data in _replaced_contents(real):
        if _is_block_of(text, data, path):
            return data
    missing.append(f"{path} (holds another result)")
    return text


def _replaced_contents(real: str) -> Iterator[str]:
    """Earlier contents of ``real`` that a later result with the same file name displaced."""
    keep = os.path.join(os.path.dirname(real), REPLACED_DIR)
    prefix = os.path.basename(real) + "."
    try:
        names = sorted(n for n in os.listdir(keep) if n.startswith(prefix))
    except OSError:
        return
    for name in names:
        try:
            with open(os.path.join(keep, name), "rb") as handle:
                yield handle.read().decode("utf-8", errors="surrogatepass")
        except OSError:
            continue


_PREVIEW_LEN = re.compile(r"^Preview \(first (\d+) chars\):$", re.MULTILINE)


def _is_block_of(block: str, data: str, path: str) -> bool:
    """Whether ``block`` is exactly the block spilling ``data`` to ``path`` made (any preview size)."""
    match = _PREVIEW_LEN.search(block)
    if not match:
        return False
    n = int(match.group(1))
    return n <= len(data) and block in (_block(data[:n], n < len(data), len(data), path), _block((red := redact_head(data, n))[:n], n < len(red), len(data), path))


def restore(doc: Any, *, directory: str | None = None) -> tuple[Any, dict]:
    """Put spilled results back from their files (files outside ``directory`` are not read)."""
    directory = os.path.abspath(directory or default_dir())
    messages = messages_of(doc)
    check_messages(messages)
    missing: list[str] = []
    out = []
    restored = 0
    for msg in messages:
        content = msg.get("content")
        if msg.get("role") == "tool" and isinstance(content, str):
            new = _restore_text(content, directory, missing)
            if new is not content:
                msg = {**msg, "content": new}
                restored += 1
        elif isinstance(content, list):
            blocks = None
            for j, block in enumerate(content):
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    text = _text(block, True)
                    new = _restore_text(text, directory, missing)
                    if new is not text:
                        blocks = blocks or list(content)
                        blocks[j] = _with_text(block, new)
                        restored += 1
            if blocks is not None:
                msg = {**msg, "content": blocks}
        out.append(msg)
    return with_messages(doc, out), {"restored": restored, "missing": missing}


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def describe(report: dict) -> str:
    """The human line for one transcript."""
    if "restored" in report:
        missing = report["missing"]
        return f"restored {_n(report['restored'], 'tool result')}" + (
            f", {_n(len(missing), 'file')} missing, outside the directory or replaced" if missing else "")
    replaced = report.get("replaced")
    return (f"spilled {_n(report['spilled'], 'tool result')} ({report['by_turn_budget']} by the turn budget) "
            f"to {report['dir']}; {report['chars_before']:,} -> {report['chars_after']:,} chars"
            + (f"; replaced {_n(len(replaced), 'file')} of the same name" if replaced else ""))
