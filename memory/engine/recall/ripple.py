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
from typing import NamedTuple

from django.db import connection

from ...models import EdgeStatus
from .config import RecallConfig
from .seeds import RankedRow, Scope, Seed


@dataclass
class Arrival:
    memory_id: int
    hop: int
    activation: float
    from_memory: int | None = None
    edge_id: int | None = None
    relation: str | None = None


class Step(NamedTuple):
    """An edge touching the frontier, and for each end whether the scope lets it take part, with the
    end's ranking columns (epoch seconds of occurred_at, importance)."""

    edge_id: int
    source_id: int
    target_id: int
    relation: str
    weight: float
    confidence: float
    status: str
    source_ok: bool
    source_at: float
    source_importance: float
    target_ok: bool
    target_at: float
    target_importance: float

    def end(self, memory_id: int) -> RankedRow | None:
        """The ranking columns of one end, or None if it is out of scope."""
        if memory_id == self.source_id:
            return RankedRow(memory_id, self.source_at, self.source_importance) if self.source_ok else None
        return RankedRow(memory_id, self.target_at, self.target_importance) if self.target_ok else None


def _edges_touching(frontier: set[int], scope: Scope) -> list[Step]:
    """One statement per hop: the edges and, for both ends, whether the scope allows them."""
    ids = list(frontier)
    source_ok, source_params = scope.condition("ms")
    target_ok, target_params = scope.condition("mt")
    session = "AND e.session_id = %s" if scope.session_id is not None else ""
    sql = (
        f"SELECT e.id, e.source_id, e.target_id, e.relation, e.weight, e.confidence, e.status, "
        f"({source_ok}), extract(epoch FROM ms.occurred_at)::float8, ms.importance, "
        f"({target_ok}), extract(epoch FROM mt.occurred_at)::float8, mt.importance "
        f"FROM memory_edge e JOIN memory_memory ms ON ms.id = e.source_id JOIN memory_memory mt ON mt.id = e.target_id "
        f"WHERE (e.source_id = ANY(%s) OR e.target_id = ANY(%s)) AND e.project_id = %s {session} "
        f"AND e.status <> %s ORDER BY e.id"
    )
    params = [*source_params, *target_params, ids, ids, scope.project.pk]
    params += [scope.session_id] if scope.session_id is not None else []
    params.append(EdgeStatus.REJECTED)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [Step._make(row) for row in cursor.fetchall()]


def spread(seeds: list[Seed], config: RecallConfig, scope: Scope,
           columns: dict[int, RankedRow]) -> tuple[dict[int, float], list[Arrival]]:
    """Total activation per memory, and every arrival (for the trace and the 'why' path).

    `columns` (ranking columns by memory id) gains an entry for every memory reached.
    """
    totals = {s.memory_id: s.activation for s in seeds}
    log = [Arrival(s.memory_id, 0, s.activation) for s in seeds]
    frontier = dict(totals)
    for hop in range(1, config.max_hops + 1):
        if not frontier:
            break
        incoming: dict[int, list[Arrival]] = defaultdict(list)
        steps = _edges_touching(set(frontier), scope)
        fan_out: dict[int, int] = defaultdict(int)
        for step in steps:
            fan_out[step.source_id] += 1
            fan_out[step.target_id] += 1
        for step in steps:
            for here, there, allowed in ((step.source_id, step.target_id, step.target_ok),
                                         (step.target_id, step.source_id, step.source_ok)):
                if not allowed or here not in frontier or there in totals:
                    continue
                approved = step.status == EdgeStatus.APPROVED
                passed = frontier[here] * step.weight * config.relation_weights.get(step.relation, 0.0)
                passed *= (config.approved_boost if approved else step.confidence) * config.decay**hop
                passed /= max(fan_out[here], 1) ** 0.5 if config.fan_normalise else 1.0
                if passed >= config.min_activation:
                    incoming[there].append(Arrival(there, hop, passed, here, step.edge_id, step.relation))
                    if there not in columns:
                        columns[there] = step.end(there)
        frontier = {}
        for memory_id, arrivals in incoming.items():
            values = [a.activation for a in arrivals]
            frontier[memory_id] = sum(values) if config.aggregation == "sum" else max(values)
            log.extend(arrivals)
        totals.update(frontier)
    return totals, log
