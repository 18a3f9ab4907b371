"""Queue mode: an accepted interaction waits in the durable queue until a real worker runs it."""

from __future__ import annotations

import os
import subprocess
import sys
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
