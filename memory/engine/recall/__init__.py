"""Recall by reconstruction (SPEC §4): seeds → ripple → rank → ordered context, with a stored trace.

Presets (config.py): `vector` (kNN only), `hybrid` (vector + full-text + entities, RRF), `ripple`
(hybrid seeds plus spreading activation along the graph). Every recall is stored as a RecallTrace
(seeds, per-hop arrivals, ranking with components, context, timings) and, when an agent recalls, bumps access stats.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from ... import metrics
from ...models import AgentSession, Edge, GraphChange, Interaction, Memory, Project, RecallTrace
from ...providers import get_embedder
from ..changelog import change_record
from ..operations import Op
from ..risk import risk_notes
from ..rows import RowReader, memory_reader, reading_cursor
from ..vector_index import cached_space_for
from .config import RECALL_PRESETS, RecallConfig, config_for
from .narrate import narrate
from .rank import Ranked, rank
from .reconstruct import dependency_order, language_of, subgraph_edges, told_lines
from .ripple import Arrival, spread
from .seeds import (
    RankedRow,
    Scope,
    Seed,
    entity_fragment,
    fuse,
    lexical_fragment,
    rankings,
    vector_fragment,
)
from .shaped import SHAPES, Shape, cause_asked, shaped_boost, shapes_asked

__all__ = ["RECALL_PRESETS", "RecallQuery", "RecallResult", "RecalledMemory", "memory_recall"]


@dataclass(frozen=True)
class RecallQuery:
    text: str
    k: int = 8
    session: AgentSession | None = None
    include_sensitive: bool = False
    preset: str = "ripple"
    params: dict[str, Any] = field(default_factory=dict)
    # An agent's recall is a use of its memories (decay counts it); a person looking at them is not.
    counts_as_access: bool = True


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
    narrative: str = ""


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
    seeds, columns = _seeds(scope, query.text, config, clock, query.k)
    why = bool(config.max_hops) and cause_asked(query.text, config)  # looking back is a step of the spread
    if config.max_hops:
        activation, arrivals = spread(seeds, config, scope, columns, cause_asked=why)
    else:
        activation = {s.memory_id: s.activation for s in seeds}
        arrivals = [Arrival(s.memory_id, 0, s.activation) for s in seeds]
    clock.lap("ripple")
    shapes = shapes_asked(query.text, config)
    ranking, boosts = shaped_boost(activation, shapes, config) if shapes else (activation, {})
    ranked = rank(columns, ranking, config, timezone.now(), query.k)
    looked_back = _looked_back(arrivals, seeds, activation) if why else {}
    for entry in ranked:
        entry.components.update(boosts.get(entry.memory_id, {}))  # the replay says why it rose
        if entry.memory_id in looked_back:
            entry.components["cause_boost"] = looked_back[entry.memory_id]
    memories = _load_with_provenance([r.memory_id for r in ranked])
    edges = subgraph_edges(list(memories))
    ordered = dependency_order(list(memories.values()), edges)
    notes = risk_notes(ordered, show_sensitive=query.include_sensitive, language=language_of(ordered))
    lines = told_lines(ordered, edges, notes)  # sensitive memories never got this far unless the caller may see them
    clock.lap("rank_and_reconstruct")
    narrative = ""
    if config.narrate:
        narrative = narrate(query.text, ordered, edges)
        clock.lap("narrate")
    items = _items(ranked, memories, seeds, arrivals, activation)
    with transaction.atomic():
        trace = _trace_store(project, query, config, seeds, arrivals, items, lines, clock.done(), actor,
                             narrative, shapes, why)
        if query.counts_as_access:
            Memory.objects.filter(pk__in=list(memories)).update(
                access_count=F("access_count") + 1, last_accessed_at=timezone.now())
    metrics.recall_seconds.labels(query.preset).observe(time.perf_counter() - clock.start)
    return RecallResult(trace=trace, items=items, edges=edges, context=trace.context, narrative=narrative)


def _looked_back(arrivals: list[Arrival], seeds: list[Seed], activation: dict[int, float]) -> dict[int, float]:
    """Memories a "why" question raised by looking back to them (ripple.py), and the factor, when that is
    what they hold: not a seed whose own match was stronger."""
    matched = {s.memory_id: s.activation for s in seeds}
    return {a.memory_id: a.boost for a in arrivals
            if a.boost > 1 and activation.get(a.memory_id, 0.0) > matched.get(a.memory_id, 0.0)}


def _last_change_id(project: Project) -> int | None:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT max(id) FROM {GraphChange._meta.db_table} WHERE project_id = %s", [project.pk])
        return cursor.fetchone()[0]


def _seeds(scope: Scope, text: str, config: RecallConfig, clock: _Clock,
           k: int) -> tuple[list[Seed], dict[int, RankedRow]]:
    """All seed sources in one statement; the kNN is redone exactly if filters left HNSW short.

    Each source offers at least k candidates and k seeds are kept at least, so `k` is honoured."""
    pool = max(config.candidate_pool, k)
    fragments = []
    space = vector = None
    weights: dict[str, float] = {"entities": config.entity_weight}
    if config.use_vector:
        embedder = get_embedder()
        if not embedder.understands(text):
            weights["vector"] = config.foreign_vector_weight
        vector = embedder.embed_one(text)
        clock.lap("embed")
        space = cached_space_for(embedder)
        fragments.append(vector_fragment(scope, space, vector, pool))
    if config.use_lexical:
        fragments.append(lexical_fragment(scope, text, pool))
    if config.use_dimensions:
        fragments.append(entity_fragment(scope, text, pool))
    order, columns = rankings(fragments)  # a source with nothing to search for is None: skipped there
    if config.use_vector and scope.session_id is None and len(order["vector"]) < pool:
        exact, more = rankings([vector_fragment(scope, space, vector, pool, exact=True)])
        order["vector"] = exact["vector"]
        columns.update(more)
    clock.lap("seeds")
    # k search matches at least: without hops they are the answer; with hops the first seed_count spread and
    # the rest compete with what arrives along the links (ripple.spread).
    return fuse(order, config, k, weights), columns


def _load_with_provenance(memory_ids: list[int]) -> dict[int, Memory]:
    """Full rows and their source interactions, for the memories that made the cut only.

    One plain statement (a memory's row once per source) read with RowReader: on the recall path a
    queryset and its prefetch, or two raw() statements, cost more than the query itself.
    """
    if not memory_ids:
        return {}
    memories, interactions = _provenance_readers()
    with reading_cursor() as cursor:
        cursor.execute(
            f"SELECT {memories.columns('m')}, {interactions.columns('i')} FROM {Memory._meta.db_table} m "
            f"LEFT JOIN {Memory.sources.through._meta.db_table} s ON s.memory_id = m.id "
            f"LEFT JOIN {Interaction._meta.db_table} i ON i.id = s.interaction_id "
            "WHERE m.id = ANY(%s) ORDER BY m.id, i.occurred_at, i.id", [memory_ids])
        rows = cursor.fetchall()
    found: dict[int, Memory] = {}
    sources: dict[int, list[Interaction]] = {}
    for row in rows:
        memory_id = row[0]
        if memory_id not in found:
            found[memory_id], sources[memory_id] = memories.instance(row), []
        if row[interactions.start] is not None:
            sources[memory_id].append(interactions.instance(row))
    for memory_id, memory in found.items():
        memory.loaded_sources = sources[memory_id]  # what Memory.provenance answers
    return {memory_id: found[memory_id] for memory_id in memory_ids if memory_id in found}


# What a recalled memory's provenance shows (the API's ProvenanceOutput, the store's search): not the
# interaction's text, scores or processing columns, whose transfer and parsing cost more at k=100 than the
# query did. An instance read this way loads any other field on first access.
PROVENANCE_FIELDS = ("id", "project", "session", "kind", "metadata", "occurred_at", "idempotency_key")


@functools.cache
def _provenance_readers() -> tuple[RowReader, RowReader]:
    memories = memory_reader()
    fields = [Interaction._meta.get_field(name) for name in PROVENANCE_FIELDS]
    return memories, RowReader(Interaction, fields, start=memories.stop)


def _items(ranked: list[Ranked], memories: dict[int, Memory], seeds: list[Seed], arrivals: list[Arrival],
           activation: dict[int, float]) -> list[RecalledMemory]:
    seed_ranks = {s.memory_id: s.ranks for s in seeds}
    # A search match past the spreading seeds that links reached more strongly is told by its links.
    by_link = {s.memory_id for s in seeds if activation.get(s.memory_id, 0.0) > s.activation}
    best_arrival: dict[int, Arrival] = {}
    for arrival in arrivals:
        if arrival.hop and arrival.activation > getattr(best_arrival.get(arrival.memory_id), "activation", 0):
            best_arrival[arrival.memory_id] = arrival
    items = []
    for position, entry in enumerate((r for r in ranked if r.memory_id in memories), start=1):
        memory_id = entry.memory_id
        if memory_id in seed_ranks and memory_id not in by_link:
            path = [{"seed": True, "sources": seed_ranks[memory_id]}]
        else:
            path = _path_back(memory_id, best_arrival, seed_ranks.keys() - by_link)
        items.append(RecalledMemory(memories[memory_id], entry.score, position, entry.components, path))
    return items


def _path_back(memory_id: int, best: dict[int, Arrival], seeds: AbstractSet[int]) -> list[dict]:
    """The strongest chain of edges from a seed to this memory, seed first."""
    path: list[dict] = []
    current = best.get(memory_id)
    while current is not None and len(path) <= 3:
        path.append({"hop": current.hop, "from": current.from_memory, "to": current.memory_id,
                     "edge_id": current.edge_id, "relation": current.relation,
                     "activation": round(current.activation, 6)})
        if current.from_memory in seeds:
            break
        current = best.get(current.from_memory)
    return list(reversed(path))


def _trace_store(project: Project, query: RecallQuery, config: RecallConfig, seeds: list[Seed],
                 arrivals: list[Arrival], items: list[RecalledMemory], lines: list[tuple[int | None, str]],
                 timings: dict[str, float], actor: str, narrative: str = "",
                 shapes: list[Shape] | None = None, cause_asked: bool = False) -> RecallTrace:
    """The trace keeps what the recall showed (each memory's text, the context by line) and the change-log
    position it ran at, so a replay reads the same after the graph changed."""
    returned = [i.memory.pk for i in items]
    trace = RecallTrace.objects.create(
        project=project, session=query.session, actor=actor, query=query.text,
        params={"preset": query.preset, "k": query.k, "scope": "session" if query.session else "project",
                "include_sensitive": query.include_sensitive, "config": config.to_json(),
                # e.g. time_question: the dated memories' activation was multiplied by time_question_boost
                **{f"{shape.name}_question": shape in (shapes or []) for shape in SHAPES},
                "cause_question": cause_asked},  # the spread looked back to the speakers' earlier turns
        seeds=[{"memory_id": s.memory_id, "activation": s.activation, "sources": s.ranks} for s in seeds],
        activations=[{"memory_id": a.memory_id, "hop": a.hop, "activation": round(a.activation, 6),
                      "from": a.from_memory, "edge_id": a.edge_id, "relation": a.relation} for a in arrivals],
        ranking=[{"memory_id": i.memory.pk, "rank": i.rank, "score": i.score, "components": i.components,
                  "path": i.path, "content": i.memory.content, "kind": i.memory.kind,
                  "session_id": i.memory.session_id, "sensitive": i.memory.sensitive} for i in items],
        context="\n".join(line for _, line in lines), context_lines=[{"memory_id": m, "text": t} for m, t in lines],
        narrative=narrative, timings=timings, change_id=_last_change_id(project), returned_ids=returned,
        touched_ids=sorted({a.memory_id for a in arrivals} | set(returned)),
    )
    # The live view flashes the recalled memories; the query itself stays in the trace (RecallTrace),
    # out of the change log every member and agent of the project reads.
    change_record(
        project=project, session=query.session, actor=actor, op=Op.RECALL_COMPLETED, object_type="recall",
        object_id=trace.pk, after={"preset": query.preset, "memory_ids": [i.memory.pk for i in items]},
    )
    return trace
