"""The access rule (memory/access.py) for pages: its refusals as Django's 404 and 403."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404

from memory.access import Access, NotAllowed, NotAMember, UnknownProject, project_access
from memory.models import Role


def page_access(user, slug: str) -> Access:
    """An unknown project and a project the user is not in are the same 404 (which projects exist is not
    told); a page whose role check fails later (the settings page's admin check) is a 403."""
    try:
        return project_access(slug, user=user)
    except (UnknownProject, NotAMember) as exc:
        raise Http404("No such project") from exc
    except NotAllowed as exc:
        raise PermissionDenied from exc


def may_curate(access: Access) -> bool:
    """Whether the page shows curation controls (the API checks again on every act)."""
    try:
        access.require(Role.CURATOR, agents=False)
    except NotAllowed:
        return False
    return True


def may_administer(access: Access) -> bool:
    """Whether the page links to the project's settings (the settings page checks again)."""
    try:
        access.require(Role.ADMIN, agents=False)
    except NotAllowed:
        return False
    return True
