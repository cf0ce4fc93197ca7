"""Stage ``tag``: puts ``[LABEL]`` in front of the last user message (a string content)."""

from __future__ import annotations

from dataclasses import dataclass, field

from hermesctx.messages import messages_of, with_messages
from hermesctx.options import metadata


@dataclass(frozen=True)  # (a plain dataclass; badkey.py declares a hermesctx record)
class Options:
    label: str | None = field(default="demo", metadata=metadata("--label", help="The tag."))
    times: int | None = field(default=1, metadata=metadata("--times", kind=int, low=1, high=3, help="How often."))


def build(options, ctx):
    prefix = f"[{options.label}] " * options.times

    def run(doc):
        messages = messages_of(doc)
        last = max((i for i, m in enumerate(messages) if m.get("role") == "user"
                    and isinstance(m.get("content"), str)), default=None)
        if last is None:
            return doc, {"tagged": 0, "label": options.label}
        out = list(messages)
        out[last] = {**out[last], "content": prefix + out[last]["content"]}
        return with_messages(doc, out), {"tagged": 1, "label": options.label}

    return run


def describe(report):
    return f"tagged {report['tagged']} message(s) with {report['label']}"
