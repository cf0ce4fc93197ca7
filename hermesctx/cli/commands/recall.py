from __future__ import annotations

import click

from hermesctx.cli.runner import get_context
from hermesctx.exit import EXIT_STATUS_HELP

MAX_LIMIT = 1000  # (hermesctx.store.MAX_LIMIT: the store is not imported to declare the command)


@click.command(epilog=EXIT_STATUS_HELP + " recall: 0 hits found, 1 no hit (as grep).")
@click.argument("query", required=False)
@click.option("--archive", "archive", metavar="FILE.sqlite",
              help="The archive store (default: config archive.path), as written by compress --archive.")
@click.option("--session", help="Only this session.")
@click.option("--role", help="Only messages of this role (user, assistant, tool, system).")
@click.option("--tool", help="Only tool calls and results of this tool.")
@click.option("--since", metavar="TIME", help="Only spans archived at or after TIME (ISO 8601, UTC if no zone).")
@click.option("--until", metavar="TIME", help="Only spans archived at or before TIME (a date: the whole day).")
@click.option("--limit", type=click.IntRange(min=1, max=MAX_LIMIT), default=20, show_default=True,
              help="Hits at most (up to 1,000).")
@click.option("--format", "fmt", type=click.Choice(["json", "table"]),
              help="Hits as a JSON array or a table (default: a table on a terminal, JSON when piped).")
@click.option("--expand", metavar="SPAN", help="Print the messages of SPAN (the transcript its compaction "
                                               "replaced) as a JSON array.")
@click.option("--migrate", metavar="DIR", help="Import the <hash>.jsonl archives of DIR into the store (idempotent).")
@click.option("--stats", is_flag=True, help="Print what the store holds: its size, spans, sessions, messages "
                                            "and how many of them are distinct.")
@click.option("--prune", is_flag=True, help="Remove spans (with --before DATE and/or --keep-sessions N), the "
                                            "messages no span keeps, and compact the file (VACUUM).")
@click.option("--before", metavar="DATE", help="With --prune: the spans archived before DATE (ISO 8601).")
@click.option("--keep-sessions", type=click.IntRange(min=0), metavar="N",
              help="With --prune: keep only the N sessions archived most recently.")
@click.option("--tool-schema", is_flag=True,
              help="Print the definitions of the recall and expand agent tools (a `tools` array) and exit.")
@click.option("--target", type=click.Choice(["openai", "anthropic", "mcp"]),
              help="With --tool-schema: OpenAI function tools (default), Anthropic tools or MCP tools.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
              envvar="HERMESCTX_CONFIG", help="Config file (default: as `hermesctx config show` finds it).")
def command(config_path, **params):
    """Search the archive store: every message a compaction replaced, and its summaries.

    A query is words, each matched whole (a path or an error line is a phrase of its words);
    every word must occur; at most 1,000 characters, 32 words and 256 terms (exit 2 past them). Hits are ranked by BM25 (a plain scan without FTS5) and name the
    span to pass to --expand. Snippets are redacted; --expand prints messages verbatim.

    \b
    Examples:
        hermesctx compress --archive a.sqlite examples/coding-session.json > small.json
        hermesctx recall "src/budget.py" --archive a.sqlite --format table
        hermesctx recall "AssertionError" --role tool --tool terminal --since 2026-01-01 --archive a.sqlite
        hermesctx recall --expand hx-7e5426344a9f --archive a.sqlite | hermesctx estimate
        hermesctx recall --migrate .hermesctx/archive --archive a.sqlite
        hermesctx recall --stats --archive a.sqlite
        hermesctx recall --prune --keep-sessions 20 --before 2026-01-01 --archive a.sqlite
        hermesctx recall --tool-schema --target anthropic > tools.json
    """
    from hermesctx import recall

    return recall.run(get_context(config_path), recall.Request(**params))
