"""A project's (or one session's) export rows as the exporter may see them: the JSON Lines and GraphML
files of administration/transfer.py are written from these rows only.

What the exporter may not see is masked by the visibility rule row by row: a sensitive memory's text
(safe dimensions kept), the interactions it came from and pending ones (which may repeat one), the
entities only such memories name and their mentions' surfaces, and the rationale of every edge touching
one. Forgotten memories are left out with their mentions and edges, and so are interactions that only
forgotten memories came from.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from django.db.models import Q

from ..access import Access
from ..models import AgentSession, Edge, Entity, EntityMention, Interaction, Memory, MemoryStatus
from ..visibility import SENSITIVE_MASK, edge_rationale, interaction_mask, mask_interaction, mask_memory_snapshot

FORMAT_VERSION = 1


def _moment(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def export_rows(access: Access, session: AgentSession | None = None) -> Iterator[dict]:
    """The export of the project (or one session of it) as the reader may see it, row by row: every row
    that could quote a sensitive memory passes through the visibility rule (memory/visibility.py)."""
    project = access.project
    scope = Q(project=project) if session is None else Q(session=session)
    memories = list(Memory.objects.filter(scope).exclude(status=MemoryStatus.FORGOTTEN)
                    .prefetch_related("sources").order_by("id"))
    kept = {m.pk for m in memories}
    hidden = set() if access.may_see_sensitive else {m.pk for m in memories if m.sensitive}
    hidden_sources = {i.pk for m in memories if m.pk in hidden for i in m.sources.all()}
    forgotten_only = set(Interaction.objects.filter(scope, memories__status=MemoryStatus.FORGOTTEN)
                         .exclude(memories__status__in=[s for s in MemoryStatus.values if s != "forgotten"])
                         .values_list("id", flat=True))
    sessions = AgentSession.objects.filter(project=project) if session is None else [session]
    yield {"type": "export", "version": FORMAT_VERSION, "project": {"slug": project.slug, "name": project.name},
           "session": None if session is None else session.pk, "masked": not access.may_see_sensitive}
    for s in sorted(sessions, key=lambda s: s.pk):
        yield {"type": "session", "id": s.pk, "external_id": s.external_id, "title": s.title, "task": s.task,
               "metadata": s.metadata, "created_at": _moment(s.created_at)}
    for i in Interaction.objects.filter(scope).exclude(pk__any_of=forgotten_only).order_by("id"):
        mask = None if access.may_see_sensitive else interaction_mask(i.pk, i.status, hidden_sources)
        row = {"type": "interaction", "id": i.pk, "session": i.session_id, "kind": i.kind, "content": i.content,
               "metadata": i.metadata, "occurred_at": _moment(i.occurred_at), "idempotency_key": i.idempotency_key,
               "external_id": i.external_id, "status": i.status, "scores": i.scores, "reason": i.reason}
        yield mask_interaction(row, mask)
    for m in memories:
        row = {"type": "memory", "id": m.pk, "session": m.session_id, "content": m.content, "kind": m.kind,
               "dimensions": m.dimensions, "importance": m.importance, "relevance": m.relevance,
               "novelty": m.novelty, "status": m.status, "sensitive": m.sensitive,
               "occurred_at": _moment(m.occurred_at), "sources": sorted(i.pk for i in m.sources.all())}
        yield mask_memory_snapshot(row) if m.pk in hidden else row
    mentions = list(EntityMention.objects.filter(memory_id__any_of=kept).order_by("id"))
    hidden_names = {mention.entity_id for mention in mentions if mention.memory_id in hidden}
    shown_names = {mention.entity_id for mention in mentions if mention.memory_id not in hidden}
    for e in Entity.objects.filter(pk__any_of={m.entity_id for m in mentions}).order_by("id"):
        masked = e.pk in hidden_names - shown_names  # named only in what the reader may not see
        yield {"type": "entity", "id": e.pk, "name": SENSITIVE_MASK if masked else e.name,
               "normalized_name": f"{SENSITIVE_MASK} {e.pk}" if masked else e.normalized_name, "entity_type": e.type,
               "aliases": [] if masked else e.aliases, "evidence": [] if masked else e.evidence}
    for mention in mentions:
        yield {"type": "mention", "id": mention.pk, "memory": mention.memory_id, "entity": mention.entity_id,
               "surface": SENSITIVE_MASK if mention.memory_id in hidden else mention.surface}
    for e in Edge.objects.filter(source_id__any_of=kept, target_id__any_of=kept).order_by("id"):
        yield {"type": "edge", "id": e.pk, "session": e.session_id, "source": e.source_id, "target": e.target_id,
               "relation": e.relation, "weight": e.weight, "confidence": e.confidence, "origin": e.origin,
               "status": e.status, "needs_review": e.needs_review,
               "rationale": edge_rationale(e.rationale, e.source_id, e.target_id, hidden)}
