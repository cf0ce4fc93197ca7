"""Convert one transcript between formats: source -> OpenAI messages -> target.

Pure: plain dicts in, plain dicts out, the input untouched. What the target cannot hold is
counted in the report's ``lost`` (``what -> count``) for the caller to put on stderr.
"""

from __future__ import annotations

from hermesctx import formats
from hermesctx.formats import params

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


DEFAULT_MAX_TOKENS = 4096  # what --max-tokens is when an Anthropic body needs one and has none
# the provider whose models a format's documents name (ShareGPT: none)
PROVIDER = {formats.OPENAI: formats.OPENAI, formats.RESPONSES: formats.OPENAI, formats.CODEX: formats.OPENAI,
            formats.ANTHROPIC: formats.ANTHROPIC, formats.CLAUDE_CODE: formats.ANTHROPIC}


def convert(doc: Any, *, source: str = formats.AUTO, target: str = formats.OPENAI,
            info: dict | None = None, model: str | None = None,
            max_tokens: int | None = None) -> tuple[Any, dict]:
    """``doc`` in format ``source`` (``auto``: detected) -> ``(converted, report)``.

    ``info`` is what a log reader already found (the document is then OpenAI messages).
    ``model`` is the model of the output body (a model of one provider is never written into
    the other's body: a document naming one needs ``model`` to cross, else a UsageError);
    ``max_tokens`` its ``max_tokens`` (OpenAI: ``max_completion_tokens``), which an Anthropic
    body given a model and none gets as :data:`DEFAULT_MAX_TOKENS`."""
    lost: dict = {}
    if info and info.get("format") in formats.LOG_FORMATS:
        found = info["format"]
        openai = doc
        lost.update(info.get("lost") or {})
    else:
        found = formats.detect_document(doc) if source == formats.AUTO else source
        crossing(doc, found, target, model)
        if found in formats.PLAIN:  # checked as given, so an error names the input's own index
            doc = formats.writable(doc, target, lost)
        if found == target and found in formats.TARGETS:
            from hermesctx.messages import lenient_input

            with lenient_input():  # (only counted: what only its provider reads stays as it is)
                seen = formats.to_openai(doc, found, {})
            report = _report(found, target, seen, lost)
            return request_keys(doc, target, model, max_tokens), report
        openai = formats.to_openai(doc, found, lost)
    out = _own_model(formats.from_openai(openai, target, lost), openai, found, target, model, lost)
    return request_keys(out, target, model, max_tokens), _report(found, target, openai, lost)


def _own_model(out: Any, source: Any, found: str, target: str, model: str | None, lost: dict) -> Any:
    """``out`` with the source's model when it is the target provider's (a log's model, which a
    log's writer keeps at the end), without it (counted) when it is the other's."""
    lost.pop(params.MODEL_LOST, None)
    named = source.get("model") if isinstance(source, dict) else None
    if model is not None or named is None or not isinstance(out, dict):
        return out
    theirs, ours = PROVIDER.get(found), PROVIDER.get(target)
    if ours is None:  # (ShareGPT: no model)
        return out
    if theirs and theirs != ours:
        lost[params.MODEL_LOST] = 1
        return {k: v for k, v in out.items() if k != "model"}
    return out if "model" in out else {**out, "model": named}


_NAMES = {formats.OPENAI: "OpenAI", formats.ANTHROPIC: "Anthropic"}


def crossing(doc: Any, found: str, target: str, model: str | None) -> None:
    """Refuse (exit 2, naming ``--model``) a document whose model is another provider's than
    ``target``'s when no ``model`` is given: it is never written into the other's body."""
    named = doc.get("model") if isinstance(doc, dict) else None
    theirs, ours = PROVIDER.get(found), PROVIDER.get(target)
    if model is None and named is not None and theirs and ours and theirs != ours:
        from hermesctx.errors import UsageError

        raise UsageError(f"the input's model {named!r} is {_NAMES[theirs]}'s: name the "
                         f"{_NAMES[ours]} model of the output with --model",
                         hint=f"e.g. convert --to {target} --model MODEL")


def request_keys(out: Any, target: str, model: str | None, max_tokens: int | None) -> Any:
    """``out`` (a body or message list of ``target``) with ``model`` and ``max_tokens`` set."""
    if target not in PROVIDER or (model is None and max_tokens is None):
        return out
    body = dict(out) if isinstance(out, dict) else {"messages": out}
    if model is not None:
        body = {"model": model, **{k: v for k, v in body.items() if k != "model"}}
    if target == formats.ANTHROPIC:
        if max_tokens is not None or "max_tokens" not in body:
            body["max_tokens"] = max_tokens if max_tokens is not None else DEFAULT_MAX_TOKENS
    elif max_tokens is not None:
        body.pop("max_tokens", None)
        body["max_completion_tokens"] = max_tokens
    return body


def _report(found: str, target: str, openai: Any, lost: dict) -> dict:
    messages = openai.get("messages") if isinstance(openai, dict) else openai
    counts = Counts()
    for _ in counts.count(messages if isinstance(messages, list) else []):
        pass
    return counts.report(found, target, lost)


class Counts:
    """Messages, tool calls and results of a transcript, counted as its messages stream by."""

    def __init__(self) -> None:
        self.messages = self.calls = self.results = 0

    def count(self, messages):
        for msg in messages:
            if isinstance(msg, dict):
                self.messages += 1
                calls = msg.get("tool_calls")
                self.calls += len(calls) if isinstance(calls, list) else 0
                self.results += msg.get("role") == "tool"
            yield msg

    def report(self, found: str, target: str, lost: dict) -> dict:
        return {"from": found, "to": target, "messages": self.messages, "tool_calls": self.calls,
                "tool_results": self.results, "lost": dict(lost)}


def describe(report: dict) -> str:
    line = (f"{report['from']} -> {report['to']}: {report['messages']} messages, "
            f"{report['tool_calls']} tool calls, {report['tool_results']} results")
    if report["lost"]:
        line += "; not kept: " + ", ".join(f"{what} ({n})" for what, n in report["lost"].items())
    return line


def usage_report(info: dict, estimate_report: dict) -> dict | None:
    """For ``estimate`` on a session log: the usage recorded in the log beside the estimate.

    Claude Code: the last main-thread reply's ``input_tokens + cache_creation_input_tokens +
    cache_read_input_tokens`` is what the model saw as prompt; Codex: ``last_token_usage``'s
    ``input_tokens``. The estimate side is ``estimate_report['tokens']['total']`` when present,
    else its ``total_tokens``/``tokens`` figure. Returns None when the log recorded no usage.
    """
    usage = info.get("usage") if isinstance(info, dict) else None
    if not isinstance(usage, dict):
        return None
    if info.get("format") == formats.CODEX:  # OpenAI counts: input includes the cached part
        prompt = _int(usage.get("input_tokens"))
    else:
        prompt = sum(_int(usage.get(k)) for k in (
            "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
    output = _int(usage.get("output_tokens"))
    estimated = _estimated_total(estimate_report)
    out = {"source": info.get("format"), "prompt_tokens": prompt, "output_tokens": output,
           "context_tokens": prompt + output,
           "note": "recorded: the last reply's prompt plus its output; the agent's own system "
                   "prompt and tool definitions are in it but not in the log"}
    if estimated is not None:
        out["estimated_tokens"] = estimated
        out["difference"] = estimated - (prompt + output)
        out["difference_pct"] = (round(100.0 * (estimated - prompt - output) / (prompt + output), 1)
                                 if prompt + output else None)
    return out


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _estimated_total(report: dict) -> int | None:
    if not isinstance(report, dict):
        return None
    for key in ("total_tokens", "tokens", "prompt_tokens"):
        value = report.get(key)
        if isinstance(value, int):
            return value
        if isinstance(value, dict) and isinstance(value.get("total"), int):
            return value["total"]
    return None


_LOG_KEYS = ("session", "agent", "segments", "dropped_before_compaction", "abandoned_branch_entries",
             "detached_entries", "sidechain_events", "subagents", "orphan_tool_results",
             "duplicate_tool_results", "empty_log", "skipped", "usage")


def run(ctx, path, *, target: str = formats.OPENAI, source: str = formats.AUTO, jsonl: bool | None = None,
        include_sidechains: bool = False, all_segments: bool = False, verbose: bool = False,
        pretty: bool = False, report: str | None = None, model: str | None = None,
        max_tokens: int | None = None, keep_going=None) -> None:
    """``hermesctx convert``: every document of ``path`` (one or several FILEs; a session log is
    one transcript, written as it is read) in ``target``'s format on stdout; what the target
    cannot hold on stderr. ``keep_going`` (a :class:`~hermesctx.transcripts.KeepGoing`): a FILE
    that fails is said and skipped, and the batch ends with its summary line."""
    from hermesctx import jsonio
    from hermesctx.errors import HermesctxError
    from hermesctx.transcripts import (
        ReportSink,
        from_file,
        in_file,
        located,
        one_when_pretty,
        open_input,
        paths_of,
        pretty_files,
        warner,
    )

    env = ctx.env
    sink = ReportSink(env, report)
    ok = False
    try:
        paths = paths_of(path)
        pretty_files(pretty, paths)
        for one in paths:
            name = one if len(paths) > 1 else None  # what its documents, errors and warnings name
            try:
                with open_input(env, one) as stream:
                    opened = formats.open_log(stream, source=source, jsonl=jsonl, warn=warner(env, name),
                                              include_sidechains=include_sidechains, all_segments=all_segments)
                    done = 0
                    if isinstance(opened, formats.LogStream):  # a session log: one transcript
                        _convert_log(env, sink, opened, target, verbose, pretty, name, (model, max_tokens))
                        done = 1
                    else:
                        docs = formats.documents(opened if opened is not None else stream, source=source,
                                                 jsonl=jsonl, convert_documents=False)
                        for doc, (out, rep) in located(one_when_pretty(from_file(docs, name), pretty),
                                                       lambda doc: _convert_read(doc, target, model, max_tokens)):
                            env.stdout.write(jsonio.dumps(out, pretty=pretty))
                            _tell(env, sink, doc, rep, verbose)
                            done += 1
            except HermesctxError as err:
                if keep_going is None or name is None:
                    raise in_file(err, name) from None
                keep_going.file_failed(env, in_file(err, name))
                continue
            if keep_going is not None:
                keep_going.file_done(done)
        if keep_going is not None and len(paths) > 1:
            keep_going.summary(env)
        ok = True
    finally:
        sink.close(ok)


def _convert_read(doc, target: str, model: str | None = None, max_tokens: int | None = None) -> tuple[Any, dict]:
    """One document read by :func:`formats.documents`, converted and as it goes on the wire;
    what reading it left out counted with what the target cannot hold."""
    from hermesctx.wire import send

    out, rep = convert(doc.data, source=doc.info["format"], target=target, model=model, max_tokens=max_tokens)
    for what, n in doc.info["lost"].items():
        rep["lost"][what] = rep["lost"].get(what, 0) + n
    out = send.request(out, target, rep.setdefault("wire", {}))
    if target in PROVIDER:
        from hermesctx.wire import tooldefs

        found = tooldefs.problems(out, target)
        if found:
            rep["tool_definitions"] = found
    return out, rep


def _convert_log(env, sink, log: formats.LogStream, target: str, verbose: bool, pretty: bool,
                 file: str | None = None, keys: tuple = (None, None)) -> None:
    import itertools

    from hermesctx import jsonio
    from hermesctx.transcripts import segments_left_out

    if verbose:
        env.info(f"{file}: read as {log.format}" if file else f"read as {log.format}")
    counts, lost = Counts(), {}
    wire: dict = {}
    messages = log.messages()
    first = next(messages, None)  # the first pass, which may refuse the log, before any output
    messages = itertools.chain([] if first is None else [first], messages)
    model, max_tokens = keys

    def tail() -> dict:  # the log's model only into its own provider's body (or --model's)
        found = log.tail()
        ours = PROVIDER.get(target)
        if "model" in found and model is None and ours and ours != PROVIDER.get(log.format):
            found = {k: v for k, v in found.items() if k != "model"}
            lost[params.MODEL_LOST] = 1
        return request_keys(found, target, model, max_tokens)

    formats.write_stream(env.stdout, counts.count(messages), tail, target, lost, pretty=pretty,
                         wire=wire)
    info = log.info()
    for line in segments_left_out(info):
        env.warn(f"{file}: {line}" if file else line)
    for what, n in info.get("lost", {}).items():
        lost[what] = lost.get(what, 0) + n
    rep = counts.report(log.format, target, lost)
    rep.update((key, info[key]) for key in _LOG_KEYS if key in info)
    rep["wire"] = wire
    _tell(env, sink, jsonio.Document(None, 0, None, None, file), rep, verbose)


def _tell(env, sink, doc, rep: dict, verbose: bool) -> None:
    from hermesctx.wire import send

    where = f"{doc.where}: " if doc.where else ""
    if verbose and rep["from"] not in formats.LOG_FORMATS:
        env.info(f"{where}read as {rep['from']}")
    wire = rep.pop("wire", None) or {}
    if wire:
        rep["wire"] = wire
    for line in [*formats.describe_lost(rep["lost"], rep["to"]), *send.describe(wire),
                 *(f"tool definitions: {p}" for p in rep.get("tool_definitions", ()))]:
        env.warn(where + line)
    sink.add(doc, rep, describe(rep) if verbose else None)
