"""Stored recalls read back (replay): list, one trace, two compared, and a stored recall re-run now.

Any member or agent of the project may read them; what each sees goes through the visibility rule
(memory/engine/recall/replay.py). Re-running needs the query, so a recall whose query is hidden from the
reader cannot be re-run by them.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.response import Response
from rest_framework.views import APIView

from contextweaver_site.http.access import request_access, session_for
from contextweaver_site.http.pagination import BoundedPagination, page_of

from ..access import Access
from ..engine.recall import RecallQuery, memory_recall
from ..engine.recall.replay import recall_compare, recall_list, recall_replay, recall_summary
from ..models import RecallTrace
from ..selectors import actor_names
from .authentication import actor_of
from .serializers import id_field, valid

MAX_SEARCH = 200


class RecallListQuery(serializers.Serializer):
    session = id_field(required=False, allow_null=True, default=None)
    actor = serializers.CharField(required=False, default="", allow_blank=True, max_length=120)
    q = serializers.CharField(required=False, default="", allow_blank=True, max_length=MAX_SEARCH)
    memory = id_field(required=False, allow_null=True, default=None)
    edge = id_field(required=False, allow_null=True, default=None)


class RecallSummaryOutput(serializers.Serializer):
    id = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    actor = serializers.CharField()
    actor_name = serializers.CharField(help_text="A person's username, a token's name, else the actor.")
    session_id = serializers.IntegerField(allow_null=True, help_text="The session it was scoped to (null: project).")
    query = serializers.CharField(allow_null=True, help_text="Null when it touched a memory you may not see.")
    query_hidden = serializers.BooleanField()
    preset = serializers.CharField()
    k = serializers.IntegerField(allow_null=True)
    scope = serializers.CharField()
    returned = serializers.IntegerField(help_text="Memories in its ranking.")
    touched = serializers.IntegerField(help_text="Memories its seeds and activation reached.")
    change_id = serializers.IntegerField(allow_null=True, help_text="The project's last change-log id when it ran.")
    total_ms = serializers.FloatField(allow_null=True)


class RecallReplayOutput(RecallSummaryOutput):
    params = serializers.DictField()
    timings = serializers.DictField()
    changes_since = serializers.IntegerField(
        allow_null=True, help_text="Change-log rows since it ran (after change_id) about what it used: a memory it "
        "started from, reached or returned (seeds, arrivals, ranking), or an edge with either end among them "
        "(drawn, approved, rejected, relabelled, redirected, deleted). Changes elsewhere in the project and "
        "other recalls do not count. Null for a trace stored without change_id.")
    seeds = serializers.ListField(child=serializers.DictField(), help_text="memory_id, activation, sources "
                                  "(rank per source: vector, lexical, entities).")
    steps = serializers.ListField(child=serializers.DictField(), help_text="Per hop (0: seeds), the arrivals: "
                                  "memory_id, activation, from, edge_id, relation.")
    ranking = serializers.ListField(child=serializers.DictField(), help_text="rank, memory_id, score, components, "
                                    "seed_activation, path (seed first), text as it was shown.")
    context_lines = serializers.ListField(child=serializers.DictField(), help_text="The told context by line, "
                                          "each with its memory_id (null for the header).")
    narrative = serializers.CharField()
    memories = serializers.DictField(child=serializers.DictField(), help_text="Every memory it names, by id: "
                                     "exists, status now, kind, text (or its mask), masked.")
    edges = serializers.DictField(child=serializers.DictField(), help_text="Edges that carried activation, as "
                                  "they are now: exists, relation_now, status_now.")
    led_to = serializers.ListField(child=serializers.DictField(), help_text="What the agent sent after it, naming it "
                                   "(recall_id): interaction_id, session_id, kind, memory_ids, used, and the edges "
                                   "learned from that use (id, source_id, target_id, confidence).")


class RecallCompareOutput(serializers.Serializer):
    first = RecallReplayOutput()
    second = RecallReplayOutput()
    diff = serializers.DictField(help_text="entered, left, moved (from → to), stayed, and the edges on the paths "
                                 "of one recall's returned memories only (edges_only_first, edges_only_second).")


RecallPageOutput = page_of(RecallSummaryOutput(many=True), "RecallPageOutput")


def _replay(trace: RecallTrace, access: Access) -> dict:
    return recall_replay(trace, show_sensitive=access.may_see_sensitive, names=actor_names([trace.actor]))


def _trace(access: Access, recall_id: int) -> RecallTrace:
    trace = RecallTrace.objects.filter(project=access.project, pk=recall_id).first()
    if trace is None:
        raise NotFound(f"No recall {recall_id} in project {access.project.slug!r}.")
    return trace


class RecallListApi(APIView):
    @extend_schema(
        parameters=[OpenApiParameter("session", int, description="Recalls scoped to this session or returning "
                                     "one of its memories."),
                    OpenApiParameter("actor", str, description="Only recalls run by this actor (user:… or token:…)."),
                    OpenApiParameter("q", str, description="Text in the query (queries hidden from you never match)."),
                    OpenApiParameter("memory", int, description="Only recalls that returned this memory."),
                    OpenApiParameter("edge", int, description="Only recalls in which this edge carried activation."),
                    OpenApiParameter("limit", int, description="Page size (default 100, 1 to 1000)."),
                    OpenApiParameter("offset", int, description="Skip this many (default 0).")],
        responses=RecallPageOutput, summary="Stored recalls of the project, newest first",
        operation_id="projects_recalls_list",
    )
    def get(self, request, project_slug: str):
        access = request_access(request, project_slug)
        params = valid(RecallListQuery, request.query_params)
        session_id = params["session"]
        if session_id is not None:
            session_for(access.project, session_id)
        queryset = recall_list(project=access.project, show_sensitive=access.may_see_sensitive,
                               session_id=session_id, actor=params["actor"], text=params["q"],
                               memory_id=params["memory"], edge_id=params["edge"])
        paginator = BoundedPagination()
        page = paginator.paginate_queryset(queryset, request, view=self)
        names = actor_names(t.actor for t in page)
        return paginator.get_paginated_response(RecallSummaryOutput([recall_summary(t, names=names) for t in page],
                                                                    many=True).data)


class RecallDetailApi(APIView):
    @extend_schema(responses={200: RecallReplayOutput, 404: OpenApiResponse(description="Unknown recall")},
                   summary="One stored recall, step by step, as you may see it")
    def get(self, request, project_slug: str, recall_id: int):
        access = request_access(request, project_slug)
        replay = _replay(_trace(access, recall_id), access)
        return Response(RecallReplayOutput(replay).data)


class RecallCompareApi(APIView):
    @extend_schema(responses={200: RecallCompareOutput, 404: OpenApiResponse(description="Unknown recall")},
                   summary="Two stored recalls side by side: entered, left, moved, the edges that differ")
    def get(self, request, project_slug: str, recall_id: int, other_id: int):
        access = request_access(request, project_slug)
        first, second = _replay(_trace(access, recall_id), access), _replay(_trace(access, other_id), access)
        return Response(RecallCompareOutput({"first": first, "second": second,
                                             "diff": recall_compare(first, second)}).data)


class RecallRerunApi(APIView):
    @extend_schema(request=None, responses={201: RecallCompareOutput,
                                            403: OpenApiResponse(description="Its query is hidden from you")},
                   summary="Run a stored recall's query and parameters on the graph as it is now, and compare")
    def post(self, request, project_slug: str, recall_id: int):
        access = request_access(request, project_slug)
        trace = _trace(access, recall_id)
        show = access.may_see_sensitive
        first = _replay(trace, access)
        if first["query_hidden"]:
            raise PermissionDenied("This recall touched memories you may not see, so its query is hidden from you "
                                   "and cannot be re-run by you.")
        again = memory_recall(project=access.project, actor=actor_of(request), query=_query_again(
            trace, include_sensitive=show, counts_as_access=access.is_agent))
        second = _replay(again.trace, access)
        return Response(RecallCompareOutput({"first": first, "second": second,
                                             "diff": recall_compare(first, second)}).data,
                        status=status.HTTP_201_CREATED)


def _query_again(trace: RecallTrace, *, include_sensitive: bool, counts_as_access: bool) -> RecallQuery:
    """The stored query and parameters (the whole config it ran with, so a changed default does not move it)."""
    params = trace.params or {}
    config = dict(params.get("config") or {})
    return RecallQuery(text=trace.query, k=int(params.get("k") or len(trace.returned_ids) or 8),
                       session=trace.session if trace.session_id else None, include_sensitive=include_sensitive,
                       preset=params.get("preset", "ripple"), params=config, counts_as_access=counts_as_access)
