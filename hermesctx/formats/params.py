"""A request's parameters between OpenAI chat and Anthropic Messages (what ``convert`` writes).

Each parameter with a counterpart is translated: ``max_tokens`` / ``max_completion_tokens`` <->
``max_tokens``, ``stop`` <-> ``stop_sequences``, ``temperature`` (OpenAI 0..2, Anthropic 0..1:
above 1 is lowered to 1), ``top_p``, ``stream``, ``tools`` (function ``parameters`` <->
``input_schema``), ``tool_choice`` (``auto`` / ``required`` / ``none`` / a named function <->
``{type: auto | any | none | tool}``), ``parallel_tool_calls`` <-> ``tool_choice``'s
``disable_parallel_tool_use``, ``user`` <-> ``metadata.user_id``, ``service_tier`` ``auto`` /
``default`` <-> ``auto`` / ``standard_only``. One with no counterpart is left out and counted
in ``lost`` (said on stderr, in the report); a key that is no parameter of the source API is
left for the send path (which keeps what the target takes). The model is never carried across: it names the
other provider's model (``convert --model`` sets one).

Pure: the input is never mutated.
"""

from __future__ import annotations

from hermesctx.formats._common import bump
from hermesctx.wire import params as api

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MODEL_LOST = "model (the other provider's: convert --model sets one)"
OPENAI_MAX_STOP = 4
_EMPTY_SCHEMA = {"type": "object", "properties": {}}
_SAME = ("temperature", "top_p", "stream")
_TO_ANTHROPIC_CHOICE = {"auto": "auto", "required": "any", "none": "none"}
_TO_OPENAI_CHOICE = {v: k for k, v in _TO_ANTHROPIC_CHOICE.items()}
_TIERS = {"auto": "auto", "default": "standard_only"}  # OpenAI -> Anthropic


def _dropped(lost: dict, key: Any) -> None:
    bump(lost, f"parameter {key!r} (no counterpart)")


# --- OpenAI chat -> Anthropic --------------------------------------------------------------

def tool_to_anthropic(tool: Any, lost: dict) -> Any:
    """An OpenAI function tool (chat's ``{type, function}`` or the flat Responses form) as an
    Anthropic custom tool; None (counted) for a tool with no counterpart."""
    if not isinstance(tool, dict):
        return tool
    if tool.get("type") == "function":
        fn = tool.get("function") if isinstance(tool.get("function"), dict) else tool
        if isinstance(fn.get("name"), str):
            out = {"name": fn["name"]}
            if fn.get("description"):
                out["description"] = fn["description"]
            params = fn.get("parameters")
            out["input_schema"] = params if isinstance(params, dict) else dict(_EMPTY_SCHEMA)
            return out
    if "input_schema" in tool or tool.get("type") not in ("function", "custom", None):
        return tool  # already Anthropic's (a custom or server tool)
    bump(lost, f"{tool.get('type')} tools (no Anthropic counterpart)")
    return None


def choice_to_anthropic(choice: Any, lost: dict) -> Any:
    if isinstance(choice, str) and choice in _TO_ANTHROPIC_CHOICE:
        return {"type": _TO_ANTHROPIC_CHOICE[choice]}
    if isinstance(choice, dict):
        kind = choice.get("type")
        inner = choice.get("function") if kind == "function" else None
        if isinstance(inner, dict) and isinstance(inner.get("name"), str):
            return {"type": "tool", "name": inner["name"]}
        if kind in ("auto", "any", "none", "tool"):
            return dict(choice)  # already Anthropic's
    bump(lost, "tool_choice values with no Anthropic counterpart")
    return None


def _params(body: dict, out: dict, lost: dict):
    """The parameters of ``body`` to translate, as ``(key, value)``: ``messages`` and ``system``
    aside, the model left out (counted), those both APIs name alike copied into ``out``."""
    for key, value in body.items():
        if key == "model":
            bump(lost, MODEL_LOST)
        elif key in _SAME:
            if value is not None:
                out[key] = value
        elif key not in ("messages", "system"):
            yield key, value


def to_anthropic(body: dict, lost: dict) -> dict:
    """The parameters of an OpenAI chat body (``messages`` and ``model`` aside) as Anthropic's."""
    out: dict = {}
    for key, value in _params(body, out, lost):
        if key in ("max_completion_tokens", "max_tokens"):
            if value is not None and "max_tokens" not in out:
                out["max_tokens"] = value
            elif value is not None and value != out["max_tokens"]:
                _dropped(lost, key)
        elif key == "stop":
            if isinstance(value, str):
                out["stop_sequences"] = [value]
            elif isinstance(value, list):
                out["stop_sequences"] = list(value)
        elif key in ("tools", "functions") and isinstance(value, list):
            tools = [t for t in (tool_to_anthropic(t, lost) for t in value) if t is not None] \
                if key == "tools" else _functions(value, lost)
            if tools:
                out["tools"] = [*out.get("tools", []), *tools]
        elif key in ("tool_choice", "function_call"):
            if key == "function_call" and isinstance(value, dict):  # legacy: {"name": ...}
                value = {"type": "function", "function": value}
            choice = choice_to_anthropic(value, lost) if value is not None else None
            if choice is not None:
                out["tool_choice"] = {**out.get("tool_choice", {}), **choice}
        elif key == "parallel_tool_calls" and isinstance(value, bool):
            if body.get("tools") or body.get("functions"):
                out["tool_choice"] = {**out.get("tool_choice", {"type": "auto"}),
                                      "disable_parallel_tool_use": not value}
            else:
                _dropped(lost, key)
        elif key in ("user", "safety_identifier") and isinstance(value, str):
            if "metadata" not in out:
                out["metadata"] = {"user_id": value}
            else:
                _dropped(lost, key)
        elif key == "service_tier" and value in _TIERS:
            out[key] = _TIERS[value]
        elif key not in api.OPENAI:  # no parameter of either: the send path's (a record key)
            out[key] = value
        elif value is not None:
            _dropped(lost, key)
    temperature = out.get("temperature")
    if isinstance(temperature, (int, float)) and not isinstance(temperature, bool) and temperature > 1:
        out["temperature"] = 1
        bump(lost, "temperature above Anthropic's 1 (lowered to 1)")
    choice = out.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "none" and "disable_parallel_tool_use" in choice:
        del out["tool_choice"]["disable_parallel_tool_use"]  # ({type: none} takes no such flag)
        _dropped(lost, "parallel_tool_calls")
    return out


def legacy_functions(messages: list, lost: dict) -> list:
    """OpenAI's legacy function calling as tool calls: an assistant ``function_call`` becomes a
    tool call with an id of its own (``fn_<index>``), a ``role: "function"`` message the tool
    result of the latest such call of its name (of the latest call when no name matches). The
    same list when there is none; a function message with no call before it is kept as user
    text (counted)."""
    if not any(isinstance(m, dict) and (m.get("role") == "function" or "function_call" in m)
               for m in messages):
        return messages
    out: list = []
    pending: list = []  # (name, id) of the calls not answered yet
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict):
            out.append(msg)
            continue
        call = msg.get("function_call")
        if msg.get("role") == "assistant" and isinstance(call, dict):
            cid = f"fn_{i}"
            name = call.get("name") if isinstance(call.get("name"), str) else ""
            args = call.get("arguments") if isinstance(call.get("arguments"), str) else "{}"
            new = {k: v for k, v in msg.items() if k != "function_call"}
            new["tool_calls"] = [*(msg.get("tool_calls") or []),
                                 {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}]
            pending.append((name, cid))
            out.append(new)
        elif msg.get("role") == "function":
            match = next((p for p in reversed(pending) if p[0] == msg.get("name")), None) \
                or (pending[-1] if pending else None)
            content = msg.get("content")
            if match is None:
                bump(lost, "function results without a call (kept as user text)")
                out.append({"role": "user", "content": content if content is not None else ""})
                continue
            pending.remove(match)
            out.append({"role": "tool", "tool_call_id": match[1], "content": content if content is not None else ""})
        else:
            out.append(msg)
    return out


def _functions(value: Any, lost: dict) -> list:
    """The legacy ``functions`` list as tools."""
    return [t for t in (tool_to_anthropic({"type": "function", "function": f}, lost)
                        for f in value if isinstance(f, dict)) if t is not None]


# --- OpenAI Responses -> OpenAI chat -------------------------------------------------------

def responses_to_chat(body: dict, lost: dict) -> dict:
    """The parameters of a Responses request (its items aside) as chat's: flat function tools
    and a flat named ``tool_choice`` in chat's ``{type, function}`` form, ``max_output_tokens``
    as ``max_completion_tokens``; hosted tools (``web_search``, ``mcp``...) have no chat
    counterpart (counted). Other keys are left for the send path."""
    out: dict = {}
    for key, value in body.items():
        if key == "tools" and isinstance(value, list):
            tools = []
            for tool in value:
                if isinstance(tool, dict) and tool.get("type") == "function" and "function" not in tool:
                    tools.append({"type": "function", "function": {
                        k: v for k, v in tool.items()
                        if k in ("name", "description", "parameters", "strict") and v is not None}})
                elif isinstance(tool, dict) and tool.get("type") not in ("function", "custom"):
                    bump(lost, f"{tool.get('type')} tools (hosted: no chat counterpart)")
                else:
                    tools.append(tool)
            if tools:
                out["tools"] = tools
        elif key == "tool_choice" and isinstance(value, dict) and value.get("type") == "function" \
                and isinstance(value.get("name"), str):
            out[key] = {"type": "function", "function": {"name": value["name"]}}
        elif key == "max_output_tokens":
            out["max_completion_tokens"] = value
        else:
            out[key] = value
    if "tools" not in out:  # (every tool hosted) chat takes neither without tools
        for key in ("tool_choice", "parallel_tool_calls"):
            if out.pop(key, None) is not None:
                bump(lost, f"{key} without a chat tool left")
    return out


def chat_to_responses(body: dict, lost: dict) -> dict:
    """:func:`responses_to_chat` the other way: chat's function tools flat, a named
    ``tool_choice`` flat, ``max_completion_tokens`` (or ``max_tokens``) as
    ``max_output_tokens``; a parameter the Responses API does not take is counted, not written."""
    out: dict = {}
    for key, value in body.items():
        if key == "tools" and isinstance(value, list):
            out[key] = [{"type": "function", **{k: v for k, v in tool["function"].items()
                                                if k in ("name", "description", "parameters", "strict")}}
                        if isinstance(tool, dict) and isinstance(tool.get("function"), dict) else tool
                        for tool in value]
        elif key == "tool_choice" and isinstance(value, dict) and isinstance(value.get("function"), dict):
            out[key] = {"type": "function", "name": value["function"].get("name")}
        elif key in ("max_completion_tokens", "max_tokens"):
            out["max_output_tokens"] = value
        elif key in api.RESPONSES:
            out[key] = value
        else:
            _dropped(lost, key)
    return out


# --- Anthropic -> OpenAI chat --------------------------------------------------------------

def tool_to_openai(tool: Any, lost: dict) -> Any:
    """An Anthropic custom tool as an OpenAI function tool; None (counted) for a server tool."""
    if not isinstance(tool, dict):
        return tool
    if tool.get("type") in (None, "custom") and isinstance(tool.get("name"), str):
        fn = {"name": tool["name"]}
        if tool.get("description"):
            fn["description"] = tool["description"]
        fn["parameters"] = tool.get("input_schema", dict(_EMPTY_SCHEMA))
        return {"type": "function", "function": fn}
    if tool.get("type") == "function":
        return tool  # already OpenAI's
    bump(lost, "server tools (no OpenAI counterpart)")
    return None


def choice_to_openai(choice: Any, lost: dict) -> tuple[Any, Any]:
    """``(tool_choice, parallel_tool_calls)`` of an Anthropic ``tool_choice``."""
    if isinstance(choice, str) and choice in _TO_ANTHROPIC_CHOICE:
        return choice, None  # already OpenAI's
    if not isinstance(choice, dict):
        bump(lost, "tool_choice values with no OpenAI counterpart")
        return None, None
    kind = choice.get("type")
    parallel = choice.get("disable_parallel_tool_use")
    parallel = (not parallel) if isinstance(parallel, bool) else None
    if kind in _TO_OPENAI_CHOICE:
        return _TO_OPENAI_CHOICE[kind], parallel
    if kind == "tool" and isinstance(choice.get("name"), str):
        return {"type": "function", "function": {"name": choice["name"]}}, parallel
    if kind == "function":
        return dict(choice), None
    bump(lost, "tool_choice values with no OpenAI counterpart")
    return None, parallel


def to_openai(body: dict, lost: dict) -> dict:
    """The parameters of an Anthropic body (``messages``, ``system`` and ``model`` aside) as
    OpenAI chat's."""
    out: dict = {}
    for key, value in _params(body, out, lost):
        if key == "max_tokens":
            if value is not None:
                out["max_completion_tokens"] = value
        elif key == "stop_sequences" and isinstance(value, list):
            if len(value) > OPENAI_MAX_STOP:
                bump(lost, f"stop sequences past OpenAI's {OPENAI_MAX_STOP}", len(value) - OPENAI_MAX_STOP)
            if value:
                out["stop"] = value[:OPENAI_MAX_STOP]
        elif key == "tools" and isinstance(value, list):
            tools = [t for t in (tool_to_openai(t, lost) for t in value) if t is not None]
            if tools:
                out["tools"] = tools
        elif key == "tool_choice":
            choice, parallel = choice_to_openai(value, lost) if value is not None else (None, None)
            if choice is not None:
                out["tool_choice"] = choice
            if parallel is not None and body.get("tools"):
                out["parallel_tool_calls"] = parallel
        elif key == "metadata" and isinstance(value, dict):
            if isinstance(value.get("user_id"), str):
                out["user"] = value["user_id"]
            for other in value:
                if other != "user_id":
                    bump(lost, f"metadata key {other!r} (no counterpart)")
        elif key == "service_tier" and value in ("auto", "standard_only"):
            out[key] = "auto" if value == "auto" else "default"
        elif key not in api.ANTHROPIC and key not in api.ANTHROPIC_BETA:  # the send path's
            out[key] = value
        elif value is not None:
            _dropped(lost, key)
    return out
