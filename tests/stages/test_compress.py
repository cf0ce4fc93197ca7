"""compress: boundaries and roles from spec 30.2/30.6 (own fixtures), D7, re-compression, the
summarizer chain, archive round trip, the CLI (including the real OpenAI/Anthropic SDKs against a
local fake server)."""

import copy
import json
from pathlib import Path

import pytest
from builders import assistant, call, system, tool, user
from conftest import invoke, load_example
from fakeserver import FakeServer, context_length, ok

from hermesctx.stages.compress import compress, compress_messages, summary_role, tail_cut
from hermesctx.summary import SummarizerError
from hermesctx.summary.extractive import ExtractiveSummarizer
from hermesctx.summary.text import (
    COMPACTION_NOTE,
    END_MARKER,
    LEGACY_PREFIX,
    MERGED_DELIMITER,
    MERGED_HEADER,
    PLAIN_PREFIX,
    SUMMARY_PREFIX,
    is_summary_content,
)
from hermesctx.wire.send import openai_request

ROOT = Path(__file__).resolve().parents[2]


class Fixed:
    name = "fixed"

    def __init__(self, text="## Goal\nShip v2.", error=None):
        self.text, self.error, self.requests = text, error, []

    def summarize(self, request):
        self.requests.append(request)
        if self.error:
            raise SummarizerError(self.error, kind="other")
        return self.text


LONG = "x" * 1200


def step(cid):
    return call(cid, "terminal", {"command": f"step {cid}"})


def chain(k):
    out = []
    for i in range(k):
        out += [assistant("", step(f"c{i}")), tool(f"c{i}", LONG)]
    return out


def test_tail_cut_keeps_the_whole_tool_chain_after_the_last_user():  # spec B3
    msgs = [system(), user("hello"), assistant("hi"), user("earlier ask"), assistant("answered"), user("Run the 6-step migration")] + chain(6) \
        + [assistant("Migration finished.")]
    assert tail_cut(msgs, 4, 680) == 5


def test_tail_cut_causal_coupling_and_assistant_anchor():  # spec B4, B5
    b4 = [system(), user("first"), assistant("ok"), assistant("more"), user("Do the long job")] + chain(6) + [assistant("Job done.")]
    assert tail_cut(b4, 4, 680) == 7
    b5 = [system(), user("u"), assistant("a"), user("u"), assistant("a"), user("Plan the release"),
          assistant("Here is the plan: 1) tag 2) build 3) upload."), user("ok, go ahead")] + chain(5)
    assert tail_cut(b5, 4, 680) == 6


@pytest.mark.parametrize("msgs,start,end,expected", [
    ([system(), user("1"), assistant("2"), user("3"), assistant("4"), user("5"), assistant("6"), user("7"), assistant("8"), user("9")], 4, 7, ("assistant", False)),
    ([system(), user("1"), assistant("2"), user("3"), assistant("4"), user("5"), assistant("6"), user("7"), assistant("8")], 4, 6, ("assistant", True)),
    ([user("1"), user("2"), assistant("3"), user("4"), assistant("5"), user("6"), assistant("7"), user("8")], 3, 5, ("user", True)),
])
def test_summary_role_never_doubles_a_role(msgs, start, end, expected):
    assert summary_role(msgs, start, end) == expected


def _long_chat(n=12):
    msgs = [system()]
    for i in range(n):
        msgs += [user(f"ask {i}: " + "u" * 400), assistant(f"reply {i}: " + "a" * 400)]
    return msgs + [user("the latest ask")]


def test_assembly_prefix_marker_note_and_purity():
    msgs = _long_chat()
    frozen = copy.deepcopy(msgs)
    out, report = compress_messages(msgs, summarizer=Fixed(), tail_token_budget=300)
    assert msgs == frozen
    assert report["compressed"] and report["summarizer"] == "fixed"
    assert out[0]["content"].endswith("rather than re-doing work.]")  # not a Hermes transcript
    assert "MEMORY.md" not in out[0]["content"]
    summary = next(m for m in out if is_summary_content(m.get("content")))
    assert summary["content"].startswith(MERGED_HEADER + "\nreply ")  # merged: no role fits between A and A
    # the prefix names no memory files either (Hermes's do not concern this agent)
    assert PLAIN_PREFIX + "\n## Historical Task Snapshot\nUser asked (deterministic" in summary["content"]
    assert "MEMORY.md" not in summary["content"] and PLAIN_PREFIX == SUMMARY_PREFIX.replace(
        "IMPORTANT: Your persistent memory (MEMORY.md, USER.md) in the system prompt is ALWAYS authoritative and "
        "active — never ignore or deprioritize memory content due to this compaction note. ", "")
    assert summary["content"].endswith("## Goal\nShip v2.\n\n" + END_MARKER)
    assert out[-1] == msgs[-1]
    tail = len(msgs) - report["end"]
    assert out[-tail + 1:] == msgs[-tail + 1:]  # the tail is byte-identical (its first message holds the summary)
    assert out[1:4] == msgs[1:4]
    assert report["headline"] == f"Compressed: {len(msgs)} → {len(out)} messages"


def test_recompression_updates_and_never_stacks():
    first, _ = compress_messages(_long_chat(), summarizer=Fixed("## Goal\nv1"), tail_token_budget=300)
    grown = first + [assistant("did it " + "b" * 400)] + sum(([user(f"new {i} " + "n" * 400), assistant("ok " + "o" * 400)]
                                                       for i in range(6)), []) + [user("final ask")]
    summarizer = Fixed("## Goal\nv2")
    second, report = compress_messages(grown, summarizer=summarizer, tail_token_budget=300)
    assert report["previous_summary"] is True
    assert summarizer.requests[0].previous_summary.endswith("## Goal\nv1")
    assert "PREVIOUS SUMMARY:" in summarizer.requests[0].prompt
    assert sum(is_summary_content(m.get("content")) for m in second) == 1
    assert second[-1] == user("final ask")


def test_legacy_prefix_is_found_and_replaced():
    msgs = [system(), {"role": "user", "content": LEGACY_PREFIX + " old body"}] + _long_chat()[1:]
    summarizer = Fixed()
    out, report = compress_messages(msgs, summarizer=summarizer, tail_token_budget=300)
    assert summarizer.requests[0].previous_summary == "old body"
    assert not any(str(m.get("content")).startswith(LEGACY_PREFIX) for m in out)


def test_d7_latest_user_never_summarized():
    msgs = [system(), user("first"), assistant("ok"), assistant("more"), user("Do the long job")] + chain(6) + [assistant("Job done.")]
    out, report = compress_messages(msgs, summarizer=Fixed(), tail_token_budget=680)
    assert user("Do the long job") in out
    assert report["latest_user_kept"] == 4


@pytest.mark.parametrize("msgs,reason", [
    ([system(), user("a"), assistant("b"), user("c")], "too few messages"),
    ([system(), user("run six echoes"), assistant("", *[step(f"e{i}") for i in range(6)])] + [tool(f"e{i}", LONG) for i in range(6)],
     "only tool results after the head"),
])
def test_d7_nothing_compressible_returns_the_input(msgs, reason):
    out, report = compress_messages(msgs, summarizer=Fixed(), tail_token_budget=100)
    assert out is msgs and report["reason"] == reason and report["headline"].startswith("No changes")


def test_d7_a_bigger_result_is_not_emitted():
    msgs = [system()] + sum(([user(f"q{i}"), assistant(f"a{i}")] for i in range(8)), []) + [user("z")]
    out, report = compress_messages(msgs, summarizer=Fixed("## Goal\n" + "long " * 3000), tail_token_budget=10)
    assert out is msgs and "would not shrink" in report["reason"]


def test_summarizer_chain_never_drops_the_middle():
    msgs = _long_chat(30)
    out, report = compress_messages(msgs, summarizer=Fixed(error="HTTP 500"), fallback_summarizer=ExtractiveSummarizer(),
                                    tail_token_budget=300)
    assert report["summarizer"] == "extractive" and report["summarizer_errors"][0]["error"] == "HTTP 500"
    out, report = compress_messages(msgs, summarizer=Fixed(error="HTTP 500"), tail_token_budget=300)
    assert report["summarizer"] == "static-fallback" and report["dropped_without_summary"] == 0
    summary = next(m for m in out if is_summary_content(m.get("content")))["content"]
    assert "## Completed Actions\n1. reply 1:" in summary and summary.count("ask ") >= 3
    assert report["headline"].startswith("Compressed with fallback")
    assert report["note"].endswith("Reason: HTTP 500")


def test_extractive_summary_keeps_the_facts():
    doc = load_example("coding-session.json")
    out, report = compress(doc, summarizer=ExtractiveSummarizer(), protect_last_n=6, tail_token_budget=400)
    summary = next(m for m in out if is_summary_content(m.get("content")))["content"]
    for fact in ["src/budget.py", "src/config.py", "tests/test_small_window.py", "pytest -q tests/test_budget.py",
                 "`src/budget.py` — modified (1 reads, 1 edits); last change added:", "42 passed", "Don't touch src/cli.py",
                 "User asked (deterministic, from compacted turns)"]:
        assert fact in summary, fact
    assert report["tokens_after"] < report["tokens_before"]


def test_cli_compress_archive_and_expand(tmp_path, snapshot):
    raw = (tmp_path / "in.json")
    doc = load_example("coding-session.json")
    raw.write_text(json.dumps(doc))
    r = invoke(["compress", str(raw), "--protect-last-n", "6", "--tail-tokens", "400",
                "--archive", str(tmp_path / "arch")])
    assert r.status == 0, r.stderr
    assert "Compressed: 26 →" in r.stderr
    summary = next(m for m in r.json if is_summary_content(m.get("content")))
    assert not any(k.startswith("_") for m in r.json for k in m)  # the note is text, not a key
    assert "The 26 messages before this compaction are archived in " in summary["content"]
    back = invoke(["compress", "--expand", "--archive", str(tmp_path / "arch")], r.stdout)
    assert back.status == 0 and back.json == doc
    plain = invoke(["compress", str(raw), "--protect-last-n", "6", "--tail-tokens", "400"])
    body = [m for m in plain.json if not is_summary_content(m.get("content"))]
    assert body == snapshot


@pytest.mark.parametrize("provider,env", [("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")])
def test_cli_provider_summarizers_through_the_real_sdks(provider, env):
    doc = load_example("coding-session.json")
    with FakeServer() as server:
        server.script(ok("## Goal\nFix the budget tests."))
        base = server.url + ("/v1" if provider == "openai" else "")
        r = invoke(["compress", "--summarizer", provider, "--base-url", base, "--summary-model", "m-small",
                    "--protect-last-n", "6", "--tail-tokens", "400"], json.dumps(doc).encode(),
                   environ={env: "test-key"})
        assert r.status == 0, r.stderr
        assert f"({provider})" in r.stderr
        body = server.requests[0].body
        # the transcript as the live prefix, the instruction last (tests/summary/test_providers.py)
        assert body["model"] == "m-small" and "TURNS TO SUMMARIZE:" not in json.dumps(body)
        assert server.requests[0].instruction.startswith("Stop the conversation here")
        summary = next(m for m in r.json if is_summary_content(m.get("content")))["content"]
        assert "## Goal\nFix the budget tests." in summary


def test_cli_context_length_error_is_reported_and_falls_back():
    doc = load_example("coding-session.json")
    with FakeServer() as server:
        server.script(context_length(), context_length(), context_length(), context_length())
        r = invoke(["compress", "--summarizer", "openai", "--base-url", server.url + "/v1", "--api-key", "k",
                    "--protect-last-n", "6", "--tail-tokens", "400"], json.dumps(doc).encode())
    assert r.status == 0
    assert "(extractive)" in r.stderr


def test_cli_if_needed_leaves_small_transcripts():
    doc = load_example("coding-session.json")
    r = invoke(["compress", "--if-needed", "--model", "claude-sonnet-4-5"], json.dumps(doc).encode())
    assert r.status == 0 and r.json == doc and "under the threshold" in r.stderr


# --- the failure reason Hermes records (oracle mismatch: it was neither stripped nor cut) ----

def test_failure_reason_is_stripped_and_cut_to_220_characters():
    from hermesctx.summary.fallback import failure_reason

    assert failure_reason(RuntimeError("  padded error  ")) == "padded error"
    assert failure_reason(RuntimeError("")) == "RuntimeError"
    long = "bad " * 70
    assert failure_reason(long) == ("bad " * 55)[:217].rstrip() + "..."
    assert len(failure_reason("y" * 500)) == 220
    assert failure_reason("z" * 220) == "z" * 220


def test_fallback_summary_and_report_carry_the_cut_reason():
    from adversarial_helpers import FixedSummarizer

    error = "HTTP 400: context_length_exceeded " + "z" * 250 + " sk-abcdefghijklmnopqrstuvwx"
    msgs = [system()] + [m for i in range(60) for m in (user(f"ask {i} " + "u" * 150), assistant(f"reply {i} " + "a" * 150))]
    out, report = compress_messages(msgs, summarizer=FixedSummarizer(fail=error), tail_token_budget=300)
    assert report["summarizer"] == "static-fallback"
    cut = error[:217] + "..."
    summary = next(m for m in out if is_summary_content(m.get("content")))["content"]
    assert f"Summary failure reason: {cut}." in summary
    assert "sk-abc" not in summary  # the secret was beyond the cut
    assert report["note"].endswith(" Reason: " + cut)
    assert report["summarizer_errors"] == [{"summarizer": "fixed", "kind": "other", "error": cut}]


def test_parts_whose_type_is_not_a_string_are_measured_not_a_crash():
    odd = [{"role": "system", "content": "s"},
           {"role": "user", "content": [{"type": ["x"], "text": "a"}, {"type": {"k": 1}}]}]
    odd += [{"role": r, "content": f"{r} {i} " + "w" * 400} for i in range(6) for r in ("assistant", "user")]
    r = invoke(["compress", "--protect-first-n", "1", "--protect-last-n", "2", "--tail-tokens", "1"],
               json.dumps(odd).encode())
    assert r.status == 0, r.stderr
    out = r.json
    assert out[0]["content"].startswith("s\n\n[Note: ") and out[-2:] == odd[-2:] and len(out) < len(odd)


def test_a_text_part_holding_null_or_a_number_is_serialized_not_a_crash():
    """Found by `make fuzz`: the summarizer input joined a null text (exit 70)."""
    odd = [{}, {}, {}, {"role": "user"},
           {"role": "assistant", "tool_calls": [], "content": [{"type": "text", "text": None},
                                                               {"type": "text", "text": 5}]},
           {}, {}, {}]
    r = invoke(["compress", "--lenient"], json.dumps(odd).encode())
    assert r.status == 0, r.stderr
    # a summary would be bigger than these few tokens: the input comes back, as it goes on the wire
    assert r.json == openai_request(odd)


def test_hermes_memory_sentence_only_for_a_hermes_transcript_or_when_asked():
    hermes = [system("You are Hermes. Your memory lives in MEMORY.md and USER.md."), *_long_chat()[1:]]
    out, _ = compress_messages(hermes, summarizer=Fixed(), tail_token_budget=300)
    assert out[0]["content"].endswith(COMPACTION_NOTE)
    out, _ = compress_messages(_long_chat(), summarizer=Fixed(), tail_token_budget=300, hermes_note=True)
    assert out[0]["content"].endswith(COMPACTION_NOTE)
    out, _ = compress_messages(hermes, summarizer=Fixed(), tail_token_budget=300, hermes_note=False)
    assert "remains fully authoritative" not in out[0]["content"]
    again, _ = compress_messages(out, summarizer=Fixed(), tail_token_budget=300)
    assert again[0]["content"].count("[Note: ") == 1
    r = invoke(["compress", "--hermes-note", "--tail-tokens", "300"], _long_chat())
    assert r.status == 0, r.stderr and r.json[0]["content"].endswith(COMPACTION_NOTE)


def test_the_summary_prefix_names_the_memory_files_only_to_a_hermes_agent():
    hermes = [system("You are Hermes. Your memory lives in MEMORY.md and USER.md."), *_long_chat()[1:]]

    def summary(msgs, **kw):
        out, _ = compress_messages(msgs, summarizer=Fixed(), tail_token_budget=300, **kw)
        text = next(m["content"] for m in out if is_summary_content(m.get("content")))
        return text.split(MERGED_DELIMITER + "\n\n", 1)[-1]

    assert summary(hermes).startswith(SUMMARY_PREFIX + "\n")  # Hermes's, character for character
    assert summary(_long_chat(), hermes_note=True).startswith(SUMMARY_PREFIX + "\n")
    for plain in (summary(_long_chat()), summary(hermes, hermes_note=False)):
        assert plain.startswith(PLAIN_PREFIX + "\n") and "MEMORY.md" not in plain
    # a summary under either prefix is found again, updated and never stacked
    out, _ = compress_messages(_long_chat(), summarizer=Fixed(), tail_token_budget=300)
    grown = out + [assistant("more"), user("and now?")]
    again, report = compress_messages(grown, summarizer=Fixed("## Goal\nv2"), tail_token_budget=300)
    assert report["previous_summary"] and sum(is_summary_content(m.get("content")) for m in again) == 1


def test_a_summary_merged_into_a_tail_message_goes_after_its_thinking():
    thinking = {"type": "thinking", "thinking": "t", "signature": "S"}
    msgs = _long_chat()
    msgs[18] = {"role": "assistant", "content": [thinking, {"type": "text", "text": "reply: " + "a" * 400}]}
    out, report = compress_messages(msgs, summarizer=Fixed(), tail_token_budget=300)
    assert report["end"] == 18
    merged = next(m for m in out if is_summary_content(m.get("content")))
    assert merged["content"][0] is thinking  # verbatim, and first
    assert merged["content"][1] == {"type": "text", "text": MERGED_HEADER + "\n"}
    assert [p["type"] for p in merged["content"]] == ["thinking", "text", "text", "text"]


def test_images_stripped_from_kept_messages_are_said():
    """Hermes replaces every image before the newest image-bearing user turn, in the kept head
    too: the report counts them and the warning says so (it was silent)."""
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}
    msgs = [{"role": "system", "content": "s"},
            {"role": "user", "content": [{"type": "text", "text": "look"}, image]}]
    msgs += [{"role": "assistant" if i % 2 else "user", "content": f"turn {i} " + "words " * 300}
             for i in range(30)]
    msgs += [{"role": "user", "content": [{"type": "text", "text": "and this"}, image]},
             {"role": "assistant", "content": "seen"}]
    out, report = compress_messages(msgs, summarizer=ExtractiveSummarizer(), protect_first_n=1,
                                    protect_last_n=2, tail_token_budget=200)
    assert report["compressed"] and report["images_stripped"] == 1
    assert "placeholder" in report["warning"]
    assert out[1]["content"][1] == {"type": "text", "text": "[Attached image — stripped after compression]"}
    assert out[-2]["content"][1] == image


def _autonomous_run(n=200, ask_at=8, head_last="user"):
    """A long autonomous run: a few opening turns, the last ask at ``ask_at``, then tool turns only."""
    msgs = [system("You are an agent."), {"role": "user", "content": "Set up the repo."},
            {"role": "assistant", "content": "Done: the repo is set up."}]
    msgs.append({"role": head_last, "content": "Noted."} if head_last == "user" else
                 {"role": "assistant", "content": "Anything else?"})
    while len(msgs) < ask_at:
        msgs.append({"role": "assistant" if msgs[-1]["role"] == "user" else "user", "content": f"turn {len(msgs)}"})
    msgs.append({"role": "user", "content": "Port the suite to pytest and make every test pass; never touch src/."})
    k = 0
    while len(msgs) < n:
        k += 1
        msgs.append({"role": "assistant", "content": f"Step {k}.", "tool_calls": [
            {"id": f"c{k}", "type": "function", "function": {"name": "terminal",
                                                           "arguments": json.dumps({"command": f"pytest t{k}.py"})}}]})
        msgs.append({"role": "tool", "tool_call_id": f"c{k}", "content": "output line\n" * 200 + f"{k} passed in 0.{k}s"})
    return msgs


@pytest.mark.parametrize("head_last", ["user", "assistant"])
def test_a_long_autonomous_run_compacts_past_its_early_ask(head_last):
    from hermesctx.wire.rules import check, failed

    msgs = _autonomous_run(head_last=head_last)
    ask = msgs[8]
    out, report = compress_messages(msgs, summarizer=ExtractiveSummarizer())
    assert report["compressed"] and report["latest_user_moved"] and report["latest_user_kept"] == 8
    assert report["end"] > 100 and len(out) < 80
    where = next(i for i, m in enumerate(out) if is_summary_content(m.get("content")))
    summary = out[where]["content"]
    if out[where]["role"] == "user":  # no role fits between the head and the ask: the summary opens its message
        assert summary.endswith(END_MARKER + "\n\n" + ask["content"]) and MERGED_HEADER not in summary
    else:  # the ask is the message right after the summary, verbatim
        assert out[where + 1] == ask
    assert [m for m in out if m.get("content") == ask["content"]] or summary.endswith(ask["content"])
    assert not failed(check({"messages": out}, "openai"))
    assert msgs == _autonomous_run(head_last=head_last)  # the input is not mutated


def test_an_interactive_session_keeps_its_ask_in_place():
    msgs = _autonomous_run(n=60, ask_at=8)  # then a new ask near the end: the middle ends at it, as before
    msgs += [{"role": "user", "content": "Now write the changelog entry for this."},
             {"role": "assistant", "content": "Writing it."}]
    out, report = compress_messages(msgs, summarizer=ExtractiveSummarizer(), tail_token_budget=500)
    assert report["compressed"] and not report.get("latest_user_moved")
    assert report["end"] <= 60 and out[-2:] == msgs[-2:] and msgs[60] in out


def test_a_file_state_cut_by_prune_in_the_tail_is_kept_by_the_summary():
    body = "\n".join(f"    value_{k} = compute_{k}(config)" for k in range(24))
    msgs = _autonomous_run(n=100, ask_at=8)
    msgs.append({"role": "user", "content": "Now rewrite the loader and run the suite again."})
    msgs += [{"role": "assistant", "content": "Rewriting the loader.", "tool_calls": [
        {"id": "w1", "type": "function", "function": {"name": "write_file", "arguments": json.dumps(
            {"path": "src/loader.py", "content": "def load(config):\n" + body})}}]},
             {"role": "tool", "tool_call_id": "w1", "content": "written"}]
    msgs += _autonomous_run(n=24, ask_at=8)[9:]  # more tool turns after it
    out, report = compress_messages(msgs, summarizer=ExtractiveSummarizer(), tail_token_budget=2000, protect_last_n=4)
    assert report["compressed"] and report["end"] <= 100 and not report.get("latest_user_moved")
    kept_edit = next(m for m in out if m.get("tool_calls") and m["tool_calls"][0]["id"] == "w1")
    assert "value_23" not in kept_edit["tool_calls"][0]["function"]["arguments"]  # prune cut it (Hermes's rule)
    summary = next(m["content"] for m in out if is_summary_content(m.get("content")))
    assert "`src/loader.py`" in summary and "value_23 = compute_23(config)" in summary


def test_cli_explain_prints_the_drop_ledger():
    result = invoke(["compress", "--explain", "--tail-tokens", "400", "--protect-last-n", "6",
                     str(ROOT / "examples" / "coding-session.json")])
    assert result.status == 0, result.stderr
    assert "drop ledger: " in result.stderr and " facts of the compacted region survive in the output" in result.stderr
    quiet = invoke(["compress", "--tail-tokens", "400", "--protect-last-n", "6",
                    str(ROOT / "examples" / "coding-session.json")])
    assert "drop ledger" not in quiet.stderr
