"""/healthz, /readyz and /metrics (contextweaver_site/monitoring.py, memory/health.py, memory/metrics.py)."""

from __future__ import annotations

import re

import pytest
from django.test import override_settings

from memory.engine.recall import RecallQuery, memory_recall
from memory.engine.vector_index import cached_spaces_clear
from memory.tasks import process_interaction

from .conftest import interactions_url

TOKEN = "monitoring-token-for-the-tests-0123456789"
pytestmark = pytest.mark.django_db


def sample(text: str, name: str) -> float:
    match = re.search(rf"^{re.escape(name)} ([0-9.e+]+)$", text, flags=re.M)
    return float(match.group(1)) if match else 0.0


def test_liveness_is_open_and_says_nothing_else(client):
    response = client.get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "alive"}
    assert client.post("/healthz").status_code == 405


@override_settings(MONITORING_TOKEN=TOKEN)
def test_readiness_needs_the_monitoring_token_and_reports_each_part(client, raw_token, agent_session):
    assert client.get("/readyz").status_code == 401
    assert client.get("/readyz", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    assert client.get("/readyz", HTTP_AUTHORIZATION=f"Bearer {raw_token}").status_code == 401  # an agent's key
    before = client.get("/readyz", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert before.status_code == 200 and before.json()["status"] == "ready"
    checks = before.json()["checks"]
    assert set(checks) == {"database", "queue", "channel_layer", "mirror"} and all(c["ok"] for c in checks.values())
    assert checks["mirror"] == {"ok": True, "enabled": False}

    process_interaction.defer(interaction_id=0)  # a job waiting for a worker
    after = client.get("/readyz", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").json()["checks"]["queue"]
    assert after["jobs"]["todo"] == checks["queue"]["jobs"]["todo"] + 1


@override_settings(MONITORING_TOKEN=TOKEN, REDIS_URL="redis://127.0.0.1:1/0")
def test_a_part_that_is_down_makes_it_not_ready_without_a_server_error(client):
    response = client.get("/readyz", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 503 and response.json()["status"] == "not_ready"
    channel = response.json()["checks"]["channel_layer"]
    assert channel["ok"] is False and "ConnectionError" in channel["error"]
    assert response.json()["checks"]["database"]["ok"] is True


def test_readiness_reports_the_mirrors_lag(client, agent_session, falkordb_url):
    with override_settings(MONITORING_TOKEN=TOKEN, MIRROR_FALKORDB_URL=falkordb_url, NEO4J_URI=""):
        mirror = client.get("/readyz", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").json()["checks"]["mirror"]
    assert mirror["enabled"] is True and mirror["lag_changes"] >= 1  # the session's creation, never mirrored
    assert mirror["target"].startswith("falkordb redis://127.0.0.1:")


@pytest.fixture
def commits_run(django_capture_on_commit_callbacks):
    """Runs on-commit callbacks inside the test's transaction. Those fake commits also cache the embedding
    space's row, which the test's rollback then removes: the cache is emptied after."""
    yield django_capture_on_commit_callbacks
    cached_spaces_clear()


@override_settings(MONITORING_TOKEN=TOKEN)
def test_metrics_count_ingest_and_recall_and_read_the_queue(client, api, agent_session, project, commits_run):
    def scrape() -> str:
        response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
        assert response.status_code == 200 and response["Content-Type"].startswith("text/plain")
        return response.content.decode()

    assert client.get("/metrics").status_code == 401
    first = scrape()
    with commits_run(execute=True):
        sent = api.post(interactions_url(agent_session), {"interactions": [
            {"kind": "user_input", "content": "My budget is 5000 RMB"},
            {"kind": "user_input", "content": "I am allergic to seafood"}]}, format="json")
    assert sent.status_code in (201, 202)
    memory_recall(project=project, actor="test", query=RecallQuery("budget", preset="hybrid"))
    second = scrape()
    accepted = "contextweaver_interactions_accepted_total"
    assert sample(second, accepted) == sample(first, accepted) + 2
    recalls = 'contextweaver_recall_seconds_count{preset="hybrid"}'
    assert sample(second, recalls) == sample(first, recalls) + 1
    assert re.search(r'^contextweaver_queue_jobs\{status="todo"\} \d+', second, flags=re.M)
    assert "contextweaver_websocket_clients" in second and "contextweaver_mirror_lag_changes" not in second
