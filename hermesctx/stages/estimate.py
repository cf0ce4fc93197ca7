"""estimate: how full is the context window? (Hermes's pre-request check, as a report.)

Counts the whole request (system prompt, messages, tool schemas) with one of two methods:

* ``rough``: Hermes's own request estimate, exactly, so the figure is the one Hermes acts on (:mod:`hermesctx.tokens`).
  ``total`` is Hermes's figure; the parts are rounded separately and need not sum to it.
* ``exact``: tiktoken with the model's encoding (a proxy encoding, named as such, for models
  whose tokenizer is not public). Parts sum to ``total`` (plus 3 reply-priming tokens).

The prompt figure compared with the budgets is the estimate, or the prompt tokens of a
provider ``usage`` object when one is given (``input + cache_read + cache_write``).
"""

from __future__ import annotations

from hermesctx import tokens
from hermesctx.budgets import DOCUMENTED, compute_budgets, pressure_percent
from hermesctx.encodings import EncodingUnavailable, encoding_for_model, get_encoding
from hermesctx.messages import ANTHROPIC, check_strict, detect_format, messages_of, system_text
from hermesctx.models import resolve_context_length
from hermesctx.options import BudgetOptions, flags, option
from hermesctx.record import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ROUGH = "rough"
EXACT = "exact"


def _request_parts(doc: Any) -> tuple[list, str, Any]:
    """(messages, top-level system text, tools) of a document."""
    messages = messages_of(doc)
    check_strict(messages)
    system = ""
    tools = None
    if isinstance(doc, dict):
        if detect_format(doc) == ANTHROPIC:
            system = system_text(doc.get("system"))
        tools = doc.get("tools")
    return messages, system, tools


NOT_A_MESSAGE = "(not an object)"  # the by_role key of list items that are not objects


def _role(msg: Any) -> Any:
    return msg.get("role") if isinstance(msg, dict) else None


def _role_key(msg: Any) -> str:
    return str(msg.get("role")) if isinstance(msg, dict) else NOT_A_MESSAGE


def _tail(msg: Any) -> int | None:
    """The tail-walk figure (Hermes has none for an item that is not an object)."""
    return tokens.tail_tokens(msg) if isinstance(msg, dict) else None


def _odd_items(messages: list) -> list[str]:
    """Warnings for list items Hermes counts but no other stage accepts."""
    odd = [i for i, m in enumerate(messages) if not isinstance(m, dict)]
    if not odd:
        return []
    where = ", ".join(f"messages[{i}]" for i in odd[:5]) + (", ..." if len(odd) > 5 else "")
    return [f"{where}: not a message object; counted by its printed form, as Hermes does"]


def _count_rough(messages: list, system: str, tools: Any, per_message: bool) -> dict:
    sizes = [tokens.message_size(m) for m in messages]  # each message measured once
    # each role's chars and images, summed as the messages go (rough_of_sizes of its group)
    groups: dict[str, list[int]] = {}
    for msg, (chars, images) in zip(messages, sizes):
        role = msg.get("role") if isinstance(msg, dict) else NOT_A_MESSAGE
        group = groups.get(role) if type(role) is str else None
        if group is None:
            group = groups.setdefault(_role_key(msg), [0, 0])
        group[0] += chars
        group[1] += images
    message_tokens = tokens.rough_of_sizes(groups.values())  # (the sums of all messages)
    top_system, tool_tokens = tokens.rough_text(system), tokens.rough_tools(tools)
    by_role = {role: tokens.rough_of_sizes([group]) for role, group in groups.items()}
    counts = {
        "system": top_system + by_role.get("system", 0),
        "messages": message_tokens,
        "tools": tool_tokens,
        "total": top_system + message_tokens + tool_tokens,  # tokens.rough_request, in parts
        "by_role": by_role,
    }
    if per_message:
        counts["per_message"] = [
            {"index": i, "role": _role(m), "tokens": tokens.rough_of_sizes([size]),
             "tail_tokens": _tail(m)}
            for i, (m, size) in enumerate(zip(messages, sizes))
        ]
    return counts


def _count_exact(encoding, messages: list, system: str, tools: Any, per_message: bool) -> dict:
    each = [tokens.exact_message_tokens(encoding, m) for m in messages]
    system_tokens = (tokens.exact_text(encoding, system) + tokens.MESSAGE_OVERHEAD) if system else 0
    system_tokens += sum(n for m, n in zip(messages, each) if _role(m) == "system")
    tool_tokens = tokens.exact_tools(encoding, tools)
    by_role: dict[str, int] = {}
    for msg, n in zip(messages, each):
        role = _role_key(msg)
        by_role[role] = by_role.get(role, 0) + n
    message_tokens = sum(each)
    top_system = (tokens.exact_text(encoding, system) + tokens.MESSAGE_OVERHEAD) if system else 0
    counts = {
        "system": system_tokens,
        "messages": message_tokens,
        "tools": tool_tokens,
        "total": top_system + message_tokens + tool_tokens + tokens.REPLY_PRIMING,
        "by_role": by_role,
    }
    if per_message:
        counts["per_message"] = [
            {"index": i, "role": _role(m), "tokens": n, "tail_tokens": _tail(m)}
            for i, (m, n) in enumerate(zip(messages, each))
        ]
    return counts


def estimate(doc: Any, *, model: str | None = None, context_length: int | None = None,
             provider: str | None = None, method: str = EXACT, encoding: str | None = None,
             threshold: float = 0.50, target_ratio: float = 0.20, rules: str = DOCUMENTED,
             max_tokens: int | None = None, usage: dict | None = None,
             per_message: bool = False) -> dict:
    """The token report of one request document. Never mutates ``doc``.

    ``usage`` is a normalized usage dict (see :func:`normalize_usage`); when its
    ``prompt_tokens`` is positive it is the prompt figure, as Hermes prefers API counts.
    """
    messages, system, tools = _request_parts(doc)
    # Estimating changes nothing, so anything Hermes can measure is measured (a tool message
    # without its id, a role that is not a string, an item that is not an object).
    if model is None and isinstance(doc, dict) and isinstance(doc.get("model"), str):
        model = doc["model"]
    window = resolve_context_length(model, context_length=context_length, provider=provider)
    budgets = compute_budgets(window.length, threshold=threshold, target_ratio=target_ratio,
                              rules=rules, max_tokens=max_tokens, model=model, provider=provider)
    warnings = _odd_items(messages)
    if window.source == "default":
        warnings.append(f"unknown model {model or '(none)'}: assuming a "
                        f"{window.length:,}-token context window (set --model or --context-length)")

    method_label = ROUGH
    counts = None
    if method == EXACT:
        name, proxy = (encoding, False) if encoding else encoding_for_model(model)
        try:
            enc = get_encoding(name)
        except EncodingUnavailable as exc:
            warnings.append(f"encoding {name} unavailable ({exc}); falling back to the rough method")
        else:
            method_label = f"{name} (proxy for {model})" if proxy and model else name
            counts = _count_exact(enc, messages, system, tools, per_message)
    if counts is None:
        counts = _count_rough(messages, system, tools, per_message)

    prompt_tokens, prompt_source = counts["total"], "estimate"
    if usage and usage.get("prompt_tokens", 0) > 0:
        prompt_tokens, prompt_source = usage["prompt_tokens"], "usage"

    report = {
        "model": model,
        "context_length": window.length,
        "context_source": window.source,
        "method": method_label,
        "messages": len(messages),
        "tokens": {k: counts[k] for k in ("total", "system", "messages", "tools")},
        "by_role": counts["by_role"],
        "prompt_tokens": prompt_tokens,
        "prompt_source": prompt_source,
        "pressure_percent": pressure_percent(prompt_tokens, window.length),
        "tokens_left": {"threshold": budgets.threshold_tokens - prompt_tokens,
                        "window": window.length - prompt_tokens},
        "budgets": budgets.as_dict(),
        "would_compress": prompt_tokens >= budgets.threshold_tokens,
        "over_hygiene": prompt_tokens >= budgets.hygiene_tokens,
    }
    if usage:
        report["usage"] = usage
    if model:
        from hermesctx.pricing import prompt_cost

        cost = prompt_cost(prompt_tokens, model, provider)
        if cost is not None:
            report["prompt_cost"] = cost
    if per_message:
        report["per_message"] = counts["per_message"]
    if warnings:
        report["warnings"] = warnings
    return report


def _left(n: int) -> str:
    return f"{n:,} left" if n >= 0 else f"over by {-n:,}"


def _left_row(n: int) -> str:
    return f"{n:,}" if n >= 0 else f"0 (over by {-n:,})"


def _cost_row(cost: dict | None) -> list[tuple[str, str]]:
    if not cost:
        return []
    return [("prompt cost", f"${cost['amount_usd']} at ${cost['input_usd_per_mtok']}/M input "
                            f"({cost['source']}, {cost['pricing_version']})")]


def headline(report: dict) -> list[str]:
    """The first lines of the table: the prompt against the window and the threshold, and for a
    session log the usage it recorded beside the estimate."""
    b = report["budgets"]
    prompt, window = report["prompt_tokens"], report["context_length"]
    left = report["tokens_left"]
    lines = [f"{report['model'] or '(no model)'}: {prompt:,} tokens ({report['prompt_source']}), "
             f"{report['pressure_percent']}% of a {window:,}-token window; compresses at "
             f"{b['threshold_tokens']:,}: {_left(left['threshold'])}"]
    recorded = report.get("recorded_usage")
    if recorded:
        line = f"recorded by the log: {recorded['context_tokens']:,} tokens"
        if "difference" in recorded:
            line += f" (estimate {recorded['difference']:+,})"
        lines.append(f"{line}, {pressure_percent(recorded['context_tokens'], window)}% of the window; "
                     f"{_left(b['threshold_tokens'] - recorded['context_tokens'])} before the threshold")
    if report.get("forecast"):
        lines.append(report["forecast"]["line"])
    return lines


def format_table(report: dict) -> str:
    """A human-readable table of an estimate report: a headline, then one row per figure."""
    b = report["budgets"]
    t = report["tokens"]
    left = report["tokens_left"]
    rows = [
        ("model", f"{report['model'] or '(none)'}"),
        ("context window", f"{report['context_length']:,} ({report['context_source']})"),
        ("method", report["method"]),
        ("messages", f"{report['messages']:,}"),
        ("system tokens", f"{t['system']:,}"),
        ("message tokens", f"{t['messages']:,}"),
        ("tool tokens", f"{t['tools']:,}"),
        ("total tokens", f"{t['total']:,}"),
        ("prompt tokens", f"{report['prompt_tokens']:,} ({report['prompt_source']})"),
        ("pressure", f"{report['pressure_percent']}%"),
        *_cost_row(report.get("prompt_cost")),
        ("left to threshold", _left_row(left["threshold"])),
        ("left in window", _left_row(left["window"])),
        ("budget rules", b["rules"]),
        ("threshold", f"{b['threshold_tokens']:,} ({b['threshold_percent']:.0%})"),
        ("tail budget", f"{b['tail_token_budget']:,}"),
        ("max summary", f"{b['max_summary_tokens']:,}"),
        ("hygiene line", f"{b['hygiene_tokens']:,} (85%)"),
        ("would compress", "yes" if report["would_compress"] else "no"),
    ]
    for role, n in report["by_role"].items():
        rows.append((f"  {role}", f"{n:,}"))
    width = max(len(k) for k, _ in rows)
    lines = headline(report) + [""] + [f"{k.ljust(width)}  {v}" for k, v in rows]
    for item in report.get("per_message", []):
        lines.append(f"#{item['index']:<5} {str(item['role']):<10} {item['tokens']:>8,}")
    return "\n".join(lines) + "\n"


@record(frozen=True)
class Options(BudgetOptions):
    method: str = option(EXACT, flag="--method", choices=(EXACT, ROUGH), show_default=True,
                         help="exact: tiktoken; rough: Hermes's character estimate.")
    encoding: str | None = option(flag="--encoding", choices=("o200k_base", "cl100k_base"),
                                  help="Encoding for --method exact (default: from the model).")
    usage_path: str | None = option(flag="--usage", path="file",
                                    help="Provider usage JSON whose prompt tokens replace the estimate.")
    per_message: bool = option(False, flag="--per-message", kind=bool, help="Add a row per message.")
    report_format: str | None = option(
        flag="--format", choices=("json", "jsonl", "table", "csv"),
        help="Default: table when the report goes to a terminal, else JSON (one report a line; jsonl is the "
             "same). Over several transcripts, table and csv give one row each (its file and line) and a "
             "total row.")
    sort: str | None = option(flag="--sort", choices=("tokens", "cost", "pressure"),
                              help="Rows of a several-transcript table or csv, largest first.")
    tee: bool = option(False, flag="--tee", kind=bool,
                       help="Pass the input through to stdout unchanged (not rewritten for the wire: "
                            "the one command that does not); report on stderr.")
    check: bool = option(False, flag="--check", kind=bool, help="Exit 1 when a request reaches the threshold.")
    forecast: bool = option(False, flag="--forecast", kind=bool,
                            help="Add what compacting now would do: tokens saved per request, cached tokens "
                                 "it breaks, the requests after which it pays back (offline extractive "
                                 "summary, rough counts, the model's cache prices).")


def build(options: Options, ctx, *, pretty: bool = False):
    """``estimate`` of one document read by :func:`hermesctx.transcripts.documents`:
    ``(stdout bytes, stderr text or None, failure)`` for
    :func:`hermesctx.transcripts.report_each`; the failure (with ``check``, when it would
    compress) says why."""
    from hermesctx import jsonio

    settings = ctx.settings_with(flags(options))
    env = ctx.env
    table = options.report_format == "table"
    if options.report_format is None:  # a table for a person, JSON for a program
        table = env.stderr_isatty if options.tee else env.stdout_isatty
    rows = None
    if (table or options.report_format == "csv") and not options.tee and not options.per_message:
        rows = Rows(options.report_format == "csv", options.sort)
    usage = None
    if options.usage_path:
        from hermesctx.stages.normalize_usage import normalize_usage

        usage = normalize_usage(jsonio.read_json_file(options.usage_path), provider=None)

    def run(doc):
        report = estimate(doc.data, **ctx.model(settings, doc.data), method=options.method,
                          encoding=options.encoding, usage=usage, per_message=options.per_message,
                          **ctx.budget_rules(settings))
        for warning in report.get("warnings", ()):
            ctx.env.warn(warning)
        _recorded_usage(doc, report)
        if options.forecast:
            report["forecast"] = _forecast(doc.data, report, ctx, settings)
        if doc.file is not None:  # the FILE (and line) it came from, when there are several
            report["file"] = doc.file
            if doc.line is not None:
                report["line"] = doc.line
        failed = None
        if options.check and report["would_compress"]:
            failed = (f"{report['prompt_tokens']:,} prompt tokens reach the compression threshold of "
                      f"{report['budgets']['threshold_tokens']:,}")
        if rows is not None:
            rows.add(report, doc.file, doc.line)
            return b"", None, failed
        text = format_table(report).encode() if table else jsonio.dumps(report, pretty=pretty)
        if not options.tee:
            return text, None, failed
        raw = doc.raw if doc.raw is not None else jsonio.dumps(doc.data)  # a log: as OpenAI JSON
        return (raw if raw.endswith(b"\n") else raw + b"\n"), text.decode(), failed

    if rows is not None:
        run.finish = rows.render
    return run


class Rows:
    """``estimate`` over several transcripts as one table (or CSV): a row per transcript, named by its
    file and line, and a total row. One transcript alone keeps the whole table of its figures."""

    COLUMNS = ("file", "line", "model", "messages", "tokens", "pressure", "cost_usd", "compress")

    def __init__(self, csv: bool, sort: str | None):
        self.csv, self.sort, self.reports = csv, sort, []

    def add(self, report: dict, file: str | None, line: int | None) -> None:
        self.reports.append((report, file, line))

    @staticmethod
    def _row(r: dict, file: str | None, line: int | None) -> dict:
        cost = (r.get("prompt_cost") or {}).get("amount_usd")
        return {"file": file or "-", "line": line or "", "model": r["model"] or "",
                "messages": r["messages"], "tokens": r["prompt_tokens"], "pressure": r["pressure_percent"],
                "cost_usd": float(cost) if cost is not None else None,
                "compress": "yes" if r["would_compress"] else "no"}

    def render(self) -> bytes:
        if not self.reports:
            return b""
        if len(self.reports) == 1 and not self.csv:
            return format_table(self.reports[0][0]).encode()
        rows = [self._row(*entry) for entry in self.reports]
        if self.sort:
            key = {"tokens": "tokens", "cost": "cost_usd", "pressure": "pressure"}[self.sort]
            rows.sort(key=lambda row: -(row[key] or 0))
        costs = [row["cost_usd"] for row in rows if row["cost_usd"] is not None]
        total = {"file": "total", "line": "", "model": "", "messages": sum(row["messages"] for row in rows),
                 "tokens": sum(row["tokens"] for row in rows), "pressure": "",
                 "cost_usd": round(sum(costs), 6) if costs else None,
                 "compress": f"{sum(row['compress'] == 'yes' for row in rows)} of {len(rows)}"}
        if self.csv:
            import csv
            import io

            out = io.StringIO()
            writer = csv.DictWriter(out, self.COLUMNS, lineterminator="\n")
            writer.writeheader()
            writer.writerows([*rows, total])
            return out.getvalue().encode()
        shown = [[str(row["file"]), str(row["line"]), row["model"], f"{row['messages']:,}", f"{row['tokens']:,}",
                  f"{row['pressure']}%" if row["pressure"] != "" else "",
                  f"${row['cost_usd']:.4f}" if row["cost_usd"] is not None else "-", row["compress"]]
                 for row in [*rows, total]]
        head = ["file", "line", "model", "messages", "tokens", "pressure", "cost", "compress"]
        widths = [max(len(x) for x in column) for column in zip(head, *shown)]
        right = {3, 4, 5, 6}

        def line(cells):
            return "  ".join(c.rjust(w) if k in right else c.ljust(w)
                             for k, (c, w) in enumerate(zip(cells, widths))).rstrip()
        return ("\n".join([line(head), *map(line, shown[:-1]), line(["-" * w for w in widths]), line(shown[-1])])
                + "\n").encode()


def _forecast(data: Any, report: dict, ctx, settings) -> dict:
    """Issue 34: ``--forecast`` (:func:`hermesctx.cost.forecast`)."""
    from hermesctx.cost import forecast
    from hermesctx.messages import messages_of

    return forecast(messages_of(data), model=report["model"], provider=settings["model.provider"],
                    summary_model=settings["auxiliary.compression.model"], budgets=ctx.budgets(settings, data)[0])


def _recorded_usage(doc, report: dict) -> dict | None:
    """For a session log that recorded its usage: that figure beside the estimate (added to
    ``report`` as ``recorded_usage``)."""
    info = getattr(doc, "info", None)
    if not info or "usage" not in info:
        return None
    from hermesctx.stages.convert import usage_report

    recorded = usage_report(info, report)
    if recorded is not None:
        report["recorded_usage"] = recorded
    return recorded
