"""One error shape for the whole API: {"error": {"code", "message", "fields"?}}."""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, OperationalError
from procrastinate.exceptions import ConnectorException
from rest_framework import status
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from contextweaver_site.request_guard import DATABASE_UNAVAILABLE, RETRY_AFTER_SECONDS

from ..errors import MemoryEngineError, ValidationFailed

logger = logging.getLogger(__name__)




def exception_handler(exc, context):
    if isinstance(exc, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return _error(413, "too_large", f"The request body is over the limit of {limit} bytes.")
    if isinstance(exc, (OperationalError, InterfaceError, ConnectorException)):
        # The database is unreachable, restarting or out of connections (procrastinate wraps the same
        # errors in ConnectorException when the job is queued). Each write is one transaction,
        # but the connection can break after its commit (make soak saw it), so "nothing was written" would
        # be a lie: the client retries with the same idempotency key and gets the stored row back.
        logger.warning("database unavailable in %s: %s", context.get("view").__class__.__name__, exc)
        response = _error(503, "database_unavailable", DATABASE_UNAVAILABLE)
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
    if isinstance(exc, MemoryEngineError):
        extra_key = "fields" if isinstance(exc, ValidationFailed) else "detail"
        body = {"code": exc.code, "message": exc.message, **({extra_key: exc.extra} if exc.extra else {})}
        return Response({"error": body}, status=exc.status_code)
    if isinstance(exc, ParseError):
        message = f"Malformed request body: {exc.detail}"
        return Response({"error": {"code": "invalid", "message": message, "fields": {"non_field_errors": [message]}}},
                        status=status.HTTP_400_BAD_REQUEST)
    response = drf_exception_handler(exc, context)
    if response is None:
        logger.exception("unhandled error in %s", context.get("view").__class__.__name__, exc_info=exc)
        body = {"code": "server_error", "message": "Internal error; nothing was written, retry later."}
        return Response({"error": body}, status=status.HTTP_500_INTERNAL_SERVER_ERROR)
    if isinstance(exc, ValidationError):
        response.data = {"error": {"code": "invalid", "message": "The request has invalid fields.",
                                   "fields": response.data}}
        response.status_code = status.HTTP_400_BAD_REQUEST
    else:
        detail = response.data.get("detail", response.data) if isinstance(response.data, dict) else response.data
        code = getattr(exc, "default_code", "error")
        response.data = {"error": {"code": code, "message": str(detail)}}
    return response


def _error(status_code: int, code: str, message: str) -> Response:
    return Response({"error": {"code": code, "message": message}}, status=status_code)
