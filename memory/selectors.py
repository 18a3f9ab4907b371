"""Reads: what views, consumers and commands show. No writes here."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q, QuerySet

from .models import AgentSession, Edge, Entity, GraphChange, Interaction, Memory, Project


def session_list(*, project: Project) -> QuerySet[AgentSession]:
    return project.sessions.annotate(
        interaction_count=Count("interactions", distinct=True),
        memory_count=Count("memories", filter=~Q(memories__status="forgotten"), distinct=True),
    ).order_by("-last_activity_at")


@dataclass
class SessionGraph:
    memories: list[Memory]
    edges: list[Edge]
    entities: list[Entity]
    last_change_id: int


def session_graph(*, session: AgentSession) -> SessionGraph:
    """The session's graph as of one change id (read that first, so later changes are not lost)."""
    last_change_id = change_last_id(session=session)
    memories = list(
        session.memories.exclude(status="forgotten").prefetch_related("sources").order_by("occurred_at", "id")
    )
    edges = list(session.edges.order_by("id"))
    entities = list(Entity.objects.filter(mentions__memory__session=session).distinct().order_by("name"))
    return SessionGraph(memories=memories, edges=edges, entities=entities, last_change_id=last_change_id)


def change_last_id(*, session: AgentSession) -> int:
    last = GraphChange.objects.filter(session=session).order_by("-id").values_list("id", flat=True).first()
    return last or 0


def change_list(*, session: AgentSession, after_id: int, limit: int = 500) -> list[GraphChange]:
    return list(GraphChange.objects.filter(session=session, id__gt=after_id).order_by("id")[:limit])


def interaction_list(*, session: AgentSession) -> QuerySet[Interaction]:
    return session.interactions.order_by("occurred_at", "id")
