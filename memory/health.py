"""What /readyz reports: can this process serve, and how far behind are the queue and the mirror.

Each check is a plain function returning a JSON-able dict with `ok`; `readiness` runs them all and
never raises, so a broken part shows as `ok: false` with its error instead of a 500.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import connection
from django.utils import timezone

from .mirror.sync import mirror_lag_total
from .mirror.targets import configured_name


def database_check() -> dict[str, Any]:
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return {"ok": True, "ms": round((time.perf_counter() - started) * 1000, 2)}


def queue_check() -> dict[str, Any]:
    """Jobs by status and the age of the oldest waiting one (procrastinate's table)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT status::text, count(*), min(scheduled_at), min(id) FROM procrastinate_jobs "
                       "WHERE status IN ('todo', 'doing') GROUP BY status")
        rows = cursor.fetchall()
        jobs = {"todo": 0, "doing": 0} | {status: count for status, count, _, _ in rows}
        cursor.execute("SELECT min(e.at) FROM procrastinate_events e JOIN procrastinate_jobs j ON j.id = e.job_id "
                       "WHERE j.status = 'todo' AND e.type = 'deferred'")
        oldest = cursor.fetchone()[0]
    age = max((timezone.now() - oldest).total_seconds(), 0.0) if oldest else 0.0
    return {"ok": True, "jobs": jobs, "oldest_todo_seconds": round(age, 2)}


def channel_layer_check() -> dict[str, Any]:
    if not settings.REDIS_URL:
        return {"ok": True, "backend": "in-memory (one process; changes cross processes through PostgreSQL)"}
    import redis

    started = time.perf_counter()
    redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2).ping()
    return {"ok": True, "backend": "redis", "ms": round((time.perf_counter() - started) * 1000, 2)}


def mirror_check() -> dict[str, Any]:
    name = configured_name()
    if name is None:
        return {"ok": True, "enabled": False}
    return {"ok": True, "enabled": True, "target": name, "lag_changes": mirror_lag_total()}


CHECKS: dict[str, Callable[[], dict[str, Any]]] = {
    "database": database_check, "queue": queue_check, "channel_layer": channel_layer_check, "mirror": mirror_check,
}


def readiness() -> tuple[bool, dict[str, Any]]:
    """(ready, report): ready when every check passed."""
    report: dict[str, Any] = {}
    for name, check in CHECKS.items():
        try:
            report[name] = check()
        except Exception as exc:  # noqa: BLE001 - a failed part is reported, never raised
            report[name] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:300]}
            if name == "database":  # the rest read the database too
                connection.close_if_unusable_or_obsolete()
    return all(part["ok"] for part in report.values()), report
