"""MiniLM embedding throughput on this machine (batch) and single-text latency."""

from __future__ import annotations

import time

from .corpus import sentences
from .setup_django import percentile


def run(count: int = 2000) -> dict:
    from memory.providers.minilm import MiniLMEmbedder

    embedder = MiniLMEmbedder(batch_size=64, cache_size=0)
    embedder.embed(["warm up the model"])
    texts = sentences(count, seed=1)
    started = time.perf_counter()
    embedder.embed(texts)
    batch_seconds = time.perf_counter() - started
    singles = []
    for text in texts[:200]:
        t0 = time.perf_counter()
        embedder._embed_batch([text])
        singles.append((time.perf_counter() - t0) * 1000)
    return {
        "texts": count,
        "batch_texts_per_s": round(count / batch_seconds, 1),
        "single_p50_ms": round(percentile(singles, 50), 2),
        "single_p95_ms": round(percentile(singles, 95), 2),
    }
