"""Rate limits of the API (DRF throttling): per agent token, per person, and per address for failed
token checks. Over a limit the answer is a 429 with Retry-After.

Rates come from REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"] (settings: CW_THROTTLE_*), read on each
request rather than at import as DRF's SimpleRateThrottle does, so a changed setting applies at once.
Counts live in Django's cache: per process with the default local-memory cache, shared by every
process once REDIS_URL is set (settings).

The client address is DRF's get_ident under REST_FRAMEWORK["NUM_PROXIES"] (CW_NUM_PROXIES, default 0:
REMOTE_ADDR, never a client's own X-Forwarded-For, which would let each guess name a new address).
"""

from __future__ import annotations

import math
from types import SimpleNamespace

from rest_framework.exceptions import Throttled
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


FAILURES_MESSAGE = "Too many failed token checks from this address."


def failures_message(wait: int) -> str:
    """The 429's message, worded as DRF words it for the API's Throttled."""
    return str(Throttled(wait, detail=FAILURES_MESSAGE).detail)


class AuthFailureThrottle(_SettingsRate):
    """Failed token checks per client address: once an address is over the rate, each token from it
    that does not check out is a 429 instead of a 401 until the window passes.

    Unlike the other throttles it counts only failures: the token is checked first, and only a token
    that failed comes here (`failed`). A token that checks out is accepted whatever its address did,
    so one misconfigured agent (or a guesser behind the same proxy or NAT) does not lock out every
    agent there. Used by the API's token authentication, the request guard (large bodies, before
    Django reads them) and the monitoring endpoints (/readyz, /metrics), all with one count.
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

    def failed(self) -> int | None:
        """A token from this address did not check out: the seconds to send as Retry-After with a 429
        when the address is over the rate (not counted again), else None after counting it (a 401)."""
        wait = self.wait_seconds()
        if wait is None:
            self.record()
            return None
        return max(1, math.ceil(wait))

    @classmethod
    def for_address(cls, remote_addr: str | None, forwarded_for: str | None) -> AuthFailureThrottle:
        """The count of a request known only by its ASGI scope (the request guard): the same address,
        and so the same cache key, as DRF's get_ident gives the request once Django has it."""
        headers = {} if forwarded_for is None else {"x-forwarded-for": forwarded_for}
        return cls(SimpleNamespace(headers=headers, META={"REMOTE_ADDR": remote_addr}))
