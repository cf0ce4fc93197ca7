"""Token counting: Hermes's two character heuristics, exactly, and an exact tiktoken count.

* ``rough_*`` reproduce Hermes 0.19.0's request estimate: the length of
  Python's printed form of each message (``str(dict)``) summed over the list, one ceiling
  division by 4 over the whole list, plus 1,500 per image; system prompt and tool schemas are
  separately rounded parts. Parsed JSON already has Python's key order and value types, so
  ``str()`` of it *is* the text Hermes measures.
* ``tail_tokens`` is the other heuristic, used only to walk the protected tail:
  floor divisions, +10 per message, 1,600 tokens per image.
* ``exact_*`` count with a tiktoken encoding (see :mod:`hermesctx.encodings`); the rule is
  written out in :func:`exact_message_tokens`.
"""

from __future__ import annotations

from hermesctx import lazyre
from hermesctx.jsonio import dumps_like_json
from hermesctx.messages import IMAGE_PART_TYPES, calls_of, content_text, opaque_compaction, part_type

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

IMAGE_TOKENS = 1500  # Hermes's per-image charge in the request estimate
_TAIL_IMAGE_CHARS = 6400  # 1,600 tokens × 4 chars, per image in the tail walk
_REPLAY_KEYS = ("reasoning", "reasoning_content", "reasoning_details",
                "codex_reasoning_items", "codex_message_items")
_STRIPPED = "[stripped]"
_STASH_IMAGE = frozenset({"image"})  # images Hermes counts in ``_anthropic_content_blocks``
_MULTIMODAL_IMAGE = frozenset({"image", "image_url"})  # ... and in ``_multimodal`` content


# --- Hermes's request estimate ------------------------------------------------------------

def rough_text(text: Any) -> int:
    """``ceil(len(text) / 4)``; falsy → 0."""
    if not text:
        return 0
    return (len(text) + 3) // 4


def _is_image(part: Any, kinds: frozenset = IMAGE_PART_TYPES) -> bool:
    """A dict part whose ``type`` is one of ``kinds`` (Hermes raises on a list or object type)."""
    return part_type(part) in kinds


def _shadow(msg: dict) -> dict:
    """The message as Hermes measures it: stash dropped, image parts stubbed."""
    shadow = {}
    for key, value in msg.items():
        if key == "_anthropic_content_blocks":
            continue
        if key == "content":
            if isinstance(value, list):
                value = [
                    {"type": p["type"], "image": _STRIPPED} if _is_image(p) else p
                    for p in value
                ]
            elif isinstance(value, dict) and value.get("_multimodal"):
                value = value.get("text_summary", "")
        shadow[key] = value
    return shadow


_SHORT_TEXT = 128  # a string at most this long is measured by printing it (cheaper than counting)
# bytes.translate(None, _UNREMARKABLE) keeps only the bytes that change the printed length of an
# ASCII string: the ones repr writes with a backslash more (\n \r \t \\), the quotes that decide
# the quoting, and the control characters repr writes as \xNN
_REMARKABLE = b"\n\r\t\\'\"" + bytes(range(0x20)) + b"\x7f"
_UNREMARKABLE = bytes(b for b in range(256) if b not in _REMARKABLE)
_ESCAPED_TWICE = b"\n\r\t\\"
_QUOTES = b"'\""
_ESCAPED_TWICE_OR_QUOTE = _ESCAPED_TWICE + _QUOTES


def message_chars(msg: Any) -> int:
    """Length of the printed form Hermes measures for one message: ``len(str(msg))``, counted
    by :func:`printed_len` without printing."""
    return message_size(msg)[0]


def message_size(msg: Any) -> tuple[int, int]:
    """``(message_chars(msg), image_count(msg))``: what the request estimate needs of one
    message, in one look at its content."""
    if not isinstance(msg, dict):
        return printed_len(msg), 0
    content = msg.get("content")
    if type(content) is str and "_anthropic_content_blocks" not in msg:
        return _repr_form_len(msg), 0  # the usual message: no image anywhere (printed_len)
    if "_anthropic_content_blocks" in msg or _has_image_or_multimodal(content):
        return printed_len(_shadow(msg)), image_count(msg)
    return printed_len(msg), 0


def printed_len(value: Any) -> int:
    """``len(str(value))`` of a parsed JSON value, counted without building the text: Python
    prints a dict as ``{k: v, ...}`` and a list as ``[v, ...]`` (", " and ": " between), every
    string inside them by its repr (:func:`repr_len`), numbers, booleans and None as ``str``
    does. Other values (not from JSON) are printed."""
    return len(value) if type(value) is str else _repr_form_len(value)


def _repr_form_len(value: Any) -> int:
    """``len(repr(value))`` of a JSON value (the form it has inside a printed container).
    Strings, the usual leaves, are measured in the loops: a call per leaf costs more than they
    do."""
    kind = type(value)
    if kind is str:
        return len(repr(value)) if len(value) <= _SHORT_TEXT else repr_len(value)
    if kind is dict:
        total = 4 * len(value) or 2  # braces + ": " per item + ", " between items
        known = _KEY_LENS
        for key, item in value.items():
            if type(key) is str:
                size = known.get(key)
                if size is None:
                    size = len(repr(key)) if len(key) <= _SHORT_TEXT else repr_len(key)
                    if len(known) < _KEYS_KEPT:
                        known[key] = size
                total += size
            else:
                total += _repr_form_len(key)
            if type(item) is str:
                total += len(repr(item)) if len(item) <= _SHORT_TEXT else repr_len(item)
            else:
                total += _repr_form_len(item)
        return total
    if kind is list:
        total = 2 * len(value) or 2  # brackets + ", " between items
        for item in value:
            if type(item) is str:
                total += len(repr(item)) if len(item) <= _SHORT_TEXT else repr_len(item)
            else:
                total += _repr_form_len(item)
        return total
    if kind is bool:
        return 4 if value else 5
    if value is None:
        return 4
    if kind is float:
        return len(repr(value))
    return len(str(value))


# the printed length of each key met (a batch of transcripts uses a few dozen keys, each
# thousands of times); bounded, for input that makes up ever new keys
_KEY_LENS: dict[str, int] = {}
_KEYS_KEPT = 4096


def repr_len(text: str) -> int:
    """``len(repr(text))`` without building the repr. Python prints a string in single quotes
    (double quotes when it holds a ' and no "), doubles backslashes and the escaped quote, writes
    tab, newline and carriage return as two characters, keeps every other printable character
    and escapes the rest (that rare case is measured by printing it)."""
    # (the ASCII case is most of what prune's report line costs. Measured and left: counting
    # the six characters by deleting each with bytes.replace (memchr) and checking orjson's
    # escaped length for other control characters; half the translate's instructions but ~30 %
    # more CPU time, a call per occurrence. len(text.encode("unicode_escape")): ~50 % more.)
    if text.isascii():  # the usual tool output: one copy and one C pass over its bytes
        kept = text.encode("ascii").translate(None, _UNREMARKABLE)
        if not kept:
            return len(text) + 2
        singles, doubles = kept.count(b"'"), kept.count(b'"')
        controls = len(kept.translate(None, _ESCAPED_TWICE_OR_QUOTE))  # each written \xNN
        escaped = len(kept) - singles - doubles - controls
        quotes = singles if singles and doubles else 0
        return len(text) + 2 + escaped + quotes + 3 * controls
    newlines, returns, tabs = text.count("\n"), text.count("\r"), text.count("\t")
    rest = text.replace("\n", "").replace("\r", "").replace("\t", "") if newlines or returns or tabs else text
    if not rest.isprintable():
        return len(repr(text))
    singles = text.count("'")
    escaped_quotes = singles if singles and '"' in text else 0
    return len(text) + 2 + text.count("\\") + newlines + returns + tabs + escaped_quotes


def _has_image_or_multimodal(content: Any) -> bool:
    if isinstance(content, list):
        return any(_is_image(p) for p in content)
    return isinstance(content, dict) and bool(content.get("_multimodal"))


def image_count(msg: Any) -> int:
    """Images Hermes charges for one message (content parts, stash, ``_multimodal`` inner list)."""
    if not isinstance(msg, dict):
        return 0
    count = 0
    content = msg.get("content")
    if isinstance(content, list):
        count += sum(1 for p in content if _is_image(p))
    stash = msg.get("_anthropic_content_blocks")
    if isinstance(stash, list):
        count += sum(1 for p in stash if _is_image(p, _STASH_IMAGE))
    if isinstance(content, dict) and content.get("_multimodal"):
        inner = content.get("content")
        if isinstance(inner, list):
            count += sum(1 for p in inner if _is_image(p, _MULTIMODAL_IMAGE))
    return count


def rough_messages(messages: list, at_least: int | None = None) -> int:
    """Hermes ``estimate_messages_tokens_rough``: one ceiling over the list, plus images.
    ``at_least``: stop measuring once the count reaches it (it only grows): the answer is then
    some figure >= ``at_least``, enough to compare with a minimum."""
    if at_least is None:
        return rough_of_sizes(map(message_size, messages))
    chars = images = 0
    for msg in messages:
        size, count = message_size(msg)
        chars += size
        images += count
        if (chars + 3) // 4 + IMAGE_TOKENS * images >= at_least:
            break
    return (chars + 3) // 4 + IMAGE_TOKENS * images


def rough_of_sizes(sizes: Iterable[tuple[int, int]]) -> int:
    """:func:`rough_messages` from the :func:`message_size` of each message."""
    chars = images = 0
    for size in sizes:
        chars += size[0]
        images += size[1]
    return (chars + 3) // 4 + IMAGE_TOKENS * images


def rough_before_after(before: list, after: list) -> tuple[int, int]:
    """:func:`rough_messages` of a stage's input and output. A stage hands back the messages it
    did not change as the same objects: only the input and what changed are measured."""
    sizes = {id(msg): message_size(msg) for msg in before}
    measured = [sizes[id(msg)] for msg in before]  # (the same object twice in a list: once)
    return rough_of_sizes(measured), rough_of_sizes(
        sizes.get(id(msg)) or message_size(msg) for msg in after)


def rough_saved(before: list, after: list) -> int:
    """About how many rough tokens a stage removed, measured on the messages it changed only:
    a stage that replaces messages in place (``after[i] is before[i]`` where it changed
    nothing) costs one look per unchanged message. Lists of different lengths are measured
    whole. Each side's figure is its own chars // 4 (+ images), so it may differ by one from
    the difference of the two :func:`rough_messages`."""
    if len(before) != len(after):
        return rough_messages(before) - rough_messages(after)
    chars, images = saved_sizes(before, after)
    return chars // 4 + IMAGE_TOKENS * images


def saved_sizes(before: list, after: list) -> tuple[int, int]:
    """The printed characters and the images a stage's rewrites removed from a list of the same
    length (``after[i] is before[i]`` where it changed nothing): :func:`saved_size` summed over
    the messages it replaced."""
    chars = images = 0
    for old, new in zip(before, after):
        if old is not new:
            size = saved_size(old, new)
            chars += size[0]
            images += size[1]
    return chars, images


def saved_size(old: Any, new: Any) -> tuple[int, int]:
    """``message_size(old) - message_size(new)``, item by item: the printed characters and
    the images that rewriting one message removed (what :func:`saved_sizes` sums)."""
    if imageless(old) and imageless(new):
        return printed_diff(old, new), 0  # (both sides: printed_len, no image)
    was, now = message_size(old), message_size(new)
    return was[0] - now[0], was[1] - now[1]


def imageless(msg: Any) -> bool:
    """A message :func:`message_size` measures as ``(printed_len(msg), 0)`` with no shadow:
    a dict without stash whose content holds no image part and is no ``_multimodal`` object
    (an Anthropic turn's blocks included: only the blocks that changed are then measured). A
    rewrite of such a message that leaves it so differs in size by :func:`printed_diff` of
    the values it replaced."""
    if type(msg) is not dict or "_anthropic_content_blocks" in msg:
        return False
    content = msg.get("content")
    kind = type(content)
    return (kind is not list and kind is not dict) or not _has_image_or_multimodal(content)


def printed_diff(old: Any, new: Any) -> int:
    """``_repr_form_len(old) - _repr_form_len(new)``, measuring only what differs: a stage
    hands back what it did not change as the same objects, and a dict's printed length is its
    keys' and values' plus a fixed part per item (a list's the same per item), so two dicts
    with the same keys differ by what their values do. A rewritten tool result costs one
    measure of the old text and of its stub, not of the whole message twice."""
    if old is new:
        return 0
    kind = type(old)
    if kind is type(new):
        if kind is str:  # (a rewritten text, the usual case: no call per side)
            return ((len(repr(old)) if len(old) <= _SHORT_TEXT else repr_len(old))
                    - (len(repr(new)) if len(new) <= _SHORT_TEXT else repr_len(new)))
        if kind is dict and len(old) == len(new) and old.keys() == new.keys():
            total = 0
            for key, value in old.items():
                other = new[key]
                if value is other:
                    continue  # (what was not changed: no call)
                if type(value) is str and type(other) is str:  # (a rewritten text: no call)
                    total += ((len(repr(value)) if len(value) <= _SHORT_TEXT else repr_len(value))
                              - (len(repr(other)) if len(other) <= _SHORT_TEXT else repr_len(other)))
                else:
                    total += printed_diff(value, other)
            return total
        if kind is list and len(old) == len(new):
            return sum(map(printed_diff, old, new))
    return _repr_form_len(old) - _repr_form_len(new)


def rough_tools(tools: Any) -> int:
    """Hermes ``_estimate_tools_tokens_rough``: name + description + compact parameters JSON."""
    if not tools:
        return 0
    chars = 0
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        spec = tool["function"] if isinstance(tool.get("function"), dict) else tool
        name = spec.get("name") or ""
        description = spec.get("description") or ""
        params = spec.get("parameters") or {}
        if isinstance(name, str):
            chars += len(name)
        if isinstance(description, str):
            chars += len(description)
        try:
            chars += len(dumps_like_json(params, ensure_ascii=False, separators=(",", ":")))
        except (TypeError, ValueError):
            chars += len(str(params))
    return (chars + 3) // 4


def rough_request(messages: list, *, system_prompt: str = "", tools: Any = None,
                  at_least: int | None = None) -> int:
    """Hermes ``estimate_request_tokens_rough``: three separately rounded parts (``at_least``:
    see :func:`rough_messages`)."""
    fixed = rough_text(system_prompt) + rough_tools(tools)
    return fixed + rough_messages(messages, None if at_least is None else at_least - fixed)


# --- the tail-walk estimator --------------------------------------------------------------

def _content_len(content: Any) -> int:
    if isinstance(content, str):
        return len(content)
    if not isinstance(content, list):
        return len(str(content or ""))
    total = 0
    for part in content:
        if isinstance(part, str):
            total += len(part)
        elif not isinstance(part, dict):
            total += len(str(part))
        elif _is_image(part):
            total += _TAIL_IMAGE_CHARS
        else:
            text = part.get("text", "") or ""
            # Hermes takes len() of whatever is there: a list or object counts its items or keys
            # (a number would raise in Hermes; it counts as printed here)
            total += len(text) if isinstance(text, (str, list, dict)) else len(str(text))
    return total


def _serialized_len(value: Any) -> int:
    if value is None or value == "":
        return 0
    if isinstance(value, str):
        return len(value)
    try:
        return len(dumps_like_json(value, ensure_ascii=False, sort_keys=True, default=str))
    except (TypeError, ValueError):
        return len(str(value))


def tail_tokens(msg: dict) -> int:
    """Hermes ``_estimate_msg_budget_tokens``: content//4 + 10 + each call's repr//4 + replay fields."""
    content = msg.get("content")
    tokens = (len(content) if type(content) is str else _content_len(content or "")) // 4 + 10
    if "tool_calls" in msg:
        for tc in calls_of(msg):
            if isinstance(tc, dict):
                tokens += _call_chars(tc) // 4
    if not _REPLAY.isdisjoint(msg):  # (the usual message has none: one look, not five)
        for key in _REPLAY_KEYS:
            value = msg.get(key)
            if value is not None:
                tokens += _serialized_len(value) // 4
    return tokens


_REPLAY = frozenset(_REPLAY_KEYS)
# the printed length of a call's fixed parts: {'id': _, 'type': _, 'function': {'name': _,
# 'arguments': _}} (the braces, the five keys' reprs and ": " / ", " between items)
_CALL_FRAME = 4 * 3 + len("'id''type''function'") + 4 * 2 + len("'name''arguments'")


# --- the tail walk over Anthropic blocks ---------------------------------------------------

_BLOCK_KINDS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking"})
_FUNCTION_REPR = len(repr("function"))


def block_tail_tokens(msg: Any) -> int:
    """:func:`tail_tokens` of an Anthropic message as the OpenAI messages it stands for
    (:func:`hermesctx.formats.anthropic.message_to_openai`), so one transcript walks the same
    in either form. Hermes's own rule reads only ``text`` of a content part, so a ``tool_use``
    or ``tool_result`` block would cost nothing whatever its size; here a ``tool_use`` costs
    the printed form of the OpenAI call it is (``input`` as its JSON ``arguments``), each
    ``tool_result`` the tool message it is (its content, text or blocks, + 10), thinking the
    reasoning it is, text and images as Hermes counts them. A message without such blocks is
    :func:`tail_tokens` itself."""
    if type(msg) is not dict:
        return tail_tokens(msg) if isinstance(msg, dict) else 0
    content = msg.get("content")
    if type(content) is not list or not any(part_type(b) in _BLOCK_KINDS for b in content):
        return tail_tokens(msg)
    if msg.get("role") == "assistant":
        return _assistant_block_tokens(content)
    return sum(cost for _, cost in result_units(content))


def result_units(content: list) -> list[tuple[int | None, int]]:
    """A user turn's blocks as the OpenAI messages they stand for, each ``(block index or None,
    tail tokens)``: one ``tool`` message per ``tool_result`` (its content, text or blocks, + 10),
    then one user message for the other blocks (None), as
    :func:`hermesctx.formats.anthropic.message_to_openai` writes them."""
    units: list[tuple[int | None, int]] = []
    chars = 0
    rest = False
    for j, block in enumerate(content):
        if part_type(block) == "tool_result":
            inner = block.get("content")
            units.append((j, (len(inner) if type(inner) is str else _content_len(inner or "")) // 4 + 10))
        else:
            rest = True
            chars += _content_len([block])
    if rest:
        units.append((None, chars // 4 + 10))
    return units


def _assistant_block_tokens(content: list) -> int:
    chars = calls = 0
    thinking: list[str] = []
    signed: list[dict] = []
    for block in content:
        kind = part_type(block)
        if kind == "tool_use":
            calls += _use_chars(block) // 4
        elif kind == "thinking":
            text = block.get("thinking")
            thinking.append(text if isinstance(text, str) else "")
            if block.get("signature"):  # kept as a reasoning detail beside the reasoning text
                signed.append({"type": "thinking", "thinking": thinking[-1], "signature": block["signature"]})
        elif kind == "redacted_thinking":
            if block.get("data"):
                signed.append({"type": "redacted_thinking", "data": block["data"]})
        else:
            chars += _content_len([block])
    tokens = chars // 4 + 10 + calls
    if thinking:
        tokens += len("\n".join(thinking)) // 4
    if signed:
        tokens += _serialized_len(signed) // 4
    return tokens


def _use_chars(block: dict) -> int:
    """The printed length of the OpenAI call a ``tool_use`` block is: ``{'id': _, 'type':
    'function', 'function': {'name': _, 'arguments': <input as JSON>}}``."""
    ident, name = block.get("id", ""), block.get("name", "")
    try:
        args = dumps_like_json(block.get("input", {}), ensure_ascii=False)
    except (TypeError, ValueError):
        args = str(block.get("input"))
    return _CALL_FRAME + _repr_form_len(ident) + _FUNCTION_REPR + _repr_form_len(name) + _repr_form_len(args)


def _call_chars(call: dict) -> int:
    """``len(str(call))``, counted (:func:`printed_len`): a file being written is not printed.
    The usual call (id, type, and a function of name and arguments, all strings) is its frame
    plus its four strings, without the walk of :func:`printed_len`."""
    fn = call.get("function")
    if type(call) is dict and len(call) == 3 and type(fn) is dict and len(fn) == 2:
        ident, kind, name, args = call.get("id"), call.get("type"), fn.get("name"), fn.get("arguments")
        if type(ident) is str and type(kind) is str and type(name) is str and type(args) is str:
            return (_CALL_FRAME + len(repr(ident)) + len(repr(kind))
                    + (len(repr(name)) if len(name) <= _SHORT_TEXT else repr_len(name))
                    + (len(repr(args)) if len(args) <= _SHORT_TEXT else repr_len(args)))
    return printed_len(call)


# --- exact counting ------------------------------------------------------------------------

MESSAGE_OVERHEAD = 3  # per message: start/role/end framing (OpenAI's published chat rule)
NAME_OVERHEAD = 1  # a "name" field costs one more
REPLY_PRIMING = 3  # every reply is primed with three tokens


# tiktoken's byte-pair merge is superlinear in the length of one pre-token (a run its pattern
# never splits: one letter repeated, a run of symbols or of whitespace), and its pattern fails on
# about a million whitespace characters. A text longer than CHUNK_CHARS is therefore counted in
# pieces of at most that many characters, cut where the pattern of o200k_base and cl100k_base
# splits anyway: at a single space between two non-space characters, or between an ASCII letter
# and an ASCII digit. The sum is then exactly tiktoken's count. Only where CHUNK_CHARS / 2
# characters hold no such point (a run with no split point) is the text cut where it stands,
# every RUN_CHARS characters; such a cut can add a token (measured: +30 tokens over 300,000
# random letters, 0.02%; one character repeated or a run of symbols: exact).
CHUNK_CHARS = 8192
RUN_CHARS = 2048
# a split point searched backwards: the window is reversed, so the first match is the last point
_CUT_REVERSED = lazyre.compile(r"\S(?= \S)|[A-Za-z](?=[0-9])|[0-9](?=[A-Za-z])")
_DIGIT = lazyre.compile(r"[0-9]")


def _cut(text: str, low: int, stop: int) -> int | None:
    """The last split point in ``text[low:stop]`` (see :data:`CHUNK_CHARS`), or None."""
    space = text.rfind(" ", low + 1, stop - 1)
    for _ in range(32):  # the common case: a space between words, found at once
        if space <= low:
            break
        if not text[space - 1].isspace() and not text[space + 1].isspace():
            return space
        space = text.rfind(" ", low + 1, space)
    if space <= low and _DIGIT.search(text, low, stop) is None:
        return None  # no space between words and no digit: a run with no split point
    window = text[low:stop][::-1]
    found = _CUT_REVERSED.search(window)
    if found is None:
        return None
    j = found.start()  # before the space of "x y"; between the letter and digit of "a1" / "1a"
    return stop - j - (2 if window[j + 1] == " " else 1)


def text_pieces(text: str, size: int = CHUNK_CHARS, run: int = RUN_CHARS) -> Iterator[str]:
    """``text`` in consecutive pieces of at most ``size`` characters, each cut at the last split
    point of its second half (see :data:`CHUNK_CHARS`), else ``run`` characters long."""
    start, end = 0, len(text)
    while end - start > size:
        cut = _cut(text, start + size // 2, start + size)
        if cut is None:
            cut = start + min(run, size)
        yield text[start:cut]
        start = cut
    yield text[start:]


def exact_text(encoding, text: str) -> int:
    """Tokens of a text; special-token strings are counted as ordinary text. Time and memory
    are linear in the text's length (see :data:`CHUNK_CHARS`)."""
    if not text:
        return 0
    if len(text) <= CHUNK_CHARS:
        return len(encoding.encode(text, disallowed_special=()))
    encode = encoding.encode
    return sum(len(encode(piece, disallowed_special=())) for piece in text_pieces(text))


def exact_message_tokens(encoding, msg: Any) -> int:
    """Tokens of one message under the rule hermesctx documents:

    3 + tokens(role) + tokens(text of content) + 1,500 per image part
    + for each tool call: tokens(name) + tokens(arguments)   (OpenAI ``tool_calls``)
    + tokens(name) + 1 when the message has a ``name``
    + tokens(reasoning text) for ``reasoning``/``reasoning_content`` strings.
    Anthropic blocks count through the text of the content (``tool_use`` as ``name(input)``); an
    OpenAI Responses ``compaction`` item as the tokens of its ``encrypted_content`` (what the
    provider decrypts it into is unknown: its size on the wire stands for it).
    """
    if not isinstance(msg, dict):
        return MESSAGE_OVERHEAD + exact_text(encoding, str(msg))
    content = msg.get("content")
    tokens = MESSAGE_OVERHEAD + exact_text(encoding, str(msg.get("role") or ""))
    tokens += exact_text(encoding, content_text(content))
    tokens += IMAGE_TOKENS * _exact_images(content)
    if isinstance(content, list):
        for part in content:
            if opaque_compaction(part) and isinstance(part["encrypted_content"], str):
                tokens += exact_text(encoding, part["encrypted_content"])
    for tc in calls_of(msg):
        if isinstance(tc, dict) and isinstance(tc.get("function"), dict):
            fn = tc["function"]
            tokens += exact_text(encoding, str(fn.get("name") or ""))
            tokens += exact_text(encoding, str(fn.get("arguments") or ""))
    if isinstance(msg.get("name"), str):
        tokens += exact_text(encoding, msg["name"]) + NAME_OVERHEAD
    for key in ("reasoning", "reasoning_content"):
        if isinstance(msg.get(key), str):
            tokens += exact_text(encoding, msg[key])
    return tokens


def _exact_images(content: Any) -> int:
    if isinstance(content, list):
        return sum(1 for p in content if _is_image(p))
    if isinstance(content, dict) and content.get("_multimodal"):
        return _exact_images(content.get("content"))
    return 0


def exact_tools(encoding, tools: Any) -> int:
    """Tokens of the tool definitions: the compact JSON of each tool's name, description and
    parameters (how schemas reach the model differs by provider; this is the common payload)."""
    if not tools:
        return 0
    total = 0
    for tool in tools:
        if not isinstance(tool, dict):
            continue
        spec = tool["function"] if isinstance(tool.get("function"), dict) else tool
        payload = {k: spec[k] for k in ("name", "description", "parameters", "input_schema")
                   if k in spec}
        total += exact_text(encoding, dumps_like_json(payload, ensure_ascii=False,
                                                 separators=(",", ":"), default=str))
    return total
