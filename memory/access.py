"""Who may do what in a project: the one access rule of every surface (API, pages, websockets, commands).

A principal is a person (a Django user) or an agent (a project's API token). People act by their
role in the project's membership (viewer < curator < admin; a superuser counts as admin anywhere);
agents act only in their own project, only where a surface lets agents in (`agents=True`), and
never see sensitive content. Each surface turns the errors below into its own answer (403/404,
a websocket close code, a command error).

Over HTTP (API and pages) a principal with no standing in a project at all (NotAMember: not a member,
another project's token) gets the same 404 as for a slug nobody has, so a refusal never tells which
projects exist; only a member whose role is too low for the act (or an agent on a people-only act in
its own project) gets a 403.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .engine.operations import token_actor, user_actor
from .models import ApiToken, Membership, Project, Role

ROLE_RANK = {Role.VIEWER: 0, Role.CURATOR: 1, Role.ADMIN: 2}
SEE_SENSITIVE_ROLES = frozenset({Role.CURATOR, Role.ADMIN})


class AccessError(Exception):
    """Base of the two refusals; the message is written for the person or agent refused."""


class UnknownProject(AccessError):
    pass


class NotAllowed(AccessError):
    pass


class NotAMember(NotAllowed):
    """No standing in the project at all: a person who is not a member, or another project's token.

    A NotAllowed (surfaces that do not tell them apart keep working); the HTTP surfaces answer it like
    UnknownProject, with the same message (`unknown_project_message`)."""


def unknown_project_message(slug: str) -> str:
    """The one refusal for a slug nobody has and for a project the caller has no standing in."""
    return f"No project {slug!r}."


@dataclass(frozen=True)
class Access:
    """A principal's standing in one project."""

    project: Project
    user: Any = None  # the person, or None for an agent
    token: ApiToken | None = None
    role: str | None = None  # the person's role (admin for a superuser); None for an agent

    @property
    def is_agent(self) -> bool:
        return self.token is not None

    @property
    def may_see_sensitive(self) -> bool:
        """Curators and admins see sensitive content; viewers and agents see it masked."""
        return not self.is_agent and self.role in SEE_SENSITIVE_ROLES

    @property
    def actor(self) -> str:
        """Who did it, as the change log writes it."""
        return token_actor(self.token.pk) if self.token is not None else user_actor(self.user.pk)

    def require(self, min_role: str = Role.VIEWER, *, agents: bool = True, why: str = "") -> Access:
        """This access if it may do an act that needs `min_role` (people) or lets agents in; `why` is
        the refusal an agent gets for a people-only act."""
        if self.is_agent:
            if not agents:
                raise NotAllowed(why or f"This is for people with the {min_role} role; API tokens may not do it.")
            return self
        if ROLE_RANK[Role(self.role)] < ROLE_RANK[Role(min_role)]:
            raise NotAllowed(f"This needs the {min_role} role in project {self.project.slug!r}.")
        return self


def access_to(project: Project, *, user: Any = None, token: ApiToken | None = None) -> Access:
    """The principal's access to the project; NotAMember if it has none (NotAllowed if not logged in)."""
    if token is not None:
        if token.project_id != project.pk:
            raise NotAMember("This API token belongs to another project.")
        return Access(project, token=token)
    if user is None or not user.is_authenticated or not user.is_active:
        raise NotAllowed("Log in first.")
    if user.is_superuser:
        return Access(project, user=user, role=Role.ADMIN)
    role = Membership.objects.filter(project=project, user=user).values_list("role", flat=True).first()
    if role is None:
        raise NotAMember(f"You are not a member of project {project.slug!r}.")
    return Access(project, user=user, role=role)


def project_access(slug: str, *, user: Any = None, token: ApiToken | None = None) -> Access:
    """The access to the project named `slug`; UnknownProject if there is none."""
    project = Project.objects.filter(slug=slug).first()
    if project is None:
        raise UnknownProject(unknown_project_message(slug))
    return access_to(project, user=user, token=token)
