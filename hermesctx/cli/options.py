"""Click options: generated from a stage's ``Options`` (:func:`stage_options`), plus the
input/output bundles every command shares. The same flag means the same thing in every
command. Values a config file can also set default to None, so "not given" stays apparent.
"""

from __future__ import annotations

import click

# click-free, in hermesctx.cli.runner (the fast path runs commands without click); here for the commands
from hermesctx.cli.runner import format_kwargs, options_from  # noqa: F401

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def _stack(*decorators: Callable) -> Callable:
    def apply(fn: Callable) -> Callable:
        for decorator in reversed(decorators):
            fn = decorator(fn)
        return fn

    return apply


input_options = _stack(
    click.argument("input", nargs=-1, metavar="[FILE]...", type=click.Path(allow_dash=True)),
    click.option("--jsonl/--no-jsonl", "jsonl", default=None,
                 help="Treat input as JSON Lines, one transcript per line (default: detected)."),
    click.option("--max-input-size", metavar="SIZE", expose_value=False, callback=lambda ctx, param, value:
                 _max_input(value),
                 help="What gzip input may inflate to (bytes, or 512M, 4G; config input.max_bytes; default: "
                      "4 GiB, and at most 64x the compressed size); past it: exit 3."),
)


def _max_input(value: str | None) -> None:
    """``--max-input-size``: on the command line's environment (read when gzip input opens)."""
    if value is None:
        return
    from hermesctx.cli.runner import get_env
    from hermesctx.jsonio import parse_size

    size = parse_size(value)
    if size is None:
        raise click.BadParameter(f"{value!r} is not a size (bytes, or 512M, 4G)")
    get_env().max_input = size

output_options = _stack(
    click.option("--pretty", is_flag=True, help="Indent the JSON output: one document (JSON Lines input, or "
                 "several FILEs into one stream, are refused: exit 2)."),
)

inplace_options = _stack(
    click.option("--in-place", "in_place", is_flag=True,
                 help="Rewrite FILE atomically instead of writing stdout (FILE untouched on error)."),
    click.option("--backup", is_flag=True, help="With --in-place: keep the original as FILE.bak."),
)

keep_going_options = _stack(
    click.option("--keep-going", "keep_going", flag_value="pass", default=None,
                 help="A JSON line that fails (not JSON, not a transcript, refused) is reported on stderr "
                      "with its line number and written through unchanged; the other lines go on; exit 3 "
                      "at the end if any failed."),
    click.option("--skip-bad", "keep_going", flag_value="skip",
                 help="As --keep-going, but a failing line is left out of the output."),
)

# what the commands that read FILEs without rewriting them take (estimate, validate, convert)
keep_going_files = click.option(
    "--keep-going", "keep_going", is_flag=True,
    help="Several FILEs: a file that cannot be read as transcripts is said and skipped, the rest go on; "
         "one summary line at the end, exit 3 if any failed.")

report_options = _stack(
    click.option("--report", "report", type=click.Path(dir_okay=False), default=None,
                 help="Also write the JSON report to FILE (JSON Lines for a batch); - puts the JSON on stderr instead of the summary line."),
)

config_options = _stack(
    click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
                 envvar="HERMESCTX_CONFIG", show_envvar=True,
                 help="YAML config (Hermes's config.yaml keys work)."),
)

def _click_option(f, spec) -> list[Callable]:
    """The click option(s) of one declared field (:class:`hermesctx.options.Spec`)."""
    if spec.kind is bool and "/" not in spec.flag:
        kw: dict[str, Any] = {"is_flag": True}
    else:
        kw = {"default": () if spec.multiple else None, "multiple": spec.multiple}
        if spec.choices is not None:
            kw["type"] = click.Choice(spec.choices)
        elif spec.kind is int:
            kw["type"] = click.IntRange(min=spec.low, max=spec.high)
        elif spec.kind is float:
            kw["type"] = (click.FloatRange(min=spec.low, max=spec.high, min_open=spec.open_low)
                          if spec.low is not None or spec.high is not None else float)
        elif spec.path:
            kw["type"] = click.Path(file_okay=spec.path != "dir", dir_okay=spec.path != "file")
        if spec.kind is bool:  # --x/--no-x
            kw.pop("multiple")
            kw["default"] = f.default
    if f.default is not None and not spec.multiple and spec.kind is not bool:
        kw["default"] = f.default
    decls = [spec.flag, *([spec.short] if spec.short else []), f.name]
    out = [click.option(*decls, metavar=spec.metavar, show_default=spec.show_default, help=spec.help, **kw)]
    for alias in spec.aliases:  # the old spelling: same value, not shown
        out.append(click.option(alias, f"{f.name}__{alias.lstrip('-').replace('-', '_')}", hidden=True,
                                **{k: v for k, v in kw.items() if k != "default"},
                                **({"default": ()} if spec.multiple else {})))
    return out


def stage_options(cls, *, shared: bool = False) -> Callable:
    """The click options declared by a stage's ``Options``: its own fields, or (``shared``)
    those it inherits (model and budget options)."""
    from hermesctx.options import BudgetOptions, ModelOptions, specs
    from hermesctx.record import fields

    base = next((b for b in (BudgetOptions, ModelOptions) if issubclass(cls, b)), None)
    common = {f.name for f in fields(base)} if base else set()
    chosen = [(f, spec) for f, spec in specs(cls) if (f.name in common) == shared]
    return _stack(*(d for f, spec in chosen for d in _click_option(f, spec)))


# --- input formats (hermesctx.formats) ---------------------------------------------------------

FROM_CHOICES = ("auto", "openai", "anthropic", "responses", "sharegpt", "claude-code", "codex",
                "opencode", "opencode-go", "openhands", "cline", "aider", "opencode-run")
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


# strict input by default (what Hermes would misread is an error, not a guess); the flag reaches the core through hermesctx.messages (a context
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
                            report_options, keep_going_options)


def rewriting_options(stage) -> Callable:
    """The options of a command that rewrites transcripts with one stage: FILE..., the stage's
    own options, the transcript bundle, the model and budget options, --config."""
    return _stack(input_options, stage_options(stage.Options), transcript_options,
                  stage_options(stage.Options, shared=True), config_options)
