"""Write roff man pages (hermesctx.1 and hermesctx-<command>.1) generated from the click help:
NAME, SYNOPSIS, DESCRIPTION, OPTIONS, EXIT STATUS, ENVIRONMENT, FILES, EXAMPLES, SEE ALSO.
``python -m hermesctx.tools.gen_man DIR``."""

from __future__ import annotations

import sys

from hermesctx import __version__
from hermesctx.exit import MEANINGS
from hermesctx.tools._tree import Cmd, tree, write_files

DATE = "2026-11"
ENVIRONMENT = [
    ("HERMESCTX_CONFIG", "Config file to use when --config is not given."),
    ("HERMESCTX_<KEY>", "Any config key, dotted key upper-cased with dots as underscores, e.g. "
                        "HERMESCTX_COMPRESSION_THRESHOLD=0.6."),
    ("HERMESCTX_TRACEBACK", "Print the full Python traceback on errors."),
    ("HERMESCTX_REDACT", "Set to 0 to turn off secret redaction in generated text."),
    ("ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL", "Credentials and endpoint of the anthropic summarizer."),
    ("OPENAI_API_KEY, OPENAI_BASE_URL", "Credentials and endpoint of the openai summarizer (any compatible server)."),
    ("TIKTOKEN_CACHE_DIR", "Where tiktoken encodings are cached; hermesctx works offline without it."),
    ("TMPDIR", "Parent of the default spill directory (hermes-results-UID)."),
    ("NO_COLOR", "Disable colour on stderr."),
]
FILES = [
    ("./hermesctx.yaml", "Project config file, used when no --config is given."),
    ("$XDG_CONFIG_HOME/hermesctx/config.yaml", "User config file (default ~/.config/hermesctx/config.yaml)."),
    ("$TMPDIR/hermes-results-UID/", "Default directory of spilled tool results, private to the user, mode 0700 (spill --dir)."),
]


def _esc(text: str) -> str:
    text = text.replace("\\", "\\e")
    return "\n".join(("\\&" + line) if line.startswith((".", "'")) else line for line in text.split("\n"))


def _para(text: str) -> str:
    blocks = [b.strip() for b in text.split("\n\n") if b.strip()]
    return "\n.PP\n".join(_esc(" ".join(b.split())) for b in blocks)


def page(cmd: Cmd, root: Cmd) -> str:
    title = cmd.path.replace(" ", "-")
    out = [f'.TH {title.upper()} 1 "{DATE}" "hermesctx {__version__}" "User Commands"',
           ".SH NAME", f"{_esc(title)} \\- {_esc(cmd.short or 'token budgets for LLM agent transcripts')}",
           ".SH SYNOPSIS", f".B {_esc(cmd.path)}",
           "[\\fIOPTIONS\\fR]" + (" \\fICOMMAND\\fR" if cmd.subcommands else " [\\fIFILE\\fR]"),
           ".SH DESCRIPTION", _para(cmd.help)]
    if cmd.subcommands:
        out.append(".SH COMMANDS")
        for sub in cmd.subcommands:
            out += [".TP", f".B {_esc(sub.name)}", _esc(sub.short)]
    if cmd.options:
        out.append(".SH OPTIONS")
        for opt in cmd.options:
            flags = ", ".join(f"\\fB{_esc(f)}\\fR" for f in opt.flags)
            value = f" \\fI{_esc(opt.metavar)}\\fR" if opt.takes_value and opt.metavar else ""
            out += [".TP", flags + value, _esc(opt.help or "")]
    out.append(".SH EXIT STATUS")
    for status, meaning in MEANINGS:
        out += [".TP", f".B {status}", _esc(meaning[0].upper() + meaning[1:] + ".")]
    out.append(".SH ENVIRONMENT")
    for name, meaning in ENVIRONMENT:
        out += [".TP", f".B {_esc(name)}", _esc(meaning)]
    out.append(".SH FILES")
    for name, meaning in FILES:
        out += [".TP", f".I {_esc(name)}", _esc(meaning)]
    examples = cmd.examples or [e for sub in cmd.subcommands for e in sub.examples[:1]]
    if examples:
        out += [".SH EXAMPLES", ".nf", ".RS 4"] + [_esc(e) for e in examples] + [".RE", ".fi"]
    others = [f"\\fBhermesctx-{s.name}\\fR(1)" for s in root.subcommands if s.path != cmd.path]
    out += [".SH SEE ALSO", ", ".join(([] if cmd is root else ["\\fBhermesctx\\fR(1)"]) + others)]
    return "\n".join(out) + "\n"


def generate() -> dict[str, str]:
    root = tree()
    pages = {"hermesctx.1": page(root, root)}
    for sub in root.subcommands:
        pages[f"hermesctx-{sub.name}.1"] = page(sub, root)
    return pages


def main(argv: list[str]) -> int:
    return write_files(generate(), argv[0] if argv else "man")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
