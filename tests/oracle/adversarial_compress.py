"""Seeded adversarial inputs for the compress differential tests: transcripts (tool-call groups at
every boundary, parallel calls, orphans, summaries of every known prefix anywhere, system
message present/missing/odd, list contents, huge tool outputs, tiny transcripts, odd shapes)
and a corpus of secret-bearing and ordinary text (hashes, UUIDs, base64) for the redactor."""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import uuid

from hermesctx.summary.text import (
    COMPACTION_NOTE,
    END_MARKER,
    HISTORICAL_PREFIXES,
    LEGACY_PREFIX,
    MERGED_DELIMITER,
    MERGED_HEADER,
    SUMMARY_PREFIX,
)

SECRETS = ["sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c", "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
           "OPENAI_API_KEY=sk-abcdefghijklmnop", "password: hunter2hunter2", "Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123",
           "postgres://admin:s3cret@db.local:5432/app", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcdEFGHijkl",
           "call +14155552671 now", '{"apiKey": "abcdefghijklmnopqrstuvwx"}', "AKIAABCDEFGHIJKLMNOP",
           "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "123e4567-e89b-12d3-a456-426614174000"]
WORDS = ["config.py", "npm test", "src/app.py", "~/proj/main.py", "é", "你好", "😀", "error", "PASS", "line\n",
         "'quoted'", '"dq"', "\\", "\t", "https://a.example/x", " ", "MEDIA:/tmp/a.png", "<think>hmm</think>",
         "<thinking>\nplan", "</tool_call>", "Traceback", "timed out", "  ", "\n\n", "/etc/hosts", "ok"]
TOOLS = ["terminal", "read_file", "write_file", "search_files", "patch", "web_search", "browser_navigate",
         "execute_code", "my_tool", "delegate_task", "memory", "todo"]
PREFIXES = [SUMMARY_PREFIX, LEGACY_PREFIX, *HISTORICAL_PREFIXES]


class Gen:
    """``Gen(seed).transcript()``: one adversarial OpenAI-shaped transcript."""
    def __init__(self, seed: int, max_chars: int = 20000):
        self.rng = random.Random(seed)
        self.k = 0
        self.max_chars = max_chars

    def words(self, lo=0, hi=30):
        r = self.rng
        out = "".join(r.choice(WORDS) + r.choice([" ", "", " "]) for _ in range(r.randint(lo, hi)))
        if r.random() < 0.15:
            out += " " + r.choice(SECRETS) + " "
        return out

    def big(self):
        r = self.rng
        x = r.random()
        if x < 0.25:
            return self.words(0, 10)
        if x < 0.4:
            return r.choice("xyzF") * min(self.max_chars, r.choice([199, 200, 201, 3000, 6001, 6500, 20000]))
        if x < 0.5:
            return json.dumps({"output": self.words(20, 200), "exit_code": r.choice([0, 1])})
        if x < 0.6:
            return ("A" * 4000 + self.words(0, 20) + "C" * r.choice([1500, 3000]))[:self.max_chars]
        return self.words(30, 400)[:self.max_chars]

    def content(self):
        r = self.rng
        x = r.random()
        if x < 0.06:
            return None
        if x < 0.1:
            return ""
        if x < 0.22:
            parts = []
            for _ in range(r.randint(0, 4)):
                y = r.random()
                if y < 0.4:
                    parts.append({"type": "text", "text": self.words(0, 20)})
                elif y < 0.55:
                    parts.append({"type": "image_url", "image_url": {"url": r.choice(["https://ex.com/a.png", "data:image/png;base64,iVBORw0KGgo="])}})
                elif y < 0.62:
                    parts.append({"type": "input_image", "image_url": "https://ex.com/b.png"})
                elif y < 0.7:
                    parts.append({"type": r.choice(["input_audio", "file", "", None])})
                elif y < 0.8:
                    parts.append(self.words(0, 5))
                elif y < 0.9:
                    parts.append({"type": "text"})
                else:
                    parts.append({"type": "image", "url": "https://ex.com/c.png"})
            return parts
        if x < 0.3:
            return self.big()
        return self.words(0, 40)

    def call(self):
        r = self.rng
        self.k += 1
        tool = r.choice(TOOLS)
        args = {"terminal": {"command": r.choice(["npm test", "ls -la ~/proj", "cat /etc/hosts"])},
                "read_file": {"path": r.choice(["config.py", "src/app.py", "~/a b.txt"]), "offset": 1},
                "write_file": {"path": "notes.md", "content": r.choice(["a\nb", "y" * 2000, SECRETS[0]])},
                "patch": {"path": "run.py", "old_string": "a", "new_string": "b" * r.choice([5, 1600])},
                "search_files": {"pattern": "foo", "path": "src/"}}.get(tool, {"q": self.words(0, 6)})
        a = json.dumps(args) if r.random() > 0.08 else r.choice(["", "not json", "{"])
        tc = {"id": f"c{self.k}", "type": "function", "function": {"name": tool, "arguments": a}}
        if r.random() < 0.03:
            del tc["function"]["name"]
        return tc

    def summary_text(self):
        r = self.rng
        p = r.choice(PREFIXES)
        body = "## Goal\n" + self.words(0, 15) + ("\n\n## Historical Task Snapshot\nold task\n## Blocked\nNone." if r.random() < 0.3 else "")
        x = r.random()
        if x < 0.6:
            return p + r.choice(["\n", " ", ""]) + body + (("\n\n" + END_MARKER) if r.random() < 0.7 else "")
        if x < 0.8:
            return MERGED_HEADER + "\n" + self.words(0, 5) + "\n\n" + MERGED_DELIMITER + "\n\n" + p + "\n" + body + "\n\n" + END_MARKER
        return r.choice(["   \n", ""]) + p  # prefix only

    def weird(self):
        """Shapes Hermes may choke on; ours must not crash."""
        r = self.rng
        x = r.random()
        if x < 0.2:
            return {"role": r.choice(["developer", "function", "tool"]), "content": self.words(0, 5)}
        if x < 0.35:
            return {"role": "assistant", "content": "x", "tool_calls": r.choice([{}, [], "", None])}
        if x < 0.5:
            return {"content": self.words(0, 5)}
        if x < 0.65:
            return {"role": "tool", "content": self.words(0, 5), **r.choice([{}, {"tool_call_id": None}, {"tool_call_id": ""}])}
        if x < 0.8:
            return {"role": "user"}
        return {"role": "assistant", "content": {"text": "dict content"}}

    def edge(self):
        """Tool results right after the head, groups at the boundaries, tiny transcripts."""
        r = self.rng
        msgs = [{"role": "system", "content": "S"}] if r.random() < 0.5 else []
        for _ in range(r.randint(0, 3)):
            msgs.append({"role": r.choice(["user", "assistant"]), "content": self.words(0, 4)})
        calls = [self.call() for _ in range(r.randint(1, 7))]
        msgs.append({"role": "assistant", "content": "", "tool_calls": calls})
        msgs += [{"role": "tool", "tool_call_id": c["id"], "content": self.big()} for c in calls]
        for _ in range(r.choice([0, 0, 1, 2, 5])):
            msgs.append({"role": r.choice(["user", "assistant"]), "content": self.words(0, 30)})
        return msgs

    def transcript(self):
        r = self.rng
        if r.random() < 0.12:
            return self.edge()
        msgs = []
        if r.random() < 0.65:
            sc = r.choice(["You are Hermes.", "", None, [{"type": "text", "text": "sys"}], "You are Hermes.\n\n" + COMPACTION_NOTE])
            msgs.append({"role": "system", "content": sc})
        nturns = r.choice([0, 1, 2, 3, 4, 5, 6, 8, 10, 14, 20, 30, 40])
        summary_at = r.randrange(0, nturns + 2) if r.random() < 0.25 else -1
        for t in range(nturns):
            if t == summary_at:
                msgs.append({"role": r.choice(["user", "user", "assistant"]), "content": self.summary_text(),
                             **({"_compressed_summary": True} if r.random() < 0.5 else {})})
            u = {"role": "user", "content": self.content()}
            if r.random() < 0.1:
                u["api_content"] = "api bytes"
            if r.random() < 0.1:
                u["_db_persisted"] = True
            if r.random() < 0.05:
                u["_todo_snapshot_synthetic"] = True
            if r.random() < 0.05:
                u["content"] = "[System: Your previous tool call was bad"
            if r.random() > 0.07:
                msgs.append(u)
            for _ in range(r.choice([0, 0, 1, 1, 2, 3])):
                if r.random() < 0.55:
                    calls = [self.call() for _ in range(r.choice([1, 1, 1, 2, 3, 4]))]
                    a = {"role": "assistant", "content": r.choice(["", None, self.words(0, 10)]), "tool_calls": calls}
                    msgs.append(a)
                    results = [{"role": "tool", "tool_call_id": c["id"], "content": self.big()} for c in calls]
                    if r.random() < 0.1 and results:
                        results.pop(r.randrange(len(results)))  # orphan call
                    if r.random() < 0.08:
                        results.append({"role": "tool", "tool_call_id": "ghost", "content": "orphan result"})
                    if r.random() < 0.1:
                        r.shuffle(results)
                    msgs.extend(results)
                else:
                    msgs.append({"role": "assistant", "content": self.content()})
            if r.random() < 0.1:
                msgs.append({"role": "assistant", "content": self.content()})
            if r.random() < 0.03:
                msgs.append(self.weird())
        if summary_at >= nturns:
            msgs.append({"role": "user", "content": self.summary_text()})
        if r.random() < 0.3:
            msgs.append({"role": "user", "content": self.content()})
        if r.random() < 0.1:
            c = self.call()
            msgs.append({"role": "assistant", "content": "", "tool_calls": [c]})
            msgs.append({"role": "tool", "tool_call_id": c["id"], "content": self.big()})
        return msgs


# --- redactor corpus ---

ALNUM = string.ascii_letters + string.digits
KEY_PREFIXES = ["sk-", "ghp_", "github_pat_", "gho_", "ghu_", "ghs_", "ghr_", "xapp-1-", "xapp-12-", "xoxb-", "xoxa-", "xoxp-",
            "xoxr-", "xoxs-", "AIza", "pplx-", "fal_", "fc-", "bb_live_", "gAAAA", "AKIA", "sk_live_", "sk_test_",
            "rk_live_", "SG.", "hf_", "r8_", "npm_", "pypi-", "dop_v1_", "doo_v1_", "am_", "sk_", "tvly-", "exa_",
            "gsk_", "syt_", "retaindb_", "hsk-", "mem0_", "brv_", "xai-", "ntn_", "fw-", "fw_", "fpk_", "sk-ant-", "sk-proj-"]
ENV_KEYS = ["OPENAI_API_KEY", "APIKEY", "GITHUB_TOKEN", "DB_PASSWORD", "MY_SECRET_X", "PASSWD", "AWS_CREDENTIALS",
            "AUTH", "OAUTH_CLIENT", "TOKENIZER", "MAX_TOKENS", "api_key", "Token", "author"]
CFG_KEYS = ["password", "api_key", "api-key", "apikey", "api.key", "spring.datasource.password", "app.token.value",
            "auth", "credential", "secret_key", "passwd", "x.y", "author.name", "token_count", "auth.mode", "my_token"]
JSON_KEYS = ["apiKey", "api_key", "APIKEY", "ApiKey", "token", "Token", "secret", "password", "access_token", "refresh_token",
             "auth_token", "bearer", "secret_value", "raw_secret", "secret_input", "key_material", "token_count", "key", "name"]
SEPS = [" ", "\n", "", " ", "\t", "=", ":", '"', "'", ",", "&", "?", "/", "@", "-", "_", ".", "\n\n", "  "]
PROSE = ["the", "config", "error", "note:", "secret meeting", "token expired", "I have password=foo in prose",
         "https://example.com/cb?code=ABC123&state=xyz", "https://user:pass@example.com/x", "TOKEN=os.getenv('X')",
         "process.env.API_KEY", "$ENV{SECRET}", "max_tokens: 4096", "author: me", "Authorization", "export", "curl -H",
         "git remote set-url origin", "ssh://", "file:///tmp/x", "+", "bot", "=", "-----BEGIN", "eyJ"]


def _body(rng, chars=ALNUM + "_-", lo=0, hi=45):
    n = rng.choice([rng.randint(lo, hi), 9, 10, 11, 16, 17, 18, 19, 29, 30, 31])
    return "".join(rng.choice(chars) for _ in range(n))


def _piece(rng) -> str:  # noqa: C901 - one branch per kind of text
    x = rng.randrange(24)
    if x == 0:
        return rng.choice(KEY_PREFIXES) + _body(rng, rng.choice([ALNUM, ALNUM + "_-", ALNUM + "_", ALNUM.upper(), ALNUM + "-=."]))
    if x == 1:
        k = rng.choice(ENV_KEYS)
        return k + rng.choice(["=", " = ", "= ", " ="]) + rng.choice(["", "'", '"']) + rng.choice([_body(rng), "os.getenv('A')", "", "sk-" + _body(rng)]) + rng.choice(["", "'", '"'])
    if x == 2:
        return rng.choice(["", "export ", "  ", "x "]) + rng.choice(CFG_KEYS) + "=" + rng.choice(["", "'", '"']) + _body(rng, ALNUM + "&.") + rng.choice(["", "'", " tail"])
    if x == 3:
        return '"' + rng.choice(JSON_KEYS) + '"' + rng.choice([":", ": ", " : "]) + '"' + rng.choice([_body(rng), "", "os.environ[x]", "a b"]) + '"'
    if x == 4:
        return rng.choice(["", "  ", "- "]) + rng.choice(CFG_KEYS + ["token", "api key"]) + rng.choice([":", ": ", ":\t"]) + rng.choice([_body(rng), "'quoted'", "os.getenv(x)"])
    if x == 5:
        return rng.choice(["Authorization", "authorization", "Proxy-Authorization", "AUTHORIZATION"]) + rng.choice([":", ": "]) + rng.choice(["Bearer ", "Basic ", "token ", "", "Digest  "]) + _body(rng, ALNUM + "=+/.") + rng.choice(["", '"', "'"])
    if x == 6:
        return rng.choice(["x-api-key", "X-Goog-Api-Key", "api-key", "apikey", "x-api-token", "x-auth-token", "x-access-token", "x-other"]) + rng.choice([":", ": ", " : "]) + _body(rng)
    if x == 7:
        return rng.choice(["bot", "", "x"]) + "".join(rng.choice(string.digits) for _ in range(rng.choice([7, 8, 10]))) + ":" + _body(rng, ALNUM + "-_", 25, 40)
    if x == 8:
        return f"-----BEGIN {rng.choice(['RSA ', 'EC ', 'OPENSSH ', ''])}PRIVATE KEY-----\n{_body(rng)}\n-----END {rng.choice(['RSA ', ''])}PRIVATE KEY-----"
    if x == 9:
        return rng.choice(["postgres", "postgresql", "mysql", "mongodb", "mongodb+srv", "redis", "amqp", "https", "POSTGRES"]) + "://" + _body(rng, ALNUM, 1, 8) + ":" + _body(rng, ALNUM + "!$", 1, 12) + "@" + rng.choice(["db.local:5432/app", "h", " x"])
    if x == 10:
        return rng.choice(["https", "http", "wss", "git", "ssh", "ftp", "sftp", "HTTPS", "file"]) + "://" + _body(rng, ALNUM + "_-.", 3, 20) + rng.choice(["@github.com/o/r.git", "@", ":x@h", "/p@q"])
    if x == 11:
        return "eyJ" + _body(rng, ALNUM + "_-", 5, 30) + rng.choice(["", "." + _body(rng, ALNUM + "_-=", 2, 20), "." + _body(rng) + "." + _body(rng) + "." + _body(rng)])
    if x == 12:
        keys = ["client_id", "client_secret", "grant_type", "code", "state", "token", "Password", "x-amz-signature", "a.b", "session", "id"]
        return "&".join(rng.choice(keys) + "=" + _body(rng, ALNUM, 0, 10) for _ in range(rng.randint(1, 4)))
    if x == 13:
        return "+" + rng.choice("0123456789") + "".join(rng.choice(string.digits) for _ in range(rng.randint(4, 17))) + rng.choice(["", "a", " ", "5"])
    if x == 14:
        return hashlib.sha256(_body(rng).encode()).hexdigest()[: rng.choice([32, 40, 64])]
    if x == 15:
        return str(uuid.UUID(int=rng.getrandbits(128)))
    if x == 16:
        return base64.b64encode(bytes(rng.getrandbits(8) for _ in range(rng.randint(10, 60)))).decode()
    if x == 17:
        return "data:image/png;base64," + base64.b64encode(bytes(rng.getrandbits(8) for _ in range(40))).decode()
    if x == 18:
        return "https://example.com/" + _body(rng, ALNUM, 1, 10) + "?" + rng.choice(["code", "token", "access_token", "q"]) + "=" + _body(rng)
    if x == 19:
        return rng.choice(["/home/u/.ssh/id_rsa", "~/proj/main.py", "C:\\Users\\x", "src/app.py:42", "sk-", "sk_", "ghp"])
    if x == 20:
        return rng.choice(PROSE)
    if x == 21:
        return _body(rng, ALNUM + "_-", 10, 60)
    if x == 22:
        return rng.choice(["AKIA", "ASIA"]) + _body(rng, string.ascii_uppercase + string.digits, 14, 18)
    return " ".join(rng.choice(PROSE) for _ in range(rng.randint(1, 4)))


def _text(rng):
    return "".join(_piece(rng) + rng.choice(SEPS) for _ in range(rng.randint(1, 6)))


def redaction_corpus(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    return [_text(rng) for _ in range(n)]
