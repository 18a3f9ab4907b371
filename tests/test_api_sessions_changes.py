"""Sessions, idempotent and batched interactions, the change log and the session graph, over HTTP.

transaction=True: test settings process interactions inline on commit, so memories, edges and
their change rows only exist when the request's transaction really commits.
"""

from __future__ import annotations

import pytest
from django.db.models import Max
from rest_framework.test import APIClient

from memory.engine.projects import project_create, session_create, token_issue
from memory.models import AgentSession, Edge, GraphChange, Interaction, Membership, Memory, Role

from .conftest import interactions_url

pytestmark = pytest.mark.django_db(transaction=True)

BUDGET = "My budget is 5000 RMB for the whole trip"
ALLERGY = "I am allergic to seafood, please avoid it"
HOTEL = "I prefer boutique hotels near the Bund"
CHIT_CHAT = "ok thanks"


def send(client: APIClient, session: AgentSession, content: str, *, kind: str = "user_input", **extra) -> dict:
    """Post one interaction and wait for its processing; the accepted row of the answer."""
    response = client.post(interactions_url(session) + "?wait=true", {"kind": kind, "content": content, **extra},
                           format="json")
    assert response.status_code == 201, response.content
    return response.json()["interactions"][0]


def changes_url(session: AgentSession) -> str:
    return f"/api/projects/{session.project.slug}/sessions/{session.pk}/changes/"


def graph_url(session: AgentSession) -> str:
    return f"/api/projects/{session.project.slug}/sessions/{session.pk}/graph/"


def counts() -> dict[str, int]:
    return {"interactions": Interaction.objects.count(), "changes": GraphChange.objects.count(),
            "memories": Memory.objects.count()}


def user_client(django_user_model, project, role: str) -> APIClient:
    user = django_user_model.objects.create_user(f"user-{role}", password="a-long-password-1")
    Membership.objects.create(project=project, user=user, role=role)
    client = APIClient()
    client.force_login(user)
    return client


# --- sessions -------------------------------------------------------------------------------------


def test_create_session(api, project):
    body = {"title": "Trip to Beijing", "task": "Plan 2 days in Beijing", "external_id": "run-42",
            "metadata": {"agent": "planner", "version": 3}}
    response = api.post("/api/projects/travel/sessions/", body, format="json")
    assert response.status_code == 201, response.content
    data = response.json()
    session = AgentSession.objects.get(pk=data["id"])
    assert session.project_id == project.pk
    assert (session.title, session.task, session.external_id, session.metadata) == (
        body["title"], body["task"], body["external_id"], body["metadata"])
    assert {k: data[k] for k in body} == body
    change = GraphChange.objects.get(session=session)
    assert change.op == "session.created" and change.object_id == session.pk


def test_create_session_with_no_fields(api):
    response = api.post("/api/projects/travel/sessions/", {}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["external_id"] == "" and response.json()["metadata"] == {}


def test_duplicate_external_id_is_400_with_field_errors(api, project):
    first = api.post("/api/projects/travel/sessions/", {"title": "A", "external_id": "run-1"}, format="json")
    assert first.status_code == 201, first.content
    before = (AgentSession.objects.count(), GraphChange.objects.count())
    second = api.post("/api/projects/travel/sessions/", {"title": "B", "external_id": "run-1"}, format="json")
    assert second.status_code == 400, second.content
    assert (AgentSession.objects.count(), GraphChange.objects.count()) == before
    error = second.json()["error"]
    assert error["code"] == "invalid"
    # The API's one error shape puts field errors under "fields", as for every other 400.
    assert "external_id" in error.get("fields", {}), error


def test_external_id_is_unique_per_project_only_and_blank_may_repeat(api, project):
    other = project_create(name="Coding agent", slug="coding")
    session_create(project=other, title="Theirs", external_id="run-1", actor="test")
    assert api.post("/api/projects/travel/sessions/", {"external_id": "run-1"}, format="json").status_code == 201
    assert api.post("/api/projects/travel/sessions/", {"title": "x"}, format="json").status_code == 201
    assert api.post("/api/projects/travel/sessions/", {"title": "y"}, format="json").status_code == 201
    assert AgentSession.objects.filter(project=project).count() == 3


def test_session_list_shows_counts(api, project, agent_session):
    quiet = session_create(project=project, title="Quiet", actor="test")
    for content in (BUDGET, ALLERGY, CHIT_CHAT):
        send(api, agent_session, content)
    other = project_create(name="Coding agent", slug="coding")
    session_create(project=other, title="Not listed", actor="test")

    response = api.get("/api/projects/travel/sessions/")
    assert response.status_code == 200, response.content
    rows = {row["id"]: row for row in response.json()}
    assert set(rows) == {agent_session.pk, quiet.pk}
    assert (rows[agent_session.pk]["interaction_count"], rows[agent_session.pk]["memory_count"]) == (3, 2)
    assert (rows[quiet.pk]["interaction_count"], rows[quiet.pk]["memory_count"]) == (0, 0)
    busy = rows[agent_session.pk]
    assert busy["filtered_count"] == 1  # the chit-chat
    assert busy["edge_count"] == Edge.objects.filter(session=agent_session).count() >= 1
    assert busy["proposal_count"] == Edge.objects.filter(session=agent_session, needs_review=True).count()
    assert busy["last_change_at"] is not None and rows[quiet.pk]["edge_count"] == 0
    # Most recently active first.
    assert [row["id"] for row in response.json()] == [agent_session.pk, quiet.pk]


# --- idempotency ----------------------------------------------------------------------------------


def test_same_idempotency_key_twice_stores_one_interaction(api, agent_session):
    body = {"kind": "user_input", "content": BUDGET, "idempotency_key": "msg-1"}
    first = api.post(interactions_url(agent_session), body, format="json")
    assert first.status_code == 202, first.content
    first_row = first.json()["interactions"][0]
    assert first_row["duplicate"] is False

    second = api.post(interactions_url(agent_session), body, format="json")
    assert second.status_code == 200, second.content
    second_row = second.json()["interactions"][0]
    assert second_row["duplicate"] is True
    assert second_row["id"] == first_row["id"]
    assert Interaction.objects.filter(session=agent_session).count() == 1
    assert GraphChange.objects.filter(op="interaction.received").count() == 1
    assert Memory.objects.filter(session=agent_session).count() == 1


def test_idempotency_key_header_for_a_single_post(api, agent_session):
    body = {"kind": "user_input", "content": ALLERGY}
    first = api.post(interactions_url(agent_session), body, format="json", HTTP_IDEMPOTENCY_KEY="hdr-7")
    assert first.status_code == 202, first.content
    second = api.post(interactions_url(agent_session), body, format="json", HTTP_IDEMPOTENCY_KEY="hdr-7")
    assert second.status_code == 200, second.content
    assert second.json()["interactions"][0] == {**second.json()["interactions"][0],
                                                "id": first.json()["interactions"][0]["id"], "duplicate": True}
    row = Interaction.objects.get(session=agent_session)
    assert row.idempotency_key == "hdr-7"
    # A different header value is a different interaction.
    third = api.post(interactions_url(agent_session), body, format="json", HTTP_IDEMPOTENCY_KEY="hdr-8")
    assert third.status_code == 202
    assert Interaction.objects.filter(session=agent_session).count() == 2


def test_body_idempotency_key_wins_over_the_header(api, agent_session):
    body = {"kind": "user_input", "content": HOTEL, "idempotency_key": "body-key"}
    response = api.post(interactions_url(agent_session), body, format="json", HTTP_IDEMPOTENCY_KEY="header-key")
    assert response.status_code == 202
    assert Interaction.objects.get(session=agent_session).idempotency_key == "body-key"


def test_same_key_in_two_sessions_creates_two_rows(api, project, agent_session):
    other = session_create(project=project, title="Second trip", actor="test")
    body = {"kind": "user_input", "content": BUDGET, "idempotency_key": "shared"}
    a = api.post(interactions_url(agent_session), body, format="json")
    b = api.post(interactions_url(other), body, format="json")
    assert (a.status_code, b.status_code) == (202, 202)
    ids = {a.json()["interactions"][0]["id"], b.json()["interactions"][0]["id"]}
    assert len(ids) == 2
    assert not a.json()["interactions"][0]["duplicate"] and not b.json()["interactions"][0]["duplicate"]
    assert Interaction.objects.filter(idempotency_key="shared").count() == 2


def test_batch_with_a_repeated_key_marks_only_the_repeat(api, agent_session):
    send(api, agent_session, BUDGET, idempotency_key="k1")
    items = [{"kind": "user_input", "content": BUDGET, "idempotency_key": "k1"},
             {"kind": "user_input", "content": ALLERGY, "idempotency_key": "k2"}]
    response = api.post(interactions_url(agent_session), {"interactions": items}, format="json")
    assert response.status_code == 202, response.content
    rows = response.json()["interactions"]
    assert [r["duplicate"] for r in rows] == [True, False]
    assert Interaction.objects.filter(session=agent_session).count() == 2


# --- batches --------------------------------------------------------------------------------------


def test_batch_of_three_is_accepted_in_order(api, agent_session):
    items = [{"kind": "user_input", "content": BUDGET},
             {"kind": "assistant_output", "content": "Noted, I will keep the plan within 5000 RMB"},
             {"kind": "user_input", "content": ALLERGY}]
    response = api.post(interactions_url(agent_session), {"interactions": items}, format="json")
    assert response.status_code == 202, response.content
    rows = response.json()["interactions"]
    assert len(rows) == 3
    ids = [r["id"] for r in rows]
    assert ids == sorted(ids) and len(set(ids)) == 3
    assert all(r["duplicate"] is False for r in rows)
    stored = {i.pk: i for i in Interaction.objects.filter(session=agent_session)}
    assert set(stored) == set(ids)
    assert [stored[i].content for i in ids] == [item["content"] for item in items]
    assert [stored[i].kind for i in ids] == [item["kind"] for item in items]


def test_batch_with_wait_is_processed_before_the_answer(api, agent_session):
    items = [{"kind": "user_input", "content": BUDGET}, {"kind": "user_input", "content": CHIT_CHAT},
             {"kind": "user_input", "content": ALLERGY}]
    response = api.post(interactions_url(agent_session) + "?wait=true", {"interactions": items}, format="json")
    assert response.status_code == 201, response.content
    rows = response.json()["interactions"]
    assert [r["status"] for r in rows] == ["kept", "filtered", "kept"]
    assert all(r["status"] != "pending" for r in rows)
    assert rows[0]["memory_ids"] and rows[2]["memory_ids"] and rows[1]["memory_ids"] == []
    assert rows[1]["reason"]
    kept = Memory.objects.filter(session=agent_session).order_by("id")
    assert [m.pk for m in kept] == rows[0]["memory_ids"] + rows[2]["memory_ids"]


def test_interaction_detail_and_list(api, agent_session):
    row = send(api, agent_session, BUDGET, metadata={"turn": 1})
    detail = api.get(f"{interactions_url(agent_session)}{row['id']}/")
    assert detail.status_code == 200
    data = detail.json()
    assert (data["id"], data["status"], data["content"], data["metadata"]) == (row["id"], "kept", BUDGET, {"turn": 1})
    assert data["memory_ids"] == row["memory_ids"]
    listing = api.get(interactions_url(agent_session)).json()
    assert listing["count"] == 1 and listing["results"][0]["id"] == row["id"]


# --- the change log -------------------------------------------------------------------------------


@pytest.fixture
def busy_session(api, agent_session) -> AgentSession:
    for content in (BUDGET, ALLERGY, CHIT_CHAT, HOTEL):
        send(api, agent_session, content)
    return agent_session


def test_changes_are_in_strictly_increasing_order_with_all_ops(api, busy_session):
    response = api.get(changes_url(busy_session) + "?after=0")
    assert response.status_code == 200, response.content
    body = response.json()
    changes = body["changes"]
    ids = [c["id"] for c in changes]
    assert ids == sorted(set(ids)), ids
    assert all(c["session_id"] == busy_session.pk for c in changes)
    ops = [c["op"] for c in changes]
    assert {"session.created", "interaction.received", "memory.created", "edge.created", "interaction.kept",
            "interaction.filtered"} <= set(ops)
    assert ops.count("interaction.received") == 4 and ops.count("memory.created") == 3
    assert ops.count("edge.created") == 2 and ops.count("interaction.kept") == 3
    assert body["last_change_id"] == ids[-1]
    assert body["has_more"] is False
    assert ids == list(GraphChange.objects.filter(session=busy_session).order_by("id").values_list("id", flat=True))
    # Each interaction is received before it is judged.
    for interaction in Interaction.objects.filter(session=busy_session):
        mine = [c["op"] for c in changes if c["object_type"] == "interaction" and c["object_id"] == interaction.pk]
        assert mine == ["interaction.received", f"interaction.{interaction.status}"]
    created = [c for c in changes if c["op"] == "memory.created"]
    assert [c["object_id"] for c in created] == list(
        Memory.objects.filter(session=busy_session).order_by("id").values_list("id", flat=True))


def test_changes_after_the_last_id_are_empty(api, busy_session):
    last = api.get(changes_url(busy_session)).json()["last_change_id"]
    body = api.get(changes_url(busy_session) + f"?after={last}").json()
    assert body == {"changes": [], "last_change_id": last, "has_more": False}
    # A new interaction shows up after that cursor, and only it.
    row = send(api, busy_session, "I decided to go with the high-speed train to Hangzhou")
    newer = api.get(changes_url(busy_session) + f"?after={last}").json()
    assert newer["changes"] and all(c["id"] > last for c in newer["changes"])
    assert newer["changes"][0]["op"] == "interaction.received" and newer["changes"][0]["object_id"] == row["id"]


def test_changes_limit_and_has_more(api, busy_session):
    everything = api.get(changes_url(busy_session)).json()["changes"]
    assert len(everything) > 5
    first = api.get(changes_url(busy_session) + "?after=0&limit=2").json()
    assert [c["id"] for c in first["changes"]] == [c["id"] for c in everything[:2]]
    assert first["has_more"] is True and first["last_change_id"] == everything[1]["id"]
    paged, cursor = [], 0
    for _ in range(len(everything)):  # bounded: a cursor that does not advance must not loop forever
        page = api.get(changes_url(busy_session) + f"?after={cursor}&limit=3").json()
        paged += page["changes"]
        assert page["last_change_id"] > cursor
        cursor = page["last_change_id"]
        if not page["has_more"]:
            break
    assert [c["id"] for c in paged] == [c["id"] for c in everything]
    exact = api.get(changes_url(busy_session) + f"?after=0&limit={len(everything)}").json()
    assert exact["has_more"] is False and len(exact["changes"]) == len(everything)


def test_changes_of_other_sessions_are_not_listed(api, project, busy_session):
    other = session_create(project=project, title="Other", actor="test")
    send(api, other, "I must be back in Shanghai by Friday")
    ids = {c["id"] for c in api.get(changes_url(busy_session)).json()["changes"]}
    assert ids == set(GraphChange.objects.filter(session=busy_session).values_list("id", flat=True))
    assert not ids & set(GraphChange.objects.filter(session=other).values_list("id", flat=True))


@pytest.mark.parametrize(
    ("query", "field"),
    [("after=-1", "after"), ("after=abc", "after"), ("after=1.5", "after"), ("limit=0", "limit"),
     ("limit=1001", "limit"), ("limit=lots", "limit")],
)
def test_bad_change_cursor_is_400(api, agent_session, query, field):
    response = api.get(changes_url(agent_session) + f"?{query}")
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid" and field in error["fields"], error


def test_rejected_batch_writes_no_change_rows(api, busy_session):
    before = counts()
    last = api.get(changes_url(busy_session)).json()["last_change_id"]
    items = [{"kind": "user_input", "content": "I must land before 6pm"}, {"kind": "user_input", "content": " "}]
    assert api.post(interactions_url(busy_session), {"interactions": items}, format="json").status_code == 400
    assert counts() == before
    assert api.get(changes_url(busy_session) + f"?after={last}").json()["changes"] == []


def test_batch_failing_in_the_database_is_rolled_back_with_its_change_rows(api, busy_session):
    """The second item passes validation but the database refuses it (\\u0000 in jsonb): the first
    item's interaction and its 'interaction.received' change must roll back with it."""
    api.raise_request_exception = False
    before = counts()
    items = [{"kind": "user_input", "content": "I must land before 6pm"},
             {"kind": "user_input", "content": "I like window seats", "metadata": {"seat": "a\x00b"}}]
    response = api.post(interactions_url(busy_session), {"interactions": items}, format="json")
    assert response.status_code >= 400
    assert counts() == before
    assert not Interaction.objects.filter(content="I must land before 6pm").exists()


# --- the graph ------------------------------------------------------------------------------------


def test_graph_has_memories_with_provenance_edges_and_last_change_id(api, agent_session):
    budget = send(api, agent_session, BUDGET, metadata={"turn": 1, "channel": "chat"})
    send(api, agent_session, CHIT_CHAT)
    allergy = send(api, agent_session, ALLERGY, kind="user_input", metadata={"turn": 3})
    hotel = send(api, agent_session, HOTEL, kind="observation")

    response = api.get(graph_url(agent_session))
    assert response.status_code == 200, response.content
    graph = response.json()
    assert graph["session"]["id"] == agent_session.pk
    memories = graph["memories"]
    assert [m["content"] for m in memories] == [BUDGET, ALLERGY, HOTEL]
    assert [m["id"] for m in memories] == budget["memory_ids"] + allergy["memory_ids"] + hotel["memory_ids"]
    sources = [m["sources"] for m in memories]
    assert [len(s) for s in sources] == [1, 1, 1]
    assert sources[0][0]["interaction_id"] == budget["id"]
    assert sources[0][0]["kind"] == "user_input"
    assert sources[0][0]["metadata"] == {"turn": 1, "channel": "chat"}
    assert sources[1][0]["interaction_id"] == allergy["id"] and sources[1][0]["metadata"] == {"turn": 3}
    assert sources[2][0]["interaction_id"] == hotel["id"] and sources[2][0]["kind"] == "observation"
    assert all(m["session_id"] == agent_session.pk for m in memories)

    ids = [m["id"] for m in memories]
    edges = [(e["source_id"], e["target_id"], e["relation"]) for e in graph["edges"]]
    assert edges == [(ids[0], ids[1], "next_in_session"), (ids[1], ids[2], "next_in_session")]
    assert Edge.objects.filter(session=agent_session).count() == 2

    newest = GraphChange.objects.filter(session=agent_session).aggregate(Max("id"))["id__max"]
    assert graph["last_change_id"] == newest
    assert graph["last_change_id"] == api.get(changes_url(agent_session)).json()["last_change_id"]


def test_graph_last_change_id_ignores_other_sessions(api, project, agent_session):
    send(api, agent_session, BUDGET)
    mine = api.get(graph_url(agent_session)).json()["last_change_id"]
    other = session_create(project=project, title="Other", actor="test")
    send(api, other, ALLERGY)
    assert api.get(graph_url(agent_session)).json()["last_change_id"] == mine
    assert api.get(graph_url(other)).json()["last_change_id"] > mine


def test_duplicate_content_adds_a_source_not_a_memory(api, agent_session):
    first = send(api, agent_session, BUDGET)
    again = send(api, agent_session, "my budget is 5000 RMB for the whole trip!")
    assert again["status"] == "filtered" and again["memory_ids"] == first["memory_ids"]
    memories = api.get(graph_url(agent_session)).json()["memories"]
    assert len(memories) == 1
    assert sorted(s["interaction_id"] for s in memories[0]["sources"]) == [first["id"], again["id"]]


# --- sensitive memories ---------------------------------------------------------------------------


@pytest.fixture
def sensitive_setup(api, agent_session) -> tuple[int, int]:
    """Two memories; the allergy one is marked sensitive directly on the row."""
    budget = send(api, agent_session, BUDGET)["memory_ids"][0]
    allergy = send(api, agent_session, ALLERGY)["memory_ids"][0]
    Memory.objects.filter(pk=allergy).update(sensitive=True)
    return budget, allergy


def test_agent_sees_sensitive_content_masked_in_the_graph(api, agent_session, sensitive_setup):
    budget, allergy = sensitive_setup
    memories = {m["id"]: m for m in api.get(graph_url(agent_session)).json()["memories"]}
    assert memories[allergy]["content"] == "[sensitive]" and memories[allergy]["sensitive"] is True
    assert memories[budget]["content"] == BUDGET


def test_viewer_sees_sensitive_masked_and_curator_sees_it(django_user_model, project, agent_session, sensitive_setup):
    _, allergy = sensitive_setup
    viewer = {m["id"]: m for m in user_client(django_user_model, project, Role.VIEWER)
              .get(graph_url(agent_session)).json()["memories"]}
    curator = {m["id"]: m for m in user_client(django_user_model, project, Role.CURATOR)
               .get(graph_url(agent_session)).json()["memories"]}
    assert viewer[allergy]["content"] == "[sensitive]"
    assert curator[allergy]["content"] == ALLERGY


@pytest.mark.parametrize("scope", ["project", "session"])
def test_agent_recall_never_returns_a_sensitive_memory(api, django_user_model, project, agent_session,
                                                       sensitive_setup, scope):
    budget, allergy = sensitive_setup
    body = {"query": ALLERGY, "k": 10, **({"session_id": agent_session.pk} if scope == "session" else {})}
    response = api.post("/api/projects/travel/recall/", body, format="json")
    assert response.status_code == 200, response.content
    recalled = [item["memory"]["id"] for item in response.json()["memories"]]
    assert recalled == [budget]
    assert "seafood" not in str(response.json()["memories"])
    # The same query by a curator finds it, first: the agent's answer was filtered, not empty by chance.
    curator = user_client(django_user_model, project, Role.CURATOR)
    seen = curator.post("/api/projects/travel/recall/", body, format="json").json()["memories"]
    assert seen[0]["memory"]["id"] == allergy and seen[0]["memory"]["content"] == ALLERGY


def test_other_project_tokens_recall_nothing_from_this_project(api, agent_session):
    send(api, agent_session, ALLERGY)
    other = project_create(name="Coding agent", slug="coding")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token_issue(project=other)[1]}")
    response = client.post("/api/projects/coding/recall/", {"query": ALLERGY, "k": 10}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["memories"] == []


def test_one_memorys_or_one_edges_history(api, busy_session):
    everything = api.get(changes_url(busy_session) + "?limit=1000").json()["changes"]
    edge = Edge.objects.filter(session=busy_session).order_by("id").first()
    memory_id = edge.target_id
    expected = [c["id"] for c in everything
                if (c["object_type"] == "memory" and c["object_id"] == memory_id)
                or (c["object_type"] == "edge" and memory_id in ((c["after"] or {}).get("source_id"),
                                                                 (c["after"] or {}).get("target_id")))]
    mine = api.get(changes_url(busy_session) + f"?memory={memory_id}").json()["changes"]
    assert [c["id"] for c in mine] == expected and "memory.created" in {c["op"] for c in mine}
    assert len(mine) < len(everything)
    only_edge = api.get(changes_url(busy_session) + f"?edge={edge.pk}").json()["changes"]
    assert [(c["object_type"], c["object_id"]) for c in only_edge] == [("edge", edge.pk)] * len(only_edge)
    assert only_edge
    both = api.get(changes_url(busy_session) + f"?memory={memory_id}&edge={edge.pk}")
    assert both.status_code == 400 and "edge" in both.json()["error"]["fields"]
