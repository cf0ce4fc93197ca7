"""The extractive summarizer: facts that must survive, numbering, questions, redaction,
determinism, and continuation of a previous summary."""

import copy
import json

from conftest import FIXTURES, load_example

from hermesctx.stages.compress import compress
from hermesctx.summary import SummaryRequest
from hermesctx.summary.extractive import ExtractiveSummarizer
from hermesctx.summary.prompt import SECTIONS
from hermesctx.summary.text import is_summary_content

OPS = json.loads((FIXTURES / "compress" / "ops-session.json").read_text())


def summarize(turns, previous=None):
    return ExtractiveSummarizer().summarize(SummaryRequest(prompt="", budget_tokens=2000, turns=turns,
                                                           previous_summary=previous, focus=None))


def section(text, heading):
    body = text.split(heading + "\n", 1)[1]
    return body.split("\n\n## ", 1)[0]


def test_ops_session_facts():
    out = summarize(OPS[1:15])
    for fact in [
        "User asked: 'Which test failed, and can you open a ticket for it?'",            # latest ask verbatim
        "1. RUN `kubectl logs deploy/api-gateway -n staging --tail 50` — exit 1; Error: connect ECONNREFUSED",
        "2. READ deploy/staging/values.yaml — read deploy/staging/values.yaml from line 1 (77 chars) [tool: read_file]",
        "3. PATCH deploy/staging/values.yaml",
        "4. RUN `helm unittest charts/api-gateway` — exit 1; 11 passed, 1 failed, 12 total [tool: terminal]",
        "5. WRITE notes/ticket-draft.md",
        "deploy/staging/values.yaml: patched `url: postgres://gw:***@10.0.3.7:5432/gw` → `urlFromSecret: gw-db-url`",
        "notes/ticket-draft.md: written (3 lines, 73 chars)",
        "Latest test result: 11 passed, 1 failed, 12 total",
        "- FATAL: password authentication failed for user \"gw\"",
        "https://wiki.example.com/runbooks/db-rotation",
        "- Never restart the prod cluster.",
        "- I decided to read it from the secret instead of hardcoding it.",
    ]:
        assert fact in out, fact
    # secrets in the middle never reach the summary
    assert "oldpass" not in out and "Zq8!rotated" not in out


def test_all_thirteen_sections_in_order():
    out = summarize(OPS[1:15])
    positions = [out.index(heading + "\n") for heading, _ in SECTIONS]
    assert positions == sorted(positions) and len(positions) == 13


def test_questions_answered_or_pending():
    turns = [{"role": "user", "content": "Does staging use TLS?"},
             {"role": "assistant", "content": "Yes, via cert-manager."},
             {"role": "user", "content": "And what about the canary? Keep going with the fix."},
             {"role": "user", "content": "Run the tests."}]
    out = summarize(turns)
    assert section(out, "## Resolved Questions") == "- Does staging use TLS?"
    assert "And what about the canary?" in section(out, SECTIONS[9][0])


def test_previous_summary_continues_numbering_and_keeps_sections():
    previous = ("## Goal\nMigrate the gateway.\n\n## Completed Actions\n1. READ a.py — ok [tool: read_file]\n"
                "2. RUN `make` — exit 0 [tool: terminal]\n\n## Relevant Files\n- a.py")
    out = summarize(OPS[1:6], previous)
    actions = section(out, "## Completed Actions")
    assert actions.startswith("1. READ a.py") and "\n3. RUN `kubectl logs" in actions and "\n4. READ deploy" in actions
    assert section(out, "## Goal") == "Migrate the gateway."
    assert section(out, "## Relevant Files").startswith("- a.py\n")


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
    for fact in ["5. RUN `pytest -q tests/test_budget.py` — exit 0", "42 passed in 0.42s",
                 "src/budget.py: patched `threshold_tokens = int(ctx * pct)` →",
                 "tests/test_small_window.py: written", "- src/config.py",
                 "what's the threshold for a 1M window?"]:
        assert fact in summary, fact
    assert "ntests/" not in summary  # escaped newlines are not part of paths
