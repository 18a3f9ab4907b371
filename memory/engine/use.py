"""Edges learned from use: what an agent did after a recall depends on what that recall gave it.

An interaction sent with `recall_id` (a recall of the project) and, when the agent knows, `used` (the
memory ids it acted on) gives its memory `causal` edges of origin `use`: from each named memory at
confidence 1; when none is named, from the recall's returned memories weighted by rank, kept only at or
above the project's `use_edge_threshold`. Like declared links, inference never changes them.
"""

from __future__ import annotations

from ..errors import ValidationFailed
from ..models import Edge, EdgeOrigin, EdgeStatus, Interaction, Memory, MemoryStatus, RecallTrace, Relation
from .changelog import ENGINE_ACTOR, change_record
from .operations import Op
from .snapshots import edge_snapshot

MAX_USED = 64
# A returned memory's confidence by its rank r (0 first): RANK_WEIGHT / (r + 1).
RANK_WEIGHT = 0.9
# Calibrated on the labelled agent traces (eval/links, recall-then-act turns): of the edges the ranks made, none
# stood for a labelled dependency (0 of 11 at rank 1, 0 of 9 at rank 2), against 12 of 18 for the memories
# the agent named. So by default only named memories become edges; a project may lower it to try the ranks.
DEFAULT_USE_THRESHOLD = 1.0


def use_check(*, project_id: int, recall_id: int | None, used: list[int], where: str = "") -> RecallTrace | None:
    """The recall the interaction names, checked: a recall and memories of this project. The error for one of
    another project is the one for none at all."""
    prefix = f"{where}." if where else ""
    if len(used) > MAX_USED:
        raise ValidationFailed(f"{prefix}used names {len(used)} memories; the limit is {MAX_USED}",
                               {f"{prefix}used": [f"at most {MAX_USED} memory ids"]})
    recall = None
    if recall_id is not None:
        recall = RecallTrace.objects.filter(project_id=project_id, pk=recall_id).only("pk", "returned_ids").first()
        if recall is None:
            message = f"no recall {recall_id} in this project"
            raise ValidationFailed(f"{prefix}recall_id: {message}", {f"{prefix}recall_id": [message]})
    if used:
        known = set(Memory.objects.filter(project_id=project_id, pk__in=used)
                    .exclude(status=MemoryStatus.FORGOTTEN).values_list("pk", flat=True))
        unknown = sorted(set(used) - known)
        if unknown:
            message = f"no memory {', '.join(map(str, unknown[:5]))} in this project"
            raise ValidationFailed(f"{prefix}used: {message}", {f"{prefix}used": [message]})
    return recall


def use_edges(memory: Memory, interaction: Interaction) -> list[Edge]:
    """The edges from what the interaction used to its memory (its recall and `used`, as accepted)."""
    parents = _used_parents(memory, interaction)
    if not parents:
        return []
    taken = set(Edge.objects.filter(source_id__in=parents, target=memory)
                .values_list("source_id", "relation", "status"))
    refused = {source for source, _, status in taken if status == EdgeStatus.REJECTED}
    edges = [Edge(project_id=memory.project_id, session_id=memory.session_id, source_id=parent, target=memory,
                  relation=Relation.CAUSAL, confidence=confidence, origin=EdgeOrigin.USE, status=EdgeStatus.INFERRED,
                  rationale=why)
             for parent, (confidence, why) in parents.items()
             if parent not in refused and (parent, Relation.CAUSAL) not in {(s, r) for s, r, _ in taken}]
    created = Edge.objects.bulk_create(edges) if edges else []
    for edge in created:
        change_record(project=memory.project, session=memory.session, actor=ENGINE_ACTOR, op=Op.EDGE_CREATED,
                      object_type="edge", object_id=edge.pk, after=edge_snapshot(edge))
    return created


def _used_parents(memory: Memory, interaction: Interaction) -> dict[int, tuple[float, str]]:
    """{memory id: (confidence, rationale)} of what it used: the named memories, else the recall's ranks."""
    recall_id = interaction.recall_id
    where = f"recall {recall_id}" if recall_id else "the agent"
    if interaction.used:
        named = [pk for pk in dict.fromkeys(interaction.used) if pk != memory.pk]
        alive = set(Memory.objects.filter(pk__in=named).exclude(status=MemoryStatus.FORGOTTEN)
                    .values_list("pk", flat=True))
        return {pk: (1.0, f"used after {where}, as the agent said") for pk in named if pk in alive}
    if recall_id is None:
        return {}
    returned = RecallTrace.objects.filter(pk=recall_id).values_list("returned_ids", flat=True).first() or []
    threshold = float((memory.project.settings or {}).get("use_edge_threshold", DEFAULT_USE_THRESHOLD))
    ranked = {pk: RANK_WEIGHT / (rank + 1) for rank, pk in enumerate(returned) if pk != memory.pk}
    kept = {pk: w for pk, w in ranked.items() if w >= threshold}
    alive = set(Memory.objects.filter(pk__in=list(kept)).exclude(status=MemoryStatus.FORGOTTEN)
                .values_list("pk", flat=True))
    return {pk: (round(w, 3), f"returned {returned.index(pk) + 1}. by {where}, acted on after it")
            for pk, w in kept.items() if pk in alive}
