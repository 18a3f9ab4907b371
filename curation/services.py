"""Curation acts: people correct the graph. Each act runs in one transaction, writes its changes to the
change log (so every open view sees it live) and one CurationAct (who, why, which changes), and can be
undone through `act_undo`, which is an act too.

Human decisions bind the engine: an edge a person approved, rejected, relabelled or drew is never
re-inferred or changed by inference (engine/inference.py `edges_apply`), approved edges carry the
approved boost in recall and rejected ones carry nothing (engine/recall/ripple.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction

from memory.engine.edits.edges import DECIDED_FIELDS, edge_add, edge_remove, edge_restore, edge_set
from memory.engine.edits.memories import EDITABLE, memory_edit, memory_restore
from memory.engine.operations import Op
from memory.engine.snapshots import edge_snapshot, memory_snapshot
from memory.errors import EditConflict, NotFoundError, ValidationFailed
from memory.models import (
    Edge,
    EdgeStatus,
    Entity,
    GraphChange,
    Memory,
    MemoryKind,
    MemoryStatus,
    Project,
    Relation,
)

from .models import ActKind, CurationAct

# Relations a person may give an edge; structural ones (adjacency, shared entity, summary) are the engine's.
CURATED_RELATIONS = (Relation.CAUSAL, Relation.TEMPORAL, Relation.CONDITIONAL, Relation.ELABORATES,
                     Relation.SUPERSEDES, Relation.PART_OF, Relation.REFERENCES)
MEMORY_STATUSES = (MemoryStatus.ACTIVE, MemoryStatus.ARCHIVED)  # forgetting is the admin's bulk job
DECISIONS = (EdgeStatus.APPROVED, EdgeStatus.REJECTED)  # what a person sets an edge's status to
REASON_MAX = 500


CurationConflict = EditConflict  # a person's act that cannot apply as asked (409)


@dataclass(frozen=True)
class Outcome:
    act: CurationAct
    object: Any  # the edge or memory as it is now (None once deleted)


def _edge(project: Project, edge_id: int) -> Edge:
    edge = Edge.objects.select_for_update(of=("self",)).select_related("session", "project").filter(
        project=project, pk=edge_id).first()
    if edge is None:
        raise NotFoundError(f"No edge {edge_id} in project {project.slug!r}.")
    return edge


def _memory(project: Project, memory_id: int) -> Memory:
    memory = Memory.objects.select_for_update(of=("self",)).select_related("session", "project").filter(
        project=project, pk=memory_id).exclude(status=MemoryStatus.FORGOTTEN).first()
    if memory is None:
        raise NotFoundError(f"No memory {memory_id} in project {project.slug!r}.")
    return memory


OBJECT_TYPES = {Edge: "edge", Memory: "memory", Entity: "entity"}


def act_record(project: Project, session, actor: str, kind: str, obj: Edge | Memory | Entity, reason: str,
               changes: list[GraphChange], undoes: CurationAct | None = None) -> CurationAct:
    """The one writer of the curation log: the act, its reason, and the change-log rows it made."""
    act = CurationAct.objects.create(project=project, session=session, actor=actor, kind=kind,
                                     object_type=OBJECT_TYPES[type(obj)], object_id=obj.pk,
                                     reason=reason[:REASON_MAX], undoes=undoes)
    act.changes.set([c for c in changes if c.pk])
    return act


def _relation(value: str) -> str:
    if value not in CURATED_RELATIONS:
        raise ValidationFailed(f"Unknown or engine-only relation {value!r}.",
                               {"relation": [f"use one of {', '.join(CURATED_RELATIONS)}"]})
    return value


def edge_update(*, project: Project, actor: str, edge_id: int, status: str | None = None,
                relation: str | None = None, reason: str = "") -> Outcome:
    """Approve or reject an edge, or relabel it (a relabelled edge counts as approved unless rejected)."""
    if status is None and relation is None:
        raise ValidationFailed("Nothing to change: give a status, a relation or both.",
                               {"status": ["approved or rejected"], "relation": ["the new relation"]})
    if status is not None and status not in DECISIONS:
        raise ValidationFailed(f"Unknown status {status!r}.", {"status": ["approved or rejected"]})
    with transaction.atomic():
        edge = _edge(project, edge_id)
        kind = ActKind.EDGE_RELABEL if relation not in (None, edge.relation) else (
            ActKind.EDGE_APPROVE if status == EdgeStatus.APPROVED else ActKind.EDGE_REJECT)
        changes = edge_set(edge, actor=actor, relation=edge.relation if relation is None else _relation(relation),
                           status=status or (EdgeStatus.APPROVED if kind == ActKind.EDGE_RELABEL else edge.status),
                           needs_review=False)
        return Outcome(act_record(project, edge.session, actor, kind, edge, reason, changes), edge)


def edge_draw(*, project: Project, actor: str, source_id: int, target_id: int, relation: str,
              reason: str = "") -> Outcome:
    """A person's edge between two memories of the project: origin human, approved."""
    relation = _relation(relation)
    if source_id == target_id:
        raise ValidationFailed("An edge joins two different memories.", {"target_id": ["not the source"]})
    with transaction.atomic():
        source, target = _memory(project, source_id), _memory(project, target_id)
        edge, changes = edge_add(project, actor=actor, source=source, target=target, relation=relation,
                                 rationale=reason[:REASON_MAX])
        return Outcome(act_record(project, target.session, actor, ActKind.EDGE_DRAW, edge, reason, changes), edge)


def edge_delete(*, project: Project, actor: str, edge_id: int, reason: str = "") -> Outcome:
    """Delete an edge (undo recreates it with its id). To keep the engine from inferring it again,
    reject it instead."""
    with transaction.atomic():
        edge = _edge(project, edge_id)
        session = edge.session
        changes = edge_remove(edge, actor=actor)
        return Outcome(act_record(project, session, actor, ActKind.EDGE_DELETE, edge, reason, changes), None)


def memory_update(*, project: Project, actor: str, memory_id: int, sensitive: bool | None = None,
                  status: str | None = None, kind: str | None = None, still_valid: bool | None = None,
                  reason: str = "") -> Outcome:
    """Mark or unmark a memory sensitive, archive or restore it, correct its kind, or settle its at-risk flag
    (`still_valid`: what it depends on changed, and a person checked it still holds); one at a time."""
    names = ("sensitive", "status", "kind", "still_valid")
    given = {name: value for name, value in zip(names, (sensitive, status, kind, still_valid), strict=True)
             if value is not None}
    if len(given) != 1:
        raise ValidationFailed("Change one thing at a time: sensitive, status, kind or still_valid.",
                               {name: ["give exactly one of sensitive, status, kind, still_valid"]
                                for name in given or names})
    if still_valid is False:
        raise ValidationFailed("still_valid can only be true (it settles an at-risk flag); archive the memory "
                               "with status, or draw a supersedes edge to what replaces it.",
                               {"still_valid": ["must be true"]})
    if status is not None and status not in MEMORY_STATUSES:
        raise ValidationFailed(f"Status {status!r} cannot be set here.",
                               {"status": [f"use {' or '.join(MEMORY_STATUSES)}; forgetting is an admin's job"]})
    if kind is not None and kind not in MemoryKind.values:
        raise ValidationFailed(f"Unknown kind {kind!r}.", {"kind": [f"use one of {', '.join(MemoryKind.values)}"]})
    with transaction.atomic():
        memory = _memory(project, memory_id)
        (name, value), = given.items()
        if name == "still_valid":
            if not memory.at_risk:
                raise CurationConflict(f"Memory {memory_id} is not at risk: nothing to settle.")
            name, value = "at_risk", 0.0
        changes = memory_edit(memory, actor=actor, name=name, value=value)  # a mark reaches its summaries
        kind_of_act = {"sensitive": ActKind.MEMORY_SENSITIVE, "status": ActKind.MEMORY_STATUS,
                       "kind": ActKind.MEMORY_KIND, "at_risk": ActKind.MEMORY_RISK}[name]
        return Outcome(act_record(project, memory.session, actor, kind_of_act, memory, reason, changes), memory)


def act_undo(*, project: Project, actor: str, act_id: int, reason: str = "") -> Outcome:
    """Put back what an act changed, from the snapshots it recorded; recorded as an act of its own.

    Refused (409) when the act was undone already, is itself an undo (undo the original again
    instead), or the object changed since (undo the later act first)."""
    with transaction.atomic():
        act = CurationAct.objects.select_for_update().filter(project=project, pk=act_id).first()
        if act is None:
            raise NotFoundError(f"No curation act {act_id} in project {project.slug!r}.")
        if act.kind == ActKind.UNDO:
            raise CurationConflict("An undo is not undone; repeat the original act instead.")
        if CurationAct.objects.filter(undoes=act).exists():
            raise CurationConflict(f"Act {act_id} was undone already.")
        if act.object_type == "entity":
            from .entities import entity_undo  # entities.py builds on this module

            entity, changes = entity_undo(project, actor, act)
            return Outcome(act_record(project, None, actor, ActKind.UNDO, entity, reason, changes, undoes=act), entity)
        # the act's own change: others it made follow from it (a superseded memory) and follow its undo too
        change = act.changes.filter(object_type=act.object_type, object_id=act.object_id).order_by("id").first()
        if change is None:
            raise CurationConflict(f"Act {act_id} recorded no change to undo.")
        restored, changes = _UNDO[change.op](project, actor, change)
        if change.op == Op.MEMORY_UPDATED:  # the summaries a mark reached are put back with it
            for derived in act.changes.filter(op=Op.MEMORY_UPDATED).exclude(pk=change.pk).order_by("id"):
                changes += _undo_memory_update(project, actor, derived)[1]
        gone = changes[0].op == Op.EDGE_DELETED
        return Outcome(act_record(project, act.session, actor, ActKind.UNDO, restored, reason, changes, undoes=act),
                       None if gone else restored)


def _unchanged_since(change: GraphChange, current: dict[str, Any], fields: tuple[str, ...]) -> None:
    after = change.after or {}
    if any(current.get(f) != after.get(f) for f in fields if f in after):
        raise CurationConflict(f"{change.object_type.capitalize()} {change.object_id} changed since this act: "
                               "undo the later act first.")


def _undo_edge_update(project: Project, actor: str, change: GraphChange) -> tuple[Edge, list[GraphChange]]:
    edge = _edge(project, change.object_id)
    _unchanged_since(change, edge_snapshot(edge), DECIDED_FIELDS)
    return edge, edge_set(edge, actor=actor, **{name: change.before[name] for name in DECIDED_FIELDS})


def _undo_edge_created(project: Project, actor: str, change: GraphChange) -> tuple[Edge, list[GraphChange]]:
    edge = _edge(project, change.object_id)
    return edge, edge_remove(edge, actor=actor)


def _undo_edge_deleted(project: Project, actor: str, change: GraphChange) -> tuple[Edge, list[GraphChange]]:
    return edge_restore(project, actor=actor, snapshot=change.before)


def _undo_memory_update(project: Project, actor: str, change: GraphChange) -> tuple[Memory, list[GraphChange]]:
    memory = _memory(project, change.object_id)
    _unchanged_since(change, memory_snapshot(memory), EDITABLE)
    changed = {f: change.before[f] for f in EDITABLE if change.before.get(f) != change.after.get(f)}
    return memory, [memory_restore(memory, actor=actor, before=changed)]


_UNDO = {Op.EDGE_UPDATED: _undo_edge_update, Op.EDGE_CREATED: _undo_edge_created, Op.EDGE_DELETED: _undo_edge_deleted,
         Op.MEMORY_UPDATED: _undo_memory_update}



BULK_MAX = 200


def edges_bulk_update(*, project: Project, actor: str, edge_ids: list[int], status: str, reason: str = "",
                      ) -> list[Outcome]:
    """Approve or reject several edges in one transaction, one act each (so each can be undone alone).
    Nothing is changed unless every edge is in the project."""
    edge_ids = list(dict.fromkeys(edge_ids))
    if not edge_ids or len(edge_ids) > BULK_MAX:
        raise ValidationFailed(f"Give 1 to {BULK_MAX} edge ids.", {"edge_ids": [f"1 to {BULK_MAX} ids"]})
    with transaction.atomic():
        found = set(Edge.objects.filter(project=project, pk__in=edge_ids).values_list("pk", flat=True))
        missing = [i for i in edge_ids if i not in found]
        if missing:
            raise NotFoundError(f"No edge {', '.join(map(str, missing[:10]))} in project {project.slug!r}.",
                                {"edge_ids": missing[:50]})
        return [edge_update(project=project, actor=actor, edge_id=i, status=status, reason=reason) for i in edge_ids]
