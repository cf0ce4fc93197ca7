"""Third-party stages, summarizers and context engines, registered as Python entry points.

Three entry-point groups; each entry's name is what a config or a flag names:

* ``hermesctx.stages``: a module (or any object) with the face of a built-in stage
  (:mod:`hermesctx.stages`): ``Options`` (a frozen dataclass whose fields declare their flags
  with ``dataclasses.field(default=..., metadata=hermesctx.options.metadata("--flag", ...))``,
  or a :func:`hermesctx.record.record` with :func:`hermesctx.options.option` fields, as the
  built-in stages declare theirs; a ``key`` only one of hermesctx's settings; optional, no
  options when absent), ``build(options, ctx)`` returning ``doc -> (doc, report)``, and
  ``describe(report) -> str`` (optional). A ``run`` pipeline names it like a built-in stage,
  options checked by its ``Options``.
* ``hermesctx.summarizers``: a class (or factory) called with the keyword arguments the
  built-in model summarizers take (``model``, ``base_url``, ``api_key``, ``timeout``,
  ``retries``, ``env``, ``max_failures``, ``warn``; take ``**kwargs`` for the rest), returning
  an object with ``name`` and ``summarize(request) -> str`` (:class:`hermesctx.summary.Summarizer`).
  ``summarizer.name`` / ``--summarizer`` select it.
* ``hermesctx.engines``: what replaces the built-in ``compressor`` in ``compress`` and in
  ``run``'s compress stage when config ``context.engine`` names it: an object (a module, an
  instance) with ``compress(messages, context) -> messages | (messages, report)``, or a class
  or factory called without arguments that returns one. ``context`` is an
  :class:`EngineContext`. The input list is never to be mutated.

The built-ins are entries of the same kind (:class:`~hermesctx.registry.Plugin`), declared in
:mod:`hermesctx.registry` and imported by the same :func:`hermesctx.registry.load`; a name is
looked up among them first. Discovery is lazy: :mod:`importlib.metadata` is read only when a name is not a built-in one,
or by ``config show`` / ``config check``, never at the start of a command that needs none.

Errors, each one line naming the plugin and its package: a name nobody installed is a usage
error (exit 2) listing what is installed; a plugin that fails to import, has the wrong face or
raises while it runs is a :class:`PluginError`, exit 4 (a third-party component failed, as a
provider does: not a bug of hermesctx, so not 70). A plugin that raises one of hermesctx's own
errors (:mod:`hermesctx.errors`) keeps that error and its status.
"""

from __future__ import annotations

from hermesctx import registry
from hermesctx.errors import HermesctxError, UsageError
from hermesctx.exit import ExitStatus
from hermesctx.record import field, is_record, record
from hermesctx.registry import ENGINES, GROUPS, STAGES, SUMMARIZERS, Plugin  # noqa: F401 - what plugins.* names

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

BUILTIN_ENGINE = "compressor"


class PluginError(HermesctxError):
    """A plugin could not be loaded or failed while it ran (exit 4)."""

    status = ExitStatus.UPSTREAM


_found: dict[str, list] = {}
_loaded: dict[tuple[str, str], Any] = {}


def installed(group: str) -> list[Plugin]:
    """The entry points of ``group``, sorted by name (the first of a duplicated name wins),
    read once per process."""
    if group not in _found:
        from importlib.metadata import entry_points

        plugins: dict[str, Plugin] = {}
        for ep in entry_points(group=group):
            dist = getattr(ep, "dist", None)
            package = f"{dist.metadata['Name']} {dist.version}" if dist is not None else "unknown package"
            plugins.setdefault(ep.name, Plugin(group, ep.name, ep.value, package))
        _found[group] = sorted(plugins.values(), key=lambda p: p.name)
    return _found[group]


def names(group: str) -> list[str]:
    return [p.name for p in installed(group)]


def find(group: str, name: str) -> Plugin | None:
    return next((p for p in installed(group) if p.name == name), None)


def load(group: str, name: str, *, builtins: tuple[str, ...] = ()) -> tuple[Plugin, Any]:
    """The object the entry point ``name`` of ``group`` names, imported once. A name not
    installed is a :class:`UsageError` listing the built-in and installed names; an import that
    fails is a :class:`PluginError`."""
    plugin = find(group, name)
    if plugin is None:
        kind = GROUPS[group]
        known = [*builtins, *(n for n in names(group) if n not in builtins)]
        raise UsageError(f"unknown {kind} {name!r} (installed: {', '.join(known) or 'none'})",
                         hint=f"a plugin {kind} registers in the entry-point group {group}")
    key = (group, name)
    if key not in _loaded:
        # the one loader, the built-ins' too
        _loaded[key] = guarded(plugin, lambda: registry.load(plugin), "failed to load")()
    return plugin, _loaded[key]


def _one_line(exc: BaseException) -> str:
    """What a plugin raised, as one line, its secrets masked (an import error can quote a key)."""
    from hermesctx.redact import redact

    if isinstance(exc, SystemExit):
        return f"it called sys.exit({exc.code!r})"
    text = " ".join(str(exc).split())
    return redact(f"{type(exc).__name__}: {text}" if text else type(exc).__name__)


def guarded(plugin: Plugin, fn: Callable, what: str = "failed", timeout: float | None = None) -> Callable:
    """``fn`` inside hermesctx's boundary: what it raises (other than hermesctx's own errors and
    Ctrl-C), ``SystemExit`` too, becomes a one-line :class:`PluginError` naming the plugin.
    ``timeout``: seconds it may take; it then runs in a thread of its own, and past them the
    error says so (the thread is a daemon: it ends with the process)."""
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (HermesctxError, KeyboardInterrupt):
            raise
        except BaseException as exc:  # noqa: BLE001 - a plugin's failure (sys.exit too), said as one line
            raise PluginError(f"{plugin.label()} {what}: {_one_line(exc)}") from None
    if timeout is None:
        return call
    return _with_deadline(plugin, call, timeout)


def _with_deadline(plugin: Plugin, call: Callable, timeout: float) -> Callable:
    def deadline(*args, **kwargs):
        import threading

        box: list = []

        def work():
            try:
                box.append((True, call(*args, **kwargs)))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                box.append((False, exc))

        worker = threading.Thread(target=work, name=f"hermesctx-plugin-{plugin.name}", daemon=True)
        worker.start()
        worker.join(timeout)
        if not box:
            raise PluginError(f"{plugin.label()} did not finish within {timeout:g} s and was abandoned",
                              hint="--timeout (auxiliary.compression.timeout) sets the deadline")
        ok, value = box[0]
        if not ok:
            raise value
        return value
    return deadline


# --- stages ------------------------------------------------------------------------------------

@record(frozen=True)
class _NoOptions:
    """The options of a plugin stage that declares none."""


@record(frozen=True)
class StagePlugin:
    """A plugin stage with the face of a built-in stage module."""

    plugin: Plugin
    Options: type
    build: Callable
    describe: Callable | None


def stage(name: str, builtins: tuple[str, ...] = ()) -> StagePlugin:
    plugin, obj = load(STAGES, name, builtins=builtins)
    build = getattr(obj, "build", None)
    if not callable(build):
        raise PluginError(f"{plugin.label()} is not a stage: it has no build(options, ctx)")
    options = getattr(obj, "Options", _NoOptions)
    if not isinstance(options, type) or not is_record(options):
        raise PluginError(f"{plugin.label()}: its Options is not a dataclass "
                          "(nor a @hermesctx.record.record)")
    from hermesctx.config import KEYS
    from hermesctx.options import specs

    for f, spec in specs(options):  # a flag may override only a setting hermesctx has
        if spec.key and spec.key not in KEYS:
            raise PluginError(f"{plugin.label()}: option {f.name} names the config key {spec.key}, "
                              "which hermesctx does not have")
    describe = getattr(obj, "describe", None)

    def built(opts, ctx):
        run = guarded(plugin, build, "failed to build")(opts, ctx)
        if not callable(run):
            raise PluginError(f"{plugin.label()}: build() returned {type(run).__name__}, not a function")
        return _checked_stage(plugin, run, _seconds(ctx.settings["auxiliary.compression.timeout"]))

    return StagePlugin(plugin, options, built,
                       guarded(plugin, describe, "failed to describe") if callable(describe) else None)


def _checked_stage(plugin: Plugin, run: Callable, timeout: float | None = None) -> Callable:
    guarded_run = guarded(plugin, run, timeout=timeout)

    def one(doc):
        out = guarded_run(doc)
        if not (isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], (dict, type(None)))):
            raise PluginError(f"{plugin.label()} returned {type(out).__name__}, not (document, report)")
        return out
    return one


# --- summarizers -------------------------------------------------------------------------------

def summarizer(name: str, builtins: tuple[str, ...], **options: Any):
    """A plugin summarizer, built with ``options``; checked for ``summarize``, which then runs
    inside the boundary, under the deadline ``options["timeout"]`` (:func:`guarded`)."""
    plugin, factory = load(SUMMARIZERS, name, builtins=builtins)
    made = guarded(plugin, factory, "failed to start")(**options) if callable(factory) else factory
    if not callable(getattr(made, "summarize", None)):
        raise PluginError(f"{plugin.label()} is not a summarizer: it has no summarize(request)")
    label = getattr(made, "name", None)
    return _Summarizer(label if isinstance(label, str) else name, made,
                       guarded(plugin, made.summarize, "failed to summarize", _seconds(options.get("timeout"))))


class _Summarizer:
    """A plugin summarizer as hermesctx calls it: ``summarize`` guarded; the rest its own."""

    def __init__(self, name: str, made: Any, summarize: Callable):
        self.name, self._made, self.summarize = name, made, summarize

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._made, attr)


def _seconds(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


# --- engines -----------------------------------------------------------------------------------

@record(frozen=True)
class EngineContext:
    """What a context engine is told about the transcript it compacts."""

    context_length: int  # the model's window, in tokens
    threshold_tokens: int  # compression triggers at this size
    tail_token_budget: int  # tokens the built-in compressor keeps verbatim at the end
    max_summary_tokens: int
    protect_first_n: int
    protect_last_n: int
    focus: str | None
    summarizer: Any  # the summarizer the settings chose (a Summarizer): engines may use it
    settings: Any  # every setting, read-only (``settings["context.engine"]``)
    warn: Callable[[str], None] = field(default=print)


def engine(name: str, timeout: float | None = None):
    """The ``compress(messages, context)`` function of the engine ``name``, guarded, and stopped
    after ``timeout`` seconds a transcript."""
    plugin, obj = load(ENGINES, name, builtins=(BUILTIN_ENGINE,))
    if isinstance(obj, type) or (not callable(getattr(obj, "compress", None)) and callable(obj)):
        obj = guarded(plugin, obj, "failed to start")()  # a class or a factory: one engine per stage
    compress = getattr(obj, "compress", None)
    if not callable(compress):
        raise PluginError(f"{plugin.label()} is not a context engine: it has no compress(messages, context)")
    return plugin, guarded(plugin, compress, timeout=_seconds(timeout))


def run_engine(plugin: Plugin, compress: Callable, messages: list, context: EngineContext) -> tuple[list, dict]:
    """The engine on a message list: ``(messages, report)``, its output checked as a message
    list (its report, if it gives one, kept under ``engine_report``)."""
    from hermesctx import tokens
    from hermesctx.messages import check_messages

    out = compress(messages, context)
    report: dict = {}
    if isinstance(out, tuple) and len(out) == 2 and isinstance(out[1], (dict, type(None))):
        out, report = out[0], out[1] or {}
    if not isinstance(out, list):
        raise PluginError(f"{plugin.label()} returned {type(out).__name__}, not a list of messages")
    try:
        check_messages(out)
    except HermesctxError as exc:
        raise PluginError(f"{plugin.label()} returned an invalid transcript: {exc}") from None
    before, after = tokens.rough_messages(messages), tokens.rough_messages(out)
    changed = out != messages
    headline = (f"Compressed: {len(messages)} → {len(out)} messages" if changed
                else f"No changes from engine {plugin.name}: {len(messages)} messages")
    return out, {"engine": plugin.name, "engine_package": plugin.package, "compressed": changed,
                 "headline": headline, "reason": None if changed else "the engine changed nothing",
                 "token_line": f"Approx request size: ~{before:,} → ~{after:,} tokens",
                 "summarizer": None, "messages_before": len(messages), "messages_after": len(out),
                 "tokens_before": before, "tokens_after": after, "engine_report": report}


# --- listing (config show) ---------------------------------------------------------------------

def listing() -> list[dict]:
    """Every installed plugin of the three groups: ``{"kind", "name", "package", "value"}``."""
    return [{"kind": p.kind, "name": p.name, "package": p.package, "value": p.value}
            for group in GROUPS for p in installed(group)]

