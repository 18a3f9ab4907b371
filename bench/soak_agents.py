"""The soak's simulated agents: threads that POST interactions the way a careful client should.

Every interaction carries its own idempotency key (a batch item in its body field, a single POST in
the Idempotency-Key header), and a failed request is sent again with the same key: on connection
errors and timeouts, on 429 (after its Retry-After) and on any 5xx (after Retry-After if given, else
exponential back-off with jitter). A retry answered 200 with `duplicate: true` means the first try
was stored after all, so it counts as accepted. Every answer is recorded for the report.
"""

from __future__ import annotations

import http.client
import json
import random
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from .soak_texts import Turn

REQUEST_TIMEOUT_S = 30.0
IDLE_RECONNECT_S = 4.0  # uvicorn closes idle keep-alive connections after 5 s; do not race it
BACKOFF_BASE_S, BACKOFF_CAP_S = 0.25, 8.0


@dataclass(frozen=True)
class Item:
    key: str
    turn: Turn


@dataclass
class Stats:
    """Counters shared by all agents (under one lock)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    sent: set[str] = field(default_factory=set)  # keys of interactions sent at least once
    accepted: set[str] = field(default_factory=set)  # keys answered 2xx (first try or a retry)
    rejected: dict[str, str] = field(default_factory=dict)  # key → a 4xx the client cannot fix by retrying
    given_up: set[str] = field(default_factory=set)  # keys still failing when the client's patience ran out
    statuses: Counter[str] = field(default_factory=Counter)  # "202", "503 database_unavailable", "timeout"…
    requests: int = 0
    retries: int = 0
    duplicates: int = 0  # items answered duplicate=true (a retry of something already stored)
    duplicates_first_try: int = 0  # duplicate=true on a first try: two interactions shared a key (a bug)
    # Items a retry found stored already, by the error the earlier try got: an error answer after the commit.
    stored_despite: Counter[str] = field(default_factory=Counter)
    latencies_ms: list[float] = field(default_factory=list)  # 2xx answers only
    errors: list[tuple[float, float, str]] = field(default_factory=list)  # (sent at, answered at, status) non-2xx
    successes: list[tuple[float, float]] = field(default_factory=list)  # (sent at, answered at) of 2xx

    @property
    def accepted_count(self) -> int:
        with self.lock:
            return len(self.accepted)


class Agent(threading.Thread):
    """One agent: its session's items in order, singles and batches of `batch_size`, with pauses between."""

    def __init__(self, *, index: int, base_url: str, path: str, token: str, items: list[Item], stats: Stats,
                 stop: threading.Event, seed: int, think_s: float, batch_share: float, batch_size: int,
                 give_up_s: float) -> None:
        super().__init__(name=f"agent-{index}", daemon=True)
        self.url = urlsplit(base_url)
        self.path, self.token, self.items, self.stats, self.stop = path, token, items, stats, stop
        self.rng = random.Random(f"{seed}:{index}:client")
        self.think_s, self.batch_share, self.batch_size, self.give_up_s = think_s, batch_share, batch_size, give_up_s
        self.conn: http.client.HTTPConnection | None = None
        self.last_used = 0.0
        self.crashed: BaseException | None = None

    def run(self) -> None:
        try:
            position = 0
            while position < len(self.items) and not self.stop.is_set():
                size = self.batch_size if self.rng.random() < self.batch_share else 1
                chunk = self.items[position:position + size]
                position += len(chunk)
                self._send(chunk)
                if self.think_s:
                    self.stop.wait(self.rng.uniform(0, 2 * self.think_s))
        except BaseException as exc:  # noqa: BLE001 - reported by the soak, not lost in a thread
            self.crashed = exc
        finally:
            self._close()

    # -- one logical POST, retried until accepted, refused or out of patience -------------------
    def _send(self, chunk: list[Item]) -> None:
        keys = [item.key for item in chunk]
        if len(chunk) == 1:
            turn = chunk[0].turn
            body: dict[str, Any] = {"kind": turn.kind, "content": turn.content}
            headers = {"Idempotency-Key": chunk[0].key}
        else:
            body = {"interactions": [{"kind": i.turn.kind, "content": i.turn.content, "idempotency_key": i.key}
                                     for i in chunk]}
            headers = {}
        payload = json.dumps(body).encode()
        with self.stats.lock:
            self.stats.sent.update(keys)
        deadline = time.monotonic() + self.give_up_s
        attempt = 0
        last_error = ""
        while not self.stop.is_set():
            sent_at = time.time()
            status, label, retry_after, answer = self._request(payload, headers)
            answered_at = time.time()
            with self.stats.lock:
                self.stats.requests += 1
                self.stats.retries += attempt > 0
                self.stats.statuses[label] += 1
                if status is not None and 200 <= status < 300:
                    self._accepted(keys, answer, attempt, sent_at, answered_at, last_error)
                    return
                last_error = label
                self.stats.errors.append((sent_at, answered_at, label))
                if status is not None and status < 500 and status != 429:
                    for key in keys:
                        self.stats.rejected[key] = label
                    return
            delay = retry_after if retry_after is not None else min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2 ** attempt)
            delay *= self.rng.uniform(0.8, 1.2)  # jitter: twenty agents must not retry in lockstep
            if time.monotonic() + delay > deadline:
                with self.stats.lock:
                    self.stats.given_up.update(keys)
                return
            attempt += 1
            self.stop.wait(delay)

    def _accepted(self, keys: list[str], answer: Any, attempt: int, sent_at: float, answered_at: float,
                  last_error: str) -> None:
        """Called under the stats lock with a 2xx answer; `last_error`: what the try before this one got."""
        rows = answer.get("interactions", []) if isinstance(answer, dict) else []
        self.stats.accepted.update(keys)
        self.stats.latencies_ms.append((answered_at - sent_at) * 1000)
        self.stats.successes.append((sent_at, answered_at))
        for row in rows:
            if row.get("duplicate"):
                self.stats.duplicates += 1
                self.stats.duplicates_first_try += attempt == 0
                if attempt:
                    self.stats.stored_despite[last_error] += 1

    # -- HTTP ---------------------------------------------------------------------------------
    def _request(self, payload: bytes, headers: dict[str, str]) -> tuple[int | None, str, float | None, Any]:
        """(status or None, label for the report, Retry-After seconds or None, parsed JSON answer or None)."""
        if self.conn is None or time.monotonic() - self.last_used > IDLE_RECONNECT_S:
            self._close()
            self.conn = http.client.HTTPConnection(self.url.hostname, self.url.port, timeout=REQUEST_TIMEOUT_S)
        try:
            self.conn.request("POST", self.path, body=payload, headers={
                "Authorization": f"Bearer {self.token}", "Content-Type": "application/json", **headers})
            response = self.conn.getresponse()
            raw = response.read()
        except TimeoutError:
            self._close()
            return None, "client timeout", None, None
        except (OSError, http.client.HTTPException) as exc:
            self._close()
            return None, f"connection error ({type(exc).__name__})", None, None
        finally:
            self.last_used = time.monotonic()
        try:
            answer = json.loads(raw) if raw else None
        except ValueError:
            answer = None
        code = ""
        if response.status >= 300:
            error = answer.get("error") if isinstance(answer, dict) else None
            code = f" {error.get('code')}" if isinstance(error, dict) else " (not JSON)"
        retry_after = response.getheader("Retry-After")
        try:
            seconds = min(float(retry_after), 60.0) if retry_after is not None else None
        except ValueError:
            seconds = None
        if response.getheader("Connection", "").lower() == "close":
            self._close()
        return response.status, f"{response.status}{code}", seconds, answer

    def _close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
