"""Many agents at once against a real server: no 5xx, a bounded number of database connections, and
every accepted interaction stored exactly once (with retries of the same key answered as duplicates).

Before the connection pool, 20 clients × 25 posts took PostgreSQL to its 200-connection limit and a
few percent of the requests were 500s.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import psycopg
import pytest
from django.db import connection

from memory.engine.projects import project_create, session_create, token_issue
from memory.models import Interaction

from .conftest import LIVE_APP_NAME, LIVE_POOL_SIZE

pytestmark = pytest.mark.django_db(transaction=True)

CLIENTS = 50
POSTS_EACH = 20
# The server's pool plus its live-view LISTEN connection.
CONNECTION_BOUND = LIVE_POOL_SIZE + 1


class ConnectionSampler(threading.Thread):
    """Counts the live server's database connections (by their application_name) every 50 ms."""

    def __init__(self, database: str) -> None:
        super().__init__(daemon=True)
        self.database = database
        self.peak = 0
        self.peak_queries: list[str] = []
        self.stop = threading.Event()

    def _connect(self) -> psycopg.Connection:
        params = connection.get_connection_params()
        return psycopg.connect(host=params["host"], user=params["user"], dbname=self.database, autocommit=True)

    def _rows(self, conn: psycopg.Connection) -> list[tuple[int, str]]:
        return conn.execute("SELECT pid, left(query, 60) FROM pg_stat_activity WHERE datname = %s"
                            " AND application_name = %s", [self.database, LIVE_APP_NAME]).fetchall()

    def count(self) -> int:
        with self._connect() as conn:
            return len(self._rows(conn))

    def run(self) -> None:
        with self._connect() as conn:
            while not self.stop.is_set():
                rows = self._rows(conn)
                if len(rows) > self.peak:
                    self.peak, self.peak_queries = len(rows), [q for _, q in rows]
                time.sleep(0.05)


def agent(url: str, path: str, token: str, client: int) -> list[tuple[int, int | None, bool]]:
    """POST_EACH interactions, each retried once with the same key (as an agent after a timeout)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    results = []
    for n in range(POSTS_EACH):
        body = json.dumps({"kind": "user_input", "content": f"Agent {client} constraint {n}: budget {n * 10} EUR",
                           "idempotency_key": f"agent-{client}-{n}"})
        for _attempt in range(2 if n % 5 == 0 else 1):
            conn.request("POST", path, body=body, headers=headers)
            response = conn.getresponse()
            payload = json.loads(response.read() or b"{}")
            row = (payload.get("interactions") or [{}])[0]
            results.append((response.status, row.get("id"), bool(row.get("duplicate"))))
    conn.close()
    return results


def test_fifty_agents_at_once(live_server_url):
    project = project_create(name="Load", slug="load")
    session = session_create(project=project, title="load", actor="test")
    token = token_issue(project=project)[1]
    path = f"/api/projects/load/sessions/{session.pk}/interactions/"
    database = connection.settings_dict["NAME"]
    sampler = ConnectionSampler(database)
    sampler.start()
    try:
        with ThreadPoolExecutor(CLIENTS) as pool:
            runs = list(pool.map(lambda c: agent(live_server_url, path, token, c), range(CLIENTS)))
    finally:
        sampler.stop.set()
        sampler.join()
    results = [r for run in runs for r in run]
    statuses = Counter(status for status, _, _ in results)
    assert set(statuses) <= {200, 202}, statuses
    first_answers = [r for r in results if not r[2]]
    assert len(first_answers) == CLIENTS * POSTS_EACH
    assert statuses[200] == CLIENTS * (POSTS_EACH // 5), "each retry is answered as a duplicate"
    stored = Interaction.objects.filter(session=session)
    assert stored.count() == CLIENTS * POSTS_EACH
    keys = Counter(stored.values_list("idempotency_key", flat=True))
    assert len(keys) == CLIENTS * POSTS_EACH and max(keys.values()) == 1
    accepted_ids = {i for _, i, _ in results}
    assert accepted_ids == set(stored.values_list("id", flat=True))
    assert 0 < sampler.peak <= CONNECTION_BOUND, (sampler.peak, sampler.peak_queries)
    time.sleep(1)
    left = sampler.count()
    assert left <= CONNECTION_BOUND, left
    print(f"\nload: {len(results)} requests, statuses {dict(statuses)}, peak server connections {sampler.peak}, "
          f"{left} open afterwards")
