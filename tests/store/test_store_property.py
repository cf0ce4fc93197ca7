"""Nothing lost: random tool-heavy transcripts compressed three times into one store; every
original message comes back byte for byte (expanding along the chain) and is found by a word."""

from __future__ import annotations

import random
import tempfile
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st
from transcripts import TranscriptGen

from hermesctx import jsonio
from hermesctx.archive import StoreArchiver, unwind
from hermesctx.stages.compress import compress_messages
from hermesctx.store import _TOKEN, Store, message_text
from hermesctx.summary.extractive import ExtractiveSummarizer


def _conversation(seed: int) -> tuple[list, list]:
    gen = TranscriptGen(seed)
    first = [m for m in gen.transcript(8) if m.get("role") != "session_meta"]
    later = [[m for m in gen.transcript(4) if m.get("role") not in ("system", "session_meta")] for _ in range(2)]
    return first, later


@settings(max_examples=25)
@given(seed=st.integers(0, 2**32 - 1))
def test_three_rounds_lose_nothing(seed):
    first, later = _conversation(seed)
    originals = first + [m for batch in later for m in batch]
    with tempfile.TemporaryDirectory() as tmp:
        path = tmp + "/a.sqlite"
        archiver = StoreArchiver(path).for_doc(first)
        doc = first
        for batch in [*later, []]:
            out, _ = compress_messages(doc, summarizer=ExtractiveSummarizer(), tail_token_budget=300,
                                       protect_last_n=4, archive=archiver)
            doc = out + batch
        # compress --expand, repeated, gives the whole conversation back byte for byte
        doc, _ = unwind(doc, path=path)
        assert [jsonio.dumps(m) for m in doc] == [jsonio.dumps(m) for m in originals]

        with Store.open(path) as store:
            spans = store.spans()
            assert len({s["session"] for s in spans}) <= 1
            if spans:  # the newest span's chain reaches every span (one conversation, one chain)
                assert sorted(store.chain(spans[-1]["span"])) == sorted(s["span"] for s in spans)
            stored = {b for s in spans for b in store.expand_bytes(s["span"])}
            rng = random.Random(seed)
            spread = Counter(w.lower() for m in originals for w in set(_TOKEN.findall(message_text(m))))
            for msg in originals:
                blob = jsonio.dumps(msg)
                words = _TOKEN.findall(message_text(msg))
                if blob not in stored or not words:
                    continue  # never compacted (still in the transcript), or no word to find it by
                rare = min(spread[w.lower()] for w in words)  # (a word shared by every message: 1,000s of hits)
                word = rng.choice([w for w in words if spread[w.lower()] == rare] if rng.random() < 0.8 else words)
                hits = store.search(word, limit=10_000)
                assert any(h["kind"] == "message" and store.expand_bytes(h["span"])[h["position"]] == blob
                           for h in hits), msg
