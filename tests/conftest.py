"""Shared fixtures. Tests run on the real embedded PostgreSQL + pgvector (no database mocks)."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from memory.engine.projects import project_create, session_create, token_issue
from memory.models import AgentSession, Project

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
def agent_session(project) -> AgentSession:
    return session_create(project=project, title="Trip to Shanghai",
                          task="Plan a 3-day trip to Shanghai within a budget", actor="test")


def interactions_url(session: AgentSession) -> str:
    return f"/api/projects/{session.project.slug}/sessions/{session.pk}/interactions/"
