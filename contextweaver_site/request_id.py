"""One id per HTTP request, in every log line it causes and in the jobs it queued.

The id is the caller's `X-Request-ID` when it is a plausible one (a proxy's or the agent's own), else a
new one; it is echoed in the answer. Ingest passes it to the job it defers (memory/engine/ingest.py), and
the worker binds it while the job runs (memory/tasks.py), so one grep follows an interaction from the
request that brought it to the worker that processed it. `CW_LOG_FORMAT=json` writes each line as one
JSON object (for log shippers); the default is text.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from asgiref.sync import iscoroutinefunction, markcoroutinefunction

HEADER = "X-Request-ID"
_VALID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
_current: ContextVar[str] = ContextVar("request_id", default="")


def current() -> str:
    return _current.get()


@contextmanager
def bound(request_id: str) -> Iterator[None]:
    token = _current.set(request_id)
    try:
        yield
    finally:
        _current.reset(token)


def _chosen(offered: str | None) -> str:
    return offered if offered and _VALID.match(offered) else uuid.uuid4().hex


class RequestIdMiddleware:
    """Binds the request's id for the view (sync or async) and answers with it."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request):
        if self.is_async:
            return self._async_call(request)
        request_id = _chosen(request.headers.get(HEADER))
        with bound(request_id):
            response = self.get_response(request)
        response[HEADER] = request_id
        return response

    async def _async_call(self, request):
        request_id = _chosen(request.headers.get(HEADER))
        with bound(request_id):
            response = await self.get_response(request)
        response[HEADER] = request_id
        return response


class RequestIdFilter(logging.Filter):
    """Puts the bound id (or "-") on every record, for both formats."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = current() or "-"
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = {"time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"), "level": record.levelname,
                "logger": record.name, "message": record.getMessage(),
                "request_id": getattr(record, "request_id", "-")}
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)
