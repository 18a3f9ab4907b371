"""The curation API: people (never agent tokens) review and correct the graph. Reads need a member,
writes the curator role; each view validates, calls one service or selector, and serializes.
Session logins need the CSRF token for every write (DRF's SessionAuthentication)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from memory.access import Access
from memory.api.access import request_access
from memory.api.pagination import BoundedPagination, page_of
from memory.api.serializers import MemoryOutput, graph_edge, id_field, memory_label
from memory.models import Edge, EdgeStatus, Memory, MemoryKind, MemoryStatus, Relation, Role
from memory.visibility import SENSITIVE_MASK, sensitive_memory_ids

from . import entities, services
from .models import ActKind, CurationAct
from .selectors import actor_names, entity_list, memory_repeats, review_queue

TAG = ["curation"]
PEOPLE_ONLY = "Curation is for people: log in with a member's account; API tokens may not curate."
REASON = serializers.CharField(required=False, allow_blank=True, max_length=services.REASON_MAX, default="",
                               help_text="Why (kept in the curation log).")


def _people(request, slug: str, min_role: str = Role.CURATOR) -> Access:
    return request_access(request, slug, min_role=min_role, agents=False, why=PEOPLE_ONLY)


def _valid(serializer_class, data) -> dict:
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


class ActOutput(serializers.ModelSerializer):
    undone = serializers.SerializerMethodField()
    actor_name = serializers.SerializerMethodField(help_text="The person's username (the actor is user:<id>).")

    class Meta:
        model = CurationAct
        fields = ["id", "session_id", "actor", "actor_name", "kind", "object_type", "object_id", "reason",
                  "undoes_id", "undone", "created_at"]

    def get_actor_name(self, obj: CurationAct) -> str:
        return self.context.get("names", {}).get(obj.actor, obj.actor)

    def get_undone(self, obj: CurationAct) -> bool:
        return hasattr(obj, "undone_by") and obj.undone_by is not None


class ReviewEdgeOutput(serializers.Serializer):
    """An edge with the text of both memories, as the reader may see them."""

    id = serializers.IntegerField()
    session_id = serializers.IntegerField(allow_null=True)
    source_id = serializers.IntegerField()
    target_id = serializers.IntegerField()
    relation = serializers.CharField()
    weight = serializers.FloatField()
    confidence = serializers.FloatField()
    origin = serializers.CharField()
    status = serializers.CharField()
    needs_review = serializers.BooleanField()
    rationale = serializers.CharField()
    created_at = serializers.DateTimeField()
    source_label = serializers.CharField()
    target_label = serializers.CharField()
    impact = serializers.IntegerField(help_text="Stored recalls whose activation went through this edge.")


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


class MemoryUpdateInput(serializers.Serializer):
    sensitive = serializers.BooleanField(required=False)
    status = serializers.ChoiceField(choices=services.MEMORY_STATUSES, required=False)
    kind = serializers.ChoiceField(choices=MemoryKind.values, required=False)
    reason = REASON


class UndoInput(serializers.Serializer):
    reason = REASON


class EdgeActOutput(serializers.Serializer):
    act = ActOutput()
    edge = ReviewEdgeOutput(allow_null=True)


class MemoryActOutput(serializers.Serializer):
    act = ActOutput()
    memory = MemoryOutput()


class UndoOutput(serializers.Serializer):
    act = ActOutput()
    edge = ReviewEdgeOutput(allow_null=True, required=False)
    memory = MemoryOutput(required=False)
    entity = serializers.DictField(required=False, help_text="For an entity act: the entity as it is now.")


def review_rows(edges: list[Edge], access: Access) -> list[dict]:
    """Edges with both memories' labels, under the visibility rule."""
    hidden = set() if access.may_see_sensitive else sensitive_memory_ids(
        i for e in edges for i in (e.source_id, e.target_id))
    rows = []
    for edge in edges:
        row = graph_edge(edge, frozenset(hidden))
        row["session_id"] = edge.session_id
        row["impact"] = getattr(edge, "impact", 0) or 0
        for end in ("source", "target"):
            memory = getattr(edge, end)
            row[f"{end}_label"] = SENSITIVE_MASK if memory.pk in hidden else memory_label(memory.content)
        rows.append(row)
    return rows


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
        access = _people(request, project_slug, min_role=Role.VIEWER)
        params = _valid(EdgeQueryInput, request.query_params)
        paginator = BoundedPagination()
        queue = review_queue(project=access.project, session_id=params["session"], status=params["status"],
                             needs_review=params["needs_review"], relation=params["relation"], order=params["order"])
        page = paginator.paginate_queryset(queue, request, view=self)
        return paginator.get_paginated_response(review_rows(page, access))

    @extend_schema(tags=TAG, request=EdgeDrawInput, summary="Draw an edge between two memories (human, approved)",
                   responses={201: EdgeActOutput, 409: OpenApiResponse(description="That edge exists already.")})
    def post(self, request, project_slug: str):
        access = _people(request, project_slug)
        data = _valid(EdgeDrawInput, request.data)
        outcome = services.edge_draw(project=access.project, actor=access.actor, **data)
        return Response(_edge_answer(outcome, access), status=201)


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
        access = _people(request, project_slug)
        data = _valid(EdgeBulkInput, request.data)
        outcomes = services.edges_bulk_update(project=access.project, actor=access.actor, **data)
        edges = list(review_queue(project=access.project).filter(pk__in=[o.object.pk for o in outcomes]))
        return Response({"acts": ActOutput([o.act for o in outcomes], many=True).data,
                         "edges": review_rows(edges, access)})


class EdgeDetailApi(APIView):
    @extend_schema(tags=TAG, request=EdgeUpdateInput, summary="Approve, reject or relabel an edge",
                   responses={200: EdgeActOutput, 409: OpenApiResponse(description="The pair has that relation.")})
    def patch(self, request, project_slug: str, edge_id: int):
        access = _people(request, project_slug)
        data = _valid(EdgeUpdateInput, request.data)
        outcome = services.edge_update(project=access.project, actor=access.actor, edge_id=edge_id, **data)
        return Response(_edge_answer(outcome, access))

    @extend_schema(tags=TAG, request=None, responses={200: EdgeActOutput},
                   parameters=[OpenApiParameter("reason", str, description="Why (kept in the curation log).")],
                   summary="Delete an edge (reject it instead to keep the engine from inferring it again)")
    def delete(self, request, project_slug: str, edge_id: int):
        access = _people(request, project_slug)
        reason = _valid(UndoInput, {"reason": request.query_params.get("reason", "")})["reason"]
        outcome = services.edge_delete(project=access.project, actor=access.actor, edge_id=edge_id, reason=reason)
        return Response(_edge_answer(outcome, access))


class MemoryCurateApi(APIView):
    @extend_schema(tags=TAG, request=MemoryUpdateInput, responses=MemoryActOutput,
                   summary="Mark or unmark a memory sensitive, archive or restore it, or correct its kind")
    def patch(self, request, project_slug: str, memory_id: int):
        access = _people(request, project_slug)
        data = _valid(MemoryUpdateInput, request.data)
        outcome = services.memory_update(project=access.project, actor=access.actor, memory_id=memory_id, **data)
        return Response(_memory_answer(outcome, access))


class RepeatOutput(serializers.Serializer):
    id = serializers.IntegerField()
    session_id = serializers.IntegerField()
    label = serializers.CharField()
    shared = serializers.ListField(child=serializers.CharField(), help_text="The values it repeats.")


class MemoryRepeatsApi(APIView):
    @extend_schema(tags=TAG, responses=RepeatOutput(many=True),
                   summary="Other memories repeating this memory's values (to mark them sensitive too)")
    def get(self, request, project_slug: str, memory_id: int):
        access = _people(request, project_slug)  # curators: the answer quotes the values
        memory = Memory.objects.filter(project=access.project, pk=memory_id).exclude(
            status=MemoryStatus.FORGOTTEN).first()
        if memory is None:
            raise NotFound(f"No memory {memory_id} in project {access.project.slug!r}.")
        return Response([{"id": other.pk, "session_id": other.session_id, "label": memory_label(other.content),
                          "shared": shared} for other, shared in memory_repeats(memory=memory)])


class EntityFlagOutput(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    similarity = serializers.FloatField(allow_null=True)


class CuratedEntityOutput(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    type = serializers.CharField()
    aliases = serializers.ListField(child=serializers.CharField())
    mentions = serializers.IntegerField()
    possibly_same_as = EntityFlagOutput(many=True)


EntityPageOutput = page_of(CuratedEntityOutput(many=True), "EntityPageOutput")


class EntityQueryInput(serializers.Serializer):
    flagged = serializers.BooleanField(required=False, default=False)
    q = serializers.CharField(required=False, allow_blank=True, max_length=300, default="")


class EntityRenameInput(serializers.Serializer):
    name = serializers.CharField(max_length=entities.NAME_MAX)
    reason = REASON


class EntityMergeInput(serializers.Serializer):
    duplicate_id = id_field(help_text="The entity merged into this one (it is deleted).")
    reason = REASON


class EntitySplitInput(serializers.Serializer):
    alias = serializers.CharField(max_length=entities.NAME_MAX)
    reason = REASON


class EntityDismissInput(serializers.Serializer):
    other_id = id_field(help_text="The entity its possibly_same_as flag names.")
    reason = REASON


class EntityActOutput(serializers.Serializer):
    act = ActOutput()
    entity = CuratedEntityOutput()


def _entity_row(entity) -> dict:
    flags = [e for e in entity.evidence if isinstance(e, dict) and e.get("possibly_same_as")]
    return {"id": entity.pk, "name": entity.name, "type": entity.type, "aliases": list(entity.aliases),
            "mentions": getattr(entity, "mention_count", None) or entity.mentions.count(),
            "possibly_same_as": [{"id": f["possibly_same_as"], "name": f.get("name", ""),
                                  "similarity": f.get("similarity")} for f in flags]}


class EntityListApi(APIView):
    @extend_schema(tags=TAG, responses=EntityPageOutput,
                   summary="The project's entities (flagged: possible duplicates)",
                   parameters=[OpenApiParameter("flagged", bool), OpenApiParameter("q", str),
                               OpenApiParameter("limit", int), OpenApiParameter("offset", int)])
    def get(self, request, project_slug: str):
        access = _people(request, project_slug, min_role=Role.VIEWER)
        params = _valid(EntityQueryInput, request.query_params)
        found = entity_list(project=access.project, flagged=params["flagged"], query=params["q"],
                            include_sensitive=access.may_see_sensitive)
        paginator = BoundedPagination()
        page = paginator.paginate_queryset(found, request, view=self)
        return paginator.get_paginated_response([_entity_row(e) for e in page])


class EntityDetailApi(APIView):
    @extend_schema(tags=TAG, request=EntityRenameInput, summary="Rename an entity (the old name stays an alias)",
                   responses={200: EntityActOutput, 409: OpenApiResponse(description="That name is taken: merge.")})
    def patch(self, request, project_slug: str, entity_id: int):
        return _entity_act(request, project_slug, EntityRenameInput, entities.entity_rename, entity_id=entity_id)


class EntityMergeApi(APIView):
    @extend_schema(tags=TAG, request=EntityMergeInput, responses=EntityActOutput,
                   summary="Merge another entity into this one (mentions and names follow)")
    def post(self, request, project_slug: str, entity_id: int):
        return _entity_act(request, project_slug, EntityMergeInput, entities.entity_merge, survivor_id=entity_id)


class EntitySplitApi(APIView):
    @extend_schema(tags=TAG, request=EntitySplitInput, responses=EntityActOutput,
                   summary="Split a wrongly merged alias off into its own entity")
    def post(self, request, project_slug: str, entity_id: int):
        return _entity_act(request, project_slug, EntitySplitInput, entities.entity_split, entity_id=entity_id)


class EntityDismissApi(APIView):
    @extend_schema(tags=TAG, request=EntityDismissInput, responses=EntityActOutput,
                   summary="Settle a possibly_same_as flag: the two entities are different")
    def post(self, request, project_slug: str, entity_id: int):
        return _entity_act(request, project_slug, EntityDismissInput, entities.entity_flag_dismiss,
                           entity_id=entity_id)


def _entity_act(request, slug: str, input_class, service, **ids) -> Response:
    """A curator's act on an entity: validate the body, call the service, answer the act and the entity."""
    access = _people(request, slug)
    data = _valid(input_class, request.data)
    outcome = service(project=access.project, actor=access.actor, **ids, **data)
    return Response({"act": ActOutput(outcome.act).data, "entity": _entity_row(outcome.object)})


ActPageOutput = page_of(ActOutput(many=True), "ActPageOutput")


class ActListApi(APIView):
    @extend_schema(tags=TAG, responses=ActPageOutput, summary="The curation log, newest first",
                   parameters=[OpenApiParameter("session", int), OpenApiParameter("actor", str),
                               OpenApiParameter("kind", str, enum=ActKind.values),
                               OpenApiParameter("limit", int), OpenApiParameter("offset", int)])
    def get(self, request, project_slug: str):
        access = _people(request, project_slug, min_role=Role.VIEWER)
        params = _valid(ActQueryInput, request.query_params)
        acts = CurationAct.objects.filter(project=access.project).select_related("undone_by").order_by("-id")
        for name, field in (("session", "session_id"), ("actor", "actor"), ("kind", "kind")):
            if params.get(name) not in (None, ""):
                acts = acts.filter(**{field: params[name]})
        paginator = BoundedPagination()
        page = paginator.paginate_queryset(acts, request, view=self)
        return paginator.get_paginated_response(ActOutput(page, many=True, context={"names": actor_names(page)}).data)


class ActQueryInput(serializers.Serializer):
    session = id_field(required=False, allow_null=True, default=None)
    actor = serializers.CharField(required=False, allow_blank=True, max_length=120, default="")
    kind = serializers.ChoiceField(choices=ActKind.values, required=False, allow_null=True, default=None)


class ActUndoApi(APIView):
    @extend_schema(tags=TAG, request=UndoInput, summary="Undo a curation act (recorded as an act itself)",
                   responses={200: UndoOutput, 409: OpenApiResponse(description="Undone already, an undo, or the "
                                                                               "object changed since.")})
    def post(self, request, project_slug: str, act_id: int):
        access = _people(request, project_slug)
        data = _valid(UndoInput, request.data)
        outcome = services.act_undo(project=access.project, actor=access.actor, act_id=act_id, **data)
        if outcome.act.object_type == "memory":
            return Response(_memory_answer(outcome, access))
        if outcome.act.object_type == "entity":
            return Response({"act": ActOutput(outcome.act).data, "entity": _entity_row(outcome.object)})
        return Response(_edge_answer(outcome, access))


def _edge_answer(outcome: services.Outcome, access: Access) -> dict:
    edge = outcome.object
    if edge is not None:
        edge = review_queue(project=access.project).get(pk=edge.pk)
    return {"act": ActOutput(outcome.act).data, "edge": review_rows([edge], access)[0] if edge else None}


def _memory_answer(outcome: services.Outcome, access: Access) -> dict:
    memory = outcome.object
    return {"act": ActOutput(outcome.act).data,
            "memory": MemoryOutput(memory, context={"show_sensitive": access.may_see_sensitive}).data}
