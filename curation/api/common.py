"""What every curation view shares: the people-only access and the answers' shapes."""

from __future__ import annotations

from rest_framework import serializers

from contextweaver_site.http.access import request_access
from memory.access import Access
from memory.api.serializers import EdgeOutput, MemoryOutput
from memory.models import Role
from memory.reads.review import review_rows
from memory.reads.rows import memory_rows

from .. import services
from ..models import CurationAct
from ..selectors import review_queue

TAG = ["curation"]
PEOPLE_ONLY = "Curation is for people: log in with a member's account; API tokens may not curate."
REASON = serializers.CharField(required=False, allow_blank=True, max_length=services.REASON_MAX, default="",
                               help_text="Why (kept in the curation log).")


def people(request, slug: str, min_role: str = Role.CURATOR) -> Access:
    return request_access(request, slug, min_role=min_role, agents=False, why=PEOPLE_ONLY)


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


class ReviewEdgeOutput(EdgeOutput):
    """An edge (the graph's shape) with its session, the text of both memories as the reader may see them,
    and how many stored recalls it carried activation in."""

    session_id = serializers.IntegerField(allow_null=True)
    source_label = serializers.CharField()
    target_label = serializers.CharField()
    impact = serializers.IntegerField(help_text="Stored recalls whose activation went through this edge.")

    class Meta(EdgeOutput.Meta):
        fields = [*EdgeOutput.Meta.fields, "session_id", "source_label", "target_label", "impact"]


class UndoInput(serializers.Serializer):
    reason = REASON


class EdgeActOutput(serializers.Serializer):
    act = ActOutput()
    edge = ReviewEdgeOutput(allow_null=True)


class MemoryActOutput(serializers.Serializer):
    act = ActOutput()
    memory = MemoryOutput()


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


def entity_row(entity) -> dict:
    flags = [e for e in entity.evidence if isinstance(e, dict) and e.get("possibly_same_as")]
    return {"id": entity.pk, "name": entity.name, "type": entity.type, "aliases": list(entity.aliases),
            "mentions": getattr(entity, "mention_count", None) or entity.mentions.count(),
            "possibly_same_as": [{"id": f["possibly_same_as"], "name": f.get("name", ""),
                                  "similarity": f.get("similarity")} for f in flags]}


def edge_answer(outcome: services.Outcome, access: Access) -> dict:
    edge = outcome.object
    if edge is not None:
        edge = review_queue(project=access.project).get(pk=edge.pk)
    return {"act": ActOutput(outcome.act).data, "edge": review_rows(access, [edge])[0] if edge else None}


def memory_answer(outcome: services.Outcome, access: Access) -> dict:
    memory = outcome.object
    return {"act": ActOutput(outcome.act).data,
            "memory": memory_rows(access, [memory])[0]}


def entity_answer(outcome: services.Outcome) -> dict:
    return {"act": ActOutput(outcome.act).data, "entity": entity_row(outcome.object)}
