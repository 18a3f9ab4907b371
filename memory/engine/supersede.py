"""Conflicts (SPEC §3.6): a new value for the same attribute of the same entity supersedes the old.

Two rules, both narrow on purpose, so unrelated memories are never invalidated:
- attributes: the same (entity, attribute) with another value (the user's own attributes, "my
  phone", within the session; named entities across the project);
- announced changes: a memory that says a value changed ("moved to", "now", "改为", "换了") and is
  closely related to an earlier one (similar, or sharing an entity) whose value of the same type
  (number, date, time, amount, identifier) it replaces.
The old memory stays, marked superseded (out of default recall), linked by a `supersedes` edge.
A question or a confirmation ("is it still the 14th?", "还是14号吗？") never supersedes anything.
"""

from __future__ import annotations

from ..models import Edge, EdgeOrigin, Memory, MemoryKind, MemoryStatus, Relation
from .changelog import ENGINE_ACTOR, change_record
from .cues import ASKS_OR_CONFIRMS, CHANGE_CUE
from .extraction import MULTI_VALUED, AttributeValue
from .inference import Candidate
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


VALUE_TYPES = ("numbers", "dates", "times", "amounts")
CHANGE_MIN_SIMILARITY = 0.55
MAX_VALUES_COMPARED = 2  # a memory listing many numbers is not "the" value that changed


def supersede_apply(memory: Memory, attributes: list[AttributeValue], related: list[Candidate]) -> list[Edge]:
    if asks_or_confirms(memory):
        return []  # "is your phone still 138…?" names a value without changing it
    edges = []
    for attr in attributes:
        if attr.attribute in MULTI_VALUED:  # a second allergy adds to the first, it does not replace it
            continue
        for old in _older_values(memory, attr):
            edge = _supersede(old, memory, f"new {attr.attribute} of {attr.entity}: {attr.value}", 0.9)
            if edge:
                edges.append(edge)
    if CHANGE_CUE.search(memory.content):
        for candidate in related:
            changed = _changed_value_type(candidate.memory, memory)
            close = candidate.similarity >= CHANGE_MIN_SIMILARITY or candidate.shared_entities
            if changed and close and candidate.memory.status == MemoryStatus.ACTIVE \
                    and candidate.memory.kind not in NEVER_SUPERSEDED_KINDS:
                edge = _supersede(candidate.memory, memory, f"announced change of a {changed[:-1]} value", 0.7)
                if edge:
                    edges.append(edge)
    return edges


def asks_or_confirms(memory: Memory) -> bool:
    """A question, or a check that a value still holds: it mentions a value, it does not set one."""
    return (memory.dimensions or {}).get("intent") == "question" or bool(ASKS_OR_CONFIRMS.search(memory.content))


def _changed_value_type(old: Memory, new: Memory) -> str | None:
    """The first value type both mention with different values (new is not a superset of old)."""
    for name in VALUE_TYPES:
        before, after = set(old.dimensions.get(name, [])), set(new.dimensions.get(name, []))
        if len(before) > MAX_VALUES_COMPARED or len(after) > MAX_VALUES_COMPARED:
            continue
        if before and after and before - after and after - before:
            return name
    return None


def _supersede(old: Memory, memory: Memory, rationale: str, confidence: float) -> Edge | None:
    pair = Edge.objects.filter(source=old, target=memory)
    if pair.filter(origin=EdgeOrigin.HUMAN).exists() or pair.filter(relation=Relation.SUPERSEDES).exists():
        return None
    edge = Edge.objects.create(
        project_id=memory.project_id, session_id=memory.session_id, source=old, target=memory,
        relation=Relation.SUPERSEDES, confidence=confidence, origin=EdgeOrigin.RULE, rationale=rationale,
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
    return edge
