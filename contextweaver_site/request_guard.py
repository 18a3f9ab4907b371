"""What every HTTP request must pass before Django reads its body (ASGI middleware, see asgi.py).

Django's ASGI handler reads the whole body into a temporary file before any middleware or view
runs, so its own limit (DATA_UPLOAD_MAX_MEMORY_SIZE) only fires after a 300 MB upload has been
written to disk, and a client that sends its body slowly holds a connection as long as it likes.
Here, before and while the body streams in:

- a body over MAX_REQUEST_BODY_BYTES (declared or counted) is a JSON 413 naming the limit;
- a body over ANONYMOUS_BODY_BYTES needs credentials that hold (a live API token, or a session of
  a logged-in user), checked from the headers before a byte is read; otherwise 401 on the API
  (413 on pages). A token that fails counts in the failed-token throttle (AuthFailureThrottle, the
  same count as the API's), and from an address over its rate it is a 429. Small bodies go on to
  Django, where DRF authenticates and throttles as usual;
- a body that has not fully arrived within REQUEST_BODY_TIMEOUT seconds is a 408.

A token checked here is handed to ProjectTokenAuthentication through the scope, so it is looked up
(and a failure counted) once per request.
"""

from __future__ import annotations

import asyncio
import json
import time
from importlib import import_module
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.db import DatabaseError, InterfaceError

API_PREFIX = "/api/"
RETRY_AFTER_SECONDS = 5
DATABASE_UNAVAILABLE = ("The database is unavailable. A write is stored whole or not at all (the connection may "
                        "have broken after its commit): retry the same request, with the same idempotency key, in "
                        f"{RETRY_AFTER_SECONDS} seconds.")
TOKEN_SCOPE_KEY = "cw.token"  # (raw token, ApiToken, or None: it failed and was counted) checked by the guard


class RequestGuard:
    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {name.lower(): value for name, value in scope["headers"]}
        declared = _content_length(headers)
        if declared == 0:
            await self.app(scope, receive, send)
            return
        api = scope["path"].startswith(API_PREFIX)
        limit = settings.MAX_REQUEST_BODY_BYTES
        if declared is not None and declared > limit:
            await respond(send, 413, "too_large", f"The request body is {declared} bytes; the limit is {limit} bytes.")
            return
        if declared is None or declared > settings.ANONYMOUS_BODY_BYTES:
            try:
                holds, wait = await _credentials_hold(scope, headers)
            except (DatabaseError, InterfaceError):  # the database is down: the same answer the API gives then
                await respond(send, 503, "database_unavailable", DATABASE_UNAVAILABLE,
                              extra_headers=[(b"retry-after", str(RETRY_AFTER_SECONDS).encode())])
                return
            if wait is not None:  # a wrong token from an address over the failure rate
                await _refuse_failures(send, wait)
                return
            if not holds:
                limit = settings.ANONYMOUS_BODY_BYTES
                if declared is not None:
                    await _refuse_anonymous(send, api=api)
                    return
        meter = _BodyMeter(receive, send, limit=limit, api=api)
        if declared is None:
            # Chunked: Django and DRF read a body only up to its Content-Length (none: empty), so the
            # body is collected here, within the limits, and handed on with its length.
            body = await meter.read_all()
            if body is None:
                return
            scope = {**scope, "headers": [*((n, v) for n, v in scope["headers"] if n.lower() != b"transfer-encoding"),
                                          (b"content-length", str(len(body)).encode())]}
            await self.app(scope, _Replay(body, receive), send)
            return
        await self.app(scope, meter, send)


class _BodyMeter:
    """`receive` for Django: counts body bytes and enforces the deadline; answers itself when over."""

    def __init__(self, receive, send, *, limit: int, api: bool) -> None:
        self.receive, self.send, self.limit, self.api = receive, send, limit, api
        self.seen = 0
        self.done = False
        self.deadline = time.monotonic() + settings.REQUEST_BODY_TIMEOUT

    async def __call__(self) -> dict:
        if self.done:  # after the body: Django only listens for the disconnect
            return await self.receive()
        try:
            message = await asyncio.wait_for(self.receive(), timeout=max(0.0, self.deadline - time.monotonic()))
        except TimeoutError:
            await respond(self.send, 408, "timeout",
                          f"The request body did not arrive within {settings.REQUEST_BODY_TIMEOUT} seconds.")
            return self._stop()
        if message["type"] != "http.request":
            return message
        self.seen += len(message.get("body", b""))
        if self.seen > self.limit:
            if self.limit == settings.MAX_REQUEST_BODY_BYTES:
                await respond(self.send, 413, "too_large", f"The request body is over the limit of {self.limit} bytes.")
            else:
                await _refuse_anonymous(self.send, api=self.api)
            return self._stop()
        self.done = not message.get("more_body", False)
        return message

    async def read_all(self) -> bytes | None:
        """The whole body, or None when it broke a limit (the client has been answered)."""
        chunks = []
        while not self.done:
            message = await self()
            if message["type"] != "http.request":
                return None
            chunks.append(message.get("body", b""))
        return b"".join(chunks)

    def _stop(self) -> dict:
        """Tell Django the client left: its handler then returns without answering (we already did)."""
        self.done = True
        return {"type": "http.disconnect"}


class _Replay:
    """`receive` that gives Django a body already read, then passes on what the client sends next."""

    def __init__(self, body: bytes, receive) -> None:
        self.body, self.receive = body, receive

    async def __call__(self) -> dict:
        if self.body is None:
            return await self.receive()
        body, self.body = self.body, None
        return {"type": "http.request", "body": body, "more_body": False}


async def _refuse_anonymous(send, *, api: bool) -> None:
    limit = settings.ANONYMOUS_BODY_BYTES
    if api:
        await respond(send, 401, "not_authenticated",
                      f"Bodies over {limit} bytes need valid credentials: send 'Authorization: Bearer <token>'.",
                      extra_headers=[(b"www-authenticate", b'Bearer realm="api"')])
    else:
        await respond(send, 413, "too_large", f"Without a login, a request body may be at most {limit} bytes.")


async def _refuse_failures(send, wait: int) -> None:
    from memory.api.throttles import failures_message

    await respond(send, 429, "throttled", failures_message(wait), extra_headers=[(b"retry-after", str(wait).encode())])


def _content_length(headers: dict[bytes, bytes]) -> int | None:
    """The declared body size; None when the body is chunked (size unknown until it has arrived)."""
    raw = headers.get(b"content-length")
    if raw is None:
        return None if b"chunked" in headers.get(b"transfer-encoding", b"").lower() else 0
    try:
        return max(0, int(raw))
    except ValueError:
        return None


async def _credentials_hold(scope: dict, headers: dict[bytes, bytes]) -> tuple[bool, int | None]:
    """Whether the credentials hold; with a wrong token from an address over the failure rate, also
    the seconds it must wait (a 429)."""
    authorization = headers.get(b"authorization", b"").decode("latin-1").split()
    if len(authorization) == 2 and authorization[0].lower() in ("bearer", "token"):
        client = scope.get("client")
        token, wait = await database_sync_to_async(_token_check)(
            authorization[1], client[0] if client else None, _forwarded_for(scope))
        scope[TOKEN_SCOPE_KEY] = (authorization[1], token)
        return token is not None, wait
    session_key = _cookie(headers, settings.SESSION_COOKIE_NAME)
    return bool(session_key) and await database_sync_to_async(_session_has_user)(session_key), None


def _token_check(raw: str, remote_addr: str | None, forwarded_for: str | None):
    """(the token, None) when it checks out; else (None, seconds to wait or None), the failure counted
    per address as the API counts it (the token first: a good one is accepted from any address)."""
    from memory.api.throttles import AuthFailureThrottle
    from memory.engine.projects import token_resolve

    token = token_resolve(raw)
    if token is not None:
        return token, None
    return None, AuthFailureThrottle.for_address(remote_addr, forwarded_for).failed()


def _forwarded_for(scope: dict) -> str | None:
    """X-Forwarded-For as Django's request.headers gives it (repeated headers joined by commas)."""
    values = [value.decode("latin-1") for name, value in scope["headers"] if name.lower() == b"x-forwarded-for"]
    return ",".join(values) if values else None


def _session_has_user(session_key: str) -> bool:
    store = import_module(settings.SESSION_ENGINE).SessionStore(session_key)
    return store.get(SESSION_KEY) is not None


def _cookie(headers: dict[bytes, bytes], name: str) -> str | None:
    for part in headers.get(b"cookie", b"").decode("latin-1").split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


async def respond(send, status: int, code: str, message: str, *,
                  extra_headers: list[tuple[bytes, bytes]] | None = None) -> None:
    """The API's error shape, sent straight over ASGI; the connection is closed after it."""
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    headers: list[tuple[bytes, Any]] = [(b"content-type", b"application/json"),
                                        (b"content-length", str(len(body)).encode()), (b"connection", b"close"),
                                        *(extra_headers or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
