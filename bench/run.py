"""Throughput of the streaming stages against a bare orjson loads+dumps of the same file.

    python bench/run.py                  # 200 MB batch (generated once into bench/data/)
    python bench/run.py --size-mb 20     # a quick run
    python bench/run.py --only spill --repeat 1

The baseline runs in this process: for every line, ``orjson.dumps(orjson.loads(line))``; it
is run again before every run of a stage, and each stage's ratio is to the best baseline
around it, in CPU time (user + system of the command, ``--clock wall`` for wall-clock): on a
shared machine the load delays the two unequally.
Every stage runs through the real CLI path, ``hermesctx [-q] <cmd> FILE > /dev/null`` in a
subprocess, best of ``--repeat`` (7; an untargeted stage slower than 10 s runs once), with
the peak RSS of the child. Commands that do not exist yet are skipped. Prints MB/s and the
ratio stage/baseline, then the "Done when" table of issue 19 (:data:`DONE_WHEN`: one row per
target, measured here or by another script, whose rows say so), and writes
bench/results/latest.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

import orjson

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from gen import default_path, generate  # noqa: E402

from hermesctx import registry  # noqa: E402

SLOW = 10.0  # seconds: an untargeted stage this slow is run once, not best of N
# (name, argv after `hermesctx`, quiet, target ratio or None); {dir} is a fresh spill directory
# for every run. Every pipeline stage of hermesctx.registry is measured, with --quiet, and
# with the arguments of STAGE_ARGS; "prune" also keeps its default report line on stderr (what a
# user sees).
STAGE_ARGS = {"spill": ("spill", ["--dir", "{dir}"]),
              "compress": ("compress --summarizer extractive", ["--summarizer", "extractive"])}
TARGETS = {"prune": 0.5, "sanitize": 0.8, "cache-mark": 0.6, "estimate --method rough": 0.5}
STAGES = [
    ("prune", ["prune"], False, TARGETS["prune"]),
    *((f"{name} -q" if name == "prune" else STAGE_ARGS.get(name, (name,))[0],
       [name, *STAGE_ARGS.get(name, (name, []))[1]], True, None if name == "prune" else TARGETS.get(name))
      for name in registry.names(registry.STAGES)),
    ("estimate --method rough", ["estimate", "--method", "rough"], True, TARGETS["estimate --method rough"]),
]
# Issue 19's "Done when", one row each: (what, target as text, where it is measured): a stage of
# this run ("stage:<name>"), a case of bench/startup.py ("startup:<case>"; "startup:commands" is
# the slowest of its no-LLM commands), read from its last bench/results/startup.json (`make
# bench` runs it first), bench/files.py's slowest case ("files:", from bench/results/files.json),
# or another script that prints its own table (bench/<name>.py), or none
# yet (the row says "not measured"). The start-up row has issue 32's target (the json module reads
# a tiny input, no copy of its scanner).
DONE_WHEN = [
    ("hermesctx --help vs bare python start", "<= 1.5x", "startup:--help"),
    ("slowest no-LLM command on a tiny input vs bare python", "<= 3.5x", "startup:commands"),
    ("prune (default report) vs orjson round trip", ">= 0.5x", "stage:prune"),
    ("sanitize vs orjson round trip", ">= 0.8x", "stage:sanitize"),
    ("cache-mark vs orjson round trip", ">= 0.6x", "stage:cache-mark"),
    ("estimate --method rough vs orjson round trip", ">= 0.5x", "stage:estimate --method rough"),
    ("estimate over 1,000 files vs one JSONL batch", "<= 1.5x", "files:"),
    ("compress extractive time/message, 100k vs 1k", "<= 1.5x", "summary_scale"),
]


def hermesctx_argv() -> list[str]:
    exe = shutil.which("hermesctx", path=os.path.dirname(sys.executable))
    return [exe] if exe else [sys.executable, "-m", "hermesctx"]


def exists(cmd: str) -> bool:
    proc = subprocess.run([*hermesctx_argv(), cmd, "--help"], capture_output=True)
    return proc.returncode == 0


def baseline(path: str, clock=time.perf_counter) -> float:
    start = clock()
    with open(path, "rb") as handle:
        for line in handle:
            orjson.dumps(orjson.loads(line))
    return clock() - start


def run_stage(argv: list[str], path: str, quiet: bool = True,
              env: dict | None = None) -> tuple[float, int, str, float, float]:
    """One run: seconds, exit status, the end of stderr, the peak RSS in MiB and the CPU seconds
    (user + system; os.wait4 gives the child's own resource usage: memory that grew with the
    batch would show here)."""
    spill_dir = tempfile.mkdtemp(prefix="hermesctx-bench-")
    try:
        args = [a.replace("{dir}", spill_dir) for a in argv]
        with open(os.devnull, "wb") as null, tempfile.TemporaryFile() as err:
            start = time.perf_counter()
            proc = subprocess.Popen([*hermesctx_argv(), *(["--quiet"] if quiet else []), *args, path], stdout=null, stderr=err,
                                    env=env)
            _, wait_status, usage = os.wait4(proc.pid, 0)
            elapsed = time.perf_counter() - start
            proc.returncode = os.waitstatus_to_exitcode(wait_status)
            err.seek(0)
            tail = err.read().decode(errors="replace").strip()[-300:]
        return elapsed, proc.returncode, tail, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime
    finally:
        shutil.rmtree(spill_dir, ignore_errors=True)


def done_when_rows(stages: list[dict], results_dir: str = os.path.join(HERE, "results")) -> list[dict]:
    """The rows of :data:`DONE_WHEN` with what was measured: this run's stages, or the latest
    report of bench/startup.py."""
    by_stage = {s["stage"]: s for s in stages if not s.get("skipped")}
    try:
        with open(os.path.join(results_dir, "startup.json"), encoding="utf-8") as handle:
            cases = [c for c in json.load(handle)["cases"] if c.get("exit") in (0, 1)]
    except (OSError, ValueError, KeyError, TypeError):
        cases = []
    rows = []
    for what, target, source in DONE_WHEN:
        row = {"what": what, "target": target, "source": source, "value": None, "ok": None}
        kind, _, name = source.partition(":")
        if kind == "stage" and name in by_stage and by_stage[name].get("exit") in (0, 1):
            stage = by_stage[name]
            row.update(value=stage["ratio"], ok=stage["ratio"] >= stage["target"],
                       peak_rss_mib=stage["peak_rss_mib"])
        elif kind == "files":
            worst = _worst_files_case(results_dir)
            if worst is not None:
                row.update(value=worst["ratio"], ok=worst["ratio"] <= worst["target"], case=worst["case"])
        elif kind == "startup":
            found = [c for c in cases if (c.get("case") == name if name != "commands"
                                          else c.get("target") == 2.5)]
            if found:
                worst = max(found, key=lambda c: c["ratio"])
                row.update(value=worst["ratio"], ok=all(c["ratio"] <= c["target"] for c in found))
                if name == "commands":
                    row["case"] = worst["case"]
        rows.append(row)
    return rows


def _worst_files_case(results_dir: str) -> dict | None:
    try:
        with open(os.path.join(results_dir, "files.json"), encoding="utf-8") as handle:
            cases = [c for c in json.load(handle)["cases"] if c.get("exit") in (0, 1)]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return max(cases, key=lambda c: c["ratio"]) if cases else None


def print_done_when(rows: list[dict]) -> None:
    print("\nDone when (issue 19)")
    for row in rows:
        if row["value"] is None:
            script = os.path.join("bench", f"{row['source'].rstrip(':')}.py")
            verdict = (f"see {script}" if os.path.exists(os.path.join(os.path.dirname(HERE), script))
                       else "not measured")
            value = "-"
        else:
            verdict = "ok" if row["ok"] else "MISSED"
            value = f"{row['value']:.2f}x"
        extra = f" ({row['case']})" if "case" in row else ""
        if "peak_rss_mib" in row:
            extra += f" {row['peak_rss_mib']:.0f} MiB peak"
        print(f"  {row['what']:54} {row['target']:>8} {value:>7}  {verdict}{extra}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=200)
    parser.add_argument("--seed", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=7,
                        help="runs of each stage, best of (a shared machine's timing noise is often "
                             "10-20 %% per run: fewer runs read lower)")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                        help="ratios of CPU time (default: a loaded machine delays the command "
                             "and the baseline unequally) or of wall-clock time")
    parser.add_argument("--only", action="append", default=None, help="run only this stage (repeatable)")
    parser.add_argument("--out", default=os.path.join(HERE, "results", "latest.json"))
    parser.add_argument("--data", default=None, help="directory for the generated batch (default bench/data)")
    args = parser.parse_args(argv)

    path = default_path(args.size_mb, args.seed, args.data)
    if not os.path.exists(path):
        print(f"generating {path} ...", file=sys.stderr)
        generate(path, args.size_mb, args.seed)
    mb = os.path.getsize(path) / 1e6
    with open(path, "rb") as handle:
        lines = sum(1 for line in handle if line.strip())
    print(f"input: {path} ({mb:.1f} MB, {lines} transcripts)")

    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    base = min(baseline(path) for _ in range(args.repeat))
    base_rate = mb / base
    print(f"{'baseline (orjson loads+dumps)':32} {base:8.2f} s {base_rate:9.1f} MB/s")

    results = []
    work = tempfile.mkdtemp(prefix="hermesctx-bench-")
    # bytecode as an install has it (with PYTHONDONTWRITEBYTECODE every run would compile the
    # modules again), kept in a folder of this run: a warm-up run of each stage writes it
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = os.path.join(work, "pycache")
    # the warm-up input: 2 MB of JSON Lines, so the
    # warm-up imports (and compiles) orjson as the batch's runs do
    warm = os.path.join(work, "warm.jsonl")
    with open(warm, "w", encoding="utf-8") as handle:
        handle.write((json.dumps([{"role": "user", "content": "hi " * 330}]) + "\n") * 2_000)
    for name, stage_argv, quiet, target in STAGES:
        if args.only and name.split()[0] not in args.only and name not in args.only:
            continue
        run_stage(stage_argv, warm, quiet, env)
        if not exists(stage_argv[0]):
            print(f"{name:32} skipped (no such command yet)")
            results.append({"stage": name, "skipped": True})
            continue
        times, cpu_times, status, err, peak = [], [], 0, "", 0.0
        stage_base = float("inf")  # the baseline is measured again beside every run: on a shared
        for _ in range(args.repeat):  # machine the load changes between stages
            stage_base = min(stage_base, baseline(path, clock))
            elapsed, status, err, rss, cpu = run_stage(stage_argv, path, quiet, env)
            times.append(elapsed)
            cpu_times.append(cpu)
            peak = max(peak, rss)
            if status not in (0, 1):  # 1: a check found something; anything else is a failure
                break
            if target is None and elapsed > SLOW:
                break  # one run of a slow, untargeted stage is enough
        best = min(times)
        rate = mb / best
        ratio = stage_base / (min(cpu_times) if args.clock == "cpu" else best)
        mark = ""
        if target is not None:
            mark = "ok" if ratio >= target else f"UNDER {target}x"
        if status not in (0, 1):
            mark = f"FAILED (exit {status}: {err})"
        print(f"{name:32} {best:8.2f} s {min(cpu_times):6.2f} s cpu {rate:9.1f} MB/s {ratio:6.2f}x"
              f" {peak:7.0f} MiB peak  {mark}")
        results.append({"stage": name, "argv": stage_argv, "seconds": round(best, 3),
                        "peak_rss_mib": round(peak, 1),
                        "all_seconds": [round(t, 3) for t in times],
                        "cpu_seconds": [round(t, 3) for t in cpu_times], "mb_per_s": round(rate, 2),
                        "ratio": round(ratio, 3), "clock": args.clock,
                        "baseline_seconds": round(stage_base, 3),
                        "exit": status,
                        "target": target, "quiet": quiet})
    shutil.rmtree(work, ignore_errors=True)
    done_when = done_when_rows(results)
    print_done_when(done_when)

    report = {
        "input": os.path.basename(path), "mb": round(mb, 2), "transcripts": lines,
        "seed": args.seed, "repeat": args.repeat,
        "baseline": {"seconds": round(base, 3), "mb_per_s": round(base_rate, 2),
                     "what": "orjson.loads + orjson.dumps of every line, in one process"},
        "stages": results, "done_when": done_when,
        "python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count(),
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(report, handle, indent=2)
        handle.write("\n")
    print(f"wrote {args.out}")
    failed = [r for r in results if r.get("exit") not in (None, 0, 1)]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
