"""Optional parts of the install: the LLM summarizers' SDKs are extras (``hermesctx[anthropic]``,
``hermesctx[openai]``, ``hermesctx[all]``), so a missing one is said, with the command that
installs it, before any input is read (exit 2: the install lacks what the options ask for)."""

from __future__ import annotations

from importlib.util import find_spec

from hermesctx.errors import UsageError

# module -> (extra that installs it, what pipx injects, what it is called)
EXTRAS = {"anthropic": ("anthropic", "anthropic", "the anthropic SDK"), "openai": ("openai", "openai", "the openai SDK"),
          "distributed": ("dask", "'dask[distributed]'", "dask.distributed")}


def require(module: str, what: str | None = None) -> None:
    """Raise :class:`UsageError` naming the extra when ``module`` cannot be imported."""
    try:
        found = find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if found:
        return
    extra, package, name = EXTRAS.get(module, (module, module, f"the {module} SDK"))
    raise UsageError(f"{what or f'the {module} summarizer'} needs {name}, which is not installed: "
                     f"pipx inject hermesctx {package}, or from a checkout: pip install '.[{extra}]' "
                     f"(uv tool install '.[{extra}]')")
