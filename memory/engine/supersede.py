"""Conflicts (SPEC §3.6): a new value for the same attribute of the same entity supersedes the old.

Scoped to exactly that (entity, attribute): unrelated memories are never invalidated. The user's
own attributes ("my phone") are compared within the session; named entities across the project.
The old memory stays, marked superseded (out of default recall), linked by a `supersedes` edge.
"""

from __future__ import annotations

from ..models import Edge, EdgeOrigin, Memory, MemoryKind, MemoryStatus, Relation
from .changelog import ENGINE_ACTOR, change_record
from .extraction import MULTI_VALUED, AttributeValue
from .snapshots import edge_snapshot, memory_snapshot

USER_ENTITY = "user"
# Tool traffic records what was done with a value at the time; a later value does not make it stale.
NEVER_SUPERSEDED_KINDS = {MemoryKind.ACTION, MemoryKind.RESULT}
MAX_ATTRIBUTES_OF_SUPERSEDED = 2  # a memory about many things is not replaced by a change of one


def _older_values(memory: Memory, attr: AttributeValue) -> list[Memory]:
    queryset = Memory.objects.filter(
        project_id=memory.project_id, status=MemoryStatus.ACTIVE,
        dimensions__attributes__contains=[{"entity": attr.entity, "attribute": attr.attribute}],
    ).exclude(pk=memory.pk).exclude(kind__in=NEVER_SUPERSEDED_KINDS)
    if attr.entity == USER_ENTITY:
        queryset = queryset.filter(session_id=memory.session_id)
    return [
        old for old in queryset.order_by("occurred_at", "id")
        if len({a.get("attribute") for a in old.dimensions.get("attributes", [])}) <= MAX_ATTRIBUTES_OF_SUPERSEDED
        and any(a.get("entity") == attr.entity and a.get("attribute") == attr.attribute and a.get("value") != attr.value
               for a in old.dimensions.get("attributes", []))
    ]


def supersede_apply(memory: Memory, attributes: list[AttributeValue]) -> list[Edge]:
    edges = []
    for attr in attributes:
        if attr.attribute in MULTI_VALUED:  # a second allergy adds to the first, it does not replace it
            continue
        for old in _older_values(memory, attr):
            pair = Edge.objects.filter(source=old, target=memory)
            if pair.filter(origin=EdgeOrigin.HUMAN).exists() or pair.filter(relation=Relation.SUPERSEDES).exists():
                continue
            edge = Edge.objects.create(
                project_id=memory.project_id, session_id=memory.session_id, source=old, target=memory,
                relation=Relation.SUPERSEDES, confidence=0.9, origin=EdgeOrigin.RULE,
                rationale=f"new {attr.attribute} of {attr.entity}: {attr.value}",
            )
            before = memory_snapshot(old)
            old.status = MemoryStatus.SUPERSEDED
            old.save(update_fields=["status", "updated_at"])
            for op, obj_type, obj, prev, after in (
                ("edge.created", "edge", edge, None, edge_snapshot(edge)),
                ("memory.superseded", "memory", old, before, memory_snapshot(old)),
            ):
                change_record(project=memory.project, session=memory.session, actor=ENGINE_ACTOR, op=op,
                              object_type=obj_type, object_id=obj.pk, before=prev, after=after)
            edges.append(edge)
    return edges
