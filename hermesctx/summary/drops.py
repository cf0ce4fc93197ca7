"""The drop ledger: which facts of a compacted region survive nowhere in the output (D16).

The facts are what a successor agent needs from the region, drawn from its tool results, the
assistant's prose and the user's turns (:mod:`hermesctx.summary.ledger`), not from the names of
its files and commands, which every method keeps:

* ``error``: the key line of every failed call (exception, compiler, test or patch error), verbatim;
* ``outcome``: what every run printed of its outcome (test counts, files changed, versions);
* ``value``: the settings (``key: value`` lines) results showed whose value a later turn uses;
* ``change``: per changed file, the most distinctive line its last successful change added;
* ``decision``: the assistant's diagnoses and decisions with their reasons;
* ``constraint``: the user's constraints and preferences;
* ``next``: the open next step.

A fact survives when its text (whitespace folded, at most ``PROBE_CHARS`` characters of it) is
found anywhere in the output: a message's text or a tool call's arguments. A fact the turns kept
around the region say too is not counted (it was never at risk). The figure ``survived / facts``
is what the report shows in place of a coverage of names; ``make eval`` gives its correlation
with what a successor keeps (docs/eval.md).
"""

from __future__ import annotations

from hermesctx.messages import calls_of
from hermesctx.summary.ledger import Ledgers, extract, longest, one_line, plain
from hermesctx.summary.text import folded, text_view

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PROBE_CHARS = 60  # a fact is looked for by (at most) this many characters of its folded text
MIN_CHARS = 8  # shorter texts are no fact worth a line (`ok`, `}`)
LISTED = 50  # at most this many lost facts are listed in a report


def _probe(text: str) -> str:
    """What a fact is looked for by: its folded text, at most ``PROBE_CHARS`` characters of it, and
    of a text with masked secrets (``***``) its longest unmasked piece (the output may hold the
    secret itself, or the mask)."""
    text = folded(text.rstrip("…")).strip()
    if "***" in text:
        text = max(text.split("***"), key=len).strip()
    return text[:PROBE_CHARS]


def facts(turns: list, after: list = (), ledgers: Ledgers | None = None) -> list[tuple[str, str]]:
    """The region's facts, ``(kind, text)``, each once (``after``: the turns kept after it;
    ``ledgers``: the turns' ledgers when they were extracted already)."""
    led = ledgers if ledgers is not None else extract(turns, after)
    found: list[tuple[str, str]] = []
    found += led.seen  # every failure's key line, every run's outcome lines
    found += [("value", line) for _, line in led.facts]
    for f in led.files.values():
        if f.added:
            found.append(("change", longest(f.added)))
    found += [("decision", d) for d in (*led.decisions, *led.reasoned)]
    found += [("constraint", c) for c in led.constraints]
    if led.next_step:
        found.append(("next", led.next_step))
    out, seen = [], set()
    for kind, text in found:
        probe = _probe(text)
        if len(probe) >= MIN_CHARS and probe not in seen:
            seen.add(probe)
            out.append((kind, text))
    return out


def output_text(messages: list) -> str:
    """Everything a successor reads in ``messages``: texts and tool-call arguments, folded."""
    parts = []
    for msg in messages:
        if not isinstance(msg, dict):
            continue
        content = text_view(msg.get("content"))
        parts.append(plain(content) if msg.get("role") == "tool" else content)  # a JSON result's text fields
        for call in calls_of(msg):
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict):
                arguments = fn.get("arguments")
                parts.append(arguments if isinstance(arguments, str) else str(arguments))
            elif isinstance(call, dict) and "input" in call:
                parts.append(str(call.get("input")))
    return folded("\n".join(parts))


def drop_ledger(turns: list, output: list, archive: Any = None, kept: list | None = None, after: list = (),
                ledgers: Ledgers | None = None) -> dict:
    """``{"facts": N, "survived": K, "lost": [...]}`` for the region ``turns`` compacted into
    ``output``; each lost fact names its kind and text, and ``archive`` (a span id or a file)
    when the compacted turns are archived there. A fact the turns ``kept`` around the region say
    too (the original head and tail) is not counted: it was never at risk. ``after``: the
    original turns after the region (a value they use is one a later turn uses); ``ledgers``: the
    region's, when they were extracted already (``extract(turns, after)``)."""
    region = facts(turns, after, ledgers)
    if kept:
        around = output_text(kept)
        region = [(kind, fact) for kind, fact in region if _probe(fact) not in around]
    text = output_text(output)
    lost = []
    for kind, fact in region:
        if _probe(fact) not in text:
            entry = {"kind": kind, "text": one_line(fact, 200)}
            if archive:
                entry["archive"] = archive
            lost.append(entry)
    ledger = {"facts": len(region), "survived": len(region) - len(lost), "lost": lost[:LISTED]}
    if len(lost) > LISTED:
        ledger["lost_not_listed"] = len(lost) - LISTED
    return ledger


def explain(ledger: dict) -> str:
    """The drop ledger for a person: the figure, then each lost fact on a line."""
    n, k = ledger["facts"], ledger["survived"]
    if not n:
        return "drop ledger: the compacted region held no fact this ledger tracks"
    lines = [f"drop ledger: {k} of {n} facts of the compacted region survive in the output "
             f"({100 * k / n:.0f} %)" + ("; lost:" if k < n else "; none lost")]
    for entry in ledger["lost"]:
        where = f" [archived in {entry['archive']}]" if entry.get("archive") else ""
        lines.append(f"  {entry['kind']:<10} {entry['text']}{where}")
    if ledger.get("lost_not_listed"):
        lines.append(f"  … and {ledger['lost_not_listed']} more")
    return "\n".join(lines)
