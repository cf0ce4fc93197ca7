"""The fast paths give the general answer: the OpenAI pairing pre-check answers "clean" only
when the full check finds nothing (and always then, for string ids), and cache-mark's marker
count after marking equals counting the output again."""

from builders import call
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hermesctx.messages import messages_of
from hermesctx.stages.cache_mark import (
    _unmarked,
    cache_mark,
    count_markers,
    mark_anthropic,
    mark_messages,
    message_markers,
)
from hermesctx.wire.rules import PAIRING_RULES, _openai_pairing, _Sink, openai_pairs_clean

IDS = st.sampled_from(["a", "b", "c", ""]) | st.sampled_from([None, 1, ["a"]])
MARK = {"type": "ephemeral"}


def _call(cid):
    """A call with the id ``cid``, or with no id at all for ``"missing"``."""
    made = call(cid, "t")
    if cid == "missing":
        del made["id"]
    return made


assistant = st.builds(
    lambda calls, text: {"role": "assistant", "content": text,
                         **({} if calls is None else {"tool_calls": [_call(c) for c in calls]})},
    st.none() | st.lists(IDS | st.just("missing"), max_size=3), st.sampled_from(["", "ok", None]))
tool = st.builds(lambda cid: {"role": "tool", "tool_call_id": cid, "content": "out"}, IDS)
user = st.builds(lambda text: {"role": "user", "content": text}, st.sampled_from(["hi", ""]))
other = st.sampled_from([{"role": "system", "content": "s"}, "not a message", {"content": "no role"}])
transcripts = st.lists(assistant | tool | user | other, max_size=12)


def _full(messages):
    sink = _Sink(False, PAIRING_RULES)
    _openai_pairing(messages, sink)
    return sink.problems


@settings(max_examples=400, deadline=None)
@given(transcripts)
def test_pairing_fast_path_agrees_with_the_full_check(messages):
    clean = openai_pairs_clean(messages)
    problems = _full(messages)
    if clean:
        assert problems == []
    ids = [c.get("id") for m in messages if isinstance(m, dict) for c in m.get("tool_calls") or []]
    ids += [m.get("tool_call_id") for m in messages if isinstance(m, dict) and m.get("role") == "tool"]
    if all(isinstance(i, str) for i in ids):  # string ids: the fast path decides every case
        assert clean == (problems == [])


def _marked_content(text, where):
    if where == "message":
        return {"role": "user", "content": text, "cache_control": dict(MARK)}
    if where == "part":
        return {"role": "user", "content": [{"type": "text", "text": text, "cache_control": dict(MARK)}]}
    if where == "nested":
        return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x",
                                             "content": [{"type": "text", "text": text,
                                                          "cache_control": dict(MARK)}]}]}
    return {"role": "user", "content": text}


plain = st.builds(lambda role, text: {"role": role, "content": text},
                  st.sampled_from(["user", "assistant", "system"]), st.sampled_from(["x", "", None]))
marked = st.builds(_marked_content, st.sampled_from(["y", ""]),
                   st.sampled_from(["message", "part", "nested", "none"]))


@settings(max_examples=300, deadline=None)
@given(st.lists(plain | marked, min_size=1, max_size=10), st.booleans(),
       st.sampled_from(["list", "body", "anthropic"]))
def test_cache_mark_counts_as_counting_the_output_again(messages, native, shape):
    doc = {"list": messages, "body": {"model": "m", "messages": messages},
           "anthropic": {"system": [{"type": "text", "text": "s", "cache_control": dict(MARK)}],
                         "messages": messages}}[shape]
    out, report = cache_mark(doc, native=native)
    system = out.get("system") if isinstance(out, dict) else None
    assert report["markers"] == count_markers(messages_of(out), system)
    assert report["removed"] == count_markers(messages, doc.get("system") if isinstance(doc, dict) else None)


@settings(max_examples=300, deadline=None)
@given(st.lists(plain | marked, min_size=1, max_size=10), st.booleans(), st.booleans())
def test_unmarking_only_the_messages_counted_with_markers_is_unmarking_all(messages, native, anthropic):
    """cache-mark unmarks only the messages whose marker count is not 0: the same output as
    unmarking every one (each message without a marker is given back as it is)."""
    counts = [message_markers(m) for m in messages]
    if anthropic:
        body = {"system": "s", "messages": messages}
        assert mark_anthropic(body, counts=counts) == mark_anthropic(body)
    else:
        fast, slow = mark_messages(messages, native=native, counts=counts), mark_messages(messages, native=native)
        assert fast == slow
        assert all(a is b for a, b, n in zip(_unmarked(messages, counts), messages, counts) if not n)


# --- prune's "tokens saved": measuring only what differs gives the full measure ---------------

from hermesctx import tokens  # noqa: E402

TEXT = st.text(alphabet=st.sampled_from("ab '\"\\\n\t\x01é"), max_size=80)
LEAF = TEXT | st.none() | st.booleans() | st.integers(-5, 5)
VALUE = st.recursive(LEAF, lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3), max_leaves=8)
IMAGE = st.sampled_from([{"type": "image_url", "image_url": {"url": "u"}}, {"type": "image", "source": {}}])
CONTENT = VALUE | st.lists(VALUE | IMAGE, max_size=3) | st.builds(
    lambda parts: {"_multimodal": True, "text_summary": "s", "content": parts}, st.lists(IMAGE, max_size=2))
MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["tool", "assistant", "user"])},
    optional={"content": CONTENT, "tool_calls": VALUE, "name": TEXT,
              "_anthropic_content_blocks": st.just([{"type": "image", "source": {}}])})


def _edit(draw, value, depth=0):
    """``value`` as a stage leaves it: itself, a new value, or (a container) a new one that
    shares some of its parts, with a key added or removed."""
    choice = draw(st.integers(0, 3))
    if choice == 0 or depth > 3:
        return value
    if choice == 1 or not isinstance(value, (dict, list)):
        return draw(VALUE)
    if isinstance(value, list):
        return [_edit(draw, item, depth + 1) for item in value]
    out = {key: _edit(draw, item, depth + 1) for key, item in value.items()}
    if draw(st.booleans()):
        out[draw(st.sampled_from(["a", "b", "c", "d"]))] = draw(VALUE)
    elif out and draw(st.booleans()):
        del out[draw(st.sampled_from(sorted(out)))]
    return out


@st.composite
def edited(draw):
    """A message list and the list a stage makes of it: untouched messages are the same
    objects, rewritten ones new dicts sharing what they did not change."""
    before = draw(st.lists(MESSAGE, max_size=6))
    return before, [msg if draw(st.booleans()) else _edit(draw, msg, 1) for msg in before]


@settings(max_examples=500, deadline=None)
@given(edited())
def test_tokens_saved_measured_on_the_differences_is_the_full_measure(pair):
    before, after = pair
    chars = images = 0
    for old, new in zip(before, after):
        was, now = tokens.message_size(old), tokens.message_size(new)
        chars += was[0] - now[0]
        images += was[1] - now[1]
    assert tokens.rough_saved(before, after) == chars // 4 + tokens.IMAGE_TOKENS * images


# --- sanitize's one pass: the pairing check and the send path's check at once ------------------

import operator  # noqa: E402

from hermesctx.messages import check_messages  # noqa: E402
from hermesctx.stages.sanitize import sanitize  # noqa: E402
from hermesctx.wire import send  # noqa: E402
from tests.transcripts import TranscriptGen  # noqa: E402

extra = st.sampled_from([
    {"role": "assistant", "content": "x", "reasoning": "r"},
    {"role": "user", "content": "u", "_ts": 1},
    {"role": "assistant", "content": [{"type": "text", "text": " "}]},
    {"role": "tool", "tool_call_id": "a", "content": [{"type": "image_url", "image_url": {}}]},
    {"role": "assistant", "content": None, "tool_calls": []},
    {"role": "assistant", "content": "c", "tool_calls": [{"id": "a", "call_id": "b", "type": "function"}]},
    {"role": "assistant", "content": "c", "tool_calls": "not a list"},
])


def _plain_calls(messages):
    """Every message an object with a role, every call an object with a string id in a list,
    every result id a string: the input for which the one pass decides every case (it answers
    False for anything odder)."""
    for m in messages:
        if not isinstance(m, dict) or not isinstance(m.get("role"), str) or not m["role"]:
            return False
        calls = m.get("tool_calls")
        if calls is not None and not (isinstance(calls, list) and all(
                isinstance(c, dict) and isinstance(c.get("id"), str) for c in calls)):
            return False
        if m.get("role") == "tool" and not isinstance(m.get("tool_call_id"), str):
            return False
    return True


@settings(max_examples=500, deadline=None)
@given(st.lists(assistant | tool | user | other | extra, max_size=12))
def test_ready_is_unchanged_and_pairs_clean(messages):
    both = send.openai_unchanged(messages) and openai_pairs_clean(messages)
    ready = send.openai_ready(messages)
    assert not ready or both
    if _plain_calls(messages):
        assert ready == both


@st.composite
def oa_mutated(draw):
    """A clean transcript with one or two changes that may make it anything but clean (the
    cases next to the border the one pass draws)."""
    messages: list = [{"role": "system", "content": "s"}, {"role": "user", "content": "go"}]
    for k in range(draw(st.integers(0, 3))):
        ids = [f"c{k}_{j}" for j in range(draw(st.integers(1, 2)))]
        messages.append({"role": "assistant", "content": draw(st.sampled_from(["", None, "x"])),
                         "tool_calls": [_call(i) for i in ids]})
        messages += [{"role": "tool", "tool_call_id": i, "content": "out"} for i in draw(st.permutations(ids))]
        messages += draw(st.sampled_from([[], [{"role": "assistant", "content": "ok"}]]))
        messages.append({"role": "user", "content": "more"})
    assert send.openai_ready(messages)
    for _ in range(draw(st.integers(1, 2))):
        i = draw(st.integers(0, len(messages) - 1))
        msg = messages[i]
        change = draw(st.sampled_from(["insert", "delete", "swap", "role", "id", "key", "content", "no content"]))
        if change == "insert":
            messages.insert(i, draw(assistant | tool | user | other | extra))
        elif change == "delete" and len(messages) > 1:
            del messages[i]
        elif change == "swap" and i + 1 < len(messages):
            messages[i], messages[i + 1] = messages[i + 1], messages[i]
        elif change == "role" and isinstance(msg, dict):
            messages[i] = {**msg, "role": draw(st.sampled_from(["user", "assistant", "tool", "", None, ["user"]]))}
        elif change == "id" and isinstance(msg, dict) and msg.get("tool_calls"):
            calls = [dict(c) for c in msg["tool_calls"]]
            calls[draw(st.integers(0, len(calls) - 1))]["id"] = draw(IDS | st.sampled_from(["c0_0", "c0_1"]))
            messages[i] = {**msg, "tool_calls": calls}
        elif change == "id" and isinstance(msg, dict):
            messages[i] = {**msg, "tool_call_id": draw(IDS | st.sampled_from(["c0_0", "c0_1"]))}
        elif change == "key" and isinstance(msg, dict):
            messages[i] = {**msg, draw(st.sampled_from(["_ts", "reasoning", "audio", "function_call"])): 1}
        elif change == "no content" and isinstance(msg, dict):
            messages[i] = {k: v for k, v in msg.items() if k != "content"}
        elif change == "content" and isinstance(msg, dict):
            messages[i] = {**msg, "content": draw(st.sampled_from(
                [None, [], [{"type": "text", "text": " "}], [{"type": "text", "text": "t"}], "",
                 [{"type": "image_url", "image_url": {}}]]))}
    return messages


@settings(max_examples=500, deadline=None)
@given(oa_mutated())
@example([{"role": "assistant", "content": "c", "tool_calls": [_call("a")]}, {"role": "user", "content": "u"},
          {"role": "tool", "tool_call_id": "a", "content": "out"}])
@example([{"role": "assistant", "content": "c", "tool_calls": [_call("a"), _call("a")]},
          {"role": "tool", "tool_call_id": "a", "content": "out"}])
@example([{"content": "no role"}])
@example([{"role": "user", "content": "u"}, {"role": "assistant", "content": "c", "tool_calls": [_call("a")]}])
@example([{"role": "user", "content": "u"}, {"role": "assistant", "content": None}])
@example([{"role": "user", "content": "u"}, {"role": "assistant"}])
@example([{"role": "user", "_ts": 1}])
def test_ready_next_to_the_border(messages):
    if send.openai_ready(messages):
        check_messages(messages, lenient=False)  # (sanitize checks no more when it is ready)
        assert send.openai_unchanged(messages) and openai_pairs_clean(messages) and _full(messages) == []
        counts: dict = {}
        out = list(send.openai_messages(messages, counts))
        assert len(out) == len(messages) and all(map(operator.is_, out, messages)) and counts == {}


def _seeded(n=150):
    """Generated transcripts, and sanitize's output of each (most of them clean)."""
    for seed in range(n):
        messages = TranscriptGen(seed).transcript(6)
        yield messages
        yield sanitize({"messages": messages})[0]["messages"]


def test_ready_agrees_on_generated_transcripts():
    seen = set()
    for messages in _seeded():
        both = send.openai_unchanged(messages) and openai_pairs_clean(messages)
        assert send.openai_ready(messages) == (both and _plain_calls(messages))
        seen.add(both)
    assert seen == {True, False}  # (both kinds met)


def _sanitize_stage(stub: bool = False):
    """sanitize as the document loop runs it (its report may say the output is ready)."""
    from hermesctx.stages import sanitize as stage

    return stage.build(stage.Options(stub=stub), None)


def test_sanitize_ready_output_gives_what_the_send_path_checking_again_gives():
    """sanitize's report says when the list it hands on passed the send path's ready check
    (:data:`send.READY`): writing it without the check then gives the same request (the very
    same object, nothing counted) as checking it again; with --stub only of a repaired list."""
    run = _sanitize_stage()
    ready_seen = 0
    for messages in _seeded(80):
        doc = {"model": "m", "messages": messages}
        out, report = run(doc)
        ready, rest = send.ready_of(report)
        assert send.READY not in rest and (out, rest) == sanitize(doc)
        if ready is not None:
            ready_seen += 1
            assert ready == "openai" and rest["repair"] in ("none", "hermes")
        counts: dict = {}
        fast = send.request(out, "openai", counts, ready)
        again: dict = {}
        assert fast == send.request(out, "openai", again) and counts == again
        if fast is out:
            assert send.request(out, "openai", {}) is out
    assert ready_seen
    stub = _sanitize_stage(stub=True)
    for messages in _seeded(20):  # (ready only for Hermes's repair: a list checked after it was made)
        ready, report = send.ready_of(stub({"messages": messages})[1])
        assert ready is None or report["repair"] == "hermes"


# --- the Anthropic one pass: sanitize's pairing check and the send path's work at once -----------

from hermesctx.wire.rules import ANTHROPIC, check_pairing  # noqa: E402

AN_IDS = st.sampled_from(["t1", "t2", "t3"]) | st.sampled_from([None, 7, ["t1"]])
AN_TEXT = st.sampled_from(["ok", "ok ", " ", "", "\u3000", 5])


def _marked(block, mark):
    return {**block, "cache_control": dict(MARK)} if mark and isinstance(block, dict) else block


AN_INNER = st.builds(_marked, st.builds(lambda t: {"type": "text", "text": t}, AN_TEXT)
                     | st.sampled_from([{"type": "image", "source": {}}, "not a block",
                                        {"type": "tool_use", "id": "t9", "name": "n", "input": {}},
                                        {"type": "thinking", "thinking": "t", "signature": "s"}]),
                     st.sampled_from([False, False, True]))
AN_BLOCK = st.builds(
    _marked,
    st.builds(lambda t: {"type": "text", "text": t}, AN_TEXT)
    | st.builds(lambda s: {"type": "thinking", "thinking": "t", "signature": s}, st.sampled_from(["sig", ""]))
    | st.builds(lambda d: {"type": "redacted_thinking", "data": d}, st.sampled_from(["d", ""]))
    | st.builds(lambda i: {"type": "tool_use", "id": i, "name": "n", "input": {}}, AN_IDS)
    | st.builds(lambda i, c: {"type": "tool_result", "tool_use_id": i,
                              **({} if c == "missing" else {"content": c})},
                AN_IDS, st.sampled_from(["missing", "out", " ", "", None, 3]) | st.lists(AN_INNER, max_size=2))
    | st.sampled_from([{"type": "image", "source": {}}, "not a block", {"type": ["odd"]}]),
    st.sampled_from([False] * 6 + [True]))
AN_MESSAGE = st.builds(
    lambda role, content, extra: {"role": role, "content": content, **extra},
    st.sampled_from(["user", "assistant"] * 4 + ["system", None]),
    st.lists(AN_BLOCK, max_size=3) | AN_TEXT | st.none(),
    st.sampled_from([{}] * 8 + [{"_ts": 1}]))


PLAIN_IDS = st.sampled_from(["t1", "t2", "u1"])
PLAIN_BLOCK = (st.builds(lambda t: {"type": "text", "text": t}, st.sampled_from(["ok", " ", ""]))
               | st.builds(lambda i: {"type": "tool_use", "id": i, "name": "n", "input": {}}, PLAIN_IDS)
               | st.builds(lambda i: {"type": "tool_result", "tool_use_id": i, "content": "r"}, PLAIN_IDS))
PLAIN_MESSAGE = st.builds(lambda role, content: {"role": role, "content": content},
                          st.sampled_from(["user", "assistant"]),
                          st.lists(PLAIN_BLOCK, max_size=3) | st.sampled_from(["hi", " "]))


@st.composite
def an_exchanges(draw, blocks=AN_BLOCK, messages=AN_MESSAGE):
    """Mostly well-paired turns (each assistant's tool_use ids answered at the front of the
    next user turn), with odd messages and blocks among them: both answers are met often."""
    out: list = [{"role": "user", "content": "go"}]
    n = 0
    for _ in range(draw(st.integers(0, 4))):
        if draw(st.booleans()):
            out.append(draw(messages))
            continue
        ids = []
        for _ in range(draw(st.integers(0, 2))):
            n += 1
            ids.append(draw(st.sampled_from([f"u{n}", f"u{n}", "t1"])))
        lead = draw(st.lists(blocks, max_size=1))
        out.append({"role": "assistant", "content": lead + [{"type": "text", "text": "x"}]
                    + [{"type": "tool_use", "id": i, "name": "n", "input": {}} for i in ids]})
        results = [{"type": "tool_result", "tool_use_id": i, "content": draw(st.sampled_from(["r", [], None]))}
                   for i in draw(st.permutations(ids))]
        out.append({"role": "user", "content": results + draw(st.lists(blocks, max_size=1)) or "next"})
    return out


@st.composite
def an_mutated(draw):
    """A well-paired transcript with one or two changes that may make it anything but clean
    (the cases next to the border the one pass draws)."""
    messages: list = [{"role": "user", "content": "go"}]
    for k in range(draw(st.integers(0, 3))):
        ids = [f"t{k}_{j}" for j in range(draw(st.integers(0, 2)))]
        thinking = draw(st.sampled_from([[], [], [{"type": "thinking", "thinking": "t", "signature": "s"}]]))
        messages.append({"role": "assistant", "content": thinking + [{"type": "text", "text": "x"}]
                         + [{"type": "tool_use", "id": i, "name": "n", "input": {}} for i in ids]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": i,
             **draw(st.sampled_from([{}, {"content": "r"}, {"content": [{"type": "text", "text": "r"}]}]))}
            for i in ids] + draw(st.sampled_from([[], [{"type": "text", "text": "and"}]])) or "next"})
    assert send.anthropic_ready(messages)
    for _ in range(draw(st.integers(1, 2))):
        i = draw(st.integers(0, len(messages) - 1))
        msg = messages[i]
        content = msg["content"]
        change = draw(st.sampled_from(["mark", "inner", "blank", "text", "insert", "reverse", "key",
                                       "role", "content", "copy", "delete", "first"]))
        if change in ("mark", "inner", "blank", "text") and isinstance(content, list) and content:
            j = draw(st.integers(0, len(content) - 1))
            content[j] = {"mark": lambda b: _marked(b, True),
                          "inner": lambda b: {**b, "content": draw(st.lists(AN_INNER, min_size=1, max_size=2))},
                          "blank": lambda b: {**b, "content": " "},
                          "text": lambda b: {**b, "text": draw(AN_TEXT)}}[change](content[j])
        elif change == "insert" and isinstance(content, list):
            content.insert(draw(st.integers(0, len(content))), draw(AN_BLOCK))
        elif change == "reverse" and isinstance(content, list):
            content.reverse()
        elif change == "first" and isinstance(content, list):
            del content[1:]
        elif change == "key":
            messages[i] = {**msg, draw(st.sampled_from(["_ts", "name", "cache_control"])): 1}
        elif change == "role":
            messages[i] = {**msg, "role": draw(st.sampled_from(["user", "assistant", "system", None]))}
        elif change == "content":
            messages[i] = {**msg, "content": draw(st.lists(AN_BLOCK, max_size=1) | AN_TEXT | st.none())}
        elif change == "copy":
            messages.insert(i, draw(st.sampled_from([msg, draw(AN_MESSAGE)])))
        elif change == "delete" and len(messages) > 1:
            del messages[i]
    return messages


def _request_unchanged(messages, marks: int) -> bool:
    """Whether the Anthropic send path gives a body with these messages back as it is, with
    ``marks`` cache breakpoints already taken by the tools."""
    body = {"model": "m", "system": "s", "messages": messages,
            "tools": [{"name": f"x{k}", "cache_control": dict(MARK)} for k in range(marks)]}
    counts: dict = {}
    return send.anthropic_request(body, counts) is body and counts == {}


@settings(max_examples=600, deadline=None)
@given(st.lists(AN_MESSAGE, max_size=6) | an_exchanges(), st.integers(0, 4))
@example([{"role": None, "content": "ok"}], 0)
def test_anthropic_ready_is_unchanged_and_pairs_clean(messages, marks):
    if send.anthropic_ready(messages):
        check_messages(messages, lenient=False)  # (raises on a message sanitize refuses)
        assert check_pairing(messages, ANTHROPIC) == []
        assert _request_unchanged(messages, marks)


def _plain_block(block, role) -> bool:
    kind = block["type"]
    return (kind == "text" or (kind == "tool_use" and role == "assistant")
            or (kind == "tool_result" and role == "user" and block.get("content") in ("r", [], None)))


@settings(max_examples=600, deadline=None)
@given(an_mutated())
@example([{"role": "user", "content": "go"},
          {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "n", "input": {}}]},
          {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": [
              {"type": "text", "text": "r", "cache_control": dict(MARK)}]}]}])
def test_anthropic_ready_next_to_the_border(messages):
    """The same, on changes to a clean transcript, with the 4 cache breakpoints taken (so any
    breakpoint in the messages is one the send path drops)."""
    if send.anthropic_ready(messages):
        check_messages(messages, lenient=False)
        assert check_pairing(messages, ANTHROPIC) == []
        assert _request_unchanged(messages, 4)


@settings(max_examples=300, deadline=None)
@given(an_exchanges(PLAIN_BLOCK, PLAIN_MESSAGE))
def test_anthropic_ready_answers_the_plain_cases(messages):
    """Without odd blocks (text, a tool_use in an assistant message, a tool_result with text
    or no content in a user message) the one pass decides every case but a call answered twice."""
    if all(isinstance(m["content"], str) or all(_plain_block(b, m["role"]) for b in m["content"])
           for m in messages):
        results = [b["tool_use_id"] for m in messages if isinstance(m["content"], list)
                   for b in m["content"] if b["type"] == "tool_result"]
        if len(results) == len(set(results)):
            clean = not check_pairing(messages, ANTHROPIC) and _request_unchanged(messages, 0)
            assert send.anthropic_ready(messages) == clean


def test_anthropic_ready_on_a_clean_transcript_with_thinking():
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "s"},
                                          {"type": "redacted_thinking", "data": "d"},
                                          {"type": "tool_use", "id": "a", "name": "n", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a",
                                      "content": [{"type": "text", "text": "r"}, {"type": "image", "source": {}}]},
                                     {"type": "text", "text": "and"}]},
        {"role": "assistant", "content": "done"},
    ]
    assert send.anthropic_ready(messages)
    moved = [messages[0], {"role": "assistant", "content": messages[1]["content"][::-1]}, *messages[2:]]
    assert not send.anthropic_ready(moved)  # (thinking after a tool_use: the send path moves it)


def test_anthropic_ready_is_taken_by_the_anthropic_send_path_only():
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [
        {"type": "tool_use", "id": "a", "name": "n", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "r"}]}]
    twice = [{"role": "user", "content": "hi"}, {"role": "user", "content": "again"}]
    assert send.anthropic_ready(twice)  # (one Anthropic turn; OpenAI merges the two)
    counts: dict = {}
    assert send.request(twice, "openai", counts, ANTHROPIC) != twice and counts  # (no use to OpenAI)
    # a tool_use id in the system: the messages are walked (the id is renumbered), ready or not
    body = {"system": [{"type": "tool_use", "id": "a", "name": "n", "input": {}}], "messages": messages}
    counts = {}
    out = send.request(body, "anthropic", counts, ANTHROPIC)
    assert out["messages"][1]["content"][0]["id"] == "a_2" and counts == {send.RENUMBERED: 1}


def _an_bodies(n):
    import random

    for seed in range(n):
        rng = random.Random(seed)
        body = {"model": "m", "system": "s", "messages": [{"role": "user", "content": "go"}]}
        k = 0
        for _ in range(rng.randint(1, 5)):
            ids = [f"t{k + j}" if rng.random() > 0.1 else "t0" for j in range(rng.randint(0, 3))]
            k += 3
            body["messages"].append({"role": "assistant", "content": [{"type": "text", "text": rng.choice(["x", " "])}]
                                     + [{"type": "tool_use", "id": i, "name": "n", "input": {}} for i in ids]})
            rng.shuffle(ids)
            kept = ids[:len(ids) - (rng.random() < 0.2)]
            body["messages"].append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": i,
                                                                  "content": "r"} for i in kept] or "ok"})
        yield body


def test_sanitize_ready_for_anthropic_gives_what_the_send_path_checking_again_gives():
    run = _sanitize_stage()
    ready_seen = 0
    for body in _an_bodies(120):
        out, report = run(body)
        ready, _ = send.ready_of(report)
        if ready is not None:
            ready_seen += 1
            assert ready == ANTHROPIC
        counts: dict = {}
        fast = send.request(out, "anthropic", counts, ready)
        again: dict = {}
        assert fast == send.request(out, "anthropic", again) and counts == again
    assert 10 < ready_seen < 120


# --- the pairing check that stops at the first problem ------------------------------------------

from hermesctx.wire.rules import OPENAI, pairing_clean  # noqa: E402


@settings(max_examples=400, deadline=None)
@given(transcripts | oa_mutated() | st.lists(AN_MESSAGE, max_size=6) | an_exchanges() | an_mutated(),
       st.sampled_from([OPENAI, ANTHROPIC, None]))
def test_pairing_clean_is_no_problem_found(messages, target):
    assert pairing_clean(messages, target) == (check_pairing(messages, target) == [])


# --- the rule tables: every row's test is what lets its case through --------------------------

from hermesctx.wire.onepass import by_role, one_pass  # noqa: E402

_U = {"role": "user", "content": "go"}


def _oa_calls(*ids, **extra):
    return {"role": "assistant", "content": "c", "tool_calls": [{**_call(i), **extra} for i in ids]}


# a transcript each row of send.OPENAI_RULES repairs (its count among what the send path counts),
# that no other row's test catches
OA_WITNESSES = {
    "_assistant_run": [_U, {"role": "assistant", "content": "a"}, {"role": "assistant", "content": "b"}],
    "_stray_result": [_U, _oa_calls("a"), {"role": "tool", "tool_call_id": "a", "content": "r"},
                      {"role": "tool", "tool_call_id": "a", "content": "again"}],
    "_internal_key": [{"role": "user", "content": "go", "_ts": 1}],
    "_replayed_thinking": [_U, {"role": "assistant", "content": "a", "reasoning_details": [
        {"type": "thinking", "thinking": "t", "signature": "s"}]}],
    "_parts_to_clean": [{"role": "user", "content": [{"type": "text", "text": " "}, {"type": "text", "text": "x"}]}],
    "_empty_calls": [_U, {"role": "assistant", "content": "a", "tool_calls": []}],
    "_calls_with_internals": [_U, _oa_calls("a", call_id="b"), {"role": "tool", "tool_call_id": "a", "content": "r"}],
    "_empty_assistant_message": [_U, {"role": "assistant", "content": None}, {"role": "user", "content": "more"}],
    "_user_run": [_U, {"role": "user", "content": "more"}],
}


def _each_row_alone_catches(rows, witnesses, send_pass, ready, ready_without):
    """Every row has a witness: the send path changes it, counting the row's repair; the check
    built from all the rows says it is not ready, the one built without that row lets it through."""
    assert sorted(witnesses) == sorted(row.might_apply.__name__ for row in rows)
    for row in rows:
        messages = witnesses[row.might_apply.__name__]
        counts: dict = {}
        out = list(send_pass(messages, counts))
        assert row.what in counts and out != messages, row
        assert not ready(messages), row
        assert ready_without(row, messages), row


def test_every_openai_rule_has_a_witness_its_test_alone_catches():
    """Without a row's test, the send-path check (openai_unchanged's tests) lets its witness
    through: the check is built from the rows, and a row added without a test (or a witness
    here) fails this test."""
    _each_row_alone_catches(
        send.OPENAI_RULES, OA_WITNESSES, send.openai_messages,
        lambda messages: send.openai_unchanged(messages) or send.openai_ready(messages),
        lambda row, messages: one_pass(messages, by_role(
            [(r.might_apply, r.roles, r.only) for r in send.OPENAI_RULES if r is not row], send._PLAIN_KEYS)))


_A = {"role": "user", "content": "go"}
_BP = {"type": "ephemeral"}


def _an_use(i):
    return {"type": "tool_use", "id": i, "name": "n", "input": {}}


def _an_result(i, **extra):
    return {"type": "tool_result", "tool_use_id": i, **extra}


AN_WITNESSES = {
    "_an_extra_keys": [{"role": "user", "content": "go", "_ts": 1}],
    "_an_empty": [_A, {"role": "assistant", "content": " "}, {"role": "user", "content": "more"}],
    "_an_breakpoint": [{"role": "user", "content": [{"type": "text", "text": f"x{i}", "cache_control": _BP}
                                                    for i in range(5)]}],
    "_an_blank_text": [{"role": "user", "content": [{"type": "text", "text": " "}, {"type": "text", "text": "x"}]}],
    "_an_result_content": [_A, {"role": "assistant", "content": [_an_use("t1")]},
                           {"role": "user", "content": [_an_result("t1", content=" ")]}],
    "_an_unsigned": [_A, {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": ""},
                                                           {"type": "text", "text": "x"}]}],
    "_an_thinking_late": [_A, {"role": "assistant", "content": [{"type": "text", "text": "x"},
                                                                {"type": "thinking", "thinking": "t", "signature": "s"}]}],
    "_an_thinking_only": [_A, {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "s"}]},
                          {"role": "user", "content": "more"}],
    "_an_reused_id": [_A, {"role": "assistant", "content": [_an_use("t1")]},
                      {"role": "user", "content": [_an_result("t1", content="r")]},
                      {"role": "assistant", "content": [_an_use("t1")]},
                      {"role": "user", "content": [_an_result("t1", content="r")]}],
}


def test_every_anthropic_rule_has_a_witness_its_test_alone_catches():
    _each_row_alone_catches(
        send.ANTHROPIC_RULES, AN_WITNESSES, send.anthropic_messages, send.anthropic_ready,
        lambda row, messages: send.anthropic_ready(messages, send.anthropic_tests(
            [(r.might_apply, r.where) for r in send.ANTHROPIC_RULES if r is not row] + list(send._AN_READY_ONLY))))


@settings(max_examples=500, deadline=None)
@given(st.lists(assistant | tool | user | other | extra, max_size=10) | oa_mutated())
def test_openai_ready_built_from_the_rows_is_the_full_check(messages):
    """Ready (the rows' tests, one pass) => the send path changes nothing and the full checks of
    sanitize find nothing; and a list the send path changes is never ready."""
    counts: dict = {}
    out = list(send.openai_messages(messages, counts))
    changed = counts or len(out) != len(messages) or not all(map(operator.is_, out, messages))
    if send.openai_ready(messages):
        assert not changed and check_pairing(messages, "openai") == []
    if changed:
        assert not send.openai_unchanged(messages)


@settings(max_examples=500, deadline=None)
@given(st.lists(AN_MESSAGE, max_size=6) | an_exchanges() | an_mutated())
def test_anthropic_ready_built_from_the_rows_is_the_full_check(messages):
    counts: dict = {}
    out = list(send.anthropic_messages(messages, counts))
    changed = counts or len(out) != len(messages) or not all(map(operator.is_, out, messages))
    if send.anthropic_ready(messages):
        assert not changed and check_pairing(messages, ANTHROPIC) == []
