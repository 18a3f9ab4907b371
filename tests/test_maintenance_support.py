"""Helpers for the maintenance tests (no tests here): memories written the way the pipeline writes
them (row, vector, dimensions, mentions, source interaction), edges, and a whole-database text scan."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import connection, transaction
from django.utils import timezone

from memory.engine.entities import mentions_link
from memory.engine.extraction import extract_dimensions, segment
from memory.engine.vector_index import space_for
from memory.models import (
    AgentSession,
    Edge,
    EdgeOrigin,
    EdgeStatus,
    GraphChange,
    Interaction,
    InteractionStatus,
    Memory,
    MemoryEmbedding,
)
from memory.providers import get_embedder


def remember(session: AgentSession, content: str, *, kind: str = "fact", importance: float = 3.0,
             occurred_at: datetime | None = None, sensitive: bool = False, status: str = "active",
             access_count: int = 0, last_accessed_at: datetime | None = None) -> Memory:
    """A memory with its source interaction, vector, dimensions and entity mentions."""
    when = occurred_at or timezone.now() - timedelta(minutes=5)
    dims = extract_dimensions(content, now=when, kind="user_input")
    with transaction.atomic():
        interaction = Interaction.objects.create(project=session.project, session=session, kind="user_input",
                                                 content=content, occurred_at=when, status=InteractionStatus.KEPT,
                                                 metadata={"turn": 1}, reason="kept for the test")
        memory = Memory.objects.create(
            project=session.project, session=session, content=content, search_text=" ".join(segment(content)),
            kind=kind, importance=importance, occurred_at=when, sensitive=sensitive, status=status,
            access_count=access_count, last_accessed_at=last_accessed_at,
            dimensions={**dims.to_json(), "source_kind": "user_input"},
        )
        memory.sources.add(interaction)
        embedder = get_embedder()
        MemoryEmbedding.objects.create(memory=memory, space=space_for(embedder), project=session.project,
                                       session=session, vector=embedder.embed_one(content))
        mentions_link(memory=memory, found=dims.entities)
    return memory


def link(parent: Memory, child: Memory, relation: str, *, status: str = EdgeStatus.INFERRED,
         origin: str = EdgeOrigin.RULE, confidence: float = 0.9, needs_review: bool = False,
         rationale: str = "test edge") -> Edge:
    return Edge.objects.create(project_id=child.project_id, session_id=child.session_id, source=parent, target=child,
                               relation=relation, status=status, origin=origin, confidence=confidence,
                               needs_review=needs_review, rationale=rationale)


def rows_containing(text: str) -> dict[str, int]:
    """Every table of the database whose rows (as text, JSON included) contain `text`."""
    found = {}
    with connection.cursor() as cursor:
        cursor.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        tables = [row[0] for row in cursor.fetchall()]
        for table in tables:
            cursor.execute(f'SELECT count(*) FROM "{table}" t WHERE t::text LIKE %s', [f"%{text}%"])
            count = cursor.fetchone()[0]
            if count:
                found[table] = count
    return found


def db_counts() -> dict[str, int]:
    """Row counts of everything a maintenance job may write."""
    from memory.models import Entity, EntityMention, RecallTrace

    return {model.__name__: model.objects.count() for model in (Memory, Edge, EntityMention, Entity, MemoryEmbedding,
                                                               Interaction, GraphChange, RecallTrace)}


def db_state() -> dict[str, list]:
    """A fingerprint of the rows a job could change (to prove a dry run or a refused call wrote nothing)."""
    return {
        "memories": list(Memory.objects.order_by("id").values_list("id", "status", "content", "importance",
                                                                   "sensitive", "dimensions")),
        "edges": list(Edge.objects.order_by("id").values_list("id", "source_id", "target_id", "relation", "status",
                                                               "confidence", "needs_review")),
        "interactions": list(Interaction.objects.order_by("id").values_list("id", "content")),
        "changes": list(GraphChange.objects.order_by("id").values_list("id", "before", "after")),
        **{"counts": sorted(db_counts().items())},
    }
