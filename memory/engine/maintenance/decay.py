"""Decay and archive (SPEC §5): memories whose current weight fell below a threshold are archived.

weight = importance/5 × freshness × access factor, where
- freshness = 0.5^(age in days / half-life); the age runs from the later of when the memory
  happened and when a recall last returned it (a memory that is used stays fresh);
- access factor = 1 + boost·ln(1 + access count) (often recalled memories resist decay).
Archived memories leave default recall and stay restorable (`memories_restore`).

Never touched: sensitive memories (a human marked them; they are handled by forget), forgotten
and already archived ones, and memories a human vouched for — an end of an approved or
human-drawn edge, or `dimensions.pinned` set to true. Superseded memories may be archived.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from ...errors import ValidationFailed
from ...models import Edge, EdgeOrigin, EdgeStatus, Memory, MemoryStatus, Project
from ..changelog import change_record
from ..operations import Op
from ..recall.rank import freshness
from ..snapshots import memory_snapshot
from .common import (
    JobReport,
    Progress,
    audit_record,
    batches,
    kinds_checked,
    memories_in,
    no_progress,
    rolled_back_if,
    session_in,
    setting,
)

ARCHIVABLE = (MemoryStatus.ACTIVE, MemoryStatus.SUPERSEDED)
RESTORABLE = (MemoryStatus.ARCHIVED, MemoryStatus.FORGOTTEN)


@dataclass(frozen=True)
class DecayParams:
    threshold: float
    half_life_days: float
    access_boost: float


def decay_params(project: Project, *, threshold: float | None = None,
                 half_life_days: float | None = None) -> DecayParams:
    """The project's settings, with per-run overrides checked (a bad value is a 400, nothing written)."""
    params = DecayParams(
        threshold=float(setting(project, "DECAY_ARCHIVE_THRESHOLD") if threshold is None else threshold),
        half_life_days=float(setting(project, "DECAY_HALF_LIFE_DAYS") if half_life_days is None else half_life_days),
        access_boost=float(setting(project, "DECAY_ACCESS_BOOST")),
    )
    problems: dict[str, list[str]] = {}
    if not 0 <= params.threshold <= 10:
        problems["threshold"] = ["must be between 0 and 10"]
    if not 0 < params.half_life_days <= 36500:
        problems["half_life_days"] = ["must be more than 0 and at most 36500"]
    if params.access_boost < 0:
        problems["access_boost"] = ["must not be negative"]
    if problems:
        raise ValidationFailed("invalid decay parameters", problems)
    return params


def decay_weight(*, importance: float, occurred_at: datetime, last_accessed_at: datetime | None,
                 access_count: int, now: datetime, params: DecayParams) -> float:
    last_seen = max(occurred_at, last_accessed_at) if last_accessed_at else occurred_at
    access = 1.0 + params.access_boost * math.log1p(max(access_count, 0))
    return round(min(max(importance, 0.0), 5.0) / 5.0 * freshness(last_seen, now, params.half_life_days) * access, 6)


def vouched_for(project: Project) -> Q:
    """Memories a human stands behind: an end of an approved or human-drawn edge, or pinned."""
    human = Edge.objects.filter(project=project).filter(Q(status=EdgeStatus.APPROVED) | Q(origin=EdgeOrigin.HUMAN))
    return (Q(pk__in=human.values("source_id")) | Q(pk__in=human.values("target_id"))
            | Q(dimensions__contains={"pinned": True}))


def decay_candidates(project: Project, *, session_id: int | None = None, memory_ids: Iterable[int] | None = None,
                     kinds: Iterable[str] | None = None) -> QuerySet[Memory]:
    queryset = Memory.objects.filter(project=project, status__in=ARCHIVABLE, sensitive=False)
    if session_id is not None:
        queryset = queryset.filter(session_id=session_id)
    if memory_ids is not None:
        queryset = queryset.filter(pk__in=list(memory_ids))
    if kinds:
        queryset = queryset.filter(kind__in=list(kinds))
    return queryset.exclude(vouched_for(project))


def decay_run(*, project: Project, actor: str, session_id: int | None = None, memory_ids: list[int] | None = None,
              kinds: list[str] | None = None, threshold: float | None = None, half_life_days: float | None = None,
              force: bool = False, dry_run: bool = False, progress: Progress = no_progress,
              now: datetime | None = None) -> JobReport:
    """Archive what decayed below the threshold (or, with `force` and ids, those memories now)."""
    params = decay_params(project, threshold=threshold, half_life_days=half_life_days)
    session_in(project, session_id)
    kinds = kinds_checked(kinds)
    if memory_ids is not None:
        memories_in(project, memory_ids)
    if force and not memory_ids:
        raise ValidationFailed("force archives the given memories only: pass memory ids",
                               {"memory_ids": ["required with force"]})
    now = now or timezone.now()
    rows = decay_candidates(project, session_id=session_id, memory_ids=memory_ids, kinds=kinds).order_by("id") \
        .values_list("id", "importance", "occurred_at", "last_accessed_at", "access_count")
    weights = {row[0]: decay_weight(importance=row[1], occurred_at=row[2], last_accessed_at=row[3],
                                    access_count=row[4], now=now, params=params) for row in rows}
    due = [i for i, w in weights.items() if force or w < params.threshold]
    report = JobReport("decay", dry_run, counts={"examined": len(weights), "archived": 0})
    with rolled_back_if(dry_run):
        for chunk in batches(due, setting(project, "MAINTENANCE_BATCH_SIZE")):
            with transaction.atomic():
                for memory in _locked(chunk):
                    if memory.status in ARCHIVABLE and not memory.sensitive:
                        _archive(project, memory, actor, weights[memory.pk])
                        report.add("archived")
                        report.touch("archived", memory.pk)
            progress(report.counts["archived"], len(due))
    audit_record(project, actor, report, {"session_id": session_id, "memory_ids": memory_ids, "kinds": list(kinds),
                                          "threshold": params.threshold, "half_life_days": params.half_life_days,
                                          "force": force})
    return report


def _locked(ids: list[int]) -> QuerySet[Memory]:
    return Memory.objects.select_for_update(of=("self",)).select_related("session").filter(pk__in=ids).order_by("id")


def _archive(project: Project, memory: Memory, actor: str, weight: float) -> None:
    before = memory_snapshot(memory)
    memory.status = MemoryStatus.ARCHIVED
    memory.save(update_fields=["status", "updated_at"])
    change_record(project=project, session=memory.session, actor=actor, op=Op.MEMORY_ARCHIVED, object_type="memory",
                  object_id=memory.pk, before=before, after={**memory_snapshot(memory), "decay_weight": weight})


def memories_restore(*, project: Project, actor: str, memory_ids: list[int], dry_run: bool = False,
                     progress: Progress = no_progress) -> JobReport:
    """Bring archived (or softly forgotten) memories back to active. Merged duplicates stay merged."""
    found = memories_in(project, memory_ids, allow_forgotten=True)
    merged = [i for i, m in found.items() if "merged_into" in (m.dimensions or {})]
    if merged:
        raise ValidationFailed("merged duplicates cannot be restored", {"memory_ids": [f"merged: {merged}"]})
    report = JobReport("restore", dry_run, counts={"restored": 0})
    with rolled_back_if(dry_run), transaction.atomic():
        for memory in _locked(list(found)).filter(status__in=RESTORABLE):
            before = memory_snapshot(memory)
            memory.status = MemoryStatus.ACTIVE
            memory.save(update_fields=["status", "updated_at"])
            change_record(project=project, session=memory.session, actor=actor, op=Op.MEMORY_RESTORED,
                          object_type="memory", object_id=memory.pk, before=before, after=memory_snapshot(memory))
            report.add("restored")
            report.touch("restored", memory.pk)
            progress(report.counts["restored"], len(found))
    audit_record(project, actor, report, {"memory_ids": memory_ids})
    return report
