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
