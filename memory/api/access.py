"""Which project or session a request may touch. Enforced on the server for every call."""

from __future__ import annotations

from rest_framework.exceptions import NotFound, PermissionDenied

from ..models import AgentSession, ApiToken, Membership, Project, Role

ROLE_RANK = {Role.VIEWER: 0, Role.CURATOR: 1, Role.ADMIN: 2}


def project_for(request, slug: str, *, min_role: str = Role.VIEWER) -> Project:
    """The project named in the URL, if the token or the user's membership allows it."""
    project = Project.objects.filter(slug=slug).first()
    if project is None:
        raise NotFound(f"No project {slug!r}.")
    if isinstance(request.auth, ApiToken):
        if request.auth.project_id != project.pk:
            raise PermissionDenied("This API token belongs to another project.")
        return project
    user = request.user
    if user.is_superuser:
        return project
    membership = Membership.objects.filter(project=project, user=user).first()
    if membership is None:
        raise PermissionDenied("You are not a member of this project.")
    if ROLE_RANK[Role(membership.role)] < ROLE_RANK[Role(min_role)]:
        raise PermissionDenied(f"This needs the {min_role} role.")
    return project


def session_for(project: Project, session_id: int) -> AgentSession:
    session = AgentSession.objects.filter(project=project, pk=session_id).first()
    if session is None:
        raise NotFound(f"No session {session_id} in project {project.slug!r}.")
    return session
