"""What every format module shares: the format names, the ``lost`` counters a reader or writer
fills (what it could not keep, or kept only as text), and the containers agent logs keep a
transcript's messages under."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

OPENAI = "openai"
ANTHROPIC = "anthropic"
RESPONSES = "responses"
SHAREGPT = "sharegpt"
CLAUDE_CODE = "claude-code"
CODEX = "codex"
AUTO = "auto"

Warn = Callable[[str], None]


def quiet(message: str) -> None:
    """A :data:`Warn` that says nothing (the first pass over a log warns in the second)."""


def chat_format(value: Any) -> str:
    """``openai`` or ``anthropic``: which chat body ``value`` is (see
    :func:`hermesctx.messages.detect_format`)."""
    from hermesctx.messages import detect_format

    return detect_format(value)


def bump(lost: dict, what: str, n: int = 1) -> None:
    """Count ``n`` more of ``what`` in ``lost``."""
    lost[what] = lost.get(what, 0) + n


AS_TEXT = " (as text)"  # a ``lost`` key ending so: kept, but as text


def server_side_text(item: dict) -> str:
    """A server-side tool item or block (Responses ``web_search_call``, ``mcp_list_tools``;
    Anthropic ``server_tool_use``, ``web_search_tool_result``, ...) as the text that keeps it
    in a chat transcript: ``[server-side tool KIND] {json of the rest}``."""
    rest = {k: v for k, v in item.items() if k != "type"}
    return f"{SERVER_SIDE_TEXT}{item.get('type')}] {json.dumps(rest, ensure_ascii=False)}"


SERVER_SIDE_TEXT = "[server-side tool "


def server_side_item(text: Any) -> dict | None:
    """The item or block :func:`server_side_text` wrote ``text`` from, or None when ``text`` is
    no such text."""
    if not isinstance(text, str) or not text.startswith(SERVER_SIDE_TEXT):
        return None
    kind, sep, rest = text[len(SERVER_SIDE_TEXT):].partition("] ")
    if not sep or not kind:
        return None
    try:
        value = json.loads(rest)
    except ValueError:
        return None
    return {"type": kind, **value} if isinstance(value, dict) and "type" not in value else None


def describe_lost(lost: dict, target: str) -> list[str]:
    return [f"{what[:-len(AS_TEXT)]}: {n} written as text in the {target} output"
            if what.endswith(AS_TEXT) else f"{what}: {n} not kept in the {target} output"
            for what, n in lost.items()]



# Keys under which agent logs keep a transcript's messages (SWE-agent / mini-swe-agent .traj
# ``history``, tau-bench ``traj``, ``trajectory``), in the order they are tried.
CONTAINERS = ("history", "traj", "trajectory")


def _is_chat(value: Any) -> bool:
    return (isinstance(value, list) and bool(value)
            and all(isinstance(m, dict) for m in value) and any("role" in m for m in value))


def container_of(doc: Any) -> str | None:
    """The key of an object without ``messages`` that holds its chat messages, or None."""
    if isinstance(doc, dict) and "messages" not in doc:
        for key in CONTAINERS:
            if _is_chat(doc.get(key)):
                return key
    return None


def unwrap(doc: Any, lost: dict) -> Any:
    """A container object (see :func:`container_of`) as an OpenAI body of its messages; what
    else it held is counted in ``lost``. Anything else as it is."""
    key = container_of(doc)
    if key is None:
        return doc
    others = [k for k in doc if k != key]
    if others:
        lost[f"keys beside the {key!r} messages ({', '.join(others[:6])})"] = len(others)
    return {"messages": doc[key]}


def describe_value(value: Any) -> str:
    """What a JSON value is, for an error: ``a JSON array of 200 objects with keys task_id,
    reward, ...``."""
    def keys(objects: list) -> str:
        seen: list = []
        for obj in objects[:50]:
            for key in obj:
                if key not in seen:
                    seen.append(key)
        shown = ", ".join(str(k) for k in seen[:6])
        return f" with keys {shown}{', ...' if len(seen) > 6 else ''}" if seen else " with no keys"

    if isinstance(value, dict):
        return "an object" + keys([value])
    if isinstance(value, list):
        objects = [v for v in value if isinstance(v, dict)]
        if objects and len(objects) == len(value):
            return f"a JSON array of {len(value)} object{'s' * (len(value) != 1)}" + keys(objects)
        kinds = sorted({type(v).__name__ for v in value})
        return f"a JSON array of {len(value)} value{'s' * (len(value) != 1)} ({', '.join(kinds)})"
    return f"a JSON {type(value).__name__}"


def container_hint(value: Any) -> str:
    records = value if isinstance(value, list) else [value]
    for record in records[:1]:
        if not isinstance(record, dict):
            continue
        for key in CONTAINERS:
            if key in record:
                if _is_chat(record[key]):
                    return (f"each record's {key!r} holds a transcript: "
                            f"jq -c '.[].{key}' FILE | hermesctx ...")
                return f"its {key!r} holds no chat messages (no role): nothing hermesctx reads"
    return ('expected a JSON array of messages (objects with "role") or an object with a '
            '"messages" array, or an agent log hermesctx reads (see --from)')



class Streamed(NamedTuple):
    """What a format's ``stream(chunks, lost, wire)`` gives the streaming writer: the key its
    items go under, the items (produced as they are read), the Anthropic ``system`` (None for
    the others) and the request keys the send path keeps after them (None: all)."""

    key: str
    items: Iterator[Any]
    system: Any
    keys: frozenset | None
