"""Several servers and a worker on one database and one Redis, as a deployment on more than one machine
runs them (docs/deploy.md): two uvicorn processes with REDIS_URL and queue ingest (neither processes
anything itself) and one procrastinate worker. A person's browser on server 1 sees the memory an agent
sent to server 2 and the worker processed; the worker's change reaches server 1 through Redis."""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path

import pytest

from contextweaver_site.serve import running_server

from ..test_live_support import READY_LINE, redis_url  # noqa: F401 - a private redis-server for this module
from .conftest import (
    ARTIFACTS,
    ROOT,
    _test_database,
    api_get,
    login,
    new_session,
    open_session,
    other_project,
    post_interaction,
    screenshot,
    wait_live,
)


@pytest.fixture(scope="module")
def cluster(site, redis_url, django_db_blocker):  # noqa: F811
    from django.db import connection

    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "contextweaver_site.settings.test",
           "CW_DB_NAME": _test_database(connection), "DEBUG": "false", "CW_DB_POOL_SIZE": "5",
           "REDIS_URL": redis_url, "CW_TEST_INGEST_MODE": "queue", "LOG_LEVEL": "INFO"}
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    env.pop("CW_LIVE_TRANSPORT", None)  # with REDIS_URL: the channel layer, every process publishes into Redis
    project = other_project(site, django_db_blocker, "cluster", "Several servers")
    with ExitStack() as stack:
        logs = [stack.enter_context((ARTIFACTS / f"cluster-{name}.log").open("w")) for name in ("one", "two", "worker")]
        first = stack.enter_context(running_server(env, log=logs[0]))
        second = stack.enter_context(running_server(env, log=logs[1]))
        worker = subprocess.Popen([sys.executable, "manage.py", "procrastinate", "worker", "--queues", "ingest"],
                                  cwd=ROOT, env=env, stdout=logs[2], stderr=subprocess.STDOUT)
        stack.callback(lambda: (worker.terminate(), worker.wait(timeout=30)))
        yield replace(project, url=first), replace(project, url=second), logs[0].name


def test_a_page_on_one_server_shows_what_another_server_took_and_a_worker_processed(page, cluster):
    one, two, first_log = cluster
    session_id = new_session(two, "Two servers, one worker")
    login(page, one, one.member)
    open_session(page, one, session_id)
    wait_live(page)
    assert page.evaluate("cw.cy.nodes().length") == 0

    row = post_interaction(two, session_id, "The ferry to Macau leaves the Hong Kong terminal at 08:30 on Saturday")
    assert row["status"] == "pending"  # queue ingest: the server only stored it
    page.wait_for_function("() => cw.cy.nodes().length === 1", timeout=30_000)
    processed = api_get(one, f"sessions/{session_id}/interactions/{row['id']}/")
    assert processed["status"] == "kept" and processed["memory_ids"]
    assert page.evaluate("cw.cy.nodes().map(n => n.data('mid'))") == processed["memory_ids"]
    screenshot(page, "several-servers-live")
    # With LOG_LEVEL=INFO the PostgreSQL bridge logs READY_LINE when it starts (tests/test_live_websocket.py
    # waits for it): it never started, so Redis carried the worker's change to this server.
    assert READY_LINE not in Path(first_log).read_text()
