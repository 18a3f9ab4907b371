"""Input validation and output shapes of the agent API."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from contextweaver_site.http.pagination import page_of
from contextweaver_site.http.validation import IdField, id_field, valid, valid_serializer  # noqa: F401  (memory/api views use s.valid)

from ..conf import memory_settings
from ..engine.ingest import EXTERNAL_ID_MAX, IDEMPOTENCY_KEY_MAX, metadata_problem
from ..engine.links import LINK_RELATIONS, MAX_LINKS
from ..engine.recall.config import RECALL_PRESETS
from ..engine.store.items import SESSION_ID_PREFIX as STORE_SESSION_PREFIX
from ..engine.use import MAX_USED
from ..models import MAX_ID, AgentSession, Edge, Entity, GraphChange, Interaction, InteractionKind, Memory, Relation
from ..reads.rows import memory_label


class SchemaOnly:
    """Declares an answer's shape for the OpenAPI schema. Its rows come from memory/reads, masked for the
    caller: serializing a model through it would skip the visibility rule, so it refuses."""

    def to_representation(self, instance):
        raise TypeError(f"{type(self).__name__} documents a shape: build its rows with memory.reads")


def metadata_field() -> serializers.DictField:
    return serializers.DictField(required=False, default=dict, validators=[check_metadata],
                                 help_text="Any JSON object, at most MAX_METADATA_BYTES (16 KB) as JSON and "
                                           "MAX_METADATA_DEPTH (8) levels deep.")


def check_metadata(value: dict) -> dict:
    problem = metadata_problem(value)
    if problem:
        raise serializers.ValidationError(problem)
    return value


class SessionInput(serializers.Serializer):
    title = serializers.CharField(max_length=300, required=False, allow_blank=True, default="")
    task = serializers.CharField(required=False, allow_blank=True, default="", max_length=8000)
    external_id = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    metadata = metadata_field()
    subject = serializers.CharField(
        max_length=200, required=False, allow_blank=True, default="",
        help_text="Whom the session is for (a person's name or your user id). A value stated in it replaces "
                  "values of another session only when both sessions name the same subject (or both name the "
                  "person); otherwise such a replacement is proposed for review. Empty: not said.")

    def validate_external_id(self, value: str) -> str:
        if value.startswith(STORE_SESSION_PREFIX):  # the store's sessions (engine/store/items.py) are found so
            raise serializers.ValidationError(f"External ids starting with {STORE_SESSION_PREFIX!r} are reserved.")
        return value


class SessionOutput(serializers.ModelSerializer):
    """A session with its counts: give it a session from selectors.session_list / session_with_counts."""

    interaction_count = serializers.IntegerField(read_only=True)
    memory_count = serializers.IntegerField(read_only=True)
    filtered_count = serializers.IntegerField(read_only=True, help_text="Interactions the selective filter dropped.")
    failed_count = serializers.IntegerField(
        read_only=True, help_text="Interactions that failed, or were kept with failed stages (both are retried).")
    edge_count = serializers.IntegerField(read_only=True)
    proposal_count = serializers.IntegerField(read_only=True,
                                              help_text="Inferred edges waiting for review (needs_review).")
    last_change_at = serializers.DateTimeField(read_only=True, allow_null=True)

    class Meta:
        model = AgentSession
        fields = ["id", "external_id", "title", "task", "subject", "metadata", "created_at", "last_activity_at",
                  "interaction_count", "memory_count", "filtered_count", "failed_count", "edge_count",
                  "proposal_count", "last_change_at"]


class LinkInput(serializers.Serializer):
    """One earlier interaction this one depends on, named by exactly one of id, idempotency_key, external_id."""

    id = IdField(required=False, min_value=1, help_text="Our id of an interaction of this project.")
    idempotency_key = serializers.CharField(max_length=IDEMPOTENCY_KEY_MAX, required=False, trim_whitespace=False,
                                            help_text="The idempotency key of an interaction of this session.")
    external_id = serializers.CharField(max_length=EXTERNAL_ID_MAX, required=False, trim_whitespace=False,
                                        help_text="The external id of an interaction of this session; it may "
                                                  "arrive later (the link waits for it).")
    relation = serializers.ChoiceField(choices=LINK_RELATIONS, required=False, default=Relation.CAUSAL,
                                       help_text="How this interaction depends on that one (default causal).")

    def validate(self, data: dict) -> dict:
        named = [name for name in ("id", "idempotency_key", "external_id") if name in data]
        if len(named) != 1:
            raise serializers.ValidationError("Name the interaction by exactly one of id, idempotency_key, "
                                              "external_id.")
        return data


class InteractionInput(serializers.Serializer):
    kind = serializers.ChoiceField(choices=InteractionKind.choices)
    content = serializers.CharField(trim_whitespace=False)
    metadata = metadata_field()
    occurred_at = serializers.DateTimeField(required=False, allow_null=True, default=None)
    idempotency_key = serializers.CharField(
        max_length=IDEMPOTENCY_KEY_MAX, required=False, allow_null=True, default=None, trim_whitespace=False,
        help_text="A retry with the same key and the same interaction answers 200 with the stored one; "
                  "the same key with different content is a 409. Kept exactly as sent.")
    external_id = serializers.CharField(
        max_length=EXTERNAL_ID_MAX, required=False, allow_blank=True, default="", trim_whitespace=False,
        help_text="Your framework's id for it (message, tool-call or span id), unique in the session: links "
                  "may name it, and a resend with the same external id is the same interaction.")
    links = LinkInput(many=True, required=False, default=list, max_length=MAX_LINKS,
                      help_text=f"Earlier interactions it depends on (at most {MAX_LINKS}): each becomes an edge "
                                "of origin `agent`, confidence 1, once both ends are processed.")
    recall_id = IdField(required=False, allow_null=True, default=None, min_value=1,
                        help_text="The recall (its `recall_id`) this interaction acted on: its memory gets edges "
                                  "of origin `use` from what that recall returned.")
    used = serializers.ListField(child=IdField(min_value=1), required=False, default=list, max_length=MAX_USED,
                                 help_text="The memory ids it acted on, when you know them: edges from each at "
                                           "confidence 1 (otherwise the recall's top results, weighted by rank).")

    def validate_content(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError("Content must not be empty.")
        size = len(value.encode())
        if size > memory_settings.MAX_CONTENT_BYTES:
            raise serializers.ValidationError(
                f"Content is {size} bytes; the limit is {memory_settings.MAX_CONTENT_BYTES} bytes."
            )
        return value


class InteractionBatchInput(serializers.Serializer):
    interactions = InteractionInput(many=True, allow_empty=False)

    def validate_interactions(self, value: list) -> list:
        if len(value) > memory_settings.MAX_BATCH:
            raise serializers.ValidationError(f"At most {memory_settings.MAX_BATCH} interactions per request.")
        return value


class LinkOutput(serializers.Serializer):
    by = serializers.ChoiceField(choices=["id", "idempotency_key", "external_id"])
    ref = serializers.CharField()
    relation = serializers.CharField()
    parent_id = serializers.IntegerField(allow_null=True, help_text="The interaction it names, once received.")
    status = serializers.ChoiceField(
        choices=["waiting", "resolved", "no_memory"],
        help_text="waiting: its parent has not arrived or an end is unprocessed; resolved: became `edge_ids`; "
                  "no_memory: an end kept no memory, and nothing the parent depends on did either.")
    edge_ids = serializers.ListField(child=serializers.IntegerField())
    note = serializers.CharField()


class InteractionOutput(SchemaOnly, serializers.ModelSerializer):
    """Rows: reads.rows.interaction_rows."""

    memory_ids = serializers.ListField(child=serializers.IntegerField())
    attempts = serializers.IntegerField(read_only=True, help_text="How many times processing it failed.")
    recall_id = serializers.IntegerField(allow_null=True)
    used = serializers.ListField(child=serializers.IntegerField())
    links = LinkOutput(many=True, help_text="The links it declared, each with what became of it.")

    class Meta:
        model = Interaction
        fields = ["id", "session_id", "kind", "content", "metadata", "occurred_at", "received_at",
                  "idempotency_key", "external_id", "recall_id", "used", "links", "status", "scores", "reason",
                  "error", "stage_errors", "attempts", "memory_ids"]



InteractionPageOutput = page_of(InteractionOutput(many=True), "InteractionPageOutput",
                                "One page of a session's interactions (limit/offset pagination).")


class AcceptedOutput(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    duplicate = serializers.BooleanField(help_text="True when the idempotency key matched an earlier request.")
    memory_ids = serializers.ListField(child=serializers.IntegerField())
    reason = serializers.CharField()
    error = serializers.CharField(help_text="Why processing failed (status failed): it is retried; empty otherwise.")
    stage_errors = serializers.DictField(
        child=serializers.CharField(),
        help_text="Stages that failed while the memory was kept without them ({stage: reason}); retried later.")


class AcceptedBatchOutput(serializers.Serializer):
    interactions = AcceptedOutput(many=True)



class ProvenanceOutput(serializers.ModelSerializer):
    interaction_id = serializers.IntegerField(source="id")

    class Meta:
        model = Interaction
        fields = ["interaction_id", "kind", "metadata", "occurred_at", "idempotency_key"]


class MemoryOutput(SchemaOnly, serializers.ModelSerializer):
    """Rows: reads.rows.memory_rows (a sensitive memory's text, derived dimensions and sources' metadata
    masked for who may not see it)."""

    sources = ProvenanceOutput(many=True, read_only=True, source="provenance")

    class Meta:
        model = Memory
        fields = ["id", "session_id", "content", "kind", "dimensions", "importance", "relevance", "novelty",
                  "status", "sensitive", "at_risk", "access_count", "occurred_at", "created_at", "sources"]
        extra_kwargs = {"at_risk": {"help_text": "How much a change to something it depends on puts it at risk: "
                                                 "0 none, 1 a direct dependent, halved with each further hop."}}


class RiskOutput(serializers.Serializer):
    """Why a memory is at risk: reads.risk.risk_rows."""

    parent_id = serializers.IntegerField(help_text="The memory it depends on that changed.")
    parent_label = serializers.CharField(allow_null=True)
    parent_status = serializers.CharField()
    change = serializers.ChoiceField(choices=["superseded", "corrected", "archived", "forgotten"])
    before = serializers.CharField(help_text="The changed values as they were (empty when no value is known).")
    after = serializers.CharField(help_text="The values now.")
    replaced_by_id = serializers.IntegerField(allow_null=True)
    replaced_by_label = serializers.CharField(allow_null=True)
    relations = serializers.ListField(child=serializers.CharField(), help_text="The edges' relations, parent first.")
    path = serializers.ListField(child=serializers.IntegerField(), help_text="The edge ids, parent first.")
    hops = serializers.IntegerField()
    risk = serializers.FloatField()
    since = serializers.DateTimeField()


class EdgeOutput(SchemaOnly, serializers.ModelSerializer):
    """Rows: reads.rows.edge_rows (the rationale masked when it touches a memory the reader may not see)."""

    class Meta:
        model = Edge
        fields = ["id", "source_id", "target_id", "relation", "weight", "confidence", "origin", "status",
                  "needs_review", "rationale", "created_at"]


class EntityOutput(serializers.ModelSerializer):
    class Meta:
        model = Entity
        fields = ["id", "name", "type", "aliases"]


class PositionOutput(serializers.Serializer):
    x = serializers.FloatField()
    y = serializers.FloatField()


class GraphMemoryOutput(MemoryOutput):
    """A graph node: the memory plus what the browser draws with (label, stored force position). Rows:
    reads.graph.graph_view (masked like a memory, its label and entities too).
    """

    label = serializers.SerializerMethodField(help_text="Short text for the node (masked if sensitive).")
    intent = serializers.SerializerMethodField()
    entities = serializers.SerializerMethodField(help_text="Names of the entities it mentions.")
    position = serializers.SerializerMethodField(help_text="Server force-layout position (layout units).")

    class Meta(MemoryOutput.Meta):
        fields = [*MemoryOutput.Meta.fields, "label", "intent", "entities", "position"]

    def get_label(self, obj: Memory) -> str:
        return memory_label(obj.content)

    def get_intent(self, obj: Memory) -> str:
        return (obj.dimensions or {}).get("intent") or ""

    def get_entities(self, obj: Memory) -> list[str]:
        return self.context.get("entity_names", {}).get(obj.pk, [])

    @extend_schema_field(PositionOutput(allow_null=True))
    def get_position(self, obj: Memory) -> dict | None:
        spot = self.context.get("positions", {}).get(obj.pk)
        return {"x": spot[0], "y": spot[1]} if spot else None


class GraphGhostOutput(SchemaOnly, serializers.Serializer):
    """A memory of another session at the far end of an edge of this session's graph (a supersede across
    sessions, a link a person drew): drawn faded, never one of this session's memories. Masked for readers who
    may not see sensitive content, by the same rule as a node (memory/visibility.py)."""

    id = serializers.IntegerField()
    session_id = serializers.IntegerField(help_text="The session it belongs to.")
    session_title = serializers.CharField(help_text="That session's title (may be empty).")
    kind = serializers.CharField()
    status = serializers.CharField()
    sensitive = serializers.BooleanField()
    occurred_at = serializers.DateTimeField()
    content = serializers.CharField(help_text="Its text ([sensitive] when masked).")
    label = serializers.CharField(help_text="Short text for the node (masked if sensitive).")


class GhostListOutput(serializers.Serializer):
    ghosts = GraphGhostOutput(many=True)


class GhostQueryInput(serializers.Serializer):
    ids = serializers.RegexField(r"^\d{1,18}(,\d{1,18}){0,199}$",
                                 help_text="Comma-separated memory ids (at most 200).")


class GraphOutput(serializers.Serializer):
    session = SessionOutput()
    memories = GraphMemoryOutput(many=True)
    edges = EdgeOutput(many=True, help_text="Between the memories sent, or from one of them to a ghost.")
    ghosts = GraphGhostOutput(many=True, help_text="Other sessions' memories the edges reach (not forgotten).")
    entities = EntityOutput(many=True)
    last_change_id = serializers.IntegerField(help_text="Read before the graph: catch up from here.")
    truncated = serializers.BooleanField(help_text="True when not every memory of the session was sent.")
    total_memories = serializers.IntegerField(help_text="Memories of the session (forgotten ones excluded).")
    around = serializers.IntegerField(allow_null=True, help_text="The memory the neighbourhood was taken around.")


class GraphQueryInput(serializers.Serializer):
    around = id_field(required=False, allow_null=True, default=None,
                      help_text="Send only the neighbourhood of this memory.")
    hops = serializers.IntegerField(min_value=0, max_value=4, required=False, default=2)
    limit = serializers.IntegerField(min_value=1, max_value=10000, required=False, allow_null=True, default=None,
                                     help_text="At most this many memories (default 5000).")


class ChangeOutput(SchemaOnly, serializers.ModelSerializer):
    """Rows: reads.changes.change_page (each snapshot masked for the reader)."""

    class Meta:
        model = GraphChange
        fields = ["id", "session_id", "actor", "op", "object_type", "object_id", "before", "after", "created_at"]


class ChangeQueryInput(serializers.Serializer):
    after = serializers.IntegerField(min_value=0, max_value=MAX_ID, required=False, default=0)
    limit = serializers.IntegerField(min_value=1, max_value=1000, required=False, default=500)
    memory = id_field(required=False, allow_null=True, default=None)
    edge = id_field(required=False, allow_null=True, default=None)

    def validate(self, data: dict) -> dict:
        if data["memory"] is not None and data["edge"] is not None:
            raise serializers.ValidationError({"edge": ["Ask for one memory's or one edge's history, not both."]})
        return data


class ChangeListOutput(serializers.Serializer):
    changes = ChangeOutput(many=True)
    last_change_id = serializers.IntegerField()
    has_more = serializers.BooleanField()


class RecallInput(serializers.Serializer):
    query = serializers.CharField(max_length=4000)
    session_id = id_field(required=False, allow_null=True, default=None,
                          help_text="Limit recall to one session; omit for the whole project.")
    k = serializers.IntegerField(required=False, min_value=1)
    preset = serializers.ChoiceField(choices=list(RECALL_PRESETS), required=False, default=None,
                                     help_text="vector: kNN only; hybrid: vector + full-text + entities (RRF); "
                                               "ripple: hybrid seeds + spreading activation along the graph. "
                                               "Default: the project's (ripple unless its settings say otherwise).")
    params = serializers.DictField(required=False, default=dict,
                                   help_text="Overrides of the preset, e.g. {\"max_hops\": 3, \"decay\": 0.7, "
                                             "\"aggregation\": \"max\", \"statuses\": [\"active\", \"superseded\"]}.")

    def validate_k(self, value: int) -> int:
        if value > memory_settings.MAX_RECALL_K:
            raise serializers.ValidationError(f"k must be at most {memory_settings.MAX_RECALL_K}.")
        return value


class RecalledOutput(serializers.Serializer):
    rank = serializers.IntegerField()
    score = serializers.FloatField()
    components = serializers.DictField(child=serializers.FloatField())
    path = serializers.ListField(child=serializers.DictField(), help_text="How activation reached this memory.")
    memory = MemoryOutput()
    at_risk = RiskOutput(many=True, help_text="Why it may be out of date: what it depends on changed (empty: "
                                              "nothing did). The context tells the current version beside it.")


class RecallOutput(serializers.Serializer):
    recall_id = serializers.IntegerField(source="trace.pk")
    query = serializers.CharField(source="trace.query")
    params = serializers.DictField(source="trace.params")
    timings = serializers.DictField(source="trace.timings")
    memories = RecalledOutput(many=True, source="items")
    edges = EdgeOutput(many=True, help_text="The subgraph linking the recalled memories.")
    context = serializers.CharField(help_text="The recalled memories told in dependency order, links named.")
    narrative = serializers.CharField(help_text="With params.narrate and an LLM configured: the LLM's account of "
                                                "the context (never given sensitive memories); otherwise empty.")


class MemoryForgottenOutput(serializers.Serializer):
    memory_id = serializers.IntegerField()
    status = serializers.CharField(help_text="Always `forgotten`.")
    already = serializers.BooleanField(help_text="True when it had been forgotten before this request.")
