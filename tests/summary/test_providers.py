"""The provider summarizers run the real anthropic / openai SDKs against tests/fakeserver.py."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from fakeserver import FakeServer, auth_error, context_length, hang, ok, rate_limited, status

from hermesctx.summary import SummarizerError, SummaryRequest, make_summarizer
from hermesctx.summary.providers import AnthropicSummarizer, OpenAISummarizer, classify
from hermesctx.summary.text import END_MARKER, PLAIN_PREFIX

PROMPT = "Summarize these turns.\n---\n[Turn 4 - GPT]:\nread config.yaml\n---\nFOCUS: ports"
REQUEST = SummaryRequest(prompt=PROMPT, budget_tokens=750)
PROVIDERS = ["anthropic", "openai"]


@pytest.fixture
def server():
    with FakeServer() as srv:
        yield srv


def build(name, server, **options):
    options.setdefault("api_key", "sk-test-123")
    options.setdefault("timeout", 2.0)
    options.setdefault("backoff_base", 0.01)
    url = server.url if name == "anthropic" else server.url + "/v1"
    return make_summarizer(name, base_url=url, **options)


def test_anthropic_success_request_on_the_wire(server):
    server.script(ok("  The agent read config.yaml; port 8080.  "))
    summarizer = build("anthropic", server, model="claude-sonnet-4-5")
    assert isinstance(summarizer, AnthropicSummarizer)
    assert summarizer.summarize(REQUEST) == "The agent read config.yaml; port 8080."
    [req] = server.requests
    assert req.path == "/v1/messages"
    assert req.body == {"model": "claude-sonnet-4-5", "max_tokens": 1500,
                        "messages": [{"role": "user", "content": PROMPT}]}
    assert req.prompt == PROMPT
    assert req.headers["authorization"] == "Bearer sk-test-123"  # anthropic 2.x sends the key so
    assert req.headers["anthropic-version"]
    assert req.headers["x-stainless-retry-count"] == "0"  # SDK retries are off: ours run


def test_openai_success_request_on_the_wire(server):
    server.script(ok("Summary body"))
    summarizer = build("openai", server, model="qwen2.5-coder")
    assert isinstance(summarizer, OpenAISummarizer)
    assert summarizer.summarize(REQUEST) == "Summary body"
    [req] = server.requests
    assert req.path == "/v1/chat/completions"
    # one user message; no max_tokens and no temperature, as Hermes
    assert req.body == {"model": "qwen2.5-coder", "messages": [{"role": "user", "content": PROMPT}]}
    assert req.headers["authorization"] == "Bearer sk-test-123"


@pytest.mark.parametrize("budget,cap", [(0, 1024), (100, 1024), (750, 1500), (12000, 24000),
                                        (50000, 32000)])
def test_anthropic_max_tokens_follows_budget(server, budget, cap):
    summarizer = build("anthropic", server)
    summarizer.summarize(SummaryRequest(prompt="p", budget_tokens=budget))
    assert server.requests[-1].body["max_tokens"] == cap


def test_anthropic_max_tokens_override(server):
    build("anthropic", server, max_tokens=4096).summarize(REQUEST)
    assert server.requests[-1].body["max_tokens"] == 4096


@pytest.mark.parametrize("name", PROVIDERS)
def test_env_supplies_key_and_base_url(server, name):
    key_env, url_env = (("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL") if name == "anthropic"
                        else ("OPENAI_API_KEY", "OPENAI_BASE_URL"))
    url = server.url if name == "anthropic" else server.url + "/v1"
    summarizer = make_summarizer(name, env={key_env: "env-key", url_env: url}, timeout=2)
    assert summarizer.summarize(REQUEST) == "fake summary"
    assert server.requests[-1].headers["authorization"] == "Bearer env-key"


@pytest.mark.parametrize("name", PROVIDERS)
def test_options_beat_env(server, name):
    key_env = "ANTHROPIC_API_KEY" if name == "anthropic" else "OPENAI_API_KEY"
    build(name, server, api_key="flag-key", env={key_env: "env-key"}).summarize(REQUEST)
    assert server.requests[-1].headers["authorization"] == "Bearer flag-key"


def test_anthropic_without_key_is_auth_error_and_sends_nothing(server):
    summarizer = make_summarizer("anthropic", base_url=server.url, env={})
    with pytest.raises(SummarizerError) as info:
        summarizer.summarize(REQUEST)
    assert info.value.kind == "auth"
    assert "ANTHROPIC_API_KEY" in str(info.value)
    assert server.requests == []


def test_openai_default_endpoint_without_key_is_auth_error():
    with pytest.raises(SummarizerError) as info:
        make_summarizer("openai", env={}).summarize(REQUEST)
    assert info.value.kind == "auth"
    assert "OPENAI_API_KEY" in str(info.value)


def test_openai_local_server_needs_no_key(server):
    summarizer = make_summarizer("openai", base_url=server.url + "/v1", env={}, timeout=2)
    assert summarizer.summarize(REQUEST) == "fake summary"
    assert server.requests[-1].headers["authorization"].startswith("Bearer ")


@pytest.mark.parametrize("name", PROVIDERS)
def test_500_then_success_retries_with_backoff(server, name):
    sleeps = []
    server.script(status(500), status(503), ok("third time"))
    summarizer = build(name, server, retries=2, backoff_base=0.5, sleep=sleeps.append)
    assert summarizer.summarize(REQUEST) == "third time"
    assert len(server.requests) == 3
    assert sleeps == [0.5, 1.0]  # exponential: base, 2·base
    assert all(req.prompt == PROMPT for req in server.requests)


@pytest.mark.parametrize("name", PROVIDERS)
def test_persistent_500_gives_server_error_after_retries(server, name):
    server.script(*[status(500)] * 5)
    sleeps = []
    with pytest.raises(SummarizerError) as info:
        build(name, server, retries=2, sleep=sleeps.append).summarize(REQUEST)
    assert info.value.kind == "server"
    assert info.value.status == 500
    assert len(server.requests) == 3
    assert len(sleeps) == 2


@pytest.mark.parametrize("name", PROVIDERS)
def test_429_honours_retry_after(server, name):
    sleeps = []
    server.script(rate_limited(retry_after=3), ok("after the wait"))
    summarizer = build(name, server, retries=1, backoff_base=0.01, sleep=sleeps.append)
    assert summarizer.summarize(REQUEST) == "after the wait"
    assert sleeps == [3.0]


@pytest.mark.parametrize("name", PROVIDERS)
def test_429_retry_after_too_long_stops_at_once(server, name):
    sleeps = []
    server.script(rate_limited(retry_after=3600), ok("never"))
    with pytest.raises(SummarizerError) as info:
        build(name, server, retries=3, max_backoff=30, sleep=sleeps.append).summarize(REQUEST)
    assert info.value.kind == "rate_limit"
    assert info.value.status == 429
    assert "retry-after 3600s" in str(info.value)
    assert sleeps == [] and len(server.requests) == 1


@pytest.mark.parametrize("name", PROVIDERS)
def test_persistent_429_is_rate_limit(server, name):
    server.script(rate_limited(), rate_limited())
    with pytest.raises(SummarizerError) as info:
        build(name, server, retries=1).summarize(REQUEST)
    assert info.value.kind == "rate_limit"
    assert len(server.requests) == 2


@pytest.mark.parametrize("name", PROVIDERS)
def test_backoff_is_capped(server, name):
    sleeps = []
    server.script(*[status(502)] * 4, ok("x"))
    build(name, server, retries=4, backoff_base=10, max_backoff=25,
          sleep=sleeps.append).summarize(REQUEST)
    assert sleeps == [10, 20, 25, 25]


@pytest.mark.parametrize("name", PROVIDERS)
def test_context_length_error_is_classified_and_not_retried(server, name):
    server.script(context_length(), ok("never"))
    with pytest.raises(SummarizerError) as info:
        build(name, server, retries=3).summarize(REQUEST)
    assert info.value.kind == "context_length"
    assert info.value.status == 400
    assert len(server.requests) == 1
    text = "prompt is too long" if name == "anthropic" else "maximum context length"
    assert text in str(info.value)


@pytest.mark.parametrize("name", PROVIDERS)
def test_auth_error_not_retried(server, name):
    server.script(auth_error())
    with pytest.raises(SummarizerError) as info:
        build(name, server, retries=3).summarize(REQUEST)
    assert (info.value.kind, info.value.status, len(server.requests)) == ("auth", 401, 1)


@pytest.mark.parametrize("name", PROVIDERS)
def test_timeout_then_success(server, name):
    server.script(hang(5), ok("fast now"))
    start = time.monotonic()
    assert build(name, server, timeout=0.3, retries=1).summarize(REQUEST) == "fast now"
    assert time.monotonic() - start < 3
    assert len(server.requests) == 2


@pytest.mark.parametrize("name", PROVIDERS)
def test_persistent_timeout_is_timeout_and_bounded(server, name):
    server.script(hang(5), hang(5))
    start = time.monotonic()
    with pytest.raises(SummarizerError) as info:
        build(name, server, timeout=0.3, retries=1).summarize(REQUEST)
    assert info.value.kind == "timeout"
    assert time.monotonic() - start < 3  # 2 attempts × 0.3 s + backoff, not 5 s


@pytest.mark.parametrize("name", PROVIDERS)
@pytest.mark.parametrize("text", [None, "", "   \n"])
def test_empty_content(server, name, text):
    server.script(ok(text))
    with pytest.raises(SummarizerError) as info:
        build(name, server, retries=2).summarize(REQUEST)
    assert info.value.kind == "empty"
    assert len(server.requests) == 1


def _refused(name: str, **options):
    """A summarizer pointed at a port nothing listens on any more, and the error it raises."""
    with FakeServer() as dead:
        url = dead.url
    summarizer = make_summarizer(name, base_url=url + ("" if name == "anthropic" else "/v1"), api_key="k",
                                 backoff_base=0.01, **options)
    with pytest.raises(SummarizerError) as info:
        summarizer.summarize(REQUEST)
    return summarizer, info.value


@pytest.mark.parametrize("name", PROVIDERS)
def test_connection_refused_is_connection(name):
    assert _refused(name, timeout=1, retries=1)[1].kind == "connection"


def test_classify_plain_exceptions():
    assert classify(RuntimeError("boom")) == ("other", None)
    assert classify(TimeoutError("timed out")) == ("timeout", None)
    assert classify(ConnectionError("refused")) == ("connection", None)


def test_sdks_not_imported_at_startup():
    code = ("import sys, hermesctx.cli, hermesctx.summary.providers; "
            "print('anthropic' in sys.modules, 'openai' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


@pytest.mark.parametrize("name", PROVIDERS)
def test_413_is_context_length_and_plain_400_is_other(server, name):
    server.script(status(413), status(400))
    summarizer = build(name, server, retries=3)
    kinds = []
    for _ in range(2):
        with pytest.raises(SummarizerError) as info:
            summarizer.summarize(REQUEST)
        kinds.append((info.value.kind, info.value.status))
    assert kinds == [("context_length", 413), ("other", 400)]
    assert len(server.requests) == 2


@pytest.mark.parametrize("name", PROVIDERS)
def test_529_overloaded_is_retried(server, name):
    sleeps = []
    server.script(status(529), ok("ok after overload"))
    assert build(name, server, sleep=sleeps.append).summarize(REQUEST) == "ok after overload"
    assert len(sleeps) == 1


# --- end to end: `hermesctx compress` -> the real SDK -> the local server -------------------

KEY = "sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"
TRANSCRIPT = [
    {"role": "system", "content": "You are Hermes."},
    {"role": "user", "content": "Fix the login bug"},
    {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {
        "name": "read_file", "arguments": "{\"path\": \"auth.py\"}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "def login(): pass"},
    {"role": "assistant", "content": f"<think>hmm</think>The key is OPENAI_API_KEY={KEY}\n" + "detail " * 400},
    {"role": "user", "content": "ok"}, {"role": "assistant", "content": "done"},
    {"role": "user", "content": "and the tests?"}, {"role": "assistant", "content": "they pass"},
]
# what the summarizer must read (spec 30.3.2): the middle (messages 2-4), reasoning stripped,
# the key redacted, the tool call listed under its assistant, the result labelled by its id
MIDDLE = ("TURNS TO SUMMARIZE:\n[ASSISTANT]: \n[Tool calls:\n  read_file({\"path\": \"auth.py\"})\n]\n\n"
          "[TOOL RESULT c1]: def login(): pass\n\n[ASSISTANT]: The key is OPENAI_API_KEY=***\n" + "detail " * 400
          + "\n\nUse exactly this structure:\n\n## Historical Task Snapshot\n")
HEADINGS = ["## Historical Task Snapshot", "## Goal", "## Constraints & Preferences", "## Completed Actions",
            "## Active State", "## Historical In-Progress State", "## Blocked", "## Key Decisions",
            "## Resolved Questions", "## Historical Pending User Asks", "## Relevant Files",
            "## Historical Remaining Work", "## Critical Context"]


def _compress_cli(name, server, *extra, environ=None):
    from conftest import invoke

    url = server.url if name == "anthropic" else server.url + "/v1"
    return invoke(["compress", "--summarizer", name, "--base-url", url, "--api-key", "k", "--protect-first-n", "1",
                   "--tail-tokens", "30", *extra], TRANSCRIPT, environ=environ)


def _assert_compress_prompt(prompt):
    assert MIDDLE in prompt
    assert KEY not in prompt and "<think>" not in prompt
    positions = [prompt.index("\n" + h + "\n") for h in HEADINGS]
    assert positions == sorted(positions)
    assert "Target ~2000 tokens." in prompt
    assert prompt.endswith(_assert_compress_prompt.focus)


_assert_compress_prompt.focus = (
    'FOCUS TOPIC: "Recent user focus:\n- Fix the login bug\n- ok\n- and the tests?"\n'
    'Give everything related to "Recent user focus:\n- Fix the login bug\n- ok\n- and the '
    'tests?" full detail and spend roughly 60-70% of the token budget on it. Summarize '
    "unrelated material tersely, in one line, or leave it out. Credentials are never kept, focus or not.")


def _assert_instruction(text):
    """The instruction after a live prefix: Hermes's structure, the turns not written out again."""
    assert "TURNS TO SUMMARIZE" not in text and "detail detail" not in text
    assert text.startswith("Stop the conversation here: do not answer it, continue its task or call a tool.")
    assert ('everything from the assistant message that calls read_file({"path": "auth.py"}) up to, not including, '
            'the message that begins "ok" will be removed') in text
    positions = [text.index("\n" + h + "\n") for h in HEADINGS]
    assert positions == sorted(positions) and "Target ~2000 tokens." in text
    assert text.endswith(_assert_compress_prompt.focus)


def _assert_live(req, name):
    """The whole transcript as the agent sends it (the system prompt, the call and its result, the
    kept tail, the key redacted), marked for the prompt cache on its last block, then the instruction."""
    body = req.body
    assert KEY not in json.dumps(body) and "OPENAI_API_KEY=***" in json.dumps(body)
    _assert_instruction(req.instruction)
    if name == "anthropic":
        assert body["system"] == "You are Hermes."
        assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user", "assistant", "user",
                                                         "assistant", "user", "assistant", "user"]
        assert body["messages"][1]["content"][0]["type"] == "tool_use"
        assert body["messages"][2]["content"] == [{"type": "tool_result", "tool_use_id": "c1",
                                                   "content": "def login(): pass"}]
        marked = [(i, j) for i, m in enumerate(body["messages"]) if isinstance(m["content"], list)
                  for j, b in enumerate(m["content"]) if "cache_control" in b]
        assert marked == [(7, 0)] and body["messages"][7]["content"] == [
            {"type": "text", "text": "they pass", "cache_control": {"type": "ephemeral"}}]
        assert body["messages"][-1] == {"role": "user", "content": [{"type": "text", "text": req.instruction}]}
        assert body["tool_choice"] == {"type": "none"} and [t["name"] for t in body["tools"]] == ["read_file"]
    else:
        assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "tool", "assistant", "user",
                                                         "assistant", "user", "assistant", "user"]
        assert body["messages"][2]["tool_calls"][0]["function"]["name"] == "read_file"
        assert body["messages"][-1] == {"role": "user", "content": req.instruction}
        assert "tools" not in body and "max_tokens" not in body


@pytest.mark.parametrize("name", PROVIDERS)
def test_cli_compress_500_then_success_sends_the_whole_prompt_each_time(server, name):
    server.script(status(500), ok("## Goal\nFix login."))
    r = _compress_cli(name, server)
    assert r.status == 0, r.stderr
    assert len(server.requests) == 2
    first, second = server.requests
    assert first.body == second.body  # the retry resends the same request
    _assert_live(first, name)
    assert "max_tokens" not in first.body if name == "openai" else first.body["max_tokens"] == 4000
    summary = next(m for m in r.json if m["content"].startswith(PLAIN_PREFIX))
    # no user turn in the middle: no task snapshot is grafted on (spec 30.4.6)
    assert summary["content"] == PLAIN_PREFIX + "\n## Goal\nFix login.\n\n" + END_MARKER
    assert [m["role"] for m in r.json] == ["system", "user", "assistant", "user", "assistant", "user", "assistant"]
    assert f"({name})" in r.stderr and "Compressed: 9 → 7 messages" in r.stderr


@pytest.mark.parametrize("name", PROVIDERS)
def test_cli_compress_timeout_falls_back_to_extractive(server, name):
    server.script(*[hang(5)] * 3)
    start = time.monotonic()
    r = _compress_cli(name, server, "--timeout", "0.3", environ={"HERMESCTX_SUMMARIZER_RETRIES": "1"})
    assert time.monotonic() - start < 8  # 2 attempts x 0.3 s + one backoff, not 5 s per hang
    assert r.status == 0, r.stderr
    assert len(server.requests) == 2 and server.requests[0].body == server.requests[1].body
    _assert_live(server.requests[0], name)
    assert "(extractive)" in r.stderr
    assert any(m["content"].startswith(PLAIN_PREFIX) for m in r.json)


@pytest.mark.parametrize("name", PROVIDERS)
def test_cli_compress_context_length_is_not_retried_and_falls_back(server, name):
    """A live prefix over the window is asked once more as Hermes asks (the serialized turns in
    one message); that failing too, the extractive summarizer stands in."""
    server.script(context_length(), context_length(), ok("never used"))
    r = _compress_cli(name, server)
    assert r.status == 0, r.stderr
    assert len(server.requests) == 2
    _assert_live(server.requests[0], name)
    assert len(server.requests[1].body["messages"]) == 1
    _assert_compress_prompt(server.requests[1].prompt)
    assert "(extractive)" in r.stderr
    assert "never used" not in json.dumps(r.json)


@pytest.mark.parametrize("name", PROVIDERS)
@pytest.mark.parametrize("refusal", [context_length, lambda: status(400)])
def test_cli_compress_a_prefix_over_the_window_is_summarized_from_the_serialized_turns(server, name, refusal):
    server.script(refusal(), ok("## Goal\nFix login."))
    r = _compress_cli(name, server)
    assert r.status == 0, r.stderr
    assert len(server.requests) == 2 and len(server.requests[1].body["messages"]) == 1
    _assert_compress_prompt(server.requests[1].prompt)
    assert f"({name})" in r.stderr


_CACHED = {"anthropic": {"input_tokens": 40, "cache_read_input_tokens": 1800, "cache_creation_input_tokens": 0},
           "openai": {"prompt_tokens": 1840, "prompt_tokens_details": {"cached_tokens": 1792}}}


@pytest.mark.parametrize("name", PROVIDERS)
def test_cli_compress_reports_the_summary_calls_usage_with_its_cached_tokens(server, name, tmp_path):
    server.script(ok("## Goal\nFix login.", **_CACHED[name]))
    report = tmp_path / "report.json"
    r = _compress_cli(name, server, "--report", str(report))
    assert r.status == 0, r.stderr
    [req] = server.requests
    _assert_live(req, name)
    usage = json.loads(report.read_text())["summary_usage"]
    assert usage == ({"provider": "anthropic", "live_prefix": True, "input_tokens": 40, "output_tokens": 7,
                      "cache_read_tokens": 1800, "cache_write_tokens": 0, "prompt_tokens": 1840}
                     if name == "anthropic" else
                     {"provider": "openai", "live_prefix": True, "input_tokens": 48, "output_tokens": 7,
                      "cache_read_tokens": 1792, "cache_write_tokens": 0, "prompt_tokens": 1840})


# --- a deadline per attempt, not per read; the circuit breaker across a batch ------------------

@pytest.mark.parametrize("name", PROVIDERS)
def test_trickling_server_is_cut_at_the_deadline(server, name):
    """One byte a second never trips a per-read timeout; the attempt's deadline cuts it."""
    from fakeserver import trickle

    server.script(trickle(1.0))
    start = time.monotonic()
    with pytest.raises(SummarizerError) as info:
        build(name, server, timeout=1.5, retries=0).summarize(REQUEST)
    assert time.monotonic() - start < 3
    assert info.value.kind == "timeout" and "no complete answer within 1.5s" in str(info.value)


@pytest.mark.parametrize("name", PROVIDERS)
def test_circuit_opens_after_consecutive_failures_and_says_so_once(server, name):
    warnings = []
    server.script(*[status(500)] * 3)
    summarizer = build(name, server, retries=0, max_failures=3, warn=warnings.append)
    for _ in range(3):
        with pytest.raises(SummarizerError) as info:
            summarizer.summarize(REQUEST)
        assert info.value.kind == "server"
    for _ in range(5):
        with pytest.raises(SummarizerError) as info:
            summarizer.summarize(REQUEST)
        assert info.value.kind == "circuit_open"
    assert len(server.requests) == 3  # not called again
    assert len(warnings) == 1 and "failed 3 times in a row (server)" in warnings[0]


@pytest.mark.parametrize("name", PROVIDERS)
def test_a_success_resets_the_breaker(server, name):
    server.script(status(500), status(500), ok("fine"), status(500), status(500), ok("fine again"))
    summarizer = build(name, server, retries=0, max_failures=3)
    outcomes = []
    for _ in range(6):
        try:
            outcomes.append(summarizer.summarize(REQUEST))
        except SummarizerError as err:
            outcomes.append(err.kind)
    assert outcomes == ["server", "server", "fine", "server", "server", "fine again"]


def test_live_prefix_keeps_at_most_four_cache_breakpoints_the_last_on_the_prefix(server):
    """A transcript marked already (cache-mark's system_and_3) keeps its newest marks: with the
    prefix's own, four in all (the API's limit), never on a thinking block."""
    mark = {"type": "ephemeral"}
    live = [{"role": "user", "content": [{"type": "text", "text": f"ask {i}", "cache_control": mark}]} if i % 2 == 0
            else {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "s"},
                                                   {"type": "text", "text": f"reply {i}"}]}
            for i in range(8)]
    live[-1]["content"][1]["cache_control"] = mark
    server.script(ok("## Goal\nx", cache_read_input_tokens=64))
    summarizer = build("anthropic", server)
    request = SummaryRequest(prompt="serialized", budget_tokens=500, live=live, live_from=2, live_to=6,
                             live_top={"system": [{"type": "text", "text": "sys", "cache_control": mark}]},
                             instruction="Summarize messages 2-5.")
    assert summarizer.summarize(request) == "## Goal\nx"
    [req] = server.requests
    messages = req.body["messages"]
    marks = [(i, j) for i, m in enumerate(messages) for j, b in enumerate(m["content"]) if "cache_control" in b]
    system_marks = sum("cache_control" in b for b in req.body["system"])
    assert system_marks + len(marks) == 4 and marks[-1] == (7, 1) and (0, 0) not in marks
    assert messages[-1] == {"role": "user", "content": [{"type": "text", "text": "Summarize messages 2-5."}]}
    assert all(b.get("type") != "thinking" or "cache_control" not in b for m in messages for b in m["content"])
    assert summarizer.last_usage["cache_read_tokens"] == 64 and summarizer.last_usage["live_prefix"]
    assert live[0]["content"][0]["cache_control"] == mark  # the request's transcript is not changed


@pytest.mark.parametrize("name", PROVIDERS)
def test_a_refused_endpoint_is_given_up_after_one_retry(name):
    from hermesctx.summary.providers import CONNECTION_ATTEMPTS

    summarizer, error = _refused(name, timeout=30, retries=5)
    assert error.kind == "connection" and summarizer.attempts == CONNECTION_ATTEMPTS == 2
    assert summarizer._timeouts(__import__(name)).connect == 3.0  # a connect timeout of a few seconds
