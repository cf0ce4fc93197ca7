"""Small session logs for the replay tests, written with the usage a provider would record.

``claude_code_log`` writes a Claude Code session whose recorded usage follows Anthropic's
rules as the provider applies them (a marker on the last message, reads of the previous
request's prefix while it lives, writes of the rest), from the token sizes it chose for each
message; ``codex_log`` writes a Codex rollout the same way with OpenAI's rules (128-token
steps from 1,024, no write charge). The replay never sees the sizes: it must find them again
from the recorded prompts.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

START = datetime(2026, 1, 5, 9, 0, 0, tzinfo=timezone.utc)


def _stamp(t: float) -> str:
    return (START + timedelta(seconds=t)).isoformat().replace("+00:00", "Z")


def claude_code_log(path, *, turns: int = 12, system: int = 12_000, gap_at: int | None = None,
                    gap_seconds: float = 400.0, warm: bool = False, ttl: str = "5m",
                    model: str = "claude-sonnet-4-5-20250929") -> dict:
    """Write the log; return what it recorded (totals) and the sizes it used."""
    lines, parent = [], None
    t = 0.0
    prompt = system  # the system prompt and tools
    cached_until = -1.0  # expiry of the cache entry at the end of the previous request
    cached_size = system if warm else 0
    if warm:
        cached_until = 1e12  # the system prompt was cached by an earlier session
    totals = {"input_tokens": 0, "cache_read_tokens": 0, "cache_write_tokens": 0, "output_tokens": 0, "requests": 0}

    def event(kind, message, **extra):
        nonlocal parent
        uid = f"u{len(lines):04d}"
        lines.append({"type": kind, "uuid": uid, "parentUuid": parent, "sessionId": "s1",
                      "timestamp": _stamp(t), "message": message, **extra})
        parent = uid

    text = "Please fix the failing test in src/app.py and explain the change. " * 30
    event("user", {"role": "user", "content": text})
    sizes = [len(text) // 4]
    prompt += sizes[0]
    life = 3600.0 if ttl == "1h" else 300.0
    for k in range(turns):
        t += 5.0
        read = cached_size if t - 5.0 <= cached_until else 0  # (sent when the last result came)
        write = prompt - read
        out = 40 + 7 * k
        usage = {"input_tokens": 0, "cache_creation_input_tokens": write, "cache_read_input_tokens": read,
                 "output_tokens": out,
                 "cache_creation": {"ephemeral_5m_input_tokens": 0 if ttl == "1h" else write,
                                    "ephemeral_1h_input_tokens": write if ttl == "1h" else 0}}
        for key, value in (("input_tokens", 0), ("cache_read_tokens", read), ("cache_write_tokens", write),
                           ("output_tokens", out)):
            totals[key] += value
        totals["requests"] += 1
        cached_size, cached_until = prompt, t + life
        call = f"toolu_{k:03d}"
        t += 3.0
        event("assistant", {"id": f"msg_{k:03d}", "role": "assistant", "model": model, "usage": usage,
                            "content": [{"type": "text", "text": f"Step {k}: reading the file. " * 5},
                                        {"type": "tool_use", "id": call, "name": "Read",
                                         "input": {"file_path": f"/repo/src/mod{k}.py"}}]})
        body = "\n".join(f"{i:4d}  def function_{k}_{i}(x): return x * {i}" for i in range(40 + 10 * k))
        t += 1.0
        if gap_at is not None and k + 1 == gap_at:
            t += gap_seconds  # a slow tool: the next request is sent this much later
        event("user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": body}]})
        # what the assistant message and the result add to the next prompt (the provider's count)
        grown = 60 + len(body) // 3
        sizes.append(grown)
        prompt += grown
    with open(path, "w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(json.dumps(line) + "\n")
    totals["prompt_tokens"] = totals["cache_read_tokens"] + totals["cache_write_tokens"] + totals["input_tokens"]
    return totals


def codex_log(path, *, turns: int = 10, system: int = 3_000, model: str = "gpt-5.1-codex-max",
              compact_at: int | None = None) -> dict:
    """Write a Codex rollout; return what it recorded."""
    lines = []
    t = 0.0

    def item(kind, payload):
        lines.append({"timestamp": _stamp(t), "type": kind, "payload": payload})

    item("session_meta", {"id": "r1", "cwd": "/repo", "model_provider": "openai"})
    item("turn_context", {"cwd": "/repo", "model": model})
    ask = "Add a retry to the HTTP client in src/net.py. " * 20
    item("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": ask}]})
    prompt = system + len(ask) // 4
    previous = 0
    totals = {"input_tokens": 0, "cache_read_tokens": 0, "cache_write_tokens": 0, "output_tokens": 0, "requests": 0}
    total_usage = {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0}
    for k in range(turns):
        t += 4.0
        if compact_at is not None and k == compact_at:
            summary = "Summary of the work so far: retry added, tests pending. " * 10
            item("compacted", {"message": "", "replacement_history": [
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": ask}]},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": summary}]}]})
            prompt = system + len(ask) // 4 + len(summary) // 4
            previous = system + len(ask) // 4  # the system prompt and the ask are still cached
        read = (previous // 128) * 128 if previous >= 1024 else 0
        out = 30 + k
        item("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": f"Plan {k}"}],
                               "encrypted_content": "gAAAA" + "x" * 200})
        call = f"call_{k:03d}"
        item("response_item", {"type": "function_call", "name": "shell", "call_id": call,
                               "arguments": json.dumps({"command": ["cat", f"src/net{k}.py"]})})
        last = {"input_tokens": prompt, "cached_input_tokens": read, "output_tokens": out,
                "reasoning_output_tokens": 0, "total_tokens": prompt + out}
        for key in total_usage:
            total_usage[key] += last[key]
        info = {"total_token_usage": dict(total_usage), "last_token_usage": last, "model_context_window": 272000}
        item("event_msg", {"type": "token_count", "info": info})
        item("event_msg", {"type": "token_count", "info": info})  # Codex logs it twice
        totals["input_tokens"] += prompt - read
        totals["cache_read_tokens"] += read
        totals["output_tokens"] += out
        totals["requests"] += 1
        previous = prompt
        body = "\n".join(f"line {i} of net{k}.py: retry(backoff={i})" for i in range(30 + 8 * k))
        t += 1.0
        item("response_item", {"type": "function_call_output", "call_id": call, "output": body})
        prompt += 50 + len(body) // 4
    with open(path, "w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(json.dumps(line) + "\n")
    totals["prompt_tokens"] = totals["input_tokens"] + totals["cache_read_tokens"]
    return totals
