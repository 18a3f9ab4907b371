"""The store's endpoints (engine/store): LangGraph's BaseStore operations for agents and people.

Each is a POST with a JSON body, because a namespace is a list of free labels that a JSON list carries
without any escaping rules of paths or query strings. Reads (get, search, namespaces) are for any member
and the project's token; writes (put, delete) for curators+ and the token, as for interactions. Values
whose memory is sensitive leave masked for readers who may not see it (memory/visibility.py).
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from contextweaver_site.http.access import request_access

from ..engine.store import Found, item_delete, item_get, item_put, items_search, namespaces_list
from ..engine.store.items import MAX_KEY_CHARS, MAX_LABEL_CHARS, MAX_LABELS
from ..engine.store.query import MAX_LIMIT, MAX_OFFSET
from ..engine.use import MAX_USED
from ..models import Role
from ..reads.store import item_rows
from .authentication import actor_of
from .serializers import id_field, valid

TRUE = {"1", "true", "yes"}
WAIT_PARAM = OpenApiParameter("wait", bool, description="Process the value's interaction before answering, so a "
                                                        "search right after finds it (default: the worker does).")


def namespace_field(*, help_text: str, optional: bool = False) -> serializers.ListField:
    """A namespace (at least one label) or, `optional`, a pattern that may be empty and left out."""
    label = serializers.CharField(max_length=MAX_LABEL_CHARS, trim_whitespace=False)
    extra = {"min_length": 0, "required": False, "default": list} if optional else {"min_length": 1}
    return serializers.ListField(child=label, max_length=MAX_LABELS, help_text=help_text, **extra)


def key_field() -> serializers.CharField:
    return serializers.CharField(max_length=MAX_KEY_CHARS, allow_blank=True, trim_whitespace=False)


@extend_schema_field({"oneOf": [{"type": "array", "items": {"type": "string"}, "maxItems": 32},
                                {"type": "boolean", "enum": [False]}], "nullable": True})
class IndexField(serializers.JSONField):
    """LangGraph's `index`: field paths to remember, false (not searchable by query) or null (the whole value)."""

    def to_internal_value(self, data):
        if data is None or data is False:
            return data
        if isinstance(data, list) and all(isinstance(path, str) for path in data):
            return data
        raise serializers.ValidationError("A list of field paths, false or null.")


class AddressInput(serializers.Serializer):
    namespace = namespace_field(help_text="The item's namespace, e.g. [\"users\", \"alice\"].")
    key = key_field()


class PutInput(AddressInput):
    value = serializers.DictField(help_text="Any JSON object; get returns it exactly.")
    index = IndexField(required=False, allow_null=True, default=None,
                       help_text="Field paths whose text goes into the memory graph (\"a.b\", \"items[*].text\"), "
                                 "false for none, null for the whole value.")
    recall_id = id_field(required=False, allow_null=True, default=None,
                         help_text="The search (its items' recall_id) this value was written from: its memory gets "
                                   "edges of origin use from what that recall returned.")
    used = serializers.ListField(child=id_field(), required=False, default=list, max_length=MAX_USED,
                                 help_text="The memory ids the value was written from, when known.")


class SearchInput(serializers.Serializer):
    namespace_prefix = namespace_field(help_text="Search under this prefix ([] for everything).", optional=True)
    query = serializers.CharField(required=False, allow_null=True, allow_blank=True, default=None, max_length=4000,
                                  help_text="Recall by this text; omit to list items, newest first.")
    filter = serializers.DictField(required=False, allow_null=True, default=None,
                                   help_text='Value fields to match: {"field": v} or {"field": {"$gt": 3}} '
                                             "($eq, $ne, $gt, $gte, $lt, $lte).")
    limit = serializers.IntegerField(required=False, default=10, min_value=1, max_value=MAX_LIMIT)
    offset = serializers.IntegerField(required=False, default=0, min_value=0, max_value=MAX_OFFSET)


class NamespacesInput(serializers.Serializer):
    prefix = namespace_field(help_text="Namespaces starting so; \"*\" matches any label.", optional=True)
    suffix = namespace_field(help_text="Namespaces ending so; \"*\" matches any label.", optional=True)
    max_depth = serializers.IntegerField(required=False, allow_null=True, default=None, min_value=1, max_value=1000,
                                         help_text="Cut namespaces to this many labels.")
    limit = serializers.IntegerField(required=False, default=100, min_value=1, max_value=MAX_LIMIT)
    offset = serializers.IntegerField(required=False, default=0, min_value=0, max_value=MAX_OFFSET)


class ItemOutput(serializers.Serializer):
    namespace = serializers.ListField(child=serializers.CharField())
    key = serializers.CharField(allow_blank=True)
    value = serializers.DictField(help_text="Masked (every value \"[sensitive]\") for readers who may not see it.")
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    score = serializers.FloatField(allow_null=True, help_text="The recall's score (searches with a query).")
    sensitive = serializers.BooleanField(help_text="A curator marked the memory of this value sensitive.")
    session_id = serializers.IntegerField(help_text="The namespace's session (its memories in the web app).")
    interaction_id = serializers.IntegerField(allow_null=True, help_text="The interaction of the latest put; null "
                                                                         "when it was not indexed.")
    recall_id = serializers.IntegerField(allow_null=True, help_text="The recall a search by query ran (null "
                                                                    "otherwise): give it to a put written from it.")


class GetOutput(serializers.Serializer):
    item = ItemOutput(allow_null=True, help_text="null when there is no such item (not an error).")


class PutOutput(serializers.Serializer):
    item = ItemOutput()
    created = serializers.BooleanField()
    forgotten_memory_ids = serializers.ListField(child=serializers.IntegerField(),
                                                 help_text="Memories of the replaced value, forgotten softly.")


class DeleteOutput(serializers.Serializer):
    deleted = serializers.BooleanField(help_text="False when there was no such item.")
    forgotten_memory_ids = serializers.ListField(child=serializers.IntegerField())


class SearchOutput(serializers.Serializer):
    items = ItemOutput(many=True)


class NamespacesOutput(serializers.Serializer):
    namespaces = serializers.ListField(child=serializers.ListField(child=serializers.CharField()))


class StoreGetApi(APIView):
    @extend_schema(request=AddressInput, responses=GetOutput, summary="One store item, or null")
    def post(self, request, project_slug: str):
        access = request_access(request, project_slug)
        data = valid(AddressInput, request.data)
        item = item_get(access.project, data["namespace"], data["key"])
        body = {"item": item_rows(access, [Found(item)])[0] if item else None}
        return Response(GetOutput(body).data)


class StorePutApi(APIView):
    @extend_schema(request=PutInput, parameters=[WAIT_PARAM], responses=PutOutput,
                   summary="Put a store item (its text goes into the memory graph; the value it replaces is "
                           "forgotten softly)")
    def post(self, request, project_slug: str):
        access = request_access(request, project_slug, min_role=Role.CURATOR)
        data = valid(PutInput, request.data)
        result = item_put(project=access.project, namespace=data["namespace"], key=data["key"], value=data["value"],
                          index=data["index"], actor=actor_of(request),
                          wait=request.query_params.get("wait", "").lower() in TRUE, recall_id=data["recall_id"],
                          used=tuple(data["used"]))
        return Response(PutOutput({"item": item_rows(access, [Found(result.item)])[0], "created": result.created,
                                   "forgotten_memory_ids": result.forgotten_memory_ids}).data)


class StoreDeleteApi(APIView):
    @extend_schema(request=AddressInput, responses=DeleteOutput,
                   summary="Delete a store item and forget its memories softly (no such item: deleted false)")
    def post(self, request, project_slug: str):
        access = request_access(request, project_slug, min_role=Role.CURATOR)
        data = valid(AddressInput, request.data)
        result = item_delete(project=access.project, namespace=data["namespace"], key=data["key"],
                             actor=actor_of(request))
        return Response(DeleteOutput({"deleted": result is not None,
                                      "forgotten_memory_ids": result.forgotten_memory_ids if result else []}).data)


class StoreSearchApi(APIView):
    @extend_schema(request=SearchInput, responses=SearchOutput,
                   summary="Search store items under a namespace prefix: recall with a query, else newest first")
    def post(self, request, project_slug: str):
        access = request_access(request, project_slug)
        data = valid(SearchInput, request.data)
        found = items_search(access, data["namespace_prefix"], query=data["query"], conditions=data["filter"],
                             limit=data["limit"], offset=data["offset"])
        return Response(SearchOutput({"items": item_rows(access, found)}).data)


class StoreNamespacesApi(APIView):
    @extend_schema(request=NamespacesInput, responses=NamespacesOutput, summary="The store's namespaces")
    def post(self, request, project_slug: str):
        access = request_access(request, project_slug)
        data = valid(NamespacesInput, request.data)
        namespaces = namespaces_list(access.project.pk, prefix=data["prefix"], suffix=data["suffix"],
                                     max_depth=data["max_depth"], limit=data["limit"], offset=data["offset"])
        return Response(NamespacesOutput({"namespaces": namespaces}).data)
