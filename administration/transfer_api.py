"""Export over HTTP: GET /api/projects/<slug>/export/?file=jsonl|graphml&session=<id> (docs/administration.md).

(`file`, not `format`: DRF reads `?format=` as the choice of its own renderer.)

Any member or the project's agent token, as for the graph: what the reader may not see is masked in the
file the same way (administration/transfer.py). Import is a command (`manage.py import_project`): it
creates a project, which only operators do today.
"""

from __future__ import annotations

from django.http import HttpResponse, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.views import APIView

from contextweaver_site.http.access import request_access
from contextweaver_site.http.validation import id_field, valid
from memory.engine.maintenance.common import session_in
from memory.reads.export import export_rows

from .transfer import export_graphml, export_jsonl

FORMATS = ("jsonl", "graphml")


class ExportQuery(serializers.Serializer):
    file = serializers.ChoiceField(choices=FORMATS, required=False, default="jsonl")
    session = id_field(required=False, allow_null=True, default=None)


def export_filename(slug: str, session_id: int | None, fmt: str) -> str:
    return f"{slug}{'' if session_id is None else f'-session-{session_id}'}.{fmt}"


class ExportApi(APIView):
    @extend_schema(
        tags=["administration"], operation_id="project_export",
        parameters=[OpenApiParameter("file", OpenApiTypes.STR, enum=list(FORMATS),
                                     description="jsonl (default: every row, importable) or graphml (the graph)"),
                    OpenApiParameter("session", OpenApiTypes.INT, description="Only this session")],
        responses={(200, "application/x-ndjson"): OpenApiResponse(OpenApiTypes.BINARY,
                                                                  description="JSON Lines, as an attachment."),
                   (200, "application/graphml+xml"): OpenApiResponse(OpenApiTypes.BINARY,
                                                                     description="GraphML, as an attachment.")},
        summary="Export the project or one session as JSON Lines or GraphML (sensitive text masked for "
                "viewers and tokens)")
    def get(self, request, project_slug: str):
        access = request_access(request, project_slug)
        query = valid(ExportQuery, request.query_params)
        session = session_in(access.project, query["session"])
        rows = export_rows(access, session)
        name = export_filename(access.project.slug, query["session"], query["file"])
        if query["file"] == "graphml":
            response = HttpResponse(export_graphml(rows), content_type="application/graphml+xml; charset=utf-8")
        else:
            response = StreamingHttpResponse(export_jsonl(rows), content_type="application/x-ndjson; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response
