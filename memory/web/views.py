"""Pages for people: the projects they belong to, a project's sessions, one session's live graph.

Pages are server-rendered; the session page also loads the graph module (frontend/), which reads the
graph API and the session's websocket with the same login.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Q, QuerySet
from django.http import Http404
from django.shortcuts import render
from django.urls import reverse

from contextweaver_site.http.pages import may_administer, may_curate, page_access

from ..access import Access
from ..engine.recall.replay import recall_list, recall_summary
from ..models import AgentSession, Memory, Project
from ..reads.rows import interaction_rows
from ..selectors import actor_names, failing_interactions, interaction_list, proposal_count, session_list
from .labels import all_choices

SESSIONS_PER_PAGE = 50
RECALLS_PER_PAGE = 50
MAX_RECALL_SEARCH = 200
RECENT_SESSIONS = 5
FILTERED_INTERACTIONS_SHOWN = 5000
# What the Filtered and Failed views read of an interaction (reads.rows.interaction_rows, masked for the reader).
PAGE_INTERACTION_FIELDS = ("id", "kind", "content", "status", "scores", "reason", "occurred_at", "error",
                           "stage_errors", "attempts")
FAILED_INTERACTIONS_SHOWN = 5000
# Counts the session list may carry (selectors.session_list); a missing one is shown as "–".
COUNT_FIELDS = ("interaction_count", "memory_count", "filtered_count", "failed_count", "edge_count", "proposal_count")


@dataclass
class SessionRow:
    session: AgentSession
    counts: dict[str, int | None]


def _rows(sessions) -> list[SessionRow]:
    return [SessionRow(s, {name: getattr(s, name, None) for name in COUNT_FIELDS}) for s in sessions]


def _last_activity(session: AgentSession):
    """The last change of the session when the selector provides it, else its recorded activity time."""
    return getattr(session, "last_change_at", None) or session.last_activity_at


def _visible_projects(user) -> QuerySet[Project]:
    if user.is_superuser:
        return Project.objects.order_by("name")
    return Project.objects.filter(memberships__user=user).order_by("name")


def _searched(sessions: QuerySet[AgentSession], query: str) -> QuerySet[AgentSession]:
    if not query:
        return sessions
    return sessions.filter(Q(title__icontains=query) | Q(task__icontains=query))


@login_required
def home(request):
    query = request.GET.get("q", "").strip()
    cards = []
    for project in _visible_projects(request.user):
        sessions = list(_searched(session_list(project=project), query))
        cards.append({
            "project": project,
            "sessions": _rows(sessions[:RECENT_SESSIONS]),
            "session_count": len(sessions),
            "memory_count": sum(getattr(s, "memory_count", 0) or 0 for s in sessions),
            "interaction_count": sum(getattr(s, "interaction_count", 0) or 0 for s in sessions),
            "last_activity": max((_last_activity(s) for s in sessions), default=None),
        })
    return render(request, "memory/home.html", {"cards": cards, "query": query})


@login_required
def project_detail(request, project_slug: str):
    access = page_access(request.user, project_slug)
    project = access.project
    query = request.GET.get("q", "").strip()
    sessions = _searched(session_list(project=project), query)
    page = Paginator(sessions, SESSIONS_PER_PAGE).get_page(request.GET.get("page"))
    context = {"project": project, "page": page, "rows": _rows(page.object_list), "query": query,
               "proposal_count": proposal_count(project=project), "is_admin": may_administer(access)}
    return render(request, "memory/project.html", context)


@login_required
def project_recalls(request, project_slug: str):
    """The project's stored recalls, newest first, searchable; each opens in its session's replay."""
    access = page_access(request.user, project_slug)
    query = request.GET.get("q", "").strip()[:MAX_RECALL_SEARCH]
    recalls = recall_list(project=access.project, show_sensitive=access.may_see_sensitive, text=query)
    page = Paginator(recalls, RECALLS_PER_PAGE).get_page(request.GET.get("page"))
    traces = list(page.object_list)
    names = actor_names(t.actor for t in traces)
    first_returned = [t.returned_ids[0] for t in traces if not t.session_id and t.returned_ids]
    home_session = dict(Memory.objects.filter(pk__in=first_returned).values_list("pk", "session_id"))
    rows = [{**recall_summary(t, names=names),
             "open_in": t.session_id or (home_session.get(t.returned_ids[0]) if t.returned_ids else None)}
            for t in traces]
    context = {"project": access.project, "page": page, "rows": rows, "query": query}
    return render(request, "memory/recalls.html", context)


@login_required
def session_detail(request, project_slug: str, session_id: int):
    access = page_access(request.user, project_slug)
    session = AgentSession.objects.filter(project=access.project, pk=session_id).first()
    if session is None:
        raise Http404("No such session")
    context = {"project": access.project, "session": session, "config": _page_config(access, session)}
    return render(request, "memory/session.html", context)


def _page_config(access: Access, session: AgentSession) -> dict[str, Any]:
    project = access.project
    kwargs = {"project_slug": project.slug, "session_id": session.pk}
    filtered = list(interaction_list(session=session).filter(status="filtered").prefetch_related("memories")
                    .order_by("-occurred_at", "-id")[:FILTERED_INTERACTIONS_SHOWN])
    # The Failed view: interactions that failed, or were kept without some of their stages (engine/stages.py).
    failing = list(failing_interactions(session=session).prefetch_related("memories")[:FAILED_INTERACTIONS_SHOWN])
    return {
        "projectSlug": project.slug,
        "sessionId": session.pk,
        "urls": {
            "graph": reverse("api-graph", kwargs=kwargs),
            "ghosts": reverse("api-graph-ghosts", kwargs=kwargs),
            "session": reverse("session-detail", kwargs={"project_slug": project.slug, "session_id": 0}),
            "changes": reverse("api-changes", kwargs=kwargs),
            "interaction": reverse("api-interaction", kwargs={**kwargs, "interaction_id": 0}),
            "promote": reverse("api-interaction-promote", kwargs={**kwargs, "interaction_id": 0}),
            "retry": reverse("api-interaction-retry", kwargs={**kwargs, "interaction_id": 0}),
            "edges": reverse("api-edges", kwargs={"project_slug": project.slug}),
            "edge": reverse("api-edge", kwargs={"project_slug": project.slug, "edge_id": 0}),
            "memory": reverse("api-memory", kwargs={"project_slug": project.slug, "memory_id": 0}),
            "repeats": reverse("api-memory-repeats", kwargs={"project_slug": project.slug, "memory_id": 0}),
            "entity": reverse("api-entity", kwargs={"project_slug": project.slug, "entity_id": 0}),
            "entityMerge": reverse("api-entity-merge", kwargs={"project_slug": project.slug, "entity_id": 0}),
            "entitySplit": reverse("api-entity-split", kwargs={"project_slug": project.slug, "entity_id": 0}),
            "undo": reverse("api-curation-undo", kwargs={"project_slug": project.slug, "act_id": 0}),
            "recall": reverse("api-recall", kwargs={"project_slug": project.slug}),
            "recalls": reverse("api-recalls", kwargs={"project_slug": project.slug}),
            "recallDetail": reverse("api-recall-detail", kwargs={"project_slug": project.slug, "recall_id": 0}),
            "recallCompare": reverse("api-recall-compare", kwargs={"project_slug": project.slug, "recall_id": 0,
                                                                   "other_id": 0}),
            "recallRerun": reverse("api-recall-rerun", kwargs={"project_slug": project.slug, "recall_id": 0}),
            "ws": f"/ws/sessions/{session.pk}/",
        },
        "canSeeSensitive": access.may_see_sensitive,
        "canCurate": may_curate(access),
        "choices": all_choices(),
        "interactions": [{key: row[key] for key in PAGE_INTERACTION_FIELDS}
                         for row in interaction_rows(access, filtered + failing)],
    }
