"""What every format reader and writer shares: the ``lost`` counters (a dict ``what -> count``
of what a conversion could not keep), their wording on stderr, and how a server-side tool item
is kept as text. Nothing here imports a format module."""

from __future__ import annotations

from hermesctx.jsonio import dumps_like_json, loads_like_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any
    Warn = Callable[[str], None]



def quiet(message: str) -> None:
    """A :data:`Warn` that says nothing (the first pass over a log: the second one warns)."""


def bump(lost: dict, what: str, n: int = 1) -> None:
    """Count ``n`` more of ``what`` in ``lost``."""
    lost[what] = lost.get(what, 0) + n


AS_TEXT = " (as text)"  # a ``lost`` key ending so: kept, but as text

SERVER_MARK = "[server-side tool "


def server_side_text(item: dict) -> str:
    """A server-side tool item or block (Responses ``web_search_call``, ``mcp_list_tools``;
    Anthropic ``server_tool_use``, ``web_search_tool_result``, ...) as the text that keeps it
    in a chat transcript: ``[server-side tool KIND] {json of the rest}``."""
    rest = {k: v for k, v in item.items() if k != "type"}
    return f"{SERVER_MARK}{item.get('type')}] {dumps_like_json(rest, ensure_ascii=False)}"


def server_side_item(text: Any) -> dict | None:
    """The item :func:`server_side_text` wrote ``text`` from, or None when ``text`` is not
    exactly such a text (its JSON an object)."""
    if not isinstance(text, str) or not text.startswith(SERVER_MARK):
        return None
    kind, sep, rest = text[len(SERVER_MARK):].partition("] ")
    if not sep or not kind or not rest.startswith("{"):
        return None
    try:
        value = loads_like_json(rest)
    except ValueError:
        return None
    if not isinstance(value, dict) or "type" in value:
        return None
    return {"type": kind, **value}


def describe_lost(lost: dict, target: str) -> list[str]:
    """One line per ``lost`` entry, for stderr."""
    return [f"{what[:-len(AS_TEXT)]}: {n} written as text in the {target} output"
            if what.endswith(AS_TEXT) else f"{what}: {n} not kept in the {target} output"
            for what, n in lost.items()]


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


def refuse_opaque(what: str) -> None:
    """A provider's opaque compaction item met on the way to another format: refused (exit 3,
    naming it), unless ``--lenient``, where the caller drops it and counts it in ``lost``."""
    from hermesctx.errors import InputError
    from hermesctx.messages import is_lenient

    if not is_lenient():
        raise InputError(f"{what} cannot be translated to chat messages or another provider",
                         hint="send it back to that provider as it is, or --lenient to drop it "
                         "with a warning")
