"""Errors the client raises: the API's error body, kept whole, or the network failing after the retries."""

from __future__ import annotations

from typing import Any


class ContextWeaverError(Exception):
    """Base of every error this package raises."""


class Unreachable(ContextWeaverError):
    """No answer from the server (refused, reset, timed out) after the last retry."""


class ApiError(ContextWeaverError):
    """The server answered with an error: `{"error": {"code", "message", "fields"?, "detail"?}}`.

    `fields` maps each invalid field to its messages (400); `detail` carries extra facts, e.g. the
    interaction an idempotency key already names (409).
    """

    def __init__(self, status: int, body: Any, retry_after: float | None = None) -> None:
        error = body.get("error") if isinstance(body, dict) else None
        error = error if isinstance(error, dict) else {}
        self.status = status
        self.body = body
        self.code: str = str(error.get("code") or f"http_{status}")
        self.message: str = str(error.get("message") or (body if isinstance(body, str) and body else f"HTTP {status}"))
        self.fields: dict[str, Any] = error.get("fields") or {}
        self.detail: dict[str, Any] = error.get("detail") or {}
        self.retry_after = retry_after
        super().__init__(f"{status} {self.code}: {self.message}")


class BadRequest(ApiError):
    """400: the request has invalid fields (see `fields`)."""


class Unauthorized(ApiError):
    """401: no token, or a token that is unknown or revoked."""


class Forbidden(ApiError):
    """403: a member's role is too low for this act, or an agent's token asked for a people-only one (curation).
    A project the caller is not in answers 404 (`NotFound`), as one that does not exist."""


class NotFound(ApiError):
    """404: no such project, session, interaction or memory, or none the caller may see (another project's
    token, a person who is not a member)."""


class Conflict(ApiError):
    """409: e.g. an idempotency key used before for a different interaction (`detail["interaction_id"]`)."""


class TooLarge(ApiError):
    """413: the body is over the server's limit."""


class RateLimited(ApiError):
    """429: over the project's rate; `retry_after` says when to try again."""


class ServerError(ApiError):
    """5xx: the server could not answer now (e.g. 503 while its database restarts)."""


_BY_STATUS: dict[int, type[ApiError]] = {400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound,
                                         409: Conflict, 413: TooLarge, 429: RateLimited}


def error_for(status: int, body: Any, retry_after: float | None) -> ApiError:
    kind = _BY_STATUS.get(status, ServerError if status >= 500 else ApiError)
    return kind(status, body, retry_after)
