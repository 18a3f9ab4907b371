"""The websocket Origin check: a socket may be opened only by a page of this very site.

Browsers send the session cookie with a websocket handshake whatever page opens it, so the Origin
header is what keeps another site (or another port or scheme of the same host: `http://127.0.0.1:9999`
is not `http://127.0.0.1:8000`) from reading a logged-in visitor's live stream. The rule is Django's
CSRF origin rule (`CsrfViewMiddleware._origin_verified`), so a deployment that can post forms can open
sockets, and nothing else can:

- the Origin equals the socket's own origin: `http://` for `ws://`, `https://` for `wss://` (behind a
  proxy: uvicorn's `--proxy-headers`, or `SECURE_PROXY_SSL_HEADER`, as for `request.is_secure()`),
  followed by the Host the socket was opened with, which must be in ALLOWED_HOSTS (`request.get_host()`);
  scheme, host and port must all match;
- or it is listed in CSRF_TRUSTED_ORIGINS (exactly, or by a `https://*.example.com` wildcard).

A handshake without an Origin is refused: every socket here authenticates by the session cookie (API
tokens cannot open one), and every browser sends an Origin with a websocket handshake. Refusal is HTTP 403
at the handshake (channels' WebsocketDenier), as with channels' own AllowedHostsOriginValidator, which
compared only the host name.
"""

from __future__ import annotations

import io
from typing import Any
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.core.handlers.asgi import ASGIRequest
from django.utils.http import is_same_domain


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    values = [value for key, value in scope.get("headers", []) if key == name]
    if len(values) != 1:  # absent, or repeated (ambiguous): no answer
        return None
    try:
        return values[0].decode("latin1")
    except UnicodeDecodeError:
        return None


def own_origin(scope: dict[str, Any]) -> str | None:
    """`http[s]://<host[:port]>` of the socket itself, or None when its Host is not an allowed host."""
    scheme = "https" if scope.get("scheme") in ("wss", "https") else "http"
    request = ASGIRequest({**scope, "method": "GET", "scheme": scheme}, io.BytesIO())
    try:
        host = request.get_host()  # the Host header (X-Forwarded-Host only with USE_X_FORWARDED_HOST), validated
    except DisallowedHost:
        return None
    return f"{'https' if request.is_secure() else 'http'}://{host}"


def trusted_origin(origin: str) -> bool:
    """Listed in CSRF_TRUSTED_ORIGINS, exactly or by a wildcard subdomain entry."""
    trusted = settings.CSRF_TRUSTED_ORIGINS
    if origin in {entry for entry in trusted if "*" not in entry}:
        return True
    try:
        parsed = urlsplit(origin)
    except ValueError:
        return False
    return any(is_same_domain(parsed.netloc, urlsplit(entry).netloc.lstrip("*"))
               for entry in trusted if "*" in entry and urlsplit(entry).scheme == parsed.scheme)


def origin_allowed(scope: dict[str, Any]) -> bool:
    origin = _header(scope, b"origin")
    if not origin or origin == "null":
        return False
    own = own_origin(scope)
    return (own is not None and origin == own) or trusted_origin(origin)


class SameOriginValidator:
    """ASGI middleware for websocket routes: refuse the handshake (HTTP 403) unless `origin_allowed`."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope["type"] != "websocket":
            raise ValueError("SameOriginValidator is for websocket connections only")
        if origin_allowed(scope):
            return await self.application(scope, receive, send)
        return await WebsocketDenier()(scope, receive, send)
