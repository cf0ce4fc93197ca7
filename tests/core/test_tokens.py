"""Hermes's two heuristics, checked against the worked examples of the spec (hand-computed)."""

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermesctx import tokens

E1 = {"role": "user", "content": "Hello, how are you today?"}
E1b = {"role": "assistant", "content": "I'm fine."}
E2 = {"role": "user", "content": [{"type": "text", "text": "What is in this picture?"},
                                  {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA"}}]}
E3 = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"/tmp/a.py\"}"}}]}
E4 = {"role": "tool", "tool_call_id": "call_1", "name": "read_file", "content": "line1\nline2\n"}
E6 = {"role": "user", "content": "你好，世界！这是一个测试。"}
E6b = {"role": "user", "content": "a\u00a0b\u200bc 😀 it's"}
E8 = {"role": "assistant", "content": "Done.", "reasoning": "Let me think.",
      "reasoning_details": [{"type": "reasoning.text", "text": "Let me think."}]}
E9 = {"role": "assistant", "content": None}
E9b = {"role": "user", "content": 12345}
E9c = {"role": "user", "content": "x", "weight": 1.0, "flag": False, "n": None}
E10 = {"role": "tool", "tool_call_id": "c", "content": {
    "_multimodal": True, "text_summary": "Screenshot taken",
    "content": [{"type": "text", "text": "Screenshot taken"},
                {"type": "image_url", "image_url": {"url": "data:..."}},
                {"type": "input_image", "image_url": "x"}]}}
E11 = {"role": "user", "content": "see image", "_anthropic_content_blocks": [
    {"type": "image", "source": {"type": "base64", "data": "QUFB"}}, {"type": "text", "text": "see image"}]}
E12 = {"role": "user", "content": ["plain string part", {"type": "input_image", "image_url": "data:x"},
                                   {"type": "image", "source": {"data": "zz"}}, {"type": "input_text", "text": "hi"}]}

# (message, chars, images, rough, tail) from the spec's table
TABLE = [
    (E1, 56, 0, 14, 16), (E1b, 45, 0, 12, 12), (E2, 129, 1, 1533, 1616), (E3, 165, 0, 42, 37),
    (E4, 92, 0, 23, 13), (E6, 44, 0, 11, 13), (E6b, 51, 0, 13, 13), (E8, 147, 0, 37, 27),
    (E9, 38, 0, 10, 10), (E9b, 34, 0, 9, 11), (E9c, 73, 0, 19, 10), (E10, 68, 1, 1517, 64),
    (E11, 40, 1, 1510, 12), (E12, 178, 2, 3045, 3214),
]


@pytest.mark.parametrize("msg,chars,images,rough,tail", TABLE)
def test_worked_examples(msg, chars, images, rough, tail):
    before = copy.deepcopy(msg)
    assert tokens.message_chars(msg) == chars
    assert tokens.image_count(msg) == images
    assert tokens.rough_messages([msg]) == rough
    assert tokens.tail_tokens(msg) == tail
    assert msg == before  # never mutated


def test_rounding_is_over_the_list_not_per_message():
    assert tokens.rough_messages([E1, E1b]) == 26
    assert tokens.rough_messages([E9, E9, E9]) == 29  # per message it would be 30
    assert tokens.rough_messages([]) == 0


def test_rough_text():
    assert [tokens.rough_text(t) for t in ("", None, "a", "abcd", "abcde", "你好世界", "😀")] == [0, 0, 1, 1, 2, 1, 1]


@pytest.mark.parametrize("text,chars", [("a\nb", 35), ("tab\there", 40), ("back\\slash", 42),
                                        ("both ' and \"", 44), ("\u0000", 35), ("\u2028", 37),
                                        ("\U000E0001", 41), ("é", 32), ("\ud800", 37)])
def test_repr_escapes(text, chars):
    assert tokens.message_chars({"role": "user", "content": text}) == chars


def test_request_with_system_prompt_and_tools():
    tools = [
        {"type": "function", "function": {"name": "read_file", "description": "Read a file from disk.",
                                          "parameters": {"type": "object", "properties": {"path": {"type": "string", "description": "Path to the file"}}, "required": ["path"]}}},
        {"type": "function", "function": {"name": "terminal", "description": "Run a shell command."}},
        {"name": "web_search", "description": "Search the web — fast.",
         "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}},
        "not-a-dict",
    ]
    messages = [{"role": "user", "content": "Read /tmp/a.py please."}]
    system = "You are Hermes, a helpful agent."
    assert tokens.rough_tools(tools) == 65
    assert tokens.rough_request(messages, system_prompt=system, tools=tools) == 87
    assert tokens.rough_request(messages) == 14
    assert tokens.rough_request([], system_prompt="", tools=[]) == 0
    assert tokens.rough_request([], system_prompt="abcde") == 2
    # the same system prompt as a message costs more (measured by repr)
    assert tokens.rough_messages([{"role": "system", "content": system}, *messages]) == 30


# --- adversarial shapes found by the differential tests (each value is Hermes 0.19.0's) -------

def test_tail_counts_items_of_a_non_string_text_field():
    """Hermes takes len() of a part's text whatever it is: an object counts its keys."""
    msg = {"role": "user", "content": [{"type": "text", "text": {"a": "x" * 400, "b": 1}},
                                        {"type": "text", "text": ["y" * 400, "z"]}]}
    assert tokens.tail_tokens(msg) == (2 + 2) // 4 + 10 == 11


@pytest.mark.parametrize("kind", [["image"], {"image": 1}])
def test_unhashable_part_type_is_no_image(kind):
    """Hermes raises on a list or object ``type``; hermesctx measures the part as printed."""
    msg = {"role": "user", "content": [{"type": kind, "text": "hi"}]}
    assert tokens.image_count(msg) == 0
    assert tokens.rough_messages([msg]) == (len(str(msg)) + 3) // 4
    assert tokens.tail_tokens(msg) == 10


@given(st.one_of(st.text(alphabet=st.one_of(st.characters(), st.sampled_from("'\"\\\n\r\t\x7f\x00 é日😀\u2028"))),
                 st.text(alphabet=st.characters(max_codepoint=127)),
                 st.text(alphabet=st.sampled_from("ab '\"\\\n\t\r\x1b"))))
def test_repr_len_is_the_length_of_the_repr(text):
    assert tokens.repr_len(text) == len(repr(text))


@pytest.mark.parametrize("text", ["x" * 3000, "it's\n" * 700, "it's \"q\"\\\t" * 300, "é日本\r\n" * 600,
                                  "bad\x00byte " * 400, "\u2028" * 2100])
def test_long_content_is_measured_as_printed(text):
    msg = {"role": "tool", "content": text, "tool_call_id": "c'1", "name": "read_file"}
    assert tokens.message_chars(msg) == len(str(msg))


@pytest.mark.parametrize("args", ["{}", '{"path": "a.py", "content": "' + "it's\\n" * 900 + '"}', "é" * 3000])
def test_tail_estimate_of_a_call_with_long_arguments_is_its_printed_length(args):
    call = {"id": "c1", "type": "function", "function": {"name": "write_file", "arguments": args}}
    msg = {"role": "assistant", "content": "", "tool_calls": [call, "odd"]}
    assert tokens.tail_tokens(msg) == 10 + len(str(call)) // 4


_JSON_TEXT = st.text(alphabet=st.one_of(st.characters(), st.sampled_from("'\"\\\n\r\t\x7f\x00\x1b é日😀\u2028")))
_JSON_LEAF = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(min_value=-(10 ** 80), max_value=10 ** 80),
    st.floats(allow_nan=False), st.floats(), _JSON_TEXT, st.text(alphabet="ab '\"\\\n", min_size=40, max_size=400))
_JSON_VALUE = st.recursive(_JSON_LEAF, lambda inner: st.one_of(
    st.lists(inner, max_size=6), st.dictionaries(_JSON_TEXT, inner, max_size=6)), max_leaves=40)


_CALL_TEXT = _JSON_TEXT | st.text(alphabet="ab '\"\\\n", min_size=40, max_size=400)


@given(st.fixed_dictionaries({"id": _CALL_TEXT, "type": _CALL_TEXT, "function": st.fixed_dictionaries(
    {"name": _CALL_TEXT, "arguments": _CALL_TEXT | _JSON_LEAF})}) | st.dictionaries(_JSON_TEXT, _JSON_VALUE))
def test_a_call_in_the_tail_estimate_is_its_printed_length(call):
    """The usual call (four strings) is counted from its frame; any other as printed."""
    assert tokens.tail_tokens({"role": "assistant", "tool_calls": [call]}) == 10 + len(str(call)) // 4


@given(_JSON_VALUE)
def test_printed_len_is_the_length_of_the_printed_form(value):
    """The arithmetic measure equals Hermes's ``len(str(x))`` on any JSON value: nested objects
    and arrays, unicode and escapes, floats (inf and nan too), big integers, booleans, None."""
    assert tokens.printed_len(value) == len(str(value))


@given(st.dictionaries(st.sampled_from(["role", "content", "name", "tool_call_id", "tool_calls",
                                        "_anthropic_content_blocks", "reasoning"]), _JSON_VALUE))
def test_message_size_is_printed_length_and_images(msg):
    chars, images = tokens.message_size(msg)
    assert images == tokens.image_count(msg)
    if "_anthropic_content_blocks" not in msg and not isinstance(msg.get("content"), (list, dict)):
        assert chars == len(str(msg))


def test_before_after_measures_each_input_message_once_and_only_the_changed_output():
    same = {"role": "tool", "tool_call_id": "a", "content": "x" * 500}
    old = {"role": "tool", "tool_call_id": "b", "content": "y" * 900}
    new = {**old, "content": "[stub]"}
    before, after = [same, old, same], [same, new, same]
    assert tokens.rough_before_after(before, after) == (tokens.rough_messages(before),
                                                        tokens.rough_messages(after))


def test_rough_messages_at_least_stops_once_the_count_reaches_it():
    msgs = [{"role": "user", "content": "x" * 4000} for _ in range(50)]
    full = tokens.rough_messages(msgs)
    assert tokens.rough_messages(msgs, at_least=full + 1) == full  # never reached: exact
    short = tokens.rough_messages(msgs, at_least=2500)
    assert 2500 <= short < full
    assert tokens.rough_request(msgs, system_prompt="s" * 400, at_least=2500) >= 2500
