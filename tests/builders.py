"""The message builders every test uses: OpenAI chat messages and tool calls, Anthropic content
blocks. Each returns a new plain dict (or list of dicts), in the key order the APIs document."""

from __future__ import annotations

import json

# --- OpenAI chat -------------------------------------------------------------------------------

def call(cid, name: str = "terminal", args=None, **extra) -> dict:
    """A tool call; ``args`` a dict (JSON-encoded) or a string taken as it is (default ``{}``)."""
    raw = args if isinstance(args, str) else json.dumps({} if args is None else args)
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": raw}, **extra}


def system(text: str = "You are Hermes.") -> dict:
    return {"role": "system", "content": text}


def user(text) -> dict:
    return {"role": "user", "content": text}


def assistant(content="", *calls: dict) -> dict:
    """An assistant message; ``tool_calls`` only when there are calls."""
    msg = {"role": "assistant", "content": content}
    if calls:
        msg["tool_calls"] = list(calls)
    return msg


def tool(cid, content) -> dict:
    """A tool result message answering the call ``cid``."""
    return {"role": "tool", "tool_call_id": cid, "content": content}


def exchange(cid, name: str, args, output, text="") -> list[dict]:
    """One call and its result: an assistant turn calling ``name``, then the tool message."""
    return [assistant(text, call(cid, name, args)), tool(cid, output)]


# --- Anthropic content blocks ------------------------------------------------------------------

def text(t: str, **extra) -> dict:
    return {"type": "text", "text": t, **extra}


def tool_use(uid, name: str = "terminal", input=None) -> dict:  # noqa: A002 - the API's field name
    return {"type": "tool_use", "id": uid, "name": name, "input": {} if input is None else input}


def tool_result(uid, content="ok", **extra) -> dict:
    return {"type": "tool_result", "tool_use_id": uid, "content": content, **extra}


def thinking(t: str = "hmm", signature: str = "sig1") -> dict:
    return {"type": "thinking", "thinking": t, "signature": signature}
