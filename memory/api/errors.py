"""One error shape for the whole API: {"error": {"code", "message", "fields"?}}."""

from __future__ import annotations

from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from ..errors import MemoryEngineError


def exception_handler(exc, context):
    if isinstance(exc, MemoryEngineError):
        body = {"code": exc.code, "message": exc.message, **({"detail": exc.extra} if exc.extra else {})}
        return Response({"error": body}, status=exc.status_code)
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, ValidationError):
        response.data = {"error": {"code": "invalid", "message": "The request has invalid fields.",
                                   "fields": response.data}}
        response.status_code = status.HTTP_400_BAD_REQUEST
    else:
        detail = response.data.get("detail", response.data) if isinstance(response.data, dict) else response.data
        code = getattr(exc, "default_code", "error")
        response.data = {"error": {"code": code, "message": str(detail)}}
    return response
