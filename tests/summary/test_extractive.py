"""The extractive summarizer (issue 18): every agent's tools, results paired inside their group,
ledgers (files, commands, errors, asks), injected text, the budget held with the prefix counted,
re-compression that converges, focus, the drop ledger, redaction, determinism."""

import copy
import json
import re
import sys
from pathlib import Path

import pytest
from builders import assistant, call, tool
from conftest import FIXTURES, load_example
from hypothesis import given
from hypothesis import strategies as st
from transcripts import TranscriptGen

from hermesctx import tokens
from hermesctx.stages.compress import compress, compress_messages
from hermesctx.summary import SummaryRequest
from hermesctx.summary.drops import drop_ledger, explain, facts
from hermesctx.summary.extractive import ExtractiveSummarizer
from hermesctx.summary.ledger import extract, one_line, tool_kind
from hermesctx.summary.prompt import SECTIONS, SNAPSHOT_CHARS, task_snapshot
from hermesctx.summary.text import is_summary_content, with_summary_prefix

ROOT = Path(__file__).resolve().parents[2]
OPS = json.loads((FIXTURES / "compress" / "ops-session.json").read_text())


def summarize(turns, previous=None, budget=2000, focus=None, item_ratio=1.0):
    """Tiny fixtures: the items may take as much as the middle itself (the default is a quarter)."""
    return ExtractiveSummarizer(item_ratio=item_ratio).summarize(SummaryRequest(prompt="", budget_tokens=budget, turns=turns,
                                                           previous_summary=previous, focus=focus))


def section(text, heading):
    body = text.split(heading + "\n", 1)[1]
    return body.split("\n\n## ", 1)[0]


def turn(*calls, text=""):
    return assistant(text, *calls)


def test_ops_session_facts():
    out = summarize(OPS[1:15])
    for fact in [
        "User asked (deterministic, from compacted turns): 'Which test failed, and can you open a ticket for it?'",
        "1. RUN `kubectl logs deploy/api-gateway -n staging --tail 50` — failed (exit 1)",
        "- `kubectl logs deploy/api-gateway -n staging --tail 50` — exit 1: FATAL: password authentication failed",
        "- `deploy/staging/values.yaml` — modified (1 reads, 1 edits); last change added: urlFromSecret: gw-db-url",
        "- `notes/ticket-draft.md` — created",
        "Latest test result: 11 passed, 1 failed, 12 total",
        "https://wiki.example.com/runbooks/db-rotation",
        "- Never restart the prod cluster.",
        "- I decided to read it from the secret instead of hardcoding it.",
    ]:
        assert fact in out, fact
    assert "oldpass" not in out and "Zq8!rotated" not in out  # secrets in the middle never reach the summary


def test_all_thirteen_sections_in_order():
    out = summarize(OPS[1:15])
    positions = [out.index(heading + "\n") for heading, _ in SECTIONS]
    assert positions == sorted(positions) and len(positions) == 13


def test_questions_answered_or_pending():
    turns = [{"role": "user", "content": "Fix the canary deploy."},
             {"role": "user", "content": "Does staging use TLS?"},
             {"role": "assistant", "content": "Yes, via cert-manager."},
             {"role": "user", "content": "And what about the canary? Keep going with the fix."},
             {"role": "user", "content": "Run the tests."}]
    out = summarize(turns)
    assert section(out, "## Goal") == "Fix the canary deploy."
    assert section(out, "## Resolved Questions") == "- Does staging use TLS?"
    assert "And what about the canary?" in section(out, SECTIONS[9][0])
    assert "'Run the tests.'" in section(out, SECTIONS[0][0])


def test_every_agents_edit_tools_leave_the_last_change():
    turns = [
        {"role": "user", "content": "refactor the loader"},
        turn(call("a", "Edit", {"file_path": "/r/src/a.py", "old_string": "x = 1", "new_string": "x = 2"}),
             call("b", "MultiEdit", {"file_path": "/r/src/b.py",
                                     "edits": [{"old_string": "p", "new_string": "q"},
                                               {"old_string": "old()", "new_string": "new()"}]}),
             call("c", "Write", {"file_path": "/r/src/c.py", "content": "one\ntwo\n"})),
        tool("a", "ok"), tool("b", "Applied 2 edits"), tool("c", "File created successfully"),
        turn(call("d", "apply_patch", {"input": "*** Begin Patch\n*** Update File: /r/src/d.py\n@@\n-keep = False\n"
                                                "+keep = True\n*** End Patch"})),
        tool("d", '{"output":"Success. Updated the following files:\\nM /r/src/d.py\\n","metadata":{"exit_code":0}}'),
        turn(call("e", "str_replace_editor", {"command": "str_replace", "path": "/r/src/e.py",
                                              "old_str": "a + b", "new_str": "a - b"}),
             call("f", "str_replace_editor", {"command": "view", "path": "/r/README.md"})),
        tool("e", "edited"), tool("f", "# readme"),
        turn(call("g", "shell", {"command": ["bash", "-lc", "apply_patch <<'EOF'\n*** Begin Patch\n"
                                             "*** Add File: /r/src/new.py\n+print('hi')\n*** End Patch\nEOF"]})),
        tool("g", '{"output":"Done","metadata":{"exit_code":0}}'),
    ]
    out = section(summarize(turns), "## Relevant Files")
    for fact in ["`src/a.py` — modified (1 edits); last change added: x = 2",
                 "`src/b.py` — modified (1 edits); last change added: q ⏎ new()",
                 "`src/c.py` — created", "`src/d.py` — modified (1 edits); last change added: keep = True",
                 "`src/e.py` — modified (1 edits); last change added: a - b", "`README.md` — read (1 reads)",
                 "`src/new.py` — created (1 edits); last change added: print('hi')"]:
        assert fact in out, fact
    assert tool_kind("mcp__fs__read_file", {}) == "read" and tool_kind("TodoWrite", {}) == "todo"
    assert tool_kind("Task", {}) == "delegate" and tool_kind("exec_command", {}) == "run"


def test_in_text_commands_count_as_runs():
    turns = [{"role": "user", "content": "Please solve this issue: division by zero"},
             {"role": "assistant", "content": "Look first.\n\n```mswea_bash_command\ncat src/calc.py\n```"},
             {"role": "user", "content": "<returncode>1</returncode>\n<output>\ncat: src/calc.py: No such file or "
                                         "directory\n</output>"},
             {"role": "assistant", "content": "Retry.\n\n```bash\ncat lib/calc.py\n```"},
             {"role": "user", "content": "<returncode>0</returncode>\n<output>\ndef div(a, b): return a / b\n</output>"}]
    led = extract(turns)
    assert list(led.commands) == ["cat src/calc.py", "cat lib/calc.py"]
    assert not led.commands["cat src/calc.py"].ok and led.commands["cat lib/calc.py"].ok
    assert [a for _, a, _ in led.asks] == ["Please solve this issue: division by zero"]  # outputs are no asks
    assert "No such file or directory" in led.errors["cat src/calc.py"].text


def test_results_pair_inside_their_group_even_when_ids_repeat():
    turns = [{"role": "user", "content": "go"},
             turn(call("t1", "Bash", {"command": "make build"})), tool("t1", "Exit code 2\nmake: *** [all] Error 2"),
             turn(call("t1", "Bash", {"command": "make test"})), tool("t1", "Exit code 0\n12 passed"),
             turn(call("x", "Bash", {"command": "make lint"}), call("y", "Bash", {"command": "make docs"})),
             tool("other-1", "Exit code 0"), tool("other-2", "Exit code 3\nError: docs broken")]
    led = extract(turns)
    assert not led.commands["make build"].ok and led.commands["make test"].ok
    assert led.commands["make lint"].ok and not led.commands["make docs"].ok  # by position when ids do not match


def test_errors_only_from_failing_calls_and_resolved_by_a_later_success():
    turns = [{"role": "user", "content": "tests please"},
             turn(call("r", "Read", {"file_path": "/r/errors.py"})),
             tool("r", "class ValidationError(Exception):\n    '''raised when parsing failed'''"),
             turn(call("p", "Bash", {"command": "pytest -q"})),
             tool("p", "Exit code 1\nE   AssertionError: 3 != 4\n1 failed, 9 passed"),
             turn(call("q", "Bash", {"command": "pytest -q"})), tool("q", "10 passed in 0.2s"),
             turn(call("s", "Bash", {"command": "npm run build"})),
             tool("s", "<tool_use_error>Command timed out after 2m</tool_use_error>")]
    out = summarize(turns)
    assert "ValidationError" not in out  # a file's contents are no error
    assert "Resolved error: `pytest -q` — exit 1: E AssertionError: 3 != 4" in section(out, "## Critical Context")
    assert section(out, "## Blocked") == "- `npm run build` — <tool_use_error>Command timed out after 2m</tool_use_error>"  # verbatim
    # the distinct outcomes of its runs, a failed run's counts too, the latest last
    assert "RUN `pytest -q` — ok: `1 failed, 9 passed` | `10 passed in 0.2s` (2 runs)" in out
    assert "TRIED `pytest -q` — failed with `E AssertionError: 3 != 4` → then worked: `10 passed in 0.2s`" in out


def test_injected_text_is_no_ask_and_a_foreign_summary_merges():
    turns = [{"role": "user", "content": "This session is being continued from a previous conversation that ran out "
                                         "of context. The conversation is summarized below:\nWe migrated db.py."},
             {"role": "user", "content": "<task-notification><task-id>1</task-id>done</task-notification>"},
             {"role": "user", "content": "Caveat: The messages below were generated by the user while running local "
                                         "commands."},
             {"role": "user", "content": "<system-reminder>be brief</system-reminder>"},
             {"role": "user", "content": "Now add the index on users.email"},
             {"role": "assistant", "content": "Adding it."}]
    out = summarize(turns)
    assert section(out, "## Goal") == "Now add the index on users.email"
    assert "task-notification" not in out and "Caveat" not in out and "be brief" not in out
    assert "Earlier summary: This session is being continued" in out and "We migrated db.py." in out


def _long_session(n=60):
    turns = [{"role": "user", "content": "Port the parser to the new AST and keep the tests green."}]
    for k in range(n):
        turns += [assistant(f"Because mod{k} shares the visitor, I'll use the generic walker for mod{k}.",
                            call(f"r{k}", "Read", {"file_path": f"/repo/src/mod{k}.py"}),
                            call(f"e{k}", "Edit", {"file_path": f"/repo/src/mod{k}.py",
                                                   "old_string": f"old_{k}()" * 5, "new_string": f"new_{k}()" * 5}),
                            call(f"g{k}", "Grep", {"pattern": f"symbol_{k}_" + "x" * 40}),
                            call(f"b{k}", "Bash", {"command": f"pytest tests/test_mod{k}.py -q"})),
                  tool(f"r{k}", "line\n" * 50), tool(f"e{k}", "ok"), tool(f"g{k}", "hits"),
                  tool(f"b{k}", f"Exit code 1\nE   NameError: name 'walk_{k}' is not defined\n1 failed"
                         if k % 3 == 0 else "5 passed")]
    return turns


def test_budget_is_never_exceeded_and_low_value_goes_first():
    turns = _long_session()
    for budget in (600, 900, 1500, 2000, 4000):
        out = summarize(turns, budget=budget)
        assert tokens.rough_text(with_summary_prefix(out)) <= budget, budget
    small = summarize(turns, budget=1500)
    assert "SEARCH" not in small and "`mod59.py` — modified" in small  # searches are trimmed before edits
    assert "Port the parser to the new AST" in section(small, "## Goal")


def test_focus_weights_sections_offline():
    turns = _long_session()
    plain = summarize(turns, budget=1200)
    focused = summarize(turns, budget=1200, focus="mod7.py")
    assert "mod7.py` — modified (1 reads" not in plain and "`mod7.py` — modified (1 reads" in focused


def test_four_rounds_converge_and_keep_first_round_files_and_errors():
    rounds = [_long_session(12)] + [
        [{"role": "user", "content": f"round {r}: continue"}] + [
            m for k, m in enumerate(_long_session(6)) if k > 0] for r in range(1, 4)]
    first = extract(rounds[0])
    previous = None
    sizes = []
    for turns in rounds:
        previous = summarize(turns, previous, budget=2500, item_ratio=None)
        sizes.append(tokens.rough_text(with_summary_prefix(previous)))
    assert max(sizes) <= 2500
    files_named = sum(1 for p in first.files if p.rsplit("/", 1)[-1] + "`" in previous)
    errors_named = sum(1 for c in first.errors if c in previous)
    assert files_named / len(first.files) >= 0.85 and errors_named / len(first.errors) >= 0.85
    assert previous.count("`mod0.py` — modified") == 1  # merged by key, not stacked


def test_previous_summary_lines_merge_by_key():
    previous = ("## Goal\nMigrate the gateway.\n\n## Completed Actions\n1. RUN `make` — exit 0\n\n"
                "## Relevant Files\n- `a.py` — read (1 reads)\n- `deploy/staging/values.yaml` — read (9 reads)")
    out = summarize(OPS[1:6], previous)
    assert section(out, "## Goal") == "Migrate the gateway."
    files = section(out, "## Relevant Files")
    assert "- `a.py` — read (1 reads)" in files and "(9 reads)" not in files
    assert files.count("deploy/staging/values.yaml") == 1
    assert "RUN `make` — exit 0" in section(out, "## Completed Actions")


def test_drop_ledger_lists_the_facts_no_output_keeps():
    turns = OPS[1:15]
    whole = drop_ledger(turns, turns)  # the turns themselves keep every fact
    assert whole["facts"] >= 5 and whole["survived"] == whole["facts"] and whole["lost"] == []
    kinds = {kind for kind, _ in __import__("hermesctx.summary.drops", fromlist=["facts"]).facts(turns)}
    assert {"error", "change", "decision", "constraint"} <= kinds
    empty = drop_ledger(turns, [{"role": "user", "content": "## Goal\nNone."}], archive="hx-0123456789ab")
    assert empty["survived"] == 0 and len(empty["lost"]) == empty["facts"]
    assert all(e["archive"] == "hx-0123456789ab" for e in empty["lost"])
    kept = drop_ledger(turns, [{"role": "user", "content": summarize(turns)}])
    assert kept["survived"] == kept["facts"]  # a small middle: its summary keeps every fact
    assert explain(empty).startswith(f"drop ledger: 0 of {empty['facts']} facts")


def test_deterministic_and_pure():
    turns = copy.deepcopy(OPS[1:15])
    assert summarize(turns) == summarize(turns)
    assert turns == OPS[1:15]


def test_url_passwords_in_summary_are_masked():
    turns = [{"role": "user", "content": "clone https://deploy:S3cretPass@git.example.com/o/r.git please"}]
    out = summarize(turns)
    assert "S3cretPass" not in out and "https://deploy:***@git.example.com/o/r.git" in out


def test_coding_session_example_through_compress():
    doc = load_example("coding-session.json")
    out, report = compress(doc, summarizer=ExtractiveSummarizer(), protect_last_n=6, tail_token_budget=400)
    assert report["summarizer"] == "extractive" and report["dropped_without_summary"] == 0
    summary = next(m for m in out if is_summary_content(m.get("content")))["content"]
    for fact in ["RUN `pytest -q tests/test_budget.py` — exit 0", "42 passed in 0.42s",
                 "`src/budget.py` — modified (1 reads, 1 edits); last change added: pct = max(pct, 0.75) if ctx",
                 "`tests/test_small_window.py` — created", "`src/config.py` — read",
                 "what's the threshold for a 1M window?"]:
        assert fact in summary, fact
    assert "ntests/" not in summary  # escaped newlines are not part of paths
    assert "summary_coverage" not in report
    ledger = report["drop_ledger"]
    assert ledger["survived"] == ledger["facts"] - len(ledger["lost"]) and ledger["facts"] > 0


@given(seed=st.integers(0, 10_000), length=st.integers(1, 40), budget=st.integers(700, 6000),
       focus=st.sampled_from([None, "src/app.py", "Recent user focus:\n- npm test"]))
def test_any_transcript_stays_within_budget_and_the_task_is_the_snapshot(seed, length, budget, focus):
    turns = [m for m in TranscriptGen(seed).transcript(length) if m.get("role") not in ("session_meta", "system")]
    out = summarize(turns, budget=budget, focus=focus, item_ratio=None)
    assert tokens.rough_text(with_summary_prefix(out)) <= budget
    snapshot = task_snapshot(turns)
    assert section(out, SECTIONS[0][0]) == (snapshot or "None")
    again = summarize(turns, out, budget=budget, item_ratio=None)  # re-compressing its own output
    assert tokens.rough_text(with_summary_prefix(again)) <= budget


def test_a_blocker_from_the_previous_summary_is_resolved_when_its_command_succeeds_later():
    first = [{"role": "user", "content": "build it"}, assistant("", call("a", "Bash", {"command": "make build"})),
             tool("a", "Exit code 2\nError: missing header foo.h")]
    previous = summarize(first)
    assert section(previous, "## Blocked") == "- `make build` — exit 2: Error: missing header foo.h"
    second = [{"role": "user", "content": "retry"}, assistant("", call("b", "Bash", {"command": "make build"})),
              tool("b", "Exit code 0")]
    out = summarize(second, previous)
    assert section(out, "## Blocked") == "None."
    assert "- Resolved error: `make build` — exit 2: Error: missing header foo.h" in section(out, "## Critical Context")
    assert summarize(second, out).count("make build` — exit 2") == 1  # converges


@pytest.mark.slow
def test_eval_on_the_fixtures_keeps_its_figures(capsys):
    """`make eval` on our fixtures (slow: not in CI): >= 80 % of the probes, none over budget."""
    sys.path.insert(0, str(ROOT / "eval"))
    import run as evaluation

    assert evaluation.main(["--split", "all"]) == 0
    table = capsys.readouterr().out
    kept = int(re.search(r"\| `compress` \(extractive\) \| \*\*(\d+) %", table).group(1))
    assert kept >= 80 and "summaries over budget (report summary_budget): 0 of" in table


def test_a_file_named_absolute_and_relative_is_one_entry():
    turns = [{"role": "user", "content": "pin numpy"},
             assistant("", call("a", "Edit", {"file_path": "/home/u/app/requirements.txt", "old_string": "numpy",
                                     "new_string": "numpy==2.1"})), tool("a", "updated"),
             assistant("", call("b", "Bash", {"command": "pip install -r requirements.txt"})), tool("b", "Exit code 0")]
    files = section(summarize(turns), "## Relevant Files")
    assert files == ("- `/home/u/app/requirements.txt` — modified (1 reads, 1 edits); "
                     "last change added: numpy==2.1")


def _slash_prompt(steps=8):
    """eval/fixtures.py's long slash-command prompt (our own text: headings, quotes of both kinds)."""
    if str(ROOT / "eval") not in sys.path:
        sys.path.insert(0, str(ROOT / "eval"))
    from fixtures import slash_prompt

    return slash_prompt("ship", "2.4.0", steps)


def _slash_session(ask, tail_ask="Tag it once the table is all pass."):
    """A session driven by a long slash-command prompt, asked twice in the middle; a short ask in the tail."""
    turns = [{"role": "system", "content": "You are a coding agent."},
             {"role": "user", "content": "Get relkit ready to ship."}]
    for k in range(2):
        turns.append({"role": "user", "content": ask})
        for step in range(1, 7):
            cid = f"c{k}{step}"
            turns += [assistant("", call(cid, "Bash", {"command": f"make check-{step} VERSION=2.4.0 # round {k}"})),
                      tool(cid, f"Exit code {2 if step == 3 and k == 0 else 0}\n" + '{"STATUS": "pass"}' * 40)]
    return turns + [{"role": "assistant", "content": "All six checks pass."},
                    {"role": "user", "content": tail_ask}, {"role": "assistant", "content": "Tagging."}]


def _compressed_summary(messages):
    out, report = compress_messages(messages, summarizer=ExtractiveSummarizer(), protect_last_n=2,
                                    tail_token_budget=200, max_summary_tokens=10_000)
    summary = next(m for m in out if is_summary_content(m.get("content")))["content"]
    return summary, report


def test_a_long_slash_command_ask_is_kept_whole_once_within_budget():
    ask = _slash_prompt()
    assert len(ask) > 2 * SNAPSHOT_CHARS and "'it'\\''s ready'" in ask  # the snapshot cuts and escapes it
    summary, report = _compressed_summary(_slash_session(ask))
    folded = " ".join(summary.split())
    assert " ".join(ask.split()) in folded  # verbatim, whitespace folded as the snapshot folds it
    assert folded.count(" ".join(ask.split())[-300:]) == 1  # asked twice, said once
    assert "User asked (deterministic, from compacted turns): '# /ship" in summary  # Hermes's snapshot stays
    assert tokens.rough_text(summary) <= report["summary_budget"] == 2000
    assert "RUN `make check-3 VERSION=2.4.0 # round 1` — exit 0" in summary  # the ledgers keep their room


def test_an_ask_larger_than_the_budget_keeps_head_and_tail_and_the_budget():
    ask = _slash_prompt(steps=100)  # ~38,000 characters: the whole budget could not hold it
    out = summarize(_slash_session(ask)[1:-3], budget=2000, item_ratio=None)
    assert tokens.rough_text(with_summary_prefix(out)) <= 2000
    folded = " ".join(ask.split())
    line = next(ln for ln in section(out, SECTIONS[9][0]).splitlines() if ln.startswith("- Latest ask, verbatim: "))
    assert re.search(r" …\[\d+ characters of this ask left out: it alone is longer than the summary budget allows\]… ",
                     line)
    assert folded[:1500] in line and folded[-500:] in line
    assert "RUN `make check-6 VERSION=2.4.0 # round 1`" in out  # the ledgers are not crowded out


def test_a_short_plain_ask_is_said_by_the_snapshot_alone_but_one_with_escapes_is_repeated():
    plain = summarize([{"role": "user", "content": "Rename the flag to --dry-run."}])
    assert "Latest ask, verbatim" not in plain and "'Rename the flag to --dry-run.'" in plain
    quoted = 'Say "it\'s done" when\nfinished.'
    out = summarize([{"role": "user", "content": quoted}])
    assert section(out, SECTIONS[9][0]) == "- Latest ask, verbatim: Say \"it's done\" when finished."


def test_the_previous_latest_ask_is_an_earlier_ask_in_the_next_round():
    ask = _slash_prompt()
    first = summarize(_slash_session(ask)[1:-3], budget=3000, item_ratio=None)
    assert "- Latest ask, verbatim: # /ship" in first
    again = summarize([{"role": "user", "content": "Now write the release notes."}], first, budget=3000)
    pending = section(again, SECTIONS[9][0])
    assert "Latest ask, verbatim" not in pending and "- " + one_line(ask, 400) in pending.splitlines()
    same = summarize([{"role": "user", "content": ask}], first, budget=3000)
    assert " ".join(same.split()).count(" ".join(ask.split())) == 1  # asked again: said once
    quiet = summarize([assistant("", call("z", "Bash", {"command": "git tag v2.4.0"})), tool("z", "Exit code 0")], first,
                      budget=3000)
    assert "- Latest ask, verbatim: " + " ".join(ask.split()) in quiet  # no new ask: still the latest, whole


def test_a_path_with_brackets_is_never_cut_and_a_short_reply_is_no_goal():
    turns = [{"role": "user", "content": "2"},
             assistant("", call("a", "Bash", {"command": "cat app/api/trips/[id]/share-link/route.ts"})),
             tool("a", "export async function POST() {}"),
             {"role": "user", "content": "*workflow-init"},
             {"role": "assistant", "content": "Initialised."},
             {"role": "user", "content": "Make the share link expire after seven days."}]
    out = summarize(turns)
    assert "`app/api/trips/[id]/share-link/route.ts`" in out and "`/share-link/route.ts`" not in out
    assert section(out, "## Goal") == "Make the share link expire after seven days."


def test_failed_edits_leave_the_last_successful_change_and_outcomes_are_verbatim():
    turns = [{"role": "user", "content": "fix the timeout handling in the client"},
             assistant("", call("a", "Edit", {"file_path": "src/client.py", "old_string": "timeout=5", "new_string": "timeout=30"})),
             tool("a", "ok"),
             assistant("", call("b", "Edit", {"file_path": "src/client.py", "old_string": "retries=1", "new_string": "retries=9"})),
             {"role": "tool", "tool_call_id": "b", "content": "<tool_use_error>String to replace not found in file.</tool_use_error>",
              "is_error": True},
             assistant("", call("c", "Bash", {"command": "npm run build"})),
             tool("c", "Exit code 2\nsrc/client.ts(4,1): error TS2304: Cannot find name 'fetchx'."),
             assistant("", call("d", "Bash", {"command": "npm run build"})),
             tool("d", "Compiled successfully in 2.1s\n3 files changed"),
             assistant("", call("e", "Read", {"file_path": "config.json"})), tool("e", '{\n  "timeout": 15000,\n  "retries": 3\n}'),
             {"role": "assistant", "content": "The issue is that the client ignores the config because it reads "
                                              "timeout before load(). I'll set 15000 from config.json."}]
    out = summarize(turns)
    assert "last change added: timeout=30" in out and "retries=9" not in section(out, "## Relevant Files")
    assert ("TRIED `npm run build` — failed with `src/client.ts(4,1): error TS2304: Cannot find name 'fetchx'.` → "
            "then worked: `3 files changed`") in out
    assert "`Compiled successfully in 2.1s`" in out and '"timeout": 15000,' in out
    assert "The issue is that the client ignores the config because it reads timeout before load()." in out


def test_a_diagnosis_said_only_in_reasoning_is_kept_after_the_spoken_ones():
    turns = [{"role": "user", "content": "The build fails on CI, fix it."},
             {"role": "assistant", "content": "<think>The build fails because the lockfile pins node 18 while CI "
                                              "runs node 22.</think>I'll update the lockfile."},
             {"role": "assistant", "content": "Done: I decided to pin node 22 in .nvmrc so that CI and local agree."}]
    out = section(summarize(turns), "## Key Decisions")
    spoken = "- Done: I decided to pin node 22 in .nvmrc so that CI and local agree."
    reasoned = "- The build fails because the lockfile pins node 18 while CI runs node 22."
    assert spoken in out and reasoned in out
    assert out.index(spoken) < out.index(reasoned)  # ledger order: the spoken decisions, then the reasoning's
    led = extract(turns)
    assert led.reasoned == ["The build fails because the lockfile pins node 18 while CI runs node 22."]
    assert not any("lockfile pins" in d for d in led.decisions)  # the visible text alone makes the decisions
    assert ("decision", led.reasoned[0]) in facts(turns)  # the drop ledger looks for it too


def test_a_tight_budget_keeps_the_heads_of_many_decisions_rather_than_a_few_whole():
    reasons = [f"The issue is that worker {k} reads the stale cache key because the TTL of {k} minutes outlives "
               f"the deploy window, which means every request after a rollout sees old data for a while." for k in range(30)]
    turns = [{"role": "user", "content": "Why is the data stale after deploys?"}]
    turns += [{"role": "assistant", "content": r} for r in reasons]
    out = section(summarize(turns, budget=1400), "## Key Decisions")
    heads = [line for line in out.splitlines() if line.endswith("…")]
    assert len(heads) >= 5  # the short forms: each decision's claim, cut at SHORT_SENTENCE characters
    assert all(line.startswith("- The issue is that worker ") for line in heads)


def test_console_lines_a_reader_kept_as_user_text_are_not_the_users_ask():
    turns = [{"role": "user", "content": "[aider]\nsrc/App.js\nAdd file to the chat? (Y)es/(N)o [Yes]: y\n\n"
                                         "/code add a dark mode switch on the top right"},
             {"role": "assistant", "content": "Okay, I will add the switch."},
             {"role": "user", "content": "[aider]\nApplied edit to src/App.js"}]
    led = extract(turns)
    assert [ask for _, ask, _ in led.asks] == ["/code add a dark mode switch on the top right"]
    assert section(summarize(turns), "## Goal") == "/code add a dark mode switch on the top right"


def test_under_a_tight_budget_a_files_final_state_keeps_its_most_distinctive_line():
    turns = [{"role": "user", "content": "Add retries to every client."}]
    for k in range(25):
        new = f"x{k} = 1\nretry_policy_{k} = RetryPolicy(attempts={k + 3}, backoff=ExponentialBackoff(base=0.{k}))\ny = 2"
        turns += [turn(call(f"c{k}", "Edit", {"file_path": f"/r/src/client_{k}.py", "old_string": "pass",
                                               "new_string": new})),
                  tool(f"c{k}", "ok")]
    out = section(summarize(turns, budget=1500), "## Relevant Files")
    shorts = [line for line in out.splitlines() if "last change added: retry_policy_" in line]
    assert len(shorts) >= 3
    assert all("RetryPolicy(attempts=" in line for line in shorts)  # the longest added line, not the first


def test_settings_whose_value_a_later_turn_uses_are_the_values_kept():
    """Issue 28: values read from files that later turns use, as the `key: value` lines that say
    them; a line whose value nobody uses again, or an HTML line, is no fact."""
    css = "\n".join(["body {", "  border: 1px solid #ddd;", "  opacity: 0.6;", "  color: red;", "}",
                     '<div class="card shadow-lg p-4">', "  max-width: 40ch;", "  z-index: 999;",
                     "  padding: 56px;", "  margin: 12px;"])
    turns = [{"role": "user", "content": "Make the card look lighter."},
             assistant("", call("a", "Bash", {"command": "cat src/card.css"})), tool("a", css),
             assistant("", call("b", "Bash", {"command": "rg -n timeout config/"})),
             tool("b", 'config/app.yml:3: request_timeout: 15000\nconfig/app.yml:4: model = "gpt-4o-mini"'),
             {"role": "assistant", "content": "The card uses opacity 0.6 and a 1px border; z-index 999 and "
                                              "padding 56px stay, and margin 12px too. 15000 ms is the timeout "
                                              "for gpt-4o-mini. The card shadow-lg stays."}]
    led = extract(turns)
    values = [line for _, line in led.facts]
    # the first three settings of a result whose whole value is used later, in the result's order
    assert values[:3] == ["border: 1px solid #ddd;", "opacity: 0.6;", "z-index: 999;"]
    assert "request_timeout: 15000" in values and 'model = "gpt-4o-mini"' in values  # grep -n prefix left out
    assert not any("color" in v or "class=" in v or "max-width" in v for v in values)  # unused, markup
    out = summarize(turns)
    assert all(v in out for v in values)
    assert {("value", v) for v in values} <= set(facts(turns))


def test_a_value_used_only_after_the_region_counts_as_used():
    turns = [{"role": "user", "content": "Which port does the API use?"},
             assistant("", call("a", "Bash", {"command": "cat .env"})), tool("a", "API_PORT=8081\nDEBUG=1")]
    assert extract(turns).facts == []  # nothing in the region uses it again
    after = [{"role": "assistant", "content": "I'll point the client at 8081."}]
    assert [line for _, line in extract(turns, after).facts] == ["API_PORT=8081"]
    assert ("value", "API_PORT=8081") in facts(turns, after)


def test_the_drop_ledger_counts_every_runs_outcome_and_failure_but_not_what_kept_turns_say():
    turns = [{"role": "user", "content": "Get the test suite green."}]
    for k, out in enumerate(["FAILED tests/test_a.py::test_x - AssertionError: 3 != 4\n1 failed, 9 passed",
                             "FAILED tests/test_b.py::test_y - KeyError: 'id'\n1 failed, 9 passed",
                             "10 passed in 0.4s"]):
        code = "1" if "failed" in out else "0"
        turns += [assistant("", call(f"c{k}", "Bash", {"command": "pytest -q"})), tool(f"c{k}", f"Exit code {code}\n{out}")]
    found = facts(turns)
    errors = [t for kind, t in found if kind == "error"]
    assert any("3 != 4" in e for e in errors) and any("KeyError" in e for e in errors)  # both failures, not the first
    assert ("outcome", "10 passed in 0.4s") in found
    summary = [{"role": "user", "content": "## Completed Actions\n1. RUN `pytest -q` — exit 0: `10 passed in 0.4s`"}]
    ledger = drop_ledger(turns, summary)
    assert ledger["survived"] == 1 and ledger["facts"] == len(found)
    # a fact the kept turns hold too was never at risk: it is not counted
    tail = [{"role": "assistant", "content": "The log said: FAILED tests/test_b.py::test_y - KeyError: 'id'"}]
    around = drop_ledger(turns, summary + tail, kept=tail)
    assert around["facts"] == ledger["facts"] - 1 and around["survived"] == 1


def test_powershell_reads_print_content_not_outcomes():
    turns = [{"role": "user", "content": "Check the web package versions."},
             assistant("", call("a", "shell_command", {"command": "Get-Content web\\package.json"})),
             tool("a", 'Exit code: 0\nOutput:\n{\n  "vite": "^7.2.0",\n  "typescript": "~6.0.2"\n}'),
             assistant("", call("b", "shell_command", {"command": "npm ci"})),
             tool("b", "Exit code: 0\nOutput:\nadded 212 packages in 4s")]
    led = extract(turns)
    assert [c.outcome_lines for c in led.commands.values()] == [[], ["added 212 packages in 4s"]]


def test_constraints_take_the_first_five_sentences_of_an_ask_and_next_steps_any_cue():
    spec = " ".join(f"Rule {k}: the API must return code {k}." for k in range(12))
    turns = [{"role": "user", "content": "Keep the design intact. " + spec},
             {"role": "assistant", "content": "Done with the routes. Let me fix both tests next."}]
    led = extract(turns)
    assert led.constraints[0] == "Keep the design intact." and len(led.constraints) == 5
    assert led.next_step == "Let me fix both tests next."
    curly = [{"role": "user", "content": "go"}, {"role": "assistant", "content": "I’ll wire the form into App.tsx."}]
    assert extract(curly).next_step == "I’ll wire the form into App.tsx."


def test_pytest_short_summary_lines_are_the_key_line_of_a_failed_run():
    """pytest's `ERROR path - Exception: ...` and `FAILED path::test - ...` name the test and the
    error: they are the key line, over the `E   ...` lines of the traceback above them."""
    from hermesctx.summary.ledger import error_line

    out = ("==== ERRORS ====\nE   json.decoder.JSONDecodeError: Invalid \\escape: line 85\n"
           "=== short test summary info ===\n"
           "ERROR tests/test_schema.py - json.decoder.JSONDecodeError: Invalid \\escape: line 85\n"
           "!!!!!!!! Interrupted: 1 error during collection !!!!!!!!\n1 error in 0.31s")
    assert error_line(out) == "ERROR tests/test_schema.py - json.decoder.JSONDecodeError: Invalid \\escape: line 85"
    assert error_line("FAILED tests/t.py::test_x - AssertionError: 3 != 4\n1 failed in 0.1s") == \
        "FAILED tests/t.py::test_x - AssertionError: 3 != 4"


def test_a_line_the_shell_prints_before_every_command_is_no_outcome():
    banner = "Now using node v22.20.0 (npm v10.9.3)"
    turns = [{"role": "user", "content": "Set the project up."}]
    for k, (command, out) in enumerate([("git fetch", ""), ("npm ci", "added 212 packages in 4s"),
                                        ("npm run build", "Compiled successfully in 2.1s"), ("date", "2026-11-28"),
                                        ("npx tsc --version", "Version 5.4.5"), ("npm test", "Tests: 12 passed")]):
        turns += [assistant("", call(f"c{k}", "Bash", {"command": command})),
                  tool(f"c{k}", f"Exit code 0\n{banner}\n{out}".rstrip())]
    led = extract(turns)
    assert all(banner not in c.outcome_lines for c in led.commands.values())
    assert led.commands["npm ci"].outcome_lines == ["added 212 packages in 4s"]
    assert ("outcome", banner) not in facts(turns) and ("outcome", "Tests: 12 passed") in facts(turns)
    assert banner not in summarize(turns)
    # a line three commands print is an outcome still (a build run three ways says the same)
    assert ("outcome", banner) in facts(turns[:7])


def test_a_command_whose_output_has_no_outcome_line_is_listed_with_its_last_line():
    turns = [{"role": "user", "content": "What is the MANA total supply?"},
             assistant("", call("a", "Bash", {"command": "ruby q1/solve.rb"})),
             tool("a", "Exit code 0\nfetching block 123\n4644407.770269 MANA"),
             assistant("", call("b", "Bash", {"command": "git push"})), tool("b", "Exit code 0\n}")]
    out = section(summarize(turns), "## Completed Actions")
    assert "RUN `ruby q1/solve.rb` — exit 0: `4644407.770269 MANA`" in out
    assert "RUN `git push` — exit 0" in out and "`}`" not in out  # a trivial last line says nothing
    assert ("outcome", "4644407.770269 MANA") not in facts(turns)  # shown, but no outcome the ledger counts
