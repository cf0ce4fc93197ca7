"""A whole request body checked against the provider's published request schema.

The schemas are package data (``hermesctx/data/schema-*.json``, written by ``make schemas``
from OpenAI's and Anthropic's OpenAPI documents, with their source and version) and are checked
with the JSON Schema library ``jsonschema`` (Draft 2020-12, what OpenAPI 3.1 schemas are). Both
are loaded the first time a body needs them (:func:`needed`): a bare message list, and a body
whose only parameters are plain ones (``model``, ``max_tokens``, ``stream``... with values
both schemas take), are the hand-written rules' alone, which mirror the message schemas and
say the API's own error texts.

Each failure is one :class:`~hermesctx.wire.rules.Problem` (``OA-SCHEMA`` / ``AN-SCHEMA``) at
the body's path, naming the schema path; where a hand-written rule already reported a problem
at that place, the schema's is left out (one finding per place). An Anthropic body that only the
beta request schema (``BetaCreateMessageParams``: ``mcp_servers``, ``context_management``,
``mcp_tool_use`` blocks, ``compaction``...) accepts is a ``risk``: the API takes it with its
``anthropic-beta`` header.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

OPENAI, ANTHROPIC = "openai", "anthropic"
FILES = {OPENAI: "schema-openai-chat.json", ANTHROPIC: "schema-anthropic-messages.json"}
ROOTS = {OPENAI: ("CreateChatCompletionRequest", None),
         ANTHROPIC: ("CreateMessageParams", "BetaCreateMessageParams")}
_RULE = {OPENAI: "OA-SCHEMA", ANTHROPIC: "AN-SCHEMA"}
_CACHE: dict = {}


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _number(top: float):
    return lambda value: isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= top


# parameters whose value is told valid here exactly as both schemas say (the usual tiny body:
# model, max_tokens, stream...); any other parameter, or one of these with another value, is
# the schema's to judge
_PLAIN = {
    "model": lambda value: isinstance(value, str) and 1 <= len(value) <= 256,
    "max_tokens": _count, "max_completion_tokens": _count,
    "stream": lambda value: isinstance(value, bool),
    "system": lambda value: isinstance(value, str),
    "top_p": _number(1), "temperature": _number(1),
}


def needed(doc: Any) -> bool:
    """Whether ``doc`` holds a parameter the hand-written rules do not mirror: a body with no
    parameter but ``messages`` and those of :data:`_PLAIN` with a value both schemas take (the
    usual small body) is theirs alone, and starts without loading the schemas."""
    if not isinstance(doc, dict):
        return False
    for key, value in doc.items():
        if key != "messages" and not (key in _PLAIN and _PLAIN[key](value)):
            return True
    return False


def document(target: str) -> dict:
    """The trimmed schema document of ``target`` (source, version, components)."""
    key = ("doc", target)
    if key not in _CACHE:
        import json
        import os

        path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", FILES[target])
        with open(path, encoding="utf-8") as handle:
            _CACHE[key] = json.load(handle)
    return _CACHE[key]


def validator(target: str, root: str) -> Any:
    key = ("validator", target, root)
    if key not in _CACHE:
        from jsonschema import Draft202012Validator

        schema = {"$ref": f"#/components/schemas/{root}", "components": document(target)["components"]}
        _CACHE[key] = Draft202012Validator(schema)
    return _CACHE[key]


def path_of(parts: Any) -> str:
    """A jsonschema instance path as the rules write one: ``messages[3].content[0].text``."""
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _dotted(path: str) -> str:
    return path.replace("][", ".").replace("[", ".").replace("]", "")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _titles(options: Any) -> str:
    names = []
    for option in options if isinstance(options, list) else ():
        ref = option.get("$ref") if isinstance(option, dict) else None
        if isinstance(ref, str):
            names.append(ref.rsplit("/", 1)[-1])
        elif isinstance(option, dict) and "const" in option:
            names.append(repr(option["const"]))
        elif isinstance(option, dict) and "type" in option:
            names.append(str(option["type"]))
    return ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")


def _type_mismatch(error: Any) -> bool:
    """An error that says the instance's ``type`` tag is not this branch's."""
    if error.validator in ("const", "enum") and list(error.relative_path) == ["type"]:
        return True
    return error.validator == "required" and not error.relative_path and "type" in error.validator_value \
        and isinstance(error.instance, dict) and "type" not in error.instance


def _reason(error: Any) -> Any:
    """The error to tell of ``error``: inside an ``anyOf`` / ``oneOf``, the branch whose
    ``type`` tag the instance has (the discriminator), else jsonschema's best match."""
    from jsonschema.exceptions import best_match

    while error.validator in ("anyOf", "oneOf") and error.context:
        branches: dict = {}
        for sub in error.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        tagged = [subs for subs in branches.values() if not any(_type_mismatch(e) for e in subs)]
        if len(tagged) != 1 or len(tagged) == len(branches):
            break
        error = best_match(tagged[0])
    return best_match([error])


def _findings(target: str, root: str, doc: dict) -> list[tuple[str, str]]:
    """``(path, message)`` of every place ``doc`` fails the schema ``root`` (the deepest
    reason of each, as jsonschema's best_match picks it)."""
    out = []
    for error in validator(target, root).iter_errors(doc):
        error = _reason(error)
        path = path_of(error.absolute_path)
        kind, value, instance = error.validator, error.validator_value, error.instance
        if kind == "additionalProperties" and not error.absolute_path:
            continue  # which parameters a body may have: the rules' (hermesctx.wire.params)
        if kind == "required":
            missing = [name for name in value if isinstance(instance, dict) and name not in instance]
            path = ".".join(p for p in (path, missing[0] if missing else "") if p)
            text = "Field required"
        elif kind == "additionalProperties":
            extra = sorted(k for k in instance if k not in error.schema.get("properties", {}))
            text = f"Extra inputs are not permitted ({', '.join(map(repr, extra))})"
        elif kind in ("anyOf", "oneOf"):
            text = f"{_short(instance)} matches none of: {_titles(value)}"
        elif kind == "type":
            text = f"Input should be of type {value}, got {_short(instance)}"
        elif kind in ("enum", "const"):
            allowed = value if kind == "enum" else [value]
            text = f"Input should be {' or '.join(map(repr, allowed[:10]))}, got {_short(instance)}"
        else:
            text = f"{kind} {_short(value)}: got {_short(instance)}"
        where = "/".join(str(p) for p in error.absolute_schema_path)
        shown = _dotted(path) if target == ANTHROPIC else path
        out.append((path, f"{shown or '(body)'}: {text} (schema: {root}/{where})"))
    return out


def _covered(path: str, taken: list[str]) -> bool:
    """Whether a problem at one of ``taken`` already tells of ``path``: the same place, a place
    inside it, or an element (``messages[3]``) that holds it."""
    for other in taken:
        if other == path or not path:
            return True
        if other.startswith(path) and other[len(path)] in ".[":
            return True
        if "[" in other and path.startswith(other) and path[len(other)] in ".[":
            return True
    return False


def check(doc: Any, target: str, sink: Any) -> None:
    """Add to ``sink`` (a rules sink) every schema failure of the body ``doc`` as a request to
    ``target`` not already reported at that place."""
    if not needed(doc):
        return
    from hermesctx.wire.rules import REJECT, RISK

    taken = [p.path for p in sink.problems]
    root, beta = ROOTS[target]
    found = _findings(target, root, doc)
    if not found:
        return
    risky: list = []
    if beta is not None:  # what only the beta API takes is a risk; the rest fails both
        beta_found = _findings(target, beta, doc)
        beta_paths = [path for path, _ in beta_found]
        paths = [path for path, _ in found]
        risky = [(path, text) for path, text in found if not _covered(path, beta_paths)]
        found = [(path, text) for path, text in found if _covered(path, beta_paths)] + \
            [(path, text) for path, text in beta_found if not _covered(path, paths)]
    for items, severity in ((found, REJECT), (risky, RISK)):
        for path, text in items:
            if _covered(path, taken):
                continue
            taken.append(path)
            if severity == RISK:
                text += "; accepted by the beta Messages API (BetaCreateMessageParams) with its anthropic-beta header"
            sink.add(path, _RULE[target], text, severity)
