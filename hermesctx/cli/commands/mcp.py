from __future__ import annotations

import click

from hermesctx.cli.runner import get_context
from hermesctx.exit import EXIT_STATUS_HELP


@click.command(epilog=EXIT_STATUS_HELP)
@click.option("--archive", "archive", metavar="FILE.sqlite", type=click.Path(dir_okay=False),
              help="The archive store to serve (default: config archive.path), as written by "
                   "compress --archive FILE.sqlite.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
              envvar="HERMESCTX_CONFIG", help="Config file (default: as `hermesctx config show` finds it).")
def command(archive, config_path):
    """Serve the archive store to an agent as an MCP server over stdio: two tools, `recall`
    (search what compaction removed) and `expand` (the original messages of a span).

    Needs the MCP SDK: pipx inject hermesctx mcp (from a checkout: pip install '.[mcp]'). Register it in an MCP client's config,
    e.g. {"mcpServers": {"hermesctx": {"command": "hermesctx", "args": ["mcp", "--archive",
    "/home/me/.hermesctx/archive.sqlite"]}}}. It reads JSON-RPC on stdin and writes it on
    stdout until the client closes the connection.

    \b
    Examples:
        hermesctx mcp --archive a.sqlite
        claude mcp add hermesctx -- hermesctx mcp --archive a.sqlite
    """
    from hermesctx.agent_tools import serve

    serve(get_context(config_path), archive)
