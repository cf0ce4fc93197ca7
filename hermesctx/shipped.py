"""The man pages and shell completion scripts shipped inside the package (``data/man``,
``data/completions``: symlinks to ``man/`` and ``completions/`` at the top of the repository, which
``make man completions`` generates from the command tree; a wheel holds copies), so that any
install (pip, pipx, uv tool) can print or install them: ``hermesctx man``, ``hermesctx completion``."""

from __future__ import annotations

import os

from hermesctx.errors import FileIOError, UsageError

# shell -> (file shipped in data/completions, the name that shell's completion directory expects)
COMPLETIONS = {
    "bash": ("hermesctx.bash", "hermesctx"),
    "zsh": ("_hermesctx", "_hermesctx"),
    "fish": ("hermesctx.fish", "hermesctx.fish"),
}


DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def _read(*parts: str) -> str:
    with open(os.path.join(DATA, *parts), encoding="utf-8") as handle:
        return handle.read()


def completion_script(shell: str) -> str:
    return _read("completions", COMPLETIONS[shell][0])


def man_pages() -> dict[str, str]:
    """``{"hermesctx.1": roff, "hermesctx-estimate.1": roff, ...}``."""
    return {name: _read("man", name) for name in sorted(os.listdir(os.path.join(DATA, "man")))
            if name.endswith(".1")}


def man_page(command: str | None) -> str:
    """The page of ``command`` (``None``: the top-level page)."""
    pages = man_pages()
    name = "hermesctx.1" if command in (None, "", "hermesctx") else f"hermesctx-{command}.1"
    if name not in pages:
        known = ", ".join(p[len("hermesctx-"):-2] for p in pages if p != "hermesctx.1")
        raise UsageError(f"no man page for {command!r}; the commands are {known}")
    return pages[name]


def write(folder: str, files: dict[str, str]) -> list[str]:
    """Write ``files`` (name -> text) into ``folder`` (created); the paths written."""
    written = []
    try:
        os.makedirs(folder, exist_ok=True)
        for name, text in files.items():
            path = os.path.join(folder, name)
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text)
            written.append(path)
    except OSError as exc:
        raise FileIOError(f"cannot write {exc.filename or folder}: {exc.strerror or exc}") from None
    return written


def install_completion(shell: str, folder: str) -> str:
    return write(folder, {COMPLETIONS[shell][1]: completion_script(shell)})[0]


def install_man(folder: str) -> list[str]:
    """Install every page into ``folder``/man1 (``folder`` itself when it is a ``man1``)."""
    target = folder if os.path.basename(os.path.normpath(folder)) == "man1" else os.path.join(folder, "man1")
    return write(target, man_pages())
