"""Project middleware."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponseBase
from django.utils.cache import patch_cache_control
from django.utils.deprecation import MiddlewareMixin


class NoStoreWhenAuthenticatedMiddleware(MiddlewareMixin):
    """`Cache-Control: private, no-store` on every answer to a logged-in user or an authenticated API call.

    Pages, admin screens and API JSON show project data; without this a shared proxy or the browser's disk cache
    (and its back button after logout) could keep them. Static files never get here (WhiteNoise answers earlier),
    so they stay cacheable. Goes after AuthenticationMiddleware; DRF's token authentication sets request.user on
    the Django request too, so API calls with a token are covered when the response passes back through.
    """

    def process_response(self, request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
        user = getattr(request, "user", None)
        authenticated = bool(user is not None and user.is_authenticated)
        if authenticated or "HTTP_AUTHORIZATION" in request.META:
            patch_cache_control(response, private=True, no_store=True)
        return response
