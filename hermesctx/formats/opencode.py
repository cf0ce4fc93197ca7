"""OpenCode (the TypeScript agent, ``sst/opencode``) messages -> one transcript per session.

OpenCode keeps each message as ``info`` (``id``, ``sessionID``, ``role``; an assistant's
``system`` prompt, ``modelID``, ``tokens``, ``summary``: the summary a compaction wrote) and its
``parts`` (``text``, ``reasoning``, ``tool``: ``callID``, ``tool``, ``state`` with ``input``,
``output`` / ``error`` and ``status``; ``step-start`` / ``step-finish``: one model call, with its
``tokens``; ``file``, ``patch``, ``snapshot``, ...). Read from what its server and ``export``
give: ``{info, parts}`` objects, one or a JSON array of them, or the storage tree itself
(``~/.local/share/opencode/storage``: ``message/<session>/<message>.json`` and
``part/<message>/<part>.json``) given as a directory.

A ``tool`` part is a call and, once it ran, its result; each step of an assistant message is one
assistant turn followed by its results. A session whose history was compacted starts at its
summary message.
"""

from __future__ import annotations

from hermesctx.errors import InputError
from hermesctx.formats._common import bump
from hermesctx.formats._logs import session_body
from hermesctx.jsonio import dumps_like_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "opencode"
PLAIN = False  # read as OpenAI chat
LOG = False  # a document (or a storage tree), not a session log

QUIET_PARTS = ("step-start", "step-finish", "snapshot", "patch", "agent", "retry")


def _is_message(value: Any) -> bool:
    return (isinstance(value, dict) and isinstance(value.get("info"), dict)
            and isinstance(value.get("parts"), list) and "role" in value["info"])


def detect(doc: Any) -> bool:
    """An ``{info, parts}`` message, or a JSON array of them."""
    if isinstance(doc, list):
        return bool(doc) and all(_is_message(m) for m in doc)
    return _is_message(doc)


def _session(msg: dict) -> Any:
    return msg["info"].get("sessionID")


def records(doc: Any) -> list | None:
    """The sessions of an array of messages, one document each (None when it holds one)."""
    if not isinstance(doc, list):
        return None
    order: dict = {}
    for msg in doc:
        order.setdefault(_session(msg), []).append(msg)
    return list(order.values()) if len(order) > 1 else None


def read(doc: Any, lost: dict) -> dict:
    """One session's messages -> ``{"messages": [...], "model": ...}``."""
    msgs = doc if isinstance(doc, list) else [doc]
    start = 0
    for i, msg in enumerate(msgs):
        if msg["info"].get("summary") is True and msg["info"].get("role") == "assistant":
            start = i - 1 if i and msgs[i - 1]["info"].get("role") == "user" else i
    if start:
        bump(lost, "messages before the session's compaction summary", start)
    out: list[dict] = []
    model = None
    system_said = False
    for msg in msgs[start:]:
        info = msg["info"]
        role = info.get("role")
        if role == "assistant":
            if isinstance(info.get("modelID"), str):
                model = info["modelID"]
            system = info.get("system")
            if not system_said and isinstance(system, list) and system:
                out.insert(0, {"role": "system", "content": "\n".join(map(str, system))})
            system_said = system_said or bool(system)
            out.extend(_assistant(msg["parts"], lost))
        else:
            texts = _texts(msg["parts"], lost)
            if texts:
                out.append({"role": "user" if role == "user" else str(role), "content": texts})
    if not any(m["role"] != "system" for m in out):
        raise InputError(f"an OpenCode session ({_session(msgs[0])}) whose messages say nothing "
                         "(only step parts): no transcript in it")
    return session_body(out, model)


def usage(doc: Any) -> dict | None:
    """The last ``step-finish`` part's tokens (its last model call), as Anthropic counts them."""
    msgs = doc if isinstance(doc, list) else [doc]
    for msg in reversed(msgs):
        for part in reversed(msg.get("parts") or []):
            tokens = part.get("tokens") if isinstance(part, dict) and part.get("type") == "step-finish" else None
            if isinstance(tokens, dict):
                cache = tokens.get("cache") if isinstance(tokens.get("cache"), dict) else {}
                return {"input_tokens": tokens.get("input", 0), "output_tokens": tokens.get("output", 0),
                        "cache_read_input_tokens": cache.get("read", 0),
                        "cache_creation_input_tokens": cache.get("write", 0)}
    return None


def _texts(parts: list, lost: dict) -> str:
    texts = []
    for part in parts:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "file":
            texts.append(f"[file {part.get('filename') or part.get('url') or ''}]")
        elif kind not in QUIET_PARTS:
            bump(lost, f"{kind} parts in user messages")
    return "\n".join(texts)


def _assistant(parts: list, lost: dict) -> list[dict]:
    """An assistant message's parts -> one assistant turn per step, each followed by the
    results of its calls."""
    out: list[dict] = []
    texts: list[str] = []
    reasoning: list[str] = []
    calls: list[dict] = []
    results: list[dict] = []

    def flush() -> None:
        if texts or calls or reasoning:
            turn: dict = {"role": "assistant",
                          "content": "\n".join(texts) if texts else (None if calls else "")}
            if reasoning:
                turn["reasoning"] = "\n".join(reasoning)
            if calls:
                turn["tool_calls"] = list(calls)
            out.append(turn)
            out.extend(results)
        texts.clear(), reasoning.clear(), calls.clear(), results.clear()

    for part in parts:
        if not isinstance(part, dict):
            bump(lost, "parts that are not objects")
            continue
        kind = part.get("type")
        if kind == "step-start":
            flush()
        elif kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "reasoning" and isinstance(part.get("text"), str):
            reasoning.append(part["text"])
        elif kind == "tool":
            call_id = str(part.get("callID") or part.get("id") or "")
            state = part.get("state") if isinstance(part.get("state"), dict) else {}
            arguments = state.get("input")
            calls.append({"id": call_id, "type": "function", "function": {
                "name": str(part.get("tool") or ""),
                "arguments": dumps_like_json(arguments if arguments is not None else {})}})
            status = state.get("status")
            if status == "completed":
                output = state.get("output")
                results.append({"role": "tool", "tool_call_id": call_id,
                                "content": output if isinstance(output, str) else dumps_like_json(output)})
            elif status == "error":
                results.append({"role": "tool", "tool_call_id": call_id,
                                "content": f"[error] {state.get('error')}"})
        elif kind not in QUIET_PARTS:
            bump(lost, f"{kind} parts")
    flush()
    return out


# --- the storage tree ------------------------------------------------------------------------

def tree_root(path: str) -> str:
    """The storage directory of ``path``: itself, or the ``storage`` directory in it."""
    import os

    if not os.path.isdir(os.path.join(path, "message")) and os.path.isdir(os.path.join(path, "storage")):
        return os.path.join(path, "storage")
    return path


def is_tree(path: str) -> bool:
    """Whether the directory ``path`` is an OpenCode storage tree (``message/`` and ``part/``)."""
    import os

    root = tree_root(path)
    return os.path.isdir(os.path.join(root, "message")) and os.path.isdir(os.path.join(root, "part"))


def load_tree(path: str) -> list[dict]:
    """A storage directory (or the directory holding ``storage``) as the ``{info, parts}``
    messages of all its sessions, each session's in the order of their ids (OpenCode's ids
    grow with time)."""
    import json
    import os

    root = tree_root(path)
    messages_dir, parts_dir = os.path.join(root, "message"), os.path.join(root, "part")
    if not is_tree(path):
        from hermesctx.errors import FileIOError

        raise FileIOError(f"cannot read {path}: Is a directory", path=path,
                          hint="name a transcript file, or an OpenCode storage tree (message/, part/)")

    def load(file: str) -> Any:
        try:
            with open(file, "rb") as handle:
                return json.loads(handle.read())
        except (OSError, ValueError) as exc:
            raise InputError(f"{file}: {exc}") from None

    out: list[dict] = []
    for session in sorted(os.listdir(messages_dir)):
        folder = os.path.join(messages_dir, session)
        if not os.path.isdir(folder):
            continue
        for name in sorted(n for n in os.listdir(folder) if n.endswith(".json")):
            info = load(os.path.join(folder, name))
            if not isinstance(info, dict):
                continue
            own = os.path.join(parts_dir, str(info.get("id") or name[:-5]))
            parts = [load(os.path.join(own, n)) for n in sorted(os.listdir(own))
                     if n.endswith(".json")] if os.path.isdir(own) else []
            info.setdefault("sessionID", session)
            out.append({"info": info, "parts": parts})
    if not out:
        raise InputError(f"{path}: an OpenCode storage tree without any message")
    return out
