"""ShareGPT / Hermes trajectories (``conversations`` of ``{from, value}``) <-> OpenAI messages.

Assistant turns carry ``<think>…</think>`` and ``<tool_call>{"name", "arguments"}</tool_call>``
blocks; one ``tool`` turn holds all results of the turn before it as ``<tool_response>`` blocks
``{"tool_call_id", "name", "content"}`` joined by newlines (Hermes's trajectory writer).
"""

from __future__ import annotations

import json
import re
from typing import Any

from hermesctx.messages import content_text

_ROLES = {"system": "system", "human": "user", "gpt": "assistant", "tool": "tool"}
_FROM = {v: k for k, v in _ROLES.items()}
_THINK = re.compile(r"^\s*<think>\n?(.*?)\n?</think>\n?", re.S)
_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)
_RESP = re.compile(r"<tool_response>\s*(.*?)\s*</tool_response>", re.S)


def _bump(lost: dict, what: str, n: int = 1) -> None:
    lost[what] = lost.get(what, 0) + n


def is_sharegpt(doc: Any) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("conversations"), list)


def to_openai(doc: dict, lost: dict) -> dict:
    messages: list[dict] = []
    last_calls: list[dict] = []
    for turn_no, turn in enumerate(doc.get("conversations") or []):
        if not isinstance(turn, dict):
            continue
        role = _ROLES.get(turn.get("from"), turn.get("from") or "user")
        value = turn.get("value")
        value = value if isinstance(value, str) else content_text(value)
        if role == "assistant":
            msg: dict = {"role": "assistant"}
            think = _THINK.match(value)
            if think:
                if think.group(1).strip():
                    msg["reasoning"] = think.group(1)
                value = value[think.end():]
            calls = []
            for k, match in enumerate(_CALL.finditer(value)):
                try:
                    data = json.loads(match.group(1))
                except ValueError:
                    data = None
                if not isinstance(data, dict):
                    _bump(lost, "unparseable <tool_call> blocks (kept as text)")
                    continue
                args = data.get("arguments", {})
                calls.append({"id": data.get("id") or f"call_{turn_no}_{k}", "type": "function",
                              "function": {"name": data.get("name", ""),
                                           "arguments": args if isinstance(args, str)
                                           else json.dumps(args, ensure_ascii=False)}})
            if calls:
                value = _CALL.sub("", value)
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
            blocks = _RESP.findall(value)
            if not blocks:
                blocks = [value]
            for k, block in enumerate(blocks):
                try:
                    data = json.loads(block)
                except ValueError:
                    data = None
                if isinstance(data, dict) and ("content" in data or "tool_call_id" in data):
                    call_id = data.get("tool_call_id") or (
                        last_calls[k]["id"] if k < len(last_calls) else f"call_missing_{turn_no}_{k}")
                    content = data.get("content", "")
                    if not isinstance(content, str):
                        content = json.dumps(content, ensure_ascii=False)
                else:
                    call_id = last_calls[k]["id"] if k < len(last_calls) else f"call_missing_{turn_no}_{k}"
                    content = block
                messages.append({"role": "tool", "tool_call_id": call_id, "content": content})
        else:
            messages.append({"role": role, "content": value})
    out = {k: v for k, v in doc.items() if k != "conversations"}
    out["messages"] = messages
    return out


def from_openai(doc: dict, lost: dict) -> dict:
    """OpenAI messages -> a Hermes trajectory entry (``conversations`` first)."""
    turns: list[dict] = []
    names: dict[str, str] = {}
    pending: list[str] = []

    def flush() -> None:
        if pending:
            turns.append({"from": "tool", "value": "\n".join(pending)})
            pending.clear()

    for msg in doc.get("messages") or []:
        if not isinstance(msg, dict):
            continue
        role = msg.get("role")
        content = msg.get("content")
        if isinstance(content, list):
            images = sum(1 for p in content if isinstance(p, dict)
                         and p.get("type") in ("image_url", "image", "input_image"))
            if images:
                _bump(lost, "images", images)
        text = content_text(content)
        if role == "tool":
            call_id = msg.get("tool_call_id", "")
            pending.append("<tool_response>\n" + json.dumps(
                {"tool_call_id": call_id, "name": names.get(call_id, ""), "content": text},
                ensure_ascii=False) + "\n</tool_response>")
            continue
        flush()
        if role == "assistant":
            reasoning = msg.get("reasoning") or msg.get("reasoning_content") or ""
            value = f"<think>\n{reasoning}\n</think>\n" if reasoning else "<think>\n</think>\n"
            if text:
                value += text
            for call in msg.get("tool_calls") or []:
                fn = call.get("function") or {}
                names[call.get("id", "")] = fn.get("name", "")
                try:
                    args = json.loads(fn.get("arguments") or "{}")
                except ValueError:
                    args = fn.get("arguments")
                value += "\n<tool_call>\n" + json.dumps(
                    {"name": fn.get("name", ""), "arguments": args}, ensure_ascii=False) + "\n</tool_call>"
                if call.get("id"):
                    _bump(lost, "tool call ids (ShareGPT pairs by position)")
            turns.append({"from": "gpt", "value": value.rstrip()})
        else:
            turns.append({"from": _FROM.get(role, role), "value": text})
    flush()
    out: dict = {"conversations": turns}
    for key, value in doc.items():
        if key not in ("messages", "conversations"):
            out[key] = value
    return out
