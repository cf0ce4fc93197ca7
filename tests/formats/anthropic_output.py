"""What a reader's transcript becomes in Anthropic output: the ids of its calls and results (a
reader keeps every one of each)."""

from __future__ import annotations

import json

from conftest import invoke


def tool_ids(args: list[str], stdin: object = b"") -> tuple[list, list]:
    """``convert --to anthropic ARGS``: ``(tool_use ids, tool_result ids)`` in order, over every
    transcript written."""
    result = invoke(["convert", "--to", "anthropic", "--model", "claude-sonnet-4-5", *args], stdin)
    assert result.status == 0, result.stderr
    blocks = [b for line in result.stdout.splitlines() for m in json.loads(line)["messages"]
              if isinstance(m["content"], list) for b in m["content"]]
    return ([b["id"] for b in blocks if b["type"] == "tool_use"],
            [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"])
