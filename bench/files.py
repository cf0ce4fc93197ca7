"""Many small files in one call: ``hermesctx estimate FILE...`` over 1,000 small transcripts
against ``hermesctx estimate --jsonl batch.jsonl`` over their concatenation (issue 19's target:
within 1.5x), for the exact method (the default) and ``--method rough``.

    python bench/files.py                 # 1,000 files, best of 5 runs each
    python bench/files.py --files 200 --repeat 5

Writes the transcripts into bench/data/files-<N>/ and their concatenation as one JSONL batch
beside them, runs both command lines (stdout and stderr to /dev/null, as a user's shell
would with a redirect), interleaved so load on the machine hits both alike, timing each run's
CPU (``--clock wall`` for wall time), prints the ratios
and writes bench/results/files.json. The size arguments of ``make bench`` are accepted and
ignored.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from run import hermesctx_argv  # noqa: E402
from startup import once, write_results  # noqa: E402

TARGET = 1.5
WORDS = ("list", "the", "files", "in", "src", "then", "run", "tests", "fix", "failing", "import",
         "check", "config", "read", "error", "path", "module", "value", "done", "next")


def transcript(rng: random.Random, n: int) -> list[dict]:
    """A small agent transcript: system, user, a few tool rounds, an answer (about 1-2 KB)."""
    def text(k: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(k))

    messages = [{"role": "system", "content": f"You are agent {n}. " + text(12)},
                {"role": "user", "content": text(rng.randint(5, 20))}]
    for call in range(rng.randint(1, 3)):
        call_id = f"call_{n}_{call}"
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": "terminal", "arguments": json.dumps({"command": text(3)})}}]})
        messages.append({"role": "tool", "tool_call_id": call_id, "content": text(rng.randint(10, 60))})
    messages.append({"role": "assistant", "content": text(rng.randint(5, 30))})
    return messages


def write_data(folder: str, count: int, seed: int) -> tuple[list[str], str]:
    """The ``count`` files and the batch (written once per count and seed)."""
    os.makedirs(folder, exist_ok=True)
    paths = [os.path.join(folder, f"t{n:05d}.json") for n in range(count)]
    batch = folder + ".jsonl"
    if os.path.exists(batch) and all(os.path.exists(p) for p in paths):
        return paths, batch
    rng = random.Random(seed)
    with open(batch + ".tmp", "w", encoding="utf-8") as lines:
        for n, path in enumerate(paths):
            doc = transcript(rng, n)
            with open(path, "w", encoding="utf-8") as handle:
                json.dump(doc, handle)
            lines.write(json.dumps(doc) + "\n")
    os.replace(batch + ".tmp", batch)
    return paths, batch


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                        help="CPU time of each run (default; see bench/startup.py) or wall time")
    parser.add_argument("--out", default=os.path.join(HERE, "results", "files.json"))
    args, _ = parser.parse_known_args(argv)  # make bench passes --size-mb and --only to every script

    paths, batch = write_data(os.path.join(HERE, "data", f"files-{args.files}"), args.files, args.seed)
    exe = hermesctx_argv()
    # bytecode as an install has it (see bench/startup.py)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE" and not k.startswith("HERMESCTX_")}
    size = sum(os.path.getsize(p) for p in paths)
    print(f"estimate over {len(paths)} files ({size / 1e6:.1f} MB) vs the same as one JSONL batch, "
          f"best of {args.repeat}, {args.clock} time; load average {os.getloadavg()[0]:.2f}")
    rows, failed = [], False
    for label, method in (("exact (default)", []), ("--method rough", ["--method", "rough"])):
        files_argv = [*exe, "estimate", *method, *paths]
        batch_argv = [*exe, "estimate", *method, "--jsonl", batch]
        once(batch_argv, env)  # warm: bytecode, the encoding's cache
        files_t, batch_t = [], []
        for _ in range(args.repeat):
            elapsed, files_status = once(files_argv, env, args.clock)
            files_t.append(elapsed)
            elapsed, batch_status = once(batch_argv, env, args.clock)
            batch_t.append(elapsed)
        ratio = min(files_t) / min(batch_t)
        ok = ratio <= TARGET and files_status in (0, 1) and batch_status in (0, 1)
        failed = failed or files_status not in (0, 1) or batch_status not in (0, 1)
        print(f"  {label:16} files {min(files_t) * 1000:7.0f} ms  batch {min(batch_t) * 1000:7.0f} ms  "
              f"{ratio:5.2f}x  {'ok' if ok else f'OVER {TARGET}x'}"
              + ("" if files_status in (0, 1) and batch_status in (0, 1)
                 else f"  FAILED (exit {files_status}/{batch_status})"))
        rows.append({"case": label, "files_ms": round(min(files_t) * 1000, 1),
                     "batch_ms": round(min(batch_t) * 1000, 1), "ratio": round(ratio, 2), "target": TARGET,
                     "exit": max(files_status, batch_status)})
    write_results(args.out, {"files": len(paths), "bytes": size, "repeat": args.repeat, "clock": args.clock,
                             "load": round(os.getloadavg()[0], 2), "cases": rows})
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
