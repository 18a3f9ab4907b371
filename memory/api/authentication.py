"""Per-project API tokens for agents: `Authorization: Bearer cw_...` (or `Token cw_...`)."""

from __future__ import annotations

from dataclasses import dataclass

from rest_framework import authentication, exceptions

from contextweaver_site.request_guard import TOKEN_SCOPE_KEY

from ..engine.operations import token_actor, user_actor
from ..engine.projects import token_resolve
from ..models import ApiToken
from .throttles import AuthFailureThrottle

SCHEMES = {"bearer", "token"}


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
            return AgentPrincipal(verified[1]), verified[1]
        failures = AuthFailureThrottle(request)
        wait = failures.wait_seconds()
        if wait is not None:
            raise exceptions.Throttled(wait, detail="Too many failed token checks from this address.")
        token = token_resolve(header[1])
        if token is None:
            failures.record()
            raise exceptions.AuthenticationFailed("Invalid or revoked API token.")
        return AgentPrincipal(token), token

    def authenticate_header(self, request) -> str:
        return f'{self.keyword} realm="api"'


def actor_of(request) -> str:
    """Who did it, as written in the change log."""
    if isinstance(request.auth, ApiToken):
        return token_actor(request.auth.pk)
    return user_actor(request.user.pk)
