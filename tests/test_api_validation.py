"""Bad input over the HTTP API: 400 with field errors and nothing written; unknown objects are 404.

Every rejection is checked against the real database: the counts of interactions, change rows and
memories must not move. The tests run in transaction=True mode so that anything wrongly accepted
would also be processed (inline, on commit) and show up as a memory.
"""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import override_settings

from memory.engine.projects import project_create, session_create
from memory.models import AgentSession, GraphChange, Interaction, Memory, RecallTrace

from .conftest import interactions_url

pytestmark = pytest.mark.django_db(transaction=True)

KEPT_TEXT = "My budget is 5000 RMB for the whole trip"


def counts() -> dict[str, int]:
    return {
        "interactions": Interaction.objects.count(),
        "changes": GraphChange.objects.count(),
        "memories": Memory.objects.count(),
        "sessions": AgentSession.objects.count(),
        "recalls": RecallTrace.objects.count(),
    }


def memory_override(**values) -> override_settings:
    """MEMORY as built by settings/test.py with some keys changed (unknown keys raise)."""
    return override_settings(MEMORY={**settings.MEMORY, **values})


def assert_invalid(response, *field_names: str) -> dict:
    """A 400 in the API's one error shape, naming the given fields; returns the field errors."""
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid", error
    assert isinstance(error.get("fields"), dict) and error["fields"], error
    for name in field_names:
        assert name in error["fields"], error["fields"]
    return error["fields"]


def item_errors(batch_errors, index: int) -> dict | None:
    """The errors of one batch item, whether DRF reports the list as a list or by index."""
    if isinstance(batch_errors, list):
        return batch_errors[index] or None
    return batch_errors.get(str(index), batch_errors.get(index))


@pytest.fixture
def primed(api, agent_session) -> dict[str, int]:
    """One processed interaction already stored, so 'unchanged' is checked against non-empty tables."""
    response = api.post(interactions_url(agent_session) + "?wait=true", {"kind": "user_input", "content": KEPT_TEXT},
                        format="json")
    assert response.status_code == 201, response.content
    before = counts()
    assert before["interactions"] == 1 and before["memories"] == 1 and before["changes"] >= 3
    return before


@pytest.fixture
def url(agent_session) -> str:
    return interactions_url(agent_session)


# --- the request body as a whole ----------------------------------------------------------------


def test_malformed_json_body_is_a_field_error_and_writes_nothing(api, url, primed):
    response = api.post(url, b'{"kind": "user_input", "content": ', content_type="application/json")
    assert_invalid(response)
    assert counts() == primed


def test_json_array_body_is_rejected(api, url, primed):
    response = api.post(url, [{"kind": "user_input", "content": KEPT_TEXT}], format="json")
    assert_invalid(response, "non_field_errors")
    assert counts() == primed


def test_json_string_body_is_rejected(api, url, primed):
    response = api.post(url, "I am allergic to seafood", format="json")
    assert_invalid(response, "non_field_errors")
    assert counts() == primed


# --- one interaction ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "field"),
    [
        pytest.param({"kind": "telepathy", "content": KEPT_TEXT}, "kind", id="unknown-kind"),
        pytest.param({"kind": None, "content": KEPT_TEXT}, "kind", id="null-kind"),
        pytest.param({"content": KEPT_TEXT}, "kind", id="missing-kind"),
        pytest.param({"kind": "user_input"}, "content", id="missing-content"),
        pytest.param({"kind": "user_input", "content": ""}, "content", id="empty-content"),
        pytest.param({"kind": "user_input", "content": "  \n\t  "}, "content", id="whitespace-content"),
        pytest.param({"kind": "user_input", "content": None}, "content", id="null-content"),
        pytest.param({"kind": "user_input", "content": "a\x00b is a budget of 5000"}, "content", id="nul-in-content"),
        pytest.param({"kind": "user_input", "content": KEPT_TEXT, "occurred_at": "yesterday at noon"}, "occurred_at",
                     id="bad-occurred-at"),
        pytest.param({"kind": "user_input", "content": KEPT_TEXT, "occurred_at": "2024-02-30T10:00:00Z"},
                     "occurred_at", id="impossible-date"),
        pytest.param({"kind": "user_input", "content": KEPT_TEXT, "metadata": ["a", "b"]}, "metadata",
                     id="metadata-list"),
        pytest.param({"kind": "user_input", "content": KEPT_TEXT, "metadata": "source=chat"}, "metadata",
                     id="metadata-string"),
        pytest.param({"kind": "user_input", "content": KEPT_TEXT, "idempotency_key": "k" * 201}, "idempotency_key",
                     id="idempotency-key-too-long"),
    ],
)
def test_invalid_interaction_is_rejected_and_nothing_written(api, url, primed, body, field):
    response = api.post(url, body, format="json")
    fields = assert_invalid(response, field)
    assert set(fields) == {field}
    assert counts() == primed


def test_content_over_the_byte_limit_is_rejected(api, url, primed):
    with memory_override(MAX_CONTENT_BYTES=16):
        # 9 characters but 18 bytes in UTF-8: the limit is on bytes.
        response = api.post(url, {"kind": "user_input", "content": "é" * 9}, format="json")
        fields = assert_invalid(response, "content")
        assert "16" in " ".join(fields["content"])
        assert counts() == primed
        at_limit = api.post(url, {"kind": "user_input", "content": "budget 5000 only"}, format="json")
        assert at_limit.status_code in (201, 202), at_limit.content
    assert Interaction.objects.count() == primed["interactions"] + 1


def test_default_content_limit_is_32_kb(api, url, primed):
    response = api.post(url, {"kind": "tool_result", "content": "x" * (32 * 1024 + 1)}, format="json")
    assert_invalid(response, "content")
    assert counts() == primed


@pytest.mark.parametrize("target", ["interaction", "session"])
def test_nul_character_in_metadata_is_a_400_not_a_server_error(api, url, primed, target):
    """PostgreSQL jsonb cannot store \\u0000: the API must refuse it rather than crash."""
    api.raise_request_exception = False
    metadata = {"note": "a\x00b"}
    if target == "interaction":
        response = api.post(url, {"kind": "user_input", "content": KEPT_TEXT, "metadata": metadata}, format="json")
    else:
        response = api.post("/api/projects/travel/sessions/", {"title": "Trip", "metadata": metadata}, format="json")
    assert_invalid(response, "metadata")
    assert counts() == primed


def test_idempotency_key_header_over_the_limit_is_a_400_not_a_server_error(api, url, primed):
    """The body field is limited to 200 characters; the header must be held to the same limit."""
    api.raise_request_exception = False
    response = api.post(url, {"kind": "user_input", "content": KEPT_TEXT}, format="json",
                        HTTP_IDEMPOTENCY_KEY="k" * 201)
    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "invalid"
    assert counts() == primed


# --- batches --------------------------------------------------------------------------------------


def test_batch_over_max_batch_is_rejected(api, url, primed):
    items = [{"kind": "user_input", "content": f"Constraint number {i}: budget must stay low"} for i in range(3)]
    with memory_override(MAX_BATCH=2):
        fields = assert_invalid(api.post(url, {"interactions": items}, format="json"), "interactions")
        assert "2" in str(fields["interactions"])
        assert counts() == primed
        accepted = api.post(url, {"interactions": items[:2]}, format="json")
        assert accepted.status_code in (201, 202), accepted.content
    assert Interaction.objects.count() == primed["interactions"] + 2


def test_empty_batch_is_rejected(api, url, primed):
    assert_invalid(api.post(url, {"interactions": []}, format="json"), "interactions")
    assert counts() == primed


def test_batch_that_is_not_a_list_is_rejected(api, url, primed):
    response = api.post(url, {"interactions": {"kind": "user_input", "content": KEPT_TEXT}}, format="json")
    assert_invalid(response, "interactions")
    assert counts() == primed


@pytest.mark.parametrize(
    "bad_item",
    [
        pytest.param({"kind": "telepathy", "content": "I am allergic to seafood"}, id="unknown-kind"),
        pytest.param({"kind": "user_input", "content": "   "}, id="blank-content"),
        pytest.param({"kind": "user_input"}, id="missing-content"),
        pytest.param({"kind": "user_input", "content": "I am allergic to seafood", "metadata": [1]},
                     id="metadata-list"),
    ],
)
def test_batch_with_one_invalid_item_is_rejected_as_a_whole(api, url, primed, bad_item):
    items = [
        {"kind": "user_input", "content": "I am allergic to seafood, please avoid it"},
        bad_item,
        {"kind": "user_input", "content": "I prefer boutique hotels near the Bund"},
    ]
    fields = assert_invalid(api.post(url, {"interactions": items}, format="json"), "interactions")
    errors = fields["interactions"]
    assert item_errors(errors, 1), errors
    assert not item_errors(errors, 0) and not item_errors(errors, 2), errors
    assert counts() == primed


def test_batch_item_over_the_byte_limit_rejects_the_batch(api, url, primed):
    items = [{"kind": "user_input", "content": "budget 5000"}, {"kind": "user_input", "content": "x" * 40}]
    with memory_override(MAX_CONTENT_BYTES=32):
        fields = assert_invalid(api.post(url, {"interactions": items}, format="json"), "interactions")
    assert item_errors(fields["interactions"], 1)
    assert counts() == primed


# --- sessions -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "field"),
    [
        pytest.param({"title": "t" * 301}, "title", id="title-too-long"),
        pytest.param({"external_id": "e" * 201}, "external_id", id="external-id-too-long"),
        pytest.param({"metadata": [1, 2]}, "metadata", id="metadata-list"),
        pytest.param({"task": "x" * 8001}, "task", id="task-too-long"),
    ],
)
def test_invalid_session_is_rejected(api, primed, body, field):
    response = api.post("/api/projects/travel/sessions/", body, format="json")
    assert_invalid(response, field)
    assert counts() == primed


# --- recall ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "field"),
    [
        pytest.param({"query": "seafood", "k": 0}, "k", id="k-zero"),
        pytest.param({"query": "seafood", "k": -3}, "k", id="k-negative"),
        pytest.param({"query": "seafood", "k": 101}, "k", id="k-over-max"),
        pytest.param({"query": "seafood", "k": "many"}, "k", id="k-not-a-number"),
        pytest.param({"k": 3}, "query", id="missing-query"),
        pytest.param({"query": "", "k": 3}, "query", id="empty-query"),
        pytest.param({"query": "seafood", "session_id": "current"}, "session_id", id="bad-session-id"),
    ],
)
def test_invalid_recall_is_rejected_and_leaves_no_trace(api, primed, body, field):
    response = api.post("/api/projects/travel/recall/", body, format="json")
    assert_invalid(response, field)
    assert counts() == primed


def test_recall_k_limit_follows_settings(api, primed):
    with memory_override(MAX_RECALL_K=5):
        assert_invalid(api.post("/api/projects/travel/recall/", {"query": "budget", "k": 6}, format="json"), "k")
        ok = api.post("/api/projects/travel/recall/", {"query": "budget", "k": 5}, format="json")
        assert ok.status_code == 200, ok.content


# --- unknown objects: 404 ------------------------------------------------------------------------


@pytest.fixture
def other_session(db) -> AgentSession:
    other = project_create(name="Coding agent", slug="coding")
    return session_create(project=other, title="Fix the build", actor="test")


def assert_not_found(response) -> None:
    assert response.status_code == 404, response.content
    assert response.json()["error"]["code"] == "not_found"


def test_unknown_project_is_404(api, agent_session, primed):
    base = "/api/projects/no-such-project"
    body = {"kind": "user_input", "content": KEPT_TEXT}
    assert_not_found(api.get(f"{base}/sessions/"))
    assert_not_found(api.post(f"{base}/sessions/", {"title": "x"}, format="json"))
    assert_not_found(api.get(f"{base}/sessions/{agent_session.pk}/interactions/"))
    assert_not_found(api.post(f"{base}/sessions/{agent_session.pk}/interactions/", body, format="json"))
    assert_not_found(api.get(f"{base}/sessions/{agent_session.pk}/graph/"))
    assert_not_found(api.get(f"{base}/sessions/{agent_session.pk}/changes/"))
    assert_not_found(api.post(f"{base}/recall/", {"query": "budget"}, format="json"))
    assert counts() == primed


def session_endpoints(slug: str, session_id: int) -> list[tuple[str, str, dict | None]]:
    base = f"/api/projects/{slug}/sessions/{session_id}"
    return [
        ("get", f"{base}/interactions/", None),
        ("post", f"{base}/interactions/", {"kind": "user_input", "content": KEPT_TEXT}),
        ("post", f"{base}/interactions/", {"interactions": [{"kind": "user_input", "content": KEPT_TEXT}]}),
        ("get", f"{base}/interactions/1/", None),
        ("get", f"{base}/graph/", None),
        ("get", f"{base}/changes/", None),
    ]


def call(client, method: str, path: str, body: dict | None):
    return getattr(client, method)(path, body, format="json") if body is not None else getattr(client, method)(path)


def test_unknown_session_is_404(api, primed):
    missing = AgentSession.objects.order_by("-pk").first().pk + 1000
    for method, path, body in session_endpoints("travel", missing):
        assert_not_found(call(api, method, path, body))
    assert_not_found(api.post("/api/projects/travel/recall/", {"query": "budget", "session_id": missing},
                              format="json"))
    assert counts() == primed


def test_session_of_another_project_is_404(api, other_session, primed):
    """The session exists, but under another project: the URL's project must own it."""
    for method, path, body in session_endpoints("travel", other_session.pk):
        assert_not_found(call(api, method, path, body))
    assert_not_found(api.post("/api/projects/travel/recall/", {"query": "budget", "session_id": other_session.pk},
                              format="json"))
    assert counts() == primed
    assert not Interaction.objects.filter(session=other_session).exists()


def test_unknown_interaction_is_404(api, agent_session, primed, project):
    existing = Interaction.objects.get()
    assert api.get(f"{interactions_url(agent_session)}{existing.pk}/").status_code == 200
    assert_not_found(api.get(f"{interactions_url(agent_session)}{existing.pk + 1000}/"))
    # An interaction of another session of the same project is not found under this session.
    second = session_create(project=project, title="Another trip", actor="test")
    assert_not_found(api.get(f"{interactions_url(second)}{existing.pk}/"))


def test_huge_ids_are_404_in_paths_and_400_in_bodies_never_server_errors(api, primed):
    """Ids are bigint: a path id beyond it names nothing (404); a body id beyond it is out of range (400)."""
    huge = 10**20
    api.raise_request_exception = False
    assert_not_found(api.get(f"/api/projects/travel/sessions/{huge}/graph/"))
    fields = assert_invalid(api.post("/api/projects/travel/recall/", {"query": "budget", "session_id": huge},
                                     format="json"), "session_id")
    assert "9223372036854775807" in fields["session_id"][0]
    assert counts() == primed

