"""One error shape for the whole API: {"error": {"code", "message", "fields"?}}."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, OperationalError
from procrastinate.exceptions import ConnectorException
from rest_framework import status
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from contextweaver_site.request_guard import DATABASE_UNAVAILABLE, RETRY_AFTER_SECONDS
from memory.errors import MemoryEngineError, ValidationFailed

logger = logging.getLogger(__name__)

# What an error may echo of the request: a request with 700,000 unknown recall parameters was answered with
# a 12 MB list of them. A longer text keeps its first ECHO_ITEMS items (", "-separated) and says how many
# more there were; an object keeps its first ECHO_ITEMS keys; one item or key keeps ECHO_CHARS characters;
# all of `fields` together stay within about ECHO_TOTAL characters.
ECHO_ITEMS = 20
ECHO_CHARS = 200
ECHO_TEXT = 2000
ECHO_TOTAL = 20_000
MORE = "…"


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
        body = {"code": exc.code, "message": capped_text(exc.message),
                **({extra_key: capped(exc.extra)} if exc.extra else {})}
        return Response({"error": body}, status=exc.status_code)
    if isinstance(exc, ParseError):
        message = capped_text(f"Malformed request body: {exc.detail}")
        return Response({"error": {"code": "invalid", "message": message, "fields": {"non_field_errors": [message]}}},
                        status=status.HTTP_400_BAD_REQUEST)
    response = drf_exception_handler(exc, context)
    if response is None:
        logger.exception("unhandled error in %s", context.get("view").__class__.__name__, exc_info=exc)
        body = {"code": "server_error", "message": "Internal error; nothing was written, retry later."}
        return Response({"error": body}, status=status.HTTP_500_INTERNAL_SERVER_ERROR)
    if isinstance(exc, ValidationError):
        response.data = {"error": {"code": "invalid", "message": "The request has invalid fields.",
                                   "fields": capped(response.data)}}
        response.status_code = status.HTTP_400_BAD_REQUEST
    else:
        detail = response.data.get("detail", response.data) if isinstance(response.data, dict) else response.data
        code = getattr(exc, "default_code", "error")
        response.data = {"error": {"code": code, "message": capped_text(str(detail))}}
    return response


def capped(value: Any, left: list[int] | None = None) -> Any:
    """An error's detail (objects, lists, texts) within the ECHO_* bounds; `left`: the characters left."""
    left = [ECHO_TOTAL] if left is None else left
    if isinstance(value, str):
        text = capped_text(value)
        if len(text) > left[0]:
            text = text[:max(left[0], 0)] + MORE
        left[0] -= len(text)
        return text
    if isinstance(value, dict):
        out: dict = {}
        for index, (key, item) in enumerate(value.items()):
            if index == ECHO_ITEMS or left[0] <= 0:
                out[MORE] = [f"and {len(value) - index:,} more"]
                break
            key = _cut(key) if isinstance(key, str) else key
            left[0] -= len(str(key)) + 2
            out[key] = capped(item, left)
        return out
    if isinstance(value, (list, tuple)):  # every entry while there is room: an index can matter (a batch's)
        entries: list = []
        for index, item in enumerate(value):
            if left[0] <= 0:
                entries.append(f"{MORE} and {len(value) - index:,} more")
                break
            left[0] -= 2
            entries.append(capped(item, left))
        return entries
    return value


def capped_text(text: str) -> str:
    """The text itself when short; else its first ECHO_ITEMS items and how many more there were. A short
    last part after "; " (such as "known: …") is kept whole."""
    if len(text) <= ECHO_TEXT:
        return text
    head, separator, tail = text.rpartition("; ")
    if separator and len(tail) <= ECHO_TEXT // 2:
        return _capped_listing(head) + separator + tail
    return _capped_listing(text)


def _capped_listing(text: str) -> str:
    items: list[str] = []
    start = 0
    while len(items) < ECHO_ITEMS and start < len(text):  # one pass over the shown part only
        end = text.find(", ", start)
        if end == -1:
            end = len(text)
        items.append(text[start:end])
        start = end + 2
    shown = ", ".join(_cut(item) for item in items)
    if start >= len(text):
        return shown
    return f"{shown}, {MORE} and {text.count(', ', start) + 1:,} more"


def _cut(item: str) -> str:
    return item if len(item) <= ECHO_CHARS else f"{item[:ECHO_CHARS]}{MORE} ({len(item):,} characters)"


def _error(status_code: int, code: str, message: str) -> Response:
    return Response({"error": {"code": code, "message": message}}, status=status_code)
