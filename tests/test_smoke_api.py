"""End-to-end over the HTTP API: accept, process, graph, changes, recall."""

import pytest

from memory.models import Edge, Interaction, Memory

from .conftest import interactions_url

pytestmark = pytest.mark.django_db(transaction=True)


def test_accept_process_and_recall(api, agent_session):
    url = interactions_url(agent_session)
    first = api.post(url + "?wait=true", {"kind": "user_input", "content": "My budget is 5000 RMB for the whole trip"},
                     format="json")
    assert first.status_code == 201, first.content
    allergy = {"kind": "user_input", "content": "I am allergic to seafood, please avoid it",
               "metadata": {"turn": 2, "tags": ["health"]}, "idempotency_key": "turn-2"}
    second = api.post(url + "?wait=true", allergy, format="json")
    assert second.status_code == 201
    chit = api.post(url + "?wait=true", {"kind": "user_input", "content": "ok thanks"}, format="json")
    assert chit.json()["interactions"][0]["status"] == "filtered"

    assert Memory.objects.filter(session=agent_session).count() == 2
    assert Edge.objects.filter(session=agent_session, relation="next_in_session").count() == 1

    graph = api.get(f"/api/projects/travel/sessions/{agent_session.pk}/graph/").json()
    assert [m["kind"] for m in graph["memories"]] == ["constraint", "constraint"]

    recall = api.post("/api/projects/travel/recall/", {"query": "seafood allergy", "k": 1}, format="json")
    assert recall.status_code == 200, recall.content
    top = recall.json()["memories"][0]
    assert "seafood" in top["memory"]["content"]
    source = top["memory"]["sources"][0]
    assert source["interaction_id"] == second.json()["interactions"][0]["id"]
    stored = Interaction.objects.get(pk=source["interaction_id"])
    assert (source["kind"], source["metadata"], source["idempotency_key"]) == (
        "user_input", {"turn": 2, "tags": ["health"]}, "turn-2")
    assert source["occurred_at"].replace("Z", "+00:00") == stored.occurred_at.isoformat()
    assert top["memory"]["dimensions"] == Memory.objects.get(pk=top["memory"]["id"]).dimensions
    assert Interaction.objects.count() == 3
