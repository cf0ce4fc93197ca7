"""What hermesctx is made of, declared once: every command, pipeline stage, summarizer and input
format by name, with the module that implements it and what it is.

Commands (:data:`hermesctx.cli.COMMANDS`), the pipeline (:data:`hermesctx.pipeline.STAGES`),
the summarizers (:mod:`hermesctx.summary`, the choices of ``compress`` and ``trajectory``), the
formats (:mod:`hermesctx.formats`: ``--from`` and ``--to``, and the order detection tries them),
config (``summarizer.name``), the tests and the benchmarks all read this table, never a list of
their own. Built-ins are :class:`~hermesctx.plugins.Plugin` entries, as an installed plugin's entry
point is (model: llm's plugin manager, jc's parser list), loaded by the same :func:`load`; a plugin
is found only when a name is not a built-in one (:mod:`hermesctx.plugins`).

Declarative: names and module paths only, nothing imported until a component is used, so reading
the table costs a start nothing. Adding a built-in is one :func:`register` line below.
"""

from __future__ import annotations

import sys

from hermesctx.record import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

STAGES = "hermesctx.stages"
SUMMARIZERS = "hermesctx.summarizers"
ENGINES = "hermesctx.engines"
GROUPS = {STAGES: "stage", SUMMARIZERS: "summarizer", ENGINES: "engine"}  # what a plugin may be
# what only hermesctx itself registers (below)
COMMANDS = "hermesctx.commands"
FORMATS = "hermesctx.formats"
KINDS = {**GROUPS, COMMANDS: "command", FORMATS: "format"}


@record(frozen=True)
class Plugin:
    """One component: a built-in declared below, or an installed plugin's entry point
    (:func:`hermesctx.plugins.installed`)."""

    group: str
    name: str
    value: str  # "module:attr", as the entry point says
    package: str  # the distribution that registered it, with its version
    traits: tuple = ()  # (name, value) pairs a built-in declares (:func:`hermesctx.registry.register`)

    @property
    def kind(self) -> str:
        return KINDS[self.group]

    def trait(self, name: str, default: Any = None) -> Any:
        return next((value for key, value in self.traits if key == name), default)

    def label(self) -> str:
        return f"{self.kind} plugin {self.name!r} ({self.package})"


BUILT_IN = "hermesctx (built in)"  # the package a built-in entry names
_ENTRIES: dict[str, list[Plugin]] = {COMMANDS: [], STAGES: [], SUMMARIZERS: [], FORMATS: []}


def register(group: str, name: str, value: str, **traits: Any) -> Plugin:
    """Declare the built-in ``name`` of ``group``: ``value`` is ``"module"`` or ``"module:attr"``,
    as an entry point names what it loads; ``traits`` say what it is (a format's ``detector`` and
    ``priority``, whether it ``writes``). Entries are listed in the order they are declared."""
    entry = Plugin(group, name, value, BUILT_IN, tuple(sorted(traits.items())))
    _ENTRIES[group].append(entry)
    return entry


def entries(group: str, **traits: Any) -> tuple[Plugin, ...]:
    """The built-ins of ``group`` in declaration order (those whose traits are ``traits``)."""
    return tuple(e for e in _ENTRIES[group] if all(e.trait(k) == v for k, v in traits.items()))


def names(group: str, **traits: Any) -> tuple[str, ...]:
    return tuple(e.name for e in entries(group, **traits))


def find(group: str, name: str) -> Plugin | None:
    """The built-in ``name`` of ``group``, or None."""
    return next((e for e in _ENTRIES[group] if e.name == name), None)


def load(entry: Plugin) -> Any:
    """What ``entry`` names, a built-in's or an installed plugin's alike: ``"module"`` or
    ``"module:attr.attr"`` (extras in brackets ignored), as :meth:`importlib.metadata.EntryPoint.load`
    reads it."""
    module, _, attr = entry.value.partition(":")
    __import__(module.strip())  # the import statement's own function (importlib's package costs ~0.5 ms a start)
    found = sys.modules[module.strip()]
    for name in attr.partition("[")[0].strip().split(".") if attr else ():
        found = getattr(found, name)
    return found


def detection_order(detector: str) -> tuple[Plugin, ...]:
    """The formats told by ``detector``, in the order detection tries them (lowest priority first)."""
    return tuple(sorted(entries(FORMATS, detector=detector), key=lambda e: e.trait("priority")))


# --- the built-ins ---------------------------------------------------------------------------

# commands, in the order --help lists them
register(COMMANDS, "estimate", "hermesctx.cli.commands.estimate")
register(COMMANDS, "prune", "hermesctx.cli.commands.prune")
register(COMMANDS, "sanitize", "hermesctx.cli.commands.sanitize")
register(COMMANDS, "validate", "hermesctx.cli.commands.validate")
register(COMMANDS, "compress", "hermesctx.cli.commands.compress")
register(COMMANDS, "cache-mark", "hermesctx.cli.commands.cache_mark")
register(COMMANDS, "normalize-usage", "hermesctx.cli.commands.normalize_usage")
register(COMMANDS, "replay", "hermesctx.cli.commands.replay")
register(COMMANDS, "spill", "hermesctx.cli.commands.spill")
register(COMMANDS, "trajectory", "hermesctx.cli.commands.trajectory")
register(COMMANDS, "convert", "hermesctx.cli.commands.convert")
register(COMMANDS, "run", "hermesctx.cli.commands.run")
register(COMMANDS, "recall", "hermesctx.cli.commands.recall")
register(COMMANDS, "config", "hermesctx.cli.commands.config")
register(COMMANDS, "mcp", "hermesctx.cli.commands.mcp")
register(COMMANDS, "completion", "hermesctx.cli.commands.completion")
register(COMMANDS, "man", "hermesctx.cli.commands.man")

# pipeline stages (``hermesctx run``), in the order a pipeline usually runs them
register(STAGES, "spill", "hermesctx.stages.spill")
register(STAGES, "prune", "hermesctx.stages.prune")
register(STAGES, "compress", "hermesctx.stages.compress")
register(STAGES, "sanitize", "hermesctx.stages.sanitize")
register(STAGES, "cache-mark", "hermesctx.stages.cache_mark")

# summarizers (``--summarizer``, config ``summarizer.name``)
register(SUMMARIZERS, "extractive", "hermesctx.summary.extractive:ExtractiveSummarizer")
register(SUMMARIZERS, "anthropic", "hermesctx.summary.providers:AnthropicSummarizer")
register(SUMMARIZERS, "openai", "hermesctx.summary.providers:OpenAISummarizer")

# input formats, in the order --from lists them. detector: how auto-detection tells one:
# ``document`` (a whole document, by its own keys: detect_document tries these first) and ``log``
# (a session log, by its first line: detect_line), each tried by ascending priority; then
# ``items`` (Responses input items) and ``chat`` (OpenAI / Anthropic chat, what is left), told by
# their own rules. A module with ``sniff(head)`` is also told by its first bytes (SQLite, Markdown).
# ``writes``: --to can write it
register(FORMATS, "openai", "hermesctx.formats.openai", detector="chat", priority=1, writes=True)
register(FORMATS, "anthropic", "hermesctx.formats.anthropic", detector="chat", priority=0, writes=True)
register(FORMATS, "responses", "hermesctx.formats.responses", detector="items", priority=0)
register(FORMATS, "sharegpt", "hermesctx.formats.sharegpt", detector="document", priority=0, writes=True)
register(FORMATS, "claude-code", "hermesctx.formats.claude_code", detector="log", priority=0)
register(FORMATS, "codex", "hermesctx.formats.codex", detector="log", priority=1)
register(FORMATS, "opencode", "hermesctx.formats.opencode", detector="document", priority=10)
register(FORMATS, "opencode-go", "hermesctx.formats.opencode_go", detector="document", priority=11)
register(FORMATS, "openhands", "hermesctx.formats.openhands", detector="document", priority=12)
register(FORMATS, "cline", "hermesctx.formats.cline", detector="document", priority=13)
register(FORMATS, "aider", "hermesctx.formats.aider", detector="document", priority=14)
register(FORMATS, "gemini", "hermesctx.formats.gemini", detector="document", priority=15)
register(FORMATS, "goose", "hermesctx.formats.goose", detector="document", priority=16)
register(FORMATS, "opencode-run", "hermesctx.formats.opencode_run", detector="log", priority=2)
register(FORMATS, "copilot", "hermesctx.formats.copilot", detector="log", priority=3)
