"""Merge duplicates (SPEC §5): near-identical memories become one; edges follow; provenance stays.

Finding: every active memory (summaries aside) asks the vector index for its nearest neighbours in
its session (or the project); a neighbour at cosine ≥ MERGE_SIMILARITY is a duplicate unless the two
name different values (numbers, dates, amounts...: "budget 5000" is not "budget 6000"), one
supersedes the other, or a human drew, approved or rejected an edge between them (a human treated
them as two things). The earlier memory survives.

Merging one duplicate into its survivor, in one transaction:
- the survivor gains the duplicate's source interactions (provenance), the higher scores, the
  summed access count, and sensitivity if either was sensitive;
- the duplicate's edges are redirected to the survivor; an edge that would become a self-loop is
  dropped; one that already exists on the survivor is dropped, but a human decision on it (approved,
  rejected, drawn by a human) replaces an inferred twin's;
- its entity mentions move (or are dropped where the survivor has them already);
- the duplicate becomes `forgotten` with `dimensions.merged_into` (out of recall and the graph,
  kept for the audit trail) and loses its vectors.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.db.models import Q

from ...errors import ValidationFailed
from ...models import (
    KNOWN_ORIGINS,
    AgentSession,
    Edge,
    EdgeStatus,
    EntityMention,
    Memory,
    MemoryEmbedding,
    MemoryKind,
    MemoryStatus,
    Project,
    Relation,
)
from ...providers import get_embedder
from ..changelog import change_record
from ..operations import Op
from ..snapshots import edge_snapshot, memory_snapshot
from ..vector_index import nearest, space_for
from .common import (
    JobReport,
    Progress,
    audit_record,
    batches,
    memories_in,
    no_progress,
    rolled_back_if,
    session_in,
    setting,
)

VALUE_KEYS = ("numbers", "dates", "times", "amounts", "identifiers", "urls", "paths")
SCOPES = ("session", "project")
MAX_DUPLICATES = 100
EDGE_DECISION_FIELDS = ("status", "origin", "confidence", "weight", "needs_review", "rationale")


@dataclass(frozen=True)
class MergePair:
    survivor_id: int
    duplicate_id: int
    similarity: float | None  # None when a person named the pair


def merge_threshold(project: Project, threshold: float | None) -> float:
    value = float(setting(project, "MERGE_SIMILARITY") if threshold is None else threshold)
    if not 0.5 <= value <= 1.0:
        raise ValidationFailed("the merge similarity must be between 0.5 and 1.0", {"threshold": ["0.5 to 1.0"]})
    return value


def duplicates_find(project: Project, *, session_id: int | None = None, scope: str = "session",
                    threshold: float | None = None, progress: Progress = no_progress) -> list[MergePair]:
    """Plan the merges (reads only): pairs (earlier survivor, later duplicate), each memory in one pair role."""
    if scope not in SCOPES:
        raise ValidationFailed(f"unknown scope {scope!r}", {"scope": [f"use one of {', '.join(SCOPES)}"]})
    threshold = merge_threshold(project, threshold)
    space = space_for(get_embedder())
    candidates = Memory.objects.filter(project=project, status=MemoryStatus.ACTIVE).exclude(kind=MemoryKind.SUMMARY)
    if session_id is not None:
        candidates = candidates.filter(session_id=session_id)
    order = list(candidates.order_by("occurred_at", "id").values_list("id", "session_id"))
    position = {memory_id: i for i, (memory_id, _) in enumerate(order)}
    session_of = dict(order)
    absorbed: set[int] = set()
    survivors: set[int] = set()
    pairs: list[MergePair] = []
    k = int(setting(project, "MERGE_NEIGHBOURS")) + 1
    for chunk in batches([memory_id for memory_id, _ in order], 500):
        vectors = dict(MemoryEmbedding.objects.filter(memory_id__in=chunk, space=space)
                       .values_list("memory_id", "vector"))
        for memory_id in chunk:
            progress(position[memory_id] + 1, len(order))
            if memory_id in absorbed or memory_id not in vectors:
                continue
            found = nearest(space=space, vector=list(vectors[memory_id]), k=k, project_id=project.pk,
                            session_id=session_of[memory_id] if scope == "session" else None,
                            statuses=(MemoryStatus.ACTIVE,))
            for neighbour in found:
                other = neighbour.memory_id
                if (other == memory_id or other not in position or other in absorbed or other in survivors
                        or neighbour.similarity < threshold or not _mergeable(memory_id, other)):
                    continue
                survivor, duplicate = sorted((memory_id, other), key=position.__getitem__)
                pairs.append(MergePair(survivor, duplicate, round(neighbour.similarity, 4)))
                absorbed.add(duplicate)
                survivors.add(survivor)
                if duplicate == memory_id:
                    break
    return pairs


def _values(dimensions: dict) -> set[str]:
    return {f"{key}:{value}" for key in VALUE_KEYS for value in (dimensions or {}).get(key, [])}


def _mergeable(a: int, b: int) -> bool:
    """Same values, no supersede between them, and no human edge saying they are two things."""
    dims = dict(Memory.objects.filter(pk__in=[a, b]).values_list("id", "dimensions"))
    if _values(dims.get(a, {})) != _values(dims.get(b, {})):
        return False
    between = Edge.objects.filter(Q(source_id=a, target_id=b) | Q(source_id=b, target_id=a))
    return not between.filter(Q(relation=Relation.SUPERSEDES) | Q(origin__in=KNOWN_ORIGINS)
                              | Q(status__in=[EdgeStatus.APPROVED, EdgeStatus.REJECTED])).exists()


def merge_run(*, project: Project, actor: str, session_id: int | None = None, scope: str = "session",
              threshold: float | None = None, dry_run: bool = False,
              progress: Progress = no_progress) -> JobReport:
    """Find near-duplicates and merge each into its survivor (one transaction per pair)."""
    session_in(project, session_id)
    pairs = duplicates_find(project, session_id=session_id, scope=scope, threshold=threshold, progress=progress)
    report = _merge_pairs(project, actor, pairs, dry_run, progress)
    audit_record(project, actor, report, {"session_id": session_id, "scope": scope,
                                          "threshold": merge_threshold(project, threshold)})
    return report


def merge_memories(*, project: Project, actor: str, survivor_id: int, duplicate_ids: list[int],
                   dry_run: bool = False, progress: Progress = no_progress) -> JobReport:
    """Merge the named duplicates into the named survivor: a person's call, no similarity needed."""
    duplicate_ids = list(dict.fromkeys(duplicate_ids))
    if not duplicate_ids or len(duplicate_ids) > MAX_DUPLICATES:
        raise ValidationFailed(f"name 1 to {MAX_DUPLICATES} duplicates", {"duplicate_ids": ["1 to 100 ids"]})
    if survivor_id in duplicate_ids:
        raise ValidationFailed("a memory cannot be merged into itself", {"duplicate_ids": ["contains the survivor"]})
    memories_in(project, [survivor_id], field_name="survivor_id")
    memories_in(project, duplicate_ids, field_name="duplicate_ids")
    pairs = [MergePair(survivor_id, duplicate_id, None) for duplicate_id in duplicate_ids]
    report = _merge_pairs(project, actor, pairs, dry_run, progress)
    audit_record(project, actor, report, {"survivor_id": survivor_id, "duplicate_ids": duplicate_ids})
    return report


def _merge_pairs(project: Project, actor: str, pairs: list[MergePair], dry_run: bool,
                 progress: Progress) -> JobReport:
    report = JobReport("merge", dry_run, counts={"pairs": len(pairs), "merged": 0})
    with rolled_back_if(dry_run):
        for done, pair in enumerate(pairs, start=1):
            with transaction.atomic():
                _merge_pair(project, actor, pair, report)
            progress(done, len(pairs))
    return report


def _merge_pair(project: Project, actor: str, pair: MergePair, report: JobReport) -> None:
    locked = {m.pk: m for m in Memory.objects.select_for_update(of=("self",)).select_related("session")
              .filter(pk__in=[pair.survivor_id, pair.duplicate_id])}
    survivor, duplicate = locked.get(pair.survivor_id), locked.get(pair.duplicate_id)
    if survivor is None or duplicate is None or MemoryStatus.FORGOTTEN in (survivor.status, duplicate.status):
        report.add("skipped")  # changed since the plan was made
        return
    survivor_before, duplicate_before = memory_snapshot(survivor), memory_snapshot(duplicate)
    for edge in Edge.objects.select_for_update().filter(Q(source=duplicate) | Q(target=duplicate)).order_by("id"):
        _redirect(project, actor, edge, duplicate, survivor, report)
    _mentions_move(duplicate, survivor, report)
    had = set(survivor.sources.values_list("pk", flat=True))
    new_sources = set(duplicate.sources.values_list("pk", flat=True)) - had
    survivor.sources.add(*new_sources)
    report.add("sources_added", len(new_sources))
    for earlier in Memory.objects.filter(project=project, dimensions__merged_into=duplicate.pk):
        earlier.dimensions = {**earlier.dimensions, "merged_into": survivor.pk}
        earlier.save(update_fields=["dimensions", "updated_at"])
    _survivor_update(survivor, duplicate)
    change_record(project=project, session=survivor.session, actor=actor, op=Op.MEMORY_UPDATED, object_type="memory",
                  object_id=survivor.pk, before=survivor_before, after=memory_snapshot(survivor))
    duplicate.status = MemoryStatus.FORGOTTEN
    duplicate.dimensions = {**duplicate.dimensions, "merged_into": survivor.pk}
    duplicate.save(update_fields=["status", "dimensions", "updated_at"])
    MemoryEmbedding.objects.filter(memory=duplicate).delete()
    change_record(project=project, session=duplicate.session, actor=actor, op=Op.MEMORY_MERGED, object_type="memory",
                  object_id=duplicate.pk, before=duplicate_before,
                  after={**memory_snapshot(duplicate), "merged_into": survivor.pk, "similarity": pair.similarity})
    report.add("merged")
    report.touch("merged", duplicate.pk)
    report.touch("survivors", survivor.pk)


def _survivor_update(survivor: Memory, duplicate: Memory) -> None:
    survivor.importance = max(survivor.importance, duplicate.importance)
    survivor.relevance = max(survivor.relevance, duplicate.relevance)
    survivor.access_count += duplicate.access_count
    if duplicate.last_accessed_at and (not survivor.last_accessed_at
                                       or duplicate.last_accessed_at > survivor.last_accessed_at):
        survivor.last_accessed_at = duplicate.last_accessed_at
    survivor.sensitive = survivor.sensitive or duplicate.sensitive
    if survivor.status == MemoryStatus.ARCHIVED and duplicate.status == MemoryStatus.ACTIVE:
        survivor.status = MemoryStatus.ACTIVE  # the duplicate was live, so what it says is
    merged_from = set(survivor.dimensions.get("merged_from", [])) | {duplicate.pk}
    survivor.dimensions = {**survivor.dimensions, "merged_from": sorted(merged_from)}
    survivor.save()


def _mentions_move(duplicate: Memory, survivor: Memory, report: JobReport) -> None:
    own = set(EntityMention.objects.filter(memory=survivor).values_list("entity_id", flat=True))
    for mention in EntityMention.objects.filter(memory=duplicate).order_by("id"):
        if mention.entity_id in own:
            mention.delete()
            report.add("mentions_dropped")
        else:
            mention.memory = survivor
            mention.save(update_fields=["memory"])
            own.add(mention.entity_id)
            report.add("mentions_moved")


def human_decided(edge: Edge) -> bool:
    return edge.status in (EdgeStatus.APPROVED, EdgeStatus.REJECTED) or edge.origin in KNOWN_ORIGINS


def _redirect(project: Project, actor: str, edge: Edge, duplicate: Memory, survivor: Memory,
              report: JobReport) -> None:
    source = survivor.pk if edge.source_id == duplicate.pk else edge.source_id
    target = survivor.pk if edge.target_id == duplicate.pk else edge.target_id
    before = edge_snapshot(edge)
    if source == target:
        _edge_delete(project, actor, edge, before, report)
        return
    twin = Edge.objects.select_for_update().filter(source_id=source, target_id=target, relation=edge.relation).first()
    if twin is not None:
        if human_decided(edge) and not human_decided(twin):
            twin_before = edge_snapshot(twin)
            for name in EDGE_DECISION_FIELDS:
                setattr(twin, name, getattr(edge, name))
            twin.save()
            change_record(project=project, session=_session(twin.session_id), actor=actor, op=Op.EDGE_UPDATED,
                          object_type="edge", object_id=twin.pk, before=twin_before, after=edge_snapshot(twin))
            report.add("edges_updated")
        _edge_delete(project, actor, edge, before, report)
        return
    edge.source_id, edge.target_id = source, target
    if target == survivor.pk:
        edge.session_id = survivor.session_id  # an edge lives in its child's session, as inference does
    edge.save()
    change_record(project=project, session=_session(edge.session_id), actor=actor, op=Op.EDGE_REDIRECTED,
                  object_type="edge", object_id=edge.pk, before=before, after=edge_snapshot(edge))
    report.add("edges_redirected")


def _edge_delete(project: Project, actor: str, edge: Edge, before: dict, report: JobReport) -> None:
    edge_id, session_id = edge.pk, edge.session_id
    edge.delete()
    change_record(project=project, session=_session(session_id), actor=actor, op=Op.EDGE_DELETED, object_type="edge",
                  object_id=edge_id, before=before)
    report.add("edges_dropped")


def _session(session_id: int | None) -> AgentSession | None:
    return AgentSession.objects.filter(pk=session_id).first() if session_id else None
