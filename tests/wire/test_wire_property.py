"""Issue 14, Done-when: every output is a request the API accepts.

For every rewriting command and both output formats, over generated transcripts (plausible agent
sessions, the adversarial generators of the differential tests, Anthropic bodies with thinking,
tool_use / tool_result, reused ids, cache_control and whitespace text): when ``validate`` (the
wire rules, not strict) accepts the input, it accepts the output. And ``sanitize``'s output has
no tool-pairing problem, whatever the input.

Commands run in-process; the ``ci`` profile keeps the example count small (< 60 s for the file),
``--hypothesis-profile fuzz`` runs many more.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest
from conftest import invoke
from hypothesis import given, settings
from hypothesis import strategies as st
from transcripts import TranscriptGen

from hermesctx.wire.rules import ANTHROPIC, OPENAI, check, check_pairing, failed

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "oracle"))
from adversarial import Gen as ShapeGen  # noqa: E402
from adversarial_compress import Gen as CompressGen  # noqa: E402
from adversarial_prune import AdversarialGen  # noqa: E402

EXAMPLES = 30 if settings.default.max_examples <= 60 else settings.default.max_examples // 10
FORMATS = (OPENAI, ANTHROPIC)


# --- Anthropic bodies ---------------------------------------------------------------------------

class AnthropicGen:
    """Anthropic Messages bodies as an agent sends them: signed thinking before tool_use, several
    tool_result blocks per user turn (some with text after them, some with errors or image
    content), ids reused across turns, cache_control on blocks and the system, whitespace text."""

    TEXTS = ["Checking the tests.", "ok", "é 你好 😀", "line\nline", "x" * 300, "{\"a\": 1}", "PASS"]

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.n = 0

    def text(self) -> str:
        return self.rng.choice(self.TEXTS) + self.rng.choice(["", " more", "\n" * 2 + "tail"])

    def block(self, text: str | None = None) -> dict:
        out = {"type": "text", "text": text if text is not None else self.text()}
        if self.rng.random() < 0.15:
            out["cache_control"] = {"type": "ephemeral"}
        return out

    def tool_id(self) -> str:
        if self.n and self.rng.random() < 0.1:
            return f"toolu_{self.rng.randint(1, self.n)}"  # reused from an earlier turn
        self.n += 1
        return f"toolu_{self.n}"

    def result_content(self):
        r = self.rng.random()
        if r < 0.4:
            return self.text()
        if r < 0.6:
            return [self.block()]
        if r < 0.7:
            return [self.block(), {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                                 "data": "iVBORw0KGgo="}}]
        if r < 0.8:
            return ""
        return "y" * self.rng.choice([199, 200, 201, 5000])

    def body(self) -> dict:
        rng = self.rng
        body: dict = {"model": "claude-sonnet-4-5", "max_tokens": 1024}
        if rng.random() < 0.7:
            body["system"] = rng.choice(["You are Hermes.", [self.block("You are Hermes.")]])
        think = rng.random() < 0.4
        if think:
            body["thinking"] = {"type": "enabled", "budget_tokens": 2048}
        msgs: list = []
        for _ in range(rng.randint(1, 6)):
            msgs.append({"role": "user", "content": rng.choice([self.text(), [self.block()]])})
            for _ in range(rng.randint(0, 3)):
                blocks: list = []
                if think or rng.random() < 0.2:
                    blocks.append({"type": "thinking", "thinking": self.text(),
                                   "signature": f"sig{rng.randint(0, 10**9)}"})
                    if rng.random() < 0.1:
                        blocks.append({"type": "redacted_thinking", "data": "ZW5jcnlwdGVk"})
                if rng.random() < 0.5:
                    blocks.append(self.block())
                uses = [{"type": "tool_use", "id": self.tool_id(),
                         "name": rng.choice(["terminal", "read_file", "web_search", "mcp_x"]),
                         "input": rng.choice([{}, {"command": "npm test"}, {"path": "a.py", "offset": 3}])}
                        for _ in range(rng.randint(1, 3))]
                blocks += uses
                if rng.random() < 0.1:
                    blocks[-1]["cache_control"] = {"type": "ephemeral"}
                msgs.append({"role": "assistant", "content": blocks})
                results = [{"type": "tool_result", "tool_use_id": use["id"], "content": self.result_content()}
                           for use in uses]
                for result in results:
                    if rng.random() < 0.1:
                        result["is_error"] = True
                    if not result["content"]:
                        del result["content"]
                if rng.random() < 0.2:
                    results.append(self.block(rng.choice(["And also this.", "Continue."])))
                if rng.random() < 0.1:
                    results.append(self.block(" "))  # whitespace text: rejected input
                msgs.append({"role": "user", "content": results})
            final = [self.block()]
            if think:
                final.insert(0, {"type": "thinking", "thinking": "done", "signature": "sigz"})
            msgs.append({"role": "assistant", "content": final})
        if rng.random() < 0.5:
            msgs.append({"role": "user", "content": self.text()})
        body["messages"] = msgs
        return body


# --- inputs and commands --------------------------------------------------------------------------

def _shapes(seed: int):
    case = ShapeGen(seed).case()
    doc = case["doc"]
    if case["system"] is not None:
        doc["messages"] = [{"role": "system", "content": case["system"]}, *doc["messages"]]
    return doc


GENERATORS = {
    "transcripts": lambda seed: TranscriptGen(seed).transcript(),
    "adversarial-prune": lambda seed: AdversarialGen(seed).transcript(),
    "adversarial-compress": lambda seed: CompressGen(seed, max_chars=6000).transcript(),
    "adversarial-shapes": _shapes,
    "anthropic": lambda seed: AnthropicGen(seed).body(),
}

COMMANDS = {
    "sanitize": ["sanitize"],
    "sanitize-stub": ["sanitize", "--stub"],
    "prune": ["prune", "--protect-last-n", "3", "--tail-tokens", "200"],
    "compress": ["compress", "--summarizer", "extractive", "--protect-last-n", "2", "--tail-tokens", "150"],
    "cache-mark": ["cache-mark"],
    "cache-mark-native": ["cache-mark", "--native-anthropic"],
    "spill": ["spill", "--threshold", "150"],
    "convert": ["convert", "--model", "gpt-4o"],
    "run": ["run", "--pipeline", "prune,sanitize,cache-mark"],
}


def _run(command: list[str], doc, fmt: str, tmp: Path):
    args = [*command, "--to", fmt]
    if command[0] == "spill":
        args += ["--dir", str(tmp / "spill")]
    # ASCII-escaped: the adversarial shapes hold lone surrogates, valid JSON only as \u escapes
    return invoke(args, json.dumps(doc).encode(), environ={"HOME": str(tmp), "XDG_CONFIG_HOME": str(tmp / "config")})


def _accepted(doc) -> bool:
    """``validate`` accepts the input, and it holds a turn with something in it. (A transcript of
    system / developer messages and blank user text only has no Anthropic request: Anthropic
    needs one message and rejects whitespace text, and the send path makes nothing up.)"""
    if failed(check(doc)):
        return False
    messages = doc.get("messages") if isinstance(doc, dict) else doc
    return any(isinstance(m, dict) and m.get("role") not in ("system", "developer")
               and (m.get("tool_calls") or not (isinstance(m.get("content"), str) and not m["content"].strip()))
               for m in messages)


def _mixed(doc) -> bool:
    """An OpenAI transcript with stray Anthropic tool blocks in its contents: sanitize pairs
    ``tool_calls`` with ``tool`` messages and leaves those blocks alone, so no repair is promised."""
    messages = doc.get("messages") if isinstance(doc, dict) else doc
    return any(isinstance(m, dict) and isinstance(m.get("content"), list) and m.get("role") != "user"
               and any(isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result") for b in m["content"])
               for m in messages) and any(isinstance(m, dict) and m.get("role") == "tool" for m in messages)


@pytest.fixture(scope="module")
def tmp(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("wireprop")


@pytest.mark.parametrize("name", sorted(COMMANDS))
@settings(max_examples=EXAMPLES)
@given(gen=st.sampled_from(sorted(GENERATORS)), seed=st.integers(0, 10**6), fmt=st.sampled_from(FORMATS))
def test_accepted_input_gives_accepted_output(name, gen, seed, fmt, tmp):
    doc = GENERATORS[gen](seed)
    result = _run(COMMANDS[name], doc, fmt, tmp)
    assert result.status in (0, 1, 3), result.stderr  # never a crash, whatever the input
    if not _accepted(doc):
        return
    assert result.status == 0, result.stderr
    problems = [p.as_dict() for p in check(result.json, fmt) if p.counted]
    assert not problems, json.dumps({"gen": gen, "seed": seed, "problems": problems[:5]}, ensure_ascii=False)


@pytest.mark.parametrize("stub", [False, True])
@settings(max_examples=EXAMPLES * 2)
@given(gen=st.sampled_from(sorted(GENERATORS)), seed=st.integers(0, 10**6), fmt=st.sampled_from(FORMATS))
def test_sanitize_output_is_paired(stub, gen, seed, fmt, tmp):
    doc = GENERATORS[gen](seed)
    result = _run(["sanitize", "--stub"] if stub else ["sanitize"], doc, fmt, tmp)
    assert result.status in (0, 3), result.stderr
    if result.status != 0 or (gen == "adversarial-shapes" and _mixed(doc)):
        return
    problems = [p.as_dict() for p in check_pairing(result.json, fmt) if p.counted]
    assert not problems, json.dumps({"gen": gen, "seed": seed, "problems": problems[:5]}, ensure_ascii=False)


# --- regressions found by the properties above ---------------------------------------------------

def test_empty_call_id_answered_by_empty_tool_call_id_stays_paired():
    """A call with id "" and its result with tool_call_id "": the send path used to drop the
    result as stray and leave the call unanswered (OA-TOOL-UNANSWERED) in sanitize's output."""
    doc = [{"role": "user", "content": "go"},
           {"role": "assistant", "content": None,
            "tool_calls": [{"id": "", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}]},
           {"role": "tool", "tool_call_id": "", "content": "done"},
           {"role": "assistant", "content": "ok"}]
    for args in (["sanitize"], ["sanitize", "--stub"], ["convert", "--to", "openai"]):
        out = invoke(args, doc)
        assert out.status == 0, out.stderr
        assert out.json == doc
        assert check(out.json, OPENAI) == []


@pytest.mark.parametrize("call, said", [
    (None, "a tool call must be an object, got null"), (7, "a tool call must be an object, got a number"),
    ("call_1", "a tool call must be an object, got a string"),
    ({"id": "call_1", "function": "terminal"}, "function must be an object, got a string")])
def test_odd_tool_call_is_bad_input_not_a_crash(call, said):
    """A tool call that is no object, or whose ``function`` is none, used to crash the Anthropic
    writer (exit 70); no API takes it: exit 3 naming where (D14), --lenient too."""
    doc = [{"role": "user", "content": "go"},
           {"role": "assistant", "content": "Checking.", "tool_calls": [call]},
           {"role": "user", "content": "next"}]
    for flags in ([], ["--lenient"]):
        out = invoke(["convert", *flags, "--to", "anthropic"], doc)
        assert out.status == 3 and out.stdout == b"", out.stderr
        assert out.stderr == (f"hermesctx: error: line 1: messages[1].tool_calls[0]"
                              f"{'.function' if isinstance(call, dict) else ''}: {said}: "
                              "it cannot be written as anthropic\n")


def test_a_call_without_function_is_written_with_an_empty_name():
    doc = [{"role": "user", "content": "go"},
           {"role": "assistant", "content": "Checking.", "tool_calls": [{"id": "call_1", "function": None}]},
           {"role": "user", "content": "next"}]
    out = invoke(["convert", "--to", "anthropic"], doc)
    assert out.status == 0, out.stderr
    assert out.json["messages"][0] == {"role": "user", "content": "go"}


def test_developer_messages_become_the_anthropic_system():
    """OpenAI's ``developer`` role is its system role: it used to reach Anthropic as a message
    role (AN-SCHEMA: 'user' or 'assistant')."""
    doc = [{"role": "developer", "content": "Be brief."}, {"role": "user", "content": "hi"},
           {"role": "developer", "content": "Later rule."}, {"role": "assistant", "content": "ok"}]
    out = invoke(["convert", "--to", "anthropic"], doc)
    assert out.status == 0, out.stderr
    assert out.json["system"] == "Be brief."
    assert [m["role"] for m in out.json["messages"]] == ["user", "user", "assistant"]  # later: user text
    assert not failed(check(out.json, ANTHROPIC))


@pytest.mark.parametrize("content", ["     ", "\n\n"])
def test_blank_tool_result_text_is_sent_without_content(content):
    """A tool result of only whitespace became a tool_result whose string content Anthropic rejects
    (AN-WHITESPACE-TEXT); the send path sends it without content (allowed: an empty result)."""
    doc = [{"role": "user", "content": "go"},
           {"role": "assistant", "content": "", "tool_calls": [
               {"id": "c1", "type": "function", "function": {"name": "terminal", "arguments": "{}"}}]},
           {"role": "tool", "tool_call_id": "c1", "content": content},
           {"role": "assistant", "content": "ok"}]
    for args in (["convert", "--to", "anthropic"], ["sanitize", "--to", "anthropic"]):
        out = invoke(args, doc)
        assert out.status == 0, out.stderr
        assert out.json["messages"][2] == {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1"}]}
        assert not failed(check(out.json, ANTHROPIC))
