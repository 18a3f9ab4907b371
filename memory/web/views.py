"""Pages for people: the projects they belong to, a project's sessions, one session's memories."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import render

from ..models import AgentSession, Membership, Project
from ..selectors import interaction_list, session_graph, session_list


def _visible_projects(user):
    if user.is_superuser:
        return Project.objects.order_by("name")
    return Project.objects.filter(memberships__user=user).order_by("name")


def _project_or_403(user, slug: str) -> Project:
    project = Project.objects.filter(slug=slug).first()
    if project is None:
        raise Http404("No such project")
    if not (user.is_superuser or Membership.objects.filter(project=project, user=user).exists()):
        raise PermissionDenied
    return project


@login_required
def home(request):
    projects = [(p, session_list(project=p)) for p in _visible_projects(request.user)]
    return render(request, "memory/home.html", {"projects": projects})


@login_required
def session_detail(request, project_slug: str, session_id: int):
    project = _project_or_403(request.user, project_slug)
    session = AgentSession.objects.filter(project=project, pk=session_id).first()
    if session is None:
        raise Http404("No such session")
    graph = session_graph(session=session)
    context = {"project": project, "session": session, "graph": graph,
               "interactions": interaction_list(session=session).filter(status="filtered")}
    return render(request, "memory/session.html", context)
