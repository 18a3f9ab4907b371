"""The maintenance API: who may call what (viewer, curator, admin, agent token), dry runs, the uniform
error shape for bad input (and nothing written), and the OpenAPI schema."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from memory.engine.projects import project_create, token_issue
from memory.models import GraphChange, Membership, Memory, Role

from .test_maintenance_support import db_state, link, remember

pytestmark = pytest.mark.django_db

JOBS = ("decay", "merge", "summarise", "review", "forget")
CURATOR_JOBS = ("decay", "merge", "summarise", "review")


def url(job: str, slug: str = "travel") -> str:
    return f"/api/projects/{slug}/maintenance/{job}/"


@pytest.fixture
def memories(agent_session):
    texts = ["The trip to Shanghai starts on 12 October with a morning flight",
             "The hotel near the Bund is booked for three nights with breakfast",
             "Xiaoming is allergic to peanuts and shellfish at every meal"]
    found = [remember(agent_session, t) for t in texts]
    link(found[0], found[1], "temporal", confidence=0.4, needs_review=True)
    return found


@pytest.fixture
def bodies(memories):
    """A valid dry-run body per job."""
    return {
        "decay": {"dry_run": True},
        "merge": {"dry_run": True},
        "summarise": {"dry_run": True, "memory_ids": [m.pk for m in memories]},
        "review": {"dry_run": True},
        "forget": {"dry_run": True, "text_contains": "peanuts", "mode": "hard"},
    }


@pytest.fixture
def person(django_user_model, project):
    def make(role: str | None, *, superuser: bool = False) -> APIClient:
        name = f"user-{role}-{superuser}"
        if superuser:
            user = django_user_model.objects.create_superuser(name, password="a-long-password-1")
        else:
            user = django_user_model.objects.create_user(name, password="a-long-password-1")
        if role:
            Membership.objects.create(project=project, user=user, role=role)
        client = APIClient()
        client.force_login(user)
        return client

    return make


def post(client: APIClient, job: str, body, slug: str = "travel"):
    return client.post(url(job, slug), body, format="json")


def test_viewer_may_run_nothing(person, bodies):
    client = person(Role.VIEWER)
    before = db_state()
    for job in JOBS:
        response = post(client, job, bodies[job])
        assert response.status_code == 403, (job, response.content)
        assert response.json()["error"]["code"] == "permission_denied"
    assert db_state() == before


def test_curator_may_run_all_but_forget(person, bodies):
    client = person(Role.CURATOR)
    for job in CURATOR_JOBS:
        response = post(client, job, bodies[job])
        assert response.status_code == 200, (job, response.content)
        assert response.json()["dry_run"] is True and response.json()["job"] == job
    denied = post(client, "forget", bodies["forget"])
    assert denied.status_code == 403 and "admin" in denied.json()["error"]["message"]


@pytest.mark.parametrize("superuser", [False, True])
def test_admin_may_run_everything(person, bodies, superuser):
    client = person(None if superuser else Role.ADMIN, superuser=superuser)
    for job in JOBS:
        response = post(client, job, bodies[job])
        assert response.status_code == 200, (job, response.content)


def test_a_token_may_tidy_but_never_forget(api, bodies):
    for job in CURATOR_JOBS:
        assert post(api, job, bodies[job]).status_code == 200, job
    before = db_state()
    for mode in ("soft", "hard"):
        response = post(api, "forget", {**bodies["forget"], "mode": mode, "dry_run": False})
        assert response.status_code == 403, response.content
        assert response.json()["error"]["message"] == ("Forgetting needs a person with the admin role; "
                                                       "API tokens cannot forget.")
    assert db_state() == before


def test_outsiders_are_refused(bodies, project):
    other = project_create(name="Coding agent", slug="coding")
    foreign = APIClient()
    foreign.credentials(HTTP_AUTHORIZATION=f"Bearer {token_issue(project=other)[1]}")
    anonymous = APIClient()
    before = db_state()
    for job in JOBS:
        assert post(foreign, job, bodies[job]).status_code == 404, job  # as for a project nobody has
        assert post(anonymous, job, bodies[job]).status_code == 401, job
        assert post(APIClient(), job, bodies[job], slug="nope").status_code == 401
    assert db_state() == before


def test_unknown_project_is_404_for_members(person, bodies):
    client = person(None, superuser=True)
    response = post(client, "decay", bodies["decay"], slug="nope")
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize(("job", "body", "field"), [
    ("decay", {"threshold": -1}, "threshold"),
    ("decay", {"kinds": ["gossip"]}, "kinds"),
    ("decay", {"memory_ids": [999999999]}, "memory_ids"),
    ("decay", {"force": True}, "memory_ids"),
    ("decay", {"dry_run": "perhaps"}, "dry_run"),
    ("merge", {"survivor_id": 1}, "survivor_id"),
    ("merge", {"threshold": 0.1}, "threshold"),
    ("merge", {"scope": "galaxy"}, "scope"),
    ("merge", {"survivor_id": 999999999, "duplicate_ids": [999999998]}, "survivor_id"),
    ("summarise", {}, "memory_ids"),
    ("summarise", {"memory_ids": [999999999, 999999998]}, "memory_ids"),
    ("summarise", {"entity": "Atlantis"}, "entity"),
    ("summarise", {"memory_ids": "all"}, "memory_ids"),
    ("review", {"limit": 0}, "limit"),
    ("review", {"below_confidence": 2}, "below_confidence"),
    ("forget", {}, "non_field_errors"),
    ("forget", {"mode": "erase", "text_contains": "trip"}, "mode"),
    ("forget", {"text_contains": "trip", "expect_memories": 7}, "expect_memories"),
    ("forget", {"text_contains": "x"}, "text_contains"),
    ("forget", {"before": "last week"}, "before"),
    ("forget", {"text_contains": "nul\u0000byte"}, "text_contains"),
    ("forget", {"memory_ids": [999999999]}, "memory_ids"),
    ("forget", ["not", "an", "object"], "non_field_errors"),
])
def test_bad_input_is_400_in_the_uniform_shape_and_writes_nothing(person, memories, job, body, field):
    client = person(Role.ADMIN)
    before = db_state()
    response = post(client, job, body)
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid" and error["message"]
    assert field in error["fields"], error
    assert db_state() == before


def test_malformed_json_is_400(person, memories):
    client = person(Role.ADMIN)
    response = client.generic("POST", url("forget"), "{not json", content_type="application/json")
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid"


def test_unknown_session_is_404(person, memories):
    response = post(person(Role.ADMIN), "forget", {"session_id": 999999999})
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"


def test_forget_dry_run_then_confirm(person, memories, agent_session):
    client = person(Role.ADMIN)
    body = {"mode": "hard", "text_contains": "peanuts"}
    before = db_state()
    dry = post(client, "forget", {**body, "dry_run": True}).json()
    assert db_state() == before
    assert dry["counts"]["memories"] == 1 and dry["params"] == {"mode": "hard"}
    done = post(client, "forget", {**body, "expect_memories": dry["counts"]["memories"]})
    assert done.status_code == 200, done.content
    assert done.json()["counts"] == dry["counts"] and done.json()["dry_run"] is False
    assert not Memory.objects.filter(content__contains="peanuts").exists()
    user = client.session["_auth_user_id"]
    audit = GraphChange.objects.get(op="maintenance.forget")
    assert audit.actor == f"user:{user}"


def test_summarise_answers_with_the_summary_masked_for_agents(api, person, memories):
    Memory.objects.filter(pk=memories[2].pk).update(sensitive=True)
    ids = [m.pk for m in memories]
    response = post(api, "summarise", {"memory_ids": ids})
    assert response.status_code == 200, response.content
    body = response.json()
    summary = Memory.objects.get(pk=body["ids"]["summary"][0])
    assert body["summary"]["id"] == summary.pk and body["summary"]["kind"] == "summary"
    assert summary.sensitive and memories[2].content in summary.content  # three sentences: all are quoted
    assert body["summary"]["content"] == "[sensitive]"
    assert "peanut" not in json.dumps(body), "the summary's dimensions quote it too (entities, attributes)"
    assert set(body["summary"]["dimensions"]) <= {"language", "intent", "sentiment", "subjectivity", "source_kind"}
    dry = post(person(Role.CURATOR), "summarise", {"memory_ids": ids[:2], "dry_run": True}).json()
    assert dry["summary"] is None and dry["counts"] == {"members": 2, "summaries": 1, "edges": 2}


def test_review_without_an_llm_is_503_and_says_why(person, memories):
    before = db_state()
    response = post(person(Role.CURATOR), "review", {})
    assert response.status_code == 503, response.content
    error = response.json()["error"]
    assert error["code"] == "llm_not_configured" and "Edge review needs an LLM" in error["message"]
    assert db_state() == before


def test_decay_and_merge_for_real(person, memories):
    client = person(Role.CURATOR)
    response = post(client, "decay", {"memory_ids": [memories[0].pk], "force": True})
    assert response.json()["ids"]["archived"] == [memories[0].pk]
    merged = post(client, "merge", {"survivor_id": memories[1].pk, "duplicate_ids": [memories[2].pk]})
    assert merged.status_code == 200 and merged.json()["counts"]["merged"] == 1


def test_schema_documents_the_maintenance_api(person):
    response = person(Role.VIEWER).get("/api/schema/?format=json")
    assert response.status_code == 200, response.content[:300]
    paths = json.loads(response.content)["paths"]
    for job in JOBS:
        operation = paths[f"/api/projects/{{project_slug}}/maintenance/{job}/"]["post"]
        assert "requestBody" in operation and "200" in operation["responses"], job
        assert operation["tags"] == ["maintenance"]
