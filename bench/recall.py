"""Recall on a 100k-message archive store (issue 20): build time, search latency, recall.

    python bench/recall.py [--messages 100000] [--queries 200] [--keep PATH]

Builds a store the way repeated compaction fills one: generated coding sessions (reads, edits,
test runs whose failures print error lines, searches, user asks, over a repository of a few
thousand files, each session mostly on its own working set of 30), each compacted in three rounds through the store's own
write path (:meth:`hermesctx.store.Store.add`: round 2 and 3 take the previous summary plus the
next third of the session, their span's parent the previous span). Then, for queries taken from
the archived messages (half file paths, half error lines, drawn at random; then, apart, the 50
paths most messages name), measures the latency of
:meth:`Store.search` (median and p95, in this process) and the recall: the share of queries whose
source message (the span and position that hold it) is among the hits, with the default limit
(20), with ``--limit 10``, and with ``--limit 10`` inside the query's session (as an agent
recalling its own conversation would ask). Writes bench/results/recall.json and prints the
"Done when" rows of issue 20.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from hermesctx.store import Store, fts5_available  # noqa: E402

_PATH = re.compile(r"src/pkg\d+/mod_\d+\.py")

SESSION_SIZE = 200  # messages per generated session
FILES = 20_000  # distinct paths in the repository every session works on
WORKING_SET = 30  # files a session keeps coming back to
ERRORS = ("AssertionError: expected {a} got {b}", "KeyError: 'field_{a}'",
          "TypeError: unsupported operand type(s) for +: 'int' and 'str' in step_{a}",
          "ValueError: invalid literal for int() with base 10: 'v{a}'",
          "ModuleNotFoundError: No module named 'pkg_{a}'")
# issue 20's Done when, as measured here: (what, target, key of the results, better)
DONE_WHEN = [
    ("recall of file paths and error lines, limit 20", ">= 0.95", "recall_at_20", "high"),
    ("recall, limit 10", ">= 0.90", "recall_at_10", "high"),
    ("recall, limit 10, within the session", ">= 0.99", "recall_at_10_session", "high"),
    ("search latency p95 on the 100k archive (ms)", "<= 100", "p95_ms", "low"),
]


def _path(rng: random.Random, working: list[int]) -> str:
    """Most steps touch the session's working set (read, edited, read again), the rest any file
    of the repository."""
    k = rng.choice(working) if rng.random() < 0.7 else rng.randrange(FILES)
    return f"src/pkg{k % 53}/mod_{k}.py"


def session(rng: random.Random, s: int) -> tuple[list[dict], list[tuple[int, str, str]]]:
    """One session's messages and its queries ``(index, kind, text)``: every path read or edited
    and every error line printed."""
    out: list[dict] = [{"role": "system", "content": "You are a coding agent working on the service repository."},
                       {"role": "user", "content": f"Session {s}: port the billing module to the new API."}]
    queries: list[tuple[int, str, str]] = []
    working = rng.sample(range(FILES), WORKING_SET)
    k = 0
    while len(out) < SESSION_SIZE - 1:
        cid = f"call_{s}_{k}"
        path = _path(rng, working)
        kind = k % 4
        if kind == 0:
            name, args, result = "read_file", {"path": path}, "def handler():\n    return compute()\n" * 8
        elif kind == 1:
            name, args, result = ("patch", {"path": path, "old": f"old_{s}_{k}()", "new": f"new_{s}_{k}()"},
                                  f"patched {path}")
        elif kind == 2:
            line = f"{path}:{rng.randint(10, 900)}: " + rng.choice(ERRORS).format(a=rng.randint(0, 99_999),
                                                                                 b=rng.randint(0, 99_999))
            name, args, result = ("terminal", {"command": f"pytest -q tests/test_mod_{k}.py"},
                                  f"F.\n=== FAILURES ===\n{line}\n1 failed, 1 passed")
            queries.append((len(out) + 1, "error", line.split(": ", 1)[1]))
        else:
            name, args, result = "search_files", {"pattern": f"symbol_{k % 300}"}, f"{path}:12: symbol_{k % 300}"
        if kind in (0, 1):
            queries.append((len(out), "path", path))
        out.append({"role": "assistant", "content": f"Step {k}: {name} on {path}.",
                    "tool_calls": [{"id": cid, "type": "function",
                                    "function": {"name": name, "arguments": json.dumps(args)}}]})
        out.append({"role": "tool", "tool_call_id": cid, "content": result})
        k += 1
    out.append({"role": "user", "content": f"Session {s}: wrap up and summarize what changed."})
    return out[:SESSION_SIZE], [q for q in queries if q[0] < SESSION_SIZE]


def build(path: str, messages: int, seed: int) -> tuple[list[dict], float, int]:
    """The store at ``path``; the queries (each with its source span and position), the build
    seconds and how many original messages went in."""
    rng = random.Random(seed)
    queries: list[dict] = []
    total, elapsed = 0, 0.0
    holding: dict[str, int] = {}  # path -> how many archived messages name it
    with Store.open(path) as store:
        s = 0
        while total < messages:
            msgs, found = session(rng, s)
            msgs = msgs[:messages - total]
            name = f"bench-{s:05d}"
            cuts = [1 + (len(msgs) - 1) * r // 3 for r in range(4)]  # message 0 (system) stays the head
            parent, summary, where = None, None, {0: None}
            for r, (lo, hi) in enumerate(zip(cuts, cuts[1:])):
                head = [msgs[0]] + ([summary] if summary else [])
                files = sorted({q[2] for q in found if lo <= q[0] < hi and q[1] == "path"})
                t = time.perf_counter()
                span = store.add(head + msgs[lo:hi], session=name, parent=parent, compressed=2,
                                 start=len(head), end=len(head) + hi - lo,
                                 summary=f"Round {r + 1} of {name}: messages {lo}-{hi}; files {', '.join(files)[:300]}")
                elapsed += time.perf_counter() - t
                where.update({i: (span, len(head) + i - lo) for i in range(lo, hi)})
                parent = span
                summary = {"role": "user", "content": f"[summary of round {r + 1} of {name}]"}
            for msg in msgs:
                for path in set(_PATH.findall(json.dumps(msg))):
                    holding[path] = holding.get(path, 0) + 1
            for index, kind, text in found:
                if where.get(index):
                    queries.append({"kind": kind, "query": text, "session": name,
                                    "span": where[index][0], "position": where[index][1]})
            total += len(msgs)
            s += 1
    for q in queries:
        q["holding"] = holding.get(q["query"], 1) if q["kind"] == "path" else 1
    return queries, elapsed, total


def measure(path: str, queries: list[dict]) -> dict:
    def found(hits: list, q: dict) -> bool:
        return any(h["kind"] == "message" and h["span"] == q["span"] and h["position"] == q["position"]
                   for h in hits)

    times, at20, at10, at10_session = [], 0, 0, 0
    with Store.open(path, create=False) as store:
        store.search(queries[0]["query"])  # warm-up: the first query pays for opening the index
        for q in queries:
            t = time.perf_counter()
            hits = store.search(q["query"])
            times.append(time.perf_counter() - t)
            at20 += found(hits, q)
            at10 += found(store.search(q["query"], limit=10), q)
            at10_session += found(store.search(q["query"], session=q["session"], limit=10), q)
    n = len(queries)
    times.sort()
    return {"queries": n, "median_ms": round(statistics.median(times) * 1000, 2),
            "p95_ms": round(times[min(n - 1, int(n * 0.95))] * 1000, 2),
            "max_ms": round(times[-1] * 1000, 2), "recall_at_20": round(at20 / n, 4),
            "recall_at_10": round(at10 / n, 4), "recall_at_10_session": round(at10_session / n, 4),
            # how many archived messages hold the query's text: the source is one of these
            "holding_median": statistics.median(q["holding"] for q in queries),
            "holding_max": max(q["holding"] for q in queries)}


def done_when(results: dict) -> list[dict]:
    rows = []
    for what, target, key, better in DONE_WHEN:
        value = results[key]
        limit = float(target.split()[1])
        rows.append({"what": what, "target": target, "value": value,
                     "ok": value >= limit if better == "high" else value <= limit})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=20)
    parser.add_argument("--keep", metavar="PATH", help="build the store here and keep it (default: a temp file)")
    parser.add_argument("--out", default=os.path.join(HERE, "results", "recall.json"))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="hermesctx-recall-") as tmp:
        path = args.keep or os.path.join(tmp, "archive.sqlite")
        if args.keep and os.path.exists(path):
            sys.exit(f"{path} exists: give a new path to --keep")
        queries, seconds, total = build(path, args.messages, args.seed)
        rng = random.Random(args.seed)
        paths = [q for q in queries if q["kind"] == "path"]
        errors = [q for q in queries if q["kind"] == "error"]
        half = args.queries // 2
        picked = rng.sample(paths, min(half, len(paths))) + rng.sample(errors, min(args.queries - half, len(errors)))
        results = {"messages": total, "fts5": fts5_available(), "build_seconds": round(seconds, 2),
                   "messages_per_second": round(total / seconds), "store_mib": round(os.path.getsize(path) / 2**20, 1),
                   **measure(path, picked)}
        by_kind = {kind: measure(path, [q for q in picked if q["kind"] == kind]) for kind in ("path", "error")}
        # the hard case, not a random one: the paths most messages name (the source is one of many)
        by_kind["most_repeated_paths"] = measure(path, sorted(paths, key=lambda q: -q["holding"])[:50])
    rows = done_when(results)
    print(f"archive: {total:,} messages in {results['build_seconds']} s ({results['messages_per_second']:,}/s), "
          f"{results['store_mib']} MiB, FTS5 {'on' if results['fts5'] else 'off (plain scan)'}")
    print(f"search: {results['queries']} queries, median {results['median_ms']} ms, p95 {results['p95_ms']} ms, "
          f"max {results['max_ms']} ms")
    print(f"recall: limit 20 {results['recall_at_20']:.1%}, limit 10 {results['recall_at_10']:.1%}, "
          f"limit 10 in the session {results['recall_at_10_session']:.1%}")
    for kind, one in by_kind.items():
        print(f"  {kind.replace('_', ' ')} queries: limit 20 {one['recall_at_20']:.1%}, limit 10 {one['recall_at_10']:.1%}, "
              f"median {one['median_ms']} ms, p95 {one['p95_ms']} ms; messages holding the query: median "
              f"{one['holding_median']}, max {one['holding_max']}")
    print("\nDone when (issue 20)")
    for row in rows:
        print(f"  {row['what']:52} {row['target']:>8} {row['value']:>8}  {'ok' if row['ok'] else 'MISSED'}")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump({**results, "by_kind": by_kind, "seed": args.seed, "done_when": rows}, handle, indent=2)
        handle.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
