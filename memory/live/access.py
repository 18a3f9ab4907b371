"""Who may watch a session live: the access rule (memory/access.py) for a websocket's user."""

from __future__ import annotations

from dataclasses import dataclass

from .. import access as rule
from ..models import AgentSession


@dataclass(frozen=True)
class Watch:
    session_id: int
    project_id: int
    show_sensitive: bool  # curators, admins and superusers see sensitive content; viewers do not

    @property
    def may_see_sensitive(self) -> bool:  # a reads.reader.Reader: the socket's reads are masked by it
        return self.show_sensitive


class UnknownSession(Exception):
    pass


NotAllowed = rule.NotAllowed  # the access rule's own refusal (consumers import it from here)


def session_watch(user, session_id: int) -> Watch:
    """The watch this user may open on the session; raises NotAllowed (not logged in) or UnknownSession.

    A session the user may not read is UnknownSession too, exactly as one that does not exist: the close
    code must not tell which ids exist in other projects. Anonymous callers get NotAllowed for both."""
    session = AgentSession.objects.select_related("project").filter(pk=session_id).first()
    if user is None or not user.is_authenticated or not user.is_active:
        raise NotAllowed("Log in first.")  # before saying whether the session exists
    if session is None:
        raise UnknownSession
    try:
        access = rule.access_to(session.project, user=user)
    except NotAllowed:
        raise UnknownSession from None
    return Watch(session_id, session.project_id, show_sensitive=access.may_see_sensitive)
