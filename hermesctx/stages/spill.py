"""Spill oversized tool results to files (Hermes's tool-result persistence).

Two layers, as Hermes runs them after every turn:

1. per result: a result longer than its tool's threshold (``read_file`` never) is written to
   ``<dir>/<safe id>.txt`` and replaced by a ``<persisted-output>`` block: its size, the path,
   how to read it, and a preview cut at a line end;
2. per turn: when the results of one assistant turn together exceed the turn budget, the
   largest not-yet-spilled ones are spilled (threshold 0) until the turn fits.

Thresholds scale with the context window when one is given (``budget_for_window``). File names
are Hermes's, so a spill made here reads like one Hermes made: a later result whose id gives the same name takes the file, as in
Hermes, but the earlier content is first moved to ``<dir>/.replaced/`` (listed in the report),
so :func:`restore` still finds it. Unlike Hermes, a failed write is an error (nothing is
emitted, nothing truncated), writes are atomic, and :func:`restore` reverses a spill.

Safe with several writers on one directory (two processes, ``run --jobs`` workers): "keep the
old content, then replace" runs under an exclusive lock (``flock`` on ``<dir>/.index``), and
every file in the directory and in ``.replaced/`` is opened without following symlinks (a
planted symlink is an error, exit 5). ``<dir>/.index`` also records, for every block written,
``sha256(block) sha256(content)``: :func:`restore` puts a block back only when it finds a file
with that content hash (never by size and preview), so a forged block restores nothing.
"""

from __future__ import annotations

import errno
import os
import stat

from hermesctx import lazyre
from hermesctx.errors import FileIOError, InputError, UsageError
from hermesctx.messages import check_messages, messages_of, with_messages
from hermesctx.options import ModelOptions, flags, option
from hermesctx.record import field, record
from hermesctx.redact import redact_head

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DEFAULT_RESULT_SIZE = 100_000
DEFAULT_TURN_BUDGET = 200_000
PREVIEW_SIZE = 1_500
OPEN_TAG = "<persisted-output>"
CLOSE_TAG = "</persisted-output>"
PINNED = {"read_file": float("inf")}  # a read_file result is never spilled by the per-result layer
_UNSAFE = lazyre.compile(r"[^A-Za-z0-9_.-]+")
_MAX_STEM = 120
_SAVED_TO = lazyre.compile(r"^Full output saved to: (.*)$", lazyre.MULTILINE)
REPLACED_DIR = ".replaced"  # earlier contents of files a later result with the same name took
SENT_DIR = ".sent"  # transcripts as spill made them, where the send path changed them (restore)
INDEX = ".index"  # "sha256(block) sha256(content)" per line; also the lock file of the directory
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


@record(frozen=True)
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
    """A private, per-user directory: ``$TMPDIR/hermes-results-<uid>`` (mode 0700; Hermes's
    own ``$TMPDIR/hermes-results`` is shared by every user, so it is used only when named)."""
    environ = os.environ if environ is None else environ
    user = os.getuid() if hasattr(os, "getuid") else (environ.get("USERNAME") or "user")
    base = environ.get("TMPDIR")
    if not base:
        import tempfile  # (only here: it costs ~3 ms of a start)

        base = tempfile.gettempdir()
    return os.path.join(base, f"hermes-results-{user}")


def _private_dir(directory: str) -> None:
    """Create ``directory`` with mode 0700, or check that the one there is ours and private."""
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        info = os.lstat(directory)
    except OSError as exc:
        raise FileIOError(f"cannot create spill directory {directory}: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(info.st_mode) or (hasattr(os, "getuid") and info.st_uid != os.getuid()):
        raise FileIOError(f"refusing spill directory {directory}: not a directory owned by you "
                          "(give --dir to choose another)")
    if info.st_mode & 0o077:
        os.chmod(directory, 0o700)


def safe_filename(tool_use_id: Any) -> str:
    """A file name no id can turn into a path outside the directory (spec D.5)."""
    raw = str(tool_use_id) if tool_use_id else "tool_result"
    stem = _UNSAFE.sub("_", raw).strip("._-")
    changed = stem != raw
    if not stem:
        stem, changed = "tool_result", True
    if changed or len(stem) > _MAX_STEM:
        digest = _hash(raw.encode("utf-8", errors="surrogatepass"))[:12]
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
    ``.replaced/<name>.<sha256 prefix>``; its path is added to ``replaced``. Both steps run
    under an exclusive lock on ``<dir>/.index``, so concurrent writers never lose a result.
    ``private``: the directory must be the user's own, mode 0700 (the default directory).
    """

    def __init__(self, directory: str, *, dry_run: bool = False, private: bool = False):
        self.directory = os.path.abspath(directory)
        self.dry_run = dry_run
        self.private = private
        self.replaced: list[str] = []
        self._pid = None  # the process that opened the descriptors below (reopened after fork)
        self._dir = self._index = self._kept = self._sent = None
        self._recorded: set = set()

    def _open(self) -> None:
        if self._pid == os.getpid():
            return
        if self.private:
            _private_dir(self.directory)
        else:
            os.makedirs(self.directory, exist_ok=True)
        self._dir = os.open(self.directory, os.O_RDONLY | _CLOEXEC | getattr(os, "O_DIRECTORY", 0))
        self._index = _open_nofollow(INDEX, os.O_RDWR | os.O_CREAT | os.O_APPEND, self._dir, self.directory)
        self._kept, self._sent, self._recorded, self._pid = None, None, set(), os.getpid()

    def __del__(self) -> None:
        if self._pid == os.getpid():
            for fd in (self._dir, self._index, self._kept, self._sent):
                if fd is not None:
                    try:
                        os.close(fd)
                    except OSError:
                        pass

    def write(self, tool_use_id: Any, content: str, preview_size: int = PREVIEW_SIZE) -> tuple[str, str]:
        """Spill ``content`` under the name of ``tool_use_id``: ``(path, block)``."""
        import fcntl

        data = content.encode("utf-8", errors="surrogatepass")
        name = safe_filename(tool_use_id)
        path = os.path.join(self.directory, name)
        block = persisted_block(content, path, preview_size)
        if self.dry_run:
            old = _read_at(name, None, path, self.directory)
            if old is not None and old != data:
                self.replaced.append(path)
            return path, block
        try:
            self._open()
            fcntl.flock(self._index, fcntl.LOCK_EX)
            try:
                old = _read_at(name, self._dir, path)
                if old != data:
                    if old is not None:
                        self.replaced.append(path)
                        self._keep(name, old)
                    _put(name, data, self._dir)
                self._record(block, data)
            finally:
                fcntl.flock(self._index, fcntl.LOCK_UN)
        except OSError as exc:
            raise FileIOError(f"cannot write spill file {path}: {exc.strerror or exc}") from None
        return path, block

    def keep_document(self, sent: bytes, before: bytes) -> str:
        """Keep ``before`` (a transcript as spill made it) for the one the send path made of it
        (``sent``: what is written, which merged or dropped messages), so :func:`restore` gives
        the original back: ``.sent/<sha256(before)>``, and the line ``d sha256(sent)
        sha256(before)`` in the index. Its path."""
        import fcntl

        digest = _hash(before)
        path = os.path.join(self.directory, SENT_DIR, digest)
        try:
            self._open()
            fcntl.flock(self._index, fcntl.LOCK_EX)
            try:
                if self._sent is None:
                    try:
                        os.mkdir(SENT_DIR, 0o700, dir_fd=self._dir)
                    except FileExistsError:
                        pass
                    self._sent = _open_nofollow(SENT_DIR, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0),
                                                self._dir, os.path.dirname(path))
                if _read_at(digest, self._sent, path) != before:
                    _put(digest, before, self._sent)
                line = f"d {_hash(sent)} {digest}\n"
                if line not in self._recorded:
                    os.write(self._index, line.encode("ascii"))
                    self._recorded.add(line)
            finally:
                fcntl.flock(self._index, fcntl.LOCK_UN)
        except OSError as exc:
            raise FileIOError(f"cannot write spill file {path}: {exc.strerror or exc}") from None
        return path

    def _keep(self, name: str, old: bytes) -> None:
        if self._kept is None:
            try:
                os.mkdir(REPLACED_DIR, 0o700, dir_fd=self._dir)
            except FileExistsError:
                pass
            where = os.path.join(self.directory, REPLACED_DIR)
            self._kept = _open_nofollow(REPLACED_DIR, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0),
                                        self._dir, where)
        kept = f"{name}.{_hash(old)[:16]}"
        if _read_at(kept, self._kept, os.path.join(self.directory, REPLACED_DIR, kept)) is None:
            _put(kept, old, self._kept)

    def _record(self, block: str, data: bytes) -> None:
        line = f"{_hash(block.encode('utf-8', 'surrogatepass'))} {_hash(data)}\n"
        if line not in self._recorded:
            os.write(self._index, line.encode("ascii"))
            self._recorded.add(line)


def _hash(data: bytes) -> str:
    import hashlib  # (a spill that writes nothing does not load it)

    return hashlib.sha256(data).hexdigest()


def _open_nofollow(name: str, flags: int, dir_fd: int | None, path: str) -> int:
    """``os.open`` of ``name`` that refuses a symlink (exit 5, saying so)."""
    try:
        return os.open(name, flags | _NOFOLLOW | _CLOEXEC, 0o600, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK) or (exc.errno == errno.ENOTDIR and os.path.islink(path)):
            raise FileIOError(f"refusing to follow the symlink {path} in the spill directory") from None
        raise


def _open_existing(name: str, flags: int, dir_fd: int | None, path: str) -> int | None:
    """:func:`_open_nofollow`, or None when there is no such file; other errors are exit 5."""
    try:
        return _open_nofollow(name, flags, dir_fd, path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise FileIOError(f"cannot read {path}: {exc.strerror or exc}") from None


def _read_at(name: str, dir_fd: int | None, path: str, directory: str | None = None) -> bytes | None:
    """The bytes of a regular file ``name`` (in ``dir_fd``, or ``directory``), None when absent."""
    # O_NONBLOCK: a planted FIFO is refused below instead of blocking the open
    fd = _open_existing(name if directory is None else os.path.join(directory, name),
                        os.O_RDONLY | getattr(os, "O_NONBLOCK", 0), dir_fd, path)
    if fd is None:
        return None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise FileIOError(f"refusing {path}: not a regular file")
        return handle.read()


def _put(name: str, data: bytes, dir_fd: int) -> None:
    """Write ``name`` in ``dir_fd`` atomically (a new temp file, then rename), mode 0600."""
    tmp = f".hermesctx-{os.urandom(6).hex()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), 0o600)
            handle.write(data)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except OSError:
            pass
        raise


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
    path, block = writer.write(file_id, content, budget.preview_size)
    report["files"].append(path)
    return block


def spill(doc: Any, *, directory: str | None = None, budget: Budget = Budget(),
          dry_run: bool = False, writer: Writer | None = None) -> tuple[Any, dict]:
    """The ``spill`` stage on a document: ``(new_doc, report)``; files are written as it goes."""
    messages = messages_of(doc)
    check_messages(messages)
    writer = writer or Writer(directory or default_dir(), dry_run=dry_run, private=directory is None)
    new, report = spill_messages(messages, writer, budget)
    report["dir"] = writer.directory
    return with_messages(doc, new), report


# --- restore ------------------------------------------------------------------------------

def _restore_text(text: Any, directory: str, index: _Index, missing: list) -> Any:
    if not isinstance(text, str) or not text.startswith(OPEN_TAG) or not text.endswith(CLOSE_TAG):
        return text
    match = _SAVED_TO.search(text)
    if not match:
        return text
    path = match.group(1)
    name = os.path.basename(path)
    if not name or os.path.realpath(os.path.dirname(path)) != os.path.realpath(directory):
        missing.append(f"{path} (outside the spill directory {directory})")
        return text
    contents = index.get(_hash(text.encode("utf-8", "surrogatepass")))
    if not contents:
        missing.append(f"{path} (no spill of this block is recorded in {os.path.join(directory, INDEX)})")
        return text
    if len(contents) > 1:
        missing.append(f"{path} ({len(contents)} different results made this same block)")
        return text
    (digest,) = contents
    data = present = _read_at(name, None, path, directory)
    if data is None or _hash(data) != digest:
        data = index.replaced(f"{name}.{digest[:16]}")
    if data is not None and _hash(data) == digest:
        return data.decode("utf-8", errors="surrogatepass")
    missing.append(path if present is None else f"{path} (holds another result)")
    return text


class _Index:
    """``<directory>/.index`` read once, on the first block: ``get(sha256(block))`` gives the
    set of content hashes recorded for it; ``replaced(name)`` reads ``.replaced/name``."""

    def __init__(self, directory: str):
        self.directory = directory
        self._entries: dict | None = None

    def get(self, block: str) -> set | None:
        if self._entries is None:
            self._entries = _load_index(self.directory)
        return self._entries.get(block)

    def document(self, doc: Any) -> Any:
        """The transcript spill made, which the send path changed into ``doc`` (as it was
        kept), or None."""
        if self._entries is None:
            self._entries = _load_index(self.directory)
        if DOCUMENTS not in self._entries:
            return None
        from hermesctx import jsonio

        contents = self._entries.get(_hash(jsonio.dumps(doc)))
        if not contents or len(contents) != 1:
            return None
        (digest,) = contents
        data = self.replaced(digest, SENT_DIR)
        return jsonio.loads(data) if data is not None and _hash(data) == digest else None

    def replaced(self, name: str, under: str = REPLACED_DIR) -> bytes | None:
        where = os.path.join(self.directory, under)
        fd = _open_existing(where, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0), None, where)
        if fd is None:
            return None
        try:
            return _read_at(name, fd, os.path.join(where, name))
        finally:
            os.close(fd)


DOCUMENTS = "documents"  # in _load_index's entries: whether any transcript was kept (no hash is this)
_INDEXES: dict = {}  # (directory, device, inode) -> (bytes read, entries): an index only grows


def _load_index(directory: str) -> dict:
    """``{sha256(block): {sha256(content), ...}}`` from ``<directory>/.index`` (empty if none)."""
    path = os.path.join(directory, INDEX)
    fd = _open_existing(path, os.O_RDONLY, None, path)
    if fd is None:
        return {}
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        key = (directory, info.st_dev, info.st_ino)
        done, entries = _INDEXES.get(key, (0, {}))
        if info.st_size < done:
            done, entries = 0, {}  # not the index read before
        handle.seek(done)
        data = handle.read()
    data = data[:data.rfind(b"\n") + 1]  # a line being appended right now is read next time
    for line in data.decode("ascii", errors="replace").splitlines():
        block, _, content = line.partition(" ")
        if block == "d":  # a transcript the send path changed (Writer.keep_document)
            block, _, content = content.partition(" ")
            entries[DOCUMENTS] = True
        if len(block) == 64 and len(content) == 64:
            entries.setdefault(block, set()).add(content)
    _INDEXES[key] = (done + len(data), entries)
    return entries


def restore(doc: Any, *, directory: str | None = None) -> tuple[Any, dict]:
    """Put spilled results back from their files (files outside ``directory`` are not read)."""
    directory = os.path.abspath(directory or default_dir())
    messages = messages_of(doc)
    check_messages(messages)
    index = _Index(directory)
    missing: list[str] = []
    out = []
    restored = 0
    kept = index.document(doc)
    if kept is not None:  # the send path changed it: the transcript as spill made it
        doc, messages = kept, messages_of(kept)
    for msg in messages:
        content = msg.get("content")
        if msg.get("role") == "tool" and isinstance(content, str):
            new = _restore_text(content, directory, index, missing)
            if new is not content:
                msg = {**msg, "content": new}
                restored += 1
        elif isinstance(content, list):
            blocks = None
            for j, block in enumerate(content):
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    text = _text(block, True)
                    new = _restore_text(text, directory, index, missing)
                    if new is not text:
                        blocks = blocks or list(content)
                        blocks[j] = _with_text(block, new)
                        restored += 1
            if blocks is not None:
                msg = {**msg, "content": blocks}
        out.append(msg)
    report = {"restored": restored, "missing": missing}
    if kept is not None:
        report["as_is"] = True  # (written as it was read: the send path would change it again)
    return with_messages(doc, out), report


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
            + (f"; replaced {_n(len(replaced), 'file')} of the same name" if replaced else "")
            + ("; the send path changed it (" + ", ".join(f"{what}: {n}" for what, n in report["send_path"].items())
               + "): the original is kept for --restore" if report.get("send_path") else ""))


@record(frozen=True)
class Options(ModelOptions):
    directory: str | None = option(
        flag="--dir", path="dir", key="spill.dir",
        help="Where spilled results go (config spill.dir; default $TMPDIR/hermes-results-UID, "
             "private: created mode 0700, refused if another user owns it).")
    thresholds: tuple = option(
        (), flag="--result-threshold", multiple=True, metavar="[TOOL=]CHARS", aliases=("--threshold",),
        help="Per-result threshold, for every tool or one tool (repeatable; read_file is never "
             "spilled by size alone).")
    turn_budget: int | None = option(
        flag="--turn-budget", kind=int, low=1,
        help="Characters all results of one turn may take (default 200,000, scaled to the model).")
    restore: bool = option(False, flag="--restore", kind=bool,
                           help="Reverse: put spilled results back from their files (only a file whose "
                                "sha256 DIR/.index recorded for that block).")
    dry_run: bool = option(False, flag="--dry-run", kind=bool,
                           help="Report what would be spilled; write no file, output the input.")
    strict: bool = option(False, flag="--strict", kind=bool,
                          help="Refuse (exit 3) a transcript the send path would change (a stray tool "
                               "result dropped, consecutive turns merged); without it the original is "
                               "kept in DIR/.sent for --restore, and the change is counted in the report.")


def build(options: Options, ctx):
    """The stage as a function of one document, ``doc -> (doc, report)``. Thresholds follow
    the model's window when a model or a window was set (flag, environment or config)."""
    settings = ctx.settings_with(flags(options))
    named = options.directory or settings["spill.dir"]
    directory = named or default_dir(ctx.env.environ)
    default, overrides = parse_thresholds(options.thresholds or (), settings["spill.thresholds"])
    if "read_file" in overrides:
        ctx.env.warn("a read_file threshold is ignored: read_file is never spilled by its size alone "
                     "(only by the turn budget)")
    if options.restore:
        return lambda doc: restore(doc, directory=directory)
    dry_run = bool(options.dry_run)
    writer = Writer(directory, dry_run=dry_run, private=not named)
    scaled = any(settings.source(key) != "default" for key in ("model.default", "model.context_length"))

    def explicit(key):  # a config/env value, or None when only the default is there (the window decides)
        return settings[key] if settings.source(key) != "default" else None

    def run(doc):
        budget = budget_for_window(
            ctx.window(settings, doc) if scaled else None, tool_overrides=overrides,
            default_result_size=default if default is not None else explicit("spill.default_threshold"),
            turn_budget=options.turn_budget if options.turn_budget is not None else explicit("spill.turn_budget"))
        new, rep = spill(doc, budget=budget, writer=writer)
        for path in rep["replaced"]:
            ctx.env.warn(f"{'would replace' if dry_run else 'replaced'} {path}: another result has the "
                         "same file name (Hermes replaces it too)")
        if dry_run:
            for path in rep["files"]:
                ctx.env.info(f"would write {path}")
            return doc, rep
        changes = _send_path_changes(new, writer)
        if changes:
            if options.strict:
                raise InputError("the send path would change this transcript (" + "; ".join(
                    f"{what}: {n}" for what, n in changes.items()) + ")",
                    hint="without --strict it is written as a request, and --restore gives the original back")
            rep["send_path"] = changes  # (also warned by the writer, as "wire: ...": -q or not, counted here)
        return new, rep

    return run


def _send_path_changes(new: Any, writer: Writer) -> dict:
    """What the send path changes in ``new`` (a spilled transcript) as it is written
    (:mod:`hermesctx.wire.send`: stray results dropped, turns merged, ...): ``{what: n}``, empty
    when nothing. When something, ``new`` is kept in the directory (:meth:`Writer.keep_document`)
    under the hash of what is written, so :func:`restore` gives it back whole."""
    from hermesctx import jsonio
    from hermesctx.messages import detect_format
    from hermesctx.wire import send

    counts: dict = {}
    sent = send.request(new, detect_format(new), counts)
    if counts:
        writer.keep_document(jsonio.dumps(sent), jsonio.dumps(new))
    return counts


def parse_thresholds(values, configured: dict | None) -> tuple[int | None, dict]:
    """``--result-threshold`` values (``[TOOL=]CHARS``) over the configured per-tool ones:
    ``(default for every tool or None, {tool: chars})``."""
    overrides = {str(k): int(v) for k, v in (configured or {}).items()}
    default = None
    for value in values:
        tool, _, chars = value.rpartition("=")
        try:
            number = int(chars.replace(",", "").replace("_", ""))
        except ValueError:
            raise UsageError(f"--result-threshold (--threshold): expected [TOOL=]CHARS, got {value!r}") from None
        if number < 0:
            raise UsageError("--result-threshold (--threshold): thresholds must be >= 0")
        if tool:
            overrides[tool] = number
        else:
            default = number
    return default, overrides
