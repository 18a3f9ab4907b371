"""Processing one accepted interaction: judge it, and if kept store a memory with its vector
and its place in the session graph. Safe to run twice: only pending/failed rows are processed.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from ..models import Edge, EdgeOrigin, Interaction, InteractionStatus, Memory, MemoryEmbedding, Relation
from ..providers import get_embedder
from .changelog import ENGINE_ACTOR, change_record
from .judging import Judgement, judge, normalized
from .snapshots import edge_snapshot, interaction_snapshot, memory_snapshot
from .vector_index import space_for

logger = logging.getLogger(__name__)
PROCESSABLE = (InteractionStatus.PENDING, InteractionStatus.FAILED)


def interaction_process(*, interaction_id: int) -> Interaction:
    """Run the write path for one interaction in one transaction."""
    with transaction.atomic():
        interaction = (
            Interaction.objects.select_for_update(of=("self",))
            .select_related("session", "project")
            .get(pk=interaction_id)
        )
        if interaction.status not in PROCESSABLE:
            return interaction
        before = interaction_snapshot(interaction)
        judgement = judge(interaction)
        duplicate = _duplicate_of(interaction) if judgement.keep else None
        if duplicate is not None:
            judgement = Judgement(False, judgement.kind, judgement.importance,
                                  f"repeats memory #{duplicate.pk}", judgement.scores)
            duplicate.sources.add(interaction)
        memory = _memory_create(interaction, judgement) if judgement.keep else None
        interaction.status = InteractionStatus.KEPT if memory else InteractionStatus.FILTERED
        interaction.scores, interaction.reason = judgement.scores, judgement.reason
        interaction.error, interaction.processed_at = "", timezone.now()
        interaction.save(update_fields=["status", "scores", "reason", "error", "processed_at"])
        change_record(
            project=interaction.project, session=interaction.session, actor=ENGINE_ACTOR,
            op=f"interaction.{interaction.status}", object_type="interaction", object_id=interaction.pk,
            before=before, after=interaction_snapshot(interaction),
        )
    return interaction


def interaction_process_safely(*, interaction_id: int) -> Interaction | None:
    """Process, and on failure record the error on the interaction (kept, retried later)."""
    try:
        return interaction_process(interaction_id=interaction_id)
    except Exception as exc:  # noqa: BLE001 - any failure must leave the interaction visible
        logger.exception("processing interaction %s failed", interaction_id)
        interaction_mark_failed(interaction_id=interaction_id, error=exc)
        return None


def interaction_mark_failed(*, interaction_id: int, error: BaseException) -> None:
    Interaction.objects.filter(pk=interaction_id, status__in=PROCESSABLE).update(
        status=InteractionStatus.FAILED, error=f"{type(error).__name__}: {error}"[:2000], attempts=F("attempts") + 1
    )


def _duplicate_of(interaction: Interaction) -> Memory | None:
    """An active memory of the session with the same normalised text (paraphrases: next issue)."""
    text = normalized(interaction.content)
    candidates = Memory.objects.filter(session=interaction.session, status="active").only("id", "content")
    return next((m for m in candidates.iterator() if normalized(m.content) == text), None)


def _memory_create(interaction: Interaction, judgement: Judgement) -> Memory:
    session = interaction.session
    previous = (
        Memory.objects.filter(session=session).exclude(status="forgotten").order_by("-occurred_at", "-id").first()
    )
    memory = Memory.objects.create(
        project=interaction.project, session=session, content=interaction.content, kind=judgement.kind,
        importance=judgement.importance, occurred_at=interaction.occurred_at,
        dimensions={"intent": interaction.kind, "source_kind": interaction.kind},
    )
    memory.sources.add(interaction)
    embedder = get_embedder()
    MemoryEmbedding.objects.create(
        memory=memory, space=space_for(embedder), project=interaction.project, session=session,
        vector=embedder.embed_one(interaction.content),
    )
    change_record(
        project=interaction.project, session=session, actor=ENGINE_ACTOR, op="memory.created",
        object_type="memory", object_id=memory.pk, after=memory_snapshot(memory),
    )
    if previous is not None:
        _structural_edge(previous, memory)
    return memory


def _structural_edge(parent: Memory, child: Memory) -> Edge:
    edge = Edge.objects.create(
        project_id=child.project_id, session_id=child.session_id, source=parent, target=child,
        relation=Relation.NEXT_IN_SESSION, weight=1.0, confidence=1.0, origin=EdgeOrigin.RULE,
        rationale="adjacent in the session",
    )
    change_record(
        project=child.project, session=child.session, actor=ENGINE_ACTOR, op="edge.created",
        object_type="edge", object_id=edge.pk, after=edge_snapshot(edge),
    )
    return edge
