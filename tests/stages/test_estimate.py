"""`hermesctx estimate` end to end, in-process."""

import json

import pytest
import tiktoken
from conftest import EXAMPLES, invoke, load_example

from hermesctx.encodings import get_encoding

MULTILINGUAL = [
    {"role": "system", "content": "Tu es un assistant. 你是一个编程助手。"},
    {"role": "user", "content": "Explique ce code, s'il te plaît — и переведи комментарии: 日本語も。"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function",
         "function": {"name": "read_file", "arguments": json.dumps({"path": "src/main.rs"})}}]},
    {"role": "tool", "tool_call_id": "c1", "name": "read_file",
     "content": "fn main() {\n    let v: Vec<i32> = (0..10).map(|x| x * x).collect();\n    println!(\"{:?}\", v); // 😀\n}\n"},
    {"role": "assistant", "content": [{"type": "text", "text": "Le code calcule des carrés. 它计算平方。"}]},
]


def independent_count(encoding: tiktoken.Encoding, messages: list) -> int:
    """The documented exact rule, recomputed here directly with tiktoken."""
    total = 3  # reply priming
    for m in messages:
        total += 3 + len(encoding.encode(m["role"]))
        content = m.get("content")
        if isinstance(content, list):
            content = "\n".join(p["text"] for p in content if p.get("type") == "text")
        total += len(encoding.encode(content or ""))
        for tc in m.get("tool_calls") or []:
            total += len(encoding.encode(tc["function"]["name"]))
            total += len(encoding.encode(tc["function"]["arguments"]))
        if "name" in m:
            total += len(encoding.encode(m["name"])) + 1
    return total


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
@pytest.mark.parametrize("messages", [load_example("coding-session.json"), MULTILINGUAL],
                         ids=["example", "multilingual"])
def test_exact_agrees_with_tiktoken(encoding, messages):
    r = invoke(["estimate", "--encoding", encoding, "--model", "gpt-4o"], messages)
    assert r.status == 0, r.stderr
    assert r.json["method"] == encoding
    assert r.json["tokens"]["total"] == independent_count(get_encoding(encoding), messages)


def test_proxy_encoding_is_named():
    r = invoke(["estimate", "--model", "claude-sonnet-4-5"], MULTILINGUAL)
    assert r.json["method"] == "o200k_base (proxy for claude-sonnet-4-5)"
    assert invoke(["estimate", "--model", "gpt-4"], MULTILINGUAL).json["method"] == "cl100k_base"


def test_rough_matches_hermes_formula():
    body = {"system": "You are Hermes, a helpful agent.",
            "messages": [{"role": "user", "content": "Read /tmp/a.py please."}]}
    r = invoke(["estimate", "--method", "rough", "--model", "claude-sonnet-4-5"], body)
    assert r.json["tokens"]["total"] == 8 + 14  # system raw (32 chars) + message repr (53 chars)
    messages = [{"role": "user", "content": "Hello, how are you today?"},
                {"role": "assistant", "content": "I'm fine."}]
    r = invoke(["estimate", "--method", "rough", "--model", "gpt-4o"], messages)
    assert r.json["tokens"]["total"] == 26
    assert r.json["by_role"] == {"user": 14, "assistant": 12}


@pytest.mark.parametrize("ctx,rules,expected", [
    (200_000, "documented", (100_000, 20_000, 10_000)),
    (262_144, "documented", (131_072, 26_214, 12_000)),
    (200_000, "hermes-0.19", (150_000, 30_000, 10_000)),
    (262_144, "hermes-0.19", (196_608, 39_321, 10_000)),
])
def test_budget_figures(ctx, rules, expected):
    r = invoke(["estimate", "--context-length", str(ctx), "--budget-rules", rules], [])
    b = r.json["budgets"]
    assert (b["threshold_tokens"], b["tail_token_budget"], b["max_summary_tokens"]) == expected
    assert b["rules"] == rules


def test_threshold_from_flag_and_config(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("compression:\n  threshold: 0.6\n  target_ratio: 0.3\nmodel:\n  context_length: 100000\n")
    r = invoke(["estimate", "--config", str(cfg)], [])
    assert r.json["budgets"]["threshold_tokens"] == 60_000
    assert r.json["budgets"]["tail_token_budget"] == 18_000
    r = invoke(["estimate", "--config", str(cfg), "--threshold", "0.5"], [])
    assert r.json["budgets"]["threshold_tokens"] == 50_000


def test_out_of_range_config_is_a_usage_error(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("compression:\n  threshold: 1.5\n")
    r = invoke(["estimate", "--config", str(cfg)], [])
    assert r.status == 2 and r.stdout == b""
    assert "compression.threshold" in r.stderr and "(0, 1]" in r.stderr
    r = invoke(["estimate", "--target-ratio", "0.05"], [])
    assert r.status == 2 and "[0.10, 0.80]" in r.stderr


def test_check_exit_status_and_would_compress():
    messages = load_example("coding-session.json")
    over = invoke(["estimate", "--check", "--context-length", "4000"], messages)
    assert over.status == 1 and over.json["would_compress"] is True
    under = invoke(["estimate", "--check", "--context-length", "200000"], messages)
    assert under.status == 0 and under.json["would_compress"] is False


def test_usage_takes_precedence(tmp_path):
    usage = tmp_path / "usage.json"
    usage.write_text(json.dumps({"id": "msg_1", "type": "message", "usage": {
        "input_tokens": 1200, "output_tokens": 350, "cache_read_input_tokens": 50000,
        "cache_creation_input_tokens": 2000}}))
    r = invoke(["estimate", "--usage", str(usage), "--model", "claude-sonnet-4-5"], MULTILINGUAL)
    assert r.json["prompt_tokens"] == 53_200
    assert r.json["prompt_source"] == "usage"
    assert r.json["pressure_percent"] == 27  # round(26.6)


def test_tee_passes_input_through_unchanged():
    raw = (EXAMPLES / "coding-session.json").read_bytes()
    r = invoke(["estimate", "--tee", "--model", "gpt-4o"], raw)
    assert r.status == 0
    assert r.stdout == raw
    assert json.loads(r.stderr)["model"] == "gpt-4o"


def test_jsonl_batch_gives_one_report_per_line():
    raw = (EXAMPLES / "batch.jsonl").read_bytes()
    r = invoke(["estimate", "--model", "gpt-4o", "--method", "rough"], raw)
    reports = r.lines
    assert len(reports) == len(raw.splitlines())
    assert [rep["messages"] for rep in reports] == [26, 10, 5, 5]


def test_per_message_and_table():
    r = invoke(["estimate", "--per-message", "--method", "rough", "--model", "gpt-4o"], MULTILINGUAL)
    rows = r.json["per_message"]
    assert [row["index"] for row in rows] == list(range(len(MULTILINGUAL)))
    assert all(row["tokens"] > 0 and row["tail_tokens"] >= 10 for row in rows)
    table = invoke(["estimate", "--format", "table", "--model", "gpt-4o"], MULTILINGUAL)
    assert "\ncontext window     128,000 (table)\n" in table.stdout.decode()


def test_unknown_model_warns_once():
    r = invoke(["estimate", "--model", "my-local-model"], MULTILINGUAL)
    assert r.status == 0
    assert r.json["context_length"] == 256_000
    assert r.stderr.count("warning: unknown model my-local-model") == 1
    assert invoke(["-q", "estimate", "--model", "my-local-model"], MULTILINGUAL).stderr == ""


@pytest.mark.parametrize("stdin,status,fragment", [
    (b"not json", 3, "not JSON"),
    (b"", 3, "empty input"),
    (b"42", 3, "expected a JSON array of messages or a request object, got a number"),
    (b'{"model": "x"}', 3, 'object with a "messages" array'),
    (b'{"messages": {"role": "user"}}', 3, "messages: expected an array, got an object"),
    (b'[{"role":"user","content":"a"}', 3, "not JSON"),
])
def test_bad_input_is_one_line_and_nothing_on_stdout(stdin, status, fragment):
    r = invoke(["estimate"], stdin)
    assert r.status == status
    assert r.stdout == b""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hermesctx: error: ")
    assert fragment in lines[0]


def test_bad_line_in_batch_is_located():
    r = invoke(["estimate", "--method", "rough"], b'[]\n[]\n{"messages": "x"}\n')
    assert r.status == 3
    assert "line 3: messages: expected an array, got a string" in r.stderr


def test_terminal_stdin_is_a_usage_error_not_a_hang():
    r = invoke(["estimate"], b"", stdin_isatty=True)
    assert r.status == 2 and "no input" in r.stderr


def test_missing_file():
    r = invoke(["estimate", "does/not/exist.json"])
    assert r.status == 5 and "cannot read does/not/exist.json" in r.stderr


def test_traceback_on_request():
    r = invoke(["--traceback", "estimate"], b"nope")
    assert r.status == 3 and "Traceback" in r.stderr


def test_whole_report_snapshot(snapshot):
    r = invoke(["estimate", "examples/coding-session.json", "--model", "claude-sonnet-4-5",
                "--per-message"])
    assert r.json == snapshot


def test_rough_measures_whatever_hermes_measures():
    """Estimating changes nothing: a tool message without its id, a role that is not a string
    and items that are not objects are counted as Hermes counts them (spec 10 §1.7: 31)."""
    odd = [{"role": "assistant", "content": None}, {"role": "user", "content": 12345},
           {"role": "user", "content": True}, "just a string", 42, None]
    r = invoke(["estimate", "--method", "rough", "--per-message", "--context-length", "1000"], odd)
    assert r.status == 3 and r.stderr.endswith("messages[1]: content must be a string or a list of parts, got a "
                                               "number; no provider API accepts it (--lenient reads it as Hermes does)\n")  # D14, issue 31
    r = invoke(["estimate", "--lenient", "--method", "rough", "--per-message", "--context-length", "1000"], odd)
    assert r.status == 0
    assert r.json["tokens"]["total"] == r.json["tokens"]["messages"] == 31
    assert [row["tokens"] for row in r.json["per_message"]] == [10, 9, 9, 4, 1, 1]
    assert [row["tail_tokens"] for row in r.json["per_message"]] == [10, 11, 11, None, None, None]
    assert r.json["by_role"] == {"assistant": 10, "user": 17, "(not an object)": 5}
    assert r.stderr == ("hermesctx: warning: messages[3], messages[4], messages[5]: not a message "
                        "object; counted by its printed form, as Hermes does\n")
    r = invoke(["estimate", "--lenient", "--method", "rough"],
               [{"role": "tool", "content": "x"}, {"role": 5, "content": "y"}])
    assert r.status == 0 and r.json["tokens"]["total"] == (32 + 27 + 3) // 4
    assert invoke(["estimate", "--lenient", "--context-length", "1000"], odd).status == 0  # exact method too


def test_unhashable_part_type_is_not_an_internal_error():
    doc = [{"role": "user", "content": [{"type": ["image"], "text": "a"}, {"type": {"x": 1}}]}]
    for method in ("rough", "exact"):
        r = invoke(["estimate", "--method", method, "--format", "table", "--context-length", "1000"], doc)
        assert r.status == 0 and r.stderr == ""
