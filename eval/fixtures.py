"""Synthetic transcripts in the shapes each agent writes (our own text; no real log is copied):
Claude Code, Codex, Hermes, SWE-agent, mini-swe-agent, OpenHands and a tool-calling support agent;
and a Claude Code session driven by a long slash-command prompt (an ask the task snapshot cuts).

Each builder returns OpenAI chat messages (what ``hermesctx convert --to openai`` gives for that
agent's log): reads, edits with their tool's own argument names, commands with failures that are
later fixed, injected text (task notifications, environment blocks), follow-up asks, decisions.
Deterministic: the same seed gives the same transcript.
"""

from __future__ import annotations

import json
import random
import re


def _call(cid: str, name: str, args: dict) -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def _code(rng: random.Random, lines: int) -> str:
    words = ["value", "result", "config", "parser", "token", "buffer", "item", "state", "index", "limit"]
    return "\n".join(f"    {rng.choice(words)}_{k} = {rng.choice(words)}({k})" for k in range(lines))


class _Builder:
    def __init__(self, seed: int, root: str, system: str):
        self.rng = random.Random(seed)
        self.root = root
        self.messages: list[dict] = [{"role": "system", "content": system}]
        self.n = 0

    def cid(self) -> str:
        self.n += 1
        return f"call_{self.n:04d}"

    def user(self, text: str) -> None:
        self.messages.append({"role": "user", "content": text})

    def say(self, text: str) -> None:
        self.messages.append({"role": "assistant", "content": text})

    def tool(self, name: str, args: dict, output: str, text: str = "") -> None:
        cid = self.cid()
        self.messages.append({"role": "assistant", "content": text, "tool_calls": [_call(cid, name, args)]})
        self.messages.append({"role": "tool", "tool_call_id": cid, "content": output})


MODULES = ["loader", "cache", "router", "schema", "metrics", "auth", "queue", "export", "retry", "config",
           "parser", "render"]


def claude_code(seed: int = 1) -> list[dict]:
    b = _Builder(seed, "/home/dev/shop", "You are Claude Code, Anthropic's official CLI for Claude.")
    b.user("<command-name>/clear</command-name>")
    b.user("The checkout service times out under load. Find the cause and fix it; keep the public API unchanged.")
    for k, mod in enumerate(MODULES[:8]):
        path = f"{b.root}/src/{mod}.py"
        b.tool("Read", {"file_path": path}, "\n".join(f"{i:6d}\t{line}" for i, line in
                                                      enumerate(_code(b.rng, 60).splitlines(), 1)),
               text=f"Let me look at {mod}.py.")
        b.tool("Grep", {"pattern": f"def {mod}_handler", "path": f"{b.root}/src"}, f"src/{mod}.py:12")
        if k % 2 == 0:
            b.tool("Edit", {"file_path": path, "old_string": f"timeout = {k + 1}",
                            "new_string": f"timeout = settings.{mod}_timeout"},
                   f"The file {path} has been updated.",
                   text=f"I'll use the settings value instead of the constant because {mod} is called per request.")
        b.tool("Bash", {"command": f"pytest tests/test_{mod}.py -q", "description": "run tests"},
               f"Exit code 1\nE   TimeoutError: {mod} pool exhausted after 30s\n1 failed, 11 passed"
               if k in (1, 4) else "12 passed in 0.8s")
        if k == 3:
            b.user("<task-notification><task-id>7</task-id><status>completed</status></task-notification>")
            b.user("Also make sure the retry budget is configurable per tenant.")
        if k == 5:
            b.tool("TodoWrite", {"todos": [{"content": "make retry budget configurable", "status": "in_progress"},
                                           {"content": "document the new settings", "status": "pending"}]},
                   "Todos have been modified successfully.")
    b.tool("MultiEdit", {"file_path": f"{b.root}/src/retry.py", "edits": [
        {"old_string": "MAX_RETRIES = 3", "new_string": "MAX_RETRIES = tenant.retry_budget"}]},
        f"Applied 1 edit to {b.root}/src/retry.py")
    b.tool("Write", {"file_path": f"{b.root}/docs/settings.md", "content": "# Settings\n\nretry_budget: per tenant\n"},
           f"File created successfully at: {b.root}/docs/settings.md")
    b.tool("Bash", {"command": "pytest tests/test_auth.py -q"}, "12 passed in 0.9s")
    b.say("The pool was exhausted because auth held connections; next I'll run the load test.")
    b.user("Run the load test and report p99.")
    b.tool("Bash", {"command": "make loadtest"}, "p99=180ms (was 4100ms)")
    b.say("p99 is now 180 ms.")
    return b.messages


def codex(seed: int = 2) -> list[dict]:
    b = _Builder(seed, "/workspace/billing", "You are Codex, based on GPT-5.")
    b.user("<environment_context>\n  <cwd>/workspace/billing</cwd>\n</environment_context>")
    b.user("Invoices round VAT wrong for JPY. Fix the rounding and add a regression test.")
    for k, mod in enumerate(["money", "invoice", "tax", "currency", "ledger", "report"]):
        path = f"{b.root}/billing/{mod}.py"
        b.tool("shell", {"command": ["bash", "-lc", f"sed -n '1,200p' billing/{mod}.py"], "workdir": b.root},
               json.dumps({"output": _code(b.rng, 80), "metadata": {"exit_code": 0}}))
        if k in (0, 2, 3):
            patch = (f"*** Begin Patch\n*** Update File: {path}\n@@\n-    return round(amount, 2)\n"
                     f"+    return quantize(amount, currency.{mod}_exponent)\n*** End Patch")
            b.tool("apply_patch", {"input": patch},
                   json.dumps({"output": f"Success. Updated the following files:\nM {path}\n",
                               "metadata": {"exit_code": 0}}),
                   text="I'll use the currency exponent instead of a fixed 2 decimals.")
        b.tool("exec_command", {"cmd": f"python -m pytest tests/test_{mod}.py -q", "workdir": b.root},
               f"Command: /bin/bash -lc 'python -m pytest tests/test_{mod}.py -q'\nChunk ID: 1a2b3c\n"
               f"Wall time: 0.4 seconds\nProcess exited with code {1 if k == 2 else 0}\nOutput:\n"
               + ("E   AssertionError: JPY 1000 -> 1000.0 != 1000\n1 failed, 7 passed" if k == 2 else "8 passed"))
    b.tool("update_plan", {"plan": [{"step": "fix rounding", "status": "completed"},
                                    {"step": "add JPY regression test", "status": "in_progress"}]}, "Plan updated")
    b.tool("apply_patch", {"input": f"*** Begin Patch\n*** Add File: {b.root}/tests/test_jpy.py\n"
                                    "+def test_jpy_has_no_decimals():\n+    assert vat(1000, 'JPY') == 100\n"
                                    "*** End Patch"},
           json.dumps({"output": "Success.", "metadata": {"exit_code": 0}}))
    b.tool("exec_command", {"cmd": "python -m pytest tests/test_tax.py -q"}, "Process exited with code 0\n8 passed")
    b.user("Does the CSV export use the same rounding?")
    b.say("Yes: export calls money.quantize, so it follows the fix.")
    b.user("Good. Open a PR titled 'Round VAT by currency exponent'.")
    return b.messages


def hermes(seed: int = 3) -> list[dict]:
    b = _Builder(seed, "/srv/notes", "You are Hermes Agent, an intelligent AI assistant created by Nous Research.")
    b.user("Migrate the notes app from sqlite to postgres; never drop the old database.")
    for k, mod in enumerate(["db", "models", "migrate", "api"]):
        path = f"{b.root}/app/{mod}.py"
        b.tool("read_file", {"path": path}, json.dumps({"content": _code(b.rng, 50), "total_lines": 50}))
        b.tool("patch", {"path": path, "old_string": "sqlite3.connect(DB)", "new_string": "psycopg.connect(DSN)"},
               json.dumps({"success": True}), text="Going with psycopg 3 because it supports async.")
        b.tool("terminal", {"command": f"python -m pytest tests/test_{mod}.py"},
               json.dumps({"output": "psycopg.OperationalError: connection refused" if k == 1 else "5 passed",
                           "exit_code": 1 if k == 1 else 0}))
    b.tool("search_files", {"pattern": "sqlite3", "path": b.root}, json.dumps({"matches": ["app/cli.py:4"]}))
    b.tool("write_file", {"path": f"{b.root}/app/settings.py", "content": "DSN = 'postgresql://localhost/notes'\n"},
           json.dumps({"success": True}))
    b.tool("terminal", {"command": "python -m pytest tests/test_models.py"},
           json.dumps({"output": "5 passed", "exit_code": 0}))
    b.say("Next I'll port app/cli.py, the last sqlite3 user.")
    b.user("Port the CLI too, then stop.")
    return b.messages


def swe_agent(seed: int = 4) -> list[dict]:
    b = _Builder(seed, "/repo", "SETTING: You are an autonomous programmer working in a command line.")
    b.user("We're currently solving the following issue: `Table.join` drops rows when keys contain None.")
    for k, mod in enumerate(["table", "join", "keys"]):
        path = f"/repo/src/tablekit/{mod}.py"
        b.tool("str_replace_editor", {"command": "view", "path": path}, _code(b.rng, 40))
        if k:
            b.tool("str_replace_editor", {"command": "str_replace", "path": path,
                                          "old_str": "if key is None: continue",
                                          "new_str": "if key is None: key = _NONE_KEY"},
                   f"The file {path} has been edited.", text="The cause is the early continue on None keys.")
        b.tool("bash", {"command": f"python -m pytest tests/test_{mod}.py -x"},
               "Traceback (most recent call last):\nKeyError: None\n1 failed" if k == 1 else "3 passed")
    b.tool("find_file", {"file_name": "conftest.py", "dir": "/repo"}, "Found 1 matches: /repo/tests/conftest.py")
    b.tool("submit", {}, "diff --git a/src/tablekit/join.py b/src/tablekit/join.py")
    return b.messages


def mini_swe_agent(seed: int = 5) -> list[dict]:
    b = _Builder(seed, "/testbed", "You are a helpful assistant that can interact with a computer.")
    b.user("Please solve this issue: `slugify` keeps trailing dashes for titles that end in punctuation.")
    steps = [("cat src/slug/core.py", 0, _code(b.rng, 30)),
             ("python -c 'from slug import slugify; print(slugify(\"Hi!\"))'", 0, "hi-"),
             ("sed -i 's/return s/return s.strip(\"-\")/' src/slug/core.py", 0, ""),
             ("python -m pytest tests -q", 1, "E   AssertionError: 'a-b-' != 'a-b'\n1 failed, 20 passed"),
             ("sed -i 's/strip(\"-\")/rstrip(\"-\").lstrip(\"-\")/' src/slug/core.py", 0, ""),
             ("python -m pytest tests -q", 0, "21 passed")]
    for command, code, output in steps:
        b.say(f"THOUGHT: next step.\n\n```bash\n{command}\n```")
        b.user(f"<returncode>{code}</returncode>\n<output>\n{output}\n</output>")
    b.say("The fix strips dashes at both ends.\n\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```")
    return b.messages


def openhands(seed: int = 6) -> list[dict]:
    b = _Builder(seed, "/workspace/site", "You are OpenHands agent, a helpful AI assistant.")
    b.user("The blog build fails on the new markdown plugin; make it build again.")
    b.tool("execute_bash", {"command": "npm run build"},
           "Error: Cannot find module 'remark-gfm'\n[Command finished with exit code 1]")
    b.tool("str_replace_editor", {"command": "view", "path": "/workspace/site/package.json"}, '{"name": "site"}')
    b.tool("str_replace_editor", {"command": "str_replace", "path": "/workspace/site/package.json",
                                  "old_str": '"remark": "^14"', "new_str": '"remark": "^14", "remark-gfm": "^4"'},
           "The file /workspace/site/package.json has been edited.")
    b.tool("execute_bash", {"command": "npm install && npm run build"},
           "built 42 pages\n[Command finished with exit code 0]")
    b.tool("execute_bash", {"command": "npm run build"}, "built 42 pages\n[Command finished with exit code 0]")
    b.say("The build works again because remark-gfm is now a dependency.")
    return b.messages


def support_agent(seed: int = 7) -> list[dict]:
    b = _Builder(seed, "", "You are an airline customer service agent.")
    b.user("Hi, I need to change my flight to Friday. My reservation is ZX81QP.")
    b.tool("get_reservation_details", {"reservation_id": "ZX81QP"},
           json.dumps({"flights": [{"flight": "HAT170", "date": "2024-05-14"}], "cabin": "economy"}))
    b.tool("search_direct_flight", {"origin": "JFK", "destination": "SEA", "date": "2024-05-17"},
           json.dumps([{"flight": "HAT210", "price": 312}]))
    b.say("HAT210 on Friday costs $312. Shall I book it?")
    b.user("Yes, and use my gift card.")
    b.tool("update_reservation_flights", {"reservation_id": "ZX81QP", "flights": ["HAT210"], "payment": "gift_card"},
           "Error: gift card balance insufficient")
    b.say("The gift card balance is too low; I'll use the card on file instead because you approved the change.")
    b.tool("update_reservation_flights", {"reservation_id": "ZX81QP", "flights": ["HAT210"], "payment": "credit_card"},
           json.dumps({"status": "ok"}))
    b.user("Thanks, please email me the receipt.")
    return b.messages


def slash_prompt(command: str, argument: str, steps: int = 8) -> str:
    """A slash command's expanded prompt, as the user's turn: markdown headings, a numbered outline,
    a fenced argument, quotes of both kinds and a backslash (about 380 characters a step)."""
    lines = [f"# /{command}", "", "## Arguments", "", "```text", argument, "```", "",
             "Read the arguments above before anything else; when they are empty, ask which version to ship.",
             "", "## Outline", ""]
    for k in range(1, steps + 1):
        lines += [f"{k}. **Check {k}**: run `make check-{k} VERSION={argument}` from the repository root and read",
                  f"   its JSON report (fields STATUS_{k}, WARNINGS_{k}, FILES_{k}). A name with a quote, such as",
                  "   \"it's ready\", is written 'it'\\''s ready' in the shell; don't guess a missing field.",
                  f"   - When STATUS_{k} is \"fail\", stop and report the first failing file of FILES_{k}.", ""]
    lines += ["## Report", "", "Finish with one table: check, status, warnings, and the next command to run."]
    return "\n".join(lines)


def slash_command(seed: int = 8) -> list[dict]:
    b = _Builder(seed, "/home/dev/relkit", "You are Claude Code, Anthropic's official CLI for Claude.")
    version = f"2.{seed % 7}.0"
    b.user("Get relkit ready to ship; the changelog must list every merged fix.")
    b.tool("Read", {"file_path": f"{b.root}/CHANGELOG.md"}, "## Unreleased\n- fix: retry on 503\n")
    for k in range(3):
        b.user(slash_prompt("ship", version))
        for step in range(1, 5):
            failed = step == 2 and k == 0
            b.tool("Bash", {"command": f"make check-{step} VERSION={version}"},
                   f"Exit code {2 if failed else 0}\n" + (json.dumps({f"STATUS_{step}": "fail",
                                                                      f"FILES_{step}": ["src/relkit/tag.py"]})
                                                          if failed else json.dumps({f"STATUS_{step}": "pass"})),
                   text=f"Running check {step}.")
            if failed:
                path = f"{b.root}/src/relkit/tag.py"
                b.tool("Read", {"file_path": path}, _code(b.rng, 30))
                b.tool("Edit", {"file_path": path, "old_string": "tag = version", "new_string": "tag = f'v{version}'"},
                       "The file has been updated.", text="The cause is the tag missing its v prefix.")
        b.say(f"| check | status |\n|---|---|\n| 1-4 | pass |\nNext: `make release VERSION={version}`.")
    b.user("Tag it once the table is all pass.")
    b.tool("Bash", {"command": f"git tag v{version}"}, "Exit code 0")
    b.say(f"Tagged v{version}.")
    return b.messages


AGENTS = {"claude-code": claude_code, "codex": codex, "hermes": hermes, "swe-agent": swe_agent,
          "mini-swe-agent": mini_swe_agent, "openhands": openhands, "support-agent": support_agent,
          "slash-command": slash_command}


# words a continued session renames (round 2 works on ``loader2``, ``money2``...), so that each
# round's outputs, changes and values are its own, as in a real session (eval/probes.py drops a
# probe the kept head or tail repeats)
NOUNS = MODULES + ["money", "invoice", "tax", "currency", "ledger", "report", "db", "models", "migrate", "api",
                   "table", "join", "keys", "slug", "slugify", "checkout", "tenant", "psycopg", "remark", "site",
                   "notes", "relkit", "tag", "pool", "auth", "JPY", "VAT", "HAT210", "HAT170", "ZX81QP", "SEA", "JFK"]
_NOUN = re.compile(r"\b(" + "|".join(sorted(map(re.escape, set(NOUNS)), key=len, reverse=True)) + r")\b")
_NUMBER = re.compile(r"(?<![\w.])(?<!code )(?<!<returncode>)(?<!exit_code\": )(\d{2,})(?![\w])")


def _renamed(value, r: int):
    """``value`` (a message or any part of one) with round ``r``'s names and figures."""
    if isinstance(value, str):
        value = _NOUN.sub(lambda m: f"{m.group(1)}{r + 1}", value)
        return _NUMBER.sub(lambda m: str(int(m.group(1)) + 7 * r), value)
    if isinstance(value, dict):
        return {k: v if k in ("role", "tool_call_id", "id", "type") else _renamed(v, r) for k, v in value.items()}
    if isinstance(value, list):
        return [_renamed(v, r) for v in value]
    return value


def transcripts(repeat: int = 3) -> dict[str, list[dict]]:
    """Every agent's transcript, each ``repeat`` times longer (a session continued in the same style,
    each round on its own names and figures)."""
    out = {}
    for name, build in AGENTS.items():
        messages = build()
        for r in range(1, repeat):
            more = build(seed=100 * r + len(name))
            messages += [_renamed(m, r) for m in more[1:]]
        out[name] = messages
    return out


def autonomous(messages: int = 200, ask_at: int = 8, seed: int = 9) -> list[dict]:
    """An autonomous run: the last user ask at index ``ask_at``, then only tool turns (reads,
    edits, test runs with their outputs) up to ``messages`` messages (issue 28: "compacted past
    message 100")."""
    b = _Builder(seed, "/work/etl", "You are Hermes Agent, an intelligent AI assistant created by Nous Research.")
    b.user("Set up the nightly ETL job.")
    while len(b.messages) < ask_at:
        if ask_at - len(b.messages) == 1:
            b.say("The repository holds one job script.")
        else:
            b.tool("terminal", {"command": "ls"}, json.dumps({"output": "etl.py\nREADME.md", "exit_code": 0}))
    b.user("Port every loader to the new warehouse client, run the tests after each, and don't stop until all pass.")
    k = 0
    while len(b.messages) < messages - 1:
        mod = MODULES[k % len(MODULES)]
        if k % 3 == 0:
            b.tool("read_file", {"path": f"{b.root}/loaders/{mod}_{k}.py"},
                   json.dumps({"content": _code(b.rng, 40), "total_lines": 40}))
        elif k % 3 == 1:
            b.tool("patch", {"path": f"{b.root}/loaders/{mod}_{k - 1}.py", "old_string": "client = OldClient()",
                             "new_string": f"client = WarehouseClient(pool='{mod}_{k}')"}, json.dumps({"success": True}))
        else:
            b.tool("terminal", {"command": f"pytest tests/test_{mod}_{k}.py -q"},
                   json.dumps({"output": f"{k} passed in 0.{k % 10}s", "exit_code": 0}))
        k += 1
    b.say("Every loader is ported and its tests pass.")
    return b.messages[:messages]
