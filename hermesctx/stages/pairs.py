"""Tool-pairing helpers shared by prune and sanitize, in a module of their own so that
sanitize's start-up does not import prune (its stubs and token measures: ~3 ms of every run)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any



def hashable(value: Any) -> Any:
    """Ids used as dict/set keys; a JSON array/object id (malformed input) gets a stable key."""
    try:
        hash(value)
    except TypeError:
        from hermesctx.jsonio import dumps_like_json

        return ("unhashable", dumps_like_json(value, sort_keys=True, default=str))
    return value


def anthropic_blocks_apply(messages: list) -> bool:
    """Whether ``tool_use``/``tool_result`` blocks are pruned and repaired: only in a
    transcript that has such blocks and no OpenAI tool traffic (no ``tool`` message, no
    assistant with a non-empty ``tool_calls`` list). An OpenAI transcript is handled exactly
    as Hermes handles it, which leaves blocks it happens to contain alone."""
    has_blocks = False
    for msg in messages:
        if msg.get("role") == "tool" or (msg.get("role") == "assistant" and isinstance(msg.get("tool_calls"), list)
                                          and msg["tool_calls"]):
            return False
        content = msg.get("content")
        if not has_blocks and isinstance(content, list):
            has_blocks = any(isinstance(block, dict) and block.get("type") in ("tool_use", "tool_result")
                             for block in content)
    return has_blocks


def holds_results(msg: Any, *, only: bool = False) -> bool:
    """Whether a message is an Anthropic user turn carrying ``tool_result`` blocks (``only``:
    nothing else), the turn that stands for OpenAI ``tool`` messages."""
    if not isinstance(msg, dict) or msg.get("role") != "user":
        return False
    content = msg.get("content")
    if not isinstance(content, list) or not content:
        return False
    found = [isinstance(b, dict) and b.get("type") == "tool_result" for b in content]
    return all(found) if only else any(found)


def calls_tools(msg: Any) -> bool:
    """An assistant message with OpenAI ``tool_calls`` or Anthropic ``tool_use`` blocks."""
    if not isinstance(msg, dict) or msg.get("role") != "assistant":
        return False
    if msg.get("tool_calls"):
        return True
    content = msg.get("content")
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_use" for b in content)
