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
