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
    allergy = {"kind": "user_input", "content": "I am allergic to seafood, please avoid it"}
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
    assert top["memory"]["sources"][0]["interaction_id"] == second.json()["interactions"][0]["id"]
    assert Interaction.objects.count() == 3
