"""Every parameter of a command line, declared once as a :class:`Param` record: the input FILEs,
``--jsonl``, ``--pretty``, ``--in-place``, ``--report``, ``--keep-going``, ``--from``... here,
a stage's own options from its ``Options`` (:func:`stage_params`), a command's few others in its
module (its ``PARAMS``). From the same records come the click options
(:func:`hermesctx.cli.options.click_params`), and, at run time, the table of the parser that runs
a command line without click (:func:`hermesctx.cli.fast.table`); the man pages and completions
follow from the click tree. No click here (model: httpie's one ``ParserSpec``).

The same flag means the same thing in every command. Values a config file can also set default
to None, so "not given" stays apparent.
"""

from __future__ import annotations

from hermesctx import registry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

UNSET = "<unset>"  # a default not declared: click's own applies (False for a flag, None for a value)


class Param:
    """One parameter as click declares it (``kind``: ``text``, ``int``, ``float``, ``choice``,
    ``path``, ``flag`` (sets ``value``), ``bool`` (``--x/--no-x``) or ``argument``, FILE...).

    A read-only record whose undeclared fields are the class's defaults: made for every start of
    a command, it costs no generated ``__init__`` (a frozen record's costs ~0.8 ms to compile)."""

    flags: tuple[str, ...]  # "--in-place"; "--jsonl/--no-jsonl"; ("-m", "--model"); () for the argument
    dest: str | None  # the key of the command's params (None: not passed on, see callback)
    help: str = ""
    kind: str = "text"
    default: Any = UNSET
    value: Any = True  # what a flag sets
    choices: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None
    open_low: bool = False
    file_okay: bool = True  # a path: may it name a file, a directory, be - (stdin / stdout)
    dir_okay: bool = True
    allow_dash: bool = False
    multiple: bool = False
    metavar: str | None = None
    envvar: str | None = None
    show_envvar: bool = False
    show_default: bool = False
    hidden: bool = False
    callback: str | None = None  # a name in hermesctx.cli.options: click calls it (no value is passed on)

    def __init__(self, flags: tuple[str, ...], dest: str | None, help: str = "", **fields: Any):  # noqa: A002
        unknown = fields.keys() - Param.__annotations__.keys()
        if unknown:
            raise TypeError(f"Param has no field {sorted(unknown)[0]!r}")
        self.__dict__.update(fields, flags=flags, dest=dest, help=help)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __repr__(self) -> str:
        return f"Param({', '.join(f'{k}={v!r}' for k, v in self.__dict__.items())})"

    def default_value(self) -> Any:
        """What click gives the command when the parameter is not on the command line."""
        if self.default != UNSET:
            return self.default
        if self.kind == "argument" or self.multiple:
            return ()
        return False if self.kind == "flag" and self.value is True else None


def path(name: str, dest: str, help: str, **kw: Any) -> Param:  # noqa: A002
    """An option naming a FILE (default None)."""
    return Param((name,), dest, help, kind="path", default=None, dir_okay=False, **kw)


def flag(name: str, dest: str, help: str, **kw: Any) -> Param:  # noqa: A002
    """A flag: given, ``dest`` takes ``value`` (True unless said)."""
    return Param((name,), dest, help, kind="flag", **kw)


# --- the input / output options every command that reads transcripts shares ---------------------

FILES = Param((), "input", kind="argument", metavar="[FILE]...", allow_dash=True)
INPUT = (
    FILES,
    Param(("--jsonl/--no-jsonl",), "jsonl", "Treat input as JSON Lines, one transcript per line (default: detected).",
          kind="bool", default=None),
    Param(("--max-input-size",), None,
          "What gzip input may inflate to (bytes, or 512M, 4G; config input.max_bytes; default: "
          "4 GiB, and at most 64x the compressed size); past it: exit 3.", metavar="SIZE", callback="max_input"),
)
OUTPUT = (flag("--pretty", "pretty", "Indent the JSON output: one document (JSON Lines input, or several FILEs "
                                      "into one stream, are refused: exit 2)."),)
IN_PLACE = (
    flag("--in-place", "in_place", "Rewrite FILE atomically instead of writing stdout (FILE untouched on error)."),
    flag("--backup", "backup", "With --in-place: keep the original as FILE.bak."),
)
KEEP_GOING = (
    flag("--keep-going", "keep_going",
          "A JSON line that fails (not JSON, not a transcript, refused) is reported on stderr "
          "with its line number and written through unchanged; the other lines go on; exit 3 "
          "at the end if any failed.", value="pass", default=None),
    flag("--skip-bad", "keep_going", "As --keep-going, but a failing line is left out of the output.", value="skip"),
)
# what the commands that read FILEs without rewriting them take (estimate, validate, convert)
KEEP_GOING_FILES = (
    flag("--keep-going", "keep_going",
          "Several FILEs: a file that cannot be read as transcripts is said and skipped, the rest go on; "
          "one summary line at the end, exit 3 if any failed."),
)
REPORT = (
    path("--report", "report", "Also write the JSON report to FILE (JSON Lines for a batch); - puts the JSON "
          "on stderr instead of the summary line."),
)
CONFIG = (
    path("--config", "config_path", "YAML config (Hermes's config.yaml keys work).",
          envvar="HERMESCTX_CONFIG", show_envvar=True),
)

# --- input formats (hermesctx.formats, declared in hermesctx.registry) -------------------------

FROM_CHOICES = ("auto", *registry.names(registry.FORMATS))
TO_CHOICES = registry.names(registry.FORMATS, writes=True)

# strict input by default (what Hermes would misread is an error, not a guess); the flag reaches
# the core through hermesctx.messages (a context variable read by check_messages, detection and
# usage counting), so no command passes it on
LENIENT = Param(("--lenient",), None, "Accept what Hermes accepts: messages without a role, role-less arrays, "
                "non-numeric usage counts (read as Hermes reads them). Default: such input is an error (exit 3).",
                kind="flag", callback="lenient")
FORMAT = (
    Param(("--from",), "source", "Input format; auto detects it (Claude Code and Codex session logs included).",
          kind="choice", choices=FROM_CHOICES, default="auto", show_default=True),
    flag("--include-sidechains", "include_sidechains",
          "Claude Code logs: insert each subagent's transcript after the result of the "
          "Task call that ran it (2.x subagent files are found beside the log)."),
    flag("--all-segments", "all_segments", "Session logs: keep what came before compaction boundaries too."),
    LENIENT,
)
TARGET = (
    Param(("--to",), "target", "Output format (default: the input's, Responses requests and items too; "
          "openai for session logs and agents' files).", kind="choice", choices=TO_CHOICES, default=None),
)
# what every command that rewrites transcripts takes after its own options
TRANSCRIPT = (*FORMAT, *TARGET, *OUTPUT, *IN_PLACE, *REPORT, *KEEP_GOING)

# the group's own options (before the command's name)
ROOT = (
    flag("--traceback", "traceback", "Show the full traceback of an error (debugging).",
          envvar="HERMESCTX_TRACEBACK"),
    Param(("--quiet", "-q"), "quiet", "No warnings or reports on stderr.", kind="flag"),
)


# --- a stage's options (hermesctx.options) ----------------------------------------------------

def _stage_param(f, spec) -> list[Param]:
    """The parameter(s) of one declared field (:class:`hermesctx.options.Spec`): its flag, and
    each old spelling (same value, hidden, passed on as ``<field>__<old_flag>``)."""
    if spec.kind is bool and "/" not in spec.flag:
        kind, default = "flag", UNSET
    elif spec.kind is bool:
        kind, default = "bool", f.default
    else:
        kind = ("choice" if spec.choices is not None else "int" if spec.kind is int else
                "float" if spec.kind is float else "path" if spec.path else "text")
        default = () if spec.multiple else f.default
    typed = {"kind": kind, "choices": spec.choices or (), "low": spec.low, "high": spec.high,
             "open_low": spec.open_low, "multiple": spec.multiple and kind not in ("flag", "bool"),
             "file_okay": spec.path != "dir", "dir_okay": spec.path != "file"}
    flags = (spec.flag, *((spec.short,) if spec.short else ()))
    out = [Param(flags, f.name, spec.help, default=default, metavar=spec.metavar,
                 show_default=spec.show_default, **typed)]
    for alias in spec.aliases:
        dest = f"{f.name}__{alias.lstrip('-').replace('-', '_')}"
        out.append(Param((alias,), dest, hidden=True, default=() if spec.multiple else UNSET, **typed))
    return out


def stage_params(cls, *, shared: bool = False) -> tuple[Param, ...]:
    """The parameters a stage's ``Options`` declares: its own fields, or (``shared``) those it
    inherits (the model and budget options)."""
    from hermesctx.options import BudgetOptions, ModelOptions, specs
    from hermesctx.record import fields

    base = next((b for b in (BudgetOptions, ModelOptions) if issubclass(cls, b)), None)
    common = {f.name for f in fields(base)} if base else set()
    return tuple(p for f, spec in specs(cls) if (f.name in common) == shared for p in _stage_param(f, spec))


def rewriting(stage) -> tuple[Param, ...]:
    """The parameters of a command that rewrites transcripts with one stage: FILE..., the stage's
    own options, the transcript options, the model and budget options, --config."""
    return (*INPUT, *stage_params(stage.Options), *TRANSCRIPT, *stage_params(stage.Options, shared=True), *CONFIG)
