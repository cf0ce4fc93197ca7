"""Seeded random agent transcripts for differential and invariant tests.

Tool-call heavy OpenAI-shaped conversations: every stub tool of spec 20.2, duplicate results,
list / dict / null contents, Codex ``call_id``s, missing ids and names, orphans of both kinds,
long arguments, images, reasoning fields.
"""

from __future__ import annotations

import json
import random

TOOLS = ["terminal", "read_file", "write_file", "search_files", "patch", "browser_navigate",
         "browser_click", "browser_snapshot", "browser_back", "web_search", "web_extract",
         "delegate_task", "execute_code", "skill_view", "skills_list", "vision_analyze", "memory",
         "todo", "clarify", "text_to_speech", "cronjob", "process", "my_custom_tool", "mcp_x_search"]

WORDS = ["config.py", "npm test", "src/app.py", "é", "你好", "😀", "error", "PASS", "line\n",
         "'quoted'", '"dq"', "\\", "\t", "https://a.example/x", "exit", "{", "}", " "]


class TranscriptGen:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.n = 0

    def text(self, lo: int = 0, hi: int = 40) -> str:
        return "".join(self.rng.choice(WORDS) for _ in range(self.rng.randint(lo, hi)))

    def big(self) -> str:
        r = self.rng.random()
        if r < 0.3:
            return self.text(0, 10)
        if r < 0.5:
            return "x" * self.rng.choice([199, 200, 201, 500])
        if r < 0.6:
            return json.dumps({"output": self.text(20, 120), "exit_code": self.rng.choice([0, 1, -2])})
        if r < 0.7:
            return json.dumps({"total_count": self.rng.randint(0, 50), "matches": self.text(40, 100)})
        return self.text(30, 300)

    def args(self, tool: str) -> str:
        rng = self.rng
        pick = {
            "terminal": {"command": rng.choice(["npm test", "ls -la", "x" * 90, 42])},
            "read_file": {"path": rng.choice(["config.py", "src/app.py", None]), "offset": rng.choice([1, 120, None])},
            "write_file": {"path": "notes.md", "content": rng.choice(["a\nb\nc", "", 12345, "line\n" * 150])},
            "search_files": {"pattern": "compress", "path": rng.choice(["agent/", "."]), "target": rng.choice(["content", "files"])},
            "patch": {"path": "run.py", "old_string": "a" * rng.choice([10, 300]), "new_string": "b" * 300},
            "web_extract": {"urls": rng.choice([["https://a", "https://b"], [{"url": "https://c"}], "https://d", [7], []])},
            "delegate_task": {"goal": rng.choice(["short", "Investigate why the CI pipeline fails on the integration tests"])},
            "execute_code": {"code": rng.choice(["print(1)", "import os\nprint(os.listdir('.'))\nfor i in range(10):\n    print(i)"])},
            "memory": {"action": "add", "target": "user"},
        }.get(tool, {"alpha": self.text(0, 8), "beta": rng.choice([2, True, None, {"a": 1}, [1, 2]])})
        r = rng.random()
        if r < 0.05:
            return "not json"
        if r < 0.1:
            return ""
        return json.dumps(pick, separators=rng.choice([(", ", ": "), (",", ":")]))

    def call(self, codex: bool = False) -> dict:
        self.n += 1
        tool = self.rng.choice(TOOLS)
        call = {"id": f"fc_{self.n}" if codex else f"call_{self.n}", "type": "function",
                "function": {"name": tool, "arguments": self.args(tool)}}
        r = self.rng.random()
        if r < 0.04:
            del call["function"]["name"]
        elif r < 0.07:
            call["function"]["name"] = self.rng.choice([None, "", "  "])
        if codex:
            call["call_id"] = f"call_{self.n}"
        return call

    def result_content(self):
        r = self.rng.random()
        if r < 0.06:
            return [{"type": "text", "text": "Screenshot"}, {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}]
        if r < 0.09:
            return {"_multimodal": True, "content": [], "text_summary": self.rng.choice(["login page", None])}
        if r < 0.11:
            return None
        if r < 0.14:
            return [{"type": "text", "text": "t" * 500}]
        return self.big()

    def transcript(self, max_turns: int = 10) -> list:
        rng = self.rng
        msgs: list = []
        if rng.random() < 0.6:
            msgs.append({"role": "system", "content": "You are Hermes. " + self.text(0, 10)})
        results_pool: list = []
        for _ in range(rng.randint(1, max_turns)):
            msgs.append({"role": "user", "content": self.text(1, 15)})
            for _ in range(rng.randint(0, 3)):
                codex = rng.random() < 0.15
                calls = [self.call(codex) for _ in range(rng.randint(1, 3))]
                asst = {"role": "assistant", "content": rng.choice([None, "", "   ", "Checking.", self.text(0, 5)]),
                        "tool_calls": calls}
                if rng.random() < 0.1:
                    asst["reasoning_content"] = self.text(5, 30)
                msgs.append(asst)
                for call in calls:
                    if rng.random() < 0.1:
                        continue  # lost result: an orphan call
                    rid = call.get("call_id", call["id"]) if rng.random() < 0.9 else call["id"]
                    content = rng.choice(results_pool) if results_pool and rng.random() < 0.2 else self.result_content()
                    if isinstance(content, str):
                        results_pool.append(content)
                    msg = {"role": "tool", "tool_call_id": rid, "content": content}
                    if rng.random() < 0.03:
                        del msg["tool_call_id"]
                    msgs.append(msg)
                if rng.random() < 0.05:
                    msgs.append({"role": "tool", "tool_call_id": f"call_gone_{self.n}", "content": self.big()})
            msgs.append({"role": "assistant", "content": self.text(0, 20)})
        if rng.random() < 0.05:
            msgs.append({"role": "session_meta", "content": "x"})
        return msgs
