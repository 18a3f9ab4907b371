"""Spreading activation (SPEC §4.2): from the seeds along edges in both directions, hop by hop.

The edges the first two hops can use (those touching the seeds or their neighbours) are read in one
statement; a third hop reads the edges of its frontier.

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


def _select(scope: Scope, ids_sql: str) -> tuple[str, list]:
    """The edges whose id is in `ids_sql` (a subquery), with both ends' scope check and ranking columns.
    Params: the two scope conditions' (and `ids_sql`'s own params follow them)."""
    source_ok, source_params = scope.condition("ms")
    target_ok, target_params = scope.condition("mt")
    sql = (
        f"SELECT e.id, e.source_id, e.target_id, e.relation, e.weight, e.confidence, e.status, "
        f"({source_ok}), extract(epoch FROM ms.occurred_at)::float8, ms.importance, "
        f"({target_ok}), extract(epoch FROM mt.occurred_at)::float8, mt.importance "
        f"FROM memory_edge e JOIN memory_memory ms ON ms.id = e.source_id JOIN memory_memory mt ON mt.id = e.target_id "
        f"WHERE e.id IN ({ids_sql}) ORDER BY e.id"
    )
    return sql, [*source_params, *target_params]


def _touching(nodes_sql: str, nodes_params: list, scope: Scope) -> tuple[str, list]:
    """Ids of the scope's edges with an end among the memory ids `nodes_sql` selects: two index
    lookups, one per end."""
    session = "AND e.session_id = %s" if scope.session_id is not None else ""
    one_end = (f"SELECT e.id FROM memory_edge e WHERE e.{{end}} IN ({nodes_sql}) AND e.project_id = %s {session} "
               "AND e.status <> %s")
    params = [*nodes_params, scope.project.pk, *([scope.session_id] if scope.session_id is not None else []),
              EdgeStatus.REJECTED]
    return f"{one_end.format(end='source_id')} UNION {one_end.format(end='target_id')}", params + params


def _fetch(ids_sql: str, ids_params: list, scope: Scope) -> list[Step]:
    sql, params = _select(scope, ids_sql)
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, *ids_params])
        return [Step._make(row) for row in cursor.fetchall()]


def _edges_touching(frontier: set[int], scope: Scope) -> list[Step]:
    """The edges with an end in the frontier."""
    return _fetch(*_touching("SELECT unnest(%s::bigint[])", [list(frontier)], scope), scope)


def _edges_around(seeds: set[int], scope: Scope) -> list[Step]:
    """In one statement, the edges with an end among the seeds or their neighbours: every edge the first
    two hops can use."""
    near_sql, near_params = _touching("SELECT unnest(%s::bigint[])", [list(seeds)], scope)
    nodes_sql = (f"SELECT unnest(%s::bigint[]) UNION SELECT ends.id FROM ({near_sql}) n JOIN memory_edge x "
                 "ON x.id = n.id CROSS JOIN LATERAL (VALUES (x.source_id), (x.target_id)) AS ends(id)")
    return _fetch(*_touching(nodes_sql, [list(seeds), *near_params], scope), scope)


class _EdgeCache:
    """The scope's edges by memory, for the memories all of whose edges have been fetched."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self.by_memory: dict[int, list[Step]] = defaultdict(list)
        self.covered: set[int] = set()
        self.seen: set[int] = set()

    def add(self, steps: list[Step], covered: set[int]) -> None:
        for step in steps:
            if step.edge_id not in self.seen:
                self.seen.add(step.edge_id)
                self.by_memory[step.source_id].append(step)
                self.by_memory[step.target_id].append(step)
        self.covered |= covered

    def prefetch_two_hops(self, seeds: set[int]) -> None:
        steps = _edges_around(seeds, self.scope)
        neighbours = {end for step in steps if step.source_id in seeds or step.target_id in seeds
                      for end in (step.source_id, step.target_id)}
        self.add(steps, seeds | neighbours)

    def touching(self, frontier: set[int]) -> list[Step]:
        missing = frontier - self.covered
        if missing:
            self.add(_edges_touching(missing, self.scope), missing)
        found = {step.edge_id: step for memory_id in frontier for step in self.by_memory.get(memory_id, ())}
        return [found[edge_id] for edge_id in sorted(found)]


def spread(seeds: list[Seed], config: RecallConfig, scope: Scope,
           columns: dict[int, RankedRow]) -> tuple[dict[int, float], list[Arrival]]:
    """Total activation per memory, and every arrival (for the trace and the 'why' path).

    `columns` (ranking columns by memory id) gains an entry for every memory reached.
    """
    totals = {s.memory_id: s.activation for s in seeds}
    log = [Arrival(s.memory_id, 0, s.activation) for s in seeds]
    frontier = dict(totals)
    edges = _EdgeCache(scope)
    if config.max_hops >= 2 and frontier:
        edges.prefetch_two_hops(set(frontier))  # one statement for the first two hops instead of two
    for hop in range(1, config.max_hops + 1):
        if not frontier:
            break
        incoming: dict[int, list[Arrival]] = defaultdict(list)
        steps = edges.touching(set(frontier))
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
