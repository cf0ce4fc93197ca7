"""The rules on a request's tool definitions and ``tool_choice``, for both APIs.

A function's name matches ``^[a-zA-Z0-9_-]{1,64}$`` (Anthropic's schema now takes up to 128
characters: 65 to 128 is a ``risk``, rejected by older models and gateways), its parameter
schema (OpenAI ``parameters``, Anthropic ``input_schema``) is an object schema (``type:
"object"``, no ``anyOf`` / ``oneOf`` / ``allOf`` / ``enum`` / ``not`` at its top), names are
unique, and ``tool_choice`` names a tool that is there and is not given without tools.
Anthropic's server tools (``web_search_20250305``...) have fixed names and no schema: only
their names count among the names.
"""

from __future__ import annotations

from hermesctx import lazyre

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

REJECT, RISK = "reject", "risk"
# rule id -> severity (registered in hermesctx.wire.rules.RULES)
RULES = {
    "OA-TOOLDEF-NAME": REJECT,
    "OA-TOOLDEF-SCHEMA": REJECT,
    "OA-TOOLDEF-DUP": REJECT,
    "OA-TOOLDEF-CHOICE": REJECT,
    "AN-TOOLDEF-NAME": REJECT,
    "AN-TOOLDEF-SCHEMA": REJECT,
    "AN-TOOLDEF-DUP": REJECT,
    "AN-TOOLDEF-CHOICE": REJECT,
}
NAME = lazyre.compile(r"[a-zA-Z0-9_-]{1,64}")
_LONG_NAME = lazyre.compile(r"[a-zA-Z0-9_-]{1,128}")  # what Anthropic's published schema takes
_NOT_AT_TOP = ("anyOf", "oneOf", "allOf", "enum", "not")


def _schema_problem(schema: Any) -> str | None:
    if not isinstance(schema, dict):
        return f"expected an object schema, got {type(schema).__name__}"
    if schema.get("type") != "object":
        return f"schema must be a JSON Schema of 'type: \"object\"', got 'type: {schema.get('type')!r}'"
    bad = [key for key in _NOT_AT_TOP if key in schema]
    if bad:
        return f"schema must not have {', '.join(repr(k) for k in bad)} at the top level"
    return None


def openai_tools(tools: list) -> list[tuple[str, Any, Any]]:
    """``(path, name, parameters)`` of each function tool of an OpenAI chat body (a custom
    tool's schema is its grammar: only its name counts)."""
    out = []
    for k, tool in enumerate(tools):
        if not isinstance(tool, dict):
            continue
        kind = tool.get("type")
        inner = tool.get(kind) if isinstance(kind, str) and kind in ("function", "custom") else None
        if isinstance(inner, dict):
            out.append((f"tools[{k}].{kind}", inner.get("name"),
                        inner.get("parameters", {"type": "object"}) if kind == "function" else None))
    return out


def anthropic_tools(tools: list) -> list[tuple[str, Any, Any]]:
    """``(path, name, input_schema)`` of each tool of an Anthropic body (None: a server tool)."""
    out = []
    for k, tool in enumerate(tools):
        if isinstance(tool, dict):
            custom = tool.get("type") in (None, "custom")
            out.append((f"tools[{k}]", tool.get("name"), tool.get("input_schema") if custom else None))
    return out


def check(doc: Any, target: str, sink: Any) -> None:
    """Add the tool-definition problems of the body ``doc`` (a request to ``target``) to ``sink``."""
    if not isinstance(doc, dict):
        return
    anthropic = target == "anthropic"
    tag = "AN" if anthropic else "OA"
    tools = doc.get("tools")
    defs = (anthropic_tools if anthropic else openai_tools)(tools) if isinstance(tools, list) else []
    seen: dict = {}
    for path, name, schema in defs:
        if not isinstance(name, str):
            continue
        if anthropic and NAME.fullmatch(name) is None and _LONG_NAME.fullmatch(name) is not None:
            sink.add(f"{path}.name", f"{tag}-TOOLDEF-NAME",
                     f"{_dot(path)}.name: longer than 64 characters (up to 128 in the current "
                     "schema; older models and gateways reject it)", RISK)
        elif NAME.fullmatch(name) is None and (schema is not None or not anthropic):
            sink.add(f"{path}.name", f"{tag}-TOOLDEF-NAME",
                     f"{_dot(path)}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
                     if anthropic else f"Invalid '{path}.name': string does not match pattern. Expected "
                     "a string that matches the pattern '^[a-zA-Z0-9_-]{1,64}$'.")
        if name in seen:
            sink.add(f"{path}.name", f"{tag}-TOOLDEF-DUP",
                     "tools: Tool names must be unique." if anthropic else
                     f"Invalid 'tools': the name '{name}' is used by {seen[name]} and {path}; "
                     "function names must be unique.")
        else:
            seen[name] = path
        problem = None if schema is None and (anthropic or path.endswith("custom")) else _schema_problem(schema)
        if problem is not None:
            where = f"{path}.input_schema" if anthropic else f"{path}.parameters"
            sink.add(where, f"{tag}-TOOLDEF-SCHEMA", f"Invalid schema for function '{name}': {problem}.")
    _choice(doc, tag, anthropic, tools, seen, sink)


class _Lines:
    """A sink that keeps each problem as the line ``validate`` would print."""

    def __init__(self) -> None:
        self.problems: list = []

    def add(self, path: str, rule: str, message: str, severity: str | None = None) -> None:
        tag = "" if (severity or RULES[rule]) == REJECT else f" ({severity})"
        self.problems.append(f"{path}: {rule}{tag}: {message}")


def problems(doc: Any, target: str) -> list[str]:
    """The tool-definition problems of ``doc`` as lines (what ``convert`` warns of in what it
    writes: a definition it cannot make valid, e.g. a 100-character Anthropic name for OpenAI)."""
    lines = _Lines()
    if isinstance(doc, dict) and ("tools" in doc or "tool_choice" in doc or "parallel_tool_calls" in doc):
        check(doc, target, lines)
    return lines.problems


def _dot(path: str) -> str:
    return path.replace("[", ".").replace("]", "")


def _choice(doc: dict, tag: str, anthropic: bool, tools: Any, names: dict, sink: Any) -> None:
    rule = f"{tag}-TOOLDEF-CHOICE"
    has_tools = isinstance(tools, list) and bool(tools)
    choice = doc.get("tool_choice")
    if "tool_choice" in doc and choice is not None and not has_tools:
        none = choice == "none" or isinstance(choice, dict) and choice.get("type") == "none"
        sink.add("tool_choice", rule, "tool_choice may only be specified while providing tools." if anthropic
                 else "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
                 RISK if none else None)
    if not anthropic and doc.get("parallel_tool_calls") is not None and not has_tools:
        sink.add("parallel_tool_calls", rule, "Invalid value for 'parallel_tool_calls': 'parallel_tool_calls' "
                 "is only allowed when 'tools' are specified.")
    if not has_tools or not isinstance(choice, dict):
        return
    if anthropic:
        named = choice.get("name") if choice.get("type") == "tool" else None
    else:
        kind = choice.get("type")
        inner = choice.get(kind) if kind in ("function", "custom") else None
        named = inner.get("name") if isinstance(inner, dict) else None
    if isinstance(named, str) and named not in names:
        sink.add("tool_choice", rule, f"tool_choice: tool '{named}' is not among the request's tools "
                 f"({', '.join(repr(n) for n in names) or 'none named'})")
