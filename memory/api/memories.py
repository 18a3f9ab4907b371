"""Memories of a project: the list (those at risk first, when asked), and why one is at risk."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from contextweaver_site.http.access import request_access, session_for
from contextweaver_site.http.pagination import BoundedPagination, page_of

from ..reads.reader import Reader
from ..reads.risk import risk_rows
from ..reads.rows import memory_rows
from ..selectors import memory_list
from . import serializers as s


class MemoryDetailOutput(s.MemoryOutput):
    """A memory with why it is at risk (reads.risk.risk_rows); empty when it is not."""

    at_risk_why = s.RiskOutput(many=True, read_only=True)

    class Meta(s.MemoryOutput.Meta):
        fields = [*s.MemoryOutput.Meta.fields, "at_risk_why"]


MemoryPageOutput = page_of(MemoryDetailOutput(many=True), "MemoryPageOutput",
                           "One page of the project's memories (limit/offset pagination).")


class MemoryQueryInput(serializers.Serializer):
    at_risk = serializers.BooleanField(required=False, allow_null=True, default=None,
                                       help_text="true: only memories at risk, most at risk first; false: only "
                                                 "those that are not.")
    session = s.id_field(required=False, allow_null=True, default=None, help_text="Only this session's memories.")


def _with_why(reader: Reader, memories: list) -> list[dict]:
    why = risk_rows(reader, [m.pk for m in memories if m.at_risk])
    return [{**row, "at_risk_why": why.get(row["id"], [])} for row in memory_rows(reader, memories)]


class MemoryListApi(APIView):
    @extend_schema(responses=MemoryPageOutput, operation_id="projects_memories_list",
                   summary="List the project's memories (not forgotten), newest first; ?at_risk=true for those "
                           "a change to what they depend on may have made out of date",
                   parameters=[OpenApiParameter("at_risk", bool), OpenApiParameter("session", int),
                               OpenApiParameter("limit", int, description="Page size (default 100, 1 to 1000)."),
                               OpenApiParameter("offset", int, description="Skip this many (default 0).")])
    def get(self, request, project_slug: str):
        access = request_access(request, project_slug)
        params = s.valid(MemoryQueryInput, request.query_params)
        session = session_for(access.project, params["session"]) if params["session"] else None
        queryset = memory_list(project=access.project, session=session, at_risk=params["at_risk"])
        paginator = BoundedPagination()
        page = list(paginator.paginate_queryset(queryset, request, view=self))
        return paginator.get_paginated_response(_with_why(access, page))


class MemoryRisksApi(APIView):
    @extend_schema(responses=s.RiskOutput(many=True),
                   summary="Why a memory is at risk: what it depends on changed, how, and through which edges")
    def get(self, request, project_slug: str, memory_id: int):
        access = request_access(request, project_slug)
        if not memory_list(project=access.project).filter(pk=memory_id).exists():
            raise NotFound(f"No memory {memory_id} in project {project_slug!r}.")
        return Response(risk_rows(access, [memory_id]).get(memory_id, []))
