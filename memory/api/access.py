"""The access rule (memory/access.py) for API requests: its refusals as DRF's 404 and 403."""

from __future__ import annotations

from rest_framework.exceptions import NotFound, PermissionDenied

from ..access import Access, NotAllowed, UnknownProject, project_access
from ..models import AgentSession, ApiToken, Project, Role


def request_access(request, slug: str, *, min_role: str = Role.VIEWER, agents: bool = True,
                   why: str = "") -> Access:
    """The caller's access to the project in the URL, if it may do an act needing `min_role`.

    `agents`: whether an agent's token may do it at all (people-only acts say False, and `why`)."""
    token = request.auth if isinstance(request.auth, ApiToken) else None
    try:
        access = project_access(slug, user=None if token else request.user, token=token)
        return access.require(min_role, agents=agents, why=why)
    except UnknownProject as exc:
        raise NotFound(str(exc)) from exc
    except NotAllowed as exc:
        raise PermissionDenied(str(exc)) from exc


def project_for(request, slug: str, *, min_role: str = Role.VIEWER, agents: bool = True, why: str = "") -> Project:
    return request_access(request, slug, min_role=min_role, agents=agents, why=why).project


def session_for(project: Project, session_id: int) -> AgentSession:
    session = AgentSession.objects.filter(project=project, pk=session_id).first()
    if session is None:
        raise NotFound(f"No session {session_id} in project {project.slug!r}.")
    return session
