"""Rate limits of the API (DRF throttling): per agent token, per person, and per address for failed
token checks. Over a limit the answer is a 429 with Retry-After.

Rates come from REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"] (settings: CW_THROTTLE_*), read on each
request rather than at import as DRF's SimpleRateThrottle does, so a changed setting applies at once.
Counts live in Django's cache: per process with the default local-memory cache, shared by every
process once REDIS_URL is set (settings).
"""

from __future__ import annotations

from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle

from ..models import ApiToken


class _SettingsRate(SimpleRateThrottle):
    def get_rate(self) -> str | None:
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)


class TokenRateThrottle(_SettingsRate):
    """Requests per agent token."""

    scope = "token"

    def get_cache_key(self, request, view) -> str | None:
        if not isinstance(request.auth, ApiToken):
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.auth.pk}


class PersonRateThrottle(_SettingsRate):
    """Requests per logged-in person (the browser's API calls)."""

    scope = "person"

    def get_cache_key(self, request, view) -> str | None:
        if isinstance(request.auth, ApiToken) or not request.user.is_authenticated:
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.user.pk}


class AuthFailureThrottle(_SettingsRate):
    """Failed token checks per client address: guessing tokens is slowed down to the rate.

    Unlike the other throttles it counts only failures, so its two halves are called separately by
    the token authentication: `wait_seconds` before checking a token, `record` after one failed.
    """

    scope = "auth_failure"

    def __init__(self, request) -> None:
        super().__init__()
        self.key = self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}
        self.history = self.cache.get(self.key, [])
        self.now = self.timer()
        while self.history and self.history[-1] <= self.now - self.duration:
            self.history.pop()

    def wait_seconds(self) -> float | None:
        """Seconds until this address may try again, or None when it may now."""
        if self.rate is None or len(self.history) < self.num_requests:
            return None
        return self.wait()

    def record(self) -> None:
        if self.rate is not None:
            self.history.insert(0, self.now)
            self.cache.set(self.key, self.history, self.duration)
