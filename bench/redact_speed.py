"""Timing of the secret redactor: every rule is bounded, so the time grows linearly with the
text, pathological inputs included (long word runs, repeated key names, unterminated key
blocks). Not a test: prints milliseconds per input at two sizes, and their ratio (about 2 when
linear, about 4 when quadratic).

    .venv/bin/python bench/redact_speed.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from redaction_corpus import BENIGN, SECRETS  # noqa: E402

from hermesctx.redact import redact  # noqa: E402

CASES = {
    "word run": lambda n: "x" * n,
    "key names, no '='": lambda n: "tokentoken" * (n // 10),
    "dotted run": lambda n: "token " + "a." * (n // 2) + "=x",
    "key then colons": lambda n: "db_password" + "_" * (n // 2) + ":" + "A" * (n // 2),
    "BEGIN blocks, no END": lambda n: "-----BEGIN RSA PRIVATE KEY-----" * (n // 31),
    "mysql dashes": lambda n: "mysql " + "-" * n + "p",
    "aws base64": lambda n: "aws " + "A1b/" * (n // 4),
    "corpus text": lambda n: ("\n".join(BENIGN + [t for t, _ in SECRETS]) + "\n") * max(1, n // 4000),
}


def best(fn, text: str, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(text, force=True)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    small, large = 20_000, 40_000
    print(f"{'input':24} {'20 KB ms':>9} {'40 KB ms':>9} {'ratio':>6}")
    for name, make in CASES.items():
        a, b = best(redact, make(small)), best(redact, make(large))
        print(f"{name:24} {a * 1000:9.2f} {b * 1000:9.2f} {b / a if a else 0:6.2f}")


if __name__ == "__main__":
    main()
