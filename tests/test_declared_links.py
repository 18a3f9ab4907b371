"""Links declared by the agent (engine/links.py): edges of origin `agent` from what it says it depends on."""

from __future__ import annotations

import pytest

from memory.engine.inference import Proposal, edges_apply
from memory.engine.projects import project_create, session_create
from memory.models import Edge, EdgeOrigin, Interaction, InteractionLink, Memory, Relation

pytestmark = pytest.mark.django_db(transaction=True)


def _post(api, session, body, **query):
    url = f"/api/projects/{session.project.slug}/sessions/{session.pk}/interactions/"
    suffix = "?wait=true" if query.get("wait", True) else ""
    return api.post(url + suffix, body, format="json")


def _memory_of(interaction_id: int) -> Memory:
    return Memory.objects.get(sources__pk=interaction_id)


def _agent_edges(session) -> set[tuple[int, int, str]]:
    return set(Edge.objects.filter(session=session, origin=EdgeOrigin.AGENT)
               .values_list("source_id", "target_id", "relation"))


CALL = "Calling search_flights(from=PVG, to=SFO, date=2026-03-14) for the customer's trip"
RESULT = "search_flights returned UA858 departing PVG at 15:00, arriving SFO 10:40 the same day"


def test_a_tool_result_declared_after_its_call_becomes_an_agent_edge(api, agent_session):
    call = _post(api, agent_session, {"kind": "tool_call", "content": CALL, "external_id": "call_1"})
    assert call.status_code == 201, call.content
    result = _post(api, agent_session, {"kind": "tool_result", "content": RESULT, "external_id": "result_1",
                                        "links": [{"external_id": "call_1"}]})
    assert result.status_code == 201, result.content
    call_id, result_id = call.json()["interactions"][0]["id"], result.json()["interactions"][0]["id"]
    parent, child = _memory_of(call_id), _memory_of(result_id)
    edge = Edge.objects.get(source=parent, target=child, relation=Relation.CAUSAL, origin=EdgeOrigin.AGENT)
    assert edge.confidence == 1.0 and not edge.needs_review
    link = InteractionLink.objects.get(child_id=result_id)
    assert (link.status, link.parent_id, link.edge_ids) == ("resolved", call_id, [edge.pk])
    shown = api.get(f"/api/projects/{agent_session.project.slug}/sessions/{agent_session.pk}/interactions/"
                    f"{result_id}/").json()
    assert shown["external_id"] == "result_1"
    assert shown["links"] == [{"by": "external_id", "ref": "call_1", "relation": "causal", "parent_id": call_id,
                               "status": "resolved", "edge_ids": [edge.pk], "note": ""}]


def test_a_child_that_arrives_first_waits_and_resolves_when_its_parent_comes(api, agent_session):
    child = _post(api, agent_session, {"kind": "tool_result", "content": RESULT,
                                       "links": [{"external_id": "span-parent", "relation": "elaborates"}]})
    child_id = child.json()["interactions"][0]["id"]
    link = InteractionLink.objects.get(child_id=child_id)
    assert (link.status, link.parent_id) == ("waiting", None)  # visible, not dropped
    parent = _post(api, agent_session, {"kind": "tool_call", "content": CALL, "external_id": "span-parent"})
    parent_id = parent.json()["interactions"][0]["id"]
    link.refresh_from_db()
    assert (link.status, link.parent_id) == ("resolved", parent_id)
    assert (_memory_of(parent_id).pk, _memory_of(child_id).pk, "elaborates") in _agent_edges(agent_session)


def test_links_within_one_batch_by_idempotency_key_and_id(api, agent_session):
    first = _post(api, agent_session, {"kind": "user_input", "content": "Book me a flight to San Francisco on "
                                                                         "March 14th, window seat please"})
    first_id = first.json()["interactions"][0]["id"]
    batch = _post(api, agent_session, {"interactions": [
        {"kind": "tool_result", "content": RESULT, "idempotency_key": "r", "links": [{"idempotency_key": "c"}]},
        {"kind": "tool_call", "content": CALL, "idempotency_key": "c", "links": [{"id": first_id}]},
    ]})
    assert batch.status_code == 201, batch.content
    result_id, call_id = (row["id"] for row in batch.json()["interactions"])
    edges = _agent_edges(agent_session)
    assert (_memory_of(call_id).pk, _memory_of(result_id).pk, "causal") in edges
    assert (_memory_of(first_id).pk, _memory_of(call_id).pk, "causal") in edges


@pytest.mark.parametrize(("link", "says"), [
    ({"id": 999999999}, "no interaction 999999999 in this project"),
    ({"external_id": "x", "id": 1}, "exactly one of"),
    ({}, "exactly one of"),
    ({"external_id": "x", "relation": "supersedes"}, "supersedes"),
    ({"external_id": ""}, "blank"),
])
def test_a_bad_link_is_a_400_naming_it_and_stores_nothing(api, agent_session, link, says):
    before = Interaction.objects.count()
    answer = _post(api, agent_session, {"kind": "user_input", "content": "hello there, a plain message",
                                        "links": [{"external_id": "fine"}, link]})
    assert answer.status_code == 400, answer.content
    assert says in answer.content.decode()
    assert "1" in answer.content.decode()  # the index of the bad link
    assert Interaction.objects.count() == before and not InteractionLink.objects.exists()


def test_a_link_to_another_projects_interaction_is_refused_like_a_missing_one(api, agent_session):
    other = project_create(name="Other", slug="other")
    theirs = session_create(project=other, title="theirs", actor="test")
    foreign = Interaction.objects.create(project=other, session=theirs, kind="user_input", content="secret plan",
                                         occurred_at=theirs.created_at)
    answer = _post(api, agent_session, {"kind": "user_input", "content": "a message that depends on it",
                                        "links": [{"id": foreign.pk}]})
    missing = _post(api, agent_session, {"kind": "user_input", "content": "a message that depends on it",
                                         "links": [{"id": foreign.pk + 1000}]})
    assert answer.status_code == missing.status_code == 400
    assert answer.json()["error"]["fields"] == {"links": {"0": [f"no interaction {foreign.pk} in this project"]}}
    assert missing.json()["error"]["fields"] == {"links": {"0": [f"no interaction {foreign.pk + 1000} in this "
                                                                 "project"]}}


def test_a_dropped_parent_is_bridged_over_and_a_dropped_child_is_recorded(api, agent_session):
    request = _post(api, agent_session, {"kind": "user_input", "external_id": "u1",
                                         "content": "Find me a hotel near the Bund for March 14th to 16th"})
    chit = _post(api, agent_session, {"kind": "assistant_output", "external_id": "a1", "content": "ok",
                                      "links": [{"external_id": "u1"}]})
    answer = _post(api, agent_session, {"kind": "tool_call", "external_id": "t1", "links": [{"external_id": "a1"}],
                                        "content": "Calling search_hotels(area=Bund, checkin=2026-03-14, "
                                                   "checkout=2026-03-16)"})
    chit_row = chit.json()["interactions"][0]
    assert chit_row["status"] == "filtered", chit_row  # "ok" is no memory
    request_id, answer_id = request.json()["interactions"][0]["id"], answer.json()["interactions"][0]["id"]
    assert (_memory_of(request_id).pk, _memory_of(answer_id).pk, "causal") in _agent_edges(agent_session)
    dropped = InteractionLink.objects.get(child_id=chit_row["id"])
    assert dropped.status == "no_memory" and "kept no memory" in dropped.note


def test_inference_never_changes_a_declared_edge(api, agent_session):
    call = _post(api, agent_session, {"kind": "tool_call", "content": CALL, "external_id": "c"})
    result = _post(api, agent_session, {"kind": "tool_result", "content": RESULT, "links": [{"external_id": "c"}]})
    parent = _memory_of(call.json()["interactions"][0]["id"])
    child = _memory_of(result.json()["interactions"][0]["id"])
    declared = Edge.objects.get(source=parent, target=child, origin=EdgeOrigin.AGENT)
    from django.db import transaction

    with transaction.atomic():
        made = edges_apply(child, [Proposal(parent, Relation.ELABORATES, 0.3, "a guess")], 0.5)
    assert made == []
    declared.refresh_from_db()
    assert (declared.origin, declared.confidence, declared.relation) == ("agent", 1.0, "causal")


def test_an_external_id_resent_is_the_same_interaction_and_a_different_one_is_a_409(api, agent_session):
    first = _post(api, agent_session, {"kind": "tool_call", "content": CALL, "external_id": "span-9"})
    again = _post(api, agent_session, {"kind": "tool_call", "content": CALL, "external_id": "span-9"})
    other = _post(api, agent_session, {"kind": "tool_call", "content": "something else", "external_id": "span-9"})
    assert again.status_code == 200 and again.json()["interactions"][0]["duplicate"] is True
    assert again.json()["interactions"][0]["id"] == first.json()["interactions"][0]["id"]
    assert other.status_code == 409 and "external id 'span-9'" in other.content.decode()


def test_a_link_waiting_on_a_dropped_parent_resolves_once_that_parents_own_parent_arrives(api, agent_session):
    """Child first, then its dropped parent, then the grandparent: the child bridges to the grandparent."""
    child = _post(api, agent_session, {"kind": "tool_call", "external_id": "t1", "links": [{"external_id": "a1"}],
                                       "content": "Calling search_hotels(area=Bund, checkin=2026-03-14, "
                                                  "checkout=2026-03-16)"})
    chit = _post(api, agent_session, {"kind": "assistant_output", "external_id": "a1", "content": "ok",
                                      "links": [{"external_id": "u1"}]})
    assert chit.json()["interactions"][0]["status"] == "filtered"
    request = _post(api, agent_session, {"kind": "user_input", "external_id": "u1",
                                         "content": "Find me a hotel near the Bund for March 14th to 16th"})
    child_id, request_id = child.json()["interactions"][0]["id"], request.json()["interactions"][0]["id"]
    assert (_memory_of(request_id).pk, _memory_of(child_id).pk, "causal") in _agent_edges(agent_session)
    assert InteractionLink.objects.get(child_id=child_id).status == "resolved"
