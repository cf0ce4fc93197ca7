"""Option bundles: the same flag means the same thing in every command.

Each bundle is a decorator that adds a group of click options; commands stack the ones they
need (sqlite-utils' ``output_options`` style). Values a config file can also set default to
None here, so :func:`settings_from` can tell "not given" from "given".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from hermesctx.budgets import RULES
from hermesctx.config import Settings, load_settings


def _stack(*decorators: Callable) -> Callable:
    def apply(fn: Callable) -> Callable:
        for decorator in reversed(decorators):
            fn = decorator(fn)
        return fn

    return apply


input_options = _stack(
    click.argument("input", default="-", metavar="[FILE]", type=click.Path(dir_okay=False, allow_dash=True)),
    click.option("--jsonl/--no-jsonl", "jsonl", default=None,
                 help="Treat input as JSON Lines, one transcript per line (default: detected)."),
)

output_options = _stack(
    click.option("--pretty", is_flag=True, help="Indent the JSON output."),
)

inplace_options = _stack(
    click.option("--in-place", "in_place", is_flag=True,
                 help="Rewrite FILE atomically instead of writing stdout (FILE untouched on error)."),
    click.option("--backup", is_flag=True, help="With --in-place: keep the original as FILE.bak."),
)

report_options = _stack(
    click.option("--report", "report", type=click.Path(dir_okay=False), default=None,
                 help="Also write the JSON report to FILE (JSON Lines for a batch); - puts the JSON on stderr instead of the summary line."),
)

config_options = _stack(
    click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
                 envvar="HERMESCTX_CONFIG", show_envvar=True,
                 help="YAML config (Hermes's config.yaml keys work)."),
)

model_options = _stack(
    click.option("--model", "-m", default=None, help="Model name: context window, encoding, prices."),
    click.option("--context-length", type=click.IntRange(min=1), default=None,
                 help="Context window in tokens (overrides the model table)."),
    click.option("--provider", default=None,
                 help="Provider name (openai-codex selects the Codex context table)."),
)

budget_options = _stack(
    click.option("--threshold", type=float, default=None,
                 help="Fraction of the window that triggers compression (default 0.50)."),
    click.option("--target-ratio", type=float, default=None,
                 help="Tail budget as a fraction of the threshold (default 0.20)."),
    click.option("--budget-rules", type=click.Choice(RULES), default=None,
                 help="documented (default) or hermes-0.19 (Hermes's runtime floors)."),
    click.option("--max-tokens", type=click.IntRange(min=1), default=None,
                 help="Output reservation subtracted from the window (hermes-0.19 rules)."),
)

FLAG_KEYS = {
    "model": "model.default",
    "context_length": "model.context_length",
    "provider": "model.provider",
    "threshold": "compression.threshold",
    "target_ratio": "compression.target_ratio",
    "budget_rules": "compression.budget_rules",
    "max_tokens": "model.max_tokens",
    "protect_last_n": "compression.protect_last_n",
    "protect_first_n": "compression.protect_first_n",
}


def settings_from(params: dict[str, Any], environ, **extra: Any) -> Settings:
    """Settings for a command: its flags (named as in :data:`FLAG_KEYS`, plus ``extra`` dotted
    keys) over the environment over the config file over the defaults."""
    flags = {key: params.get(name) for name, key in FLAG_KEYS.items() if name in params}
    flags.update(extra)
    return load_settings(params.get("config_path"), env=environ, flags=flags)


def budget_kwargs(settings: Settings) -> dict[str, Any]:
    """Keyword arguments for :func:`hermesctx.budgets.compute_budgets` and the stages using it."""
    return {
        "threshold": settings["compression.threshold"],
        "target_ratio": settings["compression.target_ratio"],
        "rules": settings["compression.budget_rules"],
        "max_tokens": settings["model.max_tokens"],
    }


def model_kwargs(settings: Settings, doc: Any = None) -> dict[str, Any]:
    """Model, window and provider for one document: ``--model`` beats the document's own
    ``model`` key, which beats the environment and the config file."""
    model = settings["model.default"]
    if (settings.source("model.default") != "flag" and isinstance(doc, dict)
            and isinstance(doc.get("model"), str)):
        model = doc["model"]
    return {
        "model": model,
        "context_length": settings["model.context_length"],
        "provider": settings["model.provider"],
    }


def tail_budget(settings: Settings, doc: Any = None) -> int:
    """The tail token budget the compressor would protect for this document."""
    from hermesctx.budgets import resolve_budgets

    budgets, _ = resolve_budgets(**model_kwargs(settings, doc), **budget_kwargs(settings))
    return budgets.tail_token_budget


# --- input formats (hermesctx.formats) ---------------------------------------------------------

FROM_CHOICES = ("auto", "openai", "anthropic", "responses", "sharegpt", "claude-code", "codex")
TO_CHOICES = ("openai", "anthropic", "sharegpt")


def _set_lenient(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    from hermesctx.messages import set_lenient

    reset = set_lenient(bool(value))

    def restore() -> None:
        try:
            reset()
        except ValueError:  # closed from another context: nothing to restore there
            pass

    ctx.call_on_close(restore)


# D14: strict input by default; the flag reaches the core through hermesctx.messages (a context
# variable read by check_messages, detection and usage counting), so no command passes it on
lenient_option = click.option(
    "--lenient", is_flag=True, expose_value=False, callback=_set_lenient,
    help="Accept what Hermes accepts: messages without a role, role-less arrays, non-numeric "
         "usage counts (read as Hermes reads them). Default: such input is an error (exit 3).")

format_options = _stack(
    click.option("--from", "source", type=click.Choice(FROM_CHOICES), default="auto",
                 show_default=True,
                 help="Input format; auto detects it (Claude Code and Codex session logs included)."),
    click.option("--include-sidechains", is_flag=True,
                 help="Claude Code logs: insert each subagent's transcript after the result of the "
                      "Task call that ran it (2.x subagent files are found beside the log)."),
    click.option("--all-segments", is_flag=True,
                 help="Session logs: keep what came before compaction boundaries too."),
    lenient_option,
)

target_options = _stack(
    click.option("--to", "target", type=click.Choice(TO_CHOICES), default=None,
                 help="Output format (default: the input's, or openai for Responses items and "
                      "session logs)."),
)

# what every command that rewrites transcripts takes after its own options
transcript_options = _stack(format_options, target_options, output_options, inplace_options,
                            report_options)

_FORMAT_PARAMS = ("source", "include_sidechains", "all_segments", "target")


def format_kwargs(params: dict[str, Any]) -> dict[str, Any]:
    """Take the :data:`format_options` / :data:`target_options` values out of ``params``
    (for :func:`hermesctx.cli.runner.transform_stream` and ``documents``)."""
    return {key: params.pop(key) for key in _FORMAT_PARAMS if key in params}
