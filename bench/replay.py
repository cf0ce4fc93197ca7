"""replay speed: a generated Claude Code session of 1,000 requests, replayed through the CLI.

    python bench/replay.py                   # 1,000 requests (2,000 messages), best of 3
    python bench/replay.py --requests 200 --repeat 1

The log is written to bench/data/replay-<N>.jsonl with the usage Anthropic would record (a
read of the previous prompt, a write of what it added) and tool outputs of 1-6 KB. Each
message is counted once when it is read, and each request costs a hash lookup per cache
candidate, so the time grows with the transcript, not with its square. Times the whole
command (start-up, reading, counting, replay) for the log's own policy, and for
``--compare log --compare none --compare hermes --compare gate`` (four replays of the same
read), as CPU time of the child. Target (issue 34): under 10 s for 1,000 requests of a
500-message session. Writes bench/results/replay.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from run import hermesctx_argv  # noqa: E402

TARGET_S = 10.0


def write_log(path: str, requests: int, seed: int = 34) -> int:
    """A session of ``requests`` API calls, each a tool call and its result; returns messages."""
    rng = random.Random(seed)
    t0 = 1_767_600_000.0
    lines, parent, prompt, t = [], None, 14_000, 0.0

    def stamp(sec: float) -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t0 + sec)) + f".{int(sec * 1000) % 1000:03d}Z"

    def event(kind: str, message: dict) -> None:
        nonlocal parent
        uid = f"e{len(lines):06d}"
        lines.append({"type": kind, "uuid": uid, "parentUuid": parent, "sessionId": "bench",
                      "timestamp": stamp(t), "message": message})
        parent = uid

    event("user", {"role": "user", "content": "Refactor the payment module and keep the tests green. " * 20})
    prompt += 300
    previous = 0
    messages = 1
    for k in range(requests):
        t += rng.uniform(2, 20)
        read = previous if previous else 14_000
        usage = {"input_tokens": 3, "cache_read_input_tokens": read, "cache_creation_input_tokens": prompt - read,
                 "output_tokens": rng.randint(40, 600)}
        previous = prompt
        call = f"toolu_{k:05d}"
        event("assistant", {"id": f"msg_{k:05d}", "role": "assistant", "model": "claude-sonnet-4-5", "usage": usage,
                            "content": [{"type": "text", "text": f"Checking step {k}."},
                                        {"type": "tool_use", "id": call, "name": "Bash",
                                         "input": {"command": f"grep -n pay src/pay_{k}.py"}}]})
        body = "\n".join(f"src/pay_{k}.py:{i}: amount = charge(user_{i}, {rng.randint(1, 999)})"
                         for i in range(rng.randint(20, 120)))
        t += rng.uniform(0.5, 3)
        event("user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": body}]})
        messages += 2
        prompt += 30 + len(body) // 3
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for line in lines:
            fh.write(json.dumps(line) + "\n")
    return messages


def cpu_of(argv: list[str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args, _ = parser.parse_known_args()  # (make bench passes the other benches' size arguments)
    path = os.path.join(HERE, "data", f"replay-{args.requests}.jsonl")
    messages = write_log(path, args.requests)
    base = hermesctx_argv() + ["replay", "--format", "json", "--no-progress", path]
    rows = []
    for name, extra in (("log policy", []),
                        ("--compare log none hermes gate", ["--compare", "log", "--compare", "none",
                                                            "--compare", "hermes", "--compare", "gate"])):
        best = min(cpu_of(base + extra) for _ in range(args.repeat))
        rows.append({"case": name, "requests": args.requests, "messages": messages, "cpu_s": round(best, 2)})
        print(f"replay {name}: {args.requests:,} requests, {messages:,} messages: {best:.2f} s CPU "
              f"(target < {TARGET_S:.0f} s)")
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "replay.json"), "w", encoding="utf-8") as fh:
        json.dump({"target_s": TARGET_S, "rows": rows}, fh, indent=2)
    return 0 if rows[0]["cpu_s"] < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
