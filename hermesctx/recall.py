"""``hermesctx recall``: search the archive store, print a span's messages, import JSON Lines archives.

The command line is a thin layer over :func:`run`; the store itself is :mod:`hermesctx.store`.
Exit statuses: 0 hits found (or a span printed, archives migrated), 1 no hit (as grep), 3 a bad
query or an unknown span, 5 a store that cannot be read.
"""

from __future__ import annotations

from hermesctx.context import Context
from hermesctx.errors import UsageError
from hermesctx.exit import ExitStatus
from hermesctx.record import record

_COLUMNS = ("span", "kind", "session", "position", "role", "tool", "created", "score")


@record(frozen=True)
class Request:
    query: str | None = None
    archive: str | None = None
    session: str | None = None
    role: str | None = None
    tool: str | None = None
    since: str | None = None
    until: str | None = None
    limit: int = 20
    fmt: str | None = None  # "json" or "table"; None: a table on a terminal, JSON when piped
    expand: str | None = None
    migrate: str | None = None
    stats: bool = False  # print what the store holds
    prune: bool = False  # remove spans: before a date, of all sessions but the newest N
    before: str | None = None
    keep_sessions: int | None = None
    tool_schema: bool = False  # print the agent tools' definitions (hermesctx.agent_tools)
    target: str | None = None  # their API: openai (default), anthropic or mcp


def store_path(request: Request, ctx: Context) -> str:
    """The store: ``--archive``, else config ``archive.path`` (a JSON Lines directory is not searchable)."""
    path = request.archive or ctx.settings["archive.path"]
    if not path:
        raise UsageError("recall needs the archive store: give --archive FILE.sqlite (or archive.path in the config)")
    return path


def table(hits: list, width: int = 100) -> str:
    """Hits as an aligned table, one line each, the snippet cut to the width left."""
    rows = [[("" if h[c] is None else str(h[c])) for c in _COLUMNS] for h in hits]
    widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(_COLUMNS)]
    left = max(40, width - sum(widths) - 2 * len(widths))

    def line(cells: list, snippet: str) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths)) + "  " + snippet

    out = [line([c.upper() for c in _COLUMNS], "SNIPPET")]
    for row, hit in zip(rows, hits):
        snippet = hit["snippet"]
        out.append(line(row, snippet if len(snippet) <= left else snippet[:left - 1] + "…"))
    return "\n".join(out) + "\n"


def run(ctx: Context, request: Request) -> int:
    """Do what the request asks; the exit status."""
    from hermesctx import jsonio
    from hermesctx.store import Store

    env = ctx.env
    asked = [x is not None for x in (request.query, request.expand, request.migrate)] + [
        request.tool_schema, request.stats, request.prune]
    if sum(asked) != 1:
        raise UsageError("give one of: a QUERY, --expand SPAN, --migrate DIR, --stats, --prune or --tool-schema")
    if (request.before is not None or request.keep_sessions is not None) and not request.prune:
        raise UsageError("--before and --keep-sessions go with --prune")
    if request.target is not None and not request.tool_schema:
        raise UsageError("--target goes with --tool-schema")
    if request.tool_schema:  # needs no store: the definitions to put in a request's `tools`
        from hermesctx.agent_tools import schemas

        env.stdout.write(jsonio.dumps(schemas(request.target or "openai"), pretty=True))
        return ExitStatus.OK
    path = store_path(request, ctx)
    if request.migrate is not None:
        from hermesctx.archive import migrate

        report = migrate(request.migrate, path)
        for refused in report["refused"]:
            env.warn(f"not imported: {refused}")
        from hermesctx.context import plural

        env.info(f"imported {plural(report['imported'], 'archive')} into {report['store']} "
                 f"({report['already']} already there, {len(report['refused'])} refused)")
        env.stdout.write(jsonio.dumps(report))
        return ExitStatus.OK
    with Store.open(path, create=False) as store:
        if request.stats:
            stats = store.stats()
            env.info(f"{stats['path']}: {stats['bytes']:,} bytes; {stats['spans']} span(s) of {stats['sessions']} "
                     f"session(s) holding {stats['messages']:,} messages, {stats['unique_messages']:,} distinct "
                     f"({stats['unique_bytes']:,} bytes of JSON, {stats['stored_bytes']:,} stored)")
            env.stdout.write(jsonio.dumps(stats))
            return ExitStatus.OK
        if request.prune:
            report = store.prune(before=request.before, keep_sessions=request.keep_sessions)
            env.info(f"removed {report['spans_removed']} span(s) of {report['sessions_removed']} session(s) and "
                     f"{report['messages_removed']:,} message(s) no span keeps; {report['bytes_before']:,} -> "
                     f"{report['bytes_after']:,} bytes")
            env.stdout.write(jsonio.dumps(report))
            return ExitStatus.OK
        if request.expand is not None:
            lines = store.expand_bytes(request.expand.strip())
            env.stdout.write(b"[" + b",".join(line.rstrip(b"\n") for line in lines) + b"]\n")
            return ExitStatus.OK
        hits = store.search(request.query, session=request.session, role=request.role, tool=request.tool,
                            since=request.since, until=request.until, limit=request.limit)
    fmt = request.fmt or ("table" if env.stdout_isatty else "json")
    if fmt == "table":
        import shutil

        width = shutil.get_terminal_size((160, 24)).columns if env.stdout_isatty else 160
        env.stdout.write(table(hits, width).encode("utf-8") if hits else b"")
    else:
        env.stdout.write(jsonio.dumps(hits))
    return ExitStatus.OK if hits else ExitStatus.CHECK_FAILED
