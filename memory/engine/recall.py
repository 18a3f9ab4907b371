"""Recall: find the memories that answer a query and keep a trace of how they were found.

This is the vector-only first version of the read path (SPEC §4): kNN seeds ranked by cosine
similarity. Hybrid seeds, ripple and reconstruction build on the same RecallResult and trace.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import F, Prefetch
from django.utils import timezone

from ..models import AgentSession, Interaction, Memory, Project, RecallTrace
from ..providers import get_embedder
from .changelog import change_record
from .vector_index import nearest, space_for


RECALL_PRESETS = ("vector", "hybrid", "ripple")


@dataclass(frozen=True)
class RecallQuery:
    text: str
    k: int = 8
    session: AgentSession | None = None
    include_sensitive: bool = False
    preset: str = "vector"  # one of RECALL_PRESETS; hybrid and ripple are being built (issue 3)


@dataclass
class RecalledMemory:
    memory: Memory
    score: float
    rank: int


@dataclass
class RecallResult:
    trace: RecallTrace
    items: list[RecalledMemory] = field(default_factory=list)


def memory_recall(*, project: Project, query: RecallQuery, actor: str) -> RecallResult:
    started = time.perf_counter()
    embedder = get_embedder()
    vector = embedder.embed_one(query.text)
    embedded = time.perf_counter()
    neighbours = nearest(
        space=space_for(embedder), vector=vector, k=query.k, project_id=project.pk,
        session_id=query.session.pk if query.session else None, exclude_sensitive=not query.include_sensitive,
    )
    searched = time.perf_counter()
    memories = _load_with_provenance([n.memory_id for n in neighbours])
    items = [
        RecalledMemory(memory=memories[n.memory_id], score=round(n.similarity, 6), rank=i + 1)
        for i, n in enumerate(neighbours) if n.memory_id in memories
    ]
    timings = {
        "embed_ms": round((embedded - started) * 1000, 2),
        "search_ms": round((searched - embedded) * 1000, 2),
        "total_ms": round((time.perf_counter() - started) * 1000, 2),
    }
    with transaction.atomic():
        trace = _trace_store(project=project, query=query, items=items, timings=timings, actor=actor)
        _access_touch([item.memory.pk for item in items])
    return RecallResult(trace=trace, items=items)


def _load_with_provenance(memory_ids: list[int]) -> dict[int, Memory]:
    sources = Prefetch("sources", queryset=Interaction.objects.order_by("occurred_at", "id"))
    return {m.pk: m for m in Memory.objects.filter(pk__in=memory_ids).prefetch_related(sources)}


def _trace_store(*, project: Project, query: RecallQuery, items: list[RecalledMemory],
                 timings: dict[str, float], actor: str) -> RecallTrace:
    ranking = [{"memory_id": i.memory.pk, "rank": i.rank, "score": i.score, "components": {"similarity": i.score}}
               for i in items]
    trace = RecallTrace.objects.create(
        project=project, session=query.session, actor=actor, query=query.text,
        params={"preset": "vector", "k": query.k, "scope": "session" if query.session else "project"},
        seeds=[{"memory_id": i.memory.pk, "activation": i.score, "via": "vector"} for i in items],
        ranking=ranking, timings=timings,
    )
    change_record(
        project=project, session=query.session, actor=actor, op="recall.completed", object_type="recall",
        object_id=trace.pk, after={"query": query.text, "memory_ids": [i.memory.pk for i in items]},
    )
    return trace


def _access_touch(memory_ids: list[int]) -> None:
    Memory.objects.filter(pk__in=memory_ids).update(access_count=F("access_count") + 1, last_accessed_at=timezone.now())
