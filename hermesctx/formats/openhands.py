"""OpenHands trajectories (a saved or exported event list: ``save_trajectory_path``, the UI's
export, ``tests/runtime/trajs/``) -> one transcript.

Each event is an action (``action``: ``message``, ``run``, ``edit``, ``read``, ``finish``, ...)
or an observation (``observation``, with ``cause``: the id of the action it answers), with a
``source`` (``user``, ``agent``, ``environment``). An action the model asked for carries
``tool_call_metadata`` (``tool_call_id``, ``function_name``, and the LiteLLM ``model_response``
it came in: its text, the arguments of each call, ``usage``); the actions of one response are
one assistant message with their calls, and the observation of each (its ``cause``) is the
result. ``message`` actions are the user's or the agent's text; ``finish`` is a call with no
result (as in every trajectory). Environment bookkeeping (agent state changes, ``null``
observations) is no part of what the model saw.
"""

from __future__ import annotations

from hermesctx.formats._common import bump
from hermesctx.formats._logs import session_body
from hermesctx.jsonio import dumps_like_json

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "openhands"
PLAIN = False  # read as OpenAI chat
LOG = False  # a document, not a session log

# what is no part of the model's context: the environment's state, empty observations
QUIET_ACTIONS = ("change_agent_state", "null")
QUIET_OBSERVATIONS = ("agent_state_changed", "null", "user_rejected")


def _is_event(value: Any) -> bool:
    return isinstance(value, dict) and "id" in value and ("action" in value or "observation" in value)


def detect(doc: Any) -> bool:
    """A JSON array of OpenHands events (each with an ``id`` and an ``action`` or an
    ``observation``)."""
    return isinstance(doc, list) and bool(doc) and all(_is_event(e) for e in doc)


def read(doc: list, lost: dict) -> dict:
    """The events -> ``{"messages": [...], "model": ...}``."""
    messages: list[dict] = []
    calls_of: dict = {}  # action id -> its call id
    response_id: Any = None  # the model response the last assistant message came from
    model = None
    for event in doc:
        if not isinstance(event, dict):
            bump(lost, "events that are not objects")
            continue
        meta = event.get("tool_call_metadata")
        meta = meta if isinstance(meta, dict) else None
        if "action" in event:
            kind = event.get("action")
            if meta is not None:
                response = meta.get("model_response")
                response = response if isinstance(response, dict) else {}
                if isinstance(response.get("model"), str):
                    model = response["model"]
                call = _call(event, meta, response)
                calls_of[event.get("id")] = call["id"]
                if response.get("id") is not None and response.get("id") == response_id and messages:
                    messages[-1].setdefault("tool_calls", []).append(call)
                    continue
                response_id = response.get("id")
                messages.append({"role": "assistant", "content": _response_text(response),
                                 "tool_calls": [call]})
                continue
            response_id = None
            if kind == "message" or kind == "system":
                text = _text(event)
                role = "system" if kind == "system" else (
                    "user" if event.get("source") == "user" else "assistant")
                messages.append({"role": role, "content": text})
            elif kind not in QUIET_ACTIONS:
                bump(lost, f"{kind} actions without a tool call")
            continue
        kind = event.get("observation")
        if meta is not None or event.get("cause") in calls_of:
            call_id = (meta or {}).get("tool_call_id") or calls_of.get(event.get("cause"))
            content = event.get("content")
            if not isinstance(content, str) or not content:
                content = event.get("message") if isinstance(event.get("message"), str) else ""
            messages.append({"role": "tool", "tool_call_id": str(call_id or ""), "content": content})
            response_id = None
        elif kind not in QUIET_OBSERVATIONS:
            bump(lost, f"{kind} observations without a tool call")
    return session_body(messages, model)


def usage(doc: list) -> dict | None:
    """The last model response's ``usage`` (LiteLLM's, OpenAI counts: the prompt includes
    what was cached)."""
    for event in reversed(doc):
        meta = event.get("tool_call_metadata") if isinstance(event, dict) else None
        response = meta.get("model_response") if isinstance(meta, dict) else None
        counted = response.get("usage") if isinstance(response, dict) else None
        if isinstance(counted, dict) and isinstance(counted.get("prompt_tokens"), int):
            return {"input_tokens": counted["prompt_tokens"],
                    "output_tokens": counted.get("completion_tokens") or 0}
    return None


def _text(event: dict) -> str:
    args = event.get("args")
    content = args.get("content") if isinstance(args, dict) else None
    if isinstance(content, str):
        return content
    message = event.get("message")
    return message if isinstance(message, str) else ""


def _response_text(response: dict) -> str | None:
    choices = response.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        if isinstance(message, dict) and isinstance(message.get("content"), str) and message["content"]:
            return message["content"]
    return None


def _call(event: dict, meta: dict, response: dict) -> dict:
    """The call an action was: its id and name from the metadata, its arguments as the model
    wrote them (the response's call of that id), else the action's own ``args``."""
    call_id = str(meta.get("tool_call_id") or "")
    name = str(meta.get("function_name") or event.get("action") or "")
    arguments = None
    choices = response.get("choices")
    if isinstance(choices, list):
        for choice in choices:
            message = choice.get("message") if isinstance(choice, dict) else None
            for call in (message or {}).get("tool_calls") or ():
                if isinstance(call, dict) and call.get("id") == call_id:
                    function = call.get("function")
                    if isinstance(function, dict) and isinstance(function.get("arguments"), str):
                        arguments = function["arguments"]
    if arguments is None:
        args = event.get("args")
        arguments = dumps_like_json(args if isinstance(args, dict) else {})
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
