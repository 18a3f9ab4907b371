"""The project's admin pages: settings (members and roles, agent tokens: plain forms posting back here,
each act calling the same services as the API and the commands) and bulk forgetting (its script calls
the forget API and follows the job over its socket)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _

from contextweaver_site.http.pages import page_access
from memory.access import Access, NotAllowed
from memory.errors import MemoryEngineError
from memory.mirror.sync import mirror_status
from memory.models import AgentSession, Role
from memory.web.labels import KINDS, choices

from . import services
from .consumers import JOBS_SHOWN
from .engine_settings import SETTINGS as ENGINE_SETTINGS
from .engine_settings import engine_settings, engine_settings_set
from .forgetting import forget_jobs, jobs_json


def _admin(request, slug: str) -> Access:
    access = page_access(request.user, slug)
    try:
        return access.require(Role.ADMIN, agents=False)
    except NotAllowed as exc:
        raise PermissionDenied from exc


def _int(value: str) -> int:
    if not (value or "").isdigit() or len(value) > 12:
        raise MemoryEngineError(_("That form was incomplete: reload the page and try again."))
    return int(value)


def _role_label(role: str) -> str:
    return {Role.VIEWER: _("viewer"), Role.CURATOR: _("curator"), Role.ADMIN: _("admin")}.get(role, role)


@dataclass(frozen=True)
class ShownOnce:
    """A secret the page shows this once: a new token, or a new account's password link."""

    kind: str  # "token" or "link"
    value: str


def _act(access: Access, form, absolute: Callable[[str], str]) -> tuple[str, ShownOnce | None]:
    """Do what the form asks; the message to show, and what is shown only this once (if anything)."""
    project, actor, action = access.project, access.actor, form.get("action", "")
    if action == "member_add":
        membership = services.member_add(project=project, actor=actor, user=form.get("user", ""),
                                         role=form.get("role", Role.VIEWER))
        return _("%(user)s is now a member (%(role)s).") % {"user": membership.user.username,
                                                             "role": _role_label(membership.role)}, None
    if action == "account_create":
        account = services.account_create(project=project, actor=actor, username=form.get("username", ""),
                                          email=form.get("email", ""), role=form.get("role", Role.VIEWER))
        message = _("Account %(user)s created (%(role)s). Pass on this link, valid once, to choose a password.") % {
            "user": account.membership.user.username, "role": _role_label(account.membership.role)}
        return message, ShownOnce("link", absolute(account.link))
    if action == "engine_settings":
        engine_settings_set(project=project, actor=actor,
                            values={s.key: form.get(s.key, "").strip() for s in ENGINE_SETTINGS})
        return _("Engine settings saved."), None
    if action == "member_role":
        membership = services.member_role_set(project=project, actor=actor, user_id=_int(form.get("user_id")),
                                              role=form.get("role", ""))
        return _("%(user)s is now %(role)s.") % {"user": membership.user.username,
                                                  "role": _role_label(membership.role)}, None
    if action == "member_remove":
        services.member_remove(project=project, actor=actor, user_id=_int(form.get("user_id")))
        return _("The member was removed; their open pages of this project disconnected."), None
    if action == "token_create":
        issued = services.token_create(project=project, actor=actor, name=form.get("name", ""))
        return _("Token “%(name)s” created. Copy it now: it is shown only this once.") % {
            "name": issued.token.name}, ShownOnce("token", issued.raw)
    if action == "token_revoke":
        token = services.token_revoke(project=project, actor=actor, token_id=_int(form.get("token_id")))
        return _("Token “%(name)s” revoked: its next request is refused.") % {"name": token.name}, None
    raise MemoryEngineError(_("Unknown action."))


def _engine_rows(project) -> list[dict]:
    labels = {"keep_threshold": (_("Filter: keep an interaction scoring at least"),
                                 _("1–5: the weighted relevance, importance and novelty")),
              "edge_confidence_threshold": (_("Edges below this confidence await review"), _("0–1")),
              "recall_k": (_("Recall: memories returned when the agent asks for no number"), _("1–100")),
              "recall_preset": (_("Recall: preset used when the agent names none"), "vector · hybrid · ripple"),
              "risk_confidence_threshold": (_("A change flags what depends on it along inferred edges of at least "
                                              "this confidence"), _("0–1; known edges always count")),
              "risk_hops": (_("A change flags dependents up to this many edges away"), _("1–4")),
              "use_edge_threshold": (_("After a recall, a returned memory the agent does not name becomes an "
                                       "edge at this rank weight or more"),
                                     _("0–1; 0.9 ÷ rank; 1 = only the memories it names"))}
    return [{**row, "label": labels[row["key"]][0], "hint": labels[row["key"]][1]} for row in engine_settings(project)]


@login_required
def project_settings(request, project_slug: str):
    access = _admin(request, project_slug)
    message, error, raw, status = None, None, None, 200
    if request.method == "POST":
        try:
            message, raw = _act(access, request.POST, request.build_absolute_uri)
        except MemoryEngineError as exc:
            error, status = exc.message, 400
        if message and raw is None:  # nothing to show once: back to a page a reload does not re-post
            request.session["settings_message"] = message
            return redirect("project-settings", project_slug=access.project.slug)
    message = message or request.session.pop("settings_message", None)
    context = {"project": access.project, "members": services.members(project=access.project),
               "tokens": services.tokens(project=access.project), "roles": services.ROLES, "message": message,
               "error": error, "shown_once": raw, "me": request.user.pk,
               "engine_settings": _engine_rows(access.project), "mirror": mirror_status(access.project)}
    # Logged-in answers are Cache-Control: no-store (contextweaver_site/middleware.py): a new token stays in no cache.
    return render(request, "administration/settings.html", context, status=status)


@login_required
def forget_page(request, project_slug: str):
    access = _admin(request, project_slug)
    project = access.project
    sessions = (AgentSession.objects.filter(project=project).annotate(n=Count("memories"))
                .order_by("-last_activity_at", "-id").values("id", "title", "n"))
    config = {
        "projectSlug": project.slug,
        "urls": {"preview": reverse("api-forget-preview", kwargs={"project_slug": project.slug}),
                 "jobs": reverse("api-forget-jobs", kwargs={"project_slug": project.slug}),
                 "socket": f"/ws/projects/{project.slug}/forget/"},
        "jobs": jobs_json(forget_jobs(project, limit=JOBS_SHOWN)),
        "kinds": {value: str(label) for value, label in KINDS.items()},
    }
    return render(request, "administration/forget.html", {
        "project": project, "config": config, "sessions": sessions, "kinds": choices(KINDS)})
