"""Reads of the curation views: what the review queue shows and how it is ordered."""

from __future__ import annotations

from django.db.models import IntegerField, QuerySet
from django.db.models.expressions import RawSQL

from memory.models import Edge, Project

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
