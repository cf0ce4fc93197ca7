"""Summarizer ``echo``: a fixed, checkable summary naming how many turns it was given."""

from __future__ import annotations


class EchoSummarizer:
    name = "echo"

    def __init__(self, **options):
        self.model = options.get("model")

    def summarize(self, request):
        return f"ECHO SUMMARY of {len(request.turns)} turns (model {self.model})"


class HangingSummarizer:
    name = "hangs"

    def __init__(self, **options):
        pass

    def summarize(self, request):
        import time

        time.sleep(3600)


class ExitingSummarizer:
    name = "exits"

    def __init__(self, **options):
        pass

    def summarize(self, request):
        raise SystemExit(3)
