"""One transcript, two forms: compress cuts an Anthropic body where it cuts the same transcript
as OpenAI messages (within one message), because the tail walk counts ``tool_use`` and
``tool_result`` blocks by what they hold (:func:`hermesctx.tokens.block_tail_tokens`)."""

import json

from hypothesis import given
from hypothesis import strategies as st

from hermesctx import tokens
from hermesctx.formats.anthropic import message_to_openai
from hermesctx.stages.compress import compress_messages
from hermesctx.stages.convert import convert
from hermesctx.stages.prune import prune_messages


class Fixed:
    name = "fixed"

    def summarize(self, request):
        return "## Goal\nShip it."


def _anthropic(messages: list) -> list:
    return convert({"messages": messages}, source="openai", target="anthropic")[0]["messages"]


_text = st.text(st.sampled_from("abc def\n'\"é"), min_size=0, max_size=60).map(lambda t: t * 7)


@st.composite
def transcripts(draw):
    """OpenAI chat: asks, replies, tool rounds of one to three parallel calls whose inputs and
    outputs range from a word to a few thousand characters, sometimes a closing reply."""
    messages = [{"role": "user", "content": "Fix the build. " + draw(_text)}]
    call = 0
    for _ in range(draw(st.integers(6, 40))):
        kind = draw(st.sampled_from(["tools", "tools", "tools", "reply", "ask"]))
        if kind == "ask" and messages[-1]["role"] != "user":
            messages.append({"role": "user", "content": "Now " + draw(_text)})
        elif kind == "reply" and messages[-1]["role"] != "assistant":
            messages.append({"role": "assistant", "content": "Done: " + draw(_text)})
        else:
            width = draw(st.integers(1, 3))
            ids = [f"call_{call + k}" for k in range(width)]
            call += width
            say = draw(st.one_of(st.none(), _text))
            messages.append({"role": "assistant", "content": say, "tool_calls": [
                {"id": i, "type": "function", "function": {"name": "terminal", "arguments": json.dumps(
                    {"command": "cat " + draw(_text)}, ensure_ascii=False)}} for i in ids]})
            for i in ids:
                size = draw(st.sampled_from([5, 200, 1500, 6000]))
                messages.append({"role": "tool", "tool_call_id": i, "content": ("out " * size)[:size]})
    if messages[-1]["role"] == "tool" and draw(st.booleans()):
        messages.append({"role": "assistant", "content": "All green."})
    return messages


@given(transcripts(), st.integers(1, 9), st.sampled_from([3, 6, 20]))
def test_the_same_transcript_is_cut_alike_as_anthropic_and_as_openai(messages, tenths, last_n):
    """Pruned, cut and anchored alike: the floor of kept messages counts a turn of k results as
    k messages, and prune's boundary may fall between the results of one turn, as between the
    tool messages of the OpenAI form."""
    blocks = _anthropic(messages)
    whole = sum(tokens.tail_tokens(m) for m in messages)
    # the blocks count as the OpenAI messages they stand for, exactly
    assert sum(tokens.block_tail_tokens(m) for m in blocks) == whole
    budget = max(1, whole * tenths // 10)
    # prune stubs and deduplicates the same results in either form
    keys = ("stubbed", "deduplicated", "args_truncated")
    pruned = [prune_messages(m, protect_tail_count=last_n, protect_tail_tokens=budget)[1] for m in (messages, blocks)]
    assert [{k: r[k] for k in keys} for r in pruned][0] == [{k: r[k] for k in keys} for r in pruned][1]
    _, openai = compress_messages(messages, summarizer=Fixed(), tail_token_budget=budget, protect_last_n=last_n)
    _, anthropic = compress_messages(blocks, summarizer=Fixed(), tail_token_budget=budget, protect_last_n=last_n)
    if "end" not in openai or "end" not in anthropic:  # too short to compress in either form
        assert ("end" in openai) == ("end" in anthropic)
        return
    # the OpenAI tail in the Anthropic form against the Anthropic tail: within one message
    openai_tail = len(_anthropic(messages[openai["end"]:]))
    assert abs(openai_tail - (len(blocks) - anthropic["end"])) <= 1, (openai["end"], anthropic["end"])


def test_a_tool_round_costs_its_content_in_either_form():
    big = "line of build output\n" * 400
    messages = [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "write_file", "arguments": json.dumps(
            {"path": "a.py", "content": big})}}]},
                {"role": "tool", "tool_call_id": "c1", "content": big}]
    use, result = _anthropic(messages)
    assert use["content"][0]["type"] == "tool_use" and result["content"][0]["type"] == "tool_result"
    assert tokens.block_tail_tokens(use) == tokens.tail_tokens(messages[0]) > len(big) // 4
    assert tokens.block_tail_tokens(result) == tokens.tail_tokens(messages[1]) == len(big) // 4 + 10
    # Hermes's own rule reads only a part's text: 10 tokens each, whatever they hold
    assert tokens.tail_tokens(use) == tokens.tail_tokens(result) == 10
    # a result given as blocks, images and thinking: as the OpenAI message each becomes
    turn = {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "c1", "content": [{"type": "text", "text": big},
                                                                {"type": "image", "source": {"type": "url", "url": "u"}}]},
        {"type": "text", "text": "and this"}]}
    assert tokens.block_tail_tokens(turn) == sum(tokens.tail_tokens(m) for m in message_to_openai(turn, {})) \
        == (len(big) + 6400) // 4 + 10 + len("and this") // 4 + 10
    thought = {"role": "assistant", "content": [{"type": "thinking", "thinking": big, "signature": "s"},
                                                {"type": "text", "text": "ok"}]}
    assert tokens.block_tail_tokens(thought) == sum(tokens.tail_tokens(m) for m in message_to_openai(thought, {}))
