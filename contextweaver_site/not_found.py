"""404 for a URL no route matches: JSON under /api/ (clients read `error.code`), the HTML page elsewhere."""

from __future__ import annotations

from django.http import JsonResponse
from django.views.defaults import page_not_found


def not_found(request, exception=None):
    if request.path.startswith("/api/"):
        return JsonResponse({"error": {"code": "not_found", "message": f"No API endpoint at {request.path}."}},
                            status=404)
    return page_not_found(request, exception)
