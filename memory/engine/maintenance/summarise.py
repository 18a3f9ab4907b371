"""Reflect / summarise (SPEC §5): a cluster of memories gets one summary memory.

The cluster is given by memory ids, or by a session and/or an entity (their active memories,
summaries aside). The summary is a memory of kind `summary` with a `summarizes` edge from each
member (parent) to it (child), embedded and indexed like any memory so recall finds it.

The text comes from the LLM when one is configured (a schema-checked JSON answer) and otherwise,
or when the LLM fails, from the extractive summariser (extractive.py). Sensitive memories are never
sent to an LLM: a cluster holding one is summarised extractively, and the summary is sensitive when
it quotes a sensitive memory.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.db import transaction
from pydantic import BaseModel, Field

from ...errors import ProviderError, ValidationFailed
from ...models import (
    Edge,
    EdgeOrigin,
    EdgeStatus,
    EntityMention,
    Memory,
    MemoryEmbedding,
    MemoryKind,
    MemoryStatus,
    Project,
    Relation,
)
from ...providers import get_embedder, get_llm
from ...providers.base import Vector
from ..changelog import change_record
from ..entities import mentions_link
from ..extraction import extract_dimensions, segment
from ..operations import Op
from ..sensitivity import shareable
from ..snapshots import edge_snapshot, memory_snapshot
from ..vector_index import space_for
from .common import (
    JobReport,
    Progress,
    audit_record,
    entity_in,
    memories_in,
    no_progress,
    session_in,
    setting,
)
from .extractive import central_sentences, join_sentences, sentences_of

logger = logging.getLogger(__name__)
LLM_CHARS_PER_MEMORY = 600


class LLMSummary(BaseModel):
    summary: str = Field(min_length=1, max_length=4000)


LLM_SYSTEM = (
    "You condense a cluster of an AI agent's memories into one summary memory. Keep the concrete details "
    "later decisions depend on (names, dates, amounts, constraints, decisions, failures and their causes), "
    "in time order. Write in the language of the memories, in at most {sentences} sentences. "
    'Answer JSON {{"summary": "..."}}.'
)


@dataclass(frozen=True)
class SummaryText:
    text: str
    method: str  # "llm" or "extractive"
    model: str | None = None
    note: str | None = None
    sensitive: bool = False

    def to_json(self, member_ids: list[int]) -> dict:
        return {"method": self.method, "model": self.model, "members": member_ids,
                **({"note": self.note} if self.note else {})}


def cluster_members(project: Project, *, memory_ids: list[int] | None = None, session_id: int | None = None,
                    entity: int | str | None = None, may_see_sensitive: bool = True) -> list[Memory]:
    """The cluster, in time order: the given memories, or the active ones of a session and/or entity (for a
    caller who may not see sensitive content, those it may see: the answer and a dry run's ids then tell
    nothing about the others)."""
    if memory_ids:
        members = list(memories_in(project, memory_ids).values())
    elif session_id is None and entity in (None, ""):
        raise ValidationFailed("name the cluster: memory ids, a session or an entity",
                               {"memory_ids": ["give memory ids, or a session_id and/or an entity"]})
    else:
        session = session_in(project, session_id)
        found = entity_in(project, entity, may_see_sensitive=may_see_sensitive)
        queryset = Memory.objects.filter(project=project, status=MemoryStatus.ACTIVE).exclude(kind=MemoryKind.SUMMARY)
        if not may_see_sensitive:
            queryset = queryset.filter(sensitive=False)
        if session is not None:
            queryset = queryset.filter(session=session)
        if found is not None:
            queryset = queryset.filter(mentions__entity=found).distinct()
        members = list(queryset)
    limit = int(setting(project, "SUMMARY_MAX_MEMBERS"))
    if len(members) < 2:
        raise ValidationFailed(f"a summary needs at least two memories; the cluster has {len(members)}",
                               {"memory_ids": ["at least two memories"]})
    if len(members) > limit:
        raise ValidationFailed(f"the cluster has {len(members)} memories; at most {limit} can be summarised at once",
                               {"memory_ids": [f"at most {limit}"]})
    return sorted(members, key=lambda m: (m.occurred_at, m.pk))


def existing_summary(member_ids: list[int]) -> int | None:
    """A live summary of exactly these memories, if one exists (summarising twice adds nothing)."""
    candidates = (Edge.objects.filter(source_id=member_ids[0], relation=Relation.SUMMARIZES)
                  .exclude(target__status=MemoryStatus.FORGOTTEN).values_list("target_id", flat=True))
    for summary_id in candidates:
        parents = set(Edge.objects.filter(target_id=summary_id, relation=Relation.SUMMARIZES)
                      .values_list("source_id", flat=True))
        if parents == set(member_ids):
            return summary_id
    return None


def summary_text(project: Project, members: list[Memory], *, use_llm: bool = True) -> SummaryText:
    """The LLM's summary when configured (and no member is sensitive), else the extractive one."""
    llm = get_llm()
    note = None
    if use_llm and llm.available and len(shareable(members)) < len(members):
        note = "sensitive memories are never sent to an LLM: extractive summary"
    elif use_llm and llm.available:
        try:
            answer = llm.complete_json(system=LLM_SYSTEM.format(sentences=setting(project, "SUMMARY_MAX_SENTENCES")),
                                       user=_llm_listing(members), schema=LLMSummary)
            text = answer.summary.strip()
            if text:
                return SummaryText(text, "llm", model=getattr(llm, "model", None))
            note = "LLM returned an empty summary: extractive summary"
        except ProviderError as exc:
            logger.warning("LLM summary failed, using the extractive one: %s", exc)
            note = f"LLM unavailable ({exc.message[:160]}): extractive summary"
    return extractive_text(project, members, note=note)


def extractive_text(project: Project, members: list[Memory], *, note: str | None = None) -> SummaryText:
    sentences = sentences_of(members)
    vectors = get_embedder().embed([s.text for s in sentences]) if sentences else []
    chosen = central_sentences(sentences, vectors, max_sentences=int(setting(project, "SUMMARY_MAX_SENTENCES")),
                               max_chars=int(setting(project, "SUMMARY_MAX_CHARS")))
    return SummaryText(join_sentences(chosen), "extractive", note=note, sensitive=any(s.sensitive for s in chosen))


def _llm_listing(members: list[Memory]) -> str:
    return "Memories, oldest first:\n" + "\n".join(
        f"[{i}] ({m.kind}, {m.occurred_at:%Y-%m-%d %H:%M}) {m.content[:LLM_CHARS_PER_MEMORY]}"
        for i, m in enumerate(members, start=1))


def summarise_run(*, project: Project, actor: str, memory_ids: list[int] | None = None,
                  session_id: int | None = None, entity: int | str | None = None, use_llm: bool = True,
                  dry_run: bool = False, progress: Progress = no_progress, may_see_sensitive: bool = True,
                  ) -> JobReport:
    """Write one summary memory for the cluster, linked from each member by `summarizes`."""
    members = cluster_members(project, memory_ids=memory_ids, session_id=session_id, entity=entity,
                              may_see_sensitive=may_see_sensitive)
    member_ids = [m.pk for m in members]
    already = existing_summary(member_ids)
    if already is not None:
        raise ValidationFailed(f"these memories are already summarised by memory #{already}",
                               {"memory_ids": [f"already summarised by #{already}"]})
    report = JobReport("summarise", dry_run, counts={"members": len(members), "summaries": 1,
                                                     "edges": len(members)})
    report.touch("members", *member_ids)
    if dry_run:
        return report
    text = summary_text(project, members, use_llm=use_llm)  # network calls stay outside the transaction
    vector = get_embedder().embed_one(text.text)
    with transaction.atomic():
        summary = summary_store(project, members, text, vector, actor)
    if text.note:
        report.notes.append(text.note)
    report.touch("summary", summary.pk)
    progress(1, 1)
    audit_record(project, actor, report, {"memory_ids": memory_ids, "session_id": session_id,
                                          "entity": entity if isinstance(entity, int) else None,
                                          "method": text.method})
    return report


def summary_store(project: Project, members: list[Memory], text: SummaryText, vector: Vector,
                  actor: str) -> Memory:
    """The summary memory, its vector, mentions and one `summarizes` edge per member."""
    sessions = {m.session_id for m in members}
    latest = max(members, key=lambda m: (m.occurred_at, m.pk))
    session = latest.session if len(sessions) > 1 else members[0].session
    dims = extract_dimensions(text.text, now=latest.occurred_at)
    summary = Memory.objects.create(
        project=project, session=session, content=text.text, search_text=" ".join(segment(text.text)),
        kind=MemoryKind.SUMMARY, importance=max(m.importance for m in members),
        relevance=max(m.relevance for m in members), novelty=1.0, occurred_at=latest.occurred_at,
        sensitive=text.sensitive,
        dimensions={**dims.to_json(), "source_kind": "summary", "summary": text.to_json([m.pk for m in members])},
    )
    MemoryEmbedding.objects.create(memory=summary, space=space_for(get_embedder()), project=project, session=session,
                                   vector=vector)
    change_record(project=project, session=session, actor=actor, op=Op.MEMORY_CREATED, object_type="memory",
                  object_id=summary.pk, after=memory_snapshot(summary))
    mentions_link(memory=summary, found=dims.entities)
    origin = EdgeOrigin.LLM if text.method == "llm" else EdgeOrigin.RULE
    for member in members:
        edge = Edge.objects.create(
            project=project, session=session, source=member, target=summary, relation=Relation.SUMMARIZES,
            weight=1.0, confidence=1.0, origin=origin, status=EdgeStatus.INFERRED,
            rationale=f"condensed into summary #{summary.pk} ({text.method})",
        )
        change_record(project=project, session=session, actor=actor, op=Op.EDGE_CREATED, object_type="edge",
                      object_id=edge.pk, after=edge_snapshot(edge))
    return summary


def summary_rewrite(project: Project, summary: Memory, members: list[Memory], text: SummaryText,
                    vector: Vector | None) -> dict:
    """Give an existing summary a new text (forget uses it): content, search text, dimensions, vector
    and mentions all follow. Returns the new snapshot; the caller records the change."""
    dims = extract_dimensions(text.text, now=summary.occurred_at)
    summary.content = text.text
    summary.search_text = " ".join(segment(text.text))
    summary.sensitive = text.sensitive
    summary.dimensions = {**dims.to_json(), "source_kind": "summary",
                          "summary": text.to_json([m.pk for m in members])}
    summary.save(update_fields=["content", "search_text", "sensitive", "dimensions", "updated_at"])
    if vector is not None:
        MemoryEmbedding.objects.filter(memory=summary, space=space_for(get_embedder())).update(vector=vector)
    EntityMention.objects.filter(memory=summary).delete()
    mentions_link(memory=summary, found=dims.entities)
    return memory_snapshot(summary)
