"""The review queue page: the project's proposals, reviewed with the keyboard (frontend/src/review.js)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.urls import reverse

from contextweaver_site.http.pages import may_curate, page_access
from memory.models import AgentSession
from memory.web.labels import all_choices

from .services import CURATED_RELATIONS


@login_required
def review_queue_page(request, project_slug: str):
    access = page_access(request.user, project_slug)
    slug = access.project.slug
    config = {
        "projectSlug": slug,
        "urls": {
            "edges": reverse("api-edges", kwargs={"project_slug": slug}),
            "bulk": reverse("api-edges-bulk", kwargs={"project_slug": slug}),
            "edge": reverse("api-edge", kwargs={"project_slug": slug, "edge_id": 0}),
            "undo": reverse("api-curation-undo", kwargs={"project_slug": slug, "act_id": 0}),
            "acts": reverse("api-curation-actions", kwargs={"project_slug": slug}),
            "entities": reverse("api-entities", kwargs={"project_slug": slug}),
            "entityMerge": reverse("api-entity-merge", kwargs={"project_slug": slug, "entity_id": 0}),
            "entityDismiss": reverse("api-entity-dismiss", kwargs={"project_slug": slug, "entity_id": 0}),
            "session": reverse("session-detail", kwargs={"project_slug": slug, "session_id": 0}),
            # "Possibly out of date": the project's at-risk memories (?at_risk=true) and the acts that settle them
            "memories": reverse("api-memories", kwargs={"project_slug": slug}),
            "memory": reverse("api-memory", kwargs={"project_slug": slug, "memory_id": 0}),
        },
        "canCurate": may_curate(access),
        "relations": list(CURATED_RELATIONS),
        "choices": all_choices(),
    }
    session = _session(access, request.GET.get("session", ""))
    return render(request, "curation/review.html", {"project": access.project, "config": config, "session": session})


def _session(access, value: str) -> AgentSession | None:
    """The session the queue is narrowed to (?session=<id>), if it is one of the project's."""
    return AgentSession.objects.filter(project=access.project, pk=int(value)).first() if value.isdigit() \
        and len(value) < 19 else None
