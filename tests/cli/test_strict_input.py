"""Strict input by default (D14, issue 16 item 10): what no provider API accepts is exit 3 with
one line naming where; ``--lenient`` (and :func:`hermesctx.messages.lenient_input`) reads it as
Hermes does. Malformed input never reaches a writer (no exit 70, no ``"role": null``, no silently
empty document); pretty-printed JSON is one document; pathological strings and config files are
bounded."""

from __future__ import annotations

import json
import random

import pytest
from conftest import invoke
from hypothesis import given
from hypothesis import strategies as st

from hermesctx import formats, tokens
from hermesctx.encodings import get_encoding
from hermesctx.errors import InputError, UsageError
from hermesctx.messages import check_messages, is_lenient, lenient_input
from hermesctx.stages.normalize_usage import normalize_usage

ROLELESS = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yes"},
            {"role": "user", "content": "more"}, {"role": "assistant", "content": "ok"},
            {"content": "who am I?"}]
TRANSCRIPT_COMMANDS = [["estimate"], ["prune"], ["sanitize"], ["sanitize", "--stub"], ["compress"],
                       ["cache-mark"], ["spill"], ["convert", "--to", "anthropic"],
                       ["convert", "--to", "sharegpt"], ["run"]]


def _one_error_line(r) -> str:
    assert r.status == 3 and r.stdout == b"", (r.status, r.stderr)
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("hermesctx: error: "), r.stderr
    return lines[0]


@pytest.mark.parametrize("argv", TRANSCRIPT_COMMANDS, ids=" ".join)
def test_a_message_without_a_role_is_bad_input_in_every_command(argv, tmp_path):
    argv = argv + (["--dir", str(tmp_path)] if argv[0] == "spill" else [])
    line = _one_error_line(invoke(argv, ROLELESS))
    assert "messages[4]: message without a role" in line
    assert "--lenient" in line
    assert invoke([*argv, "--lenient"], ROLELESS).status == 0


@pytest.mark.parametrize("message, said", [
    ({"role": None, "content": "x"}, "message without a role"),
    ({"role": "", "content": "x"}, "message with an empty role"),
    ({"role": 7, "content": "x"}, "role must be a string, got a number"),
    ({"role": ["user"], "content": "x"}, "role must be a string, got an array"),
    ("hello", "expected a message object, got a string"),
    (None, "expected a message object, got null"),
])
def test_every_kind_of_bad_message_is_named(message, said):
    line = _one_error_line(invoke(["prune"], [{"role": "user", "content": "a"}, message]))
    assert f"messages[1]: {said}" in line


def test_the_library_is_strict_unless_asked():
    with pytest.raises(InputError, match=r"messages\[4\]: message without a role"):
        check_messages(ROLELESS)
    check_messages(ROLELESS, lenient=True)
    assert not is_lenient()
    with lenient_input():
        assert is_lenient()
        check_messages(ROLELESS)
    assert not is_lenient()
    with pytest.raises(InputError, match="expected a message object"):  # Hermes crashes on it too
        check_messages([1], lenient=True)


def test_the_flag_does_not_outlive_its_command():
    assert invoke(["prune", "--lenient"], ROLELESS).status == 0
    assert not is_lenient()
    assert invoke(["prune"], ROLELESS).status == 3


def test_sanitize_stub_no_longer_empties_a_roleless_transcript():
    only = [{"content": "a"}, {"content": "b"}]
    assert "not chat messages" in _one_error_line(invoke(["sanitize", "--stub"], only))
    lenient = invoke(["sanitize", "--stub", "--lenient"], only)  # Hermes's repair, asked for
    assert lenient.status == 0 and lenient.json == []


def test_a_list_in_which_no_element_is_a_message_is_refused():
    for value in ([{"content": "a"}, {"text": "b"}], [1, "a", None, True]):
        assert _one_error_line(invoke(["prune"], value))
        for target in ("anthropic", "sharegpt", "openai"):
            _one_error_line(invoke(["convert", "--to", target], value))
    # under --lenient convert leaves non-messages out (said on stderr), but never writes nothing
    line = _one_error_line(invoke(["convert", "--lenient", "--to", "anthropic"], [1, "a", None, True]))
    assert "no element of messages is a message" in line


@pytest.mark.parametrize("target", ["anthropic", "sharegpt", "openai"])
def test_convert_lenient_leaves_out_what_it_cannot_write_and_says_so(target):
    r = invoke(["convert", "--lenient", "--to", target], [{"role": "user", "content": "x"}, 3, {"content": "y"}])
    assert r.status == 0
    assert b"null" not in r.stdout
    assert "messages without a role: 1 not kept" in r.stderr
    assert "non-message values in messages" in r.stderr


@pytest.mark.parametrize("message, where", [
    ({"role": "assistant", "content": None, "tool_calls": [5]}, "messages[0].tool_calls[0]: a tool call must be an object"),
    ({"role": "assistant", "content": None, "tool_calls": {"id": "a"}}, "messages[0].tool_calls: tool_calls must be an array"),
    ({"role": "assistant", "content": None, "tool_calls": [{"id": 1, "function": {"name": "f"}}]},
     "messages[0].tool_calls[0].id: a tool call id must be a string"),
    ({"role": "assistant", "content": None, "tool_calls": [{"id": "a", "function": "f"}]},
     "messages[0].tool_calls[0].function: function must be an object"),
    ({"role": "assistant", "content": None, "tool_calls": [{"id": "a", "function": {"name": "f", "arguments": {}}}]},
     "messages[0].tool_calls[0].function.arguments: function.arguments must be a string"),
    ({"role": "tool", "tool_call_id": [], "content": "r"}, "messages[0]: tool_call_id must be a string"),
])
@pytest.mark.parametrize("target", ["anthropic", "sharegpt"])
def test_convert_refuses_tool_calls_no_writer_can_write(message, where, target):
    for flags in ([], ["--lenient"]):
        line = _one_error_line(invoke(["convert", *flags, "--to", target], [message]))
        assert where in line and f"cannot be written as {target}" in line


@pytest.mark.parametrize("value", [None, 0, -8.6e104, "`", True])
def test_convert_refuses_a_document_that_is_no_transcript(value):
    for target in ("anthropic", "sharegpt"):
        line = _one_error_line(invoke(["convert", "--to", target], json.dumps(value).encode()))
        assert "expected a JSON array of messages or a request object" in line


# every command on hypothesis documents: never 70, never "role": null, never an empty output
# for a non-empty transcript (tests/cli/test_fuzz.py has the strategies)
import test_fuzz  # noqa: E402


@given(doc=test_fuzz.document, lenient=st.booleans(), target=st.sampled_from(["anthropic", "sharegpt"]))
def test_convert_never_crashes_nor_writes_a_null_role(doc, lenient, target):
    r = invoke(["convert", *["--lenient"] * lenient, "--to", target, "--model", "m"], json.dumps(doc).encode())
    assert r.status in (0, 3), r.stderr
    if r.status == 0:
        out = json.loads(r.stdout)
        turns = out if isinstance(out, list) else out.get("messages", out.get("conversations"))
        assert all(m.get("role", m.get("from")) is not None for m in turns)
        source = doc.get("messages") if isinstance(doc, dict) else doc
        if isinstance(source, list) and source and not turns:  # never emptied silently:
            assert (isinstance(doc, dict) and doc.get("system") is not None) \
                or (lenient and "wire: " in r.stderr)  # all in "system", or --lenient and said


# --- normalize-usage ------------------------------------------------------------------------

@pytest.mark.parametrize("usage, said", [
    ({"prompt_tokens": "abc", "completion_tokens": 1}, "prompt_tokens: expected a number of tokens, got a string ('abc')"),
    ({"prompt_tokens": "120", "completion_tokens": 1}, "prompt_tokens: expected a number of tokens, got a string"),
    ({"input_tokens": True, "output_tokens": 1}, "input_tokens: expected a number of tokens, got a boolean"),
    ({"input_tokens": 1e308, "output_tokens": 1}, "input_tokens: token count out of range"),
    ({"prompt_tokens": 10**30, "completion_tokens": 1}, "prompt_tokens: token count out of range"),
    ({"prompt_tokens": 5, "completion_tokens": 1, "prompt_tokens_details": {"cached_tokens": [1]}},
     "prompt_tokens_details.cached_tokens: expected a number of tokens, got an array"),
])
def test_usage_counts_that_are_no_number_are_bad_input(usage, said):
    assert said in _one_error_line(invoke(["normalize-usage"], usage))
    with pytest.raises(InputError):
        normalize_usage(usage)
    r = invoke(["normalize-usage", "--lenient"], usage)  # Hermes: int(value or 0), 0 on failure
    assert r.status == 0
    assert r.json == normalize_usage(usage, lenient=True)


def test_usage_counts_the_rule_keeps():
    out = normalize_usage({"prompt_tokens": 2**53, "completion_tokens": 7.9, "total_tokens": "x"})
    assert (out["input_tokens"], out["output_tokens"]) == (2**53, 7)  # truncated; total not read
    assert normalize_usage({"input_tokens": -4, "output_tokens": None})["input_tokens"] == -4  # warned
    assert normalize_usage({"input_tokens": 1e308, "output_tokens": 1}, lenient=True)["input_tokens"] == int(1e308)


def test_estimate_usage_file_is_strict_too(tmp_path):
    usage = tmp_path / "usage.json"
    usage.write_text('{"prompt_tokens": "abc", "completion_tokens": 1}')
    doc = [{"role": "user", "content": "hi"}]
    assert invoke(["estimate", "--usage", str(usage)], doc).status == 3
    assert invoke(["estimate", "--lenient", "--usage", str(usage)], doc).status == 0


# --- pretty-printed documents -------------------------------------------------------------------

TRAJECTORY = {"conversations": [{"from": "system", "value": "s"}, {"from": "human", "value": "h " * 50},
                                {"from": "gpt", "value": "g " * 50}, {"from": "human", "value": "last"}]}


def test_trajectory_reads_a_pretty_printed_file_as_one_document():
    one = invoke(["-q", "trajectory", "--summarizer", "extractive"], json.dumps(TRAJECTORY, indent=2))
    assert one.status == 0 and one.lines == [TRAJECTORY]
    many = invoke(["-q", "trajectory", "--summarizer", "extractive"], json.dumps([TRAJECTORY] * 3, indent=2))
    assert many.status == 0 and many.lines == [TRAJECTORY] * 3
    broken = invoke(["trajectory", "--summarizer", "extractive"], json.dumps(TRAJECTORY, indent=2)[:-5])
    assert "not JSON" in _one_error_line(broken)
    # JSON Lines as Hermes reads them: a bad line is skipped with a warning
    lines = json.dumps(TRAJECTORY) + "\n{oops\n" + json.dumps(TRAJECTORY) + "\n"
    r = invoke(["trajectory", "--summarizer", "extractive"], lines)
    assert r.status == 0 and r.lines == [TRAJECTORY] * 2 and "line 2: not JSON" in r.stderr


@pytest.mark.parametrize("argv", [["estimate"], ["prune"], ["convert", "--to", "anthropic"], ["normalize-usage"]])
def test_every_command_reads_a_pretty_printed_document(argv):
    doc = {"prompt_tokens": 3, "completion_tokens": 1} if argv[0] == "normalize-usage" else [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
    pretty, compact = invoke(argv, json.dumps(doc, indent=2)), invoke(argv, json.dumps(doc))
    assert pretty.status == 0 and pretty.stdout == compact.stdout


# --- long runs -----------------------------------------------------------------------------------

words = st.lists(st.text(alphabet="abcXYZé中09.,'\"()/-", min_size=1, max_size=9), min_size=1, max_size=80)


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
@given(parts=words, seps=st.lists(st.sampled_from([" ", " ", "  ", "\n", "\t", ""]), min_size=80, max_size=80))
def test_pieces_cut_at_split_points_count_exactly(name, parts, seps):
    encoding = get_encoding(name)
    text = "".join(w + s for w, s in zip(parts, seps))
    pieces = list(tokens.text_pieces(text, 32, 32))
    assert "".join(pieces) == text and all(len(p) <= 32 for p in pieces)
    count = sum(len(encoding.encode(p, disallowed_special=())) for p in pieces)
    cuts, at = [], 0
    for piece in pieces[:-1]:
        at += len(piece)
        cuts.append(at)
    if all(_split_point(text, i) for i in cuts):  # (a stretch of 16 without one is cut anywhere)
        assert count == len(encoding.encode(text, disallowed_special=()))


def _split_point(text: str, i: int) -> bool:
    before, here, after = text[i - 1], text[i], text[i + 1:i + 2]
    if here == " ":
        return not before.isspace() and after != "" and not after.isspace()
    return (before.isascii() and here.isascii() and before.isalnum() and here.isalnum()
            and before.isdigit() != here.isdigit())


@pytest.mark.parametrize("text", ["a" * 50_000, " " * 50_000, "." * 50_000, "é" * 30_000,
                                  ("word " * 20_000), ("x1" * 25_000)])
def test_long_texts_count_like_tiktoken(text):
    encoding = get_encoding("o200k_base")
    assert tokens.exact_text(encoding, text) == len(encoding.encode(text, disallowed_special=()))


def test_a_run_without_split_points_deviates_by_little():
    rng = random.Random(3)
    text = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(60_000))
    encoding = get_encoding("o200k_base")
    exact = len(encoding.encode(text, disallowed_special=()))
    assert 0 <= tokens.exact_text(encoding, text) - exact <= len(text) // tokens.RUN_CHARS + 1


def test_a_whitespace_run_tiktoken_cannot_split_is_counted():
    """tiktoken's pattern fails (exit 70 before) on ~1M whitespace characters."""
    r = invoke(["estimate", "--context-length", "1000"], [{"role": "user", "content": " " * 1_100_000}])
    assert r.status == 0, r.stderr
    assert r.json["tokens"]["messages"] > 1000


# --- config files ---------------------------------------------------------------------------------

@pytest.mark.parametrize("raw, said", [
    (b'model:\n  default: "\xff\xfe"\n', "not valid UTF-8 (byte 19)"),
    (b"a: " + b"[" * 3000 + b"]" * 3000 + b"\n", "nesting too deep"),
    (b"model:\n  context_length: " + b"9" * 5000 + b"\n",
     "a value YAML cannot read (Exceeds the limit (4300 digits) for integer string conversion)"),
])
def test_a_config_file_pyyaml_cannot_read_is_a_usage_error(tmp_path, raw, said):
    path = tmp_path / "c.yaml"
    path.write_bytes(raw)
    r = invoke(["prune", "--config", str(path)], [{"role": "user", "content": "x"}])
    assert r.status == 2 and r.stderr == f"hermesctx: error: config {path}: {said}\n"
    from hermesctx.config import read_config_file

    with pytest.raises(UsageError):
        read_config_file(str(path))


def test_writable_is_the_same_object_when_nothing_changes():
    doc = {"messages": [{"role": "user", "content": "x"}]}
    assert formats.writable(doc, "anthropic", {}) is doc
    with lenient_input():
        assert formats.writable(doc, "anthropic", {}) is doc
