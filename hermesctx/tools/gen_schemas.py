"""Refresh the request schemas ``validate`` checks bodies with (``make schemas``).

Each provider's published OpenAPI document is trimmed to the request schemas ``validate``
needs (the components reachable from the request body's schema; descriptions and examples
left out; OpenAPI's ``nullable: true`` written as JSON Schema's ``null`` type) and written as
a package data file with its source and version::

    python -m hermesctx.tools.gen_schemas --openai SPEC --anthropic SPEC hermesctx/data

A SPEC is a path or an ``https://`` address of the JSON (or YAML) document. Needs the network
only when an address is given, never at run time.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import urllib.request

# what each provider's file holds: (file name, source, request schema, beta request schema)
OPENAI_FILE = "schema-openai-chat.json"
ANTHROPIC_FILE = "schema-anthropic-messages.json"
OPENAI_SOURCE = "openai/openai-openapi openapi.json @ f85dbe2 (2026-08-21), as trimmed in shared/wire-rules"
ANTHROPIC_SOURCE = ("the Stainless-hosted OpenAPI document of anthropics/anthropic-sdk-typescript "
                    "(.stats.yml openapi_spec_url), as vendored by tryAGI/Anthropic "
                    "src/libs/Anthropic/openapi.yaml @ ebea3ea4 (2026-05-06)")
DEFAULT_ANTHROPIC = ("https://raw.githubusercontent.com/tryAGI/Anthropic/"
                     "ebea3ea43be1a34302d597874ba1926336effc78/src/libs/Anthropic/openapi.yaml")
_DROP = frozenset({"description", "examples", "example", "x-stainless-naming", "deprecated"})
_REF = re.compile(r'"#/components/schemas/([^"]+)"')


def load(spec: str) -> tuple[dict, str]:
    """The document and the sha256 of its bytes."""
    if spec.startswith(("https://", "http://")):
        with urllib.request.urlopen(spec, timeout=120) as response:  # noqa: S310 (a fixed address)
            raw = response.read()
    else:
        with open(spec, "rb") as handle:
            raw = handle.read()
    try:
        doc = json.loads(raw)
    except ValueError:
        import yaml

        doc = yaml.safe_load(raw)
    return doc, hashlib.sha256(raw).hexdigest()


def reachable(schemas: dict, roots: list[str]) -> list[str]:
    seen: set = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo.extend(_REF.findall(json.dumps(schemas[name])))
    return sorted(seen)


def clean(value, names: bool = False):
    """``value`` without documentation keys, ``nullable: true`` as a ``null`` type (``names``:
    a map of property names to schemas, whose keys are kept whatever they are)."""
    if isinstance(value, list):
        return [clean(v) for v in value]
    if not isinstance(value, dict):
        return value
    if names:
        return {k: clean(v) for k, v in value.items()}
    out = {k: clean(v, k in ("properties", "patternProperties", "$defs", "definitions"))
           for k, v in value.items() if k not in _DROP and k != "nullable"}
    if value.get("nullable") is True:
        kind = out.get("type")
        if isinstance(kind, str):
            out["type"] = [kind, "null"]
            if "enum" in out and None not in out["enum"]:
                out["enum"] = [*out["enum"], None]
        elif kind is None:
            out = {"anyOf": [out, {"type": "null"}]}
    return out


def trimmed(doc: dict, roots: list[str], source: str, digest: str, version: str) -> dict:
    schemas = doc["components"]["schemas"]
    names = reachable(schemas, roots)
    return {"source": source, "version": version, "sha256": digest, "roots": roots,
            "components": {"schemas": {name: clean(schemas[name]) for name in names}}}


def main(argv: list[str] | None = None) -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    shared = os.path.join(here, "..", "..", "..", "shared", "wire-rules", "openai-openapi-f85dbe2-chat.json")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="the folder to write into (hermesctx/data)")
    parser.add_argument("--openai", default=os.path.normpath(shared))
    parser.add_argument("--anthropic", default=DEFAULT_ANTHROPIC)
    args = parser.parse_args(argv)
    openai, digest = load(args.openai)
    files = {OPENAI_FILE: trimmed(openai, ["CreateChatCompletionRequest"], OPENAI_SOURCE, digest, "f85dbe2")}
    anthropic, digest = load(args.anthropic)
    files[ANTHROPIC_FILE] = trimmed(anthropic, ["CreateMessageParams", "BetaCreateMessageParams"],
                                    ANTHROPIC_SOURCE, digest, "ebea3ea4")
    for name, value in files.items():
        path = os.path.join(args.out, name)
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(value, handle, indent=0, sort_keys=True, ensure_ascii=False)
            handle.write("\n")
        print(f"{path}: {len(value['components']['schemas'])} schemas", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
