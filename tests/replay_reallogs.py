"""`make reallogs` (second part): issue 34's "Done when" on the genuine logs of ../shared/real-logs
(a local check, not collected by pytest: the logs never enter the repository).

1. Every log that records usage (Claude Code, Codex) is read without error and replayed under
   its own policy; per source and per format, the recorded and replayed prompt (input + cache),
   cache-read and cache-write tokens, and the uncached input. The format totals must be within
   5 % for the prompt, the cache reads and the cache writes.
2. The logs of 150 requests or more, replayed with no compaction, Hermes's defaults and the
   defaults with the minimum-gain gate: the gate must never cost more than the defaults.

Usage: ``python tests/replay_reallogs.py [DIR]``; exit 1 when a figure fails.
"""

from __future__ import annotations

import os
import sys
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hermesctx import replay as rp  # noqa: E402
from hermesctx.errors import HermesctxError  # noqa: E402

KEYS = ("requests", "prompt_tokens", "cache_read_tokens", "cache_write_tokens", "input_tokens")
LONG = 150
TOLERANCE = 0.05


def logs(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and (p.suffix == ".jsonl" or p.name.endswith(".jsonl.gz")))


def pct(new: int, old: int) -> str:
    return f"{(new - old) / old * 100:+.1f} %" if old else ("0" if new == old else "n/a")


def main(argv: list[str]) -> int:
    root = Path(argv[0] if argv else ROOT.parent / "shared" / "real-logs")
    failures: list[str] = []
    by_source: dict[tuple[str, str], dict] = defaultdict(lambda: defaultdict(int))
    long_sessions = []
    count = rp.Counter()
    for path in logs(root):
        try:
            session = rp.read_session(str(path), count)
        except (HermesctxError, OSError, ValueError) as err:
            print(f"  not replayed: {path.relative_to(root)}: {str(err)[:100]}")
            continue
        if not session.recorded:
            continue
        recorded, own = rp.recorded_totals(session), rp.replay(session, rp.LOG)
        for key in KEYS:
            for group in ((session.source, path.parent.name), (session.source, "ALL")):
                by_source[group]["rec_" + key] += recorded[key]
                by_source[group]["rep_" + key] += own[key]
        if recorded["requests"] >= LONG:
            long_sessions.append(session)
    print(f"{'format':12} {'source':36} {'requests':>8}  prompt       cache read   cache write  uncached")
    for (fmt, source), c in sorted(by_source.items()):
        cells = [pct(c["rep_" + k], c["rec_" + k]) for k in KEYS[1:]]
        print(f"{fmt:12} {source[:36]:36} {c['rec_requests']:>8}  " + "  ".join(f"{x:11}" for x in cells))
        if source == "ALL":
            for key in KEYS[1:4]:
                old, new = c["rec_" + key], c["rep_" + key]
                if old and abs(new - old) / old > TOLERANCE:
                    failures.append(f"{fmt}: {key} {pct(new, old)} (over 5 %)")
    print(f"\nlogs of {LONG}+ requests: no compaction / hermes defaults / with the gate")
    totals = defaultdict(Decimal)
    for session in long_sessions:
        rows = {p.name: rp.replay(session, p) for p in (rp.LOG, rp.NONE, rp.HERMES, rp.BUILTIN["gate"])}
        cost = {name: Decimal(row["cost_usd"] or 0) for name, row in rows.items()}
        for name, value in cost.items():
            totals[name] += value
        gated = rows[rp.BUILTIN["gate"].name]
        print(f"  {session.name[:44]:44} " + "  ".join(f"{name}: ${value:.2f}" for name, value in cost.items())
              + f"  (declined {gated['declined']})")
        if cost[rp.BUILTIN["gate"].name] > cost[rp.HERMES.name]:
            failures.append(f"{session.name}: the gate cost more than the defaults")
    print("  total: " + "  ".join(f"{name}: ${value:.2f}" for name, value in totals.items()))
    for failure in failures:
        print(f"FAIL {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main(sys.argv[1:]))
