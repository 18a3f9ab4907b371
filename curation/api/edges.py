"""The review queue and edge acts: list, draw, approve / reject / relabel, delete, bulk."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from contextweaver_site.http.pagination import BoundedPagination, page_of
from contextweaver_site.http.validation import id_field, valid
from memory.models import EdgeStatus, Relation, Role
from memory.reads.review import review_rows

from .. import services
from ..selectors import review_queue
from .common import (
    REASON,
    TAG,
    ActOutput,
    EdgeActOutput,
    ReviewEdgeOutput,
    UndoInput,
    edge_answer,
    people,
)

ReviewPageOutput = page_of(ReviewEdgeOutput(many=True), "ReviewPageOutput")


class EdgeQueryInput(serializers.Serializer):
    session = id_field(required=False, allow_null=True, default=None)
    status = serializers.ChoiceField(choices=EdgeStatus.values, required=False, allow_null=True, default=None)
    needs_review = serializers.BooleanField(required=False, allow_null=True, default=None)
    relation = serializers.ChoiceField(choices=Relation.values, required=False, allow_null=True, default=None)
    order = serializers.ChoiceField(choices=["newest", "weakest", "impact"], required=False, default="newest")


class EdgeDrawInput(serializers.Serializer):
    source_id = id_field()
    target_id = id_field()
    relation = serializers.ChoiceField(choices=services.CURATED_RELATIONS)
    reason = REASON


class EdgeUpdateInput(serializers.Serializer):
    status = serializers.ChoiceField(choices=services.DECISIONS, required=False)
    relation = serializers.ChoiceField(choices=services.CURATED_RELATIONS, required=False)
    reason = REASON


class EdgeListDrawApi(APIView):
    @extend_schema(tags=TAG, responses=ReviewPageOutput, summary="The review queue: edges with both memories' text",
                   parameters=[OpenApiParameter("session", int),
                               OpenApiParameter("status", str, enum=EdgeStatus.values),
                               OpenApiParameter("needs_review", bool),
                               OpenApiParameter("relation", str, enum=Relation.values),
                               OpenApiParameter("order", str, enum=["newest", "weakest", "impact"],
                                                description="impact: the edges most stored recalls went through first"),
                               OpenApiParameter("limit", int), OpenApiParameter("offset", int)])
    def get(self, request, project_slug: str):
        access = people(request, project_slug, min_role=Role.VIEWER)
        params = valid(EdgeQueryInput, request.query_params)
        paginator = BoundedPagination()
        queue = review_queue(project=access.project, session_id=params["session"], status=params["status"],
                             needs_review=params["needs_review"], relation=params["relation"], order=params["order"])
        page = paginator.paginate_queryset(queue, request, view=self)
        return paginator.get_paginated_response(review_rows(access, list(page)))

    @extend_schema(tags=TAG, request=EdgeDrawInput, summary="Draw an edge between two memories (human, approved)",
                   responses={201: EdgeActOutput, 409: OpenApiResponse(description="That edge exists already.")})
    def post(self, request, project_slug: str):
        access = people(request, project_slug)
        data = valid(EdgeDrawInput, request.data)
        outcome = services.edge_draw(project=access.project, actor=access.actor, **data)
        return Response(edge_answer(outcome, access), status=201)


class EdgeBulkInput(serializers.Serializer):
    edge_ids = serializers.ListField(child=id_field(), min_length=1, max_length=services.BULK_MAX)
    status = serializers.ChoiceField(choices=services.DECISIONS)
    reason = REASON


class EdgeBulkOutput(serializers.Serializer):
    acts = ActOutput(many=True)
    edges = ReviewEdgeOutput(many=True)


class EdgeBulkApi(APIView):
    @extend_schema(tags=TAG, request=EdgeBulkInput, responses=EdgeBulkOutput,
                   summary="Approve or reject several edges at once (one act each; all or nothing)")
    def post(self, request, project_slug: str):
        access = people(request, project_slug)
        data = valid(EdgeBulkInput, request.data)
        outcomes = services.edges_bulk_update(project=access.project, actor=access.actor, **data)
        edges = list(review_queue(project=access.project).filter(pk__in=[o.object.pk for o in outcomes]))
        return Response({"acts": ActOutput([o.act for o in outcomes], many=True).data,
                         "edges": review_rows(access, edges)})


class EdgeDetailApi(APIView):
    @extend_schema(tags=TAG, request=EdgeUpdateInput, summary="Approve, reject or relabel an edge",
                   responses={200: EdgeActOutput, 409: OpenApiResponse(description="The pair has that relation.")})
    def patch(self, request, project_slug: str, edge_id: int):
        access = people(request, project_slug)
        data = valid(EdgeUpdateInput, request.data)
        outcome = services.edge_update(project=access.project, actor=access.actor, edge_id=edge_id, **data)
        return Response(edge_answer(outcome, access))

    @extend_schema(tags=TAG, request=None, responses={200: EdgeActOutput},
                   parameters=[OpenApiParameter("reason", str, description="Why (kept in the curation log).")],
                   summary="Delete an edge (reject it instead to keep the engine from inferring it again)")
    def delete(self, request, project_slug: str, edge_id: int):
        access = people(request, project_slug)
        reason = valid(UndoInput, {"reason": request.query_params.get("reason", "")})["reason"]
        outcome = services.edge_delete(project=access.project, actor=access.actor, edge_id=edge_id, reason=reason)
        return Response(edge_answer(outcome, access))
