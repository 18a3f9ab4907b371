"""Spreading activation (SPEC §4.2): from the seeds along edges in both directions, hop by hop.

Passed activation = source activation × edge weight × confidence (1 once a human approved it)
× relation weight (× approved boost) × decay^hop
÷ √(fan-out of the source): the fan effect, so a hub linked to everything cannot flood the ranking.
A node passes activation only to nodes first reached at this hop, so cycles cannot inflate scores;
several paths reaching a node in the same hop are summed (or max'ed). Rejected edges carry nothing,
and only memories allowed by the scope (status, sensitivity) take part.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Q

from ...models import Edge, EdgeStatus
from .config import RecallConfig
from .seeds import Scope, Seed


@dataclass
class Arrival:
    memory_id: int
    hop: int
    activation: float
    from_memory: int | None = None
    edge_id: int | None = None
    relation: str | None = None


def _edges_touching(frontier: set[int], scope: Scope) -> list[dict]:
    queryset = Edge.objects.filter(Q(source_id__in=frontier) | Q(target_id__in=frontier), project=scope.project)
    if scope.session_id is not None:
        queryset = queryset.filter(session_id=scope.session_id)
    return list(queryset.exclude(status=EdgeStatus.REJECTED)
                .values("id", "source_id", "target_id", "relation", "weight", "confidence", "status"))


def spread(seeds: list[Seed], config: RecallConfig, scope: Scope) -> tuple[dict[int, float], list[Arrival]]:
    """Total activation per memory, and every arrival (for the trace and the 'why' path)."""
    totals = {s.memory_id: s.activation for s in seeds}
    log = [Arrival(s.memory_id, 0, s.activation) for s in seeds]
    frontier = dict(totals)
    for hop in range(1, config.max_hops + 1):
        if not frontier:
            break
        incoming: dict[int, list[Arrival]] = defaultdict(list)
        edges = _edges_touching(set(frontier), scope)
        fan_out: dict[int, int] = defaultdict(int)
        for edge in edges:
            fan_out[edge["source_id"]] += 1
            fan_out[edge["target_id"]] += 1
        for edge in edges:
            for here, there in ((edge["source_id"], edge["target_id"]), (edge["target_id"], edge["source_id"])):
                if here not in frontier or there in totals:
                    continue
                approved = edge["status"] == EdgeStatus.APPROVED
                passed = frontier[here] * edge["weight"] * config.relation_weights.get(edge["relation"], 0.0)
                passed *= (config.approved_boost if approved else edge["confidence"]) * config.decay**hop
                passed /= max(fan_out[here], 1) ** 0.5 if config.fan_normalise else 1.0
                if passed >= config.min_activation:
                    incoming[there].append(Arrival(there, hop, passed, here, edge["id"], edge["relation"]))
        allowed = set(scope.memories().filter(id__in=incoming).values_list("id", flat=True)) if incoming else set()
        frontier = {}
        for memory_id in allowed:
            arrivals = incoming[memory_id]
            values = [a.activation for a in arrivals]
            frontier[memory_id] = sum(values) if config.aggregation == "sum" else max(values)
            log.extend(arrivals)
        totals.update(frontier)
    return totals, log
