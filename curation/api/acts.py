"""The curation log and undo."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from contextweaver_site.http.pagination import BoundedPagination, page_of
from contextweaver_site.http.validation import id_field, valid
from memory.api.serializers import MemoryOutput
from memory.models import Role
from memory.selectors import actor_names

from .. import services
from ..models import ActKind, CurationAct
from .common import (
    TAG,
    ActOutput,
    CuratedEntityOutput,
    ReviewEdgeOutput,
    UndoInput,
    edge_answer,
    entity_answer,
    memory_answer,
    people,
)


class UndoOutput(serializers.Serializer):
    act = ActOutput()
    edge = ReviewEdgeOutput(allow_null=True, required=False)
    memory = MemoryOutput(required=False)
    entity = CuratedEntityOutput(required=False, help_text="For an entity act: the entity as it is now.")


ActPageOutput = page_of(ActOutput(many=True), "ActPageOutput")


class ActQueryInput(serializers.Serializer):
    session = id_field(required=False, allow_null=True, default=None)
    actor = serializers.CharField(required=False, allow_blank=True, max_length=120, default="")
    kind = serializers.ChoiceField(choices=ActKind.values, required=False, allow_null=True, default=None)


class ActListApi(APIView):
    @extend_schema(tags=TAG, responses=ActPageOutput, summary="The curation log, newest first",
                   parameters=[OpenApiParameter("session", int), OpenApiParameter("actor", str),
                               OpenApiParameter("kind", str, enum=ActKind.values),
                               OpenApiParameter("limit", int), OpenApiParameter("offset", int)])
    def get(self, request, project_slug: str):
        access = people(request, project_slug, min_role=Role.VIEWER)
        params = valid(ActQueryInput, request.query_params)
        acts = CurationAct.objects.filter(project=access.project).select_related("undone_by").order_by("-id")
        for name, field in (("session", "session_id"), ("actor", "actor"), ("kind", "kind")):
            if params.get(name) not in (None, ""):
                acts = acts.filter(**{field: params[name]})
        paginator = BoundedPagination()
        page = paginator.paginate_queryset(acts, request, view=self)
        names = actor_names(a.actor for a in page)
        return paginator.get_paginated_response(ActOutput(page, many=True, context={"names": names}).data)


class ActUndoApi(APIView):
    @extend_schema(tags=TAG, request=UndoInput, summary="Undo a curation act (recorded as an act itself)",
                   responses={200: UndoOutput, 409: OpenApiResponse(description="Undone already, an undo, or the "
                                                                               "object changed since.")})
    def post(self, request, project_slug: str, act_id: int):
        access = people(request, project_slug)
        data = valid(UndoInput, request.data)
        outcome = services.act_undo(project=access.project, actor=access.actor, act_id=act_id, **data)
        if outcome.act.object_type == "memory":
            return Response(memory_answer(outcome, access))
        if outcome.act.object_type == "entity":
            return Response(entity_answer(outcome))
        return Response(edge_answer(outcome, access))
