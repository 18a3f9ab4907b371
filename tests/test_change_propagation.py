"""Change propagation (engine/risk.py) and edges learned from use (engine/use.py), through the real write path."""

from __future__ import annotations

import pytest
from django.db import transaction

from curation.models import CurationAct
from curation.services import act_undo, memory_update
from memory.engine.ingest import InteractionInput, interactions_accept
from memory.engine.links import LinkInput
from memory.engine.maintenance.forget import ForgetFilter, forget_run
from memory.engine.pipeline import interaction_process_safely
from memory.engine.recall import RecallQuery, memory_recall
from memory.engine.risk import risk_propagate
from memory.errors import ValidationFailed
from memory.models import AtRisk, Edge, EdgeOrigin, GraphChange, Interaction, Memory, Relation

pytestmark = pytest.mark.django_db(transaction=True)

FLIGHT = "My flight UA858 to San Francisco departs at 15:00 on March 14"
PICKUP = "Airport pickup booked for 13:00 on March 14, two hours before the flight"
CHANGE = "Update: my flight UA858 now departs at 18:00 instead of 15:00"


def _send(session, kind: str, text: str, **extra) -> Memory | None:
    accepted = interactions_accept(session=session, actor="test",
                                   items=[InteractionInput(kind=kind, content=text, **extra)])[0]
    interaction_process_safely(interaction_id=accepted.interaction.pk)
    return Memory.objects.filter(sources=accepted.interaction).first()


def _trip(session) -> tuple[Memory, Memory]:
    """A flight, and a pickup the agent declared depends on it."""
    flight = _send(session, "user_input", FLIGHT, external_id="flight")
    pickup = _send(session, "assistant_output", PICKUP, links=(LinkInput("external_id", "flight"),))
    return flight, pickup


@pytest.fixture
def trip(project):
    from memory.engine.projects import session_create

    return session_create(project=project, title="San Francisco", task="Book the flight, hotel and airport pickup "
                                                                       "for the San Francisco trip", actor="test")


def _url(project, tail: str) -> str:
    return f"/api/projects/{project.slug}/{tail}"


def test_a_superseded_value_flags_what_depended_on_it_with_the_change(trip, readers, project):
    flight, pickup = _trip(trip)
    change = _send(trip, "user_input", CHANGE)
    flight.refresh_from_db()
    pickup.refresh_from_db()
    assert flight.status == "superseded"
    assert pickup.at_risk == 1.0
    row = AtRisk.objects.get(memory=pickup)
    assert (row.parent_id, row.change, row.before, row.after, row.replaced_by_id, row.relations) == \
        (flight.pk, "superseded", "15:00", "18:00", change.pk, ["causal"])
    change_row = GraphChange.objects.filter(op="memory.at_risk", object_id=pickup.pk).get()
    assert (change_row.before["at_risk"], change_row.after["at_risk"]) == (0.0, 1.0)  # the live view learns it

    listed = readers["token"].get(_url(project, "memories/?at_risk=true")).json()
    assert [m["id"] for m in listed["results"]] == [pickup.pk]
    why = listed["results"][0]["at_risk_why"][0]
    assert (why["parent_id"], why["before"], why["after"], why["replaced_by_id"]) == (flight.pk, "15:00", "18:00",
                                                                                       change.pk)
    assert why["parent_label"].startswith("My flight UA858")
    assert readers["viewer"].get(_url(project, f"memories/{pickup.pk}/risks/")).json() == listed["results"][0][
        "at_risk_why"]
    calm = readers["token"].get(_url(project, "memories/?at_risk=false")).json()
    assert pickup.pk not in {m["id"] for m in calm["results"]} and change.pk in {m["id"] for m in calm["results"]}


def test_recall_tells_the_current_version_beside_an_at_risk_memory(trip, readers, project):
    _trip(trip)
    _send(trip, "user_input", CHANGE)
    answer = readers["token"].post(_url(project, "recall/"), {"query": "what time is the airport pickup?", "k": 5},
                                   format="json").json()
    pickup = next(item for item in answer["memories"] if item["memory"]["content"] == PICKUP)
    assert pickup["memory"]["at_risk"] == 1.0 and pickup["at_risk"][0]["after"] == "18:00"
    lines = answer["context"].splitlines()
    told = next(i for i, line in enumerate(lines) if PICKUP in line)
    assert "at risk" in lines[told + 1] and "from 15:00 to 18:00" in lines[told + 1] and CHANGE in lines[told + 1]
    calm = [item for item in answer["memories"] if item["memory"]["content"] != PICKUP]
    assert all(item["at_risk"] == [] for item in calm)


def test_a_question_or_a_confirmation_starts_nothing(trip):
    _trip(trip)
    for text in ("Is my flight UA858 still departing at 18:00?", "Just to confirm: flight UA858 departs at 15:00"):
        _send(trip, "user_input", text)
    assert not AtRisk.objects.exists()
    assert not Memory.objects.filter(at_risk__gt=0).exists()


def test_risk_halves_per_hop_stops_at_the_hop_limit_and_ignores_weak_guesses(trip, project):
    memories = [_send(trip, "user_input", f"Step {n}: the plan for stage {n} of the trip is settled, "
                                                   f"code {1000 + n}") for n in range(5)]
    assert all(memories)
    for parent, child in zip(memories, memories[1:3], strict=False):  # 0 -> 1 -> 2 -> 3: declared
        Edge.objects.create(project=project, session=trip, source=parent, target=child,
                            relation=Relation.CAUSAL, origin=EdgeOrigin.AGENT)
    Edge.objects.create(project=project, session=trip, source=memories[2], target=memories[3],
                        relation=Relation.CAUSAL, origin=EdgeOrigin.AGENT)
    Edge.objects.create(project=project, session=trip, source=memories[0], target=memories[4],
                        relation=Relation.ELABORATES, origin=EdgeOrigin.RULE, confidence=0.4)  # a weak guess
    with transaction.atomic():
        risk_propagate(memories[0], "archived")
    levels = {m.pk: m.at_risk for m in Memory.objects.filter(pk__in=[m.pk for m in memories])}
    assert [levels[m.pk] for m in memories] == [0.0, 1.0, 0.5, 0.0, 0.0]  # risk_hops 2; the guess is not trusted
    from administration.engine_settings import engine_settings_set

    engine_settings_set(project=project, actor="user:1", values={"risk_hops": "3", "risk_confidence_threshold": 0.3})
    with pytest.raises(ValidationFailed):
        engine_settings_set(project=project, actor="user:1", values={"risk_hops": 9})
    project.refresh_from_db()
    with transaction.atomic():
        risk_propagate(Memory.objects.select_related("project").get(pk=memories[0].pk), "archived")
    levels = {m.pk: m.at_risk for m in Memory.objects.filter(pk__in=[m.pk for m in memories])}
    assert [levels[m.pk] for m in memories] == [0.0, 1.0, 0.5, 0.25, 1.0]
    assert AtRisk.objects.get(memory=memories[3]).path == list(
        Edge.objects.filter(relation="causal", origin="agent").order_by("pk").values_list("pk", flat=True))


def test_archive_flags_dependents_still_valid_settles_and_undo_reopens(trip, project):
    flight, pickup = _trip(trip)
    memory_update(project=project, actor="user:1", memory_id=flight.pk, status="archived")
    pickup.refresh_from_db()
    assert pickup.at_risk == 1.0 and AtRisk.objects.get(memory=pickup).change == "archived"
    settled = memory_update(project=project, actor="user:1", memory_id=pickup.pk, still_valid=True)
    pickup.refresh_from_db()
    assert pickup.at_risk == 0.0 and AtRisk.objects.get(memory=pickup).status == "valid"
    assert settled.act.kind == "memory.risk"
    act_undo(project=project, actor="user:1", act_id=settled.act.pk)
    pickup.refresh_from_db()
    assert pickup.at_risk == 1.0 and AtRisk.objects.get(memory=pickup).status == "open"
    assert CurationAct.objects.filter(kind="undo").count() == 1


def test_still_valid_on_a_memory_not_at_risk_is_a_conflict(trip, readers, project):
    _, pickup = _trip(trip)
    answer = readers["curator"].patch(_url(project, f"memories/{pickup.pk}/"), {"still_valid": True}, format="json")
    assert answer.status_code == 409, answer.content
    refused = readers["curator"].patch(_url(project, f"memories/{pickup.pk}/"), {"still_valid": False},
                                       format="json")
    assert refused.status_code == 400 and "still_valid" in refused.content.decode()


def test_archiving_an_at_risk_memory_settles_its_flag_with_it(trip, project):
    flight, pickup = _trip(trip)
    _send(trip, "user_input", CHANGE)
    memory_update(project=project, actor="user:1", memory_id=pickup.pk, status="archived")
    pickup.refresh_from_db()
    assert (pickup.status, pickup.at_risk) == ("archived", 0.0)
    assert AtRisk.objects.get(memory=pickup).status == "archived"


def test_a_forgotten_parent_is_told_without_its_text_and_a_hard_forget_drops_the_flag(trip, readers,
                                                                                        project):
    flight, pickup = _trip(trip)
    forget_run(project=project, actor="user:1", selection=ForgetFilter(memory_ids=(flight.pk,)), mode="soft")
    why = readers["curator"].get(_url(project, f"memories/{pickup.pk}/risks/")).json()
    assert why[0]["change"] == "forgotten" and why[0]["parent_label"] == "[forgotten]"
    assert "UA858" not in str(why)
    forget_run(project=project, actor="user:1", selection=ForgetFilter(memory_ids=(flight.pk,)), mode="hard")
    pickup.refresh_from_db()
    assert pickup.at_risk == 0.0 and not AtRisk.objects.exists()


def test_a_sensitive_change_is_masked_for_viewers_and_tokens(trip, readers, project):
    flight, pickup = _trip(trip)
    change = _send(trip, "user_input", CHANGE)
    memory_update(project=project, actor="user:1", memory_id=change.pk, sensitive=True)
    for who in ("viewer", "token"):
        why = readers[who].get(_url(project, f"memories/{pickup.pk}/risks/")).json()[0]
        assert (why["replaced_by_label"], why["before"], why["after"]) == ("[sensitive]",) * 3, who
        answer = readers[who].post(_url(project, "recall/"), {"query": "airport pickup time", "k": 5},
                                   format="json").json()
        assert "18:00" not in answer["context"], who
    curator = readers["curator"].get(_url(project, f"memories/{pickup.pk}/risks/")).json()[0]
    assert curator["after"] == "18:00" and curator["replaced_by_label"].startswith("Update:")


# --- edges learned from use ----------------------------------------------------------------------------------


def _recall(project, session, text: str):
    return memory_recall(project=project, query=RecallQuery(text=text, k=5, session=session, include_sensitive=True),
                         actor="test")


def test_what_the_agent_says_it_used_becomes_edges_of_origin_use(trip, project):
    flight, pickup = _trip(trip)
    recall = _recall(project, trip, "when does my flight leave?")
    booked = _send(trip, "agent_thought", "Told the driver to wait at arrivals door 4 for the UA858 pickup",
                   recall_id=recall.trace.pk, used=(flight.pk,))
    edges = Edge.objects.filter(target=booked, origin=EdgeOrigin.USE)
    assert {(e.source_id, e.relation, e.confidence) for e in edges} == {(flight.pk, "causal", 1.0)}
    assert Interaction.objects.get(memories=booked).recall_id == recall.trace.pk


def test_without_used_the_recalls_top_results_by_rank_become_edges_when_the_project_says(trip, project):
    from administration.engine_settings import engine_settings_set

    _trip(trip)
    _send(trip, "user_input", "The hotel near Union Square is booked for March 14 to 17, flight UA858 arrives first")
    recall = _recall(project, trip, "when does my flight UA858 leave?")
    returned = recall.trace.returned_ids
    assert len(returned) >= 3
    acted = _send(trip, "agent_thought", "Emailed the hotel that we arrive in San Francisco in the evening",
                  recall_id=recall.trace.pk)
    assert not Edge.objects.filter(target=acted, origin=EdgeOrigin.USE).exists()  # calibrated default: named only
    engine_settings_set(project=project, actor="user:1", values={"use_edge_threshold": 0.45})
    again = _send(trip, "agent_thought", "Asked the hotel for a late check-in on the evening of March 14",
                  recall_id=recall.trace.pk)
    edges = dict(Edge.objects.filter(target=again, origin=EdgeOrigin.USE).values_list("source_id", "confidence"))
    assert edges == {returned[0]: 0.9, returned[1]: 0.45}  # 0.9 / (rank + 1), kept at the 0.45 threshold


def test_a_recall_or_memory_of_another_project_is_refused_like_a_missing_one(trip, project, api):
    from memory.engine.projects import project_create, session_create

    other = project_create(name="Other", slug="other")
    theirs = session_create(project=other, title="theirs", actor="test")
    _send(theirs, "user_input", FLIGHT)
    their_recall = _recall(other, theirs, "flight")
    url = _url(project, f"sessions/{trip.pk}/interactions/")
    body = {"kind": "agent_thought", "content": "acted on it"}
    foreign = api.post(url, {**body, "recall_id": their_recall.trace.pk}, format="json")
    missing = api.post(url, {**body, "recall_id": their_recall.trace.pk + 100}, format="json")
    assert foreign.status_code == missing.status_code == 400
    assert foreign.json()["error"]["fields"] == {"recall_id": [f"no recall {their_recall.trace.pk} in this project"]}
    their_memory = Memory.objects.get(session=theirs)
    used = api.post(url, {**body, "used": [their_memory.pk]}, format="json")
    assert used.status_code == 400 and f"no memory {their_memory.pk} in this project" in used.content.decode()
    assert not Interaction.objects.filter(session=trip).exists()


def test_the_replay_of_a_recall_shows_what_it_led_to(trip, project, readers):
    flight, _ = _trip(trip)
    recall = _recall(project, trip, "when does my flight leave?")
    acted = _send(trip, "agent_thought", "Told the driver to wait at arrivals door 4 for the UA858 pickup",
                  recall_id=recall.trace.pk, used=(flight.pk,))
    replay = readers["viewer"].get(_url(project, f"recalls/{recall.trace.pk}/")).json()
    (step,) = replay["led_to"]
    assert (step["kind"], step["memory_ids"], step["used"]) == ("agent_thought", [acted.pk], [flight.pk])
    edge = Edge.objects.get(target=acted, origin=EdgeOrigin.USE)
    assert step["edges"] == [{"id": edge.pk, "source_id": flight.pk, "target_id": acted.pk, "confidence": 1.0}]
    other = _recall(project, trip, "hotel")
    assert readers["viewer"].get(_url(project, f"recalls/{other.trace.pk}/")).json()["led_to"] == []


def test_the_change_names_the_value_that_changed_not_the_old_memorys_others(trip):
    flight = _send(trip, "user_input", "My flight UA858 departs PVG at 15:00 and arrives SFO at 10:40 the same day",
                   external_id="r1")
    pickup = _send(trip, "assistant_output", "Driver booked for the departure: pickup at the hotel at 12:30",
                   links=(LinkInput("external_id", "r1"),))
    _send(trip, "user_input", "Update: UA858 now departs PVG at 18:00 instead of 15:00")
    row = AtRisk.objects.filter(memory=pickup).first()
    assert flight is not None and row is not None, "the departure change flags the pickup"
    assert (row.before, row.after) == ("15:00", "18:00")


def test_a_curators_replacement_settles_the_flag_and_removing_it_reopens_it(trip, project):
    from curation.services import edge_delete, edge_draw

    flight, pickup = _trip(trip)
    _send(trip, "user_input", CHANGE)
    rebooked = _send(trip, "assistant_output",
                     "Driver Mr Alvarez confirmed for the March 14 airport pickup, waiting at arrivals door 4")
    drawn = edge_draw(project=project, actor="user:1", source_id=pickup.pk, target_id=rebooked.pk,
                      relation="supersedes")
    pickup.refresh_from_db()
    assert (pickup.status, pickup.at_risk) == ("superseded", 0.0)
    assert AtRisk.objects.get(memory=pickup).status == "superseded"
    assert pickup.pk not in {m.pk for m in Memory.objects.filter(at_risk__gt=0)}
    edge_delete(project=project, actor="user:1", edge_id=drawn.object.pk)
    pickup.refresh_from_db()
    assert (pickup.status, pickup.at_risk) == ("active", 1.0)
    assert AtRisk.objects.get(memory=pickup).status == "open"


def test_when_the_engine_replaces_an_at_risk_memory_its_flag_is_settled(trip):
    flight, pickup = _trip(trip)
    _send(trip, "user_input", CHANGE)
    _send(trip, "assistant_output", "Airport pickup moved to 16:00 on March 14, driver Mr Alvarez")
    pickup.refresh_from_db()
    assert (pickup.status, pickup.at_risk) == ("superseded", 0.0)
    assert AtRisk.objects.get(memory=pickup).status == "superseded"


def test_a_moved_range_is_told_whole_and_a_named_old_value_alone():
    from django.utils import timezone

    from memory.engine.supersede import changed_values

    def memory(content: str, **values: list[str]) -> Memory:
        return Memory(content=content, dimensions=values, occurred_at=timezone.now())

    stay = memory("Hotel in Xiamen from 2 to 4 September", dates=["2027-09-02", "2027-09-04"])
    moved = memory("Move the Xiamen hotel to 4 to 6 September", dates=["2027-09-04", "2027-09-06"])
    assert changed_values(stay, moved) == ("2027-09-02, 2027-09-04", "2027-09-04, 2027-09-06")
    flight = memory("UA858 departs 15:00, arrives 10:40", times=["15:00", "10:40"])
    later = memory("UA858 now departs at 18:00 instead of 15:00", times=["18:00", "15:00"])
    assert changed_values(flight, later) == ("15:00", "18:00")
