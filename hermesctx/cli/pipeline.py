"""`hermesctx run`: the stages of a pipeline, in one process, on parsed documents.

A pipeline is a list from the config file (``pipeline:``), each entry a stage name or a
one-key mapping of a stage name to its options::

    pipeline:
      - spill
      - prune
      - compress: {if_needed: true}
      - sanitize
      - cache-mark: {ttl: 1h}

Options are the stage command's own options (``if_needed`` or ``if-needed``), with the same
defaults and the same code behind them, so ``hermesctx run`` produces exactly what the shell
pipe ``hermesctx spill | hermesctx prune | ...`` produces.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hermesctx.errors import UsageError

STAGES = ("spill", "prune", "compress", "sanitize", "cache-mark")
_IO_PARAMS = {"input", "jsonl", "pretty", "in_place", "backup", "report", "config_path", "check", "against",
              "source", "include_sidechains", "all_segments", "target", "lenient"}


@dataclass
class Stage:
    name: str
    options: dict
    run: Callable[[Any], tuple[Any, dict | None]]
    describe: Callable[[dict], str] | None


def _module(name: str):
    return importlib.import_module(f"hermesctx.cli.commands.{name.replace('-', '_')}")


def parse(entries: Any) -> list[tuple[str, dict]]:
    """``[(stage, options)]`` from the config's ``pipeline`` list; errors name the entry."""
    if not isinstance(entries, list) or not entries:
        raise UsageError("pipeline: expected a non-empty list of stages",
                         hint=f"e.g. pipeline: [prune, compress, sanitize]; stages: {', '.join(STAGES)}")
    out = []
    for i, entry in enumerate(entries):
        if isinstance(entry, str):
            name, options = entry, {}
        elif isinstance(entry, dict) and len(entry) == 1:
            name, options = next(iter(entry.items()))
            options = options or {}
        else:
            raise UsageError(f"pipeline[{i}]: expected a stage name or {{stage: {{options}}}}")
        if name not in STAGES:
            raise UsageError(f"pipeline[{i}]: unknown stage {name!r} (choose from {', '.join(STAGES)})")
        if not isinstance(options, dict):
            raise UsageError(f"pipeline[{i}] ({name}): options must be a mapping")
        out.append((name, options))
    return out


def _params(name: str, options: dict, config_path: str | None, where: str) -> dict:
    """The command's parameters: its click defaults, overridden by the options (type-checked)."""
    import click

    command = _module(name).command
    known = {p.name: p for p in command.params if p.name not in _IO_PARAMS}
    by_flag = {opt.lstrip("-").replace("-", "_"): p.name for p in known.values()
               for opt in getattr(p, "opts", ()) if opt.startswith("--")}
    ctx = click.Context(command)
    params: dict = {p.name: _default(p, ctx) for p in known.values()}
    for key, value in options.items():
        target = by_flag.get(str(key).replace("-", "_")) or (key if key in known else None)
        if target is None:
            raise UsageError(f"{where}: unknown option {key!r} for {name}",
                             hint=f"see `hermesctx {name} --help`")
        param = known[target]
        if getattr(param, "multiple", False):  # a repeatable flag: one value, a list, or {K: V} for K=V
            if isinstance(value, dict):
                value = [f"{k}={v}" for k, v in value.items()]
            elif not isinstance(value, (list, tuple)):
                value = [value]
        try:
            params[target] = param.type_cast_value(ctx, value)
        except click.BadParameter as exc:
            raise UsageError(f"{where}: {key}: {exc.message}") from None
    params["config_path"] = config_path
    return params


def _default(param, ctx):
    value = param.get_default(ctx)
    if type(value).__name__ == "Sentinel":  # click 8.2+: "no default"
        return () if getattr(param, "multiple", False) else (False if getattr(param, "is_flag", False) else None)
    return value


def build(entries: Any, env, *, config_path: str | None = None, enabled: bool = True) -> list[Stage]:
    """The stages, ready to run; ``enabled=False`` (config ``compression.enabled: false``)
    leaves the compress stages out, as Hermes does."""
    stages = []
    for i, (name, options) in enumerate(parse(entries)):
        if name == "compress" and not enabled:
            continue
        params = _params(name, options, config_path, f"pipeline[{i}] ({name})")
        module = _module(name)
        stage_module = importlib.import_module(f"hermesctx.stages.{name.replace('-', '_')}")
        stages.append(Stage(name, options, module.make(params, env), getattr(stage_module, "describe", None)))
    return stages


def run_document(stages: list[Stage], doc: Any, wire: str | None = None) -> tuple[Any, list[dict]]:
    """Every stage in order on one parsed document; the reports, one per stage. With ``wire``
    (a request format, see :func:`wire_format`) each stage's output goes through that send
    path, as each command's output does in the shell pipe ``hermesctx spill | hermesctx prune``."""
    from hermesctx.wire import send

    reports = []
    for stage in stages:
        doc, report = stage.run(doc)
        if wire is not None:
            counts: dict = {}
            doc = send.request(doc, wire, counts)
            if counts:
                report = {**(report or {}), "wire": counts}
        reports.append({"stage": stage.name, **(report or {})})
    return doc, reports


def wire_format(info: dict | None, target: str | None) -> str | None:
    """The send path a stage's output goes through between the stages of ``run``: that of the
    working format (OpenAI, or an Anthropic body worked on as it is), when the command writes
    a request (OpenAI or Anthropic, not ShareGPT)."""
    from hermesctx import formats

    info = info or {"format": formats.OPENAI}
    if formats.output_format(info, target) not in formats.PLAIN:
        return None
    found = info.get("format", formats.OPENAI)
    return found if found in formats.PLAIN else formats.OPENAI


def validate(entries: Any, config_path: str | None = None) -> list[str]:
    """Problems with a pipeline list, without building its stages."""
    try:
        parsed = parse(entries)
    except UsageError as exc:
        return [str(exc)]
    problems = []
    for i, (name, options) in enumerate(parsed):
        try:
            _params(name, options, config_path, f"pipeline[{i}] ({name})")
        except UsageError as exc:
            problems.append(str(exc))
    return problems
