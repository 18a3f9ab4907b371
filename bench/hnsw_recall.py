"""ANN recall of the HNSW index against exact search, on real MiniLM embeddings."""

from __future__ import annotations

import time

import numpy as np

from .corpus import mixed_corpus, prose_sentences, sentences
from .setup_django import percentile

EF_VALUES = (10, 20, 40, 64, 100, 200)


def _corpus(count: int):
    from django.utils import timezone

    from memory.engine.projects import project_create, session_create
    from memory.engine.vector_index import EmbeddingRow, bulk_load, space_for
    from memory.models import Memory, Project
    from memory.providers import get_embedder

    Project.objects.filter(slug="bench-hnsw").delete()
    project = project_create(name="bench hnsw", slug="bench-hnsw")
    sessions = [session_create(project=project, title=f"s{i}", actor="bench") for i in range(10)]
    texts = mixed_corpus(count, seed=2)
    embedder = get_embedder()
    vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
    now = timezone.now()
    memories = Memory.objects.bulk_create(
        Memory(project=project, session=sessions[i % 10], content=t, occurred_at=now) for i, t in enumerate(texts)
    )
    space = space_for(embedder)
    t0 = time.perf_counter()
    pairs = zip(memories, vectors, strict=True)
    bulk_load(space, (EmbeddingRow(m.pk, project.pk, m.session_id, v.tolist()) for m, v in pairs))
    load_seconds = time.perf_counter() - t0
    return project, space, memories, vectors, embedder, load_seconds


def run(count: int = 5000, queries: int = 200, k: int = 10) -> dict:
    from django.conf import settings
    from django.test.utils import override_settings

    from memory.engine.vector_index import nearest

    project, space, memories, vectors, embedder, load_seconds = _corpus(count)
    ids = np.asarray([m.pk for m in memories])
    held_out = [t for t in prose_sentences() if t not in set(m.content for m in memories)]
    query_texts = held_out[: queries * 4 // 5] + sentences(queries - queries * 4 // 5, seed=99)
    query_vectors = np.asarray(embedder.embed(query_texts), dtype=np.float32)
    exact = [set(ids[np.argsort(-(vectors @ q))[:k]].tolist()) for q in query_vectors]
    rows = []
    for ef in EF_VALUES:
        with override_settings(MEMORY={**settings.MEMORY, "HNSW_EF_SEARCH": ef}):
            hits, latencies = 0, []
            for q, truth in zip(query_vectors, exact, strict=True):
                t0 = time.perf_counter()
                found = nearest(space=space, vector=q.tolist(), k=k, project_id=project.pk)
                latencies.append((time.perf_counter() - t0) * 1000)
                hits += len(truth & {n.memory_id for n in found})
        rows.append({"ef_search": ef, "recall_at_10": round(hits / (k * queries), 4),
                     "p50_ms": round(percentile(latencies, 50), 2), "p95_ms": round(percentile(latencies, 95), 2)})
    return {"rows": count, "queries": len(query_texts), "copy_and_index_s": round(load_seconds, 2), "by_ef": rows}
