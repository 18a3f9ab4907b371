"""Bulk forgetting over HTTP (admins of the project, logged in: never a token). docs/administration.md

POST forget/preview/ is the dry run (counts and a sample; writes nothing); POST forget/jobs/ starts the
confirmed job (202) and GET forget/jobs/[<id>/] reads the audit trail. The page and its socket
(consumers.py) show the same job rows.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from contextweaver_site.http.access import request_access
from contextweaver_site.http.validation import valid_serializer
from memory.access import Access
from memory.api.maintenance import ForgetSelectionInput
from memory.errors import NotFoundError
from memory.models import MAX_ID, Role

from .forgetting import forget_job_start, forget_jobs, forget_preview, job_json, jobs_json
from .models import ForgetJob

TAG = ["administration"]
ADMINS_ONLY = "Forgetting needs a person with the admin role; API tokens cannot forget."


def forgetting_admin(request, slug: str) -> Access:
    return request_access(request, slug, min_role=Role.ADMIN, agents=False, why=ADMINS_ONLY)


class ForgetJobInput(ForgetSelectionInput):
    confirm = serializers.CharField(max_length=100, help_text="The project's slug, typed by the admin.")
    expect_memories = serializers.IntegerField(min_value=0, max_value=MAX_ID,
                                               help_text="The dry run's count: refused if the selection differs.")


class ForgetPreviewOutput(serializers.Serializer):
    mode = serializers.CharField()
    memories = serializers.IntegerField()
    counts = serializers.DictField(child=serializers.IntegerField(), help_text="What the job will change, per kind.")
    sample = serializers.ListField(child=serializers.DictField(), help_text="The first selected memories.")
    interactions = serializers.DictField(
        child=serializers.DictField(child=serializers.IntegerField()),
        help_text="Interactions the job deletes (`deleted`: those of the sessions deleted whole) and empties "
                  "(`emptied`), each by status: kept, filtered, failed, pending.")
    deleted_sessions = serializers.ListField(
        child=serializers.DictField(),
        help_text="The sessions a hard forget deletes whole (its filter names sessions and nothing else): id, "
                  "name, and how many memories and interactions each holds. Empty otherwise.")


class ForgetJobOutput(serializers.Serializer):
    id = serializers.IntegerField()
    actor = serializers.CharField()
    actor_name = serializers.CharField(help_text="The username (or token name) behind the actor.")
    mode = serializers.CharField()
    filter = serializers.DictField(help_text="The filter, with any text or entity name shown as [forgotten].")
    state = serializers.CharField(help_text="queued, running, done or failed.")
    phase = serializers.CharField()
    done = serializers.IntegerField()
    total = serializers.IntegerField()
    expect_memories = serializers.IntegerField()
    counts = serializers.DictField(child=serializers.IntegerField())
    vacuumed = serializers.ListField(child=serializers.CharField())
    verification = serializers.DictField(allow_null=True, help_text="strings looked for, tables scanned, residues.")
    residues = serializers.IntegerField(allow_null=True)
    error = serializers.CharField()
    created_at = serializers.DateTimeField(allow_null=True)
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)


class ForgetPreviewApi(APIView):
    @extend_schema(tags=TAG, request=ForgetSelectionInput, responses=ForgetPreviewOutput,
                   summary="Dry run of a bulk forget: what it would change, and a sample (writes nothing)")
    def post(self, request, project_slug: str):
        access = forgetting_admin(request, project_slug)
        serializer = valid_serializer(ForgetSelectionInput, request.data)
        preview = forget_preview(access.project, access.actor, serializer.selection(),
                                 serializer.validated_data["mode"])
        return Response(ForgetPreviewOutput(preview).data)


class ForgetJobListApi(APIView):
    @extend_schema(tags=TAG, responses=ForgetJobOutput(many=True), operation_id="forget_jobs_list",
                   summary="The project's forget jobs, newest first: the audit trail")
    def get(self, request, project_slug: str):
        access = forgetting_admin(request, project_slug)
        return Response(jobs_json(forget_jobs(access.project)))

    @extend_schema(tags=TAG, request=ForgetJobInput,
                   responses={202: ForgetJobOutput, 409: OpenApiResponse(description="`job_running`: another forget "
                                                                               "of the project has not ended.")},
                   summary="Start a confirmed bulk forget in the background")
    def post(self, request, project_slug: str):
        access = forgetting_admin(request, project_slug)
        serializer = valid_serializer(ForgetJobInput, request.data)
        data = serializer.validated_data
        job = forget_job_start(access.project, access.actor, serializer.selection(), data["mode"],
                               confirm=data["confirm"], expect_memories=data["expect_memories"])
        return Response(job_json(job), status=status.HTTP_202_ACCEPTED)


class ForgetJobApi(APIView):
    @extend_schema(tags=TAG, responses=ForgetJobOutput, summary="One forget job: progress, counts, verification")
    def get(self, request, project_slug: str, job_id: int):
        access = forgetting_admin(request, project_slug)
        job = ForgetJob.objects.filter(project=access.project, pk=job_id).first() if job_id <= MAX_ID else None
        if job is None:
            raise NotFoundError(f"No forget job {job_id} in project {project_slug!r}.")
        return Response(job_json(job))
