"""Project middleware."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponseBadRequest, HttpResponseBase, JsonResponse
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


class RejectNulQueryMiddleware:
    """A NUL character (`%00`) in the query string is a 400 before any view runs.

    PostgreSQL text cannot hold NUL, so a search such as `/?q=%00` reached the database and failed
    there with a 500. (JSON bodies are checked by the API's parser: contextweaver_site/http/parsers.py.)
    """

    MESSAGE = "NUL characters (%00) are not allowed in the query string."

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if "\x00" in request.META.get("QUERY_STRING", "") or any(
                "\x00" in key or any("\x00" in value for value in values) for key, values in request.GET.lists()):
            if request.path.startswith("/api/"):
                return JsonResponse({"error": {"code": "invalid", "message": self.MESSAGE,
                                               "fields": {"query": [self.MESSAGE]}}}, status=400)
            return HttpResponseBadRequest(self.MESSAGE)
        return self.get_response(request)
