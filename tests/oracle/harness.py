"""Run Hermes Agent 0.19.0 functions in a separate interpreter (the oracle venv) and return
their results as JSON. Used only by tests marked ``oracle`` (``make oracle``); skipped unless
``HERMESCTX_ORACLE_PYTHON`` names a Python that has ``hermes-agent==0.19.0`` installed.

A call is a small Python snippet run by that interpreter: it reads JSON input from stdin as
``data`` and must assign ``result`` (JSON-able). HERMES_HOME points at a temp dir and proxies at
a dead port, so Hermes touches neither the user's files nor the network.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import textwrap

import pytest

ORACLE = os.environ.get("HERMESCTX_ORACLE_PYTHON")

needs_oracle = pytest.mark.skipif(not ORACLE, reason="set HERMESCTX_ORACLE_PYTHON (make oracle)")

_PRELUDE = """
import json, sys
data = json.loads(sys.stdin.read())
"""
_EPILOGUE = """
sys.stdout.write(json.dumps(result, ensure_ascii=False))
"""


def hermes(snippet: str, data) -> object:
    """Run ``snippet`` under Hermes with ``data``; return its ``result``."""
    code = _PRELUDE + textwrap.dedent(snippet) + _EPILOGUE
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, HERMES_HOME=home, HTTP_PROXY="http://127.0.0.1:9",
                   HTTPS_PROXY="http://127.0.0.1:9", NO_PROXY="", PYTHONIOENCODING="utf-8")
        proc = subprocess.run([ORACLE, "-c", code], input=json.dumps(data), capture_output=True,
                              text=True, env=env, timeout=120, cwd=home)
    if proc.returncode != 0:
        raise AssertionError(f"oracle failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout)


# Hermes's send path (D12), for a snippet to apply to its stage output: what its conversation
# loop does to the history before a chat-completions call (repair_message_sequence, the copies
# without `reasoning` / `finish_reason` / `api_content`, ChatCompletionsTransport.convert_messages).
SEND = """
def _unify_codex_ids(msgs):
    # the named exception "results renamed to their Codex call's call_id", applied first: Hermes
    # pairs a result with either id, then strips call_id, leaving the result naming no call
    alias = {}
    for m in msgs:
        if not isinstance(m, dict):
            continue
        if m.get("role") == "assistant":
            alias = {}
        if m.get("role") == "tool" and m.get("tool_call_id") in alias:
            m["tool_call_id"] = alias[m["tool_call_id"]]
        for tc in m.get("tool_calls") or []:
            if isinstance(tc, dict) and isinstance(tc.get("call_id"), str) and tc["call_id"] \
                    and isinstance(tc.get("id"), str) and tc["id"] != tc["call_id"]:
                alias[tc["id"]] = tc["call_id"]
                tc["id"] = tc["call_id"]
    return msgs

def _merge_interims(msgs):
    # the named exception "consecutive assistant messages merged", for Codex interim turns:
    # Hermes keeps them apart by internal marks (codex_*_items, finish_reason "incomplete")
    # that a chat request never carries; without the marks its repair merges them as ours does
    for m in msgs:
        if isinstance(m, dict):
            m.pop("codex_reasoning_items", None)
            m.pop("codex_message_items", None)
            if m.get("finish_reason") == "incomplete":
                m.pop("finish_reason")
    return msgs

def _drop_empty_assistants(msgs):
    # the named exception "assistant messages without content or calls dropped", applied before
    # Hermes's merge as ours does it: such a turn is never merged into its neighbour
    return [m for m in msgs if not (isinstance(m, dict) and m.get("role") == "assistant"
                                    and not m.get("tool_calls") and not m.get("function_call")
                                    and m.get("content") in (None, []))]

_EMPTY_ID = "<hermesctx: empty id>"

def _empty_ids(msgs, old, new):
    # the exception "a result answering a call with id '' is kept": Hermes's repair drops every
    # result with a falsy tool_call_id, even one answering a call whose id is "", and leaves that
    # call unanswered (OA-TOOL-UNANSWERED); the id "" is swapped out around its repair
    for m in msgs:
        if isinstance(m, dict):
            if m.get("role") == "tool" and m.get("tool_call_id") == old:
                m["tool_call_id"] = new
            for tc in m.get("tool_calls") or []:
                if isinstance(tc, dict) and tc.get("id") == old:
                    tc["id"] = new
    return msgs

def prepare(messages):
    # the conversation loop's part, before the prompt-cache markers are placed
    import copy
    from agent.agent_runtime_helpers import repair_message_sequence
    msgs = _drop_empty_assistants(_merge_interims(_unify_codex_ids(copy.deepcopy(messages))))
    _empty_ids(msgs, "", _EMPTY_ID)
    repair_message_sequence(None, msgs)
    _empty_ids(msgs, _EMPTY_ID, "")
    out = []
    for m in msgs:
        if isinstance(m, dict):
            m = dict(m)
            for key in ("reasoning", "finish_reason", "api_content", "_thinking_prefill"):
                m.pop(key, None)
        out.append(m)
    return out

def convert(messages):
    from agent.transports.chat_completions import ChatCompletionsTransport
    return ChatCompletionsTransport().convert_messages(messages)

def send(messages):
    return convert(prepare(messages))
"""

# Where Hermes's send path still sends what an API rejects, the rule wins (D12). Each kind of
# change our send path makes to Hermes's sent messages, with the reason it is ours.
EXCEPTIONS = {
    "empty tool_calls lists removed": "Hermes's pre-API stub repair leaves `tool_calls: []` (20 §4.1 step 7); "
                                      "OpenAI rejects it (OA-TOOL-CALLS-EMPTY)",
    "assistant messages without content or calls dropped": "OA-ASSISTANT-NO-CONTENT",
    "empty or whitespace-only text parts dropped": "the rule of wire-rules.md (empty text parts)",
    "images in tool messages replaced by a text placeholder": "OpenAI tool messages take text parts only",
    "consecutive assistant messages merged": "a fixed point: Hermes merges once, before it drops stray results "
                                             "(so two turns a dropped result separated stay apart) and keeps "
                                             "Codex interim turns apart by internal keys that never reach the output",
    "consecutive user messages merged": "the same fixed point (users left adjacent after a merge or a drop)",
    "stray tool results dropped": "the same fixed point",
    "results renamed to their Codex call's call_id": "Hermes pairs a result with a call's call_id, then strips "
                                                     "call_id: the result would name no call (OA-TOOL-ID-MISMATCH)",
    "reasoning not replayable in this format dropped": "Anthropic thinking kept by a reader (reasoning_details)",
    "internal keys removed": "extra_content is stripped whatever the model (no model is known)",
}


def wire_difference(ours_stage, hermes_sent) -> set:
    """Compare our stage output on the wire with Hermes's sent messages: equal, or equal once the
    wire rules are applied to Hermes's, by changes that are all named in EXCEPTIONS. Returns the
    exceptions that were needed."""
    from hermesctx.wire.send import openai_request

    ours = openai_request(ours_stage)
    if ours == hermes_sent:
        return set()
    counts: dict = {}
    fixed = openai_request(hermes_sent, counts)
    if fixed != ours:
        at = next((i for i, (a, b) in enumerate(zip(ours, fixed)) if a != b), min(len(ours), len(fixed)))
        raise AssertionError(f"messages[{at}]: ours {ours[at:at + 2]!r:.600}\n hermes sent {fixed[at:at + 2]!r:.600}"
                             f"\n counts {counts}\n raw hermes {hermes_sent[at:at + 3]!r:.900}")
    unnamed = set(counts) - set(EXCEPTIONS)
    assert not unnamed, unnamed
    return set(counts)


def hermes_sent(transcripts: list) -> list:
    """Hermes's send path (SEND) on each message list, in one Hermes process."""
    return hermes(SEND + "result = [send(m) for m in data]", transcripts)


def assert_wire_matches(pairs: list) -> set:
    """``pairs`` of (our command's output messages, Hermes's stage output): ours is Hermes's
    output after Hermes's send path, but for the named exceptions. Returns those used."""
    from hermesctx.messages import detect_format
    from hermesctx.wire.send import anthropic_request

    used: set = set()
    sent = hermes_sent([theirs for _, theirs in pairs])
    for (ours, theirs), hermes_messages in zip(pairs, sent):
        if detect_format(theirs) == "anthropic":
            # Anthropic blocks: Hermes's stages return them as they are (D5/D6) and it has no
            # chat send path for them; they go out through the Anthropic rules
            assert ours == anthropic_request(theirs)
            continue
        used |= wire_difference(ours, hermes_messages)
    return used
