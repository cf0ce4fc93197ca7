"""ShareGPT / Hermes trajectories (``conversations`` of ``{from, value}``) <-> OpenAI messages.

Assistant turns carry ``<think>…</think>`` and ``<tool_call>{"name", "arguments"}</tool_call>``
blocks; one ``tool`` turn holds all results of the turn before it as ``<tool_response>`` blocks
``{"tool_call_id", "name", "content"}`` joined by newlines (Hermes's trajectory writer).
"""

from __future__ import annotations

from hermesctx import lazyre
from hermesctx.errors import InputError
from hermesctx.formats._common import bump
from hermesctx.jsonio import dumps_like_json, loads_like_json
from hermesctx.messages import check_convertible, content_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

_ROLES = {"system": "system", "human": "user", "gpt": "assistant", "tool": "tool"}
_FROM = {v: k for k, v in _ROLES.items()}
# other dialects: role/content turns (``user``, ``assistant``, ...) and LLaMA-Factory's
# ``function_call`` (the assistant's calls, JSON) and ``observation`` (a call's result) turns
_ALIASES = {"user": "user", "assistant": "assistant", "model": "assistant", "bot": "assistant",
            "function": "tool", "observation": "tool", "developer": "system"}
_THINK = lazyre.compile(r"^\s*<think>\n?(.*?)\n?</think>\n?", lazyre.S)
_CALL = lazyre.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", lazyre.S)
_RESP = lazyre.compile(r"<tool_response>\s*(.*?)\s*</tool_response>", lazyre.S)


NAME = "sharegpt"
PLAIN = False  # read as OpenAI chat
LOG = False  # a document, not a session log


def detect(doc: Any) -> bool:
    """A ShareGPT record (``conversations``); see :func:`is_records` for an array of them."""
    return isinstance(doc, dict) and isinstance(doc.get("conversations"), list)


def is_records(value: Any, *, loose: bool = False) -> bool:
    """A JSON array of ShareGPT records (every one with ``conversations``; ``loose``: objects,
    at least one of them a record), read as a batch of transcripts."""
    if not isinstance(value, list) or not value:
        return False
    if loose:
        return all(isinstance(r, dict) for r in value) and any(detect(r) for r in value)
    return all(detect(r) for r in value)  # (a record is an object: a chat list ends at its first item)


def read(doc: dict, lost: dict) -> dict:
    """A record -> ``{"messages": [...]}`` plus its other keys (a record's ``system`` becomes
    the first message, LLaMA-Factory ``tools`` OpenAI tool definitions)."""
    messages: list[dict] = []
    last_calls: list[dict] = []
    system = doc.get("system")
    if isinstance(system, str) and system:
        messages.append({"role": "system", "content": system})
    for turn_no, turn in enumerate(doc.get("conversations") or []):
        if not isinstance(turn, dict):
            continue
        speaker = turn.get("from", turn.get("role"))
        if speaker is not None and not isinstance(speaker, str):
            raise InputError('"from" is not a string', where=f"conversations[{turn_no}]")
        value = turn.get("value", turn.get("content"))
        value = value if isinstance(value, str) else content_text(value)
        if speaker == "function_call":
            calls = _function_calls(value, turn_no, lost)
            if calls is None:
                messages.append({"role": "assistant", "content": value})
                last_calls = []
                continue
            messages.append({"role": "assistant", "content": None, "tool_calls": calls})
            last_calls = calls
            continue
        role = _ROLES.get(speaker) or _ALIASES.get(speaker) or speaker or "user"
        if speaker == "observation" or speaker == "function":
            free = [c for c in last_calls if c.get("_synthetic")]
            call = free[0] if free else None
            if call is not None:
                call.pop("_synthetic", None)
            else:
                bump(lost, "observations without a function_call before them (kept as user text)")
                messages.append({"role": "user", "content": value})
                continue
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": value})
            continue
        if role == "assistant":
            msg: dict = {"role": "assistant"}
            think = _THINK.match(value)
            if think:
                if think.group(1).strip():
                    msg["reasoning"] = think.group(1)
                value = value[think.end():]
            calls = []
            parsed = []
            for k, match in enumerate(_CALL.finditer(value)):
                try:
                    data = loads_like_json(match.group(1))
                except ValueError:
                    data = None
                if not isinstance(data, dict):
                    bump(lost, "unparseable <tool_call> blocks (kept as text)")
                    continue
                parsed.append(match.span())
                calls.append(_call(data, turn_no, k))
            for start, end in reversed(parsed):
                value = value[:start] + value[end:]
            msg["content"] = value.strip() if calls else value
            if calls and not msg["content"]:
                msg["content"] = None
            if calls:
                msg["tool_calls"] = calls
            # keep key order role, content, reasoning, tool_calls
            messages.append({k: msg[k] for k in ("role", "content", "reasoning", "tool_calls")
                             if k in msg})
            last_calls = calls
        elif role == "tool":
            blocks = _RESP.findall(value) or [value]
            free = [c for c in last_calls if c.get("_synthetic")]
            for k, block in enumerate(blocks):
                try:
                    data = loads_like_json(block)
                except ValueError:
                    data = None
                if isinstance(data, dict) and ("content" in data or "tool_call_id" in data):
                    content = data.get("content", "")
                    if not isinstance(content, str):
                        content = dumps_like_json(content, ensure_ascii=False)
                    call_id = data.get("tool_call_id")
                else:
                    data, call_id, content = {}, None, block
                call = _claim(last_calls, free, call_id, data.get("name"), k)
                if call is not None and not call_id:
                    call_id = call["id"]
                messages.append({"role": "tool", "tool_call_id": call_id or f"call_missing_{turn_no}_{k}",
                                 "content": content})
        else:
            messages.append({"role": role, "content": value})
    for msg in messages:
        for call in msg.get("tool_calls") or ():
            call.pop("_synthetic", None)
    out = {k: v for k, v in doc.items() if k not in ("conversations", "system")}
    if "tools" in out:
        out["tools"] = _tools(out["tools"])
    out["messages"] = messages
    return out


def _call(data: dict, turn_no: int, k: int) -> dict:
    args = data.get("arguments", {})
    call = {"id": data.get("id") or f"call_{turn_no}_{k}", "type": "function",
            "function": {"name": data.get("name", ""),
                         "arguments": args if isinstance(args, str)
                         else dumps_like_json(args, ensure_ascii=False)}}
    if not data.get("id"):
        call["_synthetic"] = True
    return call


def _function_calls(value: str, turn_no: int, lost: dict) -> list[dict] | None:
    """The calls of a LLaMA-Factory ``function_call`` turn (one ``{"name", "arguments"}`` or a
    list of them), or None when it is not that JSON (kept as assistant text)."""
    try:
        data = loads_like_json(value)
    except ValueError:
        data = None
    items = data if isinstance(data, list) else [data]
    if not items or not all(isinstance(i, dict) and "name" in i for i in items):
        bump(lost, "function_call turns that are not JSON calls (kept as text)")
        return None
    return [_call(item, turn_no, k) for k, item in enumerate(items)]


def _tools(tools: Any) -> Any:
    """LLaMA-Factory ``tools`` (a JSON string or list of ``{name, description, parameters}``)
    as OpenAI tool definitions; anything else as it is."""
    value = tools
    if isinstance(value, str):
        try:
            value = loads_like_json(value)
        except ValueError:
            return tools
    if not isinstance(value, list) or not all(isinstance(t, dict) for t in value):
        return tools
    return [t if "type" in t or "name" not in t else {"type": "function", "function": t}
            for t in value]


def _claim(calls: list[dict], free: list[dict], call_id: Any, name: Any, k: int) -> dict | None:
    """The call a tool response answers. ShareGPT calls have no id: a response's
    ``tool_call_id`` is given to the first id-less call of its name (else by position), so
    the pairing survives a round trip."""
    for call in calls:
        if call_id and call["id"] == call_id:
            return call
    pick = next((c for c in free if c["function"]["name"] == name), None)
    if pick is None and free:
        pick = free[0] if call_id else (calls[k] if k < len(calls) and calls[k] in free else free[0])
    if pick is None:
        return calls[k] if not call_id and k < len(calls) else None
    free.remove(pick)
    if call_id:
        pick["id"] = call_id
    return pick


def write(doc: Any, lost: dict, *, names: dict | None = None) -> dict:
    """OpenAI chat (a body or a list of messages) -> a Hermes trajectory entry
    (``conversations`` first), laid out as Hermes writes them: every ``gpt`` turn opens with a
    ``<think>`` block, one ``tool`` turn holds the results of a turn. ``names`` (call id -> tool name) carries over between the
    parts of a transcript written piece by piece."""
    if isinstance(doc, list):
        doc = {"messages": doc}
    turns: list[dict] = []
    names = {} if names is None else names
    pending: list[str] = []
    answered: set = set()
    calls: list[str] = []

    def flush() -> None:
        if pending:
            turns.append({"from": "tool", "value": "\n".join(pending)})
            pending.clear()

    for i, msg in enumerate(doc.get("messages") or []):
        if not isinstance(msg, dict):
            continue
        check_convertible(msg, f"messages[{i}]")
        role = msg.get("role")
        content = msg.get("content")
        if isinstance(content, list):
            images = sum(1 for p in content if isinstance(p, dict)
                         and p.get("type") in ("image_url", "image", "input_image"))
            if images:
                bump(lost, "images", images)
        text = content_text(content)
        if role == "tool":
            call_id = msg.get("tool_call_id", "")
            answered.add(call_id)
            pending.append("<tool_response>\n" + dumps_like_json(
                {"tool_call_id": call_id, "name": names.get(call_id, ""), "content": text},
                ensure_ascii=False) + "\n</tool_response>")
            continue
        flush()
        if role == "assistant":
            reasoning = msg.get("reasoning") or msg.get("reasoning_content") or ""
            value = f"<think>\n{reasoning}\n</think>\n" if reasoning else "<think>\n</think>\n"
            if msg.get("tool_calls"):
                if text.strip():
                    value += text + "\n"
                for call in msg["tool_calls"]:
                    fn = call.get("function") or {}
                    names[call.get("id", "")] = fn.get("name", "")
                    calls.append(call.get("id", ""))
                    try:
                        raw = fn.get("arguments") or "{}"
                        args = raw if isinstance(raw, dict) else loads_like_json(raw)
                    except ValueError:
                        args = fn.get("arguments")
                    value += "<tool_call>\n" + dumps_like_json(
                        {"name": fn.get("name", ""), "arguments": args}, ensure_ascii=False) + "\n</tool_call>\n"
                value = value.rstrip()
            else:
                value += text
            turns.append({"from": "gpt", "value": value})
        else:
            turns.append({"from": _FROM.get(role, role), "value": text})
    flush()
    unanswered = sum(1 for call_id in calls if call_id and call_id not in answered)
    if unanswered:
        bump(lost, "ids of tool calls without a result (ShareGPT calls carry none)", unanswered)
    out: dict = {"conversations": turns}
    for key, value in doc.items():
        if key not in ("messages", "conversations"):
            out[key] = value
    return out


def stream(chunks: Iterator[list[dict]], lost: dict, wire: dict) -> tuple[dict, str, Iterator, Any]:
    """The streaming face of :func:`write` (see :func:`hermesctx.formats._logs.write_stream`)."""
    names: dict = {}
    turns = (turn for chunk in chunks
             for turn in write({"messages": chunk}, lost, names=names)["conversations"])
    return {}, "conversations", turns, None
