"""The extractive summarizer is linear in messages (issue 19): time per message from 1k to 100k.

    python bench/summary_scale.py [--sizes 1000,10000,100000] [--repeat 1]

Each transcript mixes reads, edits, commands (a third of them failing, later fixed), searches and
user asks over a growing set of files, like a long coding session. Prints the time per message
at each size and its ratio to the smallest size (issue 19 asks for at most 1.5x).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from hermesctx.summary import SummaryRequest
from hermesctx.summary.extractive import ExtractiveSummarizer


def session(n: int) -> list[dict]:
    out: list[dict] = [{"role": "user", "content": "Port the service to the new framework; keep the API."}]
    k = 0
    while len(out) < n:
        path = f"/repo/src/pkg{k % 97}/mod{k % 1013}.py"
        cid = f"c{k}"
        name, args, result = [
            ("Read", {"file_path": path}, "line of code\n" * 40),
            ("Edit", {"file_path": path, "old_string": f"old_{k}()", "new_string": f"new_{k}()"}, "updated"),
            ("Bash", {"command": f"pytest tests/test_mod{k % 1013}.py -q"},
             f"Exit code 1\nE   NameError: name 'x{k}' is not defined\n1 failed" if k % 3 == 0 else "4 passed"),
            ("Grep", {"pattern": f"symbol_{k % 500}"}, "src/a.py:1"),
        ][k % 4]
        out.append({"role": "assistant", "content": f"Because step {k} needs it, I'll use the adapter.",
                    "tool_calls": [{"id": cid, "type": "function",
                                    "function": {"name": name, "arguments": json.dumps(args)}}]})
        out.append({"role": "tool", "tool_call_id": cid, "content": result})
        if k % 50 == 49:
            out.append({"role": "user", "content": f"Also check module {k} before moving on."})
        k += 1
    return out[:n]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    args = parser.parse_args(argv)
    summarizer = ExtractiveSummarizer()
    summarizer.summarize(SummaryRequest(prompt="", budget_tokens=10_000, turns=session(500)))  # warm-up: regexes
    base = None
    print("| messages | seconds | µs per message | ratio to the smallest |\n|---|---|---|---|")
    for n in (int(x) for x in args.sizes.split(",")):
        turns = session(n)
        best = float("inf")
        for _ in range(args.repeat):
            start = time.perf_counter()
            summarizer.summarize(SummaryRequest(prompt="", budget_tokens=10_000, turns=turns))
            best = min(best, time.perf_counter() - start)
        per = best / n * 1e6
        base = base or per
        print(f"| {n:,} | {best:.2f} | {per:.1f} | {per / base:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
