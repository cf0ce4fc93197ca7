"""What happened in a stretch of turns, as ledgers (issue 18): one pass over the messages.

Every agent's tools map onto one vocabulary (read / write / create / delete / run / search / todo /
delegate / other); commands written in the text (SWE-agent and mini-swe-agent fenced blocks, with
the ``<returncode>`` reply) count as runs. A result is paired with its call inside the call's
group (the tool messages right after the assistant message), by id and else by position, so a
transcript that reuses ids does not mix outcomes up. From the calls come

* a file ledger (path, reads, edits, the last change as a one-line diff, created/deleted),
* a command ledger (deduplicated: runs, first failure, last outcome),
* an error ledger, built only from failing calls, resolved when the same command later succeeds,
* the user asks verbatim (injected text such as task notifications, skill preambles and
  environment blocks is recognised and left out; a previous agent's compaction summary becomes a
  previous summary, not an ask), decisions, todo items, URLs, test results and the next step.

Only plain dicts and strings; nothing here knows about the summary's layout.
"""

from __future__ import annotations

from hermesctx import lazyre
from hermesctx.jsonio import loads_like_json
from hermesctx.messages import calls_of
from hermesctx.record import field, record
from hermesctx.redact import redact
from hermesctx.summary.prompt import is_real_user_message, strip_think_blocks, strip_think_tags
from hermesctx.summary.text import is_summary_content, strip_summary_prefix, text_view

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from typing import Any

READ, WRITE, CREATE, DELETE, RUN, SEARCH, TODO, DELEGATE, OTHER = (
    "read", "write", "create", "delete", "run", "search", "todo", "delegate", "other")

_VOCABULARY = {
    READ: ("read_file", "read", "view", "open", "goto", "scroll_up", "scroll_down", "notebookread", "cat",
           "view_file", "fileread", "read_text_file"),
    WRITE: ("patch", "edit", "multiedit", "notebookedit", "apply_patch", "insert", "edit_file", "str_replace",
            "replace_in_file", "fileedit", "edit_notebook", "search_replace"),
    CREATE: ("write_file", "write", "create", "create_file", "filewrite", "write_to_file"),
    DELETE: ("delete_file", "remove_file", "delete"),
    RUN: ("terminal", "bash", "shell", "shell_command", "exec_command", "execute_code", "execute_bash", "run",
          "cmd_run", "python", "local_shell", "container.exec", "write_stdin", "run_command", "execute_command",
          "cmdrun", "ipython", "execute_ipython_cell"),
    SEARCH: ("search_files", "grep", "glob", "ls", "web_search", "websearch", "webfetch", "web_extract", "find_file",
             "search_dir", "search_file", "find", "list_files", "list_dir", "codebase_search", "browser_navigate",
             "fetch"),
    TODO: ("todo", "todowrite", "todoread", "update_plan", "task_tracker"),
    DELEGATE: ("delegate_task", "task", "agent", "spawn_agent", "delegate"),
}
_KIND = {name: kind for kind, names in _VOCABULARY.items() for name in names}
_EDITOR_COMMANDS = {"view": READ, "create": CREATE, "str_replace": WRITE, "insert": WRITE, "undo_edit": WRITE,
                    "write": CREATE, "edit": WRITE}
_PATH_KEYS = ("path", "file_path", "filepath", "filename", "file", "notebook_path", "target_file")
_COMMAND_KEYS = ("command", "cmd", "code", "script", "input", "chars")
_QUERY_KEYS = ("pattern", "query", "url", "urls", "glob", "regex", "description", "goal", "prompt")

_FAIL_PATTERNS = (
    lazyre.compile(r"<returncode>\s*(-?\d+)\s*</returncode>"),
    lazyre.compile(r"(?:Process exited with code|Exit code:?|exit code:?|exit status:?)\s*(-?\d+)"),
    lazyre.compile(r'"exit_code"\s*:\s*(-?\d+)'),
)
_FAIL_TEXT = lazyre.compile(r"<tool_use_error>|verification failed|^Error:|^ERROR:|command not found|"
                        r"No such file or directory|Traceback \(most recent call last\)|^error\b", lazyre.M)
_ERROR_LINE = lazyre.compile(r"\b(error|exception|timed out|timeout|fatal|denied|not found|no such file|cannot|could not|"
                         r"unable|panic|assert(?:ion)?|expected|failed to|missing|undefined|refused)|\w+Error\b", lazyre.I)
# the key line of a failure, strongest first: an exception line, a compiler / patch / test error
_KEY_ERROR_LINE = lazyre.compile(r"^(?:\w+\.)*\w*(?:Error|Exception|Exit|Interrupt)\b\s*:|^E\s{2,}\S|^FAILED\b|^ERROR \S+ - |"
                             r"\berror(?:\[\w+\])?:|^fatal:|Failed to find|^npm ERR!|\bpanicked at\b|"
                             r"\b(?:timed out|Timeout)\b", lazyre.I)
_WEAK_ERROR_LINE = lazyre.compile(r"\b(failed|failure|invalid|traceback)\b", lazyre.I)
_NOISE_LINE = lazyre.compile(r"^(Command:|Chunk ID:|Wall time:|Process exited|Original token count:|Output:|"
                         r"Exit code|<returncode>|</?output>|\[\.\.\. omitted|Total output lines:)", lazyre.I)
# commands that only show what is there: what they print is content (values), not an outcome
READ_ONLY = lazyre.compile(r"^(?:cd \S+ &&\s*)?(?:sed -n|cat(?!\s[^|;&]*>)|head|tail|less|ls|ll|tree|grep|rg|ag|find|fd|"
                           r"wc|nl|file|stat|pwd|echo|which|type|git (?:show|diff|status|log|branch|grep|blame|ls-files)|"
                           r"awk|jq|bat|du|env|printenv|Get-Content|Get-ChildItem|Select-String|gc|dir)\b", lazyre.I)
_TAGS = lazyre.compile(r"</?(?:tool_use_error|error|output|stderr)>")
# what a command's output says of its outcome: counts, versions, summaries
_OUTCOME_LINE = lazyre.compile(
    r"\b\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|(?:doc)?tests?|failures?|files? changed|"
    r"insertions?|deletions?|warnings?|problems?|packages?|modules?|rows?|matches|lines?|pages|files?|"
    r"vulnerabilit(?:y|ies))\b|\b\d+ examples?, \d+ failures?|\bRan \d+ tests?\b|\bTests?:\s+\d+|\bTest (?:Suites|Files)\b|"
    r"^OK\b|\bBUILD (?:SUCCESS|FAILED)\b|\bBuild (?:succeeded|failed|complete)|\bfound \d+\b|"
    r"\b(?:Successfully|Compiled|Built|Finished|Done in|Installed|Created|Updated|Deleted)\b|"
    r"\b(?:version|v)\s?\d+\.\d+(?:\.\d+)?\b|\b\d+\.\d+\.\d+\b|\bexit(?:ed)? (?:code|status)\b|"
    r"\btimed? ?out\b|\bTimeout\b", lazyre.I)
# a setting: one `key: value` / `key = value` per line (a list item's or a JSON line's too)
_SETTING = lazyre.compile(r"""^(?:[-*]\s+|\{\s*)?["']?[A-Za-z_][\w.-]{1,40}["']?\s*[:=]\s*\S""")
# one pair of such a line: its value, quoted or up to the next separator
_PAIR = lazyre.compile(r"""["']?[A-Za-z_][\w.-]{1,40}["']?\s*[:=]\s*("[^"\n]{1,60}"|'[^'\n]{1,60}'|[^\s,;}\])]{1,60})""")
_TOKEN = lazyre.compile(r"[\w%-]+(?:\.[\w%-]+)*")  # a word of a value: `1px`, `0.6`, `gpt-4o-mini`, `50%`
_NAME_PUNCT = lazyre.compile(r"\w[-_./:@]\w")  # `gpt-4o-mini`, `pkg.module`, `host:port`
VALUES_KEPT = 3  # settings kept per result
_PLAIN_VALUES = {"true", "false", "null", "none", "string", "number", "object", "array", "default", "undefined",
                 "yes", "no", "nil", "boolean", "self", "this", "return", "const", "function"}
_LINE_NUMBER = lazyre.compile(r"^\s*\d+(?:→|\t|:(?=\S))\s*|^[\w./-]+:\d+:")
_TESTS = lazyre.compile(r"\b\d+ (?:passed|failed)\b[^\n\"=]*|\b\d+ tests?, \d+ failures?\b[^\n\"=]*", lazyre.I)
_URL = lazyre.compile(r"https?://[^\s`'\"<>)\]]+")
_PATH = lazyre.compile(r"(?<![\w/.:\[\]()-])(?:~/|/|\./)?(?:[\w.@\[\]()-]+/)+[\w.@\[\]()-]+\.\w{1,8}\b"
                   r"|(?<![\w/.-])[\w-]+\.(?:py|js|ts|tsx|jsx|go|rs|md|json|ya?ml|toml|txt|sh|c|h|cpp|java|rb|"
                   r"ipynb|css|html|sql|cfg|ini|lock)\b")
_PATCH_FILE = lazyre.compile(r"^\*\*\* (Update|Add|Delete) File: (.+)$", lazyre.M)
_FENCE = lazyre.compile(r"```[\w-]*\n(.*?)```", lazyre.S)
_DECISION = lazyre.compile(r"\b(I(?:['’]ll| will) use|decided|decide to|going with|instead of|chose|choose|switch(?:ed)? to|"
                       r"the (?:root )?cause|the fix (?:is|was)|because|so that|rather than|opted|the (?:real )?"
                       r"(?:issue|problem|bug|culprit) (?:is|was)|this means|which means|turns out|caused by|"
                       r"the reason|fails? (?:because|since|when)|due to|requires?|should be|needs? to be|"
                       r"(?:a |the )?(?:different|another|better) approach|since|expects?|so (?:I['’]ll|I will|we)|the solution|"
                       r"which is why|that['’]s why|(?:won['’]t|doesn['’]t|didn['’]t|does not|did not) work)\b",
                       lazyre.I)
_CONSTRAINT = lazyre.compile(r"\b(always|never|don['’]?t|do not|must|should|shouldn['’]?t|please use|make sure|ensure|only|"
                         r"prefer|avoid|keep|without|instead|not allowed|no need|at least|at most)\b", lazyre.I)
CONSTRAINTS_PER_ASK = 5  # a pasted spec is not twenty constraints: the first ones of each ask
_NEXT = lazyre.compile(r"\b(next|I(?:['’]ll| will)|let me|let['’]s|now I|going to|then I|remaining|still need|need to)\b",
                      lazyre.I)
_SENTENCE = lazyre.compile(r"(?<=[.!?])\s+|\n+")
_INJECTED = lazyre.compile(
    r"^\s*(?:<(?:task-notification|command-name|command-message|command-args|local-command-stdout|"
    r"local-command-stderr|system-reminder|user_instructions|environment_context|user_shell_command|"
    r"turn_aborted|subagent_notification|INSTRUCTIONS)\b|Caveat: The messages below were generated|"
    r"Base directory for this skill:|# AGENTS\.md instructions|\[Request interrupted by user|"
    r"<returncode>|OBSERVATION:|Observation:|Tool result|\[SYSTEM|<tool_response>)", lazyre.I)
_FOREIGN_SUMMARY = lazyre.compile(
    r"^\s*(?:This session is being continued from a previous conversation|"
    r"Another language model started to solve this problem|"
    r"Summary of the conversation so far|<summary>)", lazyre.I)


# console lines a reader kept as user text (formats.aider): what the tool printed, up to the blank
# line that ends them; what follows is the user's own prompt
_CONSOLE = lazyre.compile(r"^\[aider\]\n.*?(?:\n\s*\n|\Z)", lazyre.S)


def one_line(text: Any, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def tool_kind(name: str, args: dict) -> str:
    low = name.lower().rsplit("__", 1)[-1]  # mcp__server__tool
    if low in ("str_replace_editor", "str_replace_based_edit_tool", "text_editor", "editor", "file_editor"):
        return _EDITOR_COMMANDS.get(str(args.get("command", "")).lower(), WRITE)
    return _KIND.get(low, OTHER)


def _args(raw: Any) -> dict:
    if isinstance(raw, dict):
        return raw
    try:
        value = loads_like_json(raw) if isinstance(raw, str) and raw else {}
    except ValueError:
        return {"input": raw} if isinstance(raw, str) else {}
    return value if isinstance(value, dict) else {}


def _command(args: dict) -> str:
    for key in _COMMAND_KEYS:
        value = args.get(key)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            if len(value) >= 3 and value[0].endswith("sh") and value[1] in ("-lc", "-c"):
                value = value[2]
            else:
                value = " ".join(value)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def _first(args: dict, keys: tuple) -> str:
    for key in keys:
        value = args.get(key)
        if isinstance(value, list) and value:
            value = value[0]
        if isinstance(value, (str, int, float)) and str(value).strip():
            return str(value).strip()
    return ""


def exit_code(result: str) -> int | None:
    for pattern in _FAIL_PATTERNS:
        found = pattern.search(result[:4000])
        if found:
            return int(found.group(1))
    return None


def failed(result: str, msg: dict | None = None) -> bool:
    if msg is not None and (msg.get("is_error") is True or msg.get("status") == "error"):
        return True
    code = exit_code(result)
    if code is not None:
        return code != 0
    return bool(_FAIL_TEXT.search(result[:2000]))


def plain(result: str) -> str:
    """A JSON tool result's text fields (output, stderr, error, ...) as lines; other text as is."""
    if result[:1] == "{":
        try:
            value = loads_like_json(result)
        except ValueError:
            value = None
        if isinstance(value, dict):
            texts = [value[k] for k in ("error", "stderr", "output", "stdout", "content", "message", "result")
                     if isinstance(value.get(k), str) and value[k].strip()]
            if texts:
                return "\n".join(texts)
    return result.replace("\\n", "\n")


def _lines(result: str) -> list[str]:
    """A result's meaningful lines: its text fields, tags and wrapper lines (exit code, wall time) left out."""
    return [clean for clean, _ in _tagged_lines(result)]


def _tagged_lines(result: str) -> list[tuple[str, str]]:
    """Each meaningful line as ``(its text, tags left out; the line verbatim)``."""
    out = []
    for line in plain(result).splitlines():
        verbatim = line.strip()
        clean = _TAGS.sub("", verbatim).strip() if "<" in verbatim else verbatim
        if clean and not _NOISE_LINE.match(clean):
            out.append((clean, verbatim))
    return out


def error_line(result: str) -> str:
    """The key line of a failed result, verbatim (``<tool_use_error>`` and all): the last exception,
    compiler, test or patch error line, else the last line that names an error, else the first line."""
    lines = _tagged_lines(result)
    for pattern in (_KEY_ERROR_LINE, _ERROR_LINE, _WEAK_ERROR_LINE):
        hit = next((verbatim for clean, verbatim in reversed(lines) if pattern.search(clean)), "")
        if hit:
            return hit
    return lines[0][1] if lines else ""


def outcome_lines(result: str, limit: int = 3) -> list[str]:
    """What a command's output says of its outcome (test counts, files changed, versions, "Successfully
    ..."), the last ``limit`` such lines in their order."""
    found = [ln for ln in _lines(result[-20000:]) if len(ln) <= 300 and _OUTCOME_LINE.search(ln)]
    return list(dict.fromkeys(found[-limit:]))


ADDED_CHARS = 1200  # at most this much of a change's added text is kept (whole when shorter)
OUTCOMES_KEPT = 4  # distinct outcome lines kept per command, over its runs
_TRIVIAL = lazyre.compile(r"^[\s{}()\[\];,.:'\"`<>/*#=+-]*$")


def added_lines(old: str, new: str) -> list[str]:
    """The distinctive lines of ``new``: those not in ``old`` (never a prefix they share), trivial lines
    (brackets, punctuation) left out, at most ``ADDED_CHARS`` characters in all."""
    before = {ln.strip() for ln in old.splitlines()}
    lines = []
    for line in new.splitlines():
        text = line.strip()
        if text and text not in before and not _TRIVIAL.match(text):
            before.add(text)
            lines.append(text)
    if sum(len(x) + 1 for x in lines) <= ADDED_CHARS:
        return lines
    # too much to keep whole: the longest line (the most distinctive), then the first ones, in order
    first = longest(lines)[:ADDED_CHARS]
    kept, size = {first}, len(first)
    for text in lines:
        if text not in kept and size + len(text) + 1 <= ADDED_CHARS:
            kept.add(text)
            size += len(text) + 1
    return [x for x in lines if x in kept]


def _patch_change(patch: str) -> tuple[str, list[str]]:
    """A patch's change as (a one-line description, its added lines)."""
    lines = patch.splitlines()
    minus = "\n".join(ln[1:] for ln in lines if ln.startswith("-") and not ln.startswith("---"))
    plus = "\n".join(ln[1:] for ln in lines if ln.startswith("+") and not ln.startswith("+++"))
    added = added_lines(minus, plus)
    if plus.strip():
        return ("edited" if minus.strip() else "added"), added
    if minus.strip():
        return f"removed `{one_line(minus.splitlines()[0], 110)}`", []
    return "patched", []


@record
class FileEntry:
    path: str
    reads: int = 0
    edits: int = 0
    created: bool = False
    deleted: bool = False
    change: str = ""
    size: str = ""
    last: int = 0  # position of the last touch (recency)
    added: list = field(default_factory=list)  # the distinctive added lines of the last change


@record
class CommandEntry:
    command: str
    runs: int = 0
    first_failure: str = ""
    outcome: str = ""
    ok: bool = True
    last: int = 0
    failure_line: str = ""  # the key line of its first failure
    outcome_lines: list = field(default_factory=list)  # what its last run printed of its outcome
    last_line: str = ""  # what a run with no outcome line printed last


@record
class ErrorEntry:
    key: str  # the command or the call's target
    text: str
    resolved: bool = False
    last: int = 0


@record
class Ledgers:
    files: dict = field(default_factory=dict)
    commands: dict = field(default_factory=dict)
    errors: dict = field(default_factory=dict)
    asks: list = field(default_factory=list)  # (position, verbatim text, answered)
    constraints: list = field(default_factory=list)
    decisions: list = field(default_factory=list)
    reasoned: list = field(default_factory=list)  # decision sentences of reasoning blocks
    todos: dict = field(default_factory=dict)  # text -> status
    delegations: list = field(default_factory=list)
    searches: list = field(default_factory=list)
    urls: list = field(default_factory=list)
    tests: list = field(default_factory=list)
    summaries: list = field(default_factory=list)  # previous summaries found among the turns
    last_assistant: str = ""  # redacted
    next_step: str = ""
    steps: int = 0
    facts: list = field(default_factory=list)  # (position, line): settings read whose value a later turn uses
    tried: list = field(default_factory=list)  # (key, failure lines, what then worked, position)
    pending: dict = field(default_factory=dict)  # key -> the failure lines since its last success
    # every failure's key line and every run's outcome lines as they came, (kind, text): the drop
    # ledger counts them all, where the command ledger keeps the first failure and the latest outcomes
    seen: list = field(default_factory=list)
    printed: dict = field(default_factory=dict)  # outcome line -> the commands that printed it

    def file(self, path: str, step: int) -> FileEntry:
        path = path.strip().strip("`'\"")
        entry = self.files.get(path)
        if entry is None:
            entry = self.files[path] = FileEntry(path)
        entry.last = step
        return entry


def _tried(ledgers: Ledgers, key: str, step: int, failure: str | None = None, worked: str | None = None) -> None:
    """What failed and what then worked, paired: a failure's key line waits under ``key`` (a command
    or a file) until a later success of the same key says what worked."""
    if failure is not None:
        lines = ledgers.pending.setdefault(key, [])
        if failure and failure not in lines:
            lines.append(failure)
    elif key in ledgers.pending:
        lines = ledgers.pending.pop(key)
        if lines and worked:
            ledgers.tried.append((key, lines, worked, step))


def longest(lines: list) -> str | None:
    """The most distinctive of a change's added lines (the longest), None without any."""
    return max(lines, key=len) if lines else None


def _patch_files(text: str, ledgers: Ledgers, step: int, bad: bool = False, failure: str = "") -> bool:
    """The files of an apply_patch text; a patch that failed changed nothing (its files count as
    touched, their last change stays)."""
    found = list(_PATCH_FILE.finditer(text))
    for k, match in enumerate(found):
        body = text[match.end():found[k + 1].start() if k + 1 < len(found) else len(text)]
        entry = ledgers.file(match.group(2), step)
        if bad:
            _tried(ledgers, entry.path, step, failure=failure)
            continue
        op = match.group(1)
        entry.edits += 1
        entry.created |= op == "Add"
        entry.deleted = op == "Delete"
        if op == "Delete":
            entry.change, entry.added = "deleted", []
        else:
            entry.change, entry.added = _patch_change(redact(body[:20000]))
        _tried(ledgers, entry.path, step, worked=longest(entry.added))
    return bool(found)


def _value_lines(ledgers: Ledgers, result: str, step: int, later: dict, limit: int = VALUES_KEPT) -> None:
    """The settings a result shows whose value a later turn uses (the assistant's text or a later call
    names it): lines of ``key: value`` / ``key = value`` pairs (configuration, YAML, env, JSON), a
    value holding a figure or a quoted name (``"timeout": 15000``, ``model = "gpt-4o-mini"``); the
    first ``limit`` such lines of the result, in its order, kept whole."""
    kept = 0
    for line in _lines(result[:30000])[:400]:
        line = _LINE_NUMBER.sub("", line).strip()  # `cat -n`, Read and grep -n prefixes
        if not 6 <= len(line) <= 160 or not _SETTING.match(line):
            continue
        for pair in _PAIR.finditer(line):
            raw = pair.group(1)
            value = raw.strip("\"'`")
            if (len(value) < 3 or value.lower() in _PLAIN_VALUES or "{{" in value or "${" in value
                    or not (any(ch.isdigit() for ch in value) or (raw[:1] in "\"'" and _NAME_PUNCT.search(value)))):
                continue
            words = _TOKEN.findall(value)  # the value itself is used: each of its words later
            if words and all(later.get(w, -1) > step for w in words):
                ledgers.facts.append((step, line))
                kept += 1
                break
        if kept >= limit:
            return


def _record_call(ledgers: Ledgers, name: str, args: dict, result: str, msg: dict | None, step: int,
                 later: dict | None = None) -> None:
    kind = tool_kind(name, args)
    path = _first(args, _PATH_KEYS)
    bad = failed(result, msg) if (result or msg) else False
    clean: str | None = None

    def redacted() -> str:  # each tool output is redacted once, and only when something is taken from it
        nonlocal clean
        if clean is None:
            clean = redact(result)
        return clean

    def failure() -> str:  # the key line of this failed call
        return one_line(error_line(redacted()), 300)

    if bad and result:
        ledgers.seen.append(("error", failure()))

    if kind in (READ, WRITE, CREATE, DELETE) and path:
        entry = ledgers.file(path, step)
        if kind == READ:
            entry.reads += 1
            if not bad and result:
                entry.size = f"{result.count(chr(10)) + 1} lines"
        elif not bad:  # a failed edit changed nothing: the last change stays the last successful one
            entry.edits += 1
            entry.created |= kind == CREATE
            entry.deleted = kind == DELETE
            _record_change(entry, args, kind)
            _tried(ledgers, entry.path, step, worked=longest(entry.added))
        else:
            _tried(ledgers, entry.path, step, failure=failure())
    elif kind == WRITE:  # apply_patch and the like: the files are in the patch
        _patch_files(_command(args), ledgers, step, bad, failure() if bad else "")
    elif kind == RUN:
        command = _command(args)
        if command and ("*** Begin Patch" in command
                        and _patch_files(command, ledgers, step, bad, failure() if bad else "")):
            command = "apply_patch"
        if command:
            _record_command(ledgers, one_line(redact(command), 160), bad, result, redacted, step)
            if command != "apply_patch":
                for p in _PATH.findall(command[:2000]):
                    if not p.startswith("http"):
                        ledgers.file(p, step).reads += 1
    elif kind == SEARCH:
        query = _first(args, _QUERY_KEYS) or path
        if query:
            ledgers.searches.append(f"{name} {one_line(redact(query), 100)}")
    elif kind == TODO:
        items = args.get("todos", args.get("plan", args.get("items")))
        if isinstance(items, list):
            ledgers.todos = {}
            for item in items:
                if isinstance(item, dict):
                    text = item.get("content") or item.get("step") or item.get("title") or ""
                    if text:
                        ledgers.todos[one_line(redact(str(text)), 160)] = str(item.get("status") or "pending")
    elif kind == DELEGATE:
        what = _first(args, ("description", "goal", "prompt", "task"))
        ledgers.delegations.append(one_line(redact(what), 160) + (f" — {one_line(redacted(), 160)}" if result else ""))
    if result and later and not bad and kind in (READ, RUN, SEARCH, OTHER):
        _value_lines(ledgers, redacted(), step, later)
    if kind != RUN:  # a failing call of any other tool: its error, keyed by the call and its target
        key = f"{name} {one_line(path or _first(args, _QUERY_KEYS) or _command(args), 100)}".strip()
        if bad:
            ledgers.errors[key] = ErrorEntry(key, one_line(error_line(redacted()), 220), last=step)
        elif key in ledgers.errors:
            ledgers.errors[key].resolved = True


def _record_change(entry: FileEntry, args: dict, kind: str) -> None:
    """A successful edit's change: a one-line description and the distinctive added lines."""
    old, new = args.get("old_string", args.get("old_str")), args.get("new_string", args.get("new_str"))
    edits = args.get("edits")
    if isinstance(edits, list) and edits and all(isinstance(e, dict) for e in edits):
        pairs = [(e.get("old_string"), e.get("new_string")) for e in edits]
        pairs = [(o, n) for o, n in pairs if isinstance(o, str) and isinstance(n, str)]
        if pairs:
            old, new = "\n".join(o for o, _ in pairs), "\n".join(n for _, n in pairs)
    content = args.get("content", args.get("file_text", args.get("new_source")))
    if isinstance(old, str) and isinstance(new, str):
        entry.added = added_lines(redact(old), redact(new))
        entry.change = "edited" if entry.added else f"removed `{one_line(redact(old), 110)}`"
    elif isinstance(content, str):
        lines = content.count("\n") + 1
        entry.change = f"wrote {lines} lines"
        entry.size = f"{lines} lines"
        entry.added = added_lines("", redact(content[:20000]))
    elif isinstance(args.get("patch"), str):
        entry.change, entry.added = _patch_change(redact(args["patch"][:20000]))
    elif kind == DELETE:
        entry.change, entry.added = "deleted", []


def _record_command(ledgers: Ledgers, command: str, bad: bool, result: str, redacted, step: int) -> None:
    entry = ledgers.commands.get(command)
    if entry is None:
        entry = ledgers.commands[command] = CommandEntry(command)
    entry.runs += 1
    entry.last = step
    code = exit_code(result) if result else None
    tests = list(_TESTS.finditer(plain(result[-6000:]))) if result and ("passed" in result or "fail" in result) else []
    test_line = one_line(redact(tests[-1].group(0)), 90) if tests else ""
    if test_line:
        ledgers.tests.append(test_line)
    said = [one_line(x, 300) for x in outcome_lines(redacted())] if result and not READ_ONLY.match(command) else []
    ledgers.seen += [("outcome", x) for x in said]
    for line in said:
        ledgers.printed.setdefault(line, set()).add(command)
    shown = said
    if not said and not bad and result and not READ_ONLY.match(command):
        # no outcome line: its last line says what it did (a command is never listed without its output)
        shown = [one_line(x, 120) for x in _lines(redacted())[-1:] if not _TRIVIAL.match(x)]
        entry.last_line = shown[0] if shown else entry.last_line
    # each run's outcome (a timing, a count; a failed run's counts too) may differ: the distinct ones, the latest last
    entry.outcome_lines = list(dict.fromkeys([*entry.outcome_lines, *said]))[-OUTCOMES_KEPT:]
    if bad:
        line = one_line(error_line(redacted()), 300)
        outcome = f"failed (exit {code})" if code is not None else "failed"
        entry.first_failure = entry.first_failure or outcome
        entry.failure_line = entry.failure_line or line
        ledgers.errors[command] = ErrorEntry(command, f"exit {code}: {line}" if code is not None else line, last=step)
        if command != "apply_patch":  # (a patch's files wait for their own success)
            _tried(ledgers, command, step, failure=line)
    else:
        outcome = f"exit {code}" if code is not None else ("ok" if result else "no output")
        if command in ledgers.pending:  # what worked: its outcome, else what it printed last (a read too)
            worked = said or [one_line(x, 300) for x in _lines(redacted())[-1:]]
            _tried(ledgers, command, step, worked=worked[-1] if worked else None)
        if command in ledgers.errors:
            ledgers.errors[command].resolved = True
    entry.outcome, entry.ok = outcome + (f"; {test_line}" if test_line else ""), not bad


_BULLET = lazyre.compile(r"^\s*(?:[-*•>]|\d+[.)])\s+")


def _sentences(text: str, pattern: re.Pattern, limit: int = 240) -> list:
    return [one_line(_BULLET.sub("", s), limit) for s in _SENTENCE.split(text)
            if s and "?" not in s and pattern.search(s) and len(s) > 12]


def injected(text: str) -> bool:
    return bool(_INJECTED.match(text))


def foreign_summary(text: str) -> bool:
    return bool(_FOREIGN_SUMMARY.match(text)) or is_summary_content(text)


def extract(turns: list, after: list = ()) -> Ledgers:
    """The ledgers of ``turns``: one pass, linear in the messages (dicts and sets, no list scans).
    ``after``: the turns that follow them (kept after a compacted region), whose uses of a value
    count as later uses too."""
    led = Ledgers()
    n = len(turns)
    later = _later_uses([*turns, *after])
    i = 0
    pending_text_command: tuple[str, int] | None = None
    while i < n:
        msg = turns[i]
        if not isinstance(msg, dict):
            i += 1
            continue
        role = msg.get("role")
        led.steps = i
        if role == "assistant":
            text = text_view(msg.get("content"))
            visible = strip_think_blocks(text).strip() if text else ""
            calls = [tc for tc in calls_of(msg) if isinstance(tc, dict) and isinstance(tc.get("function"), dict)]
            if visible:
                clean = led.last_assistant = redact(visible)
                led.decisions += _sentences(clean, _DECISION, 400)
                nxt = _sentences(clean, _NEXT, 300)
                if nxt:
                    led.next_step = nxt[-1]
                for url in _URL.findall(clean):
                    led.urls.append(url.rstrip(".,;:"))
                if led.asks and not led.asks[-1][2]:
                    led.asks[-1] = (led.asks[-1][0], led.asks[-1][1], True)
            if text and visible != text.strip():  # the reasoning it hid: its diagnoses too
                led.reasoned += _sentences(redact(strip_think_tags(text)), _DECISION, 400)
            # the call's group: the tool messages right after it
            j = i + 1
            group = []
            while j < n and isinstance(turns[j], dict) and turns[j].get("role") == "tool":
                group.append(turns[j])
                j += 1
            if calls:
                by_id = {}
                for k, res in enumerate(group):
                    rid = res.get("tool_call_id")
                    if isinstance(rid, str) and rid not in by_id:
                        by_id[rid] = k
                used = set()
                for k, tc in enumerate(calls):
                    rid = tc.get("id") or tc.get("call_id")
                    pos = by_id.get(rid) if isinstance(rid, str) else None
                    if pos is None or pos in used:
                        pos = k if k < len(group) and k not in used else None
                    res = group[pos] if pos is not None else None
                    if pos is not None:
                        used.add(pos)
                    result = text_view(res.get("content")) if res is not None else ""
                    fn = tc["function"]
                    _record_call(led, str(fn.get("name") or "unknown"), _args(fn.get("arguments")), result, res, i,
                                 later)
            elif visible:
                blocks = _FENCE.findall(visible)
                if blocks and j < n and turns[j].get("role") in ("user", "tool") and not group:
                    pending_text_command = (blocks[-1].strip(), i)
                elif blocks and group:
                    _record_call(led, "bash", {"command": blocks[-1].strip()},
                                 text_view(group[0].get("content")), group[0], i)
            i = j
            continue
        if role == "user":
            text = text_view(msg.get("content"))
            if pending_text_command is not None and injected(text):  # the in-text command's output
                _record_call(led, "bash", {"command": pending_text_command[0]}, text, None, pending_text_command[1])
                pending_text_command = None
                i += 1
                continue
            pending_text_command = None
            stripped = _CONSOLE.sub("", text, count=1).strip()
            if stripped and foreign_summary(stripped):
                led.summaries.append(strip_summary_prefix(stripped))
            elif stripped and is_real_user_message(msg) and not injected(stripped):
                clean = redact(stripped)
                led.asks.append((i, clean, False))
                led.constraints += _sentences(clean, _CONSTRAINT)[:CONSTRAINTS_PER_ASK]
                for url in _URL.findall(clean):
                    led.urls.append(url.rstrip(".,;:"))
        elif role == "system" and is_summary_content(msg.get("content")):
            led.summaries.append(strip_summary_prefix(text_view(msg.get("content"))))
        i += 1
    _drop_banners(led)
    return led


BANNER_COMMANDS = 5  # a line this many different commands printed, half of those that printed any ...


def _drop_banners(led: Ledgers) -> None:
    """... is what the shell prints before every command (`Now using node v22.20.0 (npm v10.9.3)`,
    a conda or nvm banner), not an outcome: it leaves the commands' outcomes and the drop ledger."""
    if not led.printed:
        return
    printers = len({c for commands in led.printed.values() for c in commands})
    banners = {line for line, commands in led.printed.items()
               if len(commands) >= max(BANNER_COMMANDS, printers / 2)}
    if banners:
        for entry in led.commands.values():
            entry.outcome_lines = [x for x in entry.outcome_lines if x not in banners]
        led.seen = [(kind, text) for kind, text in led.seen if kind != "outcome" or text not in banners]


def _later_uses(turns: list) -> dict:
    """Each word (``_TOKEN``: `1px`, `0.6`, `gpt-4o-mini`) of the assistant's text and calls, with the
    last position that names it: a value read at an earlier position is one a later turn uses."""
    last: dict = {}
    for i, msg in enumerate(turns):
        if not isinstance(msg, dict) or msg.get("role") != "assistant":
            continue
        parts = [text_view(msg.get("content"))]
        for tc in calls_of(msg):
            if isinstance(tc, dict) and isinstance(tc.get("function"), dict):
                arguments = tc["function"].get("arguments")
                parts.append(arguments if isinstance(arguments, str) else str(arguments))
        text = "\n".join(parts)[:50000]
        for value in set(_TOKEN.findall(text)):
            last[value] = i
    return last


def common_root(paths: list) -> str:
    """The longest directory shared by the absolute paths (``""`` when there is none worth naming)."""
    absolute = [p for p in paths if p.startswith("/")]
    if len(absolute) < 2:
        return ""
    parts = [p.split("/")[:-1] for p in absolute]
    root = []
    for column in zip(*parts):
        if len(set(column)) != 1:
            break
        root.append(column[0])
    root_path = "/".join(root)
    return root_path if root_path.count("/") >= 1 else ""
