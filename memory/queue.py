"""The job queue's connection for workers: a LISTEN that comes back after the database does.

procrastinate (3.x) hears of new jobs on a connection of its own. When the database restarts it
tries once to reconnect; if the server is still down that attempt fails and its listener task ends
for good, so every job after a restart waited for the 5 s poll (found by `make soak`,
docs/reliability.md). The workers' connector here keeps listening: it retries with back-off and
wakes the worker when it is back, so jobs deferred meanwhile are fetched at once.

Wired in through procrastinate's Django hook (settings: PROCRASTINATE_ON_APP_READY); web processes
keep the Django connector, so jobs are still deferred in the caller's transaction.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable

from procrastinate import exceptions, psycopg_connector
from procrastinate.contrib.django import utils

logger = logging.getLogger(__name__)

FIRST_RETRY_SECONDS = 0.5
MAX_RETRY_SECONDS = 10.0
STEADY_SECONDS = 30.0


class ReconnectingPsycopgConnector(psycopg_connector.PsycopgConnector):
    retry_seconds = (FIRST_RETRY_SECONDS, MAX_RETRY_SECONDS)

    async def listen_notify(self, on_notification, channels: Iterable[str]) -> None:
        channels = list(channels)
        delay, ceiling = self.retry_seconds
        failures = 0
        while True:
            started = time.monotonic()
            try:
                if failures:  # jobs may have been deferred while nobody listened: look now
                    for channel in channels:
                        await on_notification(channel=channel, payload='{"type": "job_inserted"}')
                await super().listen_notify(on_notification=on_notification, channels=channels)
            except exceptions.ConnectorException as exc:
                if time.monotonic() - started > STEADY_SECONDS:
                    failures = 0  # it had been listening fine: this is a new outage
                failures += 1
                wait = min(delay * 2 ** min(failures - 1, 10), ceiling)
                logger.warning("queue listener lost the database (%s); retrying in %.1f s", exc, wait)
                await asyncio.sleep(wait)


def worker_connector(alias: str) -> ReconnectingPsycopgConnector:
    return ReconnectingPsycopgConnector(kwargs=utils.connector_params(alias))


def on_app_ready(app) -> None:
    """procrastinate's Django hook: workers get the reconnecting connector, everyone else is unchanged."""
    alias = app.connector.alias
    app.connector.get_worker_connector = lambda: worker_connector(alias)
