"""Per-project API tokens for agents: `Authorization: Bearer cw_...` (or `Token cw_...`)."""

from __future__ import annotations

from dataclasses import dataclass

from rest_framework import authentication, exceptions

from contextweaver_site.request_guard import TOKEN_SCOPE_KEY

from ..engine.operations import token_actor, user_actor
from ..engine.projects import token_resolve
from ..models import ApiToken
from .throttles import FAILURES_MESSAGE, AuthFailureThrottle

SCHEMES = {"bearer", "token"}
INVALID_TOKEN = "Invalid or revoked API token."


@dataclass(frozen=True)
class AgentPrincipal:
    """Stands in for request.user when an agent calls with a token."""

    token: ApiToken
    is_authenticated: bool = True
    is_active: bool = True
    is_staff: bool = False
    is_superuser: bool = False

    @property
    def project_id(self) -> int:
        return self.token.project_id

    def __str__(self) -> str:
        return f"token:{self.token.pk}"


class ProjectTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).decode("latin-1").split()
        if not header or header[0].lower() not in SCHEMES:
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Authorization header must be 'Bearer <token>'.")
        verified = getattr(request._request, "scope", {}).get(TOKEN_SCOPE_KEY)
        if verified and verified[0] == header[1]:
            if verified[1] is None:  # the request guard found it wrong and counted the failure
                raise exceptions.AuthenticationFailed(INVALID_TOKEN)
            return AgentPrincipal(verified[1]), verified[1]
        # The token first: one that checks out is accepted even from an address over the failure rate.
        token = token_resolve(header[1])
        if token is not None:
            return AgentPrincipal(token), token
        wait = AuthFailureThrottle(request).failed()
        if wait is not None:
            raise exceptions.Throttled(wait, detail=FAILURES_MESSAGE)
        raise exceptions.AuthenticationFailed(INVALID_TOKEN)

    def authenticate_header(self, request) -> str:
        return f'{self.keyword} realm="api"'


def actor_of(request) -> str:
    """Who did it, as written in the change log."""
    if isinstance(request.auth, ApiToken):
        return token_actor(request.auth.pk)
    return user_actor(request.user.pk)
