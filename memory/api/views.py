"""Agent API views: each validates, calls one engine function or one read (memory/reads: rows already
masked for the caller), and answers."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, PolymorphicProxySerializer, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from contextweaver_site.http.access import project_for, request_access, session_for
from contextweaver_site.http.pagination import BoundedPagination

from ..access import Access
from ..engine.ingest import InteractionInput, interactions_accept
from ..engine.links import LinkInput
from ..engine.maintenance.forget import memory_forget
from ..engine.pipeline import interaction_process_safely, interaction_promote, interaction_retry
from ..engine.projects import session_create
from ..engine.recall import RecallQuery, memory_recall
from ..engine.recall.config import recall_defaults
from ..models import Interaction, MemoryStatus, Role
from ..reads.changes import change_page
from ..reads.graph import ghost_rows, graph_view
from ..reads.recall import recall_body
from ..reads.rows import interaction_rows
from ..selectors import change_list, interaction_list, session_list, session_with_counts
from . import serializers as s
from .authentication import actor_of

WAIT_PARAM = OpenApiParameter("wait", bool, description="Process before answering (201 with results) instead of 202.")
IDEMPOTENCY_HEADER = OpenApiParameter(
    "Idempotency-Key", str, location=OpenApiParameter.HEADER, required=False,
    description="Key for an item without its own idempotency_key: the key itself for one interaction, "
                "`<key>:<index>` for each item of a batch, so a retried request is stored once.")
TRUE = {"1", "true", "yes"}


class SessionListCreateApi(APIView):
    @extend_schema(responses=s.SessionOutput(many=True), summary="List the project's sessions")
    def get(self, request, project_slug: str):
        project = project_for(request, project_slug)
        return Response(s.SessionOutput(session_list(project=project), many=True).data)

    @extend_schema(request=s.SessionInput, responses={201: s.SessionOutput}, summary="Start a session")
    def post(self, request, project_slug: str):
        project = project_for(request, project_slug, min_role=Role.CURATOR)
        data = s.valid(s.SessionInput, request.data)
        session = session_create(project=project, actor=actor_of(request), **data)
        return Response(s.SessionOutput(session_with_counts(session)).data, status=status.HTTP_201_CREATED)


class InteractionListAcceptApi(APIView):
    @extend_schema(responses=s.InteractionPageOutput, summary="List a session's interactions, oldest first",
                   operation_id="projects_sessions_interactions_list",
                   parameters=[OpenApiParameter("limit", int, description="Page size (default 100, 1 to 1000)."),
                               OpenApiParameter("offset", int, description="Skip this many (default 0).")])
    def get(self, request, project_slug: str, session_id: int):
        access = request_access(request, project_slug)
        session = session_for(access.project, session_id)
        queryset = interaction_list(session=session).prefetch_related("memories")
        paginator = BoundedPagination()
        page = paginator.paginate_queryset(queryset, request, view=self)
        return paginator.get_paginated_response(interaction_rows(access, list(page)))

    @extend_schema(
        request=PolymorphicProxySerializer(
            component_name="InteractionPost", serializers=[s.InteractionInput, s.InteractionBatchInput],
            resource_type_field_name=None,
        ),
        parameters=[WAIT_PARAM, IDEMPOTENCY_HEADER],
        responses={202: s.AcceptedBatchOutput, 201: s.AcceptedBatchOutput, 200: s.AcceptedBatchOutput,
                   409: OpenApiResponse(description="An idempotency key was used before for a different "
                                                    "interaction: `error.detail.interaction_id` names it.")},
        summary="Send one interaction or a batch ({\"interactions\": [...]})",
    )
    def post(self, request, project_slug: str, session_id: int):
        access = request_access(request, project_slug, min_role=Role.CURATOR)
        session = session_for(access.project, session_id)
        items = _interaction_inputs(request)
        accepted = interactions_accept(session=session, items=items, actor=actor_of(request),
                                       may_see_sensitive=access.may_see_sensitive)
        wait = request.query_params.get("wait", "").lower() in TRUE
        if wait:
            for entry in accepted:
                if entry.created:
                    interaction_process_safely(interaction_id=entry.interaction.pk)
        ids = [a.interaction.pk for a in accepted]
        rows = {i.pk: i for i in Interaction.objects.filter(pk__in=ids).prefetch_related("memories")}
        body = {"interactions": [_accepted_row(rows[a.interaction.pk], duplicate=not a.created) for a in accepted]}
        code = status.HTTP_200_OK if not any(a.created for a in accepted) else (
            status.HTTP_201_CREATED if wait else status.HTTP_202_ACCEPTED)
        return Response(body, status=code)


def _interaction_inputs(request) -> list[InteractionInput]:
    """The interactions of the body; an Idempotency-Key header gives each item without a key of its own
    the key `<header>` (one interaction) or `<header>:<index>` (a batch), so a retried request is stored once."""
    if not isinstance(request.data, dict):
        message = 'Send a JSON object: one interaction or {"interactions": [...]}.'
        raise ValidationError({"non_field_errors": [message]})
    header = request.headers.get("Idempotency-Key", "")
    if "interactions" in request.data:
        rows = s.valid(s.InteractionBatchInput, request.data)["interactions"]
        if header:
            rows = [row if row["idempotency_key"] else {**row, "idempotency_key": f"{header}:{index}"}
                    for index, row in enumerate(rows)]
    else:
        rows = [s.valid(s.InteractionInput, request.data)]
        if header and not rows[0]["idempotency_key"]:
            rows[0]["idempotency_key"] = header
    if header and any(len(row["idempotency_key"]) > s.IDEMPOTENCY_KEY_MAX for row in rows):
        raise ValidationError({"Idempotency-Key": [f"Keys are at most {s.IDEMPOTENCY_KEY_MAX} characters, "
                                                   "including the ':<index>' a batch adds to the header."]})
    return [_interaction_input(row) for row in rows]


def _interaction_input(row: dict) -> InteractionInput:
    links = tuple(LinkInput(by=by, ref=str(link[by]), relation=link["relation"]) for link in row.pop("links")
                  for by in ("id", "idempotency_key", "external_id") if by in link)
    return InteractionInput(**{**row, "links": links, "used": tuple(row["used"])})


def _accepted_row(interaction: Interaction, *, duplicate: bool) -> dict:
    return {"id": interaction.pk, "status": interaction.status, "duplicate": duplicate,
            "memory_ids": sorted(m.pk for m in interaction.memories.all()), "reason": interaction.reason,
            "error": interaction.error, "stage_errors": interaction.stage_errors}


class InteractionDetailApi(APIView):
    @extend_schema(responses=s.InteractionOutput, summary="One interaction, with its processing status")
    def get(self, request, project_slug: str, session_id: int, interaction_id: int):
        access = request_access(request, project_slug)
        session = session_for(access.project, session_id)
        interaction = session.interactions.prefetch_related("memories").filter(pk=interaction_id).first()
        if interaction is None:
            raise NotFound(f"No interaction {interaction_id} in session {session_id}.")
        return Response(interaction_rows(access, [interaction])[0])


class InteractionPromoteApi(APIView):
    @extend_schema(request=None, responses={200: s.InteractionOutput,
                                            409: OpenApiResponse(description="Not a filtered interaction")},
                   summary="Keep an interaction the filter dropped (curators; people only)")
    def post(self, request, project_slug: str, session_id: int, interaction_id: int):
        access = request_access(request, project_slug, min_role=Role.CURATOR, agents=False,
                                why="Promoting is a curation act: log in as a person with the curator role.")
        return _interaction_act(request, access, session_id, interaction_id, interaction_promote)


class InteractionRetryApi(APIView):
    @extend_schema(request=None, responses={200: s.InteractionOutput,
                                            409: OpenApiResponse(description="Nothing of it failed")},
                   summary="Run again what failed: a failed interaction, or a kept one's failed stages")
    def post(self, request, project_slug: str, session_id: int, interaction_id: int):
        access = request_access(request, project_slug, min_role=Role.CURATOR)
        return _interaction_act(request, access, session_id, interaction_id, interaction_retry)


def _interaction_act(request, access: Access, session_id: int, interaction_id: int, act) -> Response:
    """Do `act` (promote, retry) on an interaction of the session, and answer the interaction as it is now."""
    session = session_for(access.project, session_id)
    if not session.interactions.filter(pk=interaction_id).exists():
        raise NotFound(f"No interaction {interaction_id} in session {session_id}.")
    act(interaction_id=interaction_id, actor=actor_of(request))
    interaction = session.interactions.prefetch_related("memories").get(pk=interaction_id)
    return Response(interaction_rows(access, [interaction])[0])


class SessionGraphApi(APIView):
    @extend_schema(
        parameters=[OpenApiParameter("around", int, description="Only the neighbourhood of this memory."),
                    OpenApiParameter("hops", int, description="Edges from `around` (default 2, max 4)."),
                    OpenApiParameter("limit", int, description="At most this many memories (default 5000).")],
        responses=s.GraphOutput, summary="A session's memories (with layout positions), edges and entities",
    )
    def get(self, request, project_slug: str, session_id: int):
        access = request_access(request, project_slug)
        session = session_for(access.project, session_id)
        params = s.valid(s.GraphQueryInput, request.query_params)
        graph, rows = graph_view(access, session=session, around=params["around"], hops=params["hops"],
                                 limit=params["limit"])
        if params["around"] is not None and not graph.memories:
            raise NotFound(f"No memory {params['around']} in session {session_id}.")
        return Response({
            "session": s.SessionOutput(session_with_counts(session)).data, **rows,
            "last_change_id": graph.last_change_id, "truncated": graph.truncated,
            "total_memories": graph.total_memories, "around": graph.around,
        })


class SessionGhostsApi(APIView):
    @extend_schema(
        parameters=[OpenApiParameter("ids", str, required=True, description="Comma-separated memory ids (≤ 200).")],
        responses=s.GhostListOutput,
        summary="Other sessions' memories, as the session's graph draws them at the far end of an edge",
        description="For the session page when a live edge reaches a memory it does not hold: those of `ids` "
                    "that belong to another session of the project and are not forgotten (masked like the "
                    "graph's nodes for readers who may not see sensitive content).",
    )
    def get(self, request, project_slug: str, session_id: int):
        access = request_access(request, project_slug)
        session = session_for(access.project, session_id)
        params = s.valid(s.GhostQueryInput, request.query_params)
        ids = {int(i) for i in params["ids"].split(",")}
        return Response({"ghosts": ghost_rows(access, session=session, ids=ids)})


class SessionChangesApi(APIView):
    @extend_schema(
        parameters=[OpenApiParameter("after", int, description="Only changes with a larger id (default 0)."),
                    OpenApiParameter("limit", int, description="At most this many (default 500, max 1000)."),
                    OpenApiParameter("memory", int, description="Only this memory's history (and its edges')."),
                    OpenApiParameter("edge", int, description="Only this edge's history.")],
        responses=s.ChangeListOutput, summary="The session's change log after a given id, in order",
    )
    def get(self, request, project_slug: str, session_id: int):
        access = request_access(request, project_slug)
        session = session_for(access.project, session_id)
        params = s.valid(s.ChangeQueryInput, request.query_params)
        changes = change_list(session=session, after_id=params["after"], limit=params["limit"] + 1,
                              memory_id=params["memory"], edge_id=params["edge"])
        has_more = len(changes) > params["limit"]
        changes = changes[: params["limit"]]
        last = changes[-1].id if changes else params["after"]
        visible = change_page(access, changes)
        return Response({"changes": visible, "last_change_id": last, "has_more": has_more})


class RecallApi(APIView):
    @extend_schema(request=s.RecallInput, summary="Recall memories for a query, with provenance",
                   responses={200: s.RecallOutput, 404: OpenApiResponse(description="Unknown session")})
    def post(self, request, project_slug: str):
        access = request_access(request, project_slug)
        project = access.project
        data = s.valid(s.RecallInput, request.data)
        session = session_for(project, data["session_id"]) if data["session_id"] is not None else None
        default_k, default_preset = recall_defaults(project)
        query = RecallQuery(text=data["query"], k=data.get("k") or default_k, session=session,
                            include_sensitive=access.may_see_sensitive, preset=data["preset"] or default_preset,
                            params=data["params"], counts_as_access=access.is_agent)
        result = memory_recall(project=project, query=query, actor=actor_of(request))
        return Response(recall_body(access, result))



class MemoryForgetApi(APIView):
    @extend_schema(request=None, summary="Forget one memory (soft: no longer recalled or shown)",
                   description="For agents and curators. The memory stays in the database, out of recall, pages "
                               "and the graph mirror, until an admin deletes it for good (maintenance/forget, "
                               "mode hard). Forgetting one that is already forgotten changes nothing.",
                   responses={200: s.MemoryForgottenOutput, 404: OpenApiResponse(description="Unknown memory")})
    def post(self, request, project_slug: str, memory_id: int):
        project = project_for(request, project_slug, min_role=Role.CURATOR)
        forgotten = memory_forget(project=project, actor=actor_of(request), memory_id=memory_id)
        return Response({"memory_id": memory_id, "status": MemoryStatus.FORGOTTEN, "already": not forgotten})
