"""/healthz, /readyz and /metrics: for load balancers, orchestrators and Prometheus.

/healthz answers "the process is alive" and nothing else, so it is open (like /favicon.ico): a probe
needs no secret and learns nothing. /readyz and /metrics describe the deployment (queue depth, lag),
so they need the monitoring token (`Authorization: Bearer $CW_MONITORING_TOKEN`) or a logged-in
superuser; project tokens are agents' keys and are not accepted here. A wrong bearer token counts in
the API's failed-token throttle (per address): over its rate the answer is a 429, not a 401, while the
right token is still accepted from that address.
"""

from __future__ import annotations

import os
import secrets

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest, multiprocess

from memory.api.throttles import AuthFailureThrottle, failures_message
from memory.health import readiness
from memory.metrics import DatabaseCollector

_database_collector = DatabaseCollector()


def _refused(request: HttpRequest) -> JsonResponse | None:
    header = request.headers.get("Authorization", "")
    scheme, _, credential = header.partition(" ")
    if scheme.lower() == "bearer" and credential:
        expected = settings.MONITORING_TOKEN
        if expected and secrets.compare_digest(credential.strip().encode(), expected.encode()):
            return None
        wait = AuthFailureThrottle(request).failed()
        if wait is not None:
            response = _error(429, "throttled", failures_message(wait))
            response["Retry-After"] = str(wait)
            return response
        return _error(401, "not_authenticated", "This bearer token is not the monitoring token (CW_MONITORING_TOKEN).")
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return _error(401, "not_authenticated",
                      "Send Authorization: Bearer <CW_MONITORING_TOKEN>, or log in as a superuser.")
    if not user.is_superuser:
        return _error(403, "permission_denied", "Only superusers and the monitoring token may read this.")
    return None


def _error(status: int, code: str, message: str) -> JsonResponse:
    response = JsonResponse({"error": {"code": code, "message": message}}, status=status)
    if status == 401:
        response["WWW-Authenticate"] = 'Bearer realm="api"'  # the API's challenge
    return response


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "alive"})


@require_GET
def readyz(request: HttpRequest) -> JsonResponse:
    refused = _refused(request)
    if refused:
        return refused
    ready, report = readiness()
    return JsonResponse({"status": "ready" if ready else "not_ready", "checks": report}, status=200 if ready else 503)


@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    refused = _refused(request)
    if refused:
        return refused
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):  # several processes: sum their files
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    else:
        registry = REGISTRY
    body = generate_latest(registry) + generate_latest(_DatabaseOnly())
    return HttpResponse(body, content_type=CONTENT_TYPE_LATEST)


class _DatabaseOnly(CollectorRegistry):
    """A registry holding only the scrape-time database gauges (not summed across processes)."""

    def __init__(self) -> None:
        super().__init__(auto_describe=False)
        self.register(_database_collector)
