"""Reads: what views, consumers and commands show. Nothing here writes (the layout is stored after writes)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from types import SimpleNamespace

from django.db.models import BooleanField, Count, IntegerField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.expressions import RawSQL
from django.db.models.functions import Coalesce

from .engine.layout import Position, positions_for
from .engine.operations import token_actor, user_actor
from .models import (
    AgentSession,
    ApiToken,
    Edge,
    EdgeStatus,
    Entity,
    EntityMention,
    GraphChange,
    Interaction,
    InteractionStatus,
    Memory,
    MemoryStatus,
    Project,
)

GRAPH_MAX_NODES = 5000  # a whole session is sent up to this many memories; beyond, a neighbourhood
GRAPH_MEMORY_FIELDS = ("id", "session_id", "content", "kind", "dimensions", "importance", "relevance", "novelty",
                       "status", "sensitive", "at_risk", "access_count", "occurred_at", "created_at")
GRAPH_EDGE_FIELDS = ("id", "session_id", "source_id", "target_id", "relation", "weight", "confidence", "origin",
                     "status", "needs_review", "rationale", "created_at")
# A memory of another session an edge of this session's graph reaches (a supersede across sessions, a link a
# person drew): drawn faded beside the edge, never counted as one of the session's memories.
GRAPH_GHOST_FIELDS = ("id", "session_id", "session__title", "kind", "status", "sensitive", "occurred_at", "content")
GRAPH_MAX_HOPS = 4
DEFAULT_HOPS = 2


# Interactions something failed for: processing raised (failed), or the memory was kept without some of
# its stages (engine/stages.py). Both are retried; the session page's Failed view lists them.
FAILING = Q(status=InteractionStatus.FAILED) | (Q(status=InteractionStatus.KEPT) & ~Q(stage_errors={}))


def _count(queryset: QuerySet) -> Coalesce:
    """A correlated COUNT(*) per session: one subquery per column, no join fan-out, no N+1."""
    counted = queryset.filter(session_id=OuterRef("pk")).order_by().values("session_id") \
        .annotate(n=Count("*")).values("n")
    return Coalesce(Subquery(counted, output_field=IntegerField()), Value(0))


def session_list(*, project: Project) -> QuerySet[AgentSession]:
    """The project's sessions, most recently active first, with their counts (one query)."""
    last_change = GraphChange.objects.filter(session_id=OuterRef("pk")).order_by("-id").values("created_at")[:1]
    return project.sessions.annotate(
        interaction_count=_count(Interaction.objects.all()),
        memory_count=_count(Memory.objects.exclude(status=MemoryStatus.FORGOTTEN)),
        filtered_count=_count(Interaction.objects.filter(status=InteractionStatus.FILTERED)),
        failed_count=_count(Interaction.objects.filter(FAILING)),
        edge_count=_count(Edge.objects.exclude(status=EdgeStatus.REJECTED)),
        proposal_count=_count(Edge.objects.filter(needs_review=True, status=EdgeStatus.INFERRED)),
        last_change_at=Subquery(last_change),
    ).order_by("-last_activity_at", "-id")


def proposal_count(*, project: Project) -> int:
    """Inferred edges still waiting for a person (the review queue's length)."""
    return Edge.objects.filter(project=project, needs_review=True, status=EdgeStatus.INFERRED).count()


def session_with_counts(session: AgentSession) -> AgentSession:
    """The session again, with the counts session_list gives (what SessionOutput shows)."""
    return session_list(project=session.project).get(pk=session.pk)


@dataclass
class SessionGraph:
    memories: list[SimpleNamespace]  # Memory's attribute names, GRAPH_MEMORY_FIELDS only
    edges: list[SimpleNamespace]  # Edge's attribute names, GRAPH_EDGE_FIELDS only
    entities: list[Entity]
    last_change_id: int
    positions: dict[int, Position] = field(default_factory=dict)
    sources: dict[int, list[dict]] = field(default_factory=dict)  # memory id → its interactions' provenance
    entity_names: dict[int, list[str]] = field(default_factory=dict)  # memory id → names it mentions
    total_memories: int = 0
    truncated: bool = False
    around: int | None = None
    ghosts: list[SimpleNamespace] = field(default_factory=list)  # other sessions' memories the edges reach


def session_graph(*, session: AgentSession, around: int | None = None, hops: int = DEFAULT_HOPS,
                  limit: int | None = None, with_positions: bool = True) -> SessionGraph:
    """The session's graph as of one change id (read first, so later changes are not lost).

    Whole, if it has at most `limit` (default GRAPH_MAX_NODES) memories and no `around` is asked;
    else the memories within `hops` of `around` (nearest first, at most `limit`), or with no
    `around` the most recent `limit` ones; `truncated` then says the graph is not whole.

    Edges: those of the session between the memories sent, and every edge (stored in this session or another)
    joining a memory sent to a memory of another session, whose other end comes as a ghost (`graph_ghosts`).
    """
    last_change_id = change_last_id(session=session)
    limit = limit or GRAPH_MAX_NODES
    alive = session.memories.exclude(status=MemoryStatus.FORGOTTEN)
    total = alive.count()
    chosen: list[int] | None = None  # None: the whole session; else the memory ids to send
    if around is not None:
        chosen = neighbourhood(session_id=session.pk, start=around, hops=hops, limit=limit)
    elif total > limit:
        chosen = list(alive.order_by("-occurred_at", "-id").values_list("id", flat=True)[:limit])
    rows = alive if chosen is None else alive.filter(_among("memory_memory.id", chosen))
    memories = _plain_rows(rows.order_by("occurred_at", "id"), GRAPH_MEMORY_FIELDS)
    ids = {m.pk for m in memories}
    truncated = len(ids) < total
    sources = _provenance(session, chosen if truncated else None)
    edges = session.edges.order_by("id")
    if truncated:  # one end among the memories sent: the other is too, or lives in another session (a ghost)
        edges = edges.filter(Q(source_id__any_of=chosen) | Q(target_id__any_of=chosen))
    entity_names: dict[int, list[str]] = defaultdict(list)
    entity_ids: set[int] = set()
    mentions = EntityMention.objects.filter(memory__session=session)
    if truncated:
        mentions = mentions.filter(_among("memory_entitymention.memory_id", chosen))
    for memory_id, entity_id, name in mentions.order_by("entity__name").values_list("memory_id", "entity_id",
                                                                                   "entity__name"):
        if memory_id in ids:
            entity_names[memory_id].append(name)
            entity_ids.add(entity_id)
    entities = list(Entity.objects.filter(pk__in=entity_ids).order_by("name"))
    positions = positions_for(session.pk, [m.pk for m in memories]) if with_positions and memories else {}
    drawn_edges, ghosts = _drawn_edges(session, edges, ids)
    return SessionGraph(memories=memories, edges=drawn_edges, entities=entities,
                        last_change_id=last_change_id,
                        positions=positions, sources=sources, entity_names=dict(entity_names), total_memories=total,
                        truncated=truncated, around=around, ghosts=ghosts)


def _drawn_edges(session: AgentSession, edges: QuerySet,
                 drawn: set[int]) -> tuple[list[SimpleNamespace], list[SimpleNamespace]]:
    """The session's edges, and those stored in other sessions that touch a drawn memory (a supersede across
    sessions is stored with the new memory's session: the old memory's session sees it here), each with both
    ends drawn or one end a ghost: a memory of another session, not forgotten. Never an edge to a forgotten
    memory, nor to one of this session not sent. The ends not drawn are read in one query (the ghosts), not by
    joining the memories twice: on fresh statistics that join once turned a 1 s load of 10,000 edges into 30 s
    (the planner chose a nested loop)."""
    rows = _plain_rows(edges, GRAPH_EDGE_FIELDS)
    if drawn:
        crossing = (Edge.objects.exclude(session_id=session.pk)
                    .filter(Q(source_id__any_of=drawn) | Q(target_id__any_of=drawn)).order_by("id"))
        rows = sorted(rows + _plain_rows(crossing, GRAPH_EDGE_FIELDS), key=lambda e: e.id)
    elsewhere = {end for e in rows for end in (e.source_id, e.target_id) if end not in drawn}
    ghosts = graph_ghosts(session=session, ids=elsewhere)
    shown = drawn | {g.id for g in ghosts}
    return [e for e in rows if e.source_id in shown and e.target_id in shown], ghosts


def graph_ghosts(*, session: AgentSession, ids: Iterable[int]) -> list[SimpleNamespace]:
    """The memories among `ids` that live in another session of the project than this one and are not
    forgotten, with their session's title: what the session's graph draws, faded, at the far end of an edge
    (one query)."""
    ids = set(ids)
    if not ids:
        return []
    rows = (Memory.objects.filter(pk__any_of=ids, project_id=session.project_id).exclude(session_id=session.pk)
            .exclude(status=MemoryStatus.FORGOTTEN).order_by("id"))
    return _plain_rows(rows, GRAPH_GHOST_FIELDS)


def _plain_rows(queryset: QuerySet, fields: tuple[str, ...]) -> list[SimpleNamespace]:
    """Rows with the model's attribute names (and `pk`), without building model instances: at 5,000
    memories and 10,000 edges, model instances took half of the graph's load time."""
    return [SimpleNamespace(pk=row["id"], **row) for row in queryset.values(*fields)]


def _among(column: str, ids: list[int]) -> RawSQL:
    """`column = ANY(array)`: one parameter, where `__in` would build one placeholder per id (5,000 here)."""
    return RawSQL(f"{column} = ANY(%s)", (ids,), output_field=BooleanField())


def _provenance(session: AgentSession, ids: list[int] | None) -> dict[int, list[dict]]:
    """The interactions each memory came from, in one query (a prefetch of 5,000 memories took ~1 s)."""
    through = Memory.sources.through.objects.filter(memory__session=session)
    if ids is not None:
        through = through.filter(_among(f"{Memory.sources.through._meta.db_table}.memory_id", ids))
    sources: dict[int, list[dict]] = defaultdict(list)
    rows = through.order_by("interaction_id").values_list(
        "memory_id", "interaction_id", "interaction__kind", "interaction__metadata", "interaction__occurred_at",
        "interaction__idempotency_key")
    for memory_id, interaction_id, kind, metadata, occurred_at, key in rows:
        sources[memory_id].append({"interaction_id": interaction_id, "kind": kind, "metadata": metadata,
                                   "occurred_at": occurred_at, "idempotency_key": key})
    return dict(sources)


def neighbourhood(*, session_id: int, start: int, hops: int, limit: int) -> list[int]:
    """Memories within `hops` edges of `start` (either direction, rejected edges ignored), nearest
    first, at most `limit`. One query per hop."""
    if not Memory.objects.filter(pk=start, session_id=session_id).exclude(status=MemoryStatus.FORGOTTEN).exists():
        return []
    seen = [start]
    known = {start}
    frontier = {start}
    live_edges = Edge.objects.filter(session_id=session_id).exclude(status=EdgeStatus.REJECTED)
    for _hop in range(min(hops, GRAPH_MAX_HOPS)):
        if not frontier or len(seen) >= limit:
            break
        pairs = live_edges.filter(Q(source_id__in=frontier) | Q(target_id__in=frontier)) \
            .exclude(source__status=MemoryStatus.FORGOTTEN).exclude(target__status=MemoryStatus.FORGOTTEN) \
            .values_list("source_id", "target_id")
        reached = sorted({b if a in frontier else a for a, b in pairs} - known)
        reached = reached[: limit - len(seen)]
        seen.extend(reached)
        known.update(reached)
        frontier = set(reached)
    return seen


def change_last_id(*, session: AgentSession) -> int:
    last = GraphChange.objects.filter(session=session).order_by("-id").values_list("id", flat=True).first()
    return last or 0


def change_list(*, session: AgentSession | None = None, session_id: int | None = None, after_id: int,
                limit: int = 500, memory_id: int | None = None, edge_id: int | None = None) -> list[GraphChange]:
    """The session's changes after an id, in order; or only one memory's history (its own changes and
    those of edges touching it) or one edge's, so a side panel need not read the whole log. A history also
    reads the sessions the memory's or edge's edges are stored in (of the same project): a supersede across
    sessions is recorded with the new memory's session, and the old memory's page shows it too."""
    session_id = session.pk if session is not None else session_id
    sessions = {session_id}
    if memory_id is not None or edge_id is not None:
        project_id = (session.project_id if session is not None
                      else AgentSession.objects.filter(pk=session_id).values_list("project_id", flat=True).first())
        crossing = Edge.objects.filter(project_id=project_id).exclude(session_id=None)
        if memory_id is not None:
            crossing = crossing.filter(Q(source_id=memory_id) | Q(target_id=memory_id))
        if edge_id is not None:
            crossing = crossing.filter(pk=edge_id)
        sessions |= set(crossing.values_list("session_id", flat=True).distinct())
    changes = GraphChange.objects.filter(session_id__in=sessions, id__gt=after_id)
    if memory_id is not None:
        changes = changes.filter(
            Q(object_type="memory", object_id=memory_id)
            | Q(object_type="edge") & (Q(after__source_id=memory_id) | Q(after__target_id=memory_id)
                                       | Q(before__source_id=memory_id) | Q(before__target_id=memory_id)))
    if edge_id is not None:
        changes = changes.filter(object_type="edge", object_id=edge_id)
    return list(changes.order_by("id")[:limit])


def interaction_list(*, session: AgentSession) -> QuerySet[Interaction]:
    return session.interactions.order_by("occurred_at", "id")


def failing_interactions(*, session: AgentSession) -> QuerySet[Interaction]:
    """The session's interactions that failed, or were kept with failed stages; newest first."""
    return session.interactions.filter(FAILING).order_by("-occurred_at", "-id")


def actor_names(actors: Iterable[str]) -> dict[str, str]:
    """What to call each actor of the change log: a person's username (`user:<id>`), a token's name
    (`token:<id>`); others (engine, maintenance) as they are. Two queries at most."""
    from django.contrib.auth import get_user_model

    actors = set(actors)

    def ids(prefix: str) -> set[int]:
        return {int(a[len(prefix):]) for a in actors if a.startswith(prefix) and a[len(prefix):].isdigit()}

    users, tokens = ids("user:"), ids("token:")
    names = {user_actor(pk): name for pk, name in
             (get_user_model().objects.filter(pk__in=users).values_list("pk", "username") if users else [])}
    names |= {token_actor(pk): f"{name} (token)" for pk, name in
              (ApiToken.objects.filter(pk__in=tokens).values_list("pk", "name") if tokens else [])}
    return names


def memory_list(*, project: Project, session: AgentSession | None = None, at_risk: bool | None = None
                ) -> QuerySet[Memory]:
    """The project's memories that are not forgotten, newest first (most at risk first when `at_risk`), with
    their sources."""
    queryset = Memory.objects.filter(project=project).exclude(status=MemoryStatus.FORGOTTEN)
    if session is not None:
        queryset = queryset.filter(session=session)
    if at_risk is True:
        return queryset.filter(at_risk__gt=0).order_by("-at_risk", "-id").prefetch_related("sources")
    if at_risk is False:
        queryset = queryset.filter(at_risk=0)
    return queryset.order_by("-id").prefetch_related("sources")
