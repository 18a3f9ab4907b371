"""Accepting interactions: persist at once, then hand them to processing after commit.

Acceptance is the only synchronous step of the write path. In "queue" mode the processing job is
enqueued in the same transaction as the interaction (procrastinate uses Django's connection), so
an accepted interaction always has its job; in "inline" mode it is processed right after commit.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from .. import metrics
from ..conf import memory_settings
from ..errors import IdempotencyConflict, ValidationFailed
from ..models import AgentSession, Interaction, InteractionKind
from ..visibility import sensitive_interaction_ids
from .changelog import change_record
from .jobs import scheduler
from .links import LinkInput, links_bind, links_check, links_record
from .operations import Op
from .snapshots import interaction_snapshot
from .use import use_check

IDEMPOTENCY_KEY_MAX = 200
EXTERNAL_ID_MAX = 200


@dataclass(frozen=True)
class InteractionInput:
    kind: str
    content: str
    metadata: dict[str, Any] = field(default_factory=dict)
    occurred_at: datetime | None = None
    idempotency_key: str | None = None
    external_id: str = ""  # the agent framework's id (message, tool call, span): links may name it
    links: tuple[LinkInput, ...] = ()  # earlier interactions it depends on (engine/links.py)
    recall_id: int | None = None  # the recall it acted on, and the memories it used (engine/use.py)
    used: tuple[int, ...] = ()


@dataclass(frozen=True)
class Accepted:
    interaction: Interaction
    created: bool  # False when the idempotency key matched an earlier interaction


def metadata_problem(value: Any) -> str | None:
    """Why this metadata is refused (too large or nested too deeply), or None.

    Metadata is stored as given and sent back with every graph and recall, so it is bounded.
    """
    if not isinstance(value, dict):
        return "metadata must be a JSON object"
    limit = memory_settings.MAX_METADATA_BYTES
    size = len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass"))
    if size > limit:
        return f"metadata is {size} bytes as JSON; the limit is {limit} bytes"
    depth, frontier = 0, [value]
    while frontier:
        depth += 1
        if depth > memory_settings.MAX_METADATA_DEPTH:
            return f"metadata nests more than {memory_settings.MAX_METADATA_DEPTH} levels deep"
        frontier = [item for node in frontier for item in (node.values() if isinstance(node, dict) else node)
                    if isinstance(item, (dict, list))]
    return None


def interaction_input_check(item: InteractionInput) -> None:
    """Engine-level guard for callers that bypass the API serializers (commands, demo loader)."""
    problem = metadata_problem(item.metadata)
    if problem:
        raise ValidationFailed(problem, {"metadata": [problem]})
    if item.kind not in InteractionKind.values:
        raise ValidationFailed(f"unknown interaction kind {item.kind!r}",
                               {"kind": [f"use one of {', '.join(InteractionKind.values)}"]})
    size = len(item.content.encode())
    if not item.content.strip():
        raise ValidationFailed("content must not be empty")
    if size > memory_settings.MAX_CONTENT_BYTES:
        raise ValidationFailed(f"content is {size} bytes; the limit is {memory_settings.MAX_CONTENT_BYTES}")
    if len(item.external_id) > EXTERNAL_ID_MAX:
        raise ValidationFailed(f"external_id is longer than {EXTERNAL_ID_MAX} characters")
    links_check(list(item.links))


def interactions_accept(*, session: AgentSession, items: list[InteractionInput], actor: str,
                        may_see_sensitive: bool = True) -> list[Accepted]:
    """Persist a batch atomically (all or nothing) and schedule its processing.

    `may_see_sensitive`: whether the caller may read sensitive content. One who may not learns nothing
    about a sensitive interaction from its idempotency key: `_replayed` answers alike whatever is sent."""
    if len(items) > memory_settings.MAX_BATCH:
        raise ValidationFailed(f"batch of {len(items)} exceeds the limit of {memory_settings.MAX_BATCH}")
    for item in items:
        interaction_input_check(item)
    _check_keys_unique(items)
    where = (lambda i: "links") if len(items) == 1 else (lambda i: f"interactions[{i}].links")
    with transaction.atomic():
        for index, item in enumerate(items):
            use_check(project_id=session.project_id, recall_id=item.recall_id, used=list(item.used),
                      where="" if len(items) == 1 else f"interactions[{index}]")
        accepted = [_accept_one(session=session, item=item, actor=actor, may_see_sensitive=may_see_sensitive)
                    for item in items]
        for index, (item, entry) in enumerate(zip(items, accepted, strict=True)):
            if entry.created and item.links:
                links_record(entry.interaction, list(item.links), where(index))
        for entry in accepted:
            if entry.created:
                links_bind(entry.interaction)  # links that waited for it, earlier or later in this batch
        AgentSession.objects.filter(pk=session.pk).update(last_activity_at=timezone.now())
        new_ids = [a.interaction.pk for a in accepted if a.created]
        if new_ids:
            _schedule_processing(session.pk, new_ids)
            transaction.on_commit(lambda: metrics.interactions_accepted.inc(len(new_ids)))
    return accepted


def _check_keys_unique(items: list[InteractionInput]) -> None:
    for name, values in (("idempotency keys", [i.idempotency_key for i in items if i.idempotency_key]),
                         ("external ids", [i.external_id for i in items if i.external_id])):
        repeated = sorted(key for key, n in Counter(values).items() if n > 1)
        if repeated:
            message = f"{name} repeated within the batch: {', '.join(map(repr, repeated))}"
            raise ValidationFailed(message, {"interactions": [message]})


def _replayed(existing: Interaction, item: InteractionInput, may_see_sensitive: bool,
              named: str = "idempotency key") -> Accepted:
    """The stored interaction for a retried key, if the retry carries the same interaction.

    Comparing would be an oracle when the caller may not see the stored content (a sensitive memory was
    made from it, or it repeated one): "duplicate" for a right guess, 409 for a wrong one. Such a key
    is refused whatever comes with it; a new key stores the interaction anew (a repeat is attached to
    its memory by the write path, nothing is lost)."""
    if not may_see_sensitive and sensitive_interaction_ids([existing.pk]):
        raise IdempotencyConflict(
            f"{named} {_name_value(item, named)!r} was already used for interaction {existing.pk}, whose "
            "content you may not see; use a new key for a new interaction",
            {"interaction_id": existing.pk, named.replace(" ", "_"): _name_value(item, named)},
        )
    differs = [name for name, same in (
        ("kind", existing.kind == item.kind), ("content", existing.content == item.content),
        ("metadata", existing.metadata == item.metadata),
        ("occurred_at", item.occurred_at is None or existing.occurred_at == item.occurred_at),
    ) if not same]
    if differs:
        raise IdempotencyConflict(
            f"{named} {_name_value(item, named)!r} was already used for interaction {existing.pk} with a "
            f"different {', '.join(differs)}; use a new key for a new interaction",
            {"interaction_id": existing.pk, named.replace(" ", "_"): _name_value(item, named), "differs": differs},
        )
    return Accepted(existing, created=False)


def _name_value(item: InteractionInput, named: str) -> str | None:
    return item.external_id if named == "external id" else item.idempotency_key


def _earlier(session: AgentSession, item: InteractionInput) -> tuple[Interaction, str] | None:
    """The interaction stored before under this item's idempotency key, else its external id (a trace
    exporter's retry resends its spans: the same external id is the same interaction)."""
    if item.idempotency_key:
        existing = Interaction.objects.filter(session=session, idempotency_key=item.idempotency_key).first()
        if existing:
            return existing, "idempotency key"
    if item.external_id:
        # Excluding "" states the unique index's condition: a prepared statement's generic plan can use it then.
        existing = Interaction.objects.filter(session=session, external_id=item.external_id) \
            .exclude(external_id="").first()
        if existing:
            return existing, "external id"
    return None


def _accept_one(*, session: AgentSession, item: InteractionInput, actor: str, may_see_sensitive: bool) -> Accepted:
    earlier = _earlier(session, item)
    if earlier:
        return _replayed(earlier[0], item, may_see_sensitive, earlier[1])
    try:
        with transaction.atomic():
            interaction = Interaction.objects.create(
                project_id=session.project_id, session=session, kind=item.kind, content=item.content,
                metadata=item.metadata, occurred_at=item.occurred_at or timezone.now(),
                idempotency_key=item.idempotency_key or None, external_id=item.external_id,
                recall_id=item.recall_id, used=list(item.used),
            )
    except IntegrityError:
        # A concurrent request with the same idempotency key (or external id) won the race: answer with its row.
        earlier = _earlier(session, item)
        if earlier is None:
            raise
        return _replayed(earlier[0], item, may_see_sensitive, earlier[1])
    change_record(
        project=session.project, session=session, actor=actor, op=Op.INTERACTION_RECEIVED,
        object_type="interaction", object_id=interaction.pk, after=interaction_snapshot(interaction),
    )
    return Accepted(interaction, created=True)


def _schedule_processing(session_id: int, interaction_ids: list[int]) -> None:
    if memory_settings.INGEST_MODE == "queue":
        scheduler().process(session_id, interaction_ids)  # in this transaction: queued only if it commits
    else:
        from .pipeline import interactions_process_batch

        transaction.on_commit(lambda: interactions_process_batch(interaction_ids))
