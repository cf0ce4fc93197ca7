"""Speed-up of ``hermesctx run --jobs N`` over one process, on the benchmark batch.

    python bench/jobs.py                 # 200 MB batch, jobs 1 and every CPU count up to 4
    python bench/jobs.py --size-mb 20 --jobs 1 --jobs 2
    python bench/jobs.py --jobs 2 --dask local:2    # run --dask against run --jobs (make bench-dask)

Runs ``hermesctx -q run --pipeline PIPELINE --jobs N FILE > /dev/null`` for each N (best of
``--repeat``), checks that every N gives the same output bytes (sha256) as one job, prints the
speed-up and writes bench/results/jobs.json. Each ``--dask ADDRESS`` runs ``run --dask ADDRESS``
after them, checked against the first ``--jobs`` run the same way.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from gen import default_path, generate  # noqa: E402
from run import hermesctx_argv  # noqa: E402

PIPELINE = "prune,compress,sanitize,cache-mark"


def run_jobs(path: str, pipeline: str, jobs: int | str) -> tuple[float, str, int]:
    """``run --jobs N`` (an int), or ``run --dask ADDRESS`` (a str): time, output sha256, exit status."""
    digest = hashlib.sha256()
    start = time.perf_counter()
    how = ["--jobs", str(jobs)] if isinstance(jobs, int) else ["--dask", jobs]
    proc = subprocess.Popen([*hermesctx_argv(), "-q", "run", "--pipeline", pipeline, *how, path],
                            stdout=subprocess.PIPE)
    for chunk in iter(lambda: proc.stdout.read(1 << 20), b""):
        digest.update(chunk)
    status = proc.wait()
    return time.perf_counter() - start, digest.hexdigest(), status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=200)
    parser.add_argument("--seed", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--jobs", type=int, action="append", default=None)
    parser.add_argument("--dask", action="append", default=[], metavar="ADDRESS")
    parser.add_argument("--pipeline", default=PIPELINE)
    parser.add_argument("--out", default=os.path.join(HERE, "results", "jobs.json"))
    parser.add_argument("--data", default=None)
    args, _ = parser.parse_known_args(argv)  # `make bench BENCH_ARGS=...` also passes run.py's options

    path = default_path(args.size_mb, args.seed, args.data)
    if not os.path.exists(path):
        generate(path, args.size_mb, args.seed)
    mb = os.path.getsize(path) / 1e6
    jobs_list = args.jobs or sorted({1, *range(2, min(os.cpu_count() or 1, 4) + 1)})
    print(f"run --pipeline {args.pipeline} on {os.path.basename(path)} ({mb:.1f} MB), {os.cpu_count()} CPUs")
    rows, first = [], None
    for jobs in [*jobs_list, *args.dask]:
        best, digest, status = None, "", 0
        for _ in range(args.repeat):
            elapsed, digest, status = run_jobs(path, args.pipeline, jobs)
            best = elapsed if best is None else min(best, elapsed)
        first = first or (best, digest)
        same = digest == first[1]
        speedup = first[0] / best
        label = f"--jobs {jobs:<3}" if isinstance(jobs, int) else f"--dask {jobs}"
        print(f"{label} {best:8.2f} s {mb / best:8.1f} MB/s  x{speedup:.2f}  "
              f"{'same output' if same else 'OUTPUT DIFFERS'}{'' if status == 0 else f'  exit {status}'}")
        rows.append({("jobs" if isinstance(jobs, int) else "dask"): jobs, "seconds": round(best, 3), "mb_per_s": round(mb / best, 2),
                     "speedup": round(speedup, 3), "same_output": same, "exit": status})
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump({"input": os.path.basename(path), "mb": round(mb, 2), "pipeline": args.pipeline, "runs": rows,
                   "cpus": os.cpu_count(), "python": platform.python_version(),
                   "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, handle, indent=2)
        handle.write("\n")
    print(f"wrote {args.out}")
    return 0 if all(r["same_output"] and r["exit"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
