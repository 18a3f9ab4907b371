"""Edge review (SPEC §5): weak inferred edges are re-checked by a stronger model.

Candidates: inferred dependency edges (causal, conditional, temporal, elaborates, part_of,
references) flagged `needs_review`, or below a given confidence, not reviewed before. The reviewer
is the configured LLM provider with MEMORY["REVIEW_LLM_MODEL"] as its model (LLM_MODEL when empty).
It answers one relation or "none" with a confidence:
- the same relation: confirmed, with the reviewer's confidence;
- another relation: relabelled (dropped if the pair already has that relation);
- none (or a relation the pair has already): the edge is rejected, kept for people to see and overrule.
A reviewed edge's origin becomes `llm`, its rationale starts with "review (<model>):" (so it is not
sent again) and it keeps `needs_review` only while its confidence stays under the project's
threshold, as a proposal for people. Human decisions (approved/rejected, human-drawn) are never
sent or changed, and sensitive memories are never sent to an LLM. Without an LLM the job refuses.
"""

from __future__ import annotations

import logging
from typing import Literal

from django.db import transaction
from django.db.models import Q
from pydantic import BaseModel, Field

from ...conf import memory_settings
from ...errors import LLMNotConfigured, ProviderError, ValidationFailed
from ...models import KNOWN_ORIGINS, Edge, EdgeOrigin, EdgeStatus, MemoryStatus, Project, Relation
from ...providers import get_llm
from ...providers.base import LLM
from ..changelog import change_record
from ..inference import DEFAULT_EDGE_THRESHOLD
from ..operations import Op
from ..sensitivity import shareable
from ..snapshots import edge_snapshot
from .common import JobReport, Progress, audit_record, no_progress, session_in, setting
from .merge import human_decided

logger = logging.getLogger(__name__)

REVIEWABLE = (Relation.CAUSAL, Relation.CONDITIONAL, Relation.TEMPORAL, Relation.ELABORATES, Relation.PART_OF,
              Relation.REFERENCES)
REVIEW_PREFIX = "review ("
NEEDS_LLM = ("Edge review needs an LLM, and none is configured: set CW_LLM=openai with OPENAI_API_KEY (or "
             "OPENAI_BASE_URL for an OpenAI-compatible server), and MEMORY['REVIEW_LLM_MODEL'] to name the "
             "stronger model (default: LLM_MODEL).")


class LLMReview(BaseModel):
    relation: Literal["causal", "conditional", "temporal", "elaborates", "part_of", "references", "none"]
    confidence: float = Field(ge=0, le=1)
    rationale: str = Field(max_length=300)


REVIEW_SYSTEM = (
    "You check one link between two memories of an AI agent. The child depends on the parent as: causal "
    "(child is a result of parent), temporal (child happens after and builds on parent), conditional (child "
    "holds only if parent holds), elaborates (child details parent), part_of (child is a step of parent), "
    "references (child mentions parent's content), or none (no dependency). A weaker model proposed the "
    'label shown. Answer JSON {"relation": "...", "confidence": 0-1, "rationale": "..."}.'
)


def reviewer() -> tuple[LLM, str]:
    """The configured provider with the review model; ProviderError (clear message) without an LLM."""
    llm = get_llm()
    if not llm.available:
        raise LLMNotConfigured(NEEDS_LLM)
    model = memory_settings.REVIEW_LLM_MODEL or getattr(llm, "model", None) or memory_settings.LLM_MODEL
    if getattr(llm, "model", model) != model:
        llm = type(llm)(model=model, timeout=memory_settings.LLM_TIMEOUT, max_retries=memory_settings.LLM_MAX_RETRIES)
    return llm, model


def review_candidates(project: Project, *, session_id: int | None = None, below_confidence: float | None = None,
                      limit: int | None = None) -> list[Edge]:
    wanted = Q(needs_review=True)
    if below_confidence is not None:
        wanted |= Q(confidence__lt=below_confidence)
    queryset = (Edge.objects.filter(project=project, status=EdgeStatus.INFERRED, relation__in=REVIEWABLE)
                .filter(wanted).exclude(origin__in=KNOWN_ORIGINS).exclude(rationale__startswith=REVIEW_PREFIX)
                .exclude(source__status=MemoryStatus.FORGOTTEN).exclude(target__status=MemoryStatus.FORGOTTEN))
    if session_id is not None:
        queryset = queryset.filter(session_id=session_id)
    limit = int(setting(project, "REVIEW_MAX_EDGES") if limit is None else limit)
    return list(queryset.select_related("source", "target").order_by("confidence", "id")[:limit])


def review_run(*, project: Project, actor: str, session_id: int | None = None, limit: int | None = None,
               below_confidence: float | None = None, dry_run: bool = False,
               progress: Progress = no_progress) -> JobReport:
    """Send each candidate edge to the reviewer and apply its answer (one transaction per edge)."""
    session_in(project, session_id)
    if limit is not None and not 1 <= limit <= 1000:
        raise ValidationFailed("limit must be between 1 and 1000", {"limit": ["1 to 1000"]})
    if below_confidence is not None and not 0 <= below_confidence <= 1:
        raise ValidationFailed("below_confidence must be between 0 and 1", {"below_confidence": ["0 to 1"]})
    llm, model = (None, None) if dry_run else reviewer()  # refuse before doing anything
    edges = review_candidates(project, session_id=session_id, below_confidence=below_confidence, limit=limit)
    sendable = [e for e in edges if len(shareable([e.source, e.target])) == 2]  # sensitive ones never reach an LLM
    report = JobReport("review", dry_run, counts={"candidates": len(edges), "to_review": len(sendable),
                                                  "skipped_sensitive": len(edges) - len(sendable)})
    if dry_run:
        if not get_llm().available:
            report.notes.append(NEEDS_LLM)
        return report
    threshold = float((project.settings or {}).get("edge_confidence_threshold", DEFAULT_EDGE_THRESHOLD))
    for done, edge in enumerate(sendable, start=1):
        try:
            answer = llm.complete_json(system=REVIEW_SYSTEM, user=_prompt(edge), schema=LLMReview)
        except ProviderError as exc:
            logger.warning("review of edge %s failed: %s", edge.pk, exc)
            report.add("failed")
            if not any(n.startswith("LLM failed") for n in report.notes):
                report.notes.append(f"LLM failed: {exc.message[:200]}")
        else:
            with transaction.atomic():
                _apply(project, actor, edge.pk, answer, model, threshold, report)
        progress(done, len(sendable))
    audit_record(project, actor, report, {"session_id": session_id, "limit": limit,
                                          "below_confidence": below_confidence, "model": model})
    return report


def _prompt(edge: Edge) -> str:
    return (f"Parent ({edge.source.kind}): {edge.source.content[:800]}\n"
            f"Child ({edge.target.kind}): {edge.target.content[:800]}\n"
            f"Proposed: {edge.relation} (confidence {edge.confidence:.2f}; {edge.rationale[:200]})")


def _apply(project: Project, actor: str, edge_id: int, answer: LLMReview, model: str, threshold: float,
           report: JobReport) -> None:
    edge = Edge.objects.select_for_update(of=("self",)).select_related("session").filter(pk=edge_id).first()
    if edge is None or human_decided(edge):  # deleted, or a person decided while the model thought
        report.add("skipped_human" if edge is not None else "skipped_gone")
        return
    before = edge_snapshot(edge)
    rationale = f"{REVIEW_PREFIX}{model}): {answer.rationale}"
    twin = Edge.objects.filter(source_id=edge.source_id, target_id=edge.target_id, relation=answer.relation)
    if answer.relation == "none" or (answer.relation != edge.relation and twin.exists()):
        # Rejected, not deleted: people still see it (faded) and may approve it; inference never re-creates it.
        edge.status, edge.origin, edge.needs_review = EdgeStatus.REJECTED, EdgeOrigin.LLM, False
        edge.confidence, edge.rationale = round(answer.confidence, 3), rationale
        edge.save()
        change_record(project=project, session=edge.session, actor=actor, op=Op.EDGE_REJECTED, object_type="edge",
                      object_id=edge.pk, before=before, after=edge_snapshot(edge))
        report.add("rejected")
        report.touch("rejected", edge_id)
        return
    op, outcome = (Op.EDGE_RELABELLED, "relabelled") if answer.relation != edge.relation else (Op.EDGE_REVIEWED,
                                                                                             "confirmed")
    edge.relation = answer.relation
    edge.confidence = round(answer.confidence, 3)
    edge.origin = EdgeOrigin.LLM
    edge.needs_review = edge.confidence < threshold
    edge.rationale = rationale
    edge.save()
    change_record(project=project, session=edge.session, actor=actor, op=op, object_type="edge", object_id=edge.pk,
                  before=before, after=edge_snapshot(edge))
    report.add(outcome)
    report.touch(outcome, edge.pk)
