"""Start-up: each command on a tiny input, as a ratio to a bare ``python -c pass`` measured in
the same run (the targets: ``--help`` <= 1.5x, every no-LLM command <= 3.5x since issue 32:
the json module, not a copy of its scanner, reads a tiny input).

    python bench/startup.py              # median of 15 runs each
    python bench/startup.py --repeat 30 --importtime estimate

Runs the installed console script (``hermesctx`` beside this interpreter), its bytecode compiled
first as an install compiles it, with stdout and stderr to /dev/null, interleaving the baseline
with the commands so load on the machine hits both alike, and times each run's CPU (``--clock
wall`` for wall time). ``--importtime CMD`` prints the 15 slowest imports of one command
(``python -X importtime``). Writes bench/results/startup.json; the size arguments of
``make bench`` (--size-mb, --only) are accepted and ignored.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from run import STAGE_ARGS, hermesctx_argv  # noqa: E402

from hermesctx import registry  # noqa: E402

HELP_TARGET, COMMAND_TARGET = 1.5, 3.5
TINY = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "a.py b.py"},
        {"role": "assistant", "content": "two files"}]
USAGE = {"prompt_tokens": 100, "completion_tokens": 20, "prompt_tokens_details": {"cached_tokens": 64}}
# (name, argv after `hermesctx`, target); {tiny} {usage} {dir} are filled in
CASES = [
    ("--help", ["--help"], HELP_TARGET),
    ("estimate --help", ["estimate", "--help"], HELP_TARGET),
    ("--version", ["--version"], HELP_TARGET),
    # every pipeline stage of hermesctx.registry, with the arguments bench/run.py gives it
    *((STAGE_ARGS.get(name, (name,))[0], [name, *STAGE_ARGS.get(name, (name, []))[1], "{tiny}"], COMMAND_TARGET)
      for name in registry.names(registry.STAGES)),
    ("validate", ["validate", "{tiny}"], COMMAND_TARGET),
    ("normalize-usage", ["normalize-usage", "{usage}"], COMMAND_TARGET),
    ("convert --to anthropic", ["convert", "--to", "anthropic", "{tiny}"], COMMAND_TARGET),
    ("estimate --method rough", ["estimate", "--method", "rough", "{tiny}"], COMMAND_TARGET),
    ("estimate (exact: o200k load)", ["estimate", "{tiny}"], None),
]


def once(argv: list[str], env: dict | None = None, clock: str = "wall") -> tuple[float, int]:
    """Seconds of one run (wall, or the child's CPU: user + system) and its exit status."""
    with open(os.devnull, "wb") as null:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=null, stderr=null, env=env)
        _, wait_status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        status = os.waitstatus_to_exitcode(wait_status)
        return (usage.ru_utime + usage.ru_stime if clock == "cpu" else elapsed), status


def importtime(argv: list[str], env: dict, top: int = 15) -> list[str]:
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "hermesctx", *argv],
                          capture_output=True, text=True, env=env)
    rows = []
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            self_us, total_us, name = (p.strip() for p in line[len("import time:"):].split("|"))
            if self_us.isdigit():
                rows.append((int(total_us), int(self_us), name.strip()))
    rows.sort(reverse=True)
    return [f"{total / 1000:7.1f} ms total {own / 1000:6.1f} ms self  {name}" for total, own, name in rows[:top]]


def write_results(out: str, data: dict) -> None:
    """``data`` with where and when it was measured, as JSON to ``out`` (bench/results/)."""
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w", encoding="utf-8") as handle:
        json.dump({**data, "python": platform.python_version(), "cpus": os.cpu_count(),
                   "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, handle, indent=2)
        handle.write("\n")
    print(f"wrote {out}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--importtime", metavar="CMD", default=None,
                        help="print the slowest imports of this case (its name, e.g. prune) and exit")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                        help="CPU time of each run (default: on a shared machine, waiting for a core "
                             "inflates wall time, of the baseline and the commands unevenly) or wall time")
    parser.add_argument("--out", default=os.path.join(HERE, "results", "startup.json"))
    args, _ = parser.parse_known_args(argv)  # make bench passes --size-mb and --only to every script

    work = tempfile.mkdtemp(prefix="hermesctx-startup-")
    files = {"tiny": os.path.join(work, "tiny.json"), "usage": os.path.join(work, "usage.json"),
             "dir": os.path.join(work, "spill")}
    with open(files["tiny"], "w") as handle:
        json.dump(TINY, handle)
    with open(files["usage"], "w") as handle:
        json.dump(USAGE, handle)

    def fill(case_argv: list[str]) -> list[str]:
        return [a.format(**files) for a in case_argv]

    exe = hermesctx_argv()
    # bytecode as an install has it (pip compiles on install; with PYTHONDONTWRITEBYTECODE every
    # run here would compile the sources again, ~100 ms no user pays), kept in a folder of this
    # run, not beside the sources; a warm-up run of each case writes it (and the ranks cache)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = os.path.join(work, "pycache")
    once([sys.executable, "-c", "pass"], env)
    for _name, case_argv, _target in CASES:
        once([*exe, *fill(case_argv)], env)

    if args.importtime:
        case = next(c for c in CASES if c[0] == args.importtime or c[1][0] == args.importtime)
        print("\n".join(importtime(fill(case[1]), env)))
        return 0

    base_times: list[float] = []
    times: dict[str, list[float]] = {name: [] for name, _, _ in CASES}
    statuses: dict[str, int] = {}
    for _ in range(args.repeat):
        for name, case_argv, _target in CASES:
            base_times.append(once([sys.executable, "-c", "pass"], env, args.clock)[0])
            elapsed, status = once([*exe, *fill(case_argv)], env, args.clock)
            times[name].append(elapsed)
            statuses[name] = status
    base = statistics.median(base_times)
    print(f"median of {args.repeat} runs, {args.clock} time; load average {os.getloadavg()[0]:.2f}")
    print(f"{'python -c pass (baseline)':36} {base * 1000:7.1f} ms")
    results, failed = [], False
    for name, case_argv, target in CASES:
        median = statistics.median(times[name])
        ratio = median / base
        mark = "" if target is None else ("ok" if ratio <= target else f"OVER {target}x")
        if statuses[name] not in (0, 1):
            mark, failed = f"FAILED (exit {statuses[name]})", True
        print(f"{name:36} {median * 1000:7.1f} ms {ratio:6.2f}x  {mark}")
        results.append({"case": name, "argv": case_argv, "median_ms": round(median * 1000, 1),
                        "ratio": round(ratio, 2), "target": target, "exit": statuses[name]})
    write_results(args.out, {"baseline_ms": round(base * 1000, 1), "repeat": args.repeat, "clock": args.clock,
                             "load": round(os.getloadavg()[0], 2), "cases": results})
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
