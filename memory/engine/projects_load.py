"""A new project loaded from an export's checked rows (administration/transfer.py checks them first).

The engine's writer of an import: sessions, interactions, memories and their sources, entities, mentions
and edges with new ids, and the memories re-embedded, in one transaction.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone

from ..models import AgentSession, Edge, Entity, EntityMention, Interaction, Memory, Project
from ..providers import get_embedder
from .extraction import segment
from .projects import project_create
from .vector_index import EmbeddingRow, embeddings_copy, space_for

LOADED = ("session", "interaction", "memory", "entity", "mention", "edge")  # in dependency order


def project_load(rows: list[dict], *, name: str, slug: str) -> Project:
    """Write rows that passed the import's checks into a new project; every id is new."""
    new: dict[str, dict[int, int]] = {kind: {} for kind in LOADED}
    now = timezone.now()
    with transaction.atomic():
        project = project_create(name=name, slug=slug)
        by_kind = {kind: [r for r in rows if r["type"] == kind] for kind in LOADED}
        for r in by_kind["session"]:
            s = AgentSession.objects.create(project=project, external_id=r["external_id"], title=r["title"],
                                            task=r["task"], metadata=r["metadata"])
            AgentSession.objects.filter(pk=s.pk).update(created_at=datetime.fromisoformat(r["created_at"]))
            new["session"][r["id"]] = s.pk
        interactions = Interaction.objects.bulk_create(Interaction(
            project=project, session_id=new["session"][r["session"]], kind=r["kind"], content=r["content"],
            metadata=r["metadata"], occurred_at=datetime.fromisoformat(r["occurred_at"]),
            idempotency_key=r["idempotency_key"], external_id=r["external_id"], status=r["status"],
            scores=r["scores"], reason=r["reason"],
            processed_at=now) for r in by_kind["interaction"])
        new["interaction"] = {r["id"]: i.pk for r, i in zip(by_kind["interaction"], interactions, strict=True)}
        memories = Memory.objects.bulk_create(Memory(
            project=project, session_id=new["session"][r["session"]], content=r["content"],
            search_text=" ".join(segment(r["content"])), kind=r["kind"], dimensions=r["dimensions"],
            importance=r["importance"], relevance=r["relevance"], novelty=r["novelty"], status=r["status"],
            sensitive=r["sensitive"], occurred_at=datetime.fromisoformat(r["occurred_at"]))
            for r in by_kind["memory"])
        new["memory"] = {r["id"]: m.pk for r, m in zip(by_kind["memory"], memories, strict=True)}
        Memory.sources.through.objects.bulk_create(
            Memory.sources.through(memory_id=new["memory"][r["id"]], interaction_id=new["interaction"][i])
            for r in by_kind["memory"] for i in r["sources"])
        entities = Entity.objects.bulk_create(Entity(
            project=project, name=r["name"], normalized_name=r["normalized_name"], type=r["entity_type"],
            aliases=r["aliases"], evidence=r["evidence"]) for r in by_kind["entity"])
        new["entity"] = {r["id"]: e.pk for r, e in zip(by_kind["entity"], entities, strict=True)}
        EntityMention.objects.bulk_create(EntityMention(
            memory_id=new["memory"][r["memory"]], entity_id=new["entity"][r["entity"]], surface=r["surface"])
            for r in by_kind["mention"])
        Edge.objects.bulk_create(Edge(
            project=project, session_id=None if r["session"] is None else new["session"][r["session"]],
            source_id=new["memory"][r["source"]], target_id=new["memory"][r["target"]], relation=r["relation"],
            weight=r["weight"], confidence=r["confidence"], origin=r["origin"], status=r["status"],
            needs_review=r["needs_review"], rationale=r["rationale"]) for r in by_kind["edge"])
        embedder = get_embedder()
        vectors = embedder.embed([m.content for m in memories]) if memories else []
        embeddings_copy(space_for(embedder), (EmbeddingRow(m.pk, project.pk, m.session_id, v)
                                             for m, v in zip(memories, vectors, strict=True)))
    return project
