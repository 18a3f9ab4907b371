"""People's edits of edges: set a decision or a label, draw one, delete one, and put any of them back.

Each returns the change-log rows it wrote, the edge's own first: a `supersedes` edge carries its old
memory's status with it (supersede.replaced_status_follow), and those rows follow. A second edge of the
same pair and relation is an EditConflict.
"""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction

from ...errors import EditConflict
from ...models import Edge, EdgeOrigin, EdgeStatus, GraphChange, Memory, Project, Relation
from ..changelog import change_record
from ..operations import Op
from ..snapshots import EDGE_FIELDS, edge_snapshot
from ..supersede import replaced_status_follow

DECIDED_FIELDS = ("relation", "status", "needs_review")  # what a person's decision sets, and an undo restores


def edge_set(edge: Edge, *, actor: str, **values: Any) -> list[GraphChange]:
    """Set the decided fields of a locked edge (relation, status, needs_review) and record it."""
    if set(values) - set(DECIDED_FIELDS):
        raise ValueError(f"only {', '.join(DECIDED_FIELDS)} are set here")
    before = edge_snapshot(edge)
    for name, value in values.items():
        setattr(edge, name, value)
    try:
        with transaction.atomic():
            edge.save(update_fields=[*DECIDED_FIELDS, "updated_at"])
    except IntegrityError as exc:
        raise EditConflict(f"Edge {edge.source_id} → {edge.target_id} already has a {edge.relation} edge.",
                           {"relation": edge.relation}) from exc
    after = edge_snapshot(edge)
    change = change_record(project=edge.project, session=edge.session, actor=actor, op=Op.EDGE_UPDATED,
                           object_type="edge", object_id=edge.pk, before=before, after=after)
    return [change, *_status_follow(before, after, actor)]


def edge_add(project: Project, *, actor: str, source: Memory, target: Memory, relation: str,
             rationale: str) -> tuple[Edge, list[GraphChange]]:
    """A person's edge between two memories: origin human, approved, stored with the target's session."""
    if Edge.objects.filter(source=source, target=target, relation=relation).exists():
        raise EditConflict(f"Memory {source.pk} already has a {relation} edge to {target.pk}.", {"relation": relation})
    edge = Edge.objects.create(project=project, session=target.session, source=source, target=target,
                               relation=relation, confidence=1.0, origin=EdgeOrigin.HUMAN,
                               status=EdgeStatus.APPROVED, rationale=rationale)
    return edge, _created(project, edge, actor)


def edge_remove(edge: Edge, *, actor: str) -> list[GraphChange]:
    """Delete a locked edge; its snapshot in the change log is what brings it back."""
    before, session = edge_snapshot(edge), edge.session
    edge.delete()
    edge.pk = before["id"]
    change = change_record(project=edge.project, session=session, actor=actor, op=Op.EDGE_DELETED,
                           object_type="edge", object_id=before["id"], before=before)
    return [change, *_status_follow(before, None, actor)]


def edge_restore(project: Project, *, actor: str, snapshot: dict[str, Any]) -> tuple[Edge, list[GraphChange]]:
    """Recreate a deleted edge with its id, from its snapshot (both memories must still be there)."""
    ends = Memory.objects.filter(project=project, pk__in=[snapshot["source_id"], snapshot["target_id"]]).exclude(
        status="forgotten").count()
    if ends != 2 or Edge.objects.filter(pk=snapshot["id"]).exists():
        raise EditConflict(f"Edge {snapshot['id']} cannot come back: one of its memories is gone, or it exists.")
    edge = Edge.objects.create(project=project, pk=snapshot["id"],
                               **{f: snapshot[f] for f in EDGE_FIELDS if f != "id"})
    return edge, _created(project, edge, actor)


def _created(project: Project, edge: Edge, actor: str) -> list[GraphChange]:
    after = edge_snapshot(edge)
    change = change_record(project=project, session=edge.session, actor=actor, op=Op.EDGE_CREATED,
                           object_type="edge", object_id=edge.pk, after=after)
    return [change, *_status_follow(None, after, actor)]


def _status_follow(before: dict | None, after: dict | None, actor: str) -> list[GraphChange]:
    """A supersedes edge decided by a person carries its memory's status with it (engine rule)."""
    edge = after or before or {}
    if Relation.SUPERSEDES not in ((before or {}).get("relation"), (after or {}).get("relation")):
        return []
    return replaced_status_follow(memory_id=edge["source_id"], actor=actor)
