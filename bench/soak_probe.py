"""How fast an idle worker starts a new job, before and after the database restart.

A procrastinate worker hears of new jobs by LISTEN/NOTIFY and polls only every 5 s as a fallback, so
"POST → processing starts" is a few milliseconds while its listener is connected and up to the
polling interval once it is not. The backlog of the soak hides the difference, so this posts single
interactions to an idle system, one at a time, and reads the job's `deferred` and `started` events
(procrastinate_events) for each.
"""

from __future__ import annotations

import http.client
import json
import time
from typing import Any
from urllib.parse import urlsplit

PICKUP_SQL = """
SELECT extract(epoch FROM started.at - deferred.at) * 1000
FROM procrastinate_jobs job
JOIN procrastinate_events deferred ON deferred.job_id = job.id AND deferred.type = 'deferred'
JOIN procrastinate_events started ON started.job_id = job.id AND started.type = 'started'
WHERE job.args->>'interaction_id' = %s
ORDER BY started.at LIMIT 1
"""


DONE_SQL = "SELECT 1 FROM procrastinate_jobs WHERE args->>'interaction_id' = %s AND status NOT IN ('todo', 'doing')"


def _query_one(sql: str, params: list[Any]) -> Any:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    return row[0] if row else None


def wait_for_workers(count: int, timeout: float = 60.0) -> bool:
    """Until `count` workers have registered (procrastinate_workers), so a probe does not time their start."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (_query_one("SELECT count(*) FROM procrastinate_workers", []) or 0) >= count:
            return True
        time.sleep(0.2)
    return False


def probe_pickup(*, url: str, token: str, session_id: int, project_slug: str, label: str, count: int,
                 wait_s: float = 15.0) -> list[float | None]:
    """Milliseconds from a job's deferral to its start, for `count` single POSTs, each 1 s after the previous
    job ended (None: not started within `wait_s`)."""
    parsed = urlsplit(url)
    path = f"/api/projects/{project_slug}/sessions/{session_id}/interactions/"
    delays: list[float | None] = []
    for n in range(count):
        body = json.dumps({"kind": "user_input",
                           "content": f"Probe {label} {n}: remember that the {label} check budget is {100 + n} EUR."})
        conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
        try:
            conn.request("POST", path, body=body, headers={
                "Authorization": f"Bearer {token}", "Content-Type": "application/json",
                "Idempotency-Key": f"probe-{label}-{n}-{time.time_ns()}"})
            response = conn.getresponse()
            answer = json.loads(response.read() or b"{}")
        except (OSError, http.client.HTTPException, ValueError):
            delays.append(None)
            continue
        finally:
            conn.close()
        if response.status != 202:
            delays.append(None)
            continue
        interaction_id = str(answer["interactions"][0]["id"])
        deadline = time.monotonic() + wait_s
        delay = None
        while delay is None and time.monotonic() < deadline:
            delay = _query_one(PICKUP_SQL, [interaction_id])
            if delay is None:
                time.sleep(0.05)
        delays.append(None if delay is None else round(float(delay), 1))
        # The next probe's job shares this one's session lock: if it were deferred while this job still runs,
        # it would start at the next poll, not on its NOTIFY (procrastinate fetches again on a notification or
        # a poll, not when a job ends). So wait for the end, then leave the workers idle for a second.
        while time.monotonic() < deadline + wait_s and _query_one(DONE_SQL, [interaction_id]) is None:
            time.sleep(0.05)
        time.sleep(1.0)
    return delays


def summary(delays: list[float | None]) -> dict[str, Any]:
    started = sorted(d for d in delays if d is not None)
    return {"probes": len(delays), "not_started": len(delays) - len(started), "ms": delays,
            "p50_ms": started[len(started) // 2] if started else None, "max_ms": started[-1] if started else None}
