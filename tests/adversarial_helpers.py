"""A fixed-text summarizer (test only; it implements the Summarizer interface of
hermesctx.summary, it does not replace any of our code) and the fixed texts the
differential tests give both it and Hermes's replaced LLM call."""

from __future__ import annotations

from hermesctx.summary import SummarizerError

FIXED_SUMMARIES = [
    "## Goal\nShip it. Key sk-proj-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c\n\n## Completed Actions\n1. READ app.py",
    "<think>reasoning</think>\n## Historical Task Snapshot\nLLM text\n## Goal\nX",
    "## Goal\nX\n\n## Historical Task Snapshot\nLLM text\nmore\n## Blocked\nNone.",
    "   body with spaces   ",
    "<think>only thinking</think>",
]
FIXED_FAILURES = [
    "boom",
    "HTTP 400: context_length_exceeded for model aux-small " + "z" * 250 + " sk-abcdefghijklmnopqrstuvwx",
    "  padded error  ",
    "bad " * 70,
]


class FixedSummarizer:
    """Answers every request with the same text (or raises SummarizerError); keeps the requests."""

    name = "fixed"

    def __init__(self, text: str | None = None, *, fail: str | None = None):
        self.text, self.fail = text, fail
        self.requests: list = []

    def summarize(self, request) -> str:
        self.requests.append(request)
        if self.fail:
            raise SummarizerError(self.fail)
        return self.text
