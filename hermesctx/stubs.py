"""One-line stand-ins for old tool results, worded as Hermes words them.

``summarize_tool_result(name, args_json, content)`` says what a tool call did in one line,
in the format Hermes 0.19.0 uses for that tool (``[terminal] ran `npm test` -> exit 0,
47 lines output``), or a generic ``[tool] k1=v1 k2=v2 (N chars result)`` for other tools. It
never raises: a malformed historical call falls back to ``[tool] (N chars result)``.

Values are rendered with Python's ``str()`` (``None``, ``True``, ``{'a': 1}``) because that is
what appears in Hermes's stubs.
"""

from __future__ import annotations

from hermesctx import lazyre
from hermesctx.jsonio import loads_like_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_EXIT_CODE = lazyre.compile(r'"exit_code"\s*:\s*(-?\d+)')
_TOTAL_COUNT = lazyre.compile(r'"total_count"\s*:\s*(\d+)')
_BROWSER_DETAIL = frozenset({"browser_navigate", "browser_click", "browser_snapshot",
                             "browser_type", "browser_scroll", "browser_vision"})


def _text(args: dict, key: str, default: str = "") -> str:
    """An argument as text: strings as they are, None/missing → default, else ``str()``."""
    value = args.get(key, default)
    if isinstance(value, str):
        return value
    return default if value is None else str(value)


def _clip(text: str, limit: int) -> str:
    return text[:limit - 3] + "..." if len(text) > limit else text


class _Result:
    """What the formatters need to know about one result."""

    def __init__(self, name: Any, args: dict, content: str):
        self.name = name
        self.args = args
        self.chars = f"{len(content):,}"
        self.content = content
        if not isinstance(content, str):
            _ = self.lines  # Hermes counts lines first: a content without .strip() fails here

    @property
    def lines(self) -> int:
        """Lines of output (counted only for the tools whose stub says it, and for a content
        that is no string). JSON-encoded output (terminal's) holds no newline: a search for
        one (memchr) answers that without counting every character."""
        content = self.content
        if not isinstance(content, str):
            return content.count("\n") + 1 if content.strip() else 0
        if not content or content.isspace():
            return 0
        return content.count("\n") + 1 if "\n" in content else 1


def _terminal(r: _Result) -> str:
    match = _EXIT_CODE.search(r.content)
    cmd = _clip(_text(r.args, "command"), 80)
    return f"[terminal] ran `{cmd}` -> exit {match.group(1) if match else '?'}, {r.lines} lines output"


def _read_file(r: _Result) -> str:
    return f"[read_file] read {r.args.get('path', '?')} from line {r.args.get('offset', 1)} ({r.chars} chars)"


def _write_file(r: _Result) -> str:
    lines = _text(r.args, "content").count("\n") + 1 if r.args.get("content") else "?"
    return f"[write_file] wrote to {r.args.get('path', '?')} ({lines} lines)"


def _search_files(r: _Result) -> str:
    match = _TOTAL_COUNT.search(r.content)
    a = r.args
    return (f"[search_files] {a.get('target', 'content')} search for '{a.get('pattern', '?')}' "
            f"in {a.get('path', '.')} -> {match.group(1) if match else '?'} matches")


def _patch(r: _Result) -> str:
    return f"[patch] {r.args.get('mode', 'replace')} in {r.args.get('path', '?')} ({r.chars} chars result)"


def _browser(r: _Result) -> str:
    url, ref = r.args.get("url", ""), r.args.get("ref", "")
    detail = f" {url}" if url else (f" ref={ref}" if ref else "")
    return f"[{r.name}]{detail} ({r.chars} chars)"


def _web_search(r: _Result) -> str:
    return f"[web_search] query='{r.args.get('query', '?')}' ({r.chars} chars result)"


def _web_extract(r: _Result) -> str:
    urls = r.args.get("urls", [])
    is_list = isinstance(urls, list)
    first = urls[0] if is_list and urls else "?"
    if isinstance(first, dict):
        first = first.get("url") or first.get("href") or "?"
    elif not isinstance(first, str):
        first = "?"
    if is_list and len(urls) > 1:
        first += f" (+{len(urls) - 1} more)"  # may raise for odd values: the guard handles it
    return f"[web_extract] {first} ({r.chars} chars)"


def _delegate_task(r: _Result) -> str:
    return f"[delegate_task] '{_clip(_text(r.args, 'goal'), 60)}' ({r.chars} chars result)"


def _execute_code(r: _Result) -> str:
    code = _text(r.args, "code")
    preview = code[:60].replace("\n", " ") + ("..." if len(code) > 60 else "")
    return f"[execute_code] `{preview}` ({r.lines} lines output)"


def _skill(r: _Result) -> str:
    return f"[{r.name}] name={r.args.get('name', '?')} ({r.chars} chars)"


def _vision_analyze(r: _Result) -> str:
    return f"[vision_analyze] '{_text(r.args, 'question')[:50]}' ({r.chars} chars)"


def _memory(r: _Result) -> str:
    return f"[memory] {r.args.get('action', '?')} on {r.args.get('target', '?')}"


def _text_to_speech(r: _Result) -> str:
    return f"[text_to_speech] generated audio ({r.chars} chars)"


def _cronjob(r: _Result) -> str:
    return f"[cronjob] {r.args.get('action', '?')}"


def _process(r: _Result) -> str:
    return f"[process] {r.args.get('action', '?')} session={r.args.get('session_id', '?')}"


def _generic(r: _Result) -> str:
    pairs = "".join(f" {key}={str(value)[:40]}" for key, value in list(r.args.items())[:2])
    return f"[{r.name}]{pairs} ({r.chars} chars result)"


_FORMATTERS: dict[str, Callable[[_Result], str]] = {
    "terminal": _terminal,
    "read_file": _read_file,
    "write_file": _write_file,
    "search_files": _search_files,
    "patch": _patch,
    **dict.fromkeys(_BROWSER_DETAIL, _browser),
    "web_search": _web_search,
    "web_extract": _web_extract,
    "delegate_task": _delegate_task,
    "execute_code": _execute_code,
    **dict.fromkeys(("skill_view", "skills_list", "skill_manage"), _skill),
    "vision_analyze": _vision_analyze,
    "memory": _memory,
    "todo": lambda r: "[todo] updated task list",
    "clarify": lambda r: "[clarify] asked user a question",
    "text_to_speech": _text_to_speech,
    "cronjob": _cronjob,
    "process": _process,
}


def _parse_args(args_json: Any) -> dict:
    try:
        args = loads_like_json(args_json) if args_json else {}
    except (ValueError, TypeError):
        return {}
    return args if isinstance(args, dict) else {}


def summarize_tool_result(name: Any, args_json: Any, content: Any) -> str:
    """The one-line stub for a tool result (never raises)."""
    try:
        result = _Result(name, _parse_args(args_json), content or "")
        return _FORMATTERS.get(name, _generic)(result)
    except Exception:  # noqa: BLE001 - a stub must never stop a prune
        size = len(content) if isinstance(content, str) else 0
        return f"[{name}] ({size:,} chars result)"
