"""Change propagation: when a memory changes, what depended on it is flagged at risk, with why.

A memory superseded by a newer value, archived, or forgotten puts its dependents at risk: the memories
reached from it along dependency edges (causal, conditional, temporal, part_of, elaborates) that are
known (declared by the agent, learned from use, a person's, approved) or inferred at or above the
project's `risk_confidence_threshold`. Direct dependents get risk 1; each further hop halves it, up to
`risk_hops`. The memory's `at_risk` holds its highest open risk; its AtRisk rows say which parent changed,
how (old value -> new value), and through which edges. A question or a confirmation changes no value and
starts nothing (supersede.py never replaces with one).

A person settles a flag (still valid, archive, superseded by another): `at_risk` is an editable field, so
settling is a recorded, undoable memory edit (edits/memories.py), and the rows follow it (`risks_follow`).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Max, Q
from django.utils import timezone

from ..models import (
    KNOWN_ORIGINS,
    AtRisk,
    Edge,
    EdgeStatus,
    GraphChange,
    Memory,
    MemoryStatus,
    Relation,
    RiskChange,
    RiskStatus,
)
from ..visibility import FORGOTTEN_MASK, memory_mask
from .changelog import ENGINE_ACTOR, change_record
from .operations import Op
from .snapshots import memory_snapshot

DEPENDS = (Relation.CAUSAL, Relation.CONDITIONAL, Relation.TEMPORAL, Relation.PART_OF, Relation.ELABORATES)
DEFAULT_RISK_CONFIDENCE = 0.8
DEFAULT_RISK_HOPS = 2
MAX_AT_RISK = 200  # memories flagged by one change: a hub's change flags its nearest, not the whole project


@dataclass(frozen=True)
class Reached:
    memory_id: int
    path: list[int]  # edge ids, the changed memory's first
    relations: list[str]


def dependents(parent: Memory, *, skip: frozenset[int] | set[int] = frozenset()) -> list[Reached]:
    """The active memories that depend on `parent`, nearest first, each with the edges it is reached by."""
    settings = parent.project.settings or {}
    threshold = float(settings.get("risk_confidence_threshold", DEFAULT_RISK_CONFIDENCE))
    hops = int(settings.get("risk_hops", DEFAULT_RISK_HOPS))
    trusted = Q(origin__in=KNOWN_ORIGINS) | Q(status=EdgeStatus.APPROVED) | Q(confidence__gte=threshold)
    reached: list[Reached] = []
    paths: dict[int, tuple[list[int], list[str]]] = {parent.pk: ([], [])}
    seen, frontier = {parent.pk, *skip}, [parent.pk]
    for _ in range(hops):
        edges = (Edge.objects.filter(trusted, source_id__in=frontier, relation__in=DEPENDS,
                                     target__status=MemoryStatus.ACTIVE).exclude(status=EdgeStatus.REJECTED)
                 .exclude(needs_review=True, status=EdgeStatus.INFERRED, origin__in=("rule", "llm"))
                 .order_by("-confidence", "pk").values_list("pk", "source_id", "target_id", "relation"))
        frontier = []
        for edge_id, source, target, relation in edges:
            if target in seen or len(reached) >= MAX_AT_RISK:
                continue
            seen.add(target)
            path, relations = paths[source]
            paths[target] = ([*path, edge_id], [*relations, relation])
            reached.append(Reached(target, *paths[target]))
            frontier.append(target)
        if not frontier:
            break
    return reached


def risk_propagate(parent: Memory, change: str, *, before: str = "", after: str = "",
                   replaced_by: Memory | None = None, actor: str = ENGINE_ACTOR) -> list[AtRisk]:
    """Flag what depends on `parent` after `change` (RiskChange), in the caller's transaction."""
    if change not in RiskChange.values:
        raise ValueError(f"unknown change {change!r}")
    skip = {replaced_by.pk} if replaced_by else set()
    found = dependents(parent, skip=skip)
    if not found:
        return []
    memories = {m.pk: m for m in Memory.objects.select_for_update(of=("self",)).select_related("project", "session")
                .filter(pk__in=[r.memory_id for r in found])}
    rows = []
    for reach in found:
        memory = memories.get(reach.memory_id)
        if memory is None:
            continue
        hops = len(reach.path)
        values = {"replaced_by": replaced_by, "change": change, "before": before, "after": after,
                  "relations": reach.relations, "path": reach.path, "hops": hops, "risk": 0.5 ** (hops - 1)}
        row, _ = AtRisk.objects.update_or_create(project_id=parent.project_id, memory=memory, parent=parent,
                                                 status=RiskStatus.OPEN, defaults=values)
        rows.append(row)
        _level_set(memory, actor)
    return rows


def _level_set(memory: Memory, actor: str) -> GraphChange | None:
    """Set the memory's `at_risk` to its highest open risk, recorded when it changes."""
    level = AtRisk.objects.filter(memory=memory, status=RiskStatus.OPEN).aggregate(top=Max("risk"))["top"] or 0.0
    if memory.at_risk == level:
        return None
    before = memory_snapshot(memory)
    memory.at_risk = level
    memory.save(update_fields=["at_risk", "updated_at"])
    return change_record(project=memory.project, session=memory.session, actor=actor, op=Op.MEMORY_AT_RISK,
                         object_type="memory", object_id=memory.pk, before=before, after=memory_snapshot(memory))


def risks_follow(memory: Memory, *, actor: str, before_level: float) -> None:
    """The rows follow a person's edit of `at_risk` (edits/memories.py): set to 0 (settled: still valid,
    archived, superseded) closes the open rows; set back above 0 (an undo) reopens those it closed last."""
    now = timezone.now()
    if memory.at_risk == 0 and before_level > 0:
        status = {MemoryStatus.ARCHIVED: RiskStatus.ARCHIVED,
                  MemoryStatus.SUPERSEDED: RiskStatus.SUPERSEDED}.get(memory.status, RiskStatus.VALID)
        AtRisk.objects.filter(memory=memory, status=RiskStatus.OPEN).update(status=status, resolved_by=actor,
                                                                            resolved_at=now)
    elif memory.at_risk > 0 and before_level == 0:
        last = AtRisk.objects.filter(memory=memory).exclude(status=RiskStatus.OPEN).aggregate(at=Max("resolved_at"))
        if last["at"] is not None:
            for row in AtRisk.objects.filter(memory=memory, resolved_at=last["at"]).order_by("pk"):
                if not AtRisk.objects.filter(memory=memory, parent_id=row.parent_id, status=RiskStatus.OPEN).exists():
                    row.status, row.resolved_by, row.resolved_at = RiskStatus.OPEN, "", None
                    row.save(update_fields=["status", "resolved_by", "resolved_at"])


def risks_reopened(memory: Memory, settled_as: str) -> float:
    """Reopen the rows the memory's last settling as `settled_as` closed (its replacement was rejected or
    deleted: it is active again, and what made it at risk still holds); its new level, 0 when none."""
    last = (AtRisk.objects.filter(memory=memory, status=settled_as).aggregate(at=Max("resolved_at"))["at"])
    if last is None:
        return 0.0
    still_open = AtRisk.objects.filter(memory=memory, status=RiskStatus.OPEN).values("parent_id")
    rows = AtRisk.objects.filter(memory=memory, status=settled_as, resolved_at=last).exclude(parent_id__in=still_open)
    rows.update(status=RiskStatus.OPEN, resolved_by="", resolved_at=None)
    return AtRisk.objects.filter(memory=memory, status=RiskStatus.OPEN).aggregate(top=Max("risk"))["top"] or 0.0


def risks_of(memory_ids: list[int]) -> dict[int, list[AtRisk]]:
    """The open rows of these memories, highest risk first, with their parent and replacement loaded."""
    found: dict[int, list[AtRisk]] = {}
    for row in (AtRisk.objects.filter(memory_id__in=memory_ids, status=RiskStatus.OPEN)
                .select_related("parent", "replaced_by").order_by("-risk", "-pk")):
        found.setdefault(row.memory_id, []).append(row)
    return found


def risks_drop(memory_ids: list[int], *, actor: str) -> None:
    """A hard forget deletes these memories: their flags, and the flags that name them as the changed
    memory or its replacement (whose values they quote), go with them; what stays flagged is re-levelled."""
    touched = AtRisk.objects.filter(Q(memory_id__in=memory_ids) | Q(parent_id__in=memory_ids)
                                    | Q(replaced_by_id__in=memory_ids))
    others = set(touched.exclude(memory_id__in=memory_ids).values_list("memory_id", flat=True))
    touched.delete()
    for memory in (Memory.objects.select_for_update(of=("self",)).select_related("project", "session")
                   .filter(pk__in=others).order_by("pk")):
        _level_set(memory, actor)


RISK_WORDS = {
    "en": {"lead": "at risk: depends on", RiskChange.SUPERSEDED: "since changed", RiskChange.ARCHIVED: "since archived",
           RiskChange.FORGOTTEN: "since forgotten", RiskChange.CORRECTED: "since corrected",
           "from_to": "from {before} to {after}", "now": "now", "hidden": "[sensitive]", "gone": "a forgotten memory"},
    "zh": {"lead": "可能已过时：依赖于", RiskChange.SUPERSEDED: "该信息已变更", RiskChange.ARCHIVED: "该信息已归档",
           RiskChange.FORGOTTEN: "该信息已被遗忘", RiskChange.CORRECTED: "该信息已被更正",
           "from_to": "从 {before} 改为 {after}", "now": "现为", "hidden": "[敏感]", "gone": "一条已遗忘的记忆"},
}
NOTE_CHARS = 200


def risk_notes(memories: list[Memory], *, show_sensitive: bool, language: str) -> dict[int, str]:
    """{memory id: a line to tell beside it} for the at-risk ones: what it depends on, how that changed, and the
    current version ("at risk: depends on "Flight UA858 departs 15:00", since changed from 15:00 to 18:00; now
    "The flight now leaves at 18:00""). Nothing is quoted that the caller may not see."""
    at_risk = [m.pk for m in memories if m.at_risk]
    if not at_risk:
        return {}
    words = RISK_WORDS.get(language, RISK_WORDS["en"])

    def mask(memory: Memory | None) -> str | None:  # the visibility rule, told in the context's language
        found = memory_mask(exists=memory is not None, status=memory.status if memory else "",
                            sensitive=bool(memory and memory.sensitive), show_sensitive=show_sensitive)
        return None if found is None else words["gone"] if found == FORGOTTEN_MASK else words["hidden"]

    def quoted(memory: Memory | None) -> str:
        hidden = mask(memory)
        if hidden is not None or memory is None:
            return hidden or words["gone"]
        text = " ".join(memory.content.split())
        return f"\u201c{text[:NOTE_CHARS]}{'…' if len(text) > NOTE_CHARS else ''}\u201d"

    notes = {}
    for memory_id, rows in risks_of(at_risk).items():
        row = rows[0]
        told = [f"{words['lead']} {quoted(row.parent)}", words[row.change]]
        visible = all(m is None or mask(m) is None for m in (row.parent, row.replaced_by))
        if row.before and row.after and visible:
            told[-1] += " " + words["from_to"].format(before=row.before, after=row.after)
        if row.replaced_by is not None:
            told.append(f"{words['now']} {quoted(row.replaced_by)}")
        notes[memory_id] = "   ⚠ " + "; ".join(told)
    return notes
