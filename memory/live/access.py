"""Who may watch a session live: members of its project (any role) and superusers."""

from __future__ import annotations

from dataclasses import dataclass

from ..models import AgentSession, Membership
from ..selectors import SEE_SENSITIVE_ROLES


@dataclass(frozen=True)
class Watch:
    session_id: int
    project_id: int
    show_sensitive: bool  # curators, admins and superusers see sensitive content; viewers do not


class UnknownSession(Exception):
    pass


class NotAllowed(Exception):
    pass


def session_watch(user, session_id: int) -> Watch:
    """The watch this user may open on the session; raises UnknownSession or NotAllowed."""
    project_id = AgentSession.objects.filter(pk=session_id).values_list("project_id", flat=True).first()
    if project_id is None:
        # Unknown to everyone, but only a logged-in user learns that (anonymous → NotAllowed first).
        if user is None or not user.is_authenticated:
            raise NotAllowed
        raise UnknownSession
    if user is None or not user.is_authenticated or not user.is_active:
        raise NotAllowed
    if user.is_superuser:
        return Watch(session_id, project_id, show_sensitive=True)
    role = Membership.objects.filter(project_id=project_id, user=user).values_list("role", flat=True).first()
    if role is None:
        raise NotAllowed
    return Watch(session_id, project_id, show_sensitive=role in SEE_SENSITIVE_ROLES)
