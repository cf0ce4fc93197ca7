"""Make a seeded JSONL batch of realistic agent transcripts for the benchmark.

    python bench/gen.py                    # bench/data/batch-200mb.jsonl (~200 MB, seed 4)
    python bench/gen.py --size-mb 20 --seed 1 --out /tmp/b.jsonl

Tool-heavy coding sessions in OpenAI format (terminal, read_file, search_files, patch,
write_file, web_extract), a few huge tool outputs (100-400 K characters, what `spill` is for),
repeated file reads (what `prune` deduplicates), orphaned calls and results (what `sanitize`
repairs), large write_file/patch arguments, and some Anthropic Messages request bodies.
The same seed and size always give the same bytes.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
WORDS = ("budget context token model tail summary prune spill cache request response error "
         "value config path file test assert return import class def self None True False "
         "result message tool call id json list dict string offset limit index").split()
FILES = [f"src/{d}/{n}.py" for d in ("core", "api", "util", "cli", "io")
         for n in ("budget", "client", "parser", "render", "store", "retry", "auth", "cache")]


class Gen:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        r = self.rng
        # a pool of lines to draw from: generating every character one by one would be slow
        self.code = [("    " * r.randint(0, 3)) + " ".join(r.choice(WORDS) for _ in range(r.randint(2, 12)))
                     for _ in range(4000)]
        self.log = [f"{r.choice(FILES)}:{r.randint(1, 900)}: {r.choice(['PASSED', 'FAILED', 'ok', 'warning'])} "
                    + " ".join(r.choice(WORDS) for _ in range(r.randint(3, 15))) for _ in range(4000)]
        self.prose = [" ".join(r.choice(WORDS) for _ in range(r.randint(8, 30))).capitalize() + "."
                      for _ in range(2000)]
        self.n = 0

    def lines(self, pool: list, chars: int) -> str:
        out, total = [], 0
        r = self.rng
        while total < chars:
            line = pool[r.randrange(len(pool))]
            out.append(line)
            total += len(line) + 1
        return "\n".join(out)[:chars]

    def size(self) -> int:
        r = self.rng.random()
        if r < 0.015:
            return self.rng.randint(100_000, 400_000)  # spilled
        if r < 0.08:
            return self.rng.randint(10_000, 60_000)
        if r < 0.15:
            return self.rng.randint(0, 150)  # under prune's floor
        return self.rng.randint(300, 6_000)

    def call_id(self) -> str:
        self.n += 1
        return f"call_{self.rng.getrandbits(64):016x}{self.n}"

    def tool_round(self, reads: dict) -> tuple[list, list]:
        """One assistant turn with 1-4 tool calls, and its results."""
        r = self.rng
        calls, results = [], []
        for _ in range(1 if r.random() < 0.6 else r.randint(2, 4)):
            tool = r.choices(["terminal", "read_file", "search_files", "patch", "write_file", "web_extract"],
                             [30, 30, 12, 10, 8, 10])[0]
            path = r.choice(FILES)
            size = self.size()
            if tool == "terminal":
                args = {"command": r.choice(["pytest -q", "npm test", "git diff", "ls -la src", "make lint"])}
                content = json.dumps({"output": self.lines(self.log, size), "exit_code": r.choice([0, 0, 1])})
            elif tool == "read_file":
                args = {"path": path, "offset": 1, "limit": 500}
                if path in reads and r.random() < 0.5:
                    content = reads[path]  # the same file read again: a duplicate
                else:
                    content = self.lines(self.code, size)
                    reads[path] = content
            elif tool == "search_files":
                args = {"pattern": r.choice(WORDS), "path": "src"}
                content = self.lines(self.log, size)
            elif tool in ("patch", "write_file"):
                body = self.lines(self.code, r.choice([200, 900, 3_000, 12_000]))
                args = ({"path": path, "old_string": body[:len(body) // 2], "new_string": body}
                        if tool == "patch" else {"path": path, "content": body})
                content = json.dumps({"success": True, "path": path, "bytes_written": len(body)})
            else:
                args = {"urls": [f"https://example.com/{r.choice(WORDS)}"]}
                content = self.lines(self.prose, size)
            cid = self.call_id()
            calls.append({"id": cid, "type": "function",
                          "function": {"name": tool, "arguments": json.dumps(args)}})
            results.append({"role": "tool", "tool_call_id": cid, "name": tool, "content": content})
        return calls, results

    def openai(self) -> dict:
        r = self.rng
        msgs = [{"role": "system", "content": "You are a coding agent. " + " ".join(r.sample(self.prose, 5))},
                {"role": "user", "content": r.choice(self.prose)}]
        reads: dict = {}
        for _ in range(r.randint(3, 45)):
            calls, results = self.tool_round(reads)
            msgs.append({"role": "assistant", "content": r.choice(["", r.choice(self.prose)]), "tool_calls": calls})
            msgs.extend(results)
            if r.random() < 0.2:
                msgs.append({"role": "assistant", "content": r.choice(self.prose)})
                msgs.append({"role": "user", "content": r.choice(self.prose)})
        if r.random() < 0.12:  # orphans: a lost result, a result without its call
            tool_idx = [i for i, m in enumerate(msgs) if m["role"] == "tool"]
            if tool_idx:
                del msgs[r.choice(tool_idx)]
            msgs.insert(r.randint(2, len(msgs)), {"role": "tool", "tool_call_id": self.call_id(),
                                                   "content": "stale output " * r.randint(1, 40)})
        msgs.append({"role": "assistant", "content": r.choice(self.prose)})
        return {"model": r.choice(["claude-sonnet-4-5", "gpt-4o", "gemini-2.5-pro"]), "messages": msgs}

    def anthropic(self) -> dict:
        r = self.rng
        msgs = [{"role": "user", "content": r.choice(self.prose)}]
        reads: dict = {}
        for _ in range(r.randint(3, 30)):
            calls, results = self.tool_round(reads)
            msgs.append({"role": "assistant", "content": [{"type": "text", "text": r.choice(self.prose)}] + [
                {"type": "tool_use", "id": c["id"].replace("call_", "toolu_"), "name": c["function"]["name"],
                 "input": json.loads(c["function"]["arguments"])} for c in calls]})
            msgs.append({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": res["tool_call_id"].replace("call_", "toolu_"),
                 "content": res["content"]} for res in results]})
        msgs.append({"role": "assistant", "content": [{"type": "text", "text": r.choice(self.prose)}]})
        return {"model": "claude-sonnet-4-5", "max_tokens": 8192,
                "system": [{"type": "text", "text": r.choice(self.prose)}], "messages": msgs}

    def transcript(self) -> dict:
        return self.anthropic() if self.rng.random() < 0.15 else self.openai()


def generate(path: str, size_mb: float, seed: int) -> int:
    target = int(size_mb * 1_000_000)
    gen = Gen(seed)
    written = 0
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as out:
        while written < target:
            line = json.dumps(gen.transcript(), ensure_ascii=False, separators=(",", ":")) + "\n"
            out.write(line)
            written += len(line.encode("utf-8"))
    os.replace(tmp, path)
    return written


def default_path(size_mb: float, seed: int, directory: str | None = None) -> str:
    return os.path.join(directory or os.path.join(HERE, "data"), f"batch-{size_mb:g}mb-seed{seed}.jsonl")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=200)
    parser.add_argument("--seed", type=int, default=4)
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    path = args.out or default_path(args.size_mb, args.seed)
    n = generate(path, args.size_mb, args.seed)
    print(f"{path}: {n / 1e6:.1f} MB", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
