"""replay: what a context policy would have cost on recorded sessions, with the prompt cache
as the provider bills it.

A session log is read into a stream of events: *units* (one OpenAI message each, appended to
a thread's transcript), *requests* (one API call: its timestamp, model and the usage the log
recorded) and *compactions* (the log's own, which start its transcript again). A policy walks
that stream the way an agent sends requests: request *k* is the thread's transcript up to *k*
(plus the thread's system prompt and tools, one *overhead* unit), compacted by the policy when
it is over the threshold; every request is billed by :class:`CacheModel`.

Sizes. The prompt a log records per request fixes what each unit weighs: the growth between
two requests is shared by the units appended between them (in proportion to their o200k
counts), the first request's remainder is the thread's overhead (system prompt and tools,
which no log holds). Units no recorded request measured (a summary a policy writes) are
counted with o200k times the session's measured ratio. A log without usage is counted with
o200k alone. Each unit is counted once, when it is read: a request costs a hash lookup per
cache candidate, never a re-count of its prefix.

Cache rules. Anthropic (explicit markers): a request reads the longest prefix that an earlier
request wrote at one of its breakpoints and that is still alive (the lookup walks back up to
20 blocks from each of this request's breakpoints), writes from there to its last breakpoint
(nothing under the model's minimum cacheable length), and bills the rest as input; a read
refreshes the entry; entries live 5 minutes, or 1 hour when the log recorded 1-hour writes or
the policy says ``1h``, measured on the log's own timestamps. OpenAI (automatic): the longest
prefix of an earlier prompt still alive, in 128-token steps from 1,024, is read; nothing is
billed for writing. The summary call a compaction makes is a request of its own (its prompt
uncached, its summary as output), priced at the summary model.
"""

from __future__ import annotations

from decimal import Decimal
from functools import lru_cache

from hermesctx.cost import ANTHROPIC, OPENAI, SUMMARY_PROMPT_TOKENS, Pricer, compaction_cost, gate
from hermesctx.record import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from typing import Any

TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}
OPENAI_TTL = 600.0  # "5 to 10 minutes of inactivity" (OpenAI's prompt caching guide)
OPENAI_STEP, OPENAI_MIN = 128, 1024
LOOKBACK = 20  # blocks Anthropic checks before each breakpoint
BUCKETS = ("input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens")


# --- the session as events ------------------------------------------------------------------

class Unit:
    """One message of a thread's transcript: its content key (equal content, equal key), its
    o200k count and its weight in the provider's tokens (set by :func:`calibrate`)."""

    __slots__ = ("msg", "key", "estimate", "tokens", "artifact")

    def __init__(self, msg: dict, estimate: int, key: int | None = None, artifact: bool = False):
        self.msg = msg
        self.key = key if key is not None else _content_key(msg)
        self.estimate = estimate
        self.tokens: float | None = None
        self.artifact = artifact  # written by the log's own compaction: only its policy sends it


@record
class Request:
    thread: str
    time: float | None  # seconds since the epoch, from the log (when the reply was logged)
    model: str | None
    usage: dict | None  # recorded: input_tokens (uncached), cache_read_tokens, cache_write_tokens, output_tokens
    ttl: str | None = None  # "1h" when the log recorded 1-hour cache writes
    prompt: int | None = None  # the recorded prompt (input + cache read + cache write)
    edit: Unit | None = None  # the first unit the agent changed before sending it (see find_edits)
    truncate: float | None = None  # the log's agent sent only this much of the transcript
    extra: float | None = None  # ... or this much more than it shows
    start: float | None = None  # when it was sent: the thread's last event before it


@record
class Session:
    name: str
    source: str  # the log's format
    provider: str  # whose cache rules bill it
    events: list = field(default_factory=list)  # ("unit", thread, Unit) | ("request", Request) | ("compact", thread)
    overhead: dict = field(default_factory=dict)  # thread -> Unit (system prompt and tools)
    ratio: float = 1.0  # provider tokens per o200k token, measured on the log
    warnings: list = field(default_factory=list)

    @property
    def requests(self) -> list[Request]:
        return [e[1] for e in self.events if e[0] == "request"]

    @property
    def model(self) -> str | None:
        """The model of most of the main thread's requests (its window sets the budgets)."""
        weight: dict[str, int] = {}
        for main in (True, False):
            for r in self.requests:
                if r.model and (r.thread == "main") == main:
                    weight[r.model] = weight.get(r.model, 0) + (r.prompt or 1)
            if weight:
                break
        return max(weight, key=weight.get) if weight else None

    @property
    def recorded(self) -> bool:
        return any(r.usage is not None for r in self.requests)


def _content_key(msg: dict) -> int:
    import orjson

    return hash(orjson.dumps(msg, option=orjson.OPT_SORT_KEYS, default=str))


class Counter:
    """o200k counts of messages (the same encoder ``estimate`` uses), one count per message."""

    def __init__(self):
        from hermesctx.encodings import get_encoding

        self.encoding = get_encoding("o200k_base")

    def __call__(self, msg: dict) -> int:
        from hermesctx.tokens import exact_message_tokens

        return exact_message_tokens(self.encoding, msg)


def _time(value: Any) -> float | None:
    if not isinstance(value, str) or not value:
        return None
    from datetime import datetime

    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


class _Builder:
    """Folds a log's messages into units: an assistant reply (every content block of one API
    message) and the tool results that answer it become units when the next request starts, so
    a request's prefix never changes afterwards."""

    def __init__(self, session: Session, count: Callable[[dict], int]):
        self.session = session
        self.count = count
        self.pending: dict[str, list] = {}  # thread -> [(msg, artifact)] not yet units

    def add(self, thread: str, msg: dict, artifact: bool = False) -> None:
        self.pending.setdefault(thread, []).append((msg, artifact))

    def flush(self, thread: str) -> None:
        for msg, artifact in _fold(self.pending.pop(thread, [])):
            self.session.events.append(("unit", thread, Unit(msg, self.count(msg), artifact=artifact)))

    def request(self, req: Request) -> None:
        self.flush(req.thread)
        self.session.events.append(("request", req))

    def compact(self, thread: str) -> None:
        self.pending.pop(thread, None)
        self.session.events.append(("compact", thread))

    def close(self) -> None:
        for thread in list(self.pending):
            self.flush(thread)


def _fold(items: list) -> Iterator[tuple[dict, bool]]:
    """Consecutive assistant parts merge into one assistant message (text, reasoning, tool
    calls); everything else passes as it is."""
    open_msg: dict | None = None
    artifact = False
    for msg, art in items:
        if msg.get("role") == "assistant":
            if open_msg is None:
                open_msg, artifact = {"role": "assistant", "content": None}, art
            _merge(open_msg, msg)
            continue
        if open_msg is not None:
            yield open_msg, artifact
            open_msg = None
        yield msg, art
    if open_msg is not None:
        yield open_msg, artifact


def _merge(into: dict, part: dict) -> None:
    text = part.get("content")
    if isinstance(text, list):
        from hermesctx.messages import content_text

        text = content_text(text)
    if text:
        into["content"] = (into["content"] + "\n" + text) if into["content"] else text
    if part.get("tool_calls"):
        into.setdefault("tool_calls", []).extend(part["tool_calls"])
    for key in ("reasoning_content", "reasoning"):
        if part.get(key):
            into[key] = (into.get(key) or "") + str(part[key])
    if part.get("reasoning_details"):  # signed thinking: what clearing it removes
        into.setdefault("reasoning_details", []).extend(part["reasoning_details"])


def _claude_code(lines: Iterable[Any], session: Session, count: Callable[[dict], int]) -> None:
    from hermesctx.formats import anthropic

    build = _Builder(session, count)
    seen: set = set()
    usage_of: dict = {}  # message id -> its Request (later entries of the reply update usage)
    lost: dict = {}
    last_time: dict = {}  # thread -> time of its last user event (when its next request is sent)
    chains: dict = {}  # uuid -> thread of a sidechain event (1.0.x inline subagents have no agentId)
    for event in lines:
        if not isinstance(event, dict):
            continue
        kind = event.get("type")
        thread = "main"
        if event.get("isSidechain"):
            thread = str(event.get("agentId") or chains.get(event.get("parentUuid")) or f"agent-{event.get('uuid')}")
            if event.get("uuid"):
                chains[event["uuid"]] = thread
        if kind == "system" and event.get("subtype") == "compact_boundary":
            build.compact(thread)
            continue
        if kind not in ("user", "assistant"):
            continue
        message = event.get("message")
        if not isinstance(message, dict):
            continue
        if kind == "assistant":
            msg_id = message.get("id")
            usage = message.get("usage") if isinstance(message.get("usage"), dict) else None
            synthetic = message.get("model") == "<synthetic>" or event.get("isApiErrorMessage")
            if msg_id not in seen and not synthetic:
                seen.add(msg_id)
                req = Request(thread=thread, time=_time(event.get("timestamp")), model=message.get("model"),
                              usage=None, start=last_time.get(thread))
                build.request(req)
                usage_of[msg_id] = req
            if usage is not None and msg_id in usage_of:
                _anthropic_usage(usage_of[msg_id], usage)
            for msg in anthropic.message_to_openai({"role": "assistant", "content": message.get("content", "")}, lost):
                build.add(thread, msg)
        else:
            last_time[thread] = _time(event.get("timestamp"))
            artifact = bool(event.get("isCompactSummary"))
            for msg in anthropic.message_to_openai({"role": "user", "content": message.get("content", "")}, lost):
                build.add(thread, msg, artifact)
    build.close()


def _anthropic_usage(req: Request, usage: dict) -> None:
    fresh, read, write = (_int(usage.get(k)) for k in
                          ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"))
    split = usage.get("cache_creation") if isinstance(usage.get("cache_creation"), dict) else {}
    req.usage = {"input_tokens": fresh, "cache_read_tokens": read, "cache_write_tokens": write,
                 "output_tokens": _int(usage.get("output_tokens"))}
    req.prompt = fresh + read + write
    req.ttl = "1h" if _int(split.get("ephemeral_1h_input_tokens")) else "5m"


_CODEX_OUTPUTS = frozenset({"reasoning", "function_call", "custom_tool_call", "local_shell_call",
                            "web_search_call"})


def _codex_message(item: dict) -> dict | None:
    """A Codex response item as an OpenAI message (None: not sent to the model)."""
    kind = item.get("type")
    if kind == "message":
        role = item.get("role")
        parts = item.get("content")
        text = "".join(p.get("text", "") for p in parts if isinstance(p, dict)) if isinstance(parts, list) else str(parts or "")
        return {"role": "assistant" if role == "assistant" else "user", "content": text}
    if kind == "reasoning":
        summary = item.get("summary")
        text = "".join(p.get("text", "") for p in summary if isinstance(p, dict)) if isinstance(summary, list) else ""
        # (its encrypted form goes back with the request too: the recorded growth weighs it)
        return {"role": "assistant", "content": None, "reasoning_content": text}
    if kind in ("function_call", "custom_tool_call", "local_shell_call"):
        args = item.get("arguments", item.get("input", item.get("action", "")))
        import orjson

        args = args if isinstance(args, str) else orjson.dumps(args, default=str).decode()
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": str(item.get("call_id") or item.get("id") or ""), "type": "function",
             "function": {"name": str(item.get("name") or kind), "arguments": args}}]}
    if kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
        out = item.get("output")
        if isinstance(out, dict):
            out = out.get("content", out)
        if not isinstance(out, str):
            import orjson

            out = orjson.dumps(out, default=str).decode()
        return {"role": "tool", "tool_call_id": str(item.get("call_id") or ""), "content": out}
    if kind == "web_search_call":
        return {"role": "assistant", "content": str(item.get("action") or "")}
    return None


def _codex_usage(payload: dict) -> tuple[dict | None, Any]:
    """A Codex event's usage of one call and the running total it carries (to skip a count
    logged twice): ``token_count``'s ``last_token_usage``, its 0.50 form (``prompt``,
    ``completion``), or a legacy ``turn.completed`` event's ``usage``."""
    if payload.get("type") == "turn.completed":
        usage = payload.get("usage")
        return (usage, None) if isinstance(usage, dict) else (None, None)
    info = payload.get("info")
    if not isinstance(info, dict):
        return None, None
    if isinstance(info.get("last_token_usage"), dict):
        return info["last_token_usage"], info.get("total_token_usage")
    if "prompt" in info or "completion" in info:
        return {"input_tokens": info.get("prompt"), "output_tokens": info.get("completion")}, None
    return None, None


def _codex(lines: Iterable[Any], session: Session, count: Callable[[dict], int]) -> None:
    build = _Builder(session, count)
    model: str | None = None
    last_total = None
    in_output = False
    start: Request | None = None  # the request whose outputs are being read
    for event in lines:
        if not isinstance(event, dict):
            continue
        kind, payload = event.get("type"), event.get("payload")
        if not isinstance(payload, dict):
            continue
        when = _time(event.get("timestamp"))
        if kind == "turn_context":
            model = payload.get("model") or model
        elif kind == "session_meta":
            model = payload.get("model") or model
        elif kind == "compacted":
            build.compact("main")
            for item in payload.get("replacement_history") or ():
                msg = _codex_message(item) if isinstance(item, dict) else None
                if msg is not None:
                    build.add("main", msg, artifact=True)
            if payload.get("message"):
                build.add("main", {"role": "user", "content": payload["message"]}, artifact=True)
            in_output = False
        elif kind == "response_item":
            msg = _codex_message(payload)
            if msg is None:
                continue
            output = payload.get("type") in _CODEX_OUTPUTS or msg["role"] == "assistant"
            if output and not in_output:  # a response starts: its request is the transcript so far
                start = Request(thread="main", time=when, model=model, usage=None)
                build.request(start)
            in_output = output
            build.add("main", msg)
        elif kind == "event_msg" and payload.get("type") in ("token_count", "turn.completed"):
            last, total = _codex_usage(payload)
            if last is None:
                continue
            if total is not None and total == last_total:
                continue  # the same count logged again
            last_total = total
            if start is None or start.usage is not None:  # a call with no item of its own
                start = Request(thread="main", time=when, model=model, usage=None)
                build.request(start)
            prompt, read = _int(last.get("input_tokens")), _int(last.get("cached_input_tokens"))
            start.usage = {"input_tokens": max(prompt - read, 0), "cache_read_tokens": read,
                           "cache_write_tokens": 0, "output_tokens": _int(last.get("output_tokens"))}
            start.prompt = prompt
            if start.model is None:
                start.model = model
            in_output = False
    build.close()
    for req in session.requests:  # the model named after the first call
        if req.model is None:
            req.model = model


def _plain(doc: Any, session: Session, count: Callable[[dict], int]) -> None:
    """A transcript without usage: a request before every assistant message."""
    from hermesctx.messages import messages_of

    build = _Builder(session, count)
    model = doc.get("model") if isinstance(doc, dict) and isinstance(doc.get("model"), str) else None
    for msg in messages_of(doc):
        if not isinstance(msg, dict):
            continue
        if msg.get("role") == "system":
            session.overhead["main"] = Unit(msg, count(msg))
            continue
        if msg.get("role") == "assistant":
            build.request(Request(thread="main", time=None, model=model, usage=None))
            build.session.events.append(("unit", "main", Unit(msg, count(msg))))
            continue
        build.add("main", msg)
    build.close()


def _lines(path: str) -> Iterator[Any]:
    import gzip

    import orjson

    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as fh:
        for raw in fh:
            raw = raw.strip()
            if raw:
                try:
                    yield orjson.loads(raw)
                except orjson.JSONDecodeError:
                    continue


def read_session(path: str, count: Callable[[dict], int] | None = None) -> Session:
    """The first (usually the only) session of :func:`read_sessions`."""
    return read_sessions(path, count)[0]


def read_sessions(path: str, count: Callable[[dict], int] | None = None) -> list[Session]:
    """A log file as :class:`Session` objects: a Claude Code or Codex log is one, with its
    recorded usage; any other file hermesctx reads gives one per transcript (a batch of
    trajectories, one per line: ``NAME#LINE``), without usage."""
    import os

    from hermesctx.errors import InputError

    count = count or Counter()
    name = os.path.basename(path)
    first = next(iter(_lines(path)), None)
    if isinstance(first, dict) and first.get("type") in ("session_meta", "turn_context", "response_item", "event_msg") \
            and "payload" in first:
        session = Session(name=name, source="codex", provider=OPENAI)
        _codex(_lines(path), session, count)
        sessions = [session]
    elif isinstance(first, dict) and _is_claude_code(path):
        session = Session(name=name, source="claude-code", provider=ANTHROPIC)
        _claude_code(_lines(path), session, count)
        sessions = [session]
    else:
        import gzip

        from hermesctx import formats

        sessions = []
        with (gzip.open if path.endswith(".gz") else open)(path, "rb") as fh:
            for doc in formats.documents(fh):
                source = doc.info.get("format") or "openai"
                data = formats.to_openai(doc.data, source, {}) if source == "anthropic" else doc.data
                label = name if doc.line is None else f"{name}#{doc.line}"
                sessions.append(Session(name=label, source=source, provider=ANTHROPIC))
                _plain(data, sessions[-1], count)
        if not sessions:
            raise InputError(f"{path}: no transcript")
    for session in sessions:
        if session.requests:  # (nothing to replay otherwise: said by run)
            calibrate(session)
            find_edits(session)
    return sessions


def _is_claude_code(path: str) -> bool:
    from hermesctx.formats import claude_code

    for event in _lines(path):
        if isinstance(event, dict) and event.get("type") in ("user", "assistant", "system"):
            return claude_code.detect(event)
    return False


# --- sizes ------------------------------------------------------------------------------------

def calibrate(session: Session) -> None:
    """Give every unit its weight in provider tokens from the prompts the log recorded (see the
    module's docstring), and every thread its overhead. A request whose recorded prompt is
    shorter than its transcript (the agent sent less than the log shows: a fork, a trimmed
    turn) keeps its recorded size as ``truncate``; one that is longer with nothing new to
    weigh keeps the difference as ``extra``."""
    ratio = None
    for _ in range(2):  # the first pass measures the ratio the second uses for unmeasured units
        measured = _measure(session, ratio)
        est = sum(u.estimate for us, g in measured if g > 0 for u in us)
        ratio = sum(g for _, g in measured if g > 0) / est if est else 1.0
        session.ratio = ratio = min(max(ratio, 0.5), 3.0)
    for units, growth in measured:
        share = growth / sum(u.estimate for u in units) if growth > 0 else ratio
        for unit in units:
            unit.tokens = unit.estimate * share
    size: dict[str, float] = {}
    recorded = session.recorded
    for event in session.events:
        if event[0] == "compact":
            size.pop(event[1], None)
        elif event[0] == "request":
            req = event[1]
            if req.thread in size or (req.prompt is None and recorded):
                continue
            size[req.thread] = 0.0
            units = _first_units(session, req)
            weight = sum(u.estimate for u in units) * ratio
            if req.prompt is None:
                session.overhead.setdefault(req.thread, _overhead(req.thread, 0))
            elif req.thread not in session.overhead:
                read = (req.usage or {}).get("cache_read_tokens", 0)
                if 0 < read < req.prompt and units:  # cached by an earlier session: the system prompt and tools
                    session.overhead[req.thread] = _overhead(req.thread, read)
                    for unit in units:
                        unit.tokens = unit.estimate * (req.prompt - read) / (weight / ratio) if weight else 0
                    continue
                session.overhead[req.thread] = _overhead(req.thread, max(req.prompt - weight, 0))
                if req.prompt < weight:
                    for unit in units:
                        unit.tokens = unit.estimate * req.prompt / weight
            else:  # after a compaction: what the summary weighs is measured
                rest = req.prompt - (session.overhead[req.thread].tokens or 0)
                if weight and rest > 0:
                    for unit in units:
                        unit.tokens = unit.estimate * rest / (weight / ratio)
    for event in session.events:
        if event[0] == "unit" and event[2].tokens is None:
            event[2].tokens = event[2].estimate * ratio
        elif event[0] == "request" and event[1].thread not in session.overhead:
            session.overhead[event[1].thread] = _overhead(event[1].thread, 0)


def _measure(session: Session, ratio: float | None) -> list[tuple[list[Unit], float]]:
    """Each request's new units and the growth of the recorded prompt they account for (-1:
    not measured); marks the requests cut short (``truncate``) or longer (``extra``)."""
    pending: dict[str, list[Unit]] = {}
    size: dict[str, float] = {}  # thread -> weight of its transcript so far, overhead included
    measured: list[tuple[list[Unit], float]] = []
    for event in session.events:
        if event[0] == "unit":
            pending.setdefault(event[1], []).append(event[2])
        elif event[0] == "compact":
            size.pop(event[1], None)
            pending[event[1]] = []
        else:
            req = event[1]
            req.truncate = req.extra = None
            if req.prompt is None:  # no usage recorded (an aborted turn): its units wait for the next
                continue
            units = pending.pop(req.thread, [])
            if req.thread not in size:
                size[req.thread] = float(req.prompt)
                continue
            est = sum(u.estimate for u in units)
            growth = req.prompt - size[req.thread]
            if units and est and growth > 0:
                measured.append((units, growth))
                size[req.thread] = float(req.prompt)
                continue
            measured.append((units, -1.0))
            size[req.thread] += est * (ratio or 1.0)
            if req.prompt < size[req.thread]:
                req.truncate = req.prompt
            elif req.prompt > size[req.thread]:
                req.extra = req.prompt - size[req.thread]
    return measured


def _first_units(session: Session, req: Request) -> list[Unit]:
    """The units of ``req``'s thread sent with it since the thread (or its last compaction)
    began."""
    units: list[Unit] = []
    for event in session.events:
        if event[0] == "request" and event[1] is req:
            return units
        if event[0] == "unit" and event[1] == req.thread:
            units.append(event[2])
        elif event[0] == "compact" and event[1] == req.thread:
            units = []
    return units


def _overhead(thread: str, tokens: float) -> Unit:
    """A thread's system prompt and tools: one for the main thread, one every subagent shares."""
    unit = Unit({"role": "system", "content": f"<system prompt and tools of {thread}>"}, 0,
                key=hash(("overhead", "main" if thread == "main" else "agent")))
    unit.tokens = tokens
    return unit


# --- the cache --------------------------------------------------------------------------------

class CacheModel:
    """The provider's prompt cache over one session: entries are prefixes (a chained hash of
    unit keys) with their expiry time."""

    def __init__(self, provider: str, *, min_tokens: int = 1024):
        self.provider = provider
        self.min_tokens = min_tokens
        self.entries: dict[int, tuple[float, float]] = {}  # prefix -> (readable from, expiry)

    def alive(self, key: Any, now: float) -> bool:
        entry = self.entries.get(key)
        return entry is not None and entry[0] <= now <= entry[1]

    def hit(self, keys: list, markers: list[int], now: float) -> int:
        """The longest prefix an Anthropic request reads (-1: none): the lookup walks back up
        to 20 blocks from each breakpoint."""
        hit_at = -1
        for m in markers:
            for i in range(m, max(m - LOOKBACK, hit_at, -1), -1):
                if self.alive(keys[i], now):
                    hit_at = i
                    break
        return hit_at

    def bill(self, hashes: list[int], ends: list[float], markers: list[int], now: float, ttl: float,
             done: float | None = None, model: str | None = None) -> dict:
        """Usage of one request sent at ``now`` and answered at ``done``: ``hashes[i]`` /
        ``ends[i]`` the prefix hash and its token end after unit ``i``; ``markers`` the units
        that carry a breakpoint (Anthropic). What it writes is readable once it is answered."""
        done = now if done is None or done < now else done
        total = ends[-1] if ends else 0.0
        hashes = [(model, h) for h in hashes]  # a cache is the model's own
        if self.provider == OPENAI:
            hit = 0.0
            for i in range(len(hashes) - 1, -1, -1):
                if self.alive(hashes[i], now):
                    hit = ends[i]
                    break
            read = (int(hit) // OPENAI_STEP) * OPENAI_STEP if hit >= OPENAI_MIN else 0
            for i in range(len(hashes)):  # every prefix of this prompt is now cached
                if ends[i] >= OPENAI_MIN:
                    self.entries[hashes[i]] = (done, done + ttl)
            return {"input_tokens": round(total) - read, "cache_read_tokens": read, "cache_write_tokens": 0}
        last = markers[-1] if markers else -1
        hit_at = self.hit(hashes, markers, now)
        hit = ends[hit_at] if hit_at >= 0 else 0.0
        if hit_at >= 0:  # a read refreshes the entry
            self.entries[hashes[hit_at]] = (self.entries[hashes[hit_at]][0], max(now + ttl, self.entries[hashes[hit_at]][1]))
        end = ends[last] if last >= 0 else 0.0
        write = 0.0
        if end >= self.min_tokens:
            write = end - hit
            for m in markers:
                if ends[m] >= self.min_tokens:
                    old = self.entries.get(hashes[m])
                    self.entries[hashes[m]] = (min(old[0], done) if old and old[1] >= now else done,
                                               max(old[1] if old else 0.0, done + ttl))
        read, write = round(hit), round(write)
        return {"input_tokens": round(total) - read - write, "cache_read_tokens": read, "cache_write_tokens": write}


def _chain(prev: int, key: int) -> int:
    return hash((prev, key))


# --- policies ---------------------------------------------------------------------------------

@record(frozen=True)
class Policy:
    """How the agent manages its context in a replay."""

    name: str
    compaction: str = "log"  # log: the log's own; none: never; hermes: compress over the threshold
    threshold: float = 0.50
    target_ratio: float = 0.20
    protect_first_n: int = 3
    protect_last_n: int = 20
    budget_rules: str = "documented"
    context_length: int | None = None
    ttl: str | None = None  # None: what the log recorded (5m when it says nothing)
    markers: int = 3  # Anthropic breakpoints on the last messages (system_and_3), besides the system's
    min_gain: int | None = None  # the gate: decline a compaction that would not repay its cache break
    min_saving_usd: Decimal | None = None
    summary_model: str | None = None
    clear_thinking: int | None = None  # keep the thinking of the last N assistant turns only


LOG = Policy(name="log")
NONE = Policy(name="no compaction", compaction="none")
HERMES = Policy(name="hermes defaults", compaction="hermes")


@record
class Totals:
    requests: int = 0
    input_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    compactions: int = 0
    declined: int = 0
    summary_requests: int = 0
    thinking_cleared: int = 0  # assistant turns whose thinking a policy removed
    cost_usd: Decimal = Decimal("0")
    unpriced: int = 0

    def add(self, usage: dict) -> None:
        for key in BUCKETS:
            setattr(self, key, getattr(self, key) + int(usage.get(key, 0)))

    def as_dict(self) -> dict:
        out = {k: getattr(self, k) for k in ("requests", *BUCKETS, "compactions", "declined", "summary_requests",
                                             "thinking_cleared")}
        out["prompt_tokens"] = self.input_tokens + self.cache_read_tokens + self.cache_write_tokens
        out["cost_usd"] = None if self.unpriced and not self.cost_usd else format(self.cost_usd.quantize(Decimal("0.000001")), "f")
        out["unpriced_requests"] = self.unpriced
        return out


class _Thread:
    """A thread's transcript as a policy holds it: the units, their prefix hashes and ends."""

    def __init__(self, overhead: Unit):
        self.units: list[Unit] = []
        self.hashes: list[int] = [_chain(0, overhead.key)]
        self.ends: list[float] = [overhead.tokens or 0.0]
        self.since_compaction = 0  # requests since the last compaction (the gate's forecast)
        self.warm = False  # whether its first request was seen
        self.salt = 0  # edits so far: a unit after an edit is keyed anew
        self.salted: dict[int, int] = {}  # id(unit) -> the edit that re-keyed it

    def key(self, unit: Unit) -> Any:
        salt = self.salted.get(id(unit))
        return unit.key if salt is None else hash((unit.key, "edit", salt))

    def append(self, unit: Unit) -> None:
        self.units.append(unit)
        self.hashes.append(_chain(self.hashes[-1], self.key(unit)))
        self.ends.append(self.ends[-1] + (unit.tokens or 0.0))

    def rebuild(self, i: int) -> None:
        """Prefix hashes and ends again from unit ``i`` on (units replaced in place)."""
        for j in range(i, len(self.units)):
            self.hashes[j + 1] = _chain(self.hashes[j], self.key(self.units[j]))
            self.ends[j + 1] = self.ends[j] + (self.units[j].tokens or 0.0)

    def edit(self, unit: Unit) -> bool:
        """The agent changed ``unit`` (and so every prefix that holds it): nothing from it on
        hits the cache any more. False when the thread does not hold it (compacted away)."""
        for i, held in enumerate(self.units):
            if held is unit:
                self.salt += 1
                for later in self.units[i:]:
                    self.salted[id(later)] = self.salt
                self.rebuild(i)
                return True
        return False

    def reset(self, units: list[Unit]) -> None:
        del self.units[:], self.hashes[1:], self.ends[1:]
        for unit in units:
            self.append(unit)

    @property
    def size(self) -> float:
        return self.ends[-1]


def replay(session: Session, policy: Policy, *, pricer: Pricer | None = None, count: Callable | None = None,
           progress: Callable[[int], None] | None = None, detect: bool = False) -> dict:
    """Bill every request of ``session`` under ``policy``: totals and the compactions made."""
    pricer = pricer or Pricer(session.provider)
    cache = CacheModel(session.provider)
    threads: dict[str, _Thread] = {}
    totals = Totals()
    compactions: list[dict] = []
    clock = 0.0
    recorded = session.recorded
    memo: dict = {}  # clear_thinking: id(unit) -> its unit without thinking (None: nothing to clear)
    for n, event in enumerate(session.events):
        kind = event[0]
        if kind == "unit":
            thread = threads.setdefault(event[1], _Thread(session.overhead[event[1]]))
            unit = event[2]
            if unit.artifact and policy.compaction != "log":
                continue
            thread.append(unit)
            continue
        if kind == "compact":
            if policy.compaction == "log" and event[1] in threads:
                threads[event[1]].reset([])
                totals.compactions += 1
            continue
        req: Request = event[1]
        if req.usage is None and recorded:
            continue  # the log records no usage for it (an aborted turn): not billed in any policy
        thread = threads.setdefault(req.thread, _Thread(session.overhead[req.thread]))
        done = req.time if req.time is not None else clock
        now = req.start if req.start is not None and req.start <= done else done
        clock = done
        if progress is not None:
            progress(n)
        ttl_name = policy.ttl or req.ttl or "5m"
        ttl = OPENAI_TTL if session.provider == OPENAI and policy.ttl is None else TTL_SECONDS[ttl_name]
        if policy.compaction == "hermes":
            report = _maybe_compact(session, policy, thread, req, cache, pricer, count, now, ttl)
            if report is not None:
                compactions.append(report)
                if report["compressed"]:
                    totals.compactions += 1
                    totals.summary_requests += 1
                    totals.requests += 1
                    totals.add(report["summary_call"]["usage"])
                    cost = Decimal(report["summary_call"]["cost_usd"] or 0)
                    totals.cost_usd += cost
                else:
                    totals.declined += 1
        if not thread.warm:
            thread.warm = True
            if req.usage and req.usage.get("cache_read_tokens"):  # cached before the log began
                _warm(cache, thread, req.usage["cache_read_tokens"], now, ttl, req.model)
        if req.edit is not None:
            thread.edit(req.edit)
        if policy.clear_thinking is not None:
            totals.thinking_cleared += _clear_old_thinking(thread, policy.clear_thinking, memo, count)
        as_sent = policy.compaction == "log" and (req.truncate is not None or bool(req.extra))
        hashes, ends = _as_sent(thread, req) if as_sent else (thread.hashes, thread.ends)
        markers = _markers(len(hashes), policy, session.provider)
        if detect and req.usage and session.provider == ANTHROPIC and thread.units:
            _detect_edit(cache, thread, req, hashes, ends, markers, now)
            hashes, ends = _as_sent(thread, req) if as_sent else (thread.hashes, thread.ends)
        usage = cache.bill(hashes, ends, markers, now, ttl, done, req.model)
        usage["output_tokens"] = req.usage["output_tokens"] if req.usage else 0
        thread.since_compaction += 1
        totals.requests += 1
        totals.add(usage)
        cost = pricer.cost(usage, req.model, ttl_name)
        if cost is None:
            totals.unpriced += 1
        else:
            totals.cost_usd += cost
    return {"policy": policy.name, **totals.as_dict(), "compaction_reports": compactions}


def _detect_edit(cache: CacheModel, thread: _Thread, req: Request, hashes: list, ends: list, markers: list,
                 now: float) -> None:
    """Anthropic's cache is exact: when the log recorded a read well short of the prefix this
    replay finds cached (and the entry had not expired), the agent changed its transcript there
    (Claude Code rewrites earlier turns after an interrupt, say) in a way the log does not show.
    Mark the first unit past the recorded read as edited, for every policy's replay."""
    keys = [(req.model, h) for h in hashes]
    at = cache.hit(keys, markers, now)
    if at < 0:
        return
    read = req.usage["cache_read_tokens"]
    if read + max(1024, 0.02 * ends[at]) >= ends[at]:
        return
    import bisect

    i = bisect.bisect_right(thread.ends, read)  # thread.ends[i] > read: unit i - 1 is the first changed
    if 1 <= i <= len(thread.units):
        req.edit = thread.units[i - 1]
        thread.edit(req.edit)


def find_edits(session: Session) -> None:
    """Mark the edits the log's recorded cache reads reveal (see :func:`_detect_edit`)."""
    if session.provider == ANTHROPIC and session.recorded:
        replay(session, LOG, detect=True)


def _clear_old_thinking(thread: _Thread, keep: int, memo: dict, count: Callable | None) -> int:
    """Replace, in ``thread``, the assistant units outside the last ``keep`` (and outside the
    open tool-use loop) by the same units without thinking (:mod:`hermesctx.stages.thinking`):
    a unit that changes is a new prefix from there on. Returns how many were replaced now."""
    from hermesctx.stages.thinking import _is_user_turn, new_report, strip

    units = thread.units
    assistants = [i for i, u in enumerate(units) if u.msg.get("role") == "assistant"]
    last_user = max((i for i, u in enumerate(units) if _is_user_turn(u.msg)), default=-1)
    kept = set(assistants[-keep:]) if keep else set()
    first, replaced = None, 0
    for i in assistants:
        if i in kept or i > last_user:
            continue
        unit = units[i]
        if id(unit) not in memo:
            new = strip(unit.msg, new_report(keep))
            if new is None:
                memo[id(unit)] = None
            else:
                count = count or Counter()
                bare = Unit(new, count(new))
                bare.tokens = (unit.tokens or 0.0) * (bare.estimate / unit.estimate if unit.estimate else 1.0)
                memo[id(unit)] = bare
                memo[id(bare)] = None
        bare = memo[id(unit)]
        if bare is not None:
            units[i] = bare
            replaced += 1
            first = i if first is None else first
    if first is not None:
        thread.rebuild(first)
    return replaced


def _warm(cache: CacheModel, thread: _Thread, read: int, now: float, ttl: float, model: str | None) -> None:
    """The log's first request read ``read`` tokens cached by an earlier session: the longest
    prefix of the thread's transcript that fits in them is cached at the start."""
    for i in range(len(thread.ends) - 1, -1, -1):
        if thread.ends[i] <= read * 1.02:
            cache.entries[(model, thread.hashes[i])] = (now, now + ttl)
            return


def _as_sent(thread: _Thread, req: Request) -> tuple[list[int], list[float]]:
    """The prefix hashes and ends of what the log's agent sent: the transcript cut at the
    recorded size, or with the recorded surplus after it (a part no later request shares)."""
    tail = hash(("unlogged", id(req)))
    if req.truncate is not None:
        import bisect

        i = max(bisect.bisect_right(thread.ends, req.truncate) - 1, 0)
        hashes, ends = thread.hashes[:i + 1], thread.ends[:i + 1]
        if req.truncate > ends[-1]:
            hashes.append(_chain(hashes[-1], tail))
            ends.append(float(req.truncate))
        return hashes, ends
    return thread.hashes + [_chain(thread.hashes[-1], tail)], thread.ends + [thread.ends[-1] + req.extra]


def _markers(count: int, policy: Policy, provider: str) -> list[int]:
    if provider == OPENAI:
        return []
    last = count - 1
    marks = [0]  # the system prompt
    marks.extend(i for i in range(max(last - policy.markers + 1, 1), last + 1))
    return sorted(set(marks))


def recorded_totals(session: Session, pricer: Pricer | None = None) -> dict:
    """What the log itself recorded, billed with the same prices."""
    pricer = pricer or Pricer(session.provider)
    totals = Totals()
    for req in session.requests:
        if req.usage is None:
            continue
        totals.requests += 1
        totals.add(req.usage)
        cost = pricer.cost(req.usage, req.model, req.ttl)
        if cost is None:
            totals.unpriced += 1
        else:
            totals.cost_usd += cost
    totals.compactions = sum(1 for e in session.events if e[0] == "compact")
    return {"policy": "recorded", **totals.as_dict()}


# --- compaction in a replay ---------------------------------------------------------------------

def _budgets(policy: Policy, model: str | None):
    return _resolved(model, policy.context_length, policy.threshold, policy.target_ratio, policy.budget_rules)


@lru_cache(maxsize=64)
def _resolved(model: str | None, context_length: int | None, threshold: float, target_ratio: float, rules: str):
    """The budgets of a model under a policy (once per model and policy: every request asks)."""
    from hermesctx.budgets import resolve_budgets

    return resolve_budgets(model, context_length=context_length, threshold=threshold,
                           target_ratio=target_ratio, rules=rules)[0]


def _maybe_compact(session: Session, policy: Policy, thread: _Thread, req: Request, cache: CacheModel,
                   pricer: Pricer, count: Callable | None, now: float, ttl: float) -> dict | None:
    budgets = _budgets(policy, session.model)
    if thread.size < budgets.threshold_tokens:
        return None
    from hermesctx.stages.compress import compress_messages
    from hermesctx.summary import make_summarizer
    from hermesctx.summary.text import is_summary_content

    messages = [u.msg for u in thread.units]
    new, report = compress_messages(messages, summarizer=make_summarizer("extractive"),
                                    protect_first_n=policy.protect_first_n, protect_last_n=policy.protect_last_n,
                                    tail_token_budget=budgets.tail_token_budget,
                                    max_summary_tokens=budgets.max_summary_tokens, today="2026-01-01")
    if not report.get("compressed"):
        return None
    count = count or Counter()
    by_id = {id(u.msg): u for u in thread.units}
    units = []
    for msg in new:
        unit = by_id.get(id(msg))
        if unit is None:
            unit = Unit(msg, count(msg))
            unit.tokens = unit.estimate * session.ratio
        units.append(unit)
    after = (session.overhead[req.thread].tokens or 0) + sum(u.tokens for u in units)
    middle = [by_id[id(m)] for m in messages[report["start"]:report["end"]] if id(m) in by_id]
    summary_in = round(sum(u.tokens for u in middle) + SUMMARY_PROMPT_TOKENS)
    summary_out = round(sum(u.tokens for u in units if is_summary_content(u.msg.get("content"))))
    model = policy.summary_model or session.model
    call = {"model": model, "usage": {"input_tokens": summary_in, "cache_read_tokens": 0,
                                      "cache_write_tokens": 0, "output_tokens": summary_out}}
    cost = compaction_cost(before=thread.size, after=after, cached=_cached_prefix(cache, thread, now, req.model),
                           summary_usage=call["usage"], summary_model=model, model=session.model, pricer=pricer,
                           provider=session.provider, ttl=ttl)
    call["cost_usd"] = cost["summary_call_usd"]
    out = {"at_request": thread.since_compaction, "compressed": True, "tokens_before": round(thread.size),
           "tokens_after": round(after), "summary_call": call, "cost": cost}
    remaining = max(thread.since_compaction, 1)  # the session so far forecasts as much again
    decline = gate(cost, remaining, min_gain=policy.min_gain, min_saving_usd=policy.min_saving_usd,
                   over_window=thread.size >= budgets.context_length * 0.95)
    if decline:
        return {**out, "compressed": False, "reason": decline}
    thread.reset(units)
    thread.since_compaction = 0
    return out


def _cached_prefix(cache: CacheModel, thread: _Thread, now: float, model: str | None) -> float:
    for i in range(len(thread.hashes) - 1, -1, -1):
        if cache.alive((model, thread.hashes[i]), now):
            return thread.ends[i]
    return 0.0




# --- the command ------------------------------------------------------------------------------

BUILTIN = {"log": LOG, "none": NONE, "hermes": HERMES,
           "gate": Policy(name="hermes defaults + min-gain gate", compaction="hermes", min_gain=0)}


def policy_from(spec: str, *, ctx_of: Callable[[str | None], Any] | None = None, **overrides: Any) -> Policy:
    """A policy by name (log, none, hermes, gate) or from a config file (its compression,
    prompt_caching and summarizer settings; compression.enabled false: no compaction)."""
    import os

    from hermesctx.record import replace

    if spec in BUILTIN:
        base = BUILTIN[spec]
    else:
        if ctx_of is None or not os.path.isfile(spec):
            from hermesctx.errors import UsageError

            raise UsageError(f"--compare {spec}: not a policy (log, none, hermes, gate) nor a config file")
        base = _policy_of_settings(spec, ctx_of(spec).settings)
    given = {k: v for k, v in overrides.items() if v is not None}
    return replace(base, **given) if given else base


def _policy_of_settings(name: str, settings: Any) -> Policy:
    import os

    gain = settings["compression.min_gain"]
    return Policy(name=os.path.basename(name),
                  compaction="hermes" if settings["compression.enabled"] else "none",
                  threshold=settings["compression.threshold"], target_ratio=settings["compression.target_ratio"],
                  protect_first_n=settings["compression.protect_first_n"],
                  protect_last_n=settings["compression.protect_last_n"],
                  budget_rules=settings["compression.budget_rules"], context_length=settings["model.context_length"],
                  ttl=settings["prompt_caching.cache_ttl"], min_gain=gain,
                  summary_model=settings["auxiliary.compression.model"])


def main(logs: list[str], *, compare: list[str], config_path: str | None, min_gain: int | None,
         min_saving_usd: float | None, ttl: str | None, summary_model: str | None, fmt: str | None,
         clear_thinking: int | None,
         progress: bool | None, env: Any, ctx_of: Callable[[str | None], Any]) -> int:
    """The ``replay`` command: the policies its options name, then :func:`run`."""
    specs = compare or ["log"] + ([config_path] if config_path else [])
    overrides = {"ttl": ttl, "summary_model": summary_model}
    gated = {"min_gain": min_gain,
             "min_saving_usd": Decimal(str(min_saving_usd)) if min_saving_usd is not None else None}
    policies = []
    for spec in dict.fromkeys(specs):
        policy = policy_from(spec, ctx_of=ctx_of, **overrides)
        if policy.compaction == "hermes" and any(v is not None for v in gated.values()):
            policy = policy_from(spec, ctx_of=ctx_of, **overrides, **gated)
        policies.append(policy)
    if clear_thinking is not None:  # each policy again, clearing old thinking (the log's own too)
        from hermesctx.record import replace

        policies += [replace(p, clear_thinking=clear_thinking, name=f"{p.name} + clear thinking {clear_thinking}")
                     for p in list(policies)]
    as_json = fmt == "json" or (fmt is None and not env.stdout_isatty)
    return run(logs, policies, env=env, as_json=as_json, progress=progress)


def run(paths: list[str], policies: list[Policy], *, env: Any, as_json: bool, progress: bool | None = None) -> int:
    """Replay every log under every policy; print the report (JSON or a table); 0, or 3 when a
    log could not be read (the others are still reported)."""
    import time

    from hermesctx.errors import HermesctxError

    count = Counter()
    sessions, failed = [], 0
    show = env.stderr_isatty if progress is None else progress
    started = time.monotonic()
    for n, path in enumerate(paths):
        try:
            found = read_sessions(path, count)
        except (HermesctxError, OSError, ValueError) as err:
            env.warn(f"{path}: {err}")
            failed += 1
            continue
        for session in found:
            if not session.requests:
                env.warn(f"{path}: {session.name}: no request to replay (the log records no API call)")
                continue
            sessions.append(_replayed(session, path, policies, env, count, show))
        if show:
            env.stderr.write(f"\rreplay: {n + 1}/{len(paths)} logs, {time.monotonic() - started:.1f} s\033[K")
    if show and sessions:
        env.stderr.write("\n")
    report = {"sessions": sessions, "total": _total(sessions), "note": _note(sessions)}
    if as_json:
        import orjson

        env.stdout.write(orjson.dumps(report, option=orjson.OPT_INDENT_2) + b"\n")
    else:
        env.stdout.write(table(report).encode())
    env.stdout.flush()
    return 3 if failed else 0


def _replayed(session: Session, path: str, policies: list[Policy], env: Any, count: Callable, show: bool) -> dict:
    """One session's report: what it recorded, then each policy's replay."""
    pricer = Pricer(session.provider)
    rows = [recorded_totals(session, pricer)] if session.recorded else []
    for policy in policies:
        rows.append(replay(session, policy, pricer=pricer, count=count,
                           progress=_progress(env, path, session, policy, show)))
    return {"session": session.name, "path": path, "source": session.source, "provider": session.provider,
            "ratio": round(session.ratio, 3), "models": sorted({r.model for r in session.requests if r.model}),
            "priced_as": pricer.priced_as, "policies": rows}


def _progress(env: Any, path: str, session: Session, policy: Policy, show: bool):
    total = len(session.events)
    if not show or total < 2000:
        return None
    step = max(total // 50, 1)

    def tick(n: int) -> None:
        if n % step == 0:
            env.stderr.write(f"\rreplay: {path} [{policy.name}] {n * 100 // total}%\033[K")
    return tick


def _total(sessions: list[dict]) -> list[dict]:
    by_policy: dict[str, Totals] = {}
    for s in sessions:
        for row in s["policies"]:
            t = by_policy.setdefault(row["policy"], Totals())
            for key in ("requests", *BUCKETS, "compactions", "declined", "summary_requests", "thinking_cleared"):
                setattr(t, key, getattr(t, key) + (row.get(key) or 0))
            if row["cost_usd"] is not None:
                t.cost_usd += Decimal(row["cost_usd"])
            t.unpriced += row.get("unpriced_requests", 0)
    return [{"policy": name, **t.as_dict()} for name, t in by_policy.items()]


def _note(sessions: list[dict]) -> str:
    """The closing note: what the cheapest replayed policy saves against the log's own."""
    totals = {row["policy"]: row for row in _total(sessions)}
    own = totals.get(LOG.name)
    if not own or own["cost_usd"] is None:
        return "no priced replay of the log's own policy to compare with"
    priced = [r for r in totals.values() if r["policy"] not in ("recorded", LOG.name) and r["cost_usd"] is not None]
    if not priced:
        return f"the log's own policy: ${Decimal(own['cost_usd']):.2f}"
    best = min(priced, key=lambda r: Decimal(r["cost_usd"]))
    diff = Decimal(own["cost_usd"]) - Decimal(best["cost_usd"])
    verb = "saves" if diff > 0 else "costs"
    note = (f"cheapest: {best['policy']} at ${Decimal(best['cost_usd']):.2f}, which {verb} "
            f"${abs(diff):.2f} against the log's own policy (${Decimal(own['cost_usd']):.2f})")
    plain, gated = totals.get(HERMES.name), totals.get(BUILTIN["gate"].name)
    if plain and gated and plain["cost_usd"] is not None and gated["cost_usd"] is not None:
        saved = Decimal(plain["cost_usd"]) - Decimal(gated["cost_usd"])
        note += (f"; the min-gain gate declined {gated['declined']} compaction attempts and "
                 f"{'saved' if saved >= 0 else 'cost'} ${abs(saved):.2f} against the defaults without it")
    return note


def table(report: dict) -> str:
    """The report as a terminal table: one row per session and policy, then the totals."""
    head = ("session", "policy", "requests", "input", "cache read", "cache write", "output", "compactions", "cost $")
    rows = []
    for s in report["sessions"]:
        for row in s["policies"]:
            rows.append((s["session"][:40], *_cells(row)))
    for row in report["total"]:
        rows.append(("TOTAL", *_cells(row)))
    widths = [max(len(str(r[i])) for r in (head, *rows)) for i in range(len(head))]
    lines = ["  ".join(str(c).ljust(w) if i < 2 else str(c).rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
             for r in (head, *rows)]
    return "\n".join(lines) + f"\n{report['note']}\n"


def _cells(row: dict) -> tuple:
    comp = str(row["compactions"]) + (f" ({row['declined']} declined)" if row.get("declined") else "")
    cost = "n/a" if row["cost_usd"] is None else f"{Decimal(row['cost_usd']):.4f}"
    return (row["policy"], f"{row['requests']:,}", f"{row['input_tokens']:,}", f"{row['cache_read_tokens']:,}",
            f"{row['cache_write_tokens']:,}", f"{row['output_tokens']:,}", comp, cost)
