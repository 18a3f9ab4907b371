"""The workers' queue listener comes back after the database does (memory/queue.py).

procrastinate's own listener tried to reconnect once and ended for good when the server was still
down, so after a database restart every job waited for the 5 s poll (make soak found it). Here the
listener's connection is cut while reconnecting is made to fail; it must keep trying, wake the
worker once it is back, and hear notifications again.
"""

from __future__ import annotations

import asyncio
import json

import psycopg
import pytest
from django.db import connection
from procrastinate.contrib.django import app

from memory.queue import ReconnectingPsycopgConnector, worker_connector

pytestmark = pytest.mark.django_db(transaction=True)

CHANNEL = "cw_test_listener"


def test_workers_get_the_reconnecting_connector():
    assert isinstance(app.connector.get_worker_connector(), ReconnectingPsycopgConnector)


def _kill_listener(params: dict) -> int:
    with psycopg.connect(host=params["host"], user=params["user"], dbname=params["dbname"], autocommit=True) as conn:
        return conn.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                            "WHERE query LIKE %s AND pid <> pg_backend_pid()", [f'LISTEN "{CHANNEL}"%']).fetchone()[0]


def _notify(params: dict, payload: str) -> None:
    with psycopg.connect(host=params["host"], user=params["user"], dbname=params["dbname"], autocommit=True) as conn:
        conn.execute("SELECT pg_notify(%s, %s)", [CHANNEL, payload])


async def _until(condition, timeout: float = 10.0) -> bool:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


def test_the_listener_survives_a_failed_reconnect_and_hears_again(tmp_path):
    params = connection.get_connection_params()
    connector = worker_connector("default")
    connector.retry_seconds = (0.05, 0.2)
    heard: list[dict] = []

    async def on_notification(*, channel: str, payload: str) -> None:
        heard.append(json.loads(payload) if payload.startswith("{") else {"raw": payload})

    async def scenario() -> None:
        await connector.open_async()
        task = asyncio.create_task(connector.listen_notify(on_notification=on_notification, channels=[CHANNEL]))
        try:
            assert await _until(lambda: _listening(params)), "the listener started"
            real_host = connector.pool.kwargs["host"]
            connector.pool.kwargs["host"] = str(tmp_path / "no-server-here")  # the server is "down"
            await asyncio.to_thread(_kill_listener, params)
            await asyncio.sleep(0.6)  # several reconnects fail meanwhile
            assert not task.done(), f"the listener gave up: {task.exception() if task.done() else ''}"
            connector.pool.kwargs["host"] = real_host  # the server is back
            assert await _until(lambda: _listening(params)), "the listener reconnected"
            assert {"type": "job_inserted"} in heard, "the worker is woken to fetch what arrived meanwhile"
            await asyncio.to_thread(_notify, params, "after-the-restart")
            assert await _until(lambda: {"raw": "after-the-restart"} in heard), heard
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await connector.close_async()

    asyncio.run(scenario())


def _listening(params: dict) -> bool:
    with psycopg.connect(host=params["host"], user=params["user"], dbname=params["dbname"], autocommit=True) as conn:
        return bool(conn.execute("SELECT 1 FROM pg_stat_activity WHERE query LIKE %s",
                                 [f'LISTEN "{CHANNEL}"%']).fetchone())
