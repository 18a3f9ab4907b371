"""Queue mode: an accepted interaction waits in the durable queue until a real worker runs it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.test import override_settings

from memory.models import Interaction, Memory

from .conftest import interactions_url

ROOT = Path(__file__).resolve().parent.parent
QUEUE = {**settings.MEMORY, "INGEST_MODE": "queue"}

pytestmark = pytest.mark.django_db(transaction=True)


def _run_worker_once() -> subprocess.CompletedProcess:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "contextweaver_site.settings.base",
           "CW_DB_NAME": connection.settings_dict["NAME"], "CW_EMBEDDER": "hashing", "CW_LLM": "none"}
    return subprocess.run(
        [sys.executable, "manage.py", "procrastinate", "worker", "--queues", "ingest", "--one-shot"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )


@override_settings(MEMORY=QUEUE)
def test_worker_processes_queued_interactions(api, agent_session):
    response = api.post(interactions_url(agent_session), {"interactions": [
        {"kind": "user_input", "content": "The hotel must be near the Bund"},
        {"kind": "user_input", "content": "thanks"},
    ]}, format="json")
    assert response.status_code == 202
    assert set(Interaction.objects.values_list("status", flat=True)) == {"pending"}
    assert not Memory.objects.exists()

    result = _run_worker_once()
    assert result.returncode == 0, result.stderr[-2000:]
    statuses = dict(Interaction.objects.values_list("content", "status"))
    assert statuses == {"The hotel must be near the Bund": "kept", "thanks": "filtered"}
    assert Memory.objects.get().kind == "constraint"


@override_settings(MEMORY=QUEUE)
def test_wait_flag_processes_now_and_the_queued_job_is_a_no_op(api, agent_session):
    url = interactions_url(agent_session) + "?wait=true"
    response = api.post(url, {"kind": "user_input", "content": "Budget is 5000 RMB in total"}, format="json")
    assert response.status_code == 201 and response.json()["interactions"][0]["status"] == "kept"
    assert _run_worker_once().returncode == 0
    assert Memory.objects.count() == 1


@override_settings(MEMORY=QUEUE)
def test_several_workers_keep_a_sessions_order(api, agent_session):
    """Jobs carry the session's lock, so two workers still process a session in order: every memory's
    next_in_session parent is the memory just before it."""
    texts = ["The flight to Shanghai leaves Beijing at 08:40 on 12 October",
             "Hotel budget is 800 RMB per night near the Bund",
             "My colleague Wang Fang joins us on the second day",
             "We need an airport pickup for three people with luggage",
             "Book the acrobatics show tickets for Saturday evening",
             "The museum is closed on Mondays, plan it for Tuesday",
             "Dinner reservation at Lost Heaven for 19:30 on Friday",
             "Remember the train back to Beijing leaves at 17:05 on 14 October"]
    response = api.post(interactions_url(agent_session), {"interactions": [
        {"kind": "user_input", "content": text} for text in texts]}, format="json")
    assert response.status_code == 202
    with connection.cursor() as cursor:
        ids = list(Interaction.objects.filter(session=agent_session).values_list("pk", flat=True))
        cursor.execute("SELECT DISTINCT lock FROM procrastinate_jobs WHERE queue_name = 'ingest' "
                       "AND (args->>'interaction_id')::bigint = ANY(%s)", [ids])
        assert cursor.fetchall() == [(f"session:{agent_session.pk}",)]

    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "contextweaver_site.settings.base",
           "CW_DB_NAME": connection.settings_dict["NAME"], "CW_EMBEDDER": "hashing", "CW_LLM": "none"}
    workers = [subprocess.Popen(
        [sys.executable, "manage.py", "procrastinate", "worker", "--queues", "ingest", "--concurrency", "1",
         "--fetch-job-polling-interval", "0.5"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    try:
        deadline = time.monotonic() + 120
        while Interaction.objects.filter(session=agent_session, status="pending").exists():
            for worker in workers:
                assert worker.poll() is None, worker.stderr.read()[-2000:]
            assert time.monotonic() < deadline, "the workers did not finish the session"
            time.sleep(0.3)
    finally:
        for worker in workers:
            worker.terminate()
        for worker in workers:
            worker.wait(timeout=30)
    statuses = list(Interaction.objects.filter(session=agent_session).values_list("status", "reason"))
    memories = list(Memory.objects.filter(session=agent_session).order_by("occurred_at", "id"))
    assert len(memories) == len(texts), statuses
    for before, after in zip(memories, memories[1:], strict=False):
        parents = list(after.in_edges.filter(relation="next_in_session").values_list("source_id", flat=True))
        assert parents == [before.pk], (after.content, parents)
