"""Maintenance API: decay/archive, merge, summarise, review, forget (docs/maintenance.md).

Each view checks the role, validates the body, calls one job of engine.maintenance and returns its
report. `dry_run: true` returns the counts of what would change and writes nothing.

Who may call (checked on the server):
- decay, merge, summarise, review: curators and admins, and the project's API tokens (an agent may
  tidy and reflect on its own memory, as it may already write to it);
- forget: admins only, and never an API token: deleting data is a person's decision.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from contextweaver_site.http.access import project_for, request_access

from ..engine.maintenance.common import JobReport, entity_ref
from ..engine.maintenance.decay import decay_run
from ..engine.maintenance.forget import MODES, ForgetFilter, forget_run
from ..engine.maintenance.merge import SCOPES, merge_memories, merge_run
from ..engine.maintenance.review import review_run
from ..engine.maintenance.summarise import summarise_run
from ..models import Memory, MemoryKind, Project, Role
from ..reads.rows import memory_rows
from .authentication import actor_of
from .serializers import MAX_ID, MemoryOutput, id_field, valid_serializer

MAX_IDS = 1000
TAG = ["maintenance"]


def _ids(**kwargs) -> serializers.ListField:
    return serializers.ListField(child=id_field(), required=False, max_length=MAX_IDS,
                                 **kwargs)


def _kinds() -> serializers.ListField:
    # Plain strings checked by the engine (400 on "kinds"): a second enum of the memory kinds would
    # make drf-spectacular warn about one choice set under two names.
    return serializers.ListField(child=serializers.CharField(max_length=16), required=False, default=list,
                                 max_length=len(MemoryKind.values),
                                 help_text=f"Memory kinds: {', '.join(MemoryKind.values)}.")


class MaintenanceInput(serializers.Serializer):
    dry_run = serializers.BooleanField(required=False, default=False,
                                       help_text="Count what would change and write nothing.")


class DecayInput(MaintenanceInput):
    session_id = id_field(required=False, allow_null=True, default=None)
    memory_ids = _ids(allow_null=True, default=None, help_text="Only these memories.")
    kinds = _kinds()
    threshold = serializers.FloatField(required=False, allow_null=True, default=None, min_value=0, max_value=10,
                                       help_text="Archive below this weight (default DECAY_ARCHIVE_THRESHOLD).")
    half_life_days = serializers.FloatField(required=False, allow_null=True, default=None, min_value=0.001,
                                            max_value=36500)
    force = serializers.BooleanField(required=False, default=False,
                                     help_text="Archive memory_ids now, whatever their weight.")


class MergeInput(MaintenanceInput):
    session_id = id_field(required=False, allow_null=True, default=None)
    scope = serializers.ChoiceField(choices=SCOPES, required=False, default="session",
                                    help_text="Duplicates within one session, or across the project.")
    threshold = serializers.FloatField(required=False, allow_null=True, default=None, min_value=0.5, max_value=1.0)
    survivor_id = id_field(required=False, allow_null=True, default=None,
                           help_text="Merge duplicate_ids into this memory (no search).")
    duplicate_ids = _ids(default=list)

    def validate(self, attrs: dict) -> dict:
        if (attrs["survivor_id"] is None) != (not attrs["duplicate_ids"]):
            raise serializers.ValidationError({"survivor_id": ["survivor_id and duplicate_ids go together."]})
        return attrs


class SummariseInput(MaintenanceInput):
    memory_ids = _ids(default=list, help_text="The cluster; or give session_id and/or entity.")
    session_id = id_field(required=False, allow_null=True, default=None)
    entity = serializers.CharField(required=False, allow_blank=True, default="", max_length=300,
                                   help_text="Entity id or name.")
    use_llm = serializers.BooleanField(required=False, default=True,
                                       help_text="Let the configured LLM write it (extractive otherwise).")

    def validate(self, attrs: dict) -> dict:
        if attrs["memory_ids"] and (attrs["session_id"] is not None or attrs["entity"]):
            raise serializers.ValidationError({"memory_ids": ["give memory_ids, or session_id and/or entity."]})
        if not attrs["memory_ids"] and attrs["session_id"] is None and not attrs["entity"]:
            raise serializers.ValidationError({"memory_ids": ["name the cluster: memory_ids, session_id or entity."]})
        return attrs


class ReviewInput(MaintenanceInput):
    session_id = id_field(required=False, allow_null=True, default=None)
    limit = serializers.IntegerField(required=False, allow_null=True, default=None, min_value=1, max_value=1000)
    below_confidence = serializers.FloatField(required=False, allow_null=True, default=None, min_value=0,
                                              max_value=1, help_text="Also edges under this confidence.")


class ForgetSelectionInput(serializers.Serializer):
    """What to forget: every filter given must hold (AND); at least one is required."""

    memory_ids = _ids(default=list)
    session_id = id_field(required=False, allow_null=True, default=None)
    session_ids = _ids(default=list, help_text="Memories of any of these sessions. With mode hard and no other "
                                               "filter: the sessions themselves, deleted whole with every interaction.")
    entity = serializers.CharField(required=False, allow_blank=True, default="", max_length=300)
    kinds = _kinds()
    after = serializers.DateTimeField(required=False, allow_null=True, default=None,
                                      help_text="Memories that happened at or after this time.")
    before = serializers.DateTimeField(required=False, allow_null=True, default=None,
                                       help_text="Memories that happened before this time.")
    text_contains = serializers.CharField(required=False, allow_blank=True, default="", max_length=500,
                                          trim_whitespace=False)
    sensitive_only = serializers.BooleanField(required=False, default=False,
                                              help_text="Only memories marked sensitive.")
    mode = serializers.ChoiceField(choices=MODES, required=False, default="soft",
                                   help_text="soft: status forgotten; hard: delete with the whole cascade.")

    def validate(self, attrs: dict) -> dict:
        if not (attrs["memory_ids"] or attrs["session_id"] is not None or attrs["session_ids"] or attrs["entity"]
                or attrs["kinds"] or attrs["after"] is not None or attrs["before"] is not None
                or attrs["text_contains"].strip() or attrs["sensitive_only"]):
            raise serializers.ValidationError({"non_field_errors": ["choose what to forget: at least one filter."]})
        return attrs

    def selection(self) -> ForgetFilter:
        data = self.validated_data
        return ForgetFilter(memory_ids=tuple(data["memory_ids"]), session_id=data["session_id"],
                            session_ids=tuple(data["session_ids"]), entity=entity_ref(data["entity"]),
                            kinds=tuple(data["kinds"]), after=data["after"], before=data["before"],
                            text_contains=data["text_contains"].strip(), sensitive_only=data["sensitive_only"])


class ForgetInput(MaintenanceInput, ForgetSelectionInput):
    expect_memories = serializers.IntegerField(required=False, allow_null=True, default=None, min_value=0,
                                               max_value=MAX_ID,
                                               help_text="The dry run's count: refused if the selection differs.")


class JobOutput(serializers.Serializer):
    job = serializers.CharField()
    dry_run = serializers.BooleanField()
    params = serializers.DictField(help_text="What the run was asked to do (mode, ...).")
    counts = serializers.DictField(child=serializers.IntegerField(), help_text="Changes per kind.")
    ids = serializers.DictField(child=serializers.ListField(child=serializers.IntegerField()),
                                help_text="Ids touched, per kind of change.")
    notes = serializers.ListField(child=serializers.CharField())


class SummariseOutput(JobOutput):
    summary = MemoryOutput(allow_null=True, help_text="The new summary memory (null in a dry run).")


def _answer(report: JobReport) -> Response:
    return Response(report.to_json())


class DecayApi(APIView):
    @extend_schema(request=DecayInput, responses=JobOutput, tags=TAG,
                   summary="Archive memories whose decayed weight fell below the threshold")
    def post(self, request, project_slug: str):
        project = project_for(request, project_slug, min_role=Role.CURATOR)
        data = valid_serializer(DecayInput, request.data).validated_data
        return _answer(decay_run(project=project, actor=actor_of(request), **data))


class MergeApi(APIView):
    @extend_schema(request=MergeInput, responses=JobOutput, tags=TAG,
                   summary="Merge near-duplicate memories (or the named ones)")
    def post(self, request, project_slug: str):
        project = project_for(request, project_slug, min_role=Role.CURATOR)
        data = valid_serializer(MergeInput, request.data).validated_data
        common = {"project": project, "actor": actor_of(request), "dry_run": data["dry_run"]}
        if data["survivor_id"] is not None:
            return _answer(merge_memories(survivor_id=data["survivor_id"], duplicate_ids=data["duplicate_ids"],
                                          **common))
        return _answer(merge_run(session_id=data["session_id"], scope=data["scope"], threshold=data["threshold"],
                                 **common))


class SummariseApi(APIView):
    @extend_schema(request=SummariseInput, responses=SummariseOutput, tags=TAG,
                   summary="Summarise a cluster into one summary memory linked by summarizes edges")
    def post(self, request, project_slug: str):
        access = request_access(request, project_slug, min_role=Role.CURATOR)
        project = access.project
        data = valid_serializer(SummariseInput, request.data).validated_data
        report = summarise_run(project=project, actor=actor_of(request), memory_ids=data["memory_ids"] or None,
                               session_id=data["session_id"], entity=entity_ref(data["entity"]),
                               use_llm=data["use_llm"], dry_run=data["dry_run"],
                               may_see_sensitive=access.may_see_sensitive)
        body = report.to_json()
        summary = Memory.objects.filter(pk__in=report.ids.get("summary", [])).prefetch_related("sources").first()
        body["summary"] = memory_rows(access, [summary])[0] if summary else None
        return Response(body)


class ReviewApi(APIView):
    @extend_schema(request=ReviewInput, tags=TAG,
                   responses={200: JobOutput, 503: OpenApiResponse(
                       description="`llm_not_configured`: edge review needs an LLM and none is configured "
                                   "(set CW_LLM=openai and OPENAI_API_KEY); a dry run still answers 200 with a "
                                   "note. Also `database_unavailable`, as for every operation.")},
                   summary="Re-check weak inferred edges with the review LLM (needs an LLM: else 503)")
    def post(self, request, project_slug: str):
        project = project_for(request, project_slug, min_role=Role.CURATOR)
        data = valid_serializer(ReviewInput, request.data).validated_data
        return _answer(review_run(project=project, actor=actor_of(request), **data))


class ForgetApi(APIView):
    @extend_schema(request=ForgetInput, responses=JobOutput, tags=TAG,
                   summary="Forget memories by filter: soft, or hard with the full cascade (admins only)")
    def post(self, request, project_slug: str):
        project = _admin_project(request, project_slug)
        serializer = valid_serializer(ForgetInput, request.data)
        data = serializer.validated_data
        return _answer(forget_run(project=project, actor=actor_of(request), selection=serializer.selection(),
                                  mode=data["mode"], expect_memories=data["expect_memories"],
                                  dry_run=data["dry_run"]))


def _admin_project(request, slug: str) -> Project:
    """Forgetting is for people with the admin role; an agent's token never may."""
    return project_for(request, slug, min_role=Role.ADMIN, agents=False,
                       why="Forgetting needs a person with the admin role; API tokens cannot forget.")
