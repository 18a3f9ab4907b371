"""Reads of the curation views: what the review queue shows and how it is ordered."""

from __future__ import annotations

from django.db.models import BooleanField, Count, IntegerField, Q, QuerySet
from django.db.models.expressions import RawSQL

from memory.engine.sensitivity import repeated_values
from memory.models import Edge, Entity, Memory, MemoryStatus, Project

# How many stored recalls an edge carried activation in: the review queue puts the edges that shaped
# the most answers first. jsonb containment over the project's traces (one subquery per listed edge).
IMPACT_SQL = ("SELECT count(*) FROM memory_recalltrace t WHERE t.project_id = memory_edge.project_id "
              "AND t.activations @> jsonb_build_array(jsonb_build_object('edge_id', memory_edge.id))")


def review_queue(*, project: Project, session_id: int | None = None, status: str | None = None,
                 needs_review: bool | None = None, relation: str | None = None, order: str = "newest",
                 ) -> QuerySet[Edge]:
    edges = Edge.objects.filter(project=project).select_related("source", "target").annotate(
        impact=RawSQL(IMPACT_SQL, [], output_field=IntegerField()))
    filters = {"session_id": session_id, "status": status, "needs_review": needs_review, "relation": relation}
    edges = edges.filter(**{name: value for name, value in filters.items() if value is not None})
    ordering = {"newest": ("-id",), "weakest": ("confidence", "id"), "impact": ("-impact", "confidence", "id")}
    return edges.order_by(*ordering[order])


REPEATS_LIMIT = 50


def memory_repeats(*, memory: Memory) -> list[tuple[Memory, list[str]]]:
    """Other memories of the project, not yet sensitive, that repeat one of this memory's values, with
    the values they share (what marking this one sensitive should offer to mark too)."""
    values = repeated_values(memory)
    if not values:
        return []
    match = Q()
    for value in values:
        match |= Q(content__icontains=value) | Q(dimensions__identifiers__contains=[value]) | Q(
            dimensions__attributes__contains=[{"value": value}])
    found = (Memory.objects.filter(project_id=memory.project_id, sensitive=False).exclude(pk=memory.pk)
             .exclude(status=MemoryStatus.FORGOTTEN).filter(match).order_by("-occurred_at", "-id")[:REPEATS_LIMIT])
    return [(other, [v for v in values if v in repeated_values(other) or v.casefold() in other.content.casefold()])
            for other in found]

FLAGGED_SQL = "jsonb_path_exists(memory_entity.evidence, '$[*] ? (exists(@.possibly_same_as))')"


def entity_list(*, project: Project, flagged: bool = False, query: str = "", include_sensitive: bool = False
                ) -> QuerySet[Entity]:
    """The project's entities by mentions; `flagged`: those the engine thinks may be another one. A reader
    who may not see sensitive content sees only entities some non-sensitive memory mentions."""
    entities = Entity.objects.filter(project=project)
    if not include_sensitive:
        entities = entities.filter(mentions__memory__sensitive=False).distinct()
    if flagged:
        entities = entities.annotate(flagged=RawSQL(FLAGGED_SQL, [], output_field=BooleanField())).filter(flagged=True)
    if query:
        entities = entities.filter(Q(name__icontains=query) | Q(aliases__icontains=query))
    return entities.annotate(mention_count=Count("mentions", distinct=True)).order_by("-mention_count", "name")
