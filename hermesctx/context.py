"""What a command runs in: the injected environment, the settings (read once per process) and
the one rule for which model, window and budgets apply to a document.

Commands and the pipeline never touch ``sys.*`` directly; they get an :class:`Env` (tests run
them in-process with their own streams and environment). A :class:`Context` adds the settings
file, read once however many stages use it, and :meth:`Context.budgets`, the only place that
decides "the document's own model wins over the config, a flag wins over both".
"""

from __future__ import annotations

import os
import sys

from hermesctx.record import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:  # read on first use (Context.settings): a command that reads none skips its imports
    from collections.abc import Mapping
    from typing import Any, BinaryIO, TextIO

    from hermesctx.config import Settings


def plural(n: int, noun: str, many: str | None = None) -> str:
    """``1 argument``, ``3 arguments`` (``many``: an irregular plural)."""
    return f"{n:,} {noun if n == 1 else many or noun + 's'}"


@record
class Env:
    stdin: BinaryIO
    stdout: BinaryIO
    stderr: TextIO
    environ: Mapping[str, str] = field(default_factory=dict)
    stdin_isatty: bool = False
    stderr_isatty: bool = False
    stdout_isatty: bool = False
    quiet: bool = False
    progress: Any = None  # a hermesctx.transcripts.Progress while one is shown
    max_input: int | None = None  # --max-input-size: what gzip input may inflate to
    context: Any = None  # the command's first Context: its settings (input.max_bytes) when asked
    _warned: set = field(default_factory=set, repr=False)

    @classmethod
    def from_process(cls) -> Env:
        return cls(
            stdin=sys.stdin.buffer, stdout=sys.stdout.buffer, stderr=sys.stderr,
            environ=os.environ, stdin_isatty=sys.stdin.isatty(),
            stderr_isatty=sys.stderr.isatty(), stdout_isatty=sys.stdout.isatty(),
        )

    def input_cap(self) -> int | None:
        """What gzip input may inflate to: ``--max-input-size``, else ``input.max_bytes`` of the
        command's settings (read only now, for gzip input), else None (the default cap)."""
        if self.max_input is not None:
            return self.max_input
        if self.context is None:
            return None
        from hermesctx.jsonio import parse_size

        return parse_size(self.context.settings["input.max_bytes"])

    def warn(self, message: str) -> None:
        """One line on stderr, secrets redacted; the same warning is given once per run, not
        once per line."""
        if self.quiet or message in self._warned:  # (a batch gives one warning per line: redact it once)
            return
        self._warned.add(message)
        from hermesctx.redact import redact

        line = f"hermesctx: warning: {redact(message)}"
        if line not in self._warned:  # texts that differ only where the mask hides are one warning
            self._warned.add(line)
            self._line(line)

    def info(self, message: str) -> None:
        if not self.quiet:
            from hermesctx.redact import redact

            self._line(redact(message))

    def _line(self, text: str) -> None:
        # one write, not print's two (text, then the newline): an unbuffered stderr
        # (PYTHONUNBUFFERED, a report line per document of a batch) makes each a system call
        self.stderr.write(f"{text}\n")
        self.stderr.flush()

    @property
    def color(self) -> bool:
        return self.stderr_isatty and "NO_COLOR" not in self.environ


class Context:
    """An :class:`Env`, the settings of ``config_path`` (loaded on first use, then kept) and
    the per-document model rule. ``reports``: whether anything reads the stages' reports (a
    stage may skip costly measurements when not); ``json_reports``: whether their JSON is
    (``--report``, ``run``), not only the line on stderr."""

    def __init__(self, env: Env, config_path: str | None = None, *, settings: Settings | None = None,
                 reports: bool = True):
        self.env = env
        self.config_path = config_path
        self.reports = reports
        self.json_reports = True
        self._settings = settings
        self._budgets: dict = {}
        if env.context is None:
            env.context = self

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            from hermesctx.config import load_settings

            self._settings = load_settings(self.config_path, env=self.env.environ)
        return self._settings

    def settings_with(self, flags: Mapping[str, Any]) -> Settings:
        """The settings with a stage's flag values (dotted keys; None = not given) on top,
        checked as the config file's values are. The file is not read again."""
        return self.settings.with_flags(flags)

    @staticmethod
    def model(settings: Settings, doc: Any = None) -> dict[str, Any]:
        """Model, window and provider for one document: a ``--model`` flag beats the
        document's own ``model`` key, which beats the environment and the config file."""
        model = settings["model.default"]
        if (settings.source("model.default") != "flag" and isinstance(doc, dict)
                and isinstance(doc.get("model"), str)):
            model = doc["model"]
        return {"model": model, "context_length": settings["model.context_length"],
                "provider": settings["model.provider"]}

    @staticmethod
    def budget_rules(settings: Settings) -> dict[str, Any]:
        """Keyword arguments for :func:`hermesctx.budgets.compute_budgets` from the settings."""
        return {"threshold": settings["compression.threshold"],
                "target_ratio": settings["compression.target_ratio"],
                "rules": settings["compression.budget_rules"],
                "max_tokens": settings["model.max_tokens"]}

    def budgets(self, settings: Settings, doc: Any = None):
        """``(Budgets, ContextWindow)`` for one document, computed once per distinct model
        and rule set in this process."""
        from hermesctx.budgets import resolve_budgets

        kwargs = {**self.model(settings, doc), **self.budget_rules(settings)}
        key = tuple(kwargs.items())
        found = self._budgets.get(key)
        if found is None:
            found = self._budgets[key] = resolve_budgets(**kwargs)
        return found

    def window(self, settings: Settings, doc: Any = None) -> int:
        """The context window (tokens) of the document's model."""
        return self.budgets(settings, doc)[1].length
