"""The access rule (memory/access.py) for API requests: its refusals as DRF's 404 and 403.

A project the caller has no standing in (not a member, another project's token) is the same 404, with the
same message, as a slug nobody has: the answer does not tell which projects exist. A 403 is only for a
member whose role is too low, or an agent's token on a people-only act in its own project."""

from __future__ import annotations

from rest_framework.exceptions import NotFound, PermissionDenied

from memory.access import Access, NotAllowed, NotAMember, UnknownProject, project_access, unknown_project_message
from memory.models import AgentSession, ApiToken, Project, Role


def request_access(request, slug: str, *, min_role: str = Role.VIEWER, agents: bool = True,
                   why: str = "") -> Access:
    """The caller's access to the project in the URL, if it may do an act needing `min_role`.

    `agents`: whether an agent's token may do it at all (people-only acts say False, and `why`)."""
    token = request.auth if isinstance(request.auth, ApiToken) else None
    try:
        access = project_access(slug, user=None if token else request.user, token=token)
        return access.require(min_role, agents=agents, why=why)
    except (UnknownProject, NotAMember) as exc:
        raise NotFound(unknown_project_message(slug)) from exc
    except NotAllowed as exc:
        raise PermissionDenied(str(exc)) from exc


def project_for(request, slug: str, *, min_role: str = Role.VIEWER, agents: bool = True, why: str = "") -> Project:
    return request_access(request, slug, min_role=min_role, agents=agents, why=why).project


def session_for(project: Project, session_id: int) -> AgentSession:
    session = AgentSession.objects.filter(project=project, pk=session_id).first()
    if session is None:
        raise NotFound(f"No session {session_id} in project {project.slug!r}.")
    return session
