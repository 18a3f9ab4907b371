"""Shared fixtures. Tests run on the real embedded PostgreSQL + pgvector (no database mocks)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from memory.engine.projects import project_create, session_create, token_issue
from memory.models import AgentSession, Membership, Project, Role

from .mirror_support import falkordb_url  # noqa: F401
from .openai_server import openai_server  # noqa: F401


@pytest.fixture
def project(db) -> Project:
    return project_create(name="Travel agent", slug="travel")


@pytest.fixture
def raw_token(project) -> str:
    return token_issue(project=project)[1]


@pytest.fixture
def api(raw_token) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw_token}")
    return client


@pytest.fixture
def readers(project, raw_token) -> dict[str, APIClient]:
    """The one place for an API client per kind of reader of the project: "viewer", "curator", "admin" (logged-in
    members) and "token" (the project's agent token)."""
    clients = {}
    for role in (Role.VIEWER, Role.CURATOR, Role.ADMIN):
        user = get_user_model().objects.create_user(f"reader-{role}", password="a-long-password-1")
        Membership.objects.create(project=project, user=user, role=role)
        clients[str(role)] = APIClient()
        clients[str(role)].force_login(user)
    clients["token"] = APIClient()
    clients["token"].credentials(HTTP_AUTHORIZATION=f"Bearer {raw_token}")
    return clients


@pytest.fixture
def agent_session(project) -> AgentSession:
    return session_create(project=project, title="Trip to Shanghai",
                          task="Plan a 3-day trip to Shanghai within a budget", actor="test")


LIVE_BODY_TIMEOUT = 3  # seconds: the live server's REQUEST_BODY_TIMEOUT, short so slow-body tests stay short
LIVE_POOL_SIZE = 10
LIVE_APP_NAME = "cw-live-test-server"  # libpq's application_name of the live server's connections


@pytest.fixture(scope="session")
def live_server_url(django_db_setup, django_db_blocker, tmp_path_factory) -> str:
    """A real uvicorn server (request guard, pool, queue ingest) on the test database, for tests that
    need real HTTP. Data reaches it only from `transaction=True` tests (committed rows)."""
    from .test_live_support import start_server, stop_process

    with django_db_blocker.unblock():
        server = start_server(tmp_path_factory.mktemp("live-http"), wait_for_listener=False,
                              CW_TEST_INGEST_MODE="queue", CW_BODY_TIMEOUT_SECONDS=str(LIVE_BODY_TIMEOUT),
                              CW_DB_POOL_SIZE=str(LIVE_POOL_SIZE), PGAPPNAME=LIVE_APP_NAME, LOG_LEVEL="WARNING")
    yield server.origin
    stop_process(server.process)


@pytest.fixture(scope="module")
def module_server_url(django_db_setup, django_db_blocker, tmp_path_factory) -> str:
    """A uvicorn server of the module's own, for modules that have it process interactions: a server
    process keeps its embedding space's row id, which the flush after each transaction test deletes, so
    only the module's first processing test may rely on it (a shared server would pass the stale id on
    to other modules)."""
    from .test_live_support import start_server, stop_process

    with django_db_blocker.unblock():
        server = start_server(tmp_path_factory.mktemp("module-http"), wait_for_listener=False,
                              CW_TEST_INGEST_MODE="queue", LOG_LEVEL="WARNING")
    yield server.origin
    stop_process(server.process)


def interactions_url(session: AgentSession) -> str:
    return f"/api/projects/{session.project.slug}/sessions/{session.pk}/interactions/"
