"""Who may call the agent API: project tokens, logged-in members by role, and the OpenAPI docs."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
import yaml
from django.utils import timezone
from rest_framework.test import APIClient

from memory.engine.projects import project_create, session_create, token_issue
from memory.models import AgentSession, ApiToken, GraphChange, Interaction, Membership, RecallTrace, Role

from .conftest import interactions_url

pytestmark = pytest.mark.django_db

INTERACTIONS_PATH = "/api/projects/{project_slug}/sessions/{session_id}/interactions/"


def counts() -> dict[str, int]:
    return {
        "interactions": Interaction.objects.count(),
        "changes": GraphChange.objects.count(),
        "sessions": AgentSession.objects.count(),
        "recalls": RecallTrace.objects.count(),
    }


@pytest.fixture
def interaction(api, agent_session) -> Interaction:
    response = api.post(interactions_url(agent_session) + "?wait=true",
                        {"kind": "user_input", "content": "My budget is 5000 RMB for the whole trip"}, format="json")
    assert response.status_code == 201, response.content
    return Interaction.objects.get(pk=response.json()["interactions"][0]["id"])


def endpoints(session: AgentSession, interaction: Interaction) -> list[tuple[str, str, dict | None]]:
    """Every operation of the agent API on the session's project: (method, path, JSON body)."""
    project = f"/api/projects/{session.project.slug}"
    base = f"{project}/sessions/{session.pk}"
    return [
        ("get", f"{project}/sessions/", None),
        ("post", f"{project}/sessions/", {"title": "Another trip"}),
        ("get", f"{base}/interactions/", None),
        ("post", f"{base}/interactions/", {"kind": "user_input", "content": "I am allergic to seafood"}),
        ("post", f"{base}/interactions/", {"interactions": [{"kind": "user_input", "content": "I prefer trains"}]}),
        ("get", f"{base}/interactions/{interaction.pk}/", None),
        ("get", f"{base}/graph/", None),
        ("get", f"{base}/changes/", None),
        ("post", f"{project}/recall/", {"query": "budget"}),
    ]


def call(client: APIClient, method: str, path: str, body: dict | None):
    if body is None:
        return getattr(client, method)(path)
    return getattr(client, method)(path, body, format="json")


def client_with(authorization: str | None = None, user=None) -> APIClient:
    client = APIClient()
    if authorization is not None:
        client.credentials(HTTP_AUTHORIZATION=authorization)
    if user is not None:
        client.force_login(user)
    return client


def assert_status_everywhere(client: APIClient, session, interaction, expected: int, code: str) -> None:
    for method, path, body in endpoints(session, interaction):
        response = call(client, method, path, body)
        assert response.status_code == expected, (method, path, response.content)
        assert response.json()["error"]["code"] == code, (method, path, response.content)
        if expected == 401:
            assert response.headers.get("WWW-Authenticate") == 'Bearer realm="api"', (method, path)


# --- tokens ---------------------------------------------------------------------------------------


def test_no_authorization_header_is_401_with_www_authenticate(agent_session, interaction):
    before = counts()
    assert_status_everywhere(client_with(), agent_session, interaction, 401, "not_authenticated")
    assert counts() == before


@pytest.mark.parametrize(
    "authorization",
    [
        "Bearer cw_this-is-not-a-token",
        "Bearer garbage",
        "Token garbage",
        "Bearer two parts",
        "Bearer",
    ],
)
def test_garbage_token_is_401(agent_session, interaction, authorization):
    before = counts()
    assert_status_everywhere(client_with(authorization), agent_session, interaction, 401, "authentication_failed")
    assert counts() == before


def test_unknown_scheme_is_treated_as_anonymous(agent_session, interaction, raw_token):
    before = counts()
    assert_status_everywhere(client_with(f"Basic {raw_token}"), agent_session, interaction, 401, "not_authenticated")
    assert counts() == before


def test_revoked_token_is_401(agent_session, interaction, raw_token):
    client = client_with(f"Bearer {raw_token}")
    assert client.get(f"/api/projects/travel/sessions/{agent_session.pk}/graph/").status_code == 200
    ApiToken.objects.filter(project=agent_session.project).update(revoked_at=timezone.now())
    before = counts()
    assert_status_everywhere(client, agent_session, interaction, 401, "authentication_failed")
    assert counts() == before


def test_token_scheme_is_accepted_as_well_as_bearer(agent_session, raw_token):
    response = client_with(f"Token {raw_token}").get(f"/api/projects/travel/sessions/{agent_session.pk}/graph/")
    assert response.status_code == 200, response.content


def test_token_of_another_project_is_404_everywhere(agent_session, interaction):
    """As for a project nobody has, with the same message: the answer does not tell the project exists."""
    other = project_create(name="Coding agent", slug="coding")
    session_create(project=other, title="Fix the build", actor="test")
    client = client_with(f"Bearer {token_issue(project=other)[1]}")
    before = counts()
    assert_status_everywhere(client, agent_session, interaction, 404, "not_found")
    assert counts() == before
    assert client.get("/api/projects/travel/sessions/").json() == {
        "error": {"code": "not_found", "message": "No project 'travel'."}}
    assert client.get("/api/projects/no-such-project/sessions/").json() == {
        "error": {"code": "not_found", "message": "No project 'no-such-project'."}}


def test_last_used_at_is_refreshed_when_older_than_a_minute(agent_session, raw_token):
    """token_resolve throttles the write to once a minute; a token last used days ago must be refreshed."""
    token = ApiToken.objects.get(project=agent_session.project)
    graph = f"/api/projects/travel/sessions/{agent_session.pk}/graph/"
    client = client_with(f"Bearer {raw_token}")
    for age in (timedelta(minutes=5), timedelta(days=1), timedelta(days=3, seconds=20)):
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=timezone.now() - age)
        assert client.get(graph).status_code == 200
        token.refresh_from_db()
        assert timezone.now() - token.last_used_at < timedelta(minutes=1), f"not refreshed after {age}"


def test_last_used_at_is_not_rewritten_within_a_minute(agent_session, raw_token):
    token = ApiToken.objects.get(project=agent_session.project)
    recent = timezone.now() - timedelta(seconds=10)
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=recent)
    assert client_with(f"Bearer {raw_token}").get("/api/projects/travel/sessions/").status_code == 200
    token.refresh_from_db()
    assert token.last_used_at == recent


# --- people: membership and roles ----------------------------------------------------------------


@pytest.fixture
def member(django_user_model, project):
    def make(role: str | None, username: str | None = None):
        user = django_user_model.objects.create_user(username or f"user-{role}", password="a-long-password-1")
        if role is not None:
            Membership.objects.create(project=project, user=user, role=role)
        return user

    return make


def test_logged_in_non_member_is_404_everywhere(agent_session, interaction, member, django_user_model):
    """A person outside the project gets what a slug nobody has gets: no hint that the project exists."""
    outsider = member(None, "outsider")
    # A member of another project only.
    other = project_create(name="Coding agent", slug="coding")
    Membership.objects.create(project=other, user=outsider, role=Role.ADMIN)
    before = counts()
    client = client_with(user=outsider)
    assert_status_everywhere(client, agent_session, interaction, 404, "not_found")
    assert counts() == before
    assert client.get("/api/projects/travel/sessions/").json() == {
        "error": {"code": "not_found", "message": "No project 'travel'."}}
    assert client.get("/api/projects/no-such-project/sessions/").json() == {
        "error": {"code": "not_found", "message": "No project 'no-such-project'."}}


def test_viewer_can_read_but_not_write(agent_session, interaction, member):
    client = client_with(user=member(Role.VIEWER))
    base = f"/api/projects/travel/sessions/{agent_session.pk}"
    graph = client.get(f"{base}/graph/")
    assert graph.status_code == 200, graph.content
    assert graph.json()["session"]["id"] == agent_session.pk
    assert len(graph.json()["memories"]) == 1
    for path in ("/api/projects/travel/sessions/", f"{base}/interactions/", f"{base}/interactions/{interaction.pk}/",
                 f"{base}/changes/"):
        assert client.get(path).status_code == 200, path

    before = counts()
    denied = client.post(f"{base}/interactions/", {"kind": "user_input", "content": "I am allergic to seafood"},
                         format="json")
    assert denied.status_code == 403, denied.content
    assert denied.json()["error"]["code"] == "permission_denied"
    batch = {"interactions": [{"kind": "user_input", "content": "I am allergic to seafood"}]}
    assert client.post(f"{base}/interactions/", batch, format="json").status_code == 403
    assert client.post("/api/projects/travel/sessions/", {"title": "Mine"}, format="json").status_code == 403
    assert counts() == before


@pytest.mark.parametrize("role", [Role.CURATOR, Role.ADMIN])
def test_curator_and_admin_can_post(agent_session, member, role):
    client = client_with(user=member(role))
    user = client.session.get("_auth_user_id")
    response = client.post(interactions_url(agent_session), {"kind": "user_input", "content": "I prefer trains"},
                           format="json")
    assert response.status_code == 202, response.content
    row = Interaction.objects.get(pk=response.json()["interactions"][0]["id"])
    assert row.session_id == agent_session.pk
    received = GraphChange.objects.get(op="interaction.received", object_id=row.pk)
    assert received.actor == f"user:{user}"
    created = client.post("/api/projects/travel/sessions/", {"title": "Curated"}, format="json")
    assert created.status_code == 201, created.content


def test_superuser_needs_no_membership(agent_session, django_user_model):
    admin = django_user_model.objects.create_superuser("root", password="a-long-password-1")
    client = client_with(user=admin)
    assert client.get(f"/api/projects/travel/sessions/{agent_session.pk}/graph/").status_code == 200
    response = client.post(interactions_url(agent_session), {"kind": "user_input", "content": "I prefer trains"},
                           format="json")
    assert response.status_code == 202, response.content


def test_token_actor_is_recorded(api, agent_session):
    response = api.post(interactions_url(agent_session), {"kind": "user_input", "content": "I prefer trains"},
                        format="json")
    assert response.status_code == 202, response.content
    token = ApiToken.objects.get(project=agent_session.project)
    change = GraphChange.objects.get(op="interaction.received", object_id=response.json()["interactions"][0]["id"])
    assert change.actor == f"token:{token.pk}"


# --- the OpenAPI schema and Swagger UI -----------------------------------------------------------


@pytest.mark.parametrize("path", ["/api/docs/", "/api/schema/", "/api/schema/?format=json"])
def test_docs_and_schema_need_authentication(path):
    response = APIClient().get(path)
    assert response.status_code in (401, 403), response.status_code
    assert b"openapi" not in response.content.lower()


def test_swagger_ui_works_for_a_logged_in_user(django_user_model):
    user = django_user_model.objects.create_user("reader", password="a-long-password-1")
    response = client_with(user=user).get("/api/docs/")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    html = response.content.decode()
    assert "swagger-ui" in html.lower()
    # The split view: Swagger's set-up is a script of its own (no inline script under the CSP).
    assert '<script src="/api/docs/?script="></script>' in html
    script = client_with(user=user).get("/api/docs/?script=")
    assert script.status_code == 200
    assert "/api/schema/" in script.content.decode()


def assert_openapi(schema: dict) -> None:
    assert str(schema["openapi"]).startswith("3."), schema.get("openapi")
    assert schema["info"]["title"] == "ContextWeaver agent API"
    assert INTERACTIONS_PATH in schema["paths"], sorted(schema["paths"])
    operations = schema["paths"][INTERACTIONS_PATH]
    assert {"get", "post"} <= set(operations)
    assert "requestBody" in operations["post"]


def test_schema_is_valid_openapi_json_for_a_logged_in_user(django_user_model):
    user = django_user_model.objects.create_user("reader", password="a-long-password-1")
    response = client_with(user=user).get("/api/schema/?format=json")
    assert response.status_code == 200, response.content[:500]
    assert "json" in response["Content-Type"]
    assert_openapi(json.loads(response.content))


def test_schema_is_valid_openapi_yaml_for_a_logged_in_user(django_user_model):
    user = django_user_model.objects.create_user("reader", password="a-long-password-1")
    response = client_with(user=user).get("/api/schema/")
    assert response.status_code == 200, response.content[:500]
    # drf-spectacular serves YAML as application/vnd.oai.openapi (its JSON flavour ends in +json).
    assert response["Content-Type"].startswith("application/vnd.oai.openapi;"), response["Content-Type"]
    assert_openapi(yaml.safe_load(response.content))
