"""One request's life, written once for both clients: send, judge the answer, wait, send again.

`exchange` is a generator that does no I/O. It yields a `Call` (send it and pass back the response or
the transport error) or a float (sleep that long, pass back None), and returns the parsed result. The
sync and async clients each drive it with their own HTTP client and sleep, so retries, back-off,
Retry-After and error mapping live here only.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import httpx2 as httpx

from .errors import Unreachable, error_for

T = TypeVar("T")

# Statuses worth another try: throttled, or the server (or the proxy before it) briefly unable to answer.
RETRY_STATUSES = frozenset({429, 502, 503, 504})
# Failures where the request surely never reached the server, so even a call that is not safe to replay
# may be sent again.
NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


@dataclass(frozen=True)
class Call(Generic[T]):
    """One API request and how to read its answer.

    `replayable`: sending it twice does no harm (reads, recall, and interactions, whose idempotency key
    makes the server store a retried one once). Others (starting a session) are sent again only when
    they cannot have arrived, or were throttled.
    """

    method: str
    path: str
    parse: Callable[[Any], T]
    params: Mapping[str, Any] | None = None
    json: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    replayable: bool = True
    form: Mapping[str, str] | None = None  # a form body instead of JSON (the login page's)


@dataclass(frozen=True)
class Retry:
    """How often and how patiently to try again: `attempts` in all, waiting `backoff` seconds, doubled
    each time up to `max_wait`, with jitter; a server's Retry-After is honoured up to `max_wait`."""

    attempts: int = 4
    backoff: float = 0.5
    max_wait: float = 10.0

    def wait(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.max_wait)
        base = min(self.backoff * 2 ** (attempt - 1), self.max_wait)
        return base * random.uniform(0.5, 1.0)


Step = Call[Any] | float
Outcome = httpx.Response | httpx.TransportError | None


def exchange(call: Call[T], retry: Retry) -> Generator[Step, Outcome, T]:
    for attempt in range(1, max(retry.attempts, 1) + 1):
        outcome = yield call
        last = attempt >= retry.attempts
        if isinstance(outcome, httpx.TransportError):
            if last or not (call.replayable or isinstance(outcome, NOT_SENT)):
                raise Unreachable(f"{call.method} {call.path}: {outcome!r}") from outcome
            yield retry.wait(attempt, None)
            continue
        assert isinstance(outcome, httpx.Response)
        if outcome.status_code < 400:
            return call.parse(_body(outcome))
        retry_after = _retry_after(outcome)
        may_retry = outcome.status_code == 429 or (call.replayable and outcome.status_code in RETRY_STATUSES)
        if last or not may_retry:
            raise error_for(outcome.status_code, _body(outcome), retry_after)
        yield retry.wait(attempt, retry_after)
    raise AssertionError("unreachable: the last attempt returns or raises")


def _body(response: httpx.Response) -> Any:
    if not response.content:
        return None
    try:
        return response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        return response.text


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("Retry-After", "")
    try:
        return max(float(value), 0.0)
    except ValueError:  # absent, or an HTTP date (not sent by ContextWeaver)
        return None
