"""Anthropic prompt-cache breakpoints, strategy ``system_and_3``.

Hermes's placement: the system prompt at index 0, then the last 3 messages that can carry a
marker (the last 4 when there is no system prompt). Where the marker goes depends on the
content (string → one text part; list → its last element; empty → the message itself) and on
the layout: *envelope* for OpenAI-wire requests (OpenRouter; only content parts count) or
*native* for the Anthropic transport (top-level markers allowed). Unlike Hermes, markers already in the
input are removed first, so a request never carries more than 4 and re-running changes nothing.

Anthropic request bodies (top-level ``system``, content blocks) are marked as Hermes's adapter
would mark them after conversion.
"""

from __future__ import annotations

from hermesctx import tokens
from hermesctx.errors import UsageError
from hermesctx.messages import ANTHROPIC, check_messages, detect_format, messages_of, with_messages
from hermesctx.options import option
from hermesctx.record import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SYSTEM_AND_3 = "system_and_3"
NONE = "none"
STRATEGIES = (SYSTEM_AND_3, NONE)
TTLS = ("5m", "1h")
MAX_BREAKPOINTS = 4

# Minimum cacheable prompt length in tokens (Anthropic's prompt-caching docs); shorter prefixes
# are silently not cached by the API.
_MINIMUM = (("claude-opus-4-5", 4096), ("claude-haiku-4-5", 4096), ("claude-3-5-haiku", 2048),
            ("claude-3-haiku", 2048), ("claude", 1024))


def marker(ttl: str = "5m") -> dict:
    if ttl not in TTLS:
        raise UsageError(f"cache TTL must be 5m or 1h, got {ttl!r}")
    return {"type": "ephemeral", "ttl": "1h"} if ttl == "1h" else {"type": "ephemeral"}


def minimum_cacheable(model: str | None) -> int | None:
    name = (model or "").lower()
    for key, value in _MINIMUM:
        if key in name:
            return value
    return None


# --- removing markers ---------------------------------------------------------------------

def _marked(part: Any) -> bool:
    """A content part holding a marker: its own, or one on a block of a ``tool_result``'s
    content (the API counts those toward the 4 as well)."""
    if not isinstance(part, dict):
        return False
    inner = part.get("content") if part.get("type") == "tool_result" else None
    return "cache_control" in part or isinstance(inner, list) and any(_marked(b) for b in inner)


def _unmark_part(part: Any) -> Any:
    if not _marked(part):
        return part
    out = {k: v for k, v in part.items() if k != "cache_control"}
    if part.get("type") == "tool_result" and isinstance(part.get("content"), list):
        out["content"] = _unmark_parts(part["content"])
    return out


def _unmark_parts(content: Any) -> Any:
    if not isinstance(content, list) or not any(_marked(p) for p in content):
        return content
    return [_unmark_part(p) for p in content]


def unmark_message(msg: dict) -> dict:
    if "cache_control" not in msg and type(msg.get("content")) is str:
        return msg  # the usual message: a string content holds no marker
    content = _unmark_parts(msg.get("content"))
    if content is msg.get("content") and "cache_control" not in msg:
        return msg
    out = {k: v for k, v in msg.items() if k != "cache_control"}
    if "content" in msg:
        out["content"] = content
    return out


def _tool_markers(doc: Any) -> int:
    tools = doc.get("tools") if isinstance(doc, dict) else None
    return sum(isinstance(t, dict) and "cache_control" in t for t in tools) if isinstance(tools, list) else 0


def _part_markers(content: Any, where: str) -> list[str]:
    """Where the markers of a content list are (tool_result contents included)."""
    found = []
    if isinstance(content, list):
        for j, part in enumerate(content):
            if not isinstance(part, dict):
                continue
            if "cache_control" in part:
                found.append(f"{where}[{j}]")
            if part.get("type") == "tool_result":
                found += _part_markers(part.get("content"), f"{where}[{j}].content")
    return found


def message_markers(msg: Any) -> int:
    """How many markers one message holds (its own and its content's)."""
    if not isinstance(msg, dict):
        return 0
    content = msg.get("content")
    found = "cache_control" in msg
    return found if type(content) is str else found + len(_part_markers(content, ""))


def count_markers(messages: list, system: Any = None) -> int:
    return sum(map(message_markers, messages)) + len(_part_markers(system, ""))


def _count_after(before: list, counts: list[int], after: list, system: Any = None) -> int:
    """:func:`count_markers` of ``after``, a list as long as ``before`` whose unchanged messages
    are the same objects: those are not looked at again (``counts``: each one's markers)."""
    if len(after) != len(before):
        return count_markers(after, system)
    return sum(n if new is old else message_markers(new)
               for old, new, n in zip(before, after, counts)) + len(_part_markers(system, ""))


# --- OpenAI-shaped messages (Hermes apply_anthropic_cache_control) -------------------------

def _can_carry(msg: dict, native: bool) -> bool:
    if native:
        return True
    content = msg.get("content")
    if isinstance(content, str):
        return bool(content)
    return isinstance(content, list) and bool(content) and isinstance(content[-1], dict)


def _place(msg: dict, mark: dict, native: bool) -> dict:
    role = msg.get("role")
    content = msg.get("content")
    if role == "tool" and native:
        return {**msg, "cache_control": dict(mark)}
    if content is None or content == "":
        if not native and role in ("tool", "assistant"):
            return msg
        return {**msg, "cache_control": dict(mark)}
    if isinstance(content, str):
        return {**msg, "content": [{"type": "text", "text": content, "cache_control": dict(mark)}]}
    if isinstance(content, list) and content and isinstance(content[-1], dict):
        return {**msg, "content": content[:-1] + [{**content[-1], "cache_control": dict(mark)}]}
    return msg


def _unmarked(messages: list, counts: list[int] | None) -> list:
    """Every message without its markers; ``counts`` (each one's :func:`message_markers`, when
    known) spares looking again at the messages that hold none (given back as they are)."""
    if counts is None:
        return [unmark_message(m) for m in messages]
    return [unmark_message(m) if n else m for m, n in zip(messages, counts)]


def mark_messages(messages: list, *, ttl: str = "5m", native: bool = False,
                  strategy: str = SYSTEM_AND_3, counts: list[int] | None = None) -> tuple[list, list[int]]:
    """``(new_list, marked_indexes)`` for OpenAI-shaped messages (``counts``: see
    :func:`_unmarked`)."""
    mark = marker(ttl)
    out = _unmarked(messages, counts)
    if strategy == NONE or not out:
        return out, []
    chosen = []
    if out[0].get("role") == "system":
        chosen.append(0)
    slots = MAX_BREAKPOINTS - len(chosen)
    carriers: list[int] = []  # the last `slots` messages that can carry one, found from the end
    for i in range(len(out) - 1, -1, -1):
        if len(carriers) == slots:
            break
        m = out[i]
        if m.get("role") != "system" and _can_carry(m, native):
            carriers.append(i)
    chosen += reversed(carriers)
    for i in chosen:
        out[i] = _place(out[i], mark, native)
    return out, chosen


# --- Anthropic request bodies (A.9) --------------------------------------------------------

def _units(messages: list) -> list[tuple[int, int | None]]:
    """Markable units in order: ``(message index, block index)``; block None = the message
    (a string content) and -1 = nowhere (an empty message wastes its slot, as in Hermes)."""
    units: list[tuple[int, int | None]] = []
    for i, msg in enumerate(messages):
        content = msg.get("content")
        if isinstance(content, str):
            units.append((i, None if content else -1))
            continue
        if not isinstance(content, list) or not content:
            units.append((i, -1))
            continue
        blocks = [(j, b) for j, b in enumerate(content) if isinstance(b, dict)]
        results = [j for j, b in blocks if b.get("type") == "tool_result"]
        units += [(i, j) for j in results]
        rest = [(j, b) for j, b in blocks if b.get("type") not in ("tool_result", "thinking", "redacted_thinking")]
        if msg.get("role") == "assistant":
            texts = [j for j, b in rest if b.get("type") == "text"]
            if texts:
                units.append((i, texts[-1]))
            elif rest:
                units.append((i, rest[-1][0]))
        elif rest:
            units.append((i, rest[-1][0]))
        elif not results:
            units.append((i, -1))
    return units


def _mark_block(msg: dict, j: int | None, mark: dict) -> dict:
    if j == -1:
        return msg
    if j is None:
        return {**msg, "content": [{"type": "text", "text": msg["content"], "cache_control": dict(mark)}]}
    content = list(msg["content"])
    content[j] = {**content[j], "cache_control": dict(mark)}
    return {**msg, "content": content}


def mark_anthropic(body: dict, *, ttl: str = "5m", strategy: str = SYSTEM_AND_3,
                   counts: list[int] | None = None) -> tuple[dict, list]:
    mark = marker(ttl)
    messages = _unmarked(body["messages"], counts)
    out = dict(body)
    if isinstance(body.get("tools"), list):
        out["tools"] = _unmark_parts(body["tools"])  # a tool definition can hold a breakpoint too
    system = body.get("system")
    if isinstance(system, list):
        system = _unmark_parts(system)
    placed: list = []
    if strategy == SYSTEM_AND_3:
        if isinstance(system, str) and system:
            system = [{"type": "text", "text": system, "cache_control": dict(mark)}]
            placed.append("system")
        elif isinstance(system, list) and system and isinstance(system[-1], dict):
            system = system[:-1] + [{**system[-1], "cache_control": dict(mark)}]
            placed.append("system")
        slots = MAX_BREAKPOINTS - len(placed) if system else MAX_BREAKPOINTS
        for i, j in _units(messages)[-slots:]:
            messages[i] = _mark_block(messages[i], j, mark)
            if j != -1:
                placed.append(i)
    if "system" in body:
        out["system"] = system
    out["messages"] = messages
    return out, placed


# --- the stage ----------------------------------------------------------------------------

def _is_anthropic_body(doc: Any, messages: list) -> bool:
    """An object with a top-level ``system``, or with Anthropic-only blocks and nothing an
    Anthropic body cannot hold (roles other than user/assistant, empty or odd contents,
    ``image_url`` or non-object parts, a block in the wrong role's message). A bare array is
    always OpenAI-shaped messages."""
    if not isinstance(doc, dict):
        return False
    if "system" in doc:
        return True
    wrong = {"user": ("tool_use", "thinking", "redacted_thinking", "image_url"),
             "assistant": ("tool_result", "image_url")}

    def fits(msg: dict) -> bool:
        content, role = msg.get("content"), msg.get("role")
        if not isinstance(role, str) or role not in wrong:
            return False
        if isinstance(content, list):
            return all(isinstance(p, dict) and p.get("type") not in wrong[role] for p in content)
        return isinstance(content, str)

    return detect_format(messages) == ANTHROPIC and all(fits(m) for m in messages)


def cache_mark(doc: Any, *, ttl: str = "5m", native: bool = False, strategy: str = SYSTEM_AND_3,
               model: str | None = None, exact_prefix: bool = True) -> tuple[Any, dict]:
    """The ``cache-mark`` stage: ``(new_doc, report)``. ``exact_prefix=False``: the prefix is
    measured only as far as the model's minimum (enough for the warning; the report then has
    no ``cached_prefix_tokens``): for a caller whose report goes nowhere but a human line."""
    if strategy not in STRATEGIES:
        raise UsageError(f"unknown strategy {strategy!r} (choose from {', '.join(STRATEGIES)})")
    messages = messages_of(doc)
    check_messages(messages)
    counts = [message_markers(m) for m in messages]
    removed = sum(counts) + len(_part_markers(doc.get("system") if isinstance(doc, dict) else None, ""))
    if _is_anthropic_body(doc, messages):
        removed += _tool_markers(doc)
        out, placed = mark_anthropic({**doc, "messages": messages}, ttl=ttl, strategy=strategy,
                                     counts=counts)
        layout = "anthropic"
    else:
        new, placed = mark_messages(messages, ttl=ttl, native=native, strategy=strategy, counts=counts)
        out = with_messages(doc, new)
        layout = "native" if native else "envelope"
    report = {"layout": layout, "strategy": strategy, "ttl": ttl, "breakpoints": placed,
              "removed": removed,
              "markers": _count_after(messages, counts, messages_of(out),
                                      out.get("system") if isinstance(out, dict) else None)
              + (_tool_markers(out) if layout == "anthropic" else 0)}
    minimum = minimum_cacheable(model)
    if minimum and placed:
        size = prefix_tokens(doc, messages, placed[-1], None if exact_prefix else minimum)
        if exact_prefix:
            report["cached_prefix_tokens"] = size
        report["minimum_cacheable_tokens"] = minimum
        if size < minimum:
            report["warning"] = (f"the cached prefix is ~{size:,} tokens, under the {minimum:,}-token "
                                 f"minimum of {model}: the API will not cache it")
    return out, report


def _system_text(system: Any) -> str:
    if isinstance(system, str):
        return system
    if isinstance(system, list):
        return "\n".join(b.get("text") or "" for b in system if isinstance(b, dict))
    return ""


def prefix_tokens(doc: Any, messages: list, last: Any, at_least: int | None = None) -> int:
    """Rough size of the request prefix up to breakpoint ``last`` (a message index or
    ``"system"``): tools, then the system prompt, then the messages, as the API caches them
    (``at_least``: see :func:`hermesctx.tokens.rough_messages`)."""
    system = doc.get("system") if isinstance(doc, dict) else None
    tools = doc.get("tools") if isinstance(doc, dict) else None
    if last == "tools":
        return tokens.rough_request([], tools=tools or None)
    prefix = [] if last == "system" else messages[:last + 1]
    return tokens.rough_request(prefix, system_prompt=_system_text(system), tools=tools or None,
                                at_least=at_least)


def describe(report: dict) -> str:
    where = ", ".join(str(b) for b in report["breakpoints"]) or "none"
    extra = f", {report['removed']} old markers removed" if report["removed"] else ""
    if report.get("warning"):
        extra += f"; warning: {report['warning']}"
    return f"{len(report['breakpoints'])} breakpoints ({report['layout']}, {report['ttl']}) at {where}{extra}"


# --- --check: where the breakpoints are, and what a previous request shares -----------------

def find_breakpoints(doc: Any) -> list[dict]:
    """Every ``cache_control`` in a document: ``{"message": i | "system", "where": ...}``."""
    found = []
    tools = doc.get("tools") if isinstance(doc, dict) else None
    if isinstance(tools, list):
        found += [{"message": "tools", "where": f"tools[{j}]"} for j, t in enumerate(tools)
                  if isinstance(t, dict) and "cache_control" in t]
    system = doc.get("system") if isinstance(doc, dict) else None
    found += [{"message": "system", "where": where} for where in _part_markers(system, "system")]
    for i, msg in enumerate(messages_of(doc)):
        if not isinstance(msg, dict):
            continue
        found += [{"message": i, "where": where}
                  for where in _part_markers(msg.get("content"), f"messages[{i}].content")]
        if "cache_control" in msg:
            found.append({"message": i, "where": f"messages[{i}]"})
    return found


def _canonical(value: Any) -> str:
    from hermesctx.jsonio import dumps_like_json

    return dumps_like_json(value, sort_keys=True, ensure_ascii=False, default=str)


def _as_blocks(msg: Any) -> Any:
    """A message as the API sees it for caching: no markers, string content as one text block."""
    if not isinstance(msg, dict):
        return msg
    msg = unmark_message(msg)
    if isinstance(msg.get("content"), str) and msg["content"]:
        msg = {**msg, "content": [{"type": "text", "text": msg["content"]}]}
    return msg


def check(doc: Any, previous: Any = None) -> dict:
    """Breakpoints of ``doc`` and, against ``previous``, which of their prefixes are unchanged
    (ignoring the markers themselves): those are the cache hits the next request can get."""
    messages = messages_of(doc)
    check_messages(messages)
    points = find_breakpoints(doc)
    report: dict = {"breakpoints": points, "count": len(points), "limit": MAX_BREAKPOINTS,
                    "over_limit": len(points) > MAX_BREAKPOINTS}
    if previous is None:
        return report
    before = messages_of(previous)
    check_messages(before)

    def head(d):
        if not isinstance(d, dict):
            return ["", ""]
        system = d.get("system")
        system = _unmark_parts(system) if isinstance(system, list) else system
        if isinstance(system, str) and system:
            system = [{"type": "text", "text": system}]  # what the API caches for a string
        tools = d.get("tools")
        tools = _unmark_parts(tools) if isinstance(tools, list) else tools
        return [_canonical(tools), _canonical(system)]

    same_head = head(doc) == head(previous)
    stable = 0
    if same_head:
        for a, b in zip(messages, before):
            if _canonical(_as_blocks(a)) != _canonical(_as_blocks(b)):
                break
            stable += 1
    report["stable_messages"] = stable
    report["system_and_tools_stable"] = same_head
    hit_tokens = 0
    for point in points:
        i = point["message"]
        point["prefix_stable"] = same_head and (i in ("tools", "system") or i < stable)
        point["prefix_tokens"] = prefix_tokens(doc, messages, i)
        if point["prefix_stable"]:
            hit_tokens = max(hit_tokens, point["prefix_tokens"])
    report["cache_hit_tokens"] = hit_tokens
    report["request_tokens"] = prefix_tokens(doc, messages, len(messages) - 1)
    if stable < min(len(messages), len(before)) or not same_head:
        first = "system/tools" if not same_head else f"messages[{stable}]"
        report["first_difference"] = first
    return report


@record(frozen=True)
class Options:
    ttl: str | None = option(flag="--ttl", metavar="5m|1h", key="prompt_caching.cache_ttl",
                             help="Cache lifetime (default 5m, config prompt_caching.cache_ttl); "
                                  "anything else is an error.")
    strategy: str = option(SYSTEM_AND_3, flag="--strategy", choices=STRATEGIES, show_default=True,
                           help="system_and_3: the system prompt and the last 3 messages; none: remove "
                                "every marker.")
    native: bool = option(False, flag="--native-anthropic", kind=bool,
                          help="Native Anthropic layout for OpenAI-shaped messages (top-level markers; "
                               "default: the OpenRouter envelope layout). Anthropic request bodies are "
                               "always native.")
    model: str | None = option(flag="--model", short="-m",
                               help="Model the request is for: warn when the cached prefix is under its "
                                    "minimum (default: the request's own model).")


def build(options: Options, ctx):
    """The stage as a function of one document, ``doc -> (doc, report)``. A bad TTL is a usage
    error here, before any input is read."""
    from hermesctx.options import flags

    ttl = ctx.settings_with(flags(options))["prompt_caching.cache_ttl"]
    marker(ttl)
    strategy = options.strategy or SYSTEM_AND_3

    def run(doc):
        from hermesctx.wire import send

        # the breakpoints go on the request as it is sent (as Hermes marks the messages it
        # sends), never on a message or block the send path then drops; what that changed is
        # the report's "wire" (warned, with the document's line, where the output is written)
        wire: dict = {}
        doc = send.request(doc, detect_format(doc), wire)
        own = doc.get("model") if isinstance(doc, dict) and isinstance(doc.get("model"), str) else None
        # the exact cached-prefix size is for the JSON reports; the line on stderr needs to
        # know only whether the prefix is under the model's minimum
        out, rep = cache_mark(doc, ttl=ttl, native=bool(options.native), strategy=strategy,
                              model=options.model or own, exact_prefix=ctx.json_reports)
        return out, ({**rep, "wire": wire} if wire and isinstance(rep, dict) else rep)

    return run


def checker(previous: Any = None, *, against: bool = False, pretty: bool = False):
    """``cache-mark --check [--against previous]`` on one document, for
    :func:`hermesctx.transcripts.report_each`: the report as JSON; failed when over 4
    breakpoints, or (``against`` a previous request) when no prefix is shared."""
    from hermesctx import jsonio

    def run(doc):
        result = check(doc.data, previous)
        failed = result["over_limit"] or (against and not result["cache_hit_tokens"])
        return jsonio.dumps(result, pretty=pretty), None, failed

    return run
