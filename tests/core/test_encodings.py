"""Encodings load offline, from tiktoken's cache or the bundled ranks, hash-checked."""

import hashlib

import pytest

from hermesctx import encodings


def test_offline_encodings_round_trip():
    for name in encodings.SUPPORTED:
        enc = encodings.get_encoding(name)
        assert enc.name == name
        text = "def f(x):\n    return x  # 注释 😀"
        assert enc.decode(enc.encode(text)) == text
    assert encodings.get_encoding("cl100k_base").encode("hello world") == [15339, 1917]
    assert encodings.get_encoding("o200k_base").encode("hello world") == [24912, 2375]


def test_unknown_encoding():
    with pytest.raises(encodings.EncodingUnavailable):
        encodings.get_encoding("p50k_base")


def test_tiktoken_cache_dir_is_honoured_and_a_corrupt_copy_ignored(tmp_path, monkeypatch):
    url = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
    path = tmp_path / hashlib.sha1(url.encode()).hexdigest()
    path.write_bytes(b"corrupt")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    assert encodings._cached_blob(url, "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7") is None
    good = encodings._bundled_blob("cl100k_base")
    path.write_bytes(good)
    assert encodings._cached_blob(url, hashlib.sha256(good).hexdigest()) == good


@pytest.mark.parametrize("model,expected", [
    ("gpt-4o", ("o200k_base", False)), ("openai/gpt-4.1-mini", ("o200k_base", False)),
    ("gpt-5", ("o200k_base", False)), ("o3-mini", ("o200k_base", False)),
    ("gpt-4", ("cl100k_base", False)), ("gpt-3.5-turbo", ("cl100k_base", False)),
    ("claude-sonnet-4-5", ("o200k_base", True)), (None, ("o200k_base", True)),
])
def test_encoding_for_model(model, expected):
    assert encodings.encoding_for_model(model) == expected


def _fresh_cl100k():
    import tiktoken

    args = encodings._constructor_args("cl100k_base")
    return tiktoken.Encoding(name=args["name"], pat_str=args["pat_str"], mergeable_ranks=args["mergeable_ranks"],
                             special_tokens=args["special_tokens"])


def test_decoded_ranks_are_kept_across_runs_and_a_damaged_file_rewritten(tmp_path, monkeypatch):
    monkeypatch.setenv("HERMESCTX_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR", raising=False)
    text = "Decoded once, kept for the next run: ünïcödé too."
    first = _fresh_cl100k().encode(text)
    [cached] = tmp_path.iterdir()
    assert cached.name.startswith("cl100k_base-") and cached.name.endswith(".marshal")
    calls = []
    monkeypatch.setattr(encodings, "_parse_ranks", lambda blob: calls.append(1) or {})
    assert _fresh_cl100k().encode(text) == first and calls == []  # read from the cache, not decoded
    monkeypatch.undo()
    monkeypatch.setenv("HERMESCTX_CACHE_DIR", str(tmp_path))
    data = bytearray(cached.read_bytes())
    data[100] ^= 0xFF
    cached.write_bytes(bytes(data))
    assert encodings._load_cached_ranks("cl100k_base", cached.name.split("-")[1] + "0" * 48) is None
    assert _fresh_cl100k().encode(text) == first  # ignored, decoded again and rewritten
    assert cached.read_bytes() != bytes(data)


def test_the_ranks_cache_can_be_turned_off_or_unwritable(tmp_path, monkeypatch):
    monkeypatch.setenv("HERMESCTX_CACHE_DIR", "")
    assert encodings.ranks_cache_dir() is None
    monkeypatch.setenv("HERMESCTX_CACHE_DIR", str(tmp_path / "file" / "below"))
    (tmp_path / "file").write_text("not a directory")
    assert _fresh_cl100k().encode("still counts") == encodings.get_encoding("cl100k_base").encode("still counts")
