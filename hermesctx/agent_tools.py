"""The archive store as two tools an agent can call: ``recall`` (search what compaction took out
of its context) and ``expand`` (the original messages of one span).

:func:`schemas` gives the tool definitions for a request (an OpenAI ``tools`` array of function
tools, an Anthropic ``tools`` array, or the MCP tool list); :func:`call` runs one call on a
:class:`hermesctx.store.Store` and is the one dispatcher both ``hermesctx mcp`` and an agent
loop use. A call with bad arguments (an unknown tool, a missing query, a wrong type, an
argument nobody declared, a span that is not in the store) gets an error *result*
(``{"error": ...}``), which the model can read and correct, never an exception.

What leaves through these tools is redacted (``redaction.enabled``): the snippets of ``recall``
are (by the store), and so are the messages ``expand`` returns: the store keeps them verbatim
for ``compress --expand``, but an agent tool's result goes to a model provider.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

OPENAI = "openai"
ANTHROPIC = "anthropic"
MCP = "mcp"
TARGETS = (OPENAI, ANTHROPIC, MCP)
MAX_LIMIT = 100
DEFAULT_LIMIT = 10
PAGE_CHARS = 60_000  # an expand page (~15,000 tokens): under Claude Code's 25,000-token result cap
MAX_OFFSET = 10_000_000

_RECALL = {
    "description": (
        "Search the messages that context compaction removed from this conversation (and the "
        "summaries that replaced them). Use it when the summary mentions something you need in "
        "detail: a file path, an error line, a command, a decision. Every word of the query must "
        "occur in a hit; hits are ranked by relevance (BM25) and name the span that holds them."),
    "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": 1000,
                  "description": "Words to find, e.g. a file path (src/app.py) or part of an error line."},
        "session": {"type": "string", "description": "Only this session (conversation id)."},
        "role": {"type": "string", "enum": ["system", "user", "assistant", "tool"],
                 "description": "Only messages of this role."},
        "tool": {"type": "string", "description": "Only tool calls and results of this tool name."},
        "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                  "description": f"Most hits to return (default {DEFAULT_LIMIT})."},
    },
    "required": ["query"],
}
_EXPAND = {
    "description": (
        "The original messages of an archived span (an id like hx-0123456789ab, quoted in a "
        "compaction summary or in a recall hit), in their order: what the compaction replaced. A "
        "page at a time (about 15,000 tokens at most); the answer says how many are left and the "
        "offset of the next page."),
    "properties": {
        "span": {"type": "string", "pattern": "^hx-[0-9a-f]{12}$",
                 "description": "The span id, hx- and 12 hex digits."},
        "offset": {"type": "integer", "minimum": 0, "maximum": MAX_OFFSET,
                   "description": "The first message to return (default 0): next_offset of the page before."},
        "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                  "description": "Most messages in the page (default: as many as fit the page)."},
    },
    "required": ["span"],
}
TOOLS = {"recall": _RECALL, "expand": _EXPAND}


def _parameters(spec: dict) -> dict:
    return {"type": "object", "properties": spec["properties"], "required": spec["required"],
            "additionalProperties": False}


def schemas(target: str = OPENAI) -> list[dict]:
    """The tool definitions for ``target``: ``openai`` (function tools of Chat Completions),
    ``anthropic`` (Messages API tools) or ``mcp`` (``name``, ``description``, ``inputSchema``)."""
    if target == OPENAI:
        return [{"type": "function", "function": {"name": name, "description": spec["description"],
                                                  "parameters": _parameters(spec)}}
                for name, spec in TOOLS.items()]
    if target == ANTHROPIC:
        return [{"name": name, "description": spec["description"], "input_schema": _parameters(spec)}
                for name, spec in TOOLS.items()]
    if target == MCP:
        return [{"name": name, "description": spec["description"], "inputSchema": _parameters(spec)}
                for name, spec in TOOLS.items()]
    raise ValueError(f"unknown tool-schema target {target!r} (choose from {', '.join(TARGETS)})")


# --- the dispatcher ---------------------------------------------------------------------------

class _BadArguments(Exception):
    pass


def _arguments(name: str, arguments: Any) -> dict:
    """The arguments as a checked dict (an OpenAI tool call gives them as a JSON string)."""
    if arguments is None:
        arguments = {}
    if isinstance(arguments, (str, bytes)):
        try:
            arguments = json.loads(arguments or "{}")
        except ValueError:
            raise _BadArguments("arguments are not valid JSON") from None
    if not isinstance(arguments, dict):
        raise _BadArguments(f"arguments must be an object, not {type(arguments).__name__}")
    spec = TOOLS[name]
    for key in arguments:
        if key not in spec["properties"]:
            raise _BadArguments(f"unknown argument {str(key)[:40]!r} (accepted: {', '.join(spec['properties'])})")
    for key in spec["required"]:
        if arguments.get(key) in (None, ""):
            raise _BadArguments(f"{key} is required")
    for key, value in arguments.items():
        if value is None:
            continue
        rule = spec["properties"][key]
        if rule["type"] == "integer":
            if isinstance(value, bool) or not isinstance(value, int):
                raise _BadArguments(f"{key} must be an integer")
            if not rule["minimum"] <= value <= rule["maximum"]:
                raise _BadArguments(f"{key} must be between {rule['minimum']} and {rule['maximum']}")
        elif not isinstance(value, str):
            raise _BadArguments(f"{key} must be a string")
        elif "enum" in rule and value not in rule["enum"]:
            raise _BadArguments(f"{key} must be one of {', '.join(rule['enum'])}")
        elif len(value) > rule.get("maxLength", 1000):
            raise _BadArguments(f"{key} is longer than {rule.get('maxLength', 1000)} characters")
    return {k: v for k, v in arguments.items() if v is not None}


def call(store, name: str, arguments: Any) -> dict:
    """Run the tool ``name`` with ``arguments`` (a dict, or a JSON object as text) on ``store``.

    ``recall``: ``{"hits": [...], "count": n}`` (hits as :meth:`Store.search` gives them).
    ``expand``: ``{"span": id, "session": ..., "messages": [...], "count": n, "offset": k, "total": t,
    "left": l, "next_offset": k + n or None}``: one page of the span, at most ``limit`` messages and
    about ``PAGE_CHARS`` characters (at least one message).
    Anything wrong with the call: ``{"error": "one line"}``."""
    from hermesctx.errors import HermesctxError

    if name not in TOOLS:
        return {"error": f"unknown tool {str(name)[:40]!r} (tools: {', '.join(TOOLS)})"}
    try:
        args = _arguments(name, arguments)
        if name == "recall":
            hits = store.search(args["query"], session=args.get("session"), role=args.get("role"),
                                tool=args.get("tool"), limit=args.get("limit", DEFAULT_LIMIT))
            return {"hits": hits, "count": len(hits)}
        from hermesctx.redact import redact_value

        messages = store.expand(args["span"])
        offset = args.get("offset", 0)
        page = _page(messages[offset:], args.get("limit", MAX_LIMIT))
        after = offset + len(page)
        return {"span": args["span"], "session": store.span(args["span"])["session"],
                "messages": redact_value(page), "count": len(page), "offset": offset, "total": len(messages),
                "left": max(len(messages) - after, 0), "next_offset": after if after < len(messages) else None}
    except _BadArguments as exc:
        return {"error": f"{name}: {exc}"}
    except HermesctxError as exc:  # an unknown span, a query the store cannot read: the model can retry
        return {"error": f"{name}: {exc}"}


def _page(messages: list, limit: int) -> list:
    """The first messages, at most ``limit`` and about ``PAGE_CHARS`` characters of JSON (one at least)."""
    page, size = [], 0
    for msg in messages[:limit]:
        size += len(json.dumps(msg, ensure_ascii=False))
        if page and size > PAGE_CHARS:
            break
        page.append(msg)
    return page


# --- the MCP server (``hermesctx mcp``) ---------------------------------------------------------

MCP_MAJOR = 2  # the SDK's server API changed in 2.0 (handlers given to the constructor)


def _require_mcp() -> None:
    from hermesctx.errors import UsageError
    from hermesctx.extras import require

    require("mcp", "hermesctx mcp")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("mcp")
    except PackageNotFoundError:
        return  # importable without metadata (a vendored copy): let it try
    if int(found.split(".")[0]) != MCP_MAJOR:
        raise UsageError(f"hermesctx mcp needs the mcp SDK {MCP_MAJOR}.x, found {found}: "
                         "pipx inject hermesctx 'mcp>=1.2,<2', or from a checkout: pip install '.[mcp]'")


def serve(ctx, path: str | None = None) -> None:
    """Serve ``recall`` and ``expand`` on the store at ``path`` (else config ``archive.path``)
    over stdio (MCP), until the client closes the connection. A missing store is an error
    before anything is served."""
    from hermesctx.errors import UsageError

    path = path or ctx.settings["archive.path"]
    if not path:
        raise UsageError("hermesctx mcp serves an archive store: give --archive FILE.sqlite "
                         "(or archive.path in the config)")
    _require_mcp()
    from hermesctx.store import Store

    store = Store.open(path, create=False)  # (before the SDK's imports: a wrong path fails fast)
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server

    from hermesctx import __version__

    tools = [types.Tool(name=t["name"], description=t["description"], input_schema=t["inputSchema"])
             for t in schemas(MCP)]

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx, params) -> types.CallToolResult:
        result = call(store, params.name, params.arguments)
        return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(result, ensure_ascii=False))],
                                    structured_content=result, is_error="error" in result)

    server = Server("hermesctx", version=__version__, on_list_tools=list_tools, on_call_tool=call_tool,
                    instructions="recall searches the messages context compaction removed from the "
                                 "conversation; expand gives back the messages of one span.")

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    try:
        anyio.run(main)
    finally:
        store.close()
