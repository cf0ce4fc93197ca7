"""What a successor agent keeps (issue 28, D16): ``make eval`` (never CI). See docs/eval.md.

For each transcript, the cut is the one ``compress`` chooses (extractive summarizer; the report's
``start``/``end``). Probes come from the ORIGINAL messages of the compacted region only, from tool
results, assistant prose and user turns (eval/probes.py: facts, final file state, constraints,
decisions, tried / worked, next step). At that same cut four systems are compared, each judged on
its whole output (tool-call arguments of kept messages included):

* ``compress``: ``compress_messages`` with the extractive summarizer, as it is;
* ``prune``: ``prune_messages`` alone (same protected tail): head + pruned middle + tail;
* ``truncate``: head + tail, the middle's text cut to as many tokens as compress's summary took
  (the start of the middle kept);
* ``fallback``: ``compress`` with Hermes's static fallback summary in place of the summary.

A deterministic split by file (a hash of the relative path) holds out about 40 % of the files:
``--split tune`` (the default) evaluates only the others; ``--split holdout`` is for the final
measurement. Whoever tunes the summarizer must not read holdout rows while tuning.

    python eval/run.py                                   # the fixtures of eval/fixtures.py
    python eval/run.py --dir ../shared/real-logs [--split tune|holdout|all] [--rows]
    python eval/run.py --dir SET1 --dir SET2 --split all     # several sets pooled
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fixtures import autonomous  # noqa: E402
from fixtures import transcripts as fixture_transcripts  # noqa: E402
from probes import CATEGORIES, LABELS, distinct, draw, message_text, output_text, survives  # noqa: E402

from hermesctx import tokens  # noqa: E402
from hermesctx.stages.compress import compress_messages  # noqa: E402
from hermesctx.stages.prune import prune_messages  # noqa: E402
from hermesctx.summary import SummarizerError  # noqa: E402
from hermesctx.summary.extractive import ExtractiveSummarizer  # noqa: E402
from hermesctx.summary.text import is_summary_content, strip_summary_prefix, text_view, with_summary_prefix  # noqa: E402

SYSTEMS = ("compress", "prune", "truncate", "fallback")
SYSTEM_LABELS = {"compress": "`compress` (extractive)", "prune": "`prune` alone",
                 "truncate": "head + tail, middle truncated to the same tokens",
                 "fallback": "Hermes's static fallback"}
SOURCES = ("Claude Code", "Codex", "Hermes", "other")
HOLDOUT_SHARE = 0.4
# chosen once, before any result was read, as the salt (of 0-199) whose split of the 34
# compactable transcripts of ../shared/real-logs is closest to 40 % within each source (3 of 7
# Claude Code, 5 of 12 Codex, 6 of 15 Hermes); never to be changed by whoever tunes
SPLIT_SALT = "65"
MIN_MESSAGES = 30


# --- inputs --------------------------------------------------------------------------------

def held_out(name: str) -> bool:
    """About 40 % of the transcripts, by a hash of the name: the path relative to --dir, with
    ``#k`` for the k-th document of a file that holds several (a batch of trajectories). Depends
    on nothing but the name: no change to hermesctx moves a transcript between the parts."""
    digest = hashlib.sha256(f"{SPLIT_SALT}:{name}".encode()).digest()
    return int.from_bytes(digest[:4], "big") / 2 ** 32 < HOLDOUT_SHARE


def source_of(name: str) -> str:
    """Claude Code / Codex / Hermes / other, from the folder (and file) name."""
    low = name.lower()
    if "codex" in low:
        return "Codex"
    if any(k in low for k in ("claude", "sniffly", "spotter", "slash-command")):
        return "Claude Code"
    if "hermes" in low:
        return "Hermes"
    return "other"


def _convert(path: Path) -> list:
    proc = subprocess.run([sys.executable, "-m", "hermesctx", "convert", "--to", "openai", str(path)],
                          capture_output=True, text=True)
    if proc.returncode:
        return []
    lines = proc.stdout.splitlines() if "\n" in proc.stdout.strip() else [proc.stdout]
    out = []
    for k, line in enumerate(lines):
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        messages = doc.get("messages") if isinstance(doc, dict) else doc
        if isinstance(messages, list) and len(messages) >= MIN_MESSAGES:
            out.append((f"#{k}" if len(lines) > 1 else "", messages))
    return out


def list_dir(path: Path, exclude: list[str]) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*")
                  if p.is_file() and p.name != "PROVENANCE.md" and not any(x in str(p) for x in exclude))


def load_dir(path: Path, files: list[str]) -> dict[str, tuple[str, list]]:
    """name -> (file relative to ``path``, OpenAI messages), via ``hermesctx convert --to openai``."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        converted = list(pool.map(lambda rel: _convert(path / rel), files))
    return {rel + suffix: (rel, messages) for rel, docs in zip(files, converted) for suffix, messages in docs}


# --- the four systems at one cut -------------------------------------------------------------

class _Unavailable:
    """A summarizer that always fails: compress then writes Hermes's static fallback summary."""
    name = "unavailable"

    def summarize(self, request):
        raise SummarizerError("eval: the static fallback is measured", kind="other")


def _truncated(middle: list, budget_tokens: int) -> dict:
    text = "\n".join(f"{str(m.get('role', '')).upper()}: {message_text(m)}" for m in middle)
    return {"role": "user", "content": text[:max(budget_tokens, 0) * 4]}


def _summary_text(out: list) -> str:
    msg = next((m for m in out if is_summary_content(m.get("content"))), None)
    return text_view(msg["content"]) if msg else ""


def _fraction(pairs) -> float | None:
    pairs = list(pairs)
    kept = sum(k for k, _ in pairs)
    total = sum(t for _, t in pairs)
    return kept / total if total else None


def evaluate(name: str, messages: list, args) -> dict:
    """One transcript's row: ``skip`` (why) when compress makes no extractive compaction."""
    common = {"protect_last_n": args.protect_last_n, "tail_token_budget": args.tail_tokens,
              "max_summary_tokens": args.max_summary_tokens}
    try:
        out, report = compress_messages(messages, summarizer=ExtractiveSummarizer(), **common)
    except Exception as err:  # noqa: BLE001 - one bad transcript must not end the evaluation
        return {"name": name, "skip": f"{type(err).__name__}: {err}"}
    if not report.get("compressed"):
        return {"name": name, "skip": report.get("reason", "not compressed")}
    if report.get("summarizer") != "extractive":
        return {"name": name, "skip": f"summary written by {report.get('summarizer')}"}
    start, end = report["start"], report["end"]
    pruned, _ = prune_messages(messages, protect_tail_count=args.protect_last_n, protect_tail_tokens=args.tail_tokens)
    fallback_out, fallback_report = compress_messages(messages, summarizer=_Unavailable(), **common)
    if fallback_report.get("compressed") and (fallback_report["start"], fallback_report["end"]) != (start, end):
        return {"name": name, "skip": "the fallback run cut elsewhere"}
    kept_tokens = tokens.rough_messages(pruned[:start] + pruned[end:])
    before = tokens.rough_messages(messages)
    middle_tokens = tokens.rough_messages(messages[start:end])
    summary_share = max(tokens.rough_messages(out) - kept_tokens, 0)
    outputs = {"compress": out, "prune": pruned, "fallback": fallback_out,
               "truncate": pruned[:start] + [_truncated(messages[start:end], summary_share)] + pruned[end:]}
    found = distinct(draw(messages, start, end), output_text(messages[:start] + messages[end:]))
    summary = _summary_text(out)
    summary_tokens = tokens.rough_text(with_summary_prefix(strip_summary_prefix(summary)))
    row = {"name": name, "messages": len(messages), "start": start, "end": end, "budget": report["summary_budget"],
           "summary_tokens": summary_tokens, "over_budget": summary_tokens > report["summary_budget"],
           "lost": {}, "tokens": before, "reduction:bound": 1 - kept_tokens / before if before else 0.0}
    for system, result in outputs.items():
        text = output_text(result)
        after = tokens.rough_messages(result)
        row[system] = {cat: (sum(survives(p, text) for _, p in found.items[cat]), len(found.items[cat]))
                       for cat in CATEGORIES}
        row[f"reduction:{system}"] = 1 - after / before if before else 0.0
        row[f"after:{system}"] = after
        row[f"middle:{system}"] = 1 - (after - kept_tokens) / middle_tokens if middle_tokens else 0.0
        if system == "compress":
            row["lost"] = {cat: [(kind, p) for kind, p in found.items[cat] if not survives(p, text)]
                           for cat in CATEGORIES}
    row["kept:compress"] = _fraction(row["compress"].values())
    ledger = report.get("drop_ledger")
    if isinstance(ledger, dict) and ledger.get("facts"):
        row["ledger"] = ledger.get("survived", 0) / ledger["facts"]
    coverage = report.get("summary_coverage")
    if isinstance(coverage, dict):
        row["coverage"] = _fraction((v.get("named", 0), v.get("total", 0)) for v in coverage.values()
                                    if isinstance(v, dict))
    return row


def forms(name: str, messages: list, args) -> dict | None:
    """The same transcript compressed as OpenAI messages and as an Anthropic body (what
    ``hermesctx convert --to anthropic`` writes): messages and assistant turns kept after the summary."""
    from hermesctx import formats
    from hermesctx.stages.compress import compress
    from hermesctx.stages.convert import convert

    anthropic, _ = convert({"messages": messages}, source=formats.OPENAI, target=formats.ANTHROPIC)
    out = {}
    for form, doc in (("openai", {"messages": messages}), ("anthropic", anthropic)):
        try:
            new, report = compress(doc, summarizer=ExtractiveSummarizer(), protect_last_n=args.protect_last_n,
                                   tail_token_budget=args.tail_tokens, max_summary_tokens=args.max_summary_tokens)
        except Exception as err:  # noqa: BLE001 - said in the table, not fatal
            out[form] = {"error": f"{type(err).__name__}: {err}"}
            continue
        kept = new["messages"] if isinstance(new, dict) else new
        idx = next((i for i, m in enumerate(kept) if is_summary_content(m.get("content"))), -1)
        out[form] = {"before": len(doc["messages"]), "after": len(kept),
                     "turns_kept": sum(1 for m in kept[idx + 1:] if m.get("role") == "assistant"),
                     "tokens": (report.get("tokens_before"), report.get("tokens_after"))}
    return {"name": name, **out}


def long_run(args) -> str:
    """Issue 28: a 200-message autonomous run whose last ask sits at message 8 is compacted past
    message 100 (eval/fixtures.py ``autonomous``)."""
    messages = autonomous()
    ask = max(i for i, m in enumerate(messages) if m.get("role") == "user")
    _, report = compress_messages(messages, summarizer=ExtractiveSummarizer(), protect_last_n=args.protect_last_n,
                                  tail_token_budget=args.tail_tokens, max_summary_tokens=args.max_summary_tokens)
    if not report.get("compressed"):
        return f"{len(messages)} messages, last ask at {ask}: not compacted ({report.get('reason')})"
    return (f"{len(messages)} messages, last ask at {ask}: compacted [{report['start']}, {report['end']}) - "
            + ("past" if report["end"] > 100 else "NOT past") + " message 100")


# --- the tables ------------------------------------------------------------------------------

def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.0f} %"


def _cell(rows: list[dict], system: str, cat: str | None = None) -> str:
    cats = [cat] if cat else CATEGORIES
    return _pct(_fraction(r[system][c] for r in rows for c in cats))


def main_table(rows: list[dict]) -> list[str]:
    head = "| system | kept | " + " | ".join(LABELS[c] for c in CATEGORIES) + " | reduction (request) | reduction (middle) |"
    lines = [head, "|" + "---|" * (len(CATEGORIES) + 4)]
    for system in SYSTEMS:
        cells = [_cell(rows, system, c) for c in CATEGORIES]
        red = statistics.fmean(r[f"reduction:{system}"] for r in rows)
        mid = statistics.fmean(r[f"middle:{system}"] for r in rows)
        lines.append(f"| {SYSTEM_LABELS[system]} | **{_cell(rows, system)}** | " + " | ".join(cells)
                     + f" | {_pct(red)} | {_pct(mid)} |")
    counts = [sum(r["compress"][c][1] for r in rows) for c in CATEGORIES]
    lines.append(f"| probes | {sum(counts)} | " + " | ".join(map(str, counts)) + " | | |")
    return lines


def done_when(rows: list[dict]) -> str:
    """Issue 28's first "Done when" line, on these rows: compress keeps >= 65 % overall, every
    category >= 50 %, more than prune alone, at >= 60 % mean reduction (of the request), with 0
    summaries over budget."""
    kept = _fraction(r["compress"][c] for r in rows for c in CATEGORIES) or 0.0
    prune = _fraction(r["prune"][c] for r in rows for c in CATEGORIES) or 0.0
    weak = [f"{LABELS[c]} {_pct(v)}" for c in CATEGORIES
            if (v := _fraction(r["compress"][c] for r in rows)) is not None and v < 0.5]
    red = statistics.fmean(r["reduction:compress"] for r in rows)
    bound = statistics.fmean(r["reduction:bound"] for r in rows)
    pooled = 1 - sum(r["after:compress"] for r in rows) / max(sum(r["tokens"] for r in rows), 1)
    over = sum(r["over_budget"] for r in rows)
    checks = [(kept >= 0.65, f"kept {_pct(kept)} (>= 65 %)"),
              (not weak, "every category >= 50 %" + (f" (below: {', '.join(weak)})" if weak else "")),
              (kept > prune, f"more than prune alone ({_pct(kept)} vs {_pct(prune)})"),
              (red >= 0.6, f"mean reduction of the request {_pct(red)} (>= 60 %; at this cut head and tail "
                           f"alone allow {_pct(bound)}, an empty summary; over all tokens {_pct(pooled)})"),
              (over == 0, f"{over} summaries over budget")]
    return "; ".join(("yes: " if ok else "NO: ") + text for ok, text in checks)


def source_table(rows: list[dict]) -> list[str]:
    lines = ["| source | transcripts | probes | " + " | ".join(SYSTEMS) + " | compress reduction |",
             "|" + "---|" * (len(SYSTEMS) + 4)]
    for source in SOURCES:
        group = [r for r in rows if r["source"] == source]
        if not group:
            continue
        probes = sum(r["compress"][c][1] for r in group for c in CATEGORIES)
        red = statistics.fmean(r["reduction:compress"] for r in group)
        lines.append(f"| {source} | {len(group)} | {probes} | " + " | ".join(_cell(group, s) for s in SYSTEMS)
                     + f" | {_pct(red)} |")
    return lines


MIN_PROBES_R = 10  # a transcript with fewer probes moves its kept fraction by 10+ points a probe: noise


def _probes(r: dict) -> int:
    return sum(r["compress"][c][1] for c in CATEGORIES)


def correlation(rows: list[dict], key: str, min_probes: int = 0) -> str:
    pairs = [(r[key], r["kept:compress"]) for r in rows
             if r.get(key) is not None and r["kept:compress"] is not None
             and (not min_probes or _probes(r) >= min_probes)]
    if len(pairs) < 3:
        return f"n/a ({len(pairs)} transcripts)"
    try:
        return f"r = {statistics.correlation(*zip(*pairs)):.2f} over {len(pairs)} transcripts"
    except statistics.StatisticsError:  # one side is constant
        xs, ys = zip(*pairs)
        side, values = ("the report's figure", xs) if len(set(xs)) == 1 else ("the eval's figure", ys)
        return f"n/a ({side} is {_pct(values[0])} on all {len(pairs)} transcripts)"


def row_line(r: dict) -> str:
    kept = " ".join(f"{s}={_pct(_fraction(r[s].values()))}" for s in SYSTEMS)
    cats = " ".join(f"{c}={r['compress'][c][0]}/{r['compress'][c][1]}" for c in CATEGORIES)
    return (f"{r['name']} [{r['source']}, {r['split']}] msgs={r['messages']} cut={r['start']}-{r['end']} {kept} | "
            f"compress {cats} | red={_pct(r['reduction:compress'])} middle={_pct(r['middle:compress'])} "
            f"summary={r['summary_tokens']}/{r['budget']}"
            + (f" ledger={_pct(r['ledger'])}" if r.get("ledger") is not None else ""))


def report(rows: list[dict], skipped: list[dict], split: str, holdout: list[str], forms_rows: list[dict],
           args) -> str:
    out = [f"# make eval: what a successor keeps (split: {split}; {len(rows)} transcripts compacted, "
           f"{len(skipped)} with nothing compacted)", ""]
    out += main_table(rows) + [""] + source_table(rows) + [""]
    out.append(f"issue 28, done when: {done_when(rows)}")
    over = sum(r["over_budget"] for r in rows)
    out.append(f"summaries over budget (report summary_budget): {over} of {len(rows)}")
    if any("ledger" in r for r in rows):
        out.append(f"drop_ledger survived/facts vs eval compress kept: {correlation(rows, 'ledger', MIN_PROBES_R)} "
                   f"with >= {MIN_PROBES_R} probes; {correlation(rows, 'ledger')} in all")
    else:
        out.append("drop_ledger survived/facts vs eval compress kept: n/a (compress's report has no drop_ledger)")
    if any(r.get("coverage") is not None for r in rows):
        out.append(f"summary_coverage (named/total) vs eval compress kept: {correlation(rows, 'coverage')}")
    out.append(f"long autonomous run (eval/fixtures.py autonomous): {long_run(args)}")
    if forms_rows:
        out += ["", "| same log, compressed as (the longest transcripts) | OpenAI: messages kept | Anthropic: messages "
                    "kept | assistant turns after the summary (OpenAI / Anthropic) | cut within one turn |",
                "|---|---|---|---|---|"]
    for f in forms_rows:
        o, a = f.get("openai") or {}, f.get("anthropic") or {}
        if "error" in o or "error" in a:
            out.append(f"| {f['name']} | {o.get('error', '')} | {a.get('error', '')} | | |")
            continue
        out.append(f"| {f['name']} | {o['after']}/{o['before']} | {a['after']}/{a['before']} | "
                   f"{o['turns_kept']} / {a['turns_kept']} | {'yes' if abs(o['turns_kept'] - a['turns_kept']) <= 1 else 'no'} |")
    if args.lost:
        out += ["", "lost by compress (first of each category, per transcript):"]
        for r in rows:
            for cat in CATEGORIES:
                for kind, probe in r["lost"].get(cat, [])[:args.lost]:
                    out.append(f"  {r['name']} {cat}/{kind}: {probe}")
    if holdout:
        out += ["", f"held out ({len(holdout)} transcripts, sha256 of '{SPLIT_SALT}:name' < {HOLDOUT_SHARE}; "
                    "not evaluated with --split tune, never read while tuning): " + ", ".join(holdout)]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", action="append", default=[],
                        help="a directory of agent logs (any format hermesctx reads); repeat it to pool several "
                             "(each transcript is then named DIR-NAME/PATH)")
    parser.add_argument("--exclude", action="append", default=[], help="skip paths containing this (repeatable)")
    parser.add_argument("--split", choices=("tune", "holdout", "all"), default="tune",
                        help="tune (default): the files not held out; holdout: only the held-out ~40 %%")
    parser.add_argument("--protect-last-n", type=int, default=10)
    parser.add_argument("--tail-tokens", type=int, default=4000)
    parser.add_argument("--max-summary-tokens", type=int, default=10_000)
    parser.add_argument("--rows", action="store_true", help="one line per transcript too")
    parser.add_argument("--lost", type=int, default=0, metavar="N",
                        help="list up to N probes compress lost per category and transcript")
    parser.add_argument("--json", metavar="FILE", help="also write every row (lost probes included) as JSON")
    parser.add_argument("--forms", type=int, default=2, metavar="N",
                        help="compress the N longest transcripts as OpenAI and as Anthropic messages (0: none)")
    args = parser.parse_args(argv)

    if args.dir:
        sources = {}
        for folder in args.dir:
            root = Path(folder)
            found = load_dir(root, list_dir(root, args.exclude))
            sources.update(found if len(args.dir) == 1 else {f"{root.name}/{n}": v for n, v in found.items()})
    else:
        sources = {name: (name, messages) for name, messages in fixture_transcripts().items()}
    holdout = [n for n in sources if held_out(n)]
    sources = {n: v for n, v in sources.items() if args.split == "all" or (n in holdout) == (args.split == "holdout")}
    rows, skipped = [], []
    for name, (_rel, messages) in sources.items():
        row = evaluate(name, messages, args)
        row.update(source=source_of(name), split="holdout" if held_out(name) else "tune")
        (skipped if "skip" in row else rows).append(row)
    if not rows:
        print("no transcript had a middle to compress", file=sys.stderr)
        return 1
    longest = sorted(rows, key=lambda r: -r["messages"])[:args.forms]
    forms_rows = [forms(r["name"], sources[r["name"]][1], args) for r in longest]
    if args.rows:
        for r in rows:
            print(row_line(r))
        for r in skipped:
            print(f"{r['name']}: skipped ({r['skip']})")
        print()
    print(report(rows, skipped, args.split, holdout if args.split != "holdout" else [], forms_rows, args))
    if args.json:
        Path(args.json).write_text(json.dumps({"split": args.split, "rows": rows, "skipped": skipped,
                                               "forms": forms_rows, "holdout": holdout}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
