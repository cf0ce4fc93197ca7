"""Seeded adversarial generators for the differential tests: messages whose printed form is hard to
get right (escapes, surrogates, astral and unassigned code points, odd numbers, odd keys), image
parts in every encoding, tool calls and tool schemas of every shape."""

import json
import random

CHARS = (["a", "é", "你", "😀", "\n", "\t", "\r", "'", '"', "\\", "\x00", "\x1f", "\x7f", "\x85", "\xa0",
          "\xad", "\u2028", "\u2029", "\u3000", "\ufeff", "\u200b", "\u200d", " ", "xxxxx", "，", "\U000e0001",
          "\u0301", "\ud800", "\udfff", "\U0010ffff", "\U0001f600", "\u0378", "\ue000", "\ufffd", "\uffff",
          "\u061c", "\u1680", "\u2000", "\u00b7", "{", "}", "[", "]", ": ", ", ", "\x1b[0m", "\u00ff", "\u0100"])
FLOATS = [0.0, -0.0, 1.0, 1.5, -3.25, 1e16, 1e15, 1e-5, 1e-4, 0.0001, 1e22, 1e21, 12345678.9, 0.1, 1/3,
          2.5e-8, 1.7976931348623157e308, 5e-324, 123456789012345680.0, 9007199254740993.0, 100.0]
INTS = [0, 1, -1, 42, 10**15, 10**16, 2**63 - 1, 2**63, 2**64, -2**63 - 1, 10**30, 12345678901234567890123]


class Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)

    def ch(self):
        r = self.r
        if r.random() < 0.15:
            return chr(r.choice([r.randint(0, 0x2ff), r.randint(0x300, 0xd7ff), r.randint(0xe000, 0xffff),
                                 r.randint(0x10000, 0x10ffff), r.randint(0xd800, 0xdfff)]))
        return r.choice(CHARS)

    def text(self, n=None):
        r = self.r
        if n is None:
            n = r.choice([0, 0, 1, 2, 3, 5, 10, 30, 80])
        return "".join(self.ch() for _ in range(n))

    def scalar(self):
        r = self.r
        return r.choice([None, True, False, r.choice(INTS), r.choice(FLOATS), r.random() * 10 ** r.randint(-10, 25),
                         self.text()])

    def value(self, d=0):
        r = self.r.random()
        if d > 3 or r < 0.4:
            return self.scalar()
        if r < 0.65:
            return [self.value(d + 1) for _ in range(self.r.randint(0, 4))]
        return {self.key(): self.value(d + 1) for _ in range(self.r.randint(0, 4))}

    def key(self):
        return self.r.choice(["k", "type", "text", "image", "_multimodal", "content", "ключ", "キー", "it's",
                              'say "hi"', "both'\"", "", " ", "\n", "😀", "a\\b", self.text(4)])

    def url(self):
        r = self.r
        return r.choice(["https://example.com/a.png", "data:image/png;base64," + "iVBORw0KGgo" * r.randint(1, 50),
                         "data:image/jpeg;base64,/9j/4AAQ==", "", self.text(10)])

    def part(self):
        r = self.r
        k = r.choice(["text", "text", "image_url", "image_url_str", "input_image", "input_text", "image_b64",
                      "image_url_src", "tool_use", "tool_result", "thinking", "output_text", "weird", "str", "num",
                      "notype", "typenull", "typenum", "document", "nested_img"])
        if k in ("text", "input_text", "output_text"):
            p = {"type": k, "text": self.text() if r.random() < 0.9 else self.scalar()}
        elif k == "image_url":
            p = {"type": "image_url", "image_url": {"url": self.url(), "detail": r.choice(["auto", "low", "high"])}}
        elif k == "image_url_str":
            p = {"type": "image_url", "image_url": self.url()}
        elif k == "input_image":
            p = {"type": "input_image", "image_url": self.url()}
        elif k == "image_b64":
            p = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                             "data": "QUFB" * r.randint(1, 100)}}
        elif k == "image_url_src":
            p = {"type": "image", "source": {"type": "url", "url": self.url()}}
        elif k == "tool_use":
            p = {"type": "tool_use", "id": "toolu_" + self.text(3), "name": self.text(5), "input": self.value()}
        elif k == "tool_result":
            p = {"type": "tool_result", "tool_use_id": self.text(5),
                 "content": r.choice([self.text(), [self.part(), self.part()]])}
        elif k == "thinking":
            p = {"type": "thinking", "thinking": self.text(), "signature": "sig" + self.text(5)}
        elif k == "nested_img":
            p = {"type": "tool_result", "content": [{"type": "image", "source": {"data": "zz"}}]}
        elif k == "str":
            return self.text()
        elif k == "num":
            return self.scalar()
        elif k == "notype":
            p = {"text": self.text()}
        elif k == "typenull":
            p = {"type": None, "text": self.text()}
        elif k == "typenum":
            p = {"type": r.choice([1, 1.5, True, "IMAGE", "image_URL", " image", ""]), "x": self.text()}
        elif k == "document":
            p = {"type": "document", "source": {"data": self.text()}}
        else:
            p = {"type": self.text(3), "payload": self.value()}
        if r.random() < 0.1:
            p["cache_control"] = {"type": "ephemeral"}
        if r.random() < 0.05:
            p[self.key()] = self.value()
        return p

    def content(self):
        r = self.r
        x = r.random()
        if x < 0.35:
            return self.text(r.choice([0, 1, 5, 20, 100, 400]))
        if x < 0.6:
            return [self.part() for _ in range(r.randint(0, 5))]
        if x < 0.67:
            return None
        if x < 0.77:
            d = {}
            if r.random() < 0.85:
                d["_multimodal"] = r.choice([True, True, 1, 0, False, "", "yes", None, [], [0]])
            if r.random() < 0.8:
                d["text_summary"] = r.choice([self.text(), None, 5, self.text(50)])
            if r.random() < 0.8:
                d["content"] = r.choice([[self.part() for _ in range(r.randint(0, 4))], self.text(), None])
            return d
        if x < 0.87:
            return self.scalar()
        return self.value()

    def tool_call(self):
        r = self.r
        if r.random() < 0.1:
            return self.scalar()
        tc = {"id": "call_" + self.text(3), "type": "function",
              "function": {"name": self.text(5), "arguments": json.dumps(self.value(), ensure_ascii=r.random() < 0.5)}}
        if r.random() < 0.2:
            tc["function"]["arguments"] = self.value()
        if r.random() < 0.1:
            tc["call_id"] = "fc_" + self.text(3)
        return tc

    def message(self):
        r = self.r
        if r.random() < 0.03:
            return self.scalar()
        m = {}
        keys = ["role", "content"]
        if r.random() < 0.2:
            r.shuffle(keys)
        for k in keys:
            if k == "role" and r.random() < 0.97:
                m["role"] = r.choice(["user", "assistant", "tool", "system", "developer", "function", "",
                                      "USER", None, 5, self.text(3)]) if r.random() < 0.1 else \
                    r.choice(["user", "assistant", "tool", "system"])
            elif k == "content" and r.random() < 0.95:
                m["content"] = self.content()
        role = m.get("role")
        if role == "assistant" and r.random() < 0.35:
            m["tool_calls"] = r.choice([[self.tool_call() for _ in range(r.randint(0, 3))], [], None,
                                        self.text(3)]) if r.random() < 0.2 else \
                [self.tool_call() for _ in range(r.randint(1, 3))]
        if role == "tool" and r.random() < 0.9:
            m["tool_call_id"] = r.choice(["call_1", self.text(4), None, 7])
            if r.random() < 0.5:
                m["name"] = self.text(6)
        if r.random() < 0.1:
            m["_anthropic_content_blocks"] = r.choice([[self.part() for _ in range(3)], {"type": "image"},
                                                      self.text(), None])
        for key in ("reasoning", "reasoning_content", "reasoning_details", "codex_reasoning_items",
                    "codex_message_items", "extra", "weight", "ключ", "finish_reason", "refusal"):
            if r.random() < 0.05:
                m[key] = self.value()
        return m

    def tool(self):
        r = self.r
        if r.random() < 0.08:
            return self.scalar()
        fn = {}
        for k in ("name", "description", "parameters"):
            if r.random() < 0.9:
                fn[k] = {"name": r.choice([self.text(8), self.scalar()]), "description": r.choice([self.text(40), self.scalar(), ""]),
                         "parameters": r.choice([{"type": "object", "properties": {self.key(): {"type": "string", "description": self.text()}}},
                                                 self.value(), {}, None, []])}[k]
        if r.random() < 0.7:
            return {"type": "function", "function": fn}
        return {"type": "function", **fn} if r.random() < 0.5 else {"function": self.scalar(), **fn}

    def case(self):
        r = self.r
        msgs = [self.message() for _ in range(r.choice([0, 1, 2, 3, 5, 8, 15]))]
        doc = {"messages": msgs}
        if r.random() < 0.4:
            doc["tools"] = r.choice([[self.tool() for _ in range(r.randint(0, 5))], []])
        system = None
        if r.random() < 0.3:
            system = self.text(r.choice([0, 1, 10, 100]))
        return {"doc": doc, "system": system}
