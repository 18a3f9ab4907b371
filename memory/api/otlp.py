"""OTLP/HTTP traces in: `POST /api/projects/<slug>/otlp/v1/traces`, where an agent's OpenTelemetry exporter points.

As the OTLP/HTTP specification has it: the body is an ExportTraceServiceRequest, binary protobuf
(`application/x-protobuf`) or protobuf's JSON (`application/json`, lowerCamelCase names, trace and span ids in
hex), optionally compressed (`Content-Encoding: gzip` or `deflate`). The answer is in the request's encoding: 200
with an ExportTraceServiceResponse, whose partial_success counts the spans left out and says why; 400 (nothing
stored) or 413 with a google.rpc.Status. Who may send is the rest of the API's rule (the project's token, or a
curator logged in), and its refusals (401, 403, 404, 415, 429) keep the API's error shape. What the spans become
is memory/engine/traces.py's.
"""

from __future__ import annotations

import base64
import json
import logging
import re
import zlib

from django.conf import settings
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from google.protobuf import json_format
from google.protobuf.message import DecodeError
from google.protobuf.message import Message as ProtoMessage
from google.rpc import code_pb2, status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from rest_framework.exceptions import UnsupportedMediaType
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import JSONRenderer
from rest_framework.views import APIView

from contextweaver_site.http.access import request_access

from ..engine.traces import MAX_SPANS, span_count, traces_accept
from ..models import Role
from .authentication import actor_of
from .schema import ERROR_COMPONENT

logger = logging.getLogger(__name__)
PROTOBUF = "application/x-protobuf"
JSON = "application/json"
HEX = re.compile(r"[0-9a-fA-F]*")
# JSON names of the ids (protobuf's JSON also takes the proto names), per message that holds them.
ID_FIELDS = ("traceId", "trace_id", "spanId", "span_id", "parentSpanId", "parent_span_id")


class Refused(Exception):
    """A body the endpoint will not read: answered with a google.rpc.Status in the request's encoding."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message, self.status = message, status


class JsonAnswers(DefaultContentNegotiation):
    """Errors raised before the view answers are JSON whatever the Accept header asks (an exporter may ask
    for protobuf only: that is no reason for a 406)."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return JSONRenderer(), JSONRenderer.media_type


# --- the OpenAPI description ----------------------------------------------------------------------------------

NANOS = {"type": "string", "pattern": "^[0-9]{1,20}$",
         "description": "Nanoseconds since the epoch: a decimal string (a JSON number is accepted too)."}
ATTRIBUTES = {"type": "array", "items": {"type": "object", "properties": {
    "key": {"type": "string"},
    "value": {"type": "object", "additionalProperties": True,
              "description": "AnyValue: one of stringValue, boolValue, intValue, doubleValue, arrayValue, "
                             "kvlistValue, bytesValue."}}}}
SPAN = {"type": "object", "properties": {
    "traceId": {"type": "string", "pattern": "^[0-9a-fA-F]{32}$"},
    "spanId": {"type": "string", "pattern": "^[0-9a-fA-F]{16}$"},
    "parentSpanId": {"type": "string", "pattern": "^([0-9a-fA-F]{16})?$"},
    "name": {"type": "string"}, "kind": {"type": "integer", "minimum": 0, "maximum": 5},
    "startTimeUnixNano": NANOS, "endTimeUnixNano": NANOS, "attributes": ATTRIBUTES,
    "events": {"type": "array", "items": {"type": "object", "properties": {
        "timeUnixNano": NANOS, "name": {"type": "string"}, "attributes": ATTRIBUTES}}}}}
REQUEST_JSON = {"type": "object", "description": "ExportTraceServiceRequest in OTLP/JSON.", "properties": {
    "resourceSpans": {"type": "array", "items": {"type": "object", "properties": {
        "resource": {"type": "object", "properties": {"attributes": ATTRIBUTES}},
        "scopeSpans": {"type": "array", "items": {"type": "object", "properties": {
            "scope": {"type": "object", "additionalProperties": True},
            "spans": {"type": "array", "items": SPAN}}}}}}}}}
RESPONSE_JSON = {"type": "object", "description": "ExportTraceServiceResponse in OTLP/JSON (`{}`: all accepted).",
                 "properties": {"partialSuccess": {"type": "object", "properties": {
                     "rejectedSpans": {"type": "string", "pattern": "^[0-9]+$",
                                       "description": "Spans left out (int64: a decimal string)."},
                     "errorMessage": {"type": "string", "description": "Why they were left out."}}}}}
STATUS_JSON = {"type": "object", "required": ["code", "message"],
               "description": "google.rpc.Status, OTLP's error body.", "properties": {
                   "code": {"type": "integer"}, "message": {"type": "string"},
                   "details": {"type": "array", "items": {"type": "object", "additionalProperties": True}}}}
REFUSAL_JSON = {"anyOf": [STATUS_JSON, {"$ref": f"#/components/schemas/{ERROR_COMPONENT}"}]}
BINARY = OpenApiTypes.BINARY
DESCRIPTION = (
    "Point an OpenTelemetry OTLP/HTTP trace exporter here (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, with "
    "`OTEL_EXPORTER_OTLP_TRACES_HEADERS=Authorization=Bearer%20<token>`). Each trace becomes a session "
    "(external_id `otel:<trace id>`), each GenAI span (semantic conventions: `gen_ai.operation.name`) its "
    "interactions, named by span id, each depending on its parent span's. Other spans are counted in "
    f"`partialSuccess`. At most {MAX_SPANS} spans per request. See docs/integrations.md.")


# --- the endpoint ---------------------------------------------------------------------------------------------


class OtlpTracesApi(APIView):
    content_negotiation_class = JsonAnswers

    @extend_schema(
        request={PROTOBUF: BINARY, JSON: REQUEST_JSON},
        responses={
            (200, JSON): OpenApiResponse(RESPONSE_JSON, description="Accepted: the spans that were left out, if "
                                                                     "any, and why."),
            (200, PROTOBUF): OpenApiResponse(BINARY, description="The same, as binary protobuf."),
            (400, JSON): OpenApiResponse(REFUSAL_JSON, description="A body that cannot be read: nothing stored."),
            (400, PROTOBUF): OpenApiResponse(BINARY, description="The same, as binary protobuf."),
            (413, JSON): OpenApiResponse(REFUSAL_JSON, description="Over the size limit (compressed or not) or "
                                                                    f"over {MAX_SPANS} spans."),
            (413, PROTOBUF): OpenApiResponse(BINARY, description="The same, as binary protobuf."),
            (415, JSON): OpenApiResponse({"$ref": f"#/components/schemas/{ERROR_COMPONENT}"},
                                         description="Neither protobuf nor JSON, or an unknown Content-Encoding."),
        },
        summary="OTLP/HTTP trace export: GenAI spans as interactions", description=DESCRIPTION,
    )
    def post(self, request, project_slug: str):
        access = request_access(request, project_slug, min_role=Role.CURATOR)
        encoding = _encoding(request)
        try:
            export = _export_request(request, encoding)
        except Refused as refusal:
            return _answer(status_pb2.Status(code=code_pb2.INVALID_ARGUMENT, message=refusal.message), encoding,
                           refusal.status)
        tally = traces_accept(project=access.project, request=export, actor=actor_of(request),
                              may_see_sensitive=access.may_see_sensitive)
        (logger.info if tally.rejected_spans else logger.debug)(
            "otlp traces: %d spans, %d interactions stored, %d duplicates, %d spans left out (%s)",
            tally.spans, tally.created, tally.duplicates, tally.rejected_spans, dict(+tally.rejected))
        response = ExportTraceServiceResponse()
        message = tally.message()
        if tally.rejected_spans or message:
            response.partial_success.rejected_spans = tally.rejected_spans
            response.partial_success.error_message = message
        return _answer(response, encoding, 200)


def _export_request(request, encoding: str) -> ExportTraceServiceRequest:
    export = _parsed(_decompressed(request.body, request.headers.get("Content-Encoding", "")), encoding)
    spans = span_count(export)
    if spans > MAX_SPANS:
        raise Refused(f"{spans} spans in one request; the limit is {MAX_SPANS}: lower the exporter's batch size "
                      "(OTEL_BSP_MAX_EXPORT_BATCH_SIZE)", status=413)
    return export


def _encoding(request) -> str:
    media = (request.content_type or "").split(";")[0].strip().lower()
    if media not in (PROTOBUF, JSON):
        raise UnsupportedMediaType(media or "(none)", detail=f"Send {PROTOBUF} or {JSON} (OTLP/HTTP), not "
                                                             f"{media or 'a body without a Content-Type'!r}.")
    return media


def _decompressed(body: bytes, coding: str) -> bytes:
    """The body as sent before compression, within the body limit (a small gzip can stand for gigabytes)."""
    coding = coding.strip().lower()
    if coding in ("", "identity"):
        return body
    if coding not in ("gzip", "deflate"):
        raise UnsupportedMediaType(coding, detail=f"Content-Encoding {coding!r} is not supported: use gzip, deflate "
                                                  "or none.")
    limit, parts, size = settings.MAX_REQUEST_BODY_BYTES, [], 0
    while body:  # gzip allows several members one after the other
        decompressor = zlib.decompressobj(32 + zlib.MAX_WBITS)  # gzip or zlib, by the header
        try:
            part = decompressor.decompress(body, limit + 1 - size)
        except zlib.error as exc:
            raise Refused(f"the {coding} body cannot be decompressed: {exc}") from None
        size += len(part)
        if size > limit:
            raise Refused(f"the body is over the limit of {limit} bytes once decompressed", status=413)
        if not decompressor.eof:
            raise Refused(f"the {coding} body ends before its end")
        parts.append(part)
        body = decompressor.unused_data
    return b"".join(parts)


def _parsed(body: bytes, encoding: str) -> ExportTraceServiceRequest:
    if encoding == PROTOBUF:
        try:
            return ExportTraceServiceRequest.FromString(body)
        except (DecodeError, ValueError, RecursionError) as exc:
            raise Refused(f"not an ExportTraceServiceRequest in binary protobuf: {exc}") from None
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise Refused(f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise Refused("an ExportTraceServiceRequest in JSON is an object")
    _ids_as_base64(data)
    try:  # the specification: a receiver ignores the fields it does not know
        return json_format.ParseDict(data, ExportTraceServiceRequest(), ignore_unknown_fields=True)
    except (json_format.ParseError, ValueError, TypeError, RecursionError) as exc:
        raise Refused(f"not an ExportTraceServiceRequest in OTLP/JSON: {str(exc)[:500]}") from None


def _ids_as_base64(data: dict) -> None:
    """OTLP/JSON writes trace and span ids in hex, where protobuf's JSON has base64 for bytes: rewrite them so
    json_format reads them (what is not where the ids belong is left for it to refuse)."""
    for resource in _list(data, "resourceSpans", "resource_spans"):
        for scope in _list(resource, "scopeSpans", "scope_spans"):
            for span in _list(scope, "spans"):
                _hex_ids(span)
                for link in _list(span, "links"):
                    _hex_ids(link)


def _list(holder, *names: str) -> list:
    if not isinstance(holder, dict):
        return []
    found = next((holder[name] for name in names if name in holder), [])
    return found if isinstance(found, list) else []


def _hex_ids(holder) -> None:
    if not isinstance(holder, dict):
        return
    for name in ID_FIELDS:
        value = holder.get(name)
        if isinstance(value, str):
            if len(value) % 2 or not HEX.fullmatch(value):
                raise Refused(f"{name} {value[:40]!r} is not hex (OTLP/JSON writes ids in hex)")
            holder[name] = _base64(bytes.fromhex(value))


def _base64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _answer(message: ProtoMessage, encoding: str, status: int) -> HttpResponse:
    if encoding == JSON:
        return HttpResponse(json_format.MessageToJson(message, indent=None), status=status, content_type=JSON)
    return HttpResponse(message.SerializeToString(), status=status, content_type=PROTOBUF)
