"""One id per HTTP request, in every log line it causes and in the jobs it queued.

The id is the caller's `X-Request-ID` when it is a plausible one (a proxy's or the agent's own), else a
new one; it is echoed in the answer. Ingest passes it to the job it defers (memory/engine/ingest.py), and
the worker binds it while the job runs (memory/tasks.py), so one grep follows an interaction from the
request that brought it to the worker that processed it. `CW_LOG_FORMAT=json` writes each line as one
JSON object (for log shippers); the default is text.

Access log lines (uvicorn's, and the development servers') keep the query's keys but not their values
(`/p/x/recalls/?q=...&page=2`): a search's text (`?q=`) is the user's words, not something to keep in logs at
INFO (PrivateQueryFilter; settings.LOGGING routes those loggers through it).
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


# Query keys whose values say nothing about the user's words (page numbers, ids): kept when they are numbers.
NUMERIC_KEYS = frozenset({"page", "limit", "offset", "after", "before", "session", "wait"})
_KEY = re.compile(r"^[A-Za-z0-9_.\-\[\]]{1,40}$")
_QUERY = re.compile(r"\?([^\s\"#]*)")  # a query string inside a logged path or request line
HIDDEN = "..."  # ASCII: a log stream of any encoding can write it


def private_query(text: str) -> str:
    """`text` (a path, a URL or a request line) with every query value replaced by "...", except numbers under
    NUMERIC_KEYS; a key that does not look like a parameter name is hidden too."""

    def one(match: re.Match) -> str:
        parts = []
        for pair in match[1].split("&"):
            if not pair:
                parts.append(pair)
                continue
            key, equals, value = pair.partition("=")
            if not _KEY.match(key):
                key = HIDDEN
            if equals and not (key in NUMERIC_KEYS and value.isdigit() and len(value) <= 12):
                value = HIDDEN
            parts.append(f"{key}{equals}{value}")
        return "?" + "&".join(parts)

    return _QUERY.sub(one, text) if "?" in text else text


class PrivateQueryFilter(logging.Filter):
    """Hides query values in access log records (uvicorn.access, django.channels.server, django.server):
    their string arguments are rewritten before any handler formats them."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, dict):
            record.args = {k: private_query(v) if isinstance(v, str) else v for k, v in record.args.items()}
        elif isinstance(record.args, tuple):
            record.args = tuple(private_query(v) if isinstance(v, str) else v for v in record.args)
        if isinstance(record.msg, str) and not record.args:
            record.msg = private_query(record.msg)
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = {"time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"), "level": record.levelname,
                "logger": record.name, "message": record.getMessage(),
                "request_id": getattr(record, "request_id", "-")}
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)
