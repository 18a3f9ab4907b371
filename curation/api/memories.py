"""Memory acts (sensitive, archive / restore, kind) and the memories repeating a sensitive one's values."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from contextweaver_site.http.validation import valid
from memory.models import Memory, MemoryKind, MemoryStatus
from memory.reads.rows import memory_label

from .. import services
from ..selectors import memory_repeats
from .common import REASON, TAG, MemoryActOutput, memory_answer, people


class MemoryUpdateInput(serializers.Serializer):
    sensitive = serializers.BooleanField(required=False)
    status = serializers.ChoiceField(choices=services.MEMORY_STATUSES, required=False)
    kind = serializers.ChoiceField(choices=MemoryKind.values, required=False)
    still_valid = serializers.BooleanField(
        required=False, help_text="true: a person checked an at-risk memory and it still holds; its flag is settled "
                                  "(undoable). Archive it with status, or draw a supersedes edge to its replacement.")
    reason = REASON


class MemoryCurateApi(APIView):
    @extend_schema(tags=TAG, request=MemoryUpdateInput, responses=MemoryActOutput,
                   summary="Mark or unmark a memory sensitive, archive or restore it, correct its kind, or settle "
                           "an at-risk flag (still_valid)")
    def patch(self, request, project_slug: str, memory_id: int):
        access = people(request, project_slug)
        data = valid(MemoryUpdateInput, request.data)
        outcome = services.memory_update(project=access.project, actor=access.actor, memory_id=memory_id, **data)
        return Response(memory_answer(outcome, access))


class RepeatOutput(serializers.Serializer):
    id = serializers.IntegerField()
    session_id = serializers.IntegerField()
    label = serializers.CharField()
    shared = serializers.ListField(child=serializers.CharField(), help_text="The values it repeats.")


class MemoryRepeatsApi(APIView):
    @extend_schema(tags=TAG, responses=RepeatOutput(many=True),
                   summary="Other memories repeating this memory's values (to mark them sensitive too)")
    def get(self, request, project_slug: str, memory_id: int):
        access = people(request, project_slug)  # curators: the answer quotes the values
        memory = Memory.objects.filter(project=access.project, pk=memory_id).exclude(
            status=MemoryStatus.FORGOTTEN).first()
        if memory is None:
            raise NotFound(f"No memory {memory_id} in project {access.project.slug!r}.")
        return Response([{"id": other.pk, "session_id": other.session_id, "label": memory_label(other.content),
                          "shared": shared} for other, shared in memory_repeats(memory=memory)])
