"""The site icon at /favicon.ico, where browsers ask for it before any page names one (a 404 otherwise).

Public like the login page: it is the same mark for everyone and says nothing about any project."""

from __future__ import annotations

from django.http import HttpResponse
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET

# Three linked nodes on the brand colour (the header's mark).
ICON_SVG = (
    "<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'><rect width='16' height='16' rx='4' fill='#4f46e5'/>"
    "<path d='M5 5 11 8 6 12' stroke='#c7d2fe' stroke-width='1' fill='none'/><circle cx='5' cy='5' r='2' fill='#fff'/>"
    "<circle cx='11' cy='8' r='2' fill='#fff'/><circle cx='6' cy='12' r='2' fill='#fff'/></svg>"
)


@require_GET
@cache_control(public=True, max_age=86400)
def favicon(request) -> HttpResponse:
    return HttpResponse(ICON_SVG, content_type="image/svg+xml")
