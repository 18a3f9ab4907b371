"""Accepting interactions: persist at once, then hand them to processing after commit.

Acceptance is the only synchronous step of the write path. In "queue" mode the processing job is
enqueued in the same transaction as the interaction (procrastinate uses Django's connection), so
an accepted interaction always has its job; in "inline" mode it is processed right after commit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from ..conf import memory_settings
from ..errors import ValidationFailed
from ..models import AgentSession, Interaction, InteractionKind
from .changelog import change_record
from .snapshots import interaction_snapshot


@dataclass(frozen=True)
class InteractionInput:
    kind: str
    content: str
    metadata: dict[str, Any] = field(default_factory=dict)
    occurred_at: datetime | None = None
    idempotency_key: str | None = None


@dataclass(frozen=True)
class Accepted:
    interaction: Interaction
    created: bool  # False when the idempotency key matched an earlier interaction


def interaction_input_check(item: InteractionInput) -> None:
    """Engine-level guard for callers that bypass the API serializers (commands, demo loader)."""
    if item.kind not in InteractionKind.values:
        raise ValidationFailed(f"unknown interaction kind {item.kind!r}",
                               {"kind": [f"use one of {', '.join(InteractionKind.values)}"]})
    size = len(item.content.encode())
    if not item.content.strip():
        raise ValidationFailed("content must not be empty")
    if size > memory_settings.MAX_CONTENT_BYTES:
        raise ValidationFailed(f"content is {size} bytes; the limit is {memory_settings.MAX_CONTENT_BYTES}")


def interactions_accept(*, session: AgentSession, items: list[InteractionInput], actor: str) -> list[Accepted]:
    """Persist a batch atomically (all or nothing) and schedule its processing."""
    if len(items) > memory_settings.MAX_BATCH:
        raise ValidationFailed(f"batch of {len(items)} exceeds the limit of {memory_settings.MAX_BATCH}")
    for item in items:
        interaction_input_check(item)
    with transaction.atomic():
        accepted = [_accept_one(session=session, item=item, actor=actor) for item in items]
        AgentSession.objects.filter(pk=session.pk).update(last_activity_at=timezone.now())
        new_ids = [a.interaction.pk for a in accepted if a.created]
        if new_ids:
            _schedule_processing(session.pk, new_ids)
    return accepted


def _accept_one(*, session: AgentSession, item: InteractionInput, actor: str) -> Accepted:
    if item.idempotency_key:
        existing = Interaction.objects.filter(session=session, idempotency_key=item.idempotency_key).first()
        if existing:
            return Accepted(existing, created=False)
    try:
        with transaction.atomic():
            interaction = Interaction.objects.create(
                project_id=session.project_id, session=session, kind=item.kind, content=item.content,
                metadata=item.metadata, occurred_at=item.occurred_at or timezone.now(),
                idempotency_key=item.idempotency_key or None,
            )
    except IntegrityError:
        # A concurrent request with the same idempotency key won the race: answer with its row.
        existing = Interaction.objects.filter(session=session, idempotency_key=item.idempotency_key).first()
        if existing is None:
            raise
        return Accepted(existing, created=False)
    change_record(
        project=session.project, session=session, actor=actor, op="interaction.received",
        object_type="interaction", object_id=interaction.pk, after=interaction_snapshot(interaction),
    )
    return Accepted(interaction, created=True)


def _schedule_processing(session_id: int, interaction_ids: list[int]) -> None:
    if memory_settings.INGEST_MODE == "queue":
        from ..tasks import process_interaction, session_lock

        # One lock per session: several workers run sessions in parallel, a session's jobs in order
        # (each memory links to the one before it, so two of one session must not interleave).
        job = process_interaction.configure(lock=session_lock(session_id))
        for interaction_id in interaction_ids:
            job.defer(interaction_id=interaction_id)
    else:
        from .pipeline import interactions_process_batch

        transaction.on_commit(lambda: interactions_process_batch(interaction_ids))
