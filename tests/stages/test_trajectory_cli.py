"""`hermesctx trajectory`: JSONL in → JSONL out, real openai/anthropic SDKs against fakeserver."""

from __future__ import annotations

import json

import pytest
from conftest import EXAMPLES, invoke
from fakeserver import FakeServer, context_length, status
from test_trajectory import e2, e3

EXAMPLE = EXAMPLES / "trajectories.jsonl"
NOTICE = "\n\nSome of your previous tool responses may be summarized to preserve context."


@pytest.fixture
def server():
    with FakeServer(default_text="The agent listed files and read config.yaml: port 8080.") as srv:
        yield srv


def openai_args(server, *extra):
    return ["trajectory", "--summarizer", "openai", "--base-url", server.url + "/v1",
            "--model", "local-model", "--retry-delay", "0", *extra]


def jsonl(*entries) -> str:
    return "".join(json.dumps(entry) + "\n" for entry in entries)


def test_example_file_with_openai_summarizer(server, snapshot):
    result = invoke(openai_args(server, str(EXAMPLE), "--target-max-tokens", "300",
                                "--summary-target-tokens", "50", "-j", "3"),
                    environ={"OPENAI_API_KEY": "sk-local"})
    assert result.status == 0, result.stderr
    lines = result.lines
    assert [line["id"] for line in lines] == ["port-search", "arithmetic", "long-system-prompt",
                                              "chat-format"]
    first = lines[0]
    assert list(first) == ["id", "conversations", "model", "completed", "compression_metrics"]
    assert first["compression_metrics"]["compression_region"] == {
        "start_idx": 4, "end_idx": 8, "turns_count": 4}
    assert first["conversations"][4] == {
        "from": "human",
        "value": "[CONTEXT SUMMARY]: The agent listed files and read config.yaml: port 8080."}
    assert first["conversations"][0]["value"].endswith(NOTICE)
    assert "compression_metrics" not in lines[1]  # under target: untouched
    assert lines[3] == {"id": "chat-format", "messages": [
        {"role": "user", "content": "not a ShareGPT entry: passed through"}]}
    # the prompts that reached the server: one per compressed trajectory
    assert len(server.requests) == 2
    prompts = sorted(req.prompt for req in server.requests)
    assert all(req.body["model"] == "local-model" for req in server.requests)
    assert all(req.headers["authorization"] == "Bearer sk-local" for req in server.requests)
    assert any("[Turn 4 - GPT]:\n<think>\nr0 r1" in p and "[Turn 7 - TOOL]" in p for p in prompts)
    assert all("TURNS TO SUMMARIZE:" in p and "roughly 50 tokens" in p for p in prompts)
    aggregate = json.loads(result.stderr.strip().splitlines()[-1])
    assert aggregate["summary"] == {
        "total_trajectories": 4, "trajectories_compressed": 2,
        "trajectories_skipped_under_target": 1, "trajectories_still_over_limit": 1,
        "trajectories_failed": 0, "compression_rate": 0.5}
    assert aggregate["summarization"] == {"total_api_calls": 2, "total_errors": 0,
                                          "success_rate": 1.0}
    assert result.lines == snapshot


def test_metrics_file_and_quiet_stderr(server, tmp_path):
    metrics = tmp_path / "metrics.json"
    result = invoke(openai_args(server, "--target-max-tokens", "300", "--metrics", str(metrics)),
                    jsonl({"id": 1, "conversations": e2()}))
    assert result.status == 0
    assert result.stderr == ""
    data = json.loads(metrics.read_text())
    assert list(data) == ["summary", "tokens", "turns", "averages", "summarization", "processing"]
    assert data["summary"]["trajectories_compressed"] == 1
    assert data["tokens"]["total_before"] == 419
    assert metrics.read_text().startswith("{\n  \"summary\"")


def test_failed_trajectory_written_unchanged_and_counted(server):
    bad = e2()
    bad[7]["value"] = 12345
    entries = [{"id": 1, "conversations": e2()}, {"id": 2, "conversations": bad},
               {"id": 3, "conversations": e3()}]
    result = invoke(openai_args(server, "--target-max-tokens", "300"), jsonl(*entries))
    assert result.status == 0
    lines = result.lines
    assert [line["id"] for line in lines] == [1, 2, 3]
    assert lines[1] == entries[1]
    assert "line 2: trajectory failed (TypeError" in result.stderr
    aggregate = json.loads(result.stderr.strip().splitlines()[-1])
    assert aggregate["summary"]["trajectories_failed"] == 1
    assert aggregate["summary"]["total_trajectories"] == 2


def test_invalid_json_line_skipped_with_warning(server):
    text = jsonl({"id": 1, "conversations": e2()[:3]}) + "\n{not json\n" + jsonl({"id": 2})
    result = invoke(openai_args(server), text)
    assert result.status == 0
    assert [line["id"] for line in result.lines] == [1, 2]
    assert "line 3:" in result.stderr and "skipped" in result.stderr


def test_summarizer_failure_uses_fixed_text(server):
    server.script(status(500), status(500), context_length())
    result = invoke(openai_args(server, "--target-max-tokens", "300"),
                    jsonl({"id": 1, "conversations": e2()}), environ={"OPENAI_API_KEY": "k"})
    assert result.status == 0
    [line] = result.lines
    assert line["conversations"][4]["value"].startswith(
        "[CONTEXT SUMMARY]: [Summary generation failed")
    assert line["compression_metrics"]["summarization_api_calls"] == 3
    assert line["compression_metrics"]["summarization_errors"] == 3
    assert len(server.requests) == 3  # no retries inside the provider: Hermes's 3 attempts


def test_anthropic_summarizer(server):
    result = invoke(["trajectory", "--summarizer", "anthropic", "--base-url", server.url,
                     "--model", "claude-haiku-4-5", "--target-max-tokens", "300",
                     "--summary-target-tokens", "600"],
                    jsonl({"id": 1, "conversations": e2()}),
                    environ={"ANTHROPIC_API_KEY": "sk-ant-test"})
    assert result.status == 0, result.stderr
    [req] = server.requests
    assert req.path == "/v1/messages"
    assert req.body["max_tokens"] == 1200 and req.body["model"] == "claude-haiku-4-5"
    assert req.headers["authorization"] == "Bearer sk-ant-test"
    assert result.lines[0]["conversations"][4]["value"].startswith("[CONTEXT SUMMARY]: The agent")


def test_missing_key_fails_fast_with_status_4():
    result = invoke(["trajectory", "--summarizer", "anthropic"], jsonl({"conversations": e2()}),
                    environ={"ANTHROPIC_API_KEY": ""})
    assert result.status == 4
    assert result.stdout == b""
    assert "ANTHROPIC_API_KEY" in result.stderr


def test_option_validation():
    result = invoke(["trajectory", "--protect-first", "system,bot"], "")
    assert result.status == 2 and "unknown role 'bot'" in result.stderr
    result = invoke(["trajectory", "--concurrency", "0"], "")
    assert result.status == 2


def test_protect_options_change_the_region(server):
    args = openai_args(server, "--target-max-tokens", "300", "--protect-first", "system,human",
                       "--protect-last-n", "2", "--no-notice", "--no-entry-metrics")
    result = invoke(args, jsonl({"id": 1, "conversations": e2()}))
    [line] = result.lines
    assert list(line) == ["id", "conversations"]
    assert line["conversations"][0]["value"] == "Tools: list_files read_file."
    assert line["conversations"][2]["from"] == "human"  # region starts right after turn 1
    assert "[Turn 2 - GPT]" in server.requests[0].prompt


def test_cl100k_encoding_changes_counts(server, tmp_path):
    counts = {}
    for encoding in ("o200k_base", "cl100k_base"):
        path = tmp_path / f"{encoding}.json"
        invoke(openai_args(server, "--encoding", encoding, "--metrics", str(path)),
               jsonl({"conversations": e2()[:3]}))
        counts[encoding] = json.loads(path.read_text())["tokens"]["total_before"]
    assert counts["o200k_base"] == 39
    assert counts["cl100k_base"] > 0


def test_progress_only_on_a_terminal(server):
    from io import BytesIO, StringIO

    from hermesctx.cli import run
    from hermesctx.context import Env

    err = StringIO()
    env = Env(stdin=BytesIO(jsonl({"conversations": e2()[:3]}).encode()), stdout=BytesIO(),
              stderr=err, environ={}, stderr_isatty=True)
    assert run(openai_args(server), env) == 0
    assert "\rtrajectory: 1 done, 0 compressed, 0 failed" in err.getvalue()
    assert "\rtrajectory" not in invoke(openai_args(server), jsonl({"conversations": []})).stderr


def test_help_has_examples_and_exit_status():
    import inspect

    from hermesctx.cli.commands.trajectory import command
    from hermesctx.exit import EXIT_STATUS_HELP

    assert "\b\nExamples:\n    hermesctx trajectory" in inspect.cleandoc(command.help)  # as click shows it
    assert command.epilog == EXIT_STATUS_HELP


def test_default_extractive_summarizer_offline():
    result = invoke(["trajectory", str(EXAMPLE), "--target-max-tokens", "300",
                     "--summary-target-tokens", "50"], environ={"OPENAI_API_KEY": ""})
    assert result.status == 0, result.stderr
    first = result.lines[0]
    summary = first["conversations"][4]["value"]
    assert summary.startswith("[CONTEXT SUMMARY]: ")
    assert "`config.yaml` — read" in summary and "`main.py` — read" in summary  # turns 4-7's calls
    assert first["compression_metrics"]["summarization_errors"] == 0
    again = invoke(["trajectory", str(EXAMPLE), "--target-max-tokens", "300",
                    "--summary-target-tokens", "50", "-j", "1"])
    assert again.stdout == result.stdout  # deterministic, whatever the concurrency


def test_file_errors_exit_5(tmp_path):
    result = invoke(["trajectory", str(tmp_path / "missing.jsonl")])
    assert result.status == 5 and "cannot read" in result.stderr
    result = invoke(["trajectory", "--metrics", str(tmp_path / "no" / "m.json")],
                    jsonl({"conversations": []}))
    assert result.status == 5 and "cannot write metrics" in result.stderr
