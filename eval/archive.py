"""Nothing lost on real logs (issue 20): ``make eval-archive`` (never CI).

Each transcript of the directory is compacted three times into one archive store, as a growing
conversation would be: the first third is compressed, the next third appended to the result and
compressed again, then the rest (cuts at user messages). Then:

* recoverable: ``compress --expand`` from the store, repeated until no note is left, must give the
  whole transcript back byte for byte (messages counted);
* recall: the name-based probes of eval/names.py for files and errors, taken from each round's compacted
  middle, are searched with ``Store.search`` in the transcript's session; a probe is found when a
  hit is one of that middle's messages (a probe cut at 50 characters loses its cut last word).
  Also the latency of those searches.

    python eval/archive.py --dir ../shared/real-logs [--store FILE.sqlite] [--exclude NAME ...]
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from names import probes  # noqa: E402
from run import list_dir, load_dir  # noqa: E402

from hermesctx import jsonio  # noqa: E402
from hermesctx.archive import StoreArchiver, unwind  # noqa: E402
from hermesctx.stages.compress import compress_messages  # noqa: E402
from hermesctx.store import Store  # noqa: E402
from hermesctx.summary.extractive import ExtractiveSummarizer  # noqa: E402


def cuts(messages: list) -> list:
    """Three parts, cut at the first user message after each third (or at the third itself)."""
    n = len(messages)
    out = []
    for k in (1, 2):
        at = n * k // 3
        user = next((i for i in range(at, n) if messages[i].get("role") == "user"), at)
        out.append(max(user, out[-1] if out else 0))
    return [messages[:out[0]], messages[out[0]:out[1]], messages[out[1]:]]


def query_of(probe: str) -> str:
    """The probe as a query: a probe cut at 50 characters ends in a part of a word; drop it."""
    if len(probe) < 50:
        return probe
    cut = re.sub(r"[^\W_]+$", "", probe)  # the part of a word the cut left
    return cut if re.search(r"[^\W_]", cut) else probe


def evaluate(name: str, messages: list, path: str, args) -> dict:
    parts = cuts(messages)
    archiver = StoreArchiver(path).for_doc(parts[0])
    doc, spans = parts[0], []
    for part in [*parts[1:], []]:
        out, report = compress_messages(doc, summarizer=ExtractiveSummarizer(), archive=archiver,
                                        protect_last_n=args.protect_last_n, tail_token_budget=args.tail_tokens)
        if report.get("compressed"):
            spans.append((doc, report["start"], report["end"]))
        doc = out + part
    doc, _ = unwind(doc, path=path)
    want = [jsonio.dumps(m) for m in messages]
    got = [jsonio.dumps(m) for m in doc]
    same = sum(a == b for a, b in zip(want, got)) if len(want) == len(got) else 0
    row = {"name": name, "messages": len(messages), "recovered": same, "rounds": len(spans),
           "found": 0, "probes": 0, "latency": [], "missed": []}
    with Store.open(path, fts=not args.scan) as store:
        session = store.spans()[-1]["session"] if spans else None
        for source, start, end in spans:
            middle = source[start:end]
            blobs = {jsonio.dumps(m) for m in middle}
            found = probes([m for m in middle if isinstance(m, dict)])
            for probe in sorted(found["files"] | found["errors"]):
                query = query_of(probe)
                tick = time.perf_counter()
                try:
                    hits = store.search(query, session=session, limit=args.limit)
                except Exception as err:  # noqa: BLE001 - a query with no word: counted as missed
                    hits = []
                    row["missed"].append(f"{query!r}: {err}")
                row["latency"].append(time.perf_counter() - tick)
                row["probes"] += 1
                ok = any(h["kind"] == "message" and store.expand_bytes(h["span"])[h["position"]] in blobs
                         for h in hits)
                row["found"] += ok
                if not ok:
                    row["missed"].append(query)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", required=True, help="a directory of agent logs (any format hermesctx reads)")
    parser.add_argument("--store", help="the store to fill (default: a temporary file)")
    parser.add_argument("--exclude", action="append", default=[])
    parser.add_argument("--protect-last-n", type=int, default=10)
    parser.add_argument("--tail-tokens", type=int, default=4000)
    parser.add_argument("--limit", type=int, default=1000, help="hits read per probe")
    parser.add_argument("--scan", action="store_true", help="search by plain scan, as without FTS5")
    parser.add_argument("--rows", action="store_true", help="one line per transcript, with missed probes")
    args = parser.parse_args(argv)
    root = Path(args.dir)
    sources = {name: messages for name, (_, messages) in load_dir(root, list_dir(root, args.exclude)).items()}
    with tempfile.TemporaryDirectory() as tmp:
        path = args.store or str(Path(tmp) / "archive.sqlite")
        rows = [evaluate(name, messages, path, args) for name, messages in sources.items()]
        with Store.open(path) as store:
            spans = store.spans()
        size = Path(path).stat().st_size
    if args.rows:
        for r in rows:
            print(f"{r['name']}: recovered {r['recovered']}/{r['messages']} rounds={r['rounds']} "
                  f"recall {r['found']}/{r['probes']}" + (f" missed: {r['missed'][:5]}" if r["missed"] else ""))
    messages = sum(r["messages"] for r in rows)
    recovered = sum(r["recovered"] for r in rows)
    found, total = sum(r["found"] for r in rows), sum(r["probes"] for r in rows)
    latency = sorted(t for r in rows for t in r["latency"])
    print(f"transcripts: {len(rows)} ({sum(r['rounds'] == 3 for r in rows)} compacted three times); spans: "
          f"{len(spans)}; sessions: {len({s['session'] for s in spans})}; store: {size / 2**20:.1f} MiB")
    print(f"original messages recoverable byte for byte: {recovered}/{messages}")
    if total:
        print(f"recall of files and errors of the compacted middles: {found}/{total} ({100 * found / total:.1f} %); "
              f"latency median {1000 * statistics.median(latency):.1f} ms, "
              f"p95 {1000 * latency[int(0.95 * (len(latency) - 1))]:.1f} ms")
    return 0 if recovered == messages else 1


if __name__ == "__main__":
    sys.exit(main())
