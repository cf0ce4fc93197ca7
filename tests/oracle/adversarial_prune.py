"""Seeded adversarial OpenAI-shaped transcripts for the prune / sanitize differential tests.

Where :mod:`transcripts` builds plausible agent sessions, this generator aims at the corners:
content that is ``None`` / ``""`` / a number / an object / a list of odd parts (images of every
kind, unknown types, parts without text, bare strings and numbers); tool results whose
content is a list or a ``_multimodal`` envelope; tool calls without ``function`` or ``name``,
with object / non-JSON / huge nested arguments, duplicated ids, ``call_id`` only, whitespace
around ids; tool messages with a missing / null / blank / numeric ``tool_call_id``; roles
outside the usual four; extra keys everywhere; identical big results on both sides of the
tail; results of exactly 199 / 200 / 201 characters; terminal output with exit codes; stray
Anthropic blocks inside OpenAI transcripts.

Every transcript is valid JSON (no NaN, no lone surrogates) and made only of message objects.
``hermes_safe=True`` (the default) avoids the few shapes on which Hermes 0.19.0 itself raises
(a numeric or null ``arguments`` / ``function`` outside the tail, numeric ids in the pre-API
sanitizer, integer ``text`` in a part); ``hermes_safe=False`` allows them, for tests that only
check that hermesctx does not crash.
"""

from __future__ import annotations

import json
import random
from typing import Any

STUB_TOOLS = ["terminal", "read_file", "write_file", "search_files", "patch", "browser_navigate",
              "browser_click", "browser_snapshot", "browser_type", "browser_scroll", "browser_vision",
              "browser_back", "browser_press", "web_search", "web_extract", "delegate_task",
              "execute_code", "skill_view", "skills_list", "skill_manage", "vision_analyze", "memory",
              "todo", "clarify", "text_to_speech", "cronjob", "process", "mcp_github_search", "my_tool"]

PIECES = ["a", "config.py", "npm test", "é", "你好", "😀", "🏳️‍🌈", "\u200b", "\\", "\\n", "\n", "\r\n",
          "\t", "'", '"', "{", "}", "exit_code", "total_count", " ", "  ", "PASS", "x" * 17,
          "https://a.example/x?q=1", "\u2014", "ß", "\x00", "\x7f", "\u2028"]

PLACEHOLDER = "[Old tool output cleared to save context space]"
DUPLICATE = "[Duplicate tool output — same content as a more recent call]"


class AdversarialGen:
    def __init__(self, seed: int, *, hermes_safe: bool = True):
        self.rng = random.Random(seed)
        self.safe = hermes_safe
        self.n = 0
        self.ids: list = []  # ids handed out so far (for duplicates and cross references)
        self.pool: list = []  # big results, reused for dedup across the tail boundary

    # --- scalars ---------------------------------------------------------------------------

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def text(self, lo: int = 0, hi: int = 30) -> str:
        return "".join(self.rng.choice(PIECES) for _ in range(self.rng.randint(lo, hi)))

    def sized(self, n: int) -> str:
        """A string of exactly ``n`` code points (astral emoji count as one)."""
        base = self.rng.choice(["x", "é", "😀", "ab\n", "你", "line\n", " "])
        return (base * (n // len(base) + 1))[:n]

    def scalar(self) -> Any:
        return self.rng.choice([0, 1, -7, 2.5, 1e16, 10 ** 20, True, False, None, "", "s", "  "])

    def nested(self, depth: int = 0) -> Any:
        r = self.rng.random()
        if depth > 3 or r < 0.35:
            return self.rng.choice([self.text(0, 8), self.sized(self.rng.choice([199, 200, 201, 260, 700])),
                                    self.scalar(), self.scalar()])
        if r < 0.7:
            return {self.rng.choice(["k", "path", "content", "é", "", "x y", "url", f"k{depth}"]) + str(i):
                    self.nested(depth + 1) for i in range(self.rng.randint(0, 4))}
        return [self.nested(depth + 1) for _ in range(self.rng.randint(0, 4))]

    # --- tool calls ------------------------------------------------------------------------

    def tool_args(self, tool: Any) -> dict:
        rng = self.rng
        common = {
            "terminal": {"command": rng.choice(["npm test", "ls -la", "x" * 81, "é" * 80, 42, None, ["ls"],
                                                "echo 'hi'\nexit 3"])},
            "read_file": {"path": rng.choice(["config.py", "p" * 219, None, 3, {"a": 1}]),
                          "offset": rng.choice([1, 120, None, "5", 2.0])},
            "write_file": {"path": rng.choice(["notes.md", None]),
                           "content": rng.choice(["a\nb\nc", "", 12345, "line\n" * 150, None, ["x"], "😀" * 600])},
            "search_files": {"pattern": rng.choice(["compress", None, 5]), "path": rng.choice(["agent/", "."]),
                             "target": rng.choice(["content", "files", None])},
            "patch": {"path": "run.py", "mode": rng.choice(["replace", "patch", None]),
                      "old_string": "a" * rng.choice([10, 300]), "new_string": "b" * rng.choice([0, 300])},
            "web_extract": {"urls": rng.choice([["https://a", "https://b", "https://c"], [{"url": "https://c"}],
                                                [{"href": "https://h"}, "x"], [{"title": "t"}], "https://d", [7],
                                                [], [None, "y"], [{"url": ["u"]}, "z"], {"a": 1}])},
            "web_search": {"query": rng.choice(["hermes agent", None, 7, ""])},
            "delegate_task": {"goal": rng.choice(["short", "g" * 61, "g" * 60, None, {"x": 1}])},
            "execute_code": {"code": rng.choice(["print(1)", "a\nb\tc\n" * 20, "c" * 60, "c" * 61, None, 5])},
            "vision_analyze": {"question": rng.choice(["q" * 80, None, 12])},
            "memory": {"action": rng.choice(["add", None]), "target": rng.choice(["user", 3])},
            "process": {"action": "poll", "session_id": rng.choice(["proc_1", None])},
            "cronjob": {"action": rng.choice(["list", None, [1]])},
        }
        if tool in common and self.chance(0.75):
            args = dict(common[tool])
        elif str(tool).startswith("browser") and self.chance(0.7):
            args = rng.choice([{"url": "https://e.x"}, {"ref": "@e5"}, {"url": "", "ref": ""}, {"url": None, "ref": 4},
                               {"question": "what?"}, {"key": "Enter"}])
        elif str(tool).startswith("skill") and self.chance(0.7):
            args = rng.choice([{"name": "git"}, {}, {"name": None}])
        else:
            args = self.nested(1) if self.chance(0.5) else {
                "alpha": self.text(0, 60), "beta": rng.choice([2, True, None, {"a": 1, "b": [1, 2]}, "é" * 50]),
                "gamma": "third"}
            if not isinstance(args, dict):
                args = {"v": args}
        if self.chance(0.25):  # something big: pass 3 material
            args[rng.choice(["content", "blob", "é"])] = self.rng.choice([
                self.sized(rng.choice([201, 486, 490, 600, 3000])),
                [self.sized(250), {"deep": self.sized(300), "n": 1.5}, 1e5, None],
                {"a": {"b": {"c": self.sized(400)}}},
            ])
        return args

    def arguments(self, tool: Any) -> Any:
        rng = self.rng
        r = rng.random()
        if r < 0.04:
            return "this is not json " * rng.choice([1, 40])
        if r < 0.07:
            return ""
        if r < 0.10:
            return json.dumps(self.sized(rng.choice([300, 600])))  # a top-level string
        if r < 0.13:
            return json.dumps([self.sized(250), 1, {"a": self.sized(520)}])  # a top-level array
        if r < 0.15:  # compact object just over the trigger: rewritten, grows
            return json.dumps({f"k{i}": i for i in range(60)}, separators=(",", ":"))
        if r < 0.17:  # duplicate keys, escapes, 1e5: normalised by the re-serialisation
            return '{"a": "\\u00e9\\/x", "b": ["' + "z" * rng.choice([250, 480]) + '", 1.0, 1e5, null], "a": 2}'
        if r < 0.19:
            return json.dumps({"s": "q" * rng.choice([486, 487, 488])})  # 500 / 501 / 502 chars
        if r < 0.20:  # constants Python's parser accepts inside the arguments string
            return '{"x": NaN, "y": -Infinity, "z": 1E400, "w": -0, "s": "' + "n" * rng.choice([10, 480]) + '"}'
        if r < 0.22:
            return self.tool_args(tool)  # an object instead of a string
        if r < 0.23:
            return ["a", "b"]
        if r < 0.24 and not self.safe:
            return rng.choice([None, 5])
        args = self.tool_args(tool)
        return json.dumps(args, ensure_ascii=rng.random() < 0.5,
                          separators=rng.choice([(", ", ": "), (",", ":")]))

    def call_id(self) -> Any:
        rng = self.rng
        self.n += 1
        r = rng.random()
        if self.ids and r < 0.08:
            return rng.choice(self.ids)  # a duplicate id
        cid = f"call_{self.n}"
        if r < 0.12:
            cid = f" {cid} "  # whitespace: the pre-API sanitizer strips, the compressor does not
        self.ids.append(cid)
        return cid

    def tool_call(self) -> Any:
        rng = self.rng
        if self.chance(0.03):
            return rng.choice(["not a call", 7, None, ["x"]])
        tool = rng.choice(STUB_TOOLS) if self.chance(0.9) else rng.choice(
            [None, "", "  ", 5, "Terminal", "read_file "])
        cid = self.call_id()
        call: dict = {}
        shape = rng.random()
        if shape < 0.08:  # Codex: id fc_…, call_id call_…
            call["id"] = f"fc_{self.n}"
            call["call_id"] = cid
        elif shape < 0.12:  # call_id only
            call["call_id"] = cid
        elif shape < 0.15:  # no id at all
            pass
        elif shape < 0.17:
            call["id"] = rng.choice(["", None])
        else:
            call["id"] = cid
        call["type"] = "function"
        r = rng.random()
        if r < 0.04:
            pass  # no function
        elif r < 0.05 and not self.safe:
            call["function"] = rng.choice([None, "terminal", 3])
        else:
            fn: dict = {}
            if not self.chance(0.05):
                fn["name"] = tool
            if not self.chance(0.04):
                fn["arguments"] = self.arguments(tool)
            if self.chance(0.05):
                fn["extra"] = {"kept": True}
            call["function"] = fn
        if self.chance(0.05):
            call["index"] = rng.randint(0, 3)
        return call

    # --- contents --------------------------------------------------------------------------

    def part(self) -> Any:
        rng = self.rng
        kind = rng.random()
        if kind < 0.25:
            return {"type": "text", "text": rng.choice([self.text(0, 20), self.sized(300)])}
        if kind < 0.35:
            return {"type": "image_url", "image_url": {"url": rng.choice(["data:image/png;base64,iVBOR",
                                                                          "https://x/y.png"])}}
        if kind < 0.42:
            return {"type": "input_image", "image_url": "https://example.com/a.png"}
        if kind < 0.48:
            return {"type": "image", "source": {"type": "base64", "data": "AAAA"}}
        if kind < 0.55:
            return {"type": rng.choice(["input_text", "output_text", "refusal", "audio", "file", None, ""]),
                    "text": self.text(0, 10)}
        if kind < 0.60:
            return {"type": "text"}  # no text key
        if kind < 0.64:
            return {"type": "text", "text": None}
        if kind < 0.67:
            return {"type": "text", "text": rng.choice([["a", "b"], {"k": 1}])}  # Hermes: len(value)
        if kind < 0.68 and not self.safe:
            return {"type": "text", "text": 5}
        if kind < 0.74:
            return self.text(0, 10)  # a bare string part
        if kind < 0.78:
            return rng.choice([5, 2.5, None, True, ["nested"]])
        if kind < 0.82:
            return {"no_type": True}
        if kind < 0.84:  # Anthropic blocks in an OpenAI transcript: Hermes leaves them alone
            return {"type": "tool_result", "tool_use_id": rng.choice(["toolu_x", "call_1"]),
                    "content": rng.choice([self.text(0, 10), self.sized(300)])}
        if kind < 0.86:
            return {"type": "tool_use", "id": rng.choice(["toolu_x", "toolu_y"]), "name": "read_file",
                    "input": {"path": self.sized(rng.choice([5, 600]))}}
        return {"type": "text", "text": "Screenshot captured (1280x800)", "extra": [1, 2]}

    def big(self) -> str:
        rng = self.rng
        r = rng.random()
        if self.pool and r < 0.2:
            return rng.choice(self.pool)
        if r < 0.35:
            s = self.sized(rng.choice([199, 200, 201, 202]))
        elif r < 0.45:  # terminal output, raw multi-line
            s = "".join(f"line {i}: {self.text(0, 4)}\n" for i in range(rng.randint(5, 40)))
        elif r < 0.58:  # Hermes's terminal tool stores JSON-encoded output
            s = json.dumps({"output": self.text(40, 200), "exit_code": rng.choice([0, 1, -2, 127])},
                           separators=rng.choice([(", ", ": "), (",", ":")]))
            if self.chance(0.2):
                s += rng.choice(['\n{"exit_code" :  9}', '"exit_code":\n-0', '"exit_code": \uff15'])
        elif r < 0.66:
            s = json.dumps({"total_count": rng.choice([0, 12, -4]), "matches": self.text(40, 120)})
        elif r < 0.70:
            s = rng.choice([PLACEHOLDER, DUPLICATE + " extra" * 40, DUPLICATE])
        elif r < 0.74:
            s = "   \n\t " * rng.randint(30, 60)  # whitespace only: 0 lines
        else:
            s = self.text(20, 200)
        if len(s) >= 200:
            self.pool.append(s)
        return s

    def content(self, *, for_tool: bool) -> Any:
        rng = self.rng
        r = rng.random()
        if r < 0.06:
            return None
        if r < 0.09:
            return ""
        if r < 0.12:
            return rng.choice([0, 5, 2.5, True, False, 10 ** 30])
        if r < 0.24:
            return [self.part() for _ in range(rng.randint(0, 5))]
        if r < 0.30:
            return rng.choice([
                {"_multimodal": True, "content": [self.part()], "text_summary": rng.choice(
                    ["login page", None, "", self.sized(260), ["list", "summary"]])},
                {"_multimodal": True, "content": []},
                {"_multimodal": rng.choice([False, 0, "", None]), "text_summary": "s"},
                {"some": "object", "n": [1, 2]},
                {},
            ])
        if for_tool and r < 0.85:
            return self.big()
        return rng.choice([self.text(0, 20), self.big(), "   "])

    # --- messages --------------------------------------------------------------------------

    def extras(self, msg: dict) -> dict:
        rng = self.rng
        if self.chance(0.1):
            msg["_db_persisted"] = True
        if self.chance(0.05):
            msg["api_content"] = [{"type": "text", "text": "api"}]
        if self.chance(0.08):
            msg[rng.choice(["reasoning", "reasoning_content"])] = rng.choice([self.text(0, 60), "", None])
        if self.chance(0.05):
            msg["reasoning_details"] = [{"type": "reasoning.text", "text": self.text(0, 30), "n": 2.5}]
        if self.chance(0.04):
            msg["codex_reasoning_items"] = [{"id": "rs_1", "encrypted_content": "gAAAA" * rng.randint(1, 50)}]
        if self.chance(0.04):
            msg["codex_message_items"] = rng.choice([False, 0, {"a": "b"}])
        if self.chance(0.05):
            msg["name"] = rng.choice(["bob", "", None])
        if self.chance(0.05):
            msg["finish_reason"] = "stop"
        return msg

    def assistant(self) -> tuple[dict, list]:
        rng = self.rng
        msg: dict = {"role": "assistant"}
        if not self.chance(0.05):
            msg["content"] = rng.choice([None, "", "   ", "\n", "Checking.", self.content(for_tool=False)])
        r = rng.random()
        calls: list = []
        if r < 0.65:
            calls = [self.tool_call() for _ in range(rng.randint(1, 4))]
            msg["tool_calls"] = calls
        elif r < 0.72:
            msg["tool_calls"] = rng.choice([[], None, "", "abc", {}, {"id": "x"}])
        return self.extras(msg), [c for c in calls if isinstance(c, dict)]

    def result_for(self, call: dict) -> dict:
        rng = self.rng
        rid = call.get("call_id") or call.get("id")
        r = rng.random()
        msg: dict = {"role": "tool"}
        if r < 0.04:
            pass  # no tool_call_id
        elif r < 0.07:
            msg["tool_call_id"] = rng.choice([None, "", "  "])
        elif r < 0.10 and call.get("call_id") and call.get("id"):
            msg["tool_call_id"] = call["id"]  # Codex result on the wrong id
        elif r < 0.13 and isinstance(rid, str):
            msg["tool_call_id"] = rid.strip() if rid != rid.strip() else f" {rid}"
        elif r < 0.14 and not self.safe:
            msg["tool_call_id"] = rng.choice([5, 1.5])
        else:
            msg["tool_call_id"] = rid
        if self.chance(0.1):
            msg["name"] = (call.get("function") or {}).get("name") if isinstance(call.get("function"), dict) else "x"
        msg["content"] = self.content(for_tool=True)
        return self.extras(msg)

    def transcript(self, max_turns: int = 8) -> list:
        rng = self.rng
        msgs: list = []
        if self.chance(0.5):
            msgs.append({"role": rng.choice(["system", "developer"]), "content": "You are Hermes. " + self.text(0, 5)})
        for _ in range(rng.randint(0, max_turns)):
            msgs.append(self.extras({"role": "user", "content": self.content(for_tool=False)}))
            for _ in range(rng.randint(0, 3)):
                asst, calls = self.assistant()
                msgs.append(asst)
                order = list(calls)
                if self.chance(0.15):
                    rng.shuffle(order)
                for call in order:
                    if self.chance(0.12):
                        continue  # its result is lost
                    msgs.append(self.result_for(call))
                    if self.chance(0.05):
                        msgs.append(self.result_for(call))  # a second result for the same call
                if self.chance(0.08):
                    msgs.append({"role": "tool", "tool_call_id": f"call_gone_{self.n}",
                                 "content": self.content(for_tool=True)})
                if self.chance(0.04):
                    msgs.append({"role": "tool", "content": self.content(for_tool=True)})
            if self.chance(0.6):
                msgs.append(self.extras({"role": "assistant", "content": self.content(for_tool=False)}))
            if self.chance(0.08):
                msgs.append(self.odd_message())
        if self.chance(0.1) and msgs:  # a result placed before its call
            i = rng.randrange(len(msgs))
            msgs.insert(i, {"role": "tool", "tool_call_id": rng.choice(self.ids or ["call_0"]),
                            "content": self.big()})
        return msgs

    def odd_message(self) -> dict:
        rng = self.rng
        return rng.choice([
            {"role": "function", "name": "f", "content": self.big()},
            {"role": "developer", "content": self.text(0, 10)},
            {"role": "session_meta", "content": "x"},
            {"content": "no role"},
            {"role": None, "content": "null role"},
            {"role": "", "content": "empty role"},
            {"role": "Tool", "tool_call_id": "call_1", "content": self.big()},
            {"role": "tool", "tool_call_id": "call_1", "content": self.big(), "extra": {"keep": [1, {"x": None}]}},
            {"role": "assistant", "tool_calls": [self.tool_call()], "content": None, "refusal": None},
        ])


def budgets(rng: random.Random) -> tuple[int, int | None]:
    """A ``(protect_tail_count, protect_tail_tokens)`` pair, corners included."""
    count = rng.choice([0, 1, 2, 3, 5, 8, 20, 200])
    budget = rng.choice([None, 0, -5, 1, 10, 50, 100, 400, 1000, 3000, 30000])
    return count, budget
