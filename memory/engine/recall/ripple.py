"""Spreading activation (SPEC §4.2): from the seeds along edges in both directions, hop by hop.

Passed activation = source activation × edge weight × confidence (1 once a human approved it)
× relation weight (× approved boost) × decay^hop
÷ √(fan-out of the source): the fan effect, so a hub linked to everything cannot flood the ranking.
A node passes activation only to nodes first reached at this hop, so cycles cannot inflate scores;
several paths reaching a node in the same hop are summed (or max'ed), but never beyond decay × the
strongest node that passed to it (nor one path beyond decay × its own sender), so what arrives by links
stays below what led to it. Rejected edges carry nothing, and only memories allowed by the scope (status,
sensitivity) take part.

Only the first `seed_count` seeds spread. The search matches after them (there are k in all) join the
ranking on their own match, each keeping the stronger of its match and what reached it by links: without
them ripple's ranks past the seeds held only arrivals, and at k = 20 it found less than the same search
without hops (docs/eval.md).

A "why …?" question (`cues.CAUSE_QUESTION`) looks back: in a conversation the cause is often told by the
same speaker just before the turn that matches ("Marcus has quit." … "So the gig is off."), and shares
no word with the question. What passes from a turn back to its speaker's earlier turn (`next_by_speaker`
followed from its target to its source) is multiplied by `cause_question_boost`, unless that turn is
too short to explain anything ("Thanks, I think."), and is capped at √decay × the turn it came from, as if
half a hop away, instead of decay × it: the cause can then rank right after what it explains. Measured in
`make eval` at ×3: chain R@5 0.38 → 0.40, far@5 0.15 → 0.20, no type lost (docs/eval.md); the √decay cap
then chain R@5 0.40 → 0.42, far@5 0.20 → 0.22, constraint 0.49 → 0.51, R@10 as before.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import NamedTuple

from django.db import connection

from ...models import EdgeStatus, Relation
from .config import RecallConfig
from .seeds import RankedRow, Scope, Seed

# A "why" question looks back along these, to an earlier turn of at least this many words (its search terms,
# the speaker's label not counted: Memory.search_words): a shorter one ("Thanks, I think.", "72？你现在多少")
# explains nothing.
CAUSE_RELATIONS = frozenset({Relation.NEXT_BY_SPEAKER})
CAUSE_MIN_WORDS = 5


@dataclass
class Arrival:
    memory_id: int
    hop: int
    activation: float
    from_memory: int | None = None
    edge_id: int | None = None
    relation: str | None = None
    boost: float = 1.0  # cause_question_boost, when a "why" question looked back along this edge


class Step(NamedTuple):
    """An edge touching the frontier, and its far end (the target if the source is in the frontier,
    else the source): whether the scope lets it take part, and its ranking columns (epoch seconds of
    occurred_at, importance, whether it asks a question, its search terms' count, its kind). The near end is in the
    frontier, so it is in scope and known already."""

    edge_id: int
    source_id: int
    target_id: int
    relation: str
    weight: float
    confidence: float
    status: str
    far_ok: bool
    far_at: float
    far_importance: float
    far_asks: bool
    far_words: int
    far_kind: str

    def far(self, frontier: dict[int, float]) -> int:
        return self.target_id if self.source_id in frontier else self.source_id


def _edges_touching(frontier: set[int], scope: Scope) -> list[Step]:
    """One statement per hop: the edges, with each one's far end (only that end's row is read)."""
    ids = list(frontier)
    far_ok, far_params = scope.condition("m")
    session = "AND e.session_id = %s" if scope.session_id is not None else ""
    sql = (
        f"SELECT e.id, e.source_id, e.target_id, e.relation, e.weight, e.confidence, e.status, "
        f"({far_ok}), extract(epoch FROM m.occurred_at)::float8, m.importance, m.asks, m.search_words, m.kind "
        "FROM memory_edge e "
        "JOIN memory_memory m ON m.id = CASE WHEN e.source_id = ANY(%s) THEN e.target_id ELSE e.source_id END "
        f"WHERE (e.source_id = ANY(%s) OR e.target_id = ANY(%s)) AND e.project_id = %s {session} "
        f"AND e.status <> %s ORDER BY e.id"
    )
    params = [*far_params, ids, ids, ids, scope.project.pk]
    params += [scope.session_id] if scope.session_id is not None else []
    params.append(EdgeStatus.REJECTED)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [Step._make(row) for row in cursor.fetchall()]


def spread(seeds: list[Seed], config: RecallConfig, scope: Scope, columns: dict[int, RankedRow],
           *, cause_asked: bool = False) -> tuple[dict[int, float], list[Arrival]]:
    """Total activation per memory, and every arrival (for the trace and the 'why' path).

    `columns` (ranking columns by memory id) gains an entry for every memory reached. `cause_asked`: the
    question asks why, so looking back to a speaker's earlier turn is boosted (see the module's docstring).
    """
    cause_boost = config.cause_question_boost if cause_asked else 1.0
    spreading, matched_only = seeds[:config.seed_count], seeds[config.seed_count:]
    totals = {s.memory_id: s.activation for s in spreading}
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
            there = step.far(frontier)
            if not step.far_ok or there in totals:  # also skips an edge with both ends in the frontier
                continue
            here = step.source_id if there == step.target_id else step.target_id
            approved = step.status == EdgeStatus.APPROVED
            passed = frontier[here] * step.weight * config.relation_weights.get(step.relation, 0.0)
            passed *= (config.approved_boost if approved else step.confidence) * config.decay**hop
            passed /= max(fan_out[here], 1) ** 0.5 if config.fan_normalise else 1.0
            boost = cause_boost if cause_boost > 1 and _looks_back_to_cause(step, there) else 1.0
            # One link never passes more than its ceiling (a boost or a weight above 1 could): what the trace
            # says an edge carried is then what the memory got from it.
            passed = min(passed * boost, _ceiling(boost, config) * frontier[here])
            if passed >= config.min_activation:
                incoming[there].append(Arrival(there, hop, passed, here, step.edge_id, step.relation, boost))
                if there not in columns:
                    columns[there] = RankedRow(there, step.far_at, step.far_importance, step.far_asks,
                                               step.far_words, step.far_kind)
        senders = frontier
        frontier = {}
        for memory_id, arrivals in incoming.items():
            values = [a.activation for a in arrivals]
            total = sum(values) if config.aggregation == "sum" else max(values)
            # A memory reached only through links never outranks the best memory that led to it: many weak
            # paths (a shared name, adjacency) must not bury a direct match.
            frontier[memory_id] = min(total, max(_ceiling(a.boost, config) * senders[a.from_memory] for a in arrivals))
            log.extend(arrivals)
        totals.update(frontier)
    for seed in matched_only:  # after the hops, so being a weak match never keeps a stronger arrival out
        totals[seed.memory_id] = max(totals.get(seed.memory_id, 0.0), seed.activation)
    return totals, log


def _ceiling(boost: float, config: RecallConfig) -> float:
    """What a link may pass at most, as a share of its sender: decay, or √decay for a looked-back cause."""
    return config.decay ** 0.5 if boost > 1 else config.decay


def _looks_back_to_cause(step: Step, there: int) -> bool:
    """From a turn back to its speaker's earlier turn (the edge's source), one long enough to tell a cause."""
    return step.relation in CAUSE_RELATIONS and there == step.source_id and step.far_words >= CAUSE_MIN_WORDS
