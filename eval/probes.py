"""What a successor agent needs from a compacted region (issue 28, decision D16), as probes.

Probes are drawn from the ORIGINAL messages of the compacted region ``[start, end)``, from tool
RESULTS, assistant prose and user turns; never from tool-call arguments (paths, commands: every
method keeps those), except the new text a change wrote (``files``: prune cuts long arguments).
Each probe is a short snippet (about 60 characters, whitespace folded) of one fact; it is kept by a
system when it is a (case-sensitive) substring of that system's whole output, folded the same way,
tool-call arguments included.

Categories:

* ``facts``: the key line of each failed tool result (patch / tool errors first, then the last
  exception, compiler or test error line); the outcome lines commands printed (``N passed``,
  ``10 files changed``, versions, timeouts); ``key: value`` pairs read from files or outputs whose
  value a LATER assistant turn mentions (in its prose or its call arguments);
* ``files``: for each file changed in the region, a distinctive added line of its last successful
  change (the ``+`` lines of a patch, ``new_string``, written content; not in the old text);
* ``constraints``: user sentences with a constraint cue (must, never, don't, only, always, ...);
* ``decisions``: assistant sentences with a diagnosis or decision cue (the issue is, because, ...);
* ``tried``: a failure's key line paired with the outcome line of the later success of the same
  command (or of the same file's edit: its added line); kept only when both halves survive;
* ``next``: the open next step: the last assistant sentence of the region saying what comes
  next, else the last user ask.

A probe that also occurs in the original head or tail (outside the region) is dropped: every
system keeps it, it measures nothing. Deterministic, standard library only (plus hermesctx's own
text views).
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass, field

from hermesctx.messages import calls_of
from hermesctx.summary.prompt import is_real_user_message
from hermesctx.summary.text import text_view

CATEGORIES = ("facts", "files", "constraints", "decisions", "tried", "next")
LABELS = {"facts": "facts from tool output", "files": "final file state", "constraints": "constraints",
          "decisions": "decisions", "tried": "tried / worked", "next": "next step"}
SNIPPET = 60  # characters of a probe (folded)
MIN_PROBE = 8  # shorter snippets are not distinctive enough to count

_PATH_KEYS = ("file_path", "path", "filename", "notebook_path", "target_file")
_SHELL_TOOLS = {"bash", "shell", "exec_command", "terminal", "execute_bash", "run_command", "run_terminal_cmd",
                "local_shell", "container.exec", "execute_command", "run", "cmd", "powershell", "command"}
_READ_COMMAND = re.compile(r"^\s*(?:cd [^;&|]+(?:&&|;)\s*)?(cat|sed -n|head|tail|nl|ls|find|rg|grep|git (?:show|diff|log|"
                           r"status|grep)|awk|wc|tree|less|more|stat|file|which|echo|pwd|printf|jq|yq)\b")
_INJECTED = re.compile(r"^\s*(<[a-z_-]+>|Caveat:|Base directory for this skill|# AGENTS\.md|\[Request interrupted|"
                       r"This session is being continued|<returncode>|<user_instructions>|<environment_context>)",
                       re.I)
_WRAPPER = re.compile(r"^(Exit code:? -?\d+|Wall time: .*|Output:|Command: .*|Chunk ID: .*|Process exited with "
                      r"code -?\d+|Original token count: .*|Total output lines: \d+|\[Command finished with exit "
                      r"code -?\d+\]|</?[a-z_-]+>|<returncode>-?\d+</returncode>|Process running with session ID.*)$")
_EXIT = re.compile(r"(?:Exit code:?|Process exited with code|exit code|exited with code|<returncode>|"
                   r"\"exit_code\":)\s*(-?\d+)", re.I)
_FAIL_START = re.compile(r"^\s*(<tool_use_error>|Error:|error:|ERROR:|apply_patch verification failed|"
                         r"Traceback \(most recent|fatal:|Failed to|FAILED)")
_TOOL_FAIL = re.compile(r"Failed to find expected lines|verification failed|String to replace not found|"
                        r"<tool_use_error>|File has not been read yet|No changes to apply|did not match|"
                        r"could not (?:apply|find)", re.I)
_CANCELLED = re.compile(r"Sibling tool call errored|The user doesn't want to proceed|Request interrupted by user")
_LEAD_PATH = re.compile(r"^\S*/\S*?:\s*(?:line \d+:\s*)?")
_ERROR_LINE = re.compile(r"\b\w*(?:Error|Exception)\b|\berror\b|\bERROR\b|\bFAIL(?:ED|URE)?\b|\bfailed\b|\bfatal\b|"
                         r"\bpanic\b|\bassert|\btimed? ?out\b|\bTimeout\b|No such file|not found|denied|[Cc]annot |"
                         r"[Cc]ould not|refused|undefined|unexpected|invalid", re.I)
_OUTCOME = re.compile(
    r"\b\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|warnings?|tests?|examples?|failures?|"
    r"problems?|vulnerabilities|pages|files?|packages?|modules?)\b|\b\d+ files? changed\b|insertions?\(\+\)|"
    r"\bTests?:\s+\d+|\bTest Suites?:|\bBUILD (?:SUCCESS|FAILED)|\bBuild (?:succeeded|failed|complete)|"
    r"\bCompiled (?:successfully|with)|\bcompiled\b.*\bin \d|\bFinished\b.*\bin \d|\bDone in \d|"
    r"\bversion:? v?\d+\.\d+|\bv\d+\.\d+(?:\.\d+)?\b|\b\d+\.\d+\.\d+\b|\btimed? ?out\b|\bTimeout\b|"
    r"\bok\b.*\b\d+ tests?\b|\bSuccessfully (?:installed|built|tagged)|\bp\d\d=\d", re.I)
_KEY_VALUE = re.compile(r"\"?([A-Za-z_][\w.-]{1,40})\"?\s*[:=]\s*(\"[^\"\n]{1,60}\"|'[^'\n]{1,60}'|[^\s,;}\]\)]{1,60})")
_PAIR_LINE = re.compile(r"^[-*]?\s*\"?[A-Za-z_][\w.-]{1,40}\"?\s*[:=]\s*\S.{0,80}?,?$")
_NOT_KEYS = {"output", "command", "chunk", "at", "error", "http", "https", "note", "warning", "info", "debug",
             "step", "file", "line", "see", "example", "e.g", "i.e", "summary", "description", "title", "status"}
_STOP_VALUES = {"true", "false", "null", "none", "yes", "no", "nil", "undefined", "string", "number", "object",
                "array", "boolean", "int", "str", "list", "dict", "self", "this", "return", "const", "function"}
_CONSTRAINT = re.compile(r"\b(must|never|don'?t|do not|does not need|only|always|prefer|avoid|should|shouldn'?t|"
                         r"make sure|ensure|without|keep|not allowed|no need|instead|please do|at least|at most)\b",
                         re.I)
_DECISION = re.compile(r"\b(the (?:issue|problem|bug|cause|reason|fix) (?:is|was)|because|root cause|instead of|"
                       r"so that|caused by|this means|due to|turns out|I'll use|I will use|going with|decided|"
                       r"rather than|the culprit|which is why|that's why|the solution|since|so I'll|so I will|"
                       r"switch(?:ed)? to|(?:won't|doesn't|didn't|does not|did not) work|a different approach)\b", re.I)
_NEXT = re.compile(r"\b(next|I'll|I will|let me|let's|now I|going to|then I|remaining|todo|to do|still need|"
                   r"need to|will now)\b", re.I)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_FENCE = re.compile(r"```[\w+-]*\n(.*?)```", re.S)
_FENCE_ANY = re.compile(r"```.*?```", re.S)
_PATCH_FILE = re.compile(r"^\*\*\* (Update|Add|Delete) File: (.+)$")
_TRIVIAL = re.compile(r"^[\W_]*$|^(?:import|from|export|return|else|end|fi|done|pass|break|continue)\b.{0,12}$")


def fold(text: str) -> str:
    return " ".join(text.split())


def snippet(text: str, size: int = SNIPPET) -> str:
    return fold(text)[:size].rstrip()


def strings(value) -> list[str]:
    """Every string inside a JSON value (keys left out), depth first."""
    out: list[str] = []
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, dict):
            stack.extend(reversed(list(v.values())))
        elif isinstance(v, list):
            stack.extend(reversed(v))
    return out


def _json(text: str):
    s = text.strip()
    if not s or s[0] not in "{[":
        return None
    try:
        return json.loads(s)
    except ValueError:
        return None


def args_of(fn: dict) -> dict:
    raw = fn.get("arguments")
    if isinstance(raw, dict):
        return raw
    value = _json(raw) if isinstance(raw, str) else None
    return value if isinstance(value, dict) else ({"input": raw} if isinstance(raw, str) and raw else {})


def command_of(args: dict) -> str:
    value = args.get("command", args.get("cmd"))
    if isinstance(value, list):
        value = value[2] if len(value) >= 3 and value[1] in ("-lc", "-c") else " ".join(map(str, value))
    return value.strip() if isinstance(value, str) else ""


def message_text(m: dict) -> str:
    """All the text of one message a successor could read: content (and the strings of a JSON
    content), tool-call names, raw arguments and the strings inside them."""
    parts = []
    content = text_view(m.get("content"))
    parts.append(content)
    parsed = _json(content)
    if parsed is not None:
        parts += strings(parsed)
    for c in calls_of(m):
        fn = c.get("function") if isinstance(c, dict) else None
        if not isinstance(fn, dict):
            continue
        parts.append(str(fn.get("name") or ""))
        raw = fn.get("arguments")
        parts.append(raw if isinstance(raw, str) else json.dumps(raw))
        parts += strings(args_of(fn))
    return "\n".join(p for p in parts if p)


def output_text(messages: list) -> str:
    """The folded text a probe is searched in."""
    return fold("\n".join(message_text(m) for m in messages))


def result_body(text: str) -> tuple[str, int | None]:
    """The printed output of a tool result (JSON envelopes opened) and its exit code if it says one."""
    code = None
    obj = _json(text)
    if isinstance(obj, dict):
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else obj
        ec = meta.get("exit_code", meta.get("returncode", meta.get("exitCode")))
        code = ec if isinstance(ec, int) and not isinstance(ec, bool) else None
        out = obj.get("output", obj.get("stdout", obj.get("content")))
        if isinstance(out, str):
            extra = [obj[k] for k in ("stderr", "error") if isinstance(obj.get(k), str) and obj[k].strip()]
            text = "\n".join([out, *extra])
        elif isinstance(obj.get("error"), str):
            text = obj["error"]
            code = code if code is not None else 1
    if code is None:
        found = _EXIT.search(text[:400])
        if found:
            code = int(found.group(1))
    return text, code


def is_failure(body: str, code: int | None) -> bool:
    if _CANCELLED.search(body[:300]):  # a parallel call cancelled, a call the user refused: nothing ran
        return False
    if code not in (None, 0):
        return True
    head = body[:600]
    return bool(_FAIL_START.match(body) or _TOOL_FAIL.search(head))


def _lines(body: str) -> list[str]:
    out = []
    for line in body.splitlines():
        s = line.strip()
        if s and not _WRAPPER.match(s):
            out.append(re.sub(r"^(?:E\s+|>\s+)", "", s))
    return out


def key_line(body: str) -> str | None:
    """The line of a failed result that says what went wrong."""
    lines = _lines(body)
    for s in lines:
        if _TOOL_FAIL.search(s):
            return s
    for s in reversed(lines):
        if len(s) <= 400 and _ERROR_LINE.search(s) and not _OUTCOME_ONLY(s):
            return s
    return lines[-1] if lines else None


def _OUTCOME_ONLY(s: str) -> bool:  # noqa: N802 - a predicate named for the rule it states
    """``1 failed, 11 passed``: a count line (an outcome, not the error itself)."""
    return bool(re.fullmatch(r"[=\s]*(?:\d+ \w+,? ?)+(?:in [\d.]+s)?[=\s]*", s))


def key_values(body: str, limit: int = 20_000) -> list[tuple[str, str]]:
    """``(probe, value)`` of the settings a result shows: a line that is one ``key: value`` /
    ``key = value`` (config, YAML, env, JSON lines), or the pairs of a one-line JSON object; a
    value with a figure in it, or a quoted name with punctuation (``"gpt-4o-mini"``)."""
    out = []
    for line in _lines(body[:limit]):
        if len(line) > 160 or not (line.startswith("{") or _PAIR_LINE.match(line)):
            continue
        for found in _KEY_VALUE.finditer(line):
            key, raw = found.group(1), found.group(2)
            value = raw.strip("\"'")
            if (key.lower() in _NOT_KEYS or len(value) < 3 or value.lower() in _STOP_VALUES
                    or "{{" in value or "${" in value):
                continue
            quoted_name = raw[:1] in "\"'" and re.search(r"[\w][-_./:@][\w]", value)
            if not (re.search(r"\d", value) or quoted_name):
                continue
            out.append((snippet(found.group(0)), value))
            if not line.startswith("{"):
                break
    return out


def outcome_lines(body: str, limit: int = 2) -> list[str]:
    found = [s for s in _lines(body) if len(s) <= 160 and _OUTCOME.search(s)]
    return found[-limit:]


def last_line(body: str) -> str | None:
    lines = [s for s in _lines(body) if len(fold(s)) >= 8]
    return lines[-1] if lines else None


@dataclass
class Action:
    """One tool call and its result (or a fenced command and the ``<returncode>`` turn after it)."""
    index: int  # of the result message
    name: str
    args: dict
    command: str
    body: str
    failed: bool


@dataclass
class Probes:
    items: dict = field(default_factory=lambda: {c: [] for c in CATEGORIES})  # cat -> [(kind, probe or pair)]

    def add(self, category: str, kind: str, probe, seen: set) -> None:
        key = (category, probe)
        if key not in seen:
            seen.add(key)
            self.items[category].append((kind, probe))

    def count(self) -> int:
        return sum(len(v) for v in self.items.values())


def actions(messages: list, start: int, end: int) -> list[Action]:
    calls: dict = {}
    out = []
    for i in range(start, end):
        m = messages[i]
        role = m.get("role")
        if role == "assistant":
            for c in calls_of(m):
                if isinstance(c, dict) and isinstance(c.get("function"), dict):
                    calls[c.get("id")] = c["function"]
            text = text_view(m.get("content"))
            if not m.get("tool_calls") and i + 1 < end:
                nxt = messages[i + 1]
                ntext = text_view(nxt.get("content")) if nxt.get("role") == "user" else ""
                blocks = _FENCE.findall(text)
                if blocks and ntext.lstrip().startswith("<returncode>"):
                    body, code = result_body(ntext)
                    body = re.sub(r"</?output>", "", body)
                    out.append(Action(i + 1, "bash", {"command": blocks[-1]}, blocks[-1].strip(), body,
                                      is_failure(body, code)))
        elif role == "tool":
            fn = calls.get(m.get("tool_call_id"), {})
            args = args_of(fn) if fn else {}
            body, code = result_body(text_view(m.get("content")))
            out.append(Action(i, str(fn.get("name") or ""), args, command_of(args), body, is_failure(body, code)))
    return out


def _is_shell(a: Action) -> bool:
    return bool(a.command) and (a.name.lower() in _SHELL_TOOLS or "command" in a.args or "cmd" in a.args)


def changes(a: Action) -> list[tuple[str, str, str]]:
    """``(path, new text, old text)`` of each file this action changed (what the call asked)."""
    args = a.args
    out = []
    path = next((args[k] for k in _PATH_KEYS if isinstance(args.get(k), str)), None)
    if path:
        if isinstance(args.get("edits"), list):
            edits = [e for e in args["edits"] if isinstance(e, dict)]
            new = "\n".join(str(e.get("new_string", e.get("new_str", ""))) for e in edits)
            old = "\n".join(str(e.get("old_string", e.get("old_str", ""))) for e in edits)
            out.append((path, new, old))
        else:
            for new_key, old_key in (("new_string", "old_string"), ("new_str", "old_str"), ("content", None),
                                     ("file_text", None), ("contents", None), ("code_edit", None)):
                if isinstance(args.get(new_key), str) and (new_key not in ("content", "contents") or
                                                           a.name.lower() not in ("read", "read_file")):
                    old = args.get(old_key) if old_key else ""
                    out.append((path, args[new_key], old if isinstance(old, str) else ""))
                    break
    blob = args.get("input") if isinstance(args.get("input"), str) else a.command
    patch = args.get("patch") if isinstance(args.get("patch"), str) else blob
    if isinstance(patch, str) and "*** Begin Patch" in patch:
        current, new, old = None, [], []
        for line in patch.splitlines() + ["*** End Patch"]:
            head = _PATCH_FILE.match(line)
            if head or line.startswith("*** End Patch"):
                if current:
                    out.append((current, "\n".join(new), "\n".join(old)))
                current, new, old = (head.group(2).strip() if head and head.group(1) != "Delete" else None), [], []
            elif current and line.startswith("+"):
                new.append(line[1:])
            elif current and line.startswith("-"):
                old.append(line[1:])
    return out


def added_line(new: str, old: str) -> str | None:
    """The most distinctive line the change added: the longest non-trivial one not in the old text."""
    before = {fold(s) for s in old.splitlines()}
    best = None
    for line in new.splitlines():
        s = fold(line)
        if len(s) < 12 or s in before or _TRIVIAL.match(s) or sum(ch.isalnum() for ch in s) < 6:
            continue
        if best is None or len(s) > len(best):
            best = s
    return best


def _sentences(text: str) -> list[str]:
    text = _FENCE_ANY.sub("\n", text)
    return [fold(s) for s in _SENTENCE.split(text) if s.strip()]


def _command_key(command: str) -> str:
    return fold(re.sub(r"^\s*cd \S+\s*(?:&&|;)\s*", "", command))


def _is_user_turn(m: dict) -> bool:
    text = text_view(m.get("content"))
    return is_real_user_message(m) and bool(text.strip()) and not _INJECTED.match(text)


def draw(messages: list, start: int, end: int) -> Probes:
    """The probes of the region ``messages[start:end]`` (original, OpenAI messages)."""
    probes, seen = Probes(), set()
    acts = actions(messages, start, end)
    # later mentions: the assistant prose and call arguments after each index, for values
    later: list[tuple[int, str]] = []
    for i in range(start, len(messages)):
        m = messages[i]
        if m.get("role") == "assistant":
            later.append((i, message_text(m)))
    indexes, offsets, blob = [], [], []
    pos = 0
    for i, t in later:
        indexes.append(i)
        offsets.append(pos)
        blob.append(t)
        pos += len(t) + 1
    later_text = "\n".join(blob)

    def mentioned_after(index: int, value: str) -> bool:
        k = bisect.bisect_right(indexes, index)
        if k >= len(offsets):
            return False
        begin = offsets[k]
        k = later_text.find(value, begin)
        while k >= 0:
            before = later_text[k - 1] if k else " "
            after = later_text[k + len(value)] if k + len(value) < len(later_text) else " "
            if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
                return True
            k = later_text.find(value, k + 1)
        return False

    last_change: dict[str, tuple[str, int]] = {}
    failures: list[tuple[Action, str]] = []
    for a in acts:
        shell = _is_shell(a)
        if a.failed:
            line = key_line(a.body)
            if line and len(line) > SNIPPET:  # a long line: what follows its leading path says more
                line = _LEAD_PATH.sub("", line, count=1) or line
            if line and len(snippet(line)) >= MIN_PROBE:
                probes.add("facts", "error", snippet(line), seen)
                failures.append((a, snippet(line)))
        if shell and not _READ_COMMAND.match(a.command):
            for line in outcome_lines(a.body):
                probes.add("facts", "outcome", snippet(line), seen)
        if not a.failed:
            for path, new, old in changes(a):
                line = added_line(new, old)
                if line:
                    last_change[path] = (line, a.index)
        values = 0
        for probe, value in key_values(a.body):
            if values < 3 and mentioned_after(a.index, value):
                probes.add("facts", "value", probe, seen)
                values += 1
    for line, _ in last_change.values():
        probes.add("files", "last change", snippet(line), seen)

    # what failed, and what later worked on the same command or file
    for a, fail in failures:
        later_ok = None
        if _is_shell(a):
            key = _command_key(a.command)
            later_ok = next((b for b in acts if b.index > a.index and not b.failed and _is_shell(b)
                             and _command_key(b.command) == key), None)
            worked = (outcome_lines(later_ok.body, 1) or [last_line(later_ok.body)])[-1] if later_ok else None
        else:
            paths = {p for p, _, _ in changes(a)}
            for b in acts:
                if b.index > a.index and not b.failed and paths & {p for p, _, _ in changes(b)}:
                    later_ok = b
                    break
            worked = next((added_line(n, o) for p, n, o in changes(later_ok) if p in paths), None) \
                if later_ok else None
        if worked and len(snippet(worked)) >= MIN_PROBE:
            probes.add("tried", "failed→worked", (fail, snippet(worked)), seen)

    next_step = None
    for i in range(start, end):
        m = messages[i]
        role = m.get("role")
        text = text_view(m.get("content"))
        if role == "user" and _is_user_turn(m):
            sentences = [s for s in _sentences(text) if len(s) >= 15]
            picked = [s for s in sentences if _CONSTRAINT.search(s)][:5]
            for s in picked:
                probes.add("constraints", "user", snippet(s), seen)
            if sentences:
                next_step = ("ask", sentences[0])
        elif role == "assistant" and text.strip():
            for s in _sentences(text):
                if "?" not in s and len(s) >= 20 and _DECISION.search(s):
                    probes.add("decisions", "assistant", snippet(s), seen)
            stated = [s for s in _sentences(text) if len(s) >= 15 and _NEXT.search(s)]
            if stated:
                next_step = ("assistant", stated[-1])
    if next_step:
        probes.add("next", next_step[0], snippet(next_step[1]), seen)
    return probes


def distinct(probes: Probes, kept_text: str) -> Probes:
    """The probes not already in the text every system keeps (the original head and tail)."""
    out = Probes()
    for cat, items in probes.items.items():
        for kind, probe in items:
            parts = probe if isinstance(probe, tuple) else (probe,)
            if all(len(p) >= MIN_PROBE for p in parts) and not all(p in kept_text for p in parts):
                out.items[cat].append((kind, probe))
    return out


def survives(probe, text: str) -> bool:
    parts = probe if isinstance(probe, tuple) else (probe,)
    return all(p in text for p in parts)
