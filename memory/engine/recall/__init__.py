"""Recall by reconstruction (SPEC §4): seeds → ripple → rank → ordered context, with a stored trace.

Presets (config.py): `vector` (kNN only), `hybrid` (vector + full-text + entities, RRF), `ripple`
(hybrid seeds plus spreading activation along the graph). Every recall is stored as a RecallTrace
(seeds, per-hop arrivals, ranking with components, context, timings) and bumps access stats.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import F, Prefetch
from django.utils import timezone

from ...models import AgentSession, Edge, Interaction, Memory, Project, RecallTrace
from ...providers import get_embedder
from ..changelog import change_record
from ..vector_index import space_for
from .config import RECALL_PRESETS, RecallConfig, config_for
from .rank import Ranked, rank
from .reconstruct import dependency_order, subgraph_edges, tell
from .ripple import Arrival, spread
from .seeds import Scope, Seed, entity_ranking, fuse, lexical_ranking, vector_ranking

__all__ = ["RECALL_PRESETS", "RecallQuery", "RecallResult", "RecalledMemory", "memory_recall"]


@dataclass(frozen=True)
class RecallQuery:
    text: str
    k: int = 8
    session: AgentSession | None = None
    include_sensitive: bool = False
    preset: str = "ripple"
    params: dict[str, Any] = field(default_factory=dict)


@dataclass
class RecalledMemory:
    memory: Memory
    score: float
    rank: int
    components: dict[str, float]
    path: list[dict[str, Any]]  # how activation reached it: seed sources, or hops from a seed


@dataclass
class RecallResult:
    trace: RecallTrace
    items: list[RecalledMemory]
    edges: list[Edge]
    context: str


class _Clock:
    def __init__(self) -> None:
        self.start = self.last = time.perf_counter()
        self.laps: dict[str, float] = {}

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.laps[f"{name}_ms"] = round((now - self.last) * 1000, 2)
        self.last = now

    def done(self) -> dict[str, float]:
        return {**self.laps, "total_ms": round((time.perf_counter() - self.start) * 1000, 2)}


def memory_recall(*, project: Project, query: RecallQuery, actor: str) -> RecallResult:
    config = config_for(query.preset, query.params)
    scope = Scope(project, query.session.pk if query.session else None, config.statuses, query.include_sensitive)
    clock = _Clock()
    seeds = _seeds(scope, query.text, config, clock)
    activation, arrivals = spread(seeds, config, scope) if config.max_hops else (
        {s.memory_id: s.activation for s in seeds}, [Arrival(s.memory_id, 0, s.activation) for s in seeds])
    clock.lap("ripple")
    memories = _load_with_provenance(list(activation))
    ranked = rank(memories, activation, config, timezone.now(), query.k)
    edges = subgraph_edges([r.memory.pk for r in ranked])
    ordered = dependency_order([r.memory for r in ranked], edges)
    context = tell(ordered, edges)  # sensitive memories never got this far unless the caller may see them
    clock.lap("rank_and_reconstruct")
    items = _items(ranked, seeds, arrivals)
    with transaction.atomic():
        trace = _trace_store(project, query, config, seeds, arrivals, items, context, clock.done(), actor)
        Memory.objects.filter(pk__in=[i.memory.pk for i in items]).update(
            access_count=F("access_count") + 1, last_accessed_at=timezone.now())
    return RecallResult(trace=trace, items=items, edges=edges, context=context)


def _seeds(scope: Scope, text: str, config: RecallConfig, clock: _Clock) -> list[Seed]:
    rankings: dict[str, list[int]] = {}
    if config.use_vector:
        embedder = get_embedder()
        vector = embedder.embed_one(text)
        clock.lap("embed")
        rankings["vector"] = vector_ranking(scope, space_for(embedder), vector, config.candidate_pool)
    if config.use_lexical:
        rankings["lexical"] = lexical_ranking(scope, text, config.candidate_pool)
    if config.use_dimensions:
        rankings["entities"] = entity_ranking(scope, text, config.candidate_pool)
    clock.lap("seeds")
    return fuse(rankings, config)


def _load_with_provenance(memory_ids: list[int]) -> dict[int, Memory]:
    sources = Prefetch("sources", queryset=Interaction.objects.order_by("occurred_at", "id"))
    return {m.pk: m for m in Memory.objects.filter(pk__in=memory_ids).prefetch_related(sources)}


def _items(ranked: list[Ranked], seeds: list[Seed], arrivals: list[Arrival]) -> list[RecalledMemory]:
    seed_ranks = {s.memory_id: s.ranks for s in seeds}
    best_arrival: dict[int, Arrival] = {}
    for arrival in arrivals:
        if arrival.hop and arrival.activation > getattr(best_arrival.get(arrival.memory_id), "activation", 0):
            best_arrival[arrival.memory_id] = arrival
    items = []
    for position, entry in enumerate(ranked, start=1):
        memory_id = entry.memory.pk
        if memory_id in seed_ranks:
            path = [{"seed": True, "sources": seed_ranks[memory_id]}]
        else:
            path = _path_back(memory_id, best_arrival, seed_ranks)
        items.append(RecalledMemory(entry.memory, entry.score, position, entry.components, path))
    return items


def _path_back(memory_id: int, best: dict[int, Arrival], seed_ranks: dict[int, dict[str, int]]) -> list[dict]:
    """The strongest chain of edges from a seed to this memory, seed first."""
    path: list[dict] = []
    current = best.get(memory_id)
    while current is not None and len(path) <= 3:
        path.append({"hop": current.hop, "from": current.from_memory, "to": current.memory_id,
                     "edge_id": current.edge_id, "relation": current.relation,
                     "activation": round(current.activation, 6)})
        if current.from_memory in seed_ranks:
            break
        current = best.get(current.from_memory)
    return list(reversed(path))


def _trace_store(project: Project, query: RecallQuery, config: RecallConfig, seeds: list[Seed],
                 arrivals: list[Arrival], items: list[RecalledMemory], context: str, timings: dict[str, float],
                 actor: str) -> RecallTrace:
    trace = RecallTrace.objects.create(
        project=project, session=query.session, actor=actor, query=query.text,
        params={"preset": query.preset, "k": query.k, "scope": "session" if query.session else "project",
                "config": config.to_json()},
        seeds=[{"memory_id": s.memory_id, "activation": s.activation, "sources": s.ranks} for s in seeds],
        activations=[{"memory_id": a.memory_id, "hop": a.hop, "activation": round(a.activation, 6),
                      "from": a.from_memory, "edge_id": a.edge_id, "relation": a.relation} for a in arrivals],
        ranking=[{"memory_id": i.memory.pk, "rank": i.rank, "score": i.score, "components": i.components,
                  "path": i.path} for i in items],
        context=context, timings=timings,
    )
    change_record(
        project=project, session=query.session, actor=actor, op="recall.completed", object_type="recall",
        object_id=trace.pk, after={"query": query.text, "preset": query.preset,
                                   "memory_ids": [i.memory.pk for i in items]},
    )
    return trace
