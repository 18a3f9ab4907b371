"""Entity acts: list (flagged duplicates), rename, merge, split an alias, dismiss a flag."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from contextweaver_site.http.pagination import BoundedPagination, page_of
from contextweaver_site.http.validation import id_field, valid
from memory.models import Role

from .. import entities as entity_acts
from ..selectors import entity_list
from .common import REASON, TAG, ActOutput, CuratedEntityOutput, entity_answer, entity_row, people

EntityPageOutput = page_of(CuratedEntityOutput(many=True), "EntityPageOutput")


class EntityQueryInput(serializers.Serializer):
    flagged = serializers.BooleanField(required=False, default=False)
    q = serializers.CharField(required=False, allow_blank=True, max_length=300, default="")


class EntityRenameInput(serializers.Serializer):
    name = serializers.CharField(max_length=entity_acts.NAME_MAX)
    reason = REASON


class EntityMergeInput(serializers.Serializer):
    duplicate_id = id_field(help_text="The entity merged into this one (it is deleted).")
    reason = REASON


class EntitySplitInput(serializers.Serializer):
    alias = serializers.CharField(max_length=entity_acts.NAME_MAX)
    reason = REASON


class EntityDismissInput(serializers.Serializer):
    other_id = id_field(help_text="The entity its possibly_same_as flag names.")
    reason = REASON


class EntityActOutput(serializers.Serializer):
    act = ActOutput()
    entity = CuratedEntityOutput()


class EntityListApi(APIView):
    @extend_schema(tags=TAG, responses=EntityPageOutput,
                   summary="The project's entities (flagged: possible duplicates)",
                   parameters=[OpenApiParameter("flagged", bool), OpenApiParameter("q", str),
                               OpenApiParameter("limit", int), OpenApiParameter("offset", int)])
    def get(self, request, project_slug: str):
        access = people(request, project_slug, min_role=Role.VIEWER)
        params = valid(EntityQueryInput, request.query_params)
        found = entity_list(project=access.project, flagged=params["flagged"], query=params["q"],
                            include_sensitive=access.may_see_sensitive)
        paginator = BoundedPagination()
        page = paginator.paginate_queryset(found, request, view=self)
        return paginator.get_paginated_response([entity_row(e) for e in page])


class EntityDetailApi(APIView):
    @extend_schema(tags=TAG, request=EntityRenameInput, summary="Rename an entity (the old name stays an alias)",
                   responses={200: EntityActOutput, 409: OpenApiResponse(description="That name is taken: merge.")})
    def patch(self, request, project_slug: str, entity_id: int):
        return _entity_act(request, project_slug, EntityRenameInput, entity_acts.entity_rename, entity_id=entity_id)


class EntityMergeApi(APIView):
    @extend_schema(tags=TAG, request=EntityMergeInput, responses=EntityActOutput,
                   summary="Merge another entity into this one (mentions and names follow)")
    def post(self, request, project_slug: str, entity_id: int):
        return _entity_act(request, project_slug, EntityMergeInput, entity_acts.entity_merge, survivor_id=entity_id)


class EntitySplitApi(APIView):
    @extend_schema(tags=TAG, request=EntitySplitInput, responses=EntityActOutput,
                   summary="Split a wrongly merged alias off into its own entity")
    def post(self, request, project_slug: str, entity_id: int):
        return _entity_act(request, project_slug, EntitySplitInput, entity_acts.entity_split, entity_id=entity_id)


class EntityDismissApi(APIView):
    @extend_schema(tags=TAG, request=EntityDismissInput, responses=EntityActOutput,
                   summary="Settle a possibly_same_as flag: the two entities are different")
    def post(self, request, project_slug: str, entity_id: int):
        return _entity_act(request, project_slug, EntityDismissInput, entity_acts.entity_flag_dismiss,
                           entity_id=entity_id)


def _entity_act(request, slug: str, input_class, service, **ids) -> Response:
    """A curator's act on an entity: validate the body, call the service, answer the act and the entity."""
    access = people(request, slug)
    data = valid(input_class, request.data)
    outcome = service(project=access.project, actor=access.actor, **ids, **data)
    return Response(entity_answer(outcome))
