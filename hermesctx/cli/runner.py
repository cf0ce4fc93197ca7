"""The command line's access to the environment: the :class:`~hermesctx.context.Env` and the
:class:`~hermesctx.context.Context` of the running command, kept on the click root context.
The document loop itself is :mod:`hermesctx.transcripts`."""

from __future__ import annotations

import click

from hermesctx.context import Context, Env


def get_env() -> Env:
    ctx = click.get_current_context()
    root = ctx.find_root()
    if not isinstance(root.obj, Env):
        root.obj = Env.from_process()
    return root.obj


def get_context(config_path: str | None = None, *, reports: bool = True) -> Context:
    """The command's context: one per process and config file (its settings read once)."""
    env = get_env()
    key = ("hermesctx.context", config_path)
    root = click.get_current_context().find_root()
    found = root.meta.get(key)
    if found is None:
        found = root.meta[key] = Context(env, config_path)
    found.reports = reports
    return found
