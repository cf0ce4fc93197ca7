"""Differential: cache-mark placement, normalize-usage and cost vs Hermes 0.19.0 (`make oracle`)."""

import copy
import random

import pytest
from transcripts import TranscriptGen

from hermesctx.pricing import estimate_cost
from hermesctx.stages.cache_mark import mark_messages
from hermesctx.stages.normalize_usage import normalize_usage
from oracle.harness import SEND, hermes, needs_oracle, wire_difference

pytestmark = [pytest.mark.oracle, needs_oracle]


def _odd_messages(rng):
    contents = [None, "", "x", [], ["plain"], [{"type": "text", "text": "a"}],
                [{"type": "text", "text": "a"}, {"type": "image_url", "image_url": {"url": "data:x"}}],
                {"_multimodal": True}, 5]
    msgs = []
    for _ in range(rng.randint(0, 9)):
        msg = {"role": rng.choice(["system", "user", "assistant", "tool", "developer"])}
        if rng.random() < 0.9:
            msg["content"] = rng.choice(contents)
        msgs.append(msg)
    return msgs


def test_cache_mark_matches_hermes():
    rng = random.Random(5)
    cases = [TranscriptGen(s).transcript(4) for s in range(40)] + [_odd_messages(rng) for _ in range(300)]
    cases = [[c, ttl, native] for c in cases for ttl, native in (("5m", False), ("1h", True))]
    theirs = hermes("""
from agent.prompt_caching import apply_anthropic_cache_control
result = [apply_anthropic_cache_control(m, cache_ttl=t, native_anthropic=n) for m, t, n in data]
""", cases)
    for (msgs, ttl, native), expected in zip(cases, theirs):
        assert mark_messages(msgs, ttl=ttl, native=native)[0] == expected


USAGES = [
    {"input_tokens": 1200, "output_tokens": 350},
    {"input_tokens": 25, "output_tokens": 410, "cache_read_input_tokens": 48000, "cache_creation_input_tokens": 3100},
    {"prompt_tokens": 5000, "completion_tokens": 900, "prompt_tokens_details": {"cached_tokens": 4096},
     "completion_tokens_details": {"reasoning_tokens": 640}},
    {"prompt_tokens": 10000, "completion_tokens": 200, "prompt_tokens_details": {"cached_tokens": 6000, "cache_write_tokens": 3000}},
    {"input_tokens": 8000, "output_tokens": 1500, "input_tokens_details": {"cached_tokens": 7000},
     "output_tokens_details": {"reasoning_tokens": 1024}},
    {"input_tokens": 8000, "output_tokens": 10, "input_tokens_details": {"cached_tokens": 2000, "cache_creation_tokens": 5000}},
    {"prompt_tokens": None, "completion_tokens": None, "prompt_tokens_details": None},
    {"prompt_tokens": 3000, "completion_tokens": 100, "prompt_cache_hit_tokens": 2500},
    {"prompt_tokens": 9000, "completion_tokens": 50, "cache_read_input_tokens": 7000, "cache_creation_input_tokens": 1500},
    {"prompt_tokens": 9000, "completion_tokens": 50, "prompt_tokens_details": {"cached_tokens": 0}, "cache_read_input_tokens": 7000},
    {"prompt_tokens": 100, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 150, "cache_write_tokens": 20}},
    {"input_tokens": -5, "output_tokens": -7, "cache_read_input_tokens": -3},
    {"prompt_tokens": "120", "completion_tokens": 7.9, "prompt_tokens_details": {"cached_tokens": "20.5"}},
    {"prompt_tokens": True, "completion_tokens": False},
    {"prompt_tokens": 10, "completion_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
     "completion_tokens_details": {"reasoning_tokens": 4}},
]
MODES = {"anthropic": "anthropic_messages", "codex": "codex_responses", "openai": "chat_completions"}
# the buckets compared, and what every Hermes snippet below starts with
_KEYS = ["input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens",
         "prompt_tokens", "total_tokens"]
_NS = """
from types import SimpleNamespace
from agent.usage_pricing import normalize_usage, estimate_usage_cost
def ns(v):
    return SimpleNamespace(**{k: ns(x) for k, x in v.items()}) if isinstance(v, dict) else v
MODES = {"anthropic": "anthropic_messages", "codex": "codex_responses", "openai": "chat_completions"}
def nums(c):
    return [c.input_tokens, c.output_tokens, c.cache_read_tokens, c.cache_write_tokens, c.reasoning_tokens,
            c.prompt_tokens, c.total_tokens]
def cost(r):
    return [None if r.amount_usd is None else str(r.amount_usd), r.status, r.source, r.label, r.pricing_version,
            list(r.notes)]
"""


def test_normalize_usage_matches_hermes():
    cases = [[u, p] for u in USAGES for p in MODES]
    theirs = hermes(_NS + "result = [nums(normalize_usage(ns(u), api_mode=MODES[p])) for u, p in data]", cases)
    for (usage, provider), expected in zip(cases, theirs):
        ours = normalize_usage(usage, provider=provider, lenient=True)
        assert [ours[k] for k in _KEYS] == expected, (usage, provider)


def test_cost_matches_hermes():
    rng = random.Random(3)
    models = ["claude-sonnet-4-5", "anthropic/claude-opus-4.7", "claude-sonnet-4-5-20250929", "gpt-4o",
              "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "gemini-2.5-pro", "gpt-5.6-sol", "deepseek-chat",
              "my-model", "claude-haiku-4-5", "claude-3-haiku-20240307", "MiniMax-M2.7", "kimi-k2p6",
              "accounts/fireworks/routers/kimi-k2p6-turbo", "openai/gpt-4.1"]
    providers = [None, "anthropic", "openai", "bedrock", "google", "vertex", "openai-codex", "deepseek",
                 "minimax", "fireworks", "together", "custom"]
    cases = [[rng.choice(models), rng.choice(providers),
              [rng.choice([0, 25, 904, 5000, 15000, 1000000, -1000]) for _ in range(4)]] for _ in range(400)]
    theirs = hermes("""
from agent.usage_pricing import estimate_usage_cost, CanonicalUsage
result = []
for m, p, (a, b, c, d) in data:
    r = estimate_usage_cost(m, CanonicalUsage(a, b, c, d), provider=p)
    result.append([None if r.amount_usd is None else str(r.amount_usd), r.status, r.source, r.label,
                   r.pricing_version, list(r.notes)])
""", cases)
    for (model, provider, (a, b, c, d)), expected in zip(cases, theirs):
        r = estimate_cost({"input_tokens": a, "output_tokens": b, "cache_read_tokens": c, "cache_write_tokens": d},
                          model, provider=provider)
        assert [r["amount_usd"], r["status"], r["source"], r["label"], r["pricing_version"], r["notes"]] == expected, (model, provider)


def _clean_transcript(rng):
    """OpenAI messages that Hermes's adapter converts one to one (no placeholders, no orphans)."""
    msgs = [{"role": "system", "content": "You are S."}] if rng.random() < 0.7 else []
    n = 0
    for _ in range(rng.randint(1, 6)):
        msgs.append({"role": "user", "content": rng.choice(["u", "please read a", "x y"])})
        for _ in range(rng.randint(0, 2)):
            calls = []
            for _ in range(rng.randint(1, 3)):
                n += 1
                calls.append({"id": f"call_{n}", "type": "function",
                              "function": {"name": rng.choice(["read_file", "terminal"]), "arguments": '{"path": "a"}'}})
            msgs.append({"role": "assistant", "content": rng.choice([None, "let me look"]), "tool_calls": calls})
            msgs += [{"role": "tool", "tool_call_id": c["id"], "content": rng.choice(["result", "ok"])} for c in calls]
        msgs.append({"role": "assistant", "content": rng.choice(["done", "here it is"])})
    return msgs


def test_anthropic_body_marking_matches_hermes_mark_then_convert():
    """An Anthropic body marked by cache-mark == Hermes marking the OpenAI messages in the native
    layout and converting them with its adapter (40 §A.9)."""
    from hermesctx.stages.cache_mark import mark_anthropic

    rng = random.Random(11)
    cases = [[_clean_transcript(rng), rng.choice(["5m", "1h"])] for _ in range(300)]
    theirs = hermes("""
from agent.anthropic_adapter import convert_messages_to_anthropic as convert
from agent.prompt_caching import apply_anthropic_cache_control as mark
result = []
for m, ttl in data:
    plain = convert(m)
    marked = convert(mark(m, cache_ttl=ttl, native_anthropic=True))
    result.append([plain, marked])
""", cases)
    for (msgs, ttl), ((s0, b0), (s1, b1)) in zip(cases, theirs):
        body = {"model": "claude-sonnet-4-5", "messages": b0, **({"system": s0} if s0 is not None else {})}
        out, _ = mark_anthropic(body, ttl=ttl)
        assert out["messages"] == b1, msgs
        assert out.get("system") == s1


def _random_usage(rng):
    values = [None, True, False, 0, 1, 7, 150, 4096, -20, 3.7, -3.7, "120", "20.5", " 12 ", "abc", [], {}, [1],
              10 ** 20]
    top = ["input_tokens", "output_tokens", "prompt_tokens", "completion_tokens", "total_tokens",
           "cache_read_input_tokens", "cache_creation_input_tokens", "prompt_cache_hit_tokens",
           "prompt_cache_miss_tokens"]
    nested = {"prompt_tokens_details": ["cached_tokens", "cache_write_tokens", "audio_tokens"],
              "input_tokens_details": ["cached_tokens", "cache_creation_tokens"],
              "output_tokens_details": ["reasoning_tokens"], "completion_tokens_details": ["reasoning_tokens"],
              "cache_creation": ["ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens"]}
    usage = {k: rng.choice(values) for k in rng.sample(top, rng.randint(0, len(top)))}
    for key in rng.sample(list(nested), rng.randint(0, len(nested))):
        roll = rng.random()
        if roll < 0.1:
            usage[key] = rng.choice([None, 0, [], "x"])
        else:
            usage[key] = {k: rng.choice(values) for k in rng.sample(nested[key], rng.randint(0, len(nested[key])))}
    return usage


def test_normalize_usage_random_shapes_match_hermes():
    rng = random.Random(17)
    cases = [[_random_usage(rng), p] for _ in range(600) for p in MODES]
    theirs = hermes(_NS + "result = [nums(normalize_usage(ns(u), api_mode=MODES[p])) for u, p in data]", cases)
    for (usage, provider), expected in zip(cases, theirs):
        ours = normalize_usage(usage, provider=provider, lenient=True) if usage else None
        if ours is None:
            assert expected == [0] * 7  # an empty usage object
            continue
        assert [ours[k] for k in _KEYS] == expected, (usage, provider)


def _sprinkle_markers(rng, msgs):
    out = []
    for m in msgs:
        m = dict(m)
        if rng.random() < 0.3:
            m["cache_control"] = {"type": "ephemeral"}
        if isinstance(m.get("content"), list) and rng.random() < 0.5:
            m["content"] = [dict(p, cache_control={"type": "ephemeral", "ttl": "1h"}) if isinstance(p, dict) else p
                            for p in m["content"]]
        out.append(m)
    return out


def test_cli_matches_hermes_and_d8_equals_marking_a_clean_copy():
    """Through the CLI (bare list and request body): Hermes's output on the unmarked messages,
    whatever stale markers the input carried (D8)."""
    from conftest import invoke

    from hermesctx.stages.cache_mark import unmark_message

    rng = random.Random(23)
    cases = []
    for s in range(120):
        clean = _odd_messages(rng) if s % 2 else TranscriptGen(s).transcript(3)
        cases.append([clean, rng.choice(["5m", "1h"]), rng.random() < 0.5])
    # D12: Hermes places the markers on the messages it sends (after repair_message_sequence,
    # before convert_messages): so does the command, on its send path's form of the input. Named
    # exception: where that form differs from Hermes's (wire_difference's exceptions), Hermes's
    # placement is compared on ours, so the markers land on the same messages.
    from hermesctx.wire.send import openai_request

    theirs = hermes(SEND + """
from agent.prompt_caching import apply_anthropic_cache_control
result = [convert(apply_anthropic_cache_control(prepare(m), cache_ttl=t, native_anthropic=n))
          for m, t, n in data]
""", [[openai_request(clean), ttl, native] for clean, ttl, native in cases])
    used = set()
    for (clean, ttl, native), expected in zip(cases, theirs):
        assert [unmark_message(m) for m in clean] == clean
        dirty = _sprinkle_markers(rng, clean)
        flags = ["cache-mark", "--lenient", "--ttl", ttl] + (["--native-anthropic"] if native else [])
        bare = invoke(flags, dirty)
        assert bare.status == 0, bare.stderr
        used |= wire_difference(bare.json, expected)
        wrapped = invoke(flags, {"model": "anthropic/claude-sonnet-4.5", "messages": dirty})
        assert wrapped.json == {"model": "anthropic/claude-sonnet-4.5", "messages": bare.json}
    print("wire exceptions used by cache-mark:", sorted(used))


def test_cli_usage_and_cost_match_hermes_call_site():
    """`normalize-usage --provider P --model M` == Hermes's call site: normalize_usage(usage,
    provider=P, api_mode=...) then estimate_usage_cost(M, canonical, provider=P)."""
    from conftest import invoke

    rng = random.Random(29)
    models = ["claude-sonnet-4-5", "claude-opus-4-7", "claude-haiku-4-5", "claude-3-haiku-20240307", "gpt-4o",
              "gpt-4.1-mini", "o3", "gpt-5.6-luna", "unknown-model", "anthropic/claude-opus-4.7"]
    cases = [[rng.choice(USAGES), rng.choice(["anthropic", "openai"]), rng.choice(models)] for _ in range(150)]
    theirs = hermes(_NS + """
result = []
for u, p, m in data:
    c = normalize_usage(ns(u), provider=p, api_mode=MODES[p])
    result.append(nums(c)[:5] + cost(estimate_usage_cost(m, c, provider=p)))
""", cases)
    for (usage, provider, model), expected in zip(cases, theirs):
        result = invoke(["--quiet", "normalize-usage", "--lenient", "--provider", provider, "--model", model], usage)
        assert result.status == 0, result.stderr
        out = result.json
        cost = out["cost"]
        assert [out["input_tokens"], out["output_tokens"], out["cache_read_tokens"], out["cache_write_tokens"],
                out["reasoning_tokens"], cost["amount_usd"], cost["status"], cost["source"], cost["label"],
                cost["pricing_version"], cost["notes"]] == expected, (usage, provider, model)


# --- adversarial generators (seeded, bounded) ------------------------------------------------

def _adv_part(rng):
    return rng.choice([
        lambda: {"type": "text", "text": rng.choice(["a", "", "hello"])},
        lambda: {"type": "image_url", "image_url": {"url": "data:x"}},
        lambda: {"type": "tool_use", "id": "t1", "name": "f", "input": {}},
        lambda: {"type": "tool_result", "tool_use_id": "t1", "content": rng.choice(["r", [{"type": "text", "text": "r"}]])},
        lambda: {"type": "input_text", "text": "x"},
        lambda: {},
        lambda: rng.choice(["plain", 7, None, []]),
    ])()


def _adv_content(rng):
    roll = rng.random()
    if roll < 0.25:
        return rng.choice(["x", "hello world", " "])
    if roll < 0.35:
        return ""
    if roll < 0.45:
        return None
    if roll < 0.5:
        return []
    if roll < 0.55:
        return rng.choice([{"_multimodal": True}, 5, True, 0, 1.5])
    return [_adv_part(rng) for _ in range(rng.randint(1, 4))]


def _adv_transcript(rng):
    """0..8 messages: every role (and none), every content kind, tool turns with empty
    content, system at [0] or not, two system messages."""
    msgs = []
    for i in range(rng.randint(0, 8)):
        role = rng.choice(["system", "user", "user", "assistant", "assistant", "tool", "developer", "function", None])
        msg = {} if role is None else {"role": role}
        if rng.random() < 0.92:
            msg["content"] = _adv_content(rng)
        if role == "assistant" and rng.random() < 0.4:
            msg["tool_calls"] = [{"id": f"call_{i}", "type": "function", "function": {"name": "f", "arguments": "{}"}}]
            if rng.random() < 0.5:
                msg["content"] = rng.choice(["", None])
        if role == "tool":
            msg["tool_call_id"] = f"call_{i}"
        msgs.append(msg)
    roll = rng.random()
    if msgs and roll < 0.4:
        msgs[0] = {"role": "system", "content": rng.choice(["S", "", None, [{"type": "text", "text": "S"}], []])}
    elif len(msgs) > 2 and roll < 0.5:
        msgs[:2] = [{"role": "system", "content": "S1"}, {"role": "system", "content": "S2"}]
    return msgs


def _adv_sprinkle(rng, msgs):
    """The same messages with stale markers on messages and on content parts (D8)."""
    out = copy.deepcopy(msgs)
    for msg in out:
        if rng.random() < 0.25:
            msg["cache_control"] = rng.choice([{"type": "ephemeral"}, {"type": "ephemeral", "ttl": "1h"}, None])
        for part in msg.get("content") if isinstance(msg.get("content"), list) else ():
            if isinstance(part, dict) and rng.random() < 0.3:
                part["cache_control"] = rng.choice([{"type": "ephemeral"}, {"type": "ephemeral", "ttl": "1h"}])
    return out


def _hermes_marks(cases):
    return hermes("""
from agent.prompt_caching import apply_anthropic_cache_control
result = [apply_anthropic_cache_control(m, cache_ttl=t, native_anthropic=n) for m, t, n in data]
""", cases)


def test_cache_mark_adversarial_stage_and_cli_match_hermes_on_the_unmarked_input():
    """3,000 adversarial transcripts (stage functions, bare and wrapped) and 300 through the
    CLI: our output on the input with stale markers == Hermes's on the same input without them."""
    from conftest import invoke

    from hermesctx.messages import lenient_input
    from hermesctx.stages.cache_mark import cache_mark

    rng = random.Random(41)
    clean = [[_adv_transcript(rng), rng.choice(["5m", "1h"]), rng.random() < 0.5] for _ in range(3000)]
    theirs = _hermes_marks(clean)
    # D12: the command marks the request as it is sent: Hermes's placement on our send path's
    # form of the input, then the send path again (its rules, e.g. a marked empty text part)
    from hermesctx.messages import detect_format
    from hermesctx.wire.send import request

    def wire(doc, like=None):  # the send path of the input's format (``like``: the input)
        with lenient_input():  # as the command runs it (an emptied list is written, said)
            return request(doc, detect_format(doc if like is None else like))

    on_wire = _hermes_marks([[wire(msgs), ttl, native] for msgs, ttl, native in clean[:300]])
    bodies = 0
    for i, ((msgs, ttl, native), expected) in enumerate(zip(clean, theirs)):
        dirty = _adv_sprinkle(rng, msgs) if i % 2 else msgs
        before = copy.deepcopy(dirty)
        assert mark_messages(dirty, ttl=ttl, native=native)[0] == expected, (dirty, ttl, native)
        with lenient_input():  # the generator feeds role-less messages: D14, read as Hermes does
            assert cache_mark(dirty, ttl=ttl, native=native)[0] == expected
            wrapped, report = cache_mark({"messages": dirty}, ttl=ttl, native=native)
        # an object whose messages form a valid Anthropic body (user/assistant only, Anthropic
        # blocks in the right roles) is marked as one (A.9); everything else as Hermes does
        if report["layout"] == "anthropic":
            bodies += 1
            assert all(m.get("role") in ("user", "assistant") for m in dirty)
        else:
            assert wrapped == {"messages": expected}, (dirty, ttl, native)
        assert dirty == before
        if i < 300:
            flags = ["cache-mark", "--lenient", "--ttl", ttl] + (["--native-anthropic"] if native else [])
            bare = invoke(flags, dirty)
            assert bare.status == 0 and bare.json == wire(on_wire[i], dirty), bare.stderr
            if report["layout"] != "anthropic":
                wrapped = invoke(flags, {"model": "m", "messages": dirty})
                assert wrapped.status == 0 and wrapped.json == {"model": "m", "messages": bare.json}
    assert bodies < 30


_SHAPES = {  # top-level keys, nested objects and their keys, per usage family
    "anthropic": (["input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"],
                  {"cache_creation": ["ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens"]}),
    "openai": (["prompt_tokens", "completion_tokens", "total_tokens", "prompt_cache_hit_tokens",
                "prompt_cache_miss_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"],
               {"prompt_tokens_details": ["cached_tokens", "cache_write_tokens", "audio_tokens"],
                "completion_tokens_details": ["reasoning_tokens", "audio_tokens"]}),
    "codex": (["input_tokens", "output_tokens", "total_tokens"],
              {"input_tokens_details": ["cached_tokens", "cache_creation_tokens"],
               "output_tokens_details": ["reasoning_tokens"]}),
}
_ODD = [None, 0, 1, 7, 4096, -1, -20, 3.7, -3.7, 0.0, 1e20, 10 ** 25, True, False, "120", "20.5", " 12 ", "",
        "abc", [], {}, [1]]


def _shape_usage(rng, shape):
    """One family's usage with keys missing, null, zero, negative, float, huge or junk, and
    nested details missing, null, empty or partial (no keys of another family)."""
    top, nested = _SHAPES[shape]
    odd = lambda: rng.randint(0, 200000) if rng.random() < 0.5 else rng.choice(_ODD)  # noqa: E731
    keep = 0.85 if rng.random() < 0.7 else 0.4
    usage = {k: odd() for k in top if rng.random() < keep}
    for key, subs in nested.items():
        roll = rng.random()
        if roll < 0.3:
            continue
        usage[key] = rng.choice([None, {}, 0, [], "x"]) if roll < 0.4 else {k: odd() for k in subs if rng.random() < 0.8}
    return usage


def _ambiguous(usage, shape):
    """Usage with no key of its own family reads like another family's: a Responses usage
    stripped of total_tokens and both details is Anthropic-shaped, a Chat usage holding only a
    proxy's cache_*_input_tokens too (they differ only when a negative count is clamped)."""
    shared = {"codex": {"input_tokens", "output_tokens"},
              "openai": {"cache_read_input_tokens", "cache_creation_input_tokens"}}.get(shape)
    return shared is not None and bool(usage) and not usage.keys() - shared


def test_normalize_usage_adversarial_shapes_forced_and_detected_match_hermes():
    """4,500 usages of the three families: forced branch and auto-detected (D9), stage and CLI."""
    from conftest import invoke

    rng = random.Random(43)
    cases = [[_shape_usage(rng, shape), shape] for _ in range(1500) for shape in _SHAPES]
    theirs = hermes(_NS + """
result = [nums(normalize_usage(ns(u), api_mode=MODES[p])) for u, p in data]
""", cases)
    for i, ((usage, shape), expected) in enumerate(zip(cases, theirs)):
        assert [normalize_usage(usage, provider=shape, lenient=True)[k] for k in _KEYS] == expected, (usage, shape)
        if not _ambiguous(usage, shape):
            assert [normalize_usage(usage, lenient=True)[k] for k in _KEYS] == expected, (usage, shape)
        if i < 300:
            forced = invoke(["--quiet", "normalize-usage", "--lenient", "--provider", shape], usage)
            assert forced.status == 0 and [forced.json[k] for k in _KEYS] == expected, (usage, forced.stderr)
            if not _ambiguous(usage, shape):
                detected = invoke(["--quiet", "normalize-usage", "--lenient"], usage)
                assert detected.status == 0 and [detected.json[k] for k in _KEYS] == expected, (usage, detected.stderr)


def _spellings(provider, model):
    """How a price-table row is reached (or missed) through Hermes's routes."""
    out = [(model, provider), (model.upper(), provider), (f" {model} ", provider.upper() + " "), (model, None),
           (model, "together"), (model, "openrouter"), (model, "openai-codex")]
    dotted = model.replace("4-5", "4.5").replace("4-6", "4.6").replace("4-7", "4.7").replace("4-8", "4.8")
    out += {
        "anthropic": [(f"anthropic/{model}", None), (f"anthropic/{dotted}", None), (dotted, "anthropic"),
                      (f"Anthropic/{model}", None), (f"x/{model}", "anthropic"), (model, "bedrock")],
        "openai": [(f"openai/{model}", None), (model, "openai-api"), (f"openai/{model}", "openai")],
        "google": [(f"google/{model}", None), (model, "vertex"), (model, "gemini")],
        "bedrock": [(f"us.{model}-20250929-v1:0", "bedrock"), (f"global.{model}:0", "bedrock"),
                    (f"apac.{dotted}", "bedrock"), (f"eu.{model}-v2", "bedrock")],
        "fireworks": [(f"accounts/fireworks/models/{model}", "fireworks"), (f"accounts/fireworks/routers/{model}", None)],
        "deepseek": [(f"deepseek/{model}", "deepseek"), (model, "DeepSeek")],
        "minimax": [(f"MiniMax/{model}", "minimax"), (model, "minimax-cn")],
        "minimax-cn": [(model, "minimax")],
    }.get(provider, [])
    return out


_BASES = [None, "https://api.fireworks.ai/inference/v1", "http://localhost:8000/v1", "https://openrouter.ai/api/v1",
          "https://us-central1-aiplatform.googleapis.com/v1", "http://LOCALHOST:1", "api.fireworks.ai",
          "https://inference-api.nousresearch.com/v1"]
_COUNTS = [0, 1, 25, 904, 5000, 15000, 25000, 1000000, -1000, 10 ** 12, 10 ** 20, 123457, 7]


def test_cost_every_price_row_many_routes_and_unknown_models_match_hermes():
    """Every key of Hermes's price table, reached through many spellings and routes, plus
    unknown models and base URLs: amount (exact Decimal string), status, source, label,
    version, notes. An unknown price is never 0."""
    rng = random.Random(47)
    keys = hermes("from agent.usage_pricing import _OFFICIAL_DOCS_PRICING as T\nresult = list(T)", None)
    counts = lambda: [rng.choice(_COUNTS) if rng.random() < 0.6 else rng.randint(0, 3000000) for _ in range(4)]  # noqa: E731
    cases = []
    for provider, model in keys:
        for name, route in _spellings(provider, model):
            for _ in range(2):
                usage = counts()
                if rng.random() < 0.4:
                    usage[2:] = [0, 0]
                cases.append([name, route, None, usage])
    names = ["my-model", "claude-sonnet-4-5-20250929", "gpt-5", "", "gpt-4o-2024-08-06", "qwen/qwen3", "a/b/c"]
    for _ in range(600):
        cases.append([rng.choice(names + [m for _, m in keys]),
                      rng.choice([None, "together", "custom", "local", "nous", "openrouter", "anthropic", "openai",
                                  "bedrock", "fireworks", "", "  "]), rng.choice(_BASES), counts()])
    theirs = hermes(_NS + """
from agent.usage_pricing import CanonicalUsage
result = [cost(estimate_usage_cost(m, CanonicalUsage(*u), provider=p, base_url=b)) for m, p, b, u in data]
""", cases)
    priced = set()
    for (model, provider, base, (a, b, c, d)), expected in zip(cases, theirs):
        usage = {"input_tokens": a, "output_tokens": b, "cache_read_tokens": c, "cache_write_tokens": d}
        r = estimate_cost(usage, model, provider=provider, base_url=base)
        assert [r["amount_usd"], r["status"], r["source"], r["label"], r["pricing_version"], r["notes"]] == expected, \
            (model, provider, base, usage)
        if r["status"] == "unknown":
            assert r["amount_usd"] is None and r["label"] == "n/a"
        elif r["source"] == "official_docs_snapshot":
            priced.add((r["route"], r["model"].strip().lower()))
    # every row of the table was priced at least once (through its own key or a normalized name)
    from hermesctx.pricing import billing_route, lookup

    rows = {id(lookup(billing_route(m, p))) for p, m in keys}
    assert {id(lookup(billing_route(m, p))) for p, m in priced} == rows


def test_cli_usage_and_cost_adversarial_match_hermes():
    """`normalize-usage --provider S --model M --billing-provider P [--base-url B]` on adversarial
    usages == normalize_usage then estimate_usage_cost(M, provider=P, base_url=B), for every
    price row."""
    from conftest import invoke

    rng = random.Random(53)
    keys = hermes("from agent.usage_pricing import _OFFICIAL_DOCS_PRICING as T\nresult = list(T)", None)
    cases = []
    for i in range(300):
        shape = rng.choice(list(_SHAPES))
        provider, model = keys[i % len(keys)] if rng.random() < 0.85 else (rng.choice(["together", "anthropic"]), "nope-1")
        cases.append([_shape_usage(rng, shape), shape, model, rng.choice([provider, provider, "", "openai-codex", "bedrock"]),
                      rng.choice([None, None, None, "http://localhost:1/v1", "https://api.fireworks.ai/inference/v1"])])
    theirs = hermes(_NS + """
result = []
for u, s, m, p, b in data:
    c = normalize_usage(ns(u), api_mode=MODES[s])
    result.append(nums(c) + cost(estimate_usage_cost(m, c, provider=p, base_url=b)))
""", cases)
    for (usage, shape, model, provider, base), expected in zip(cases, theirs):
        args = ["--quiet", "normalize-usage", "--lenient", "--provider", shape, "--model", model, "--billing-provider", provider]
        result = invoke(args + (["--base-url", base] if base else []), usage)
        assert result.status == 0, result.stderr
        out, c = result.json, result.json["cost"]
        assert [out[k] for k in _KEYS] + [c["amount_usd"], c["status"], c["source"], c["label"], c["pricing_version"],
                                          c["notes"]] == expected, (usage, args, base)
