"""Curation on the real database: each act and its undo, human decisions binding inference and recall,
and the curation API (people only, CSRF, clear 4xx)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from curation.entities import entity_flag_dismiss, entity_rename, entity_split
from curation.models import ActKind, CurationAct
from curation.services import CurationConflict, act_undo, edge_delete, edge_draw, edge_update, memory_update
from memory.engine.inference import Proposal, edges_apply
from memory.engine.projects import session_create
from memory.engine.recall import RecallQuery, memory_recall
from memory.errors import ValidationFailed
from memory.models import (
    Edge,
    EdgeOrigin,
    EdgeStatus,
    Entity,
    EntityMention,
    GraphChange,
    Membership,
    Memory,
    Relation,
    Role,
)

from .test_maintenance_support import link, remember

pytestmark = pytest.mark.django_db


@pytest.fixture
def pair(agent_session):
    allergy = remember(agent_session, "Xiaoming is allergic to shellfish and peanuts")
    menu = remember(agent_session, "Booked the dinner at the Dadong roast duck restaurant for Friday")
    edge = link(allergy, menu, Relation.TEMPORAL, confidence=0.4, needs_review=True, rationale="cue 'then'")
    return allergy, menu, edge


def test_approve_is_logged_with_its_reason_and_undone_from_the_snapshot(project, pair):
    _, _, edge = pair
    outcome = edge_update(project=project, actor="user:7", edge_id=edge.pk, status=EdgeStatus.APPROVED,
                          reason="the booking had to respect the allergy")
    edge.refresh_from_db()
    assert edge.status == EdgeStatus.APPROVED and not edge.needs_review
    act = outcome.act
    assert (act.kind, act.actor) == (ActKind.EDGE_APPROVE, "user:7")
    assert act.reason == "the booking had to respect the allergy"
    (change,) = act.changes.all()
    assert change.op == "edge.updated" and change.actor == "user:7"
    assert (change.before["status"], change.after["status"]) == ("inferred", "approved")
    undo = act_undo(project=project, actor="user:8", act_id=act.pk)
    edge.refresh_from_db()
    assert edge.status == EdgeStatus.INFERRED and edge.needs_review
    assert undo.act.kind == ActKind.UNDO and undo.act.undoes_id == act.pk
    with pytest.raises(CurationConflict, match="undone already"):
        act_undo(project=project, actor="user:8", act_id=act.pk)
    with pytest.raises(CurationConflict, match="not undone"):
        act_undo(project=project, actor="user:8", act_id=undo.act.pk)


def test_relabel_counts_as_approved_and_refuses_a_taken_or_engine_only_relation(project, pair):
    allergy, menu, edge = pair
    edge_update(project=project, actor="user:7", edge_id=edge.pk, relation=Relation.CONDITIONAL)
    edge.refresh_from_db()
    assert (edge.relation, edge.status) == (Relation.CONDITIONAL, EdgeStatus.APPROVED)
    link(allergy, menu, Relation.CAUSAL)
    with pytest.raises(CurationConflict):
        edge_update(project=project, actor="user:7", edge_id=edge.pk, relation=Relation.CAUSAL)
    with pytest.raises(ValidationFailed):
        edge_update(project=project, actor="user:7", edge_id=edge.pk, relation=Relation.SHARES_ENTITY)
    edge.refresh_from_db()
    assert edge.relation == Relation.CONDITIONAL, "a refused act changes nothing"


def test_a_drawn_edge_is_human_and_approved_and_its_undo_deletes_it(project, pair):
    allergy, menu, _ = pair
    outcome = edge_draw(project=project, actor="user:7", source_id=allergy.pk, target_id=menu.pk,
                        relation=Relation.CONDITIONAL, reason="dinner only where no shellfish")
    drawn = outcome.object
    assert (drawn.origin, drawn.status, drawn.confidence) == (EdgeOrigin.HUMAN, EdgeStatus.APPROVED, 1.0)
    with pytest.raises(CurationConflict):
        edge_draw(project=project, actor="user:7", source_id=allergy.pk, target_id=menu.pk,
                  relation=Relation.CONDITIONAL)
    with pytest.raises(ValidationFailed):
        edge_draw(project=project, actor="user:7", source_id=allergy.pk, target_id=allergy.pk,
                  relation=Relation.CAUSAL)
    act_undo(project=project, actor="user:7", act_id=outcome.act.pk)
    assert not Edge.objects.filter(pk=drawn.pk).exists()


def test_a_deleted_edge_comes_back_with_its_id_on_undo(project, pair):
    _, _, edge = pair
    outcome = edge_delete(project=project, actor="user:7", edge_id=edge.pk, reason="wrong")
    assert outcome.object is None and not Edge.objects.filter(pk=edge.pk).exists()
    act_undo(project=project, actor="user:7", act_id=outcome.act.pk)
    back = Edge.objects.get(pk=edge.pk)
    assert (back.relation, back.rationale, back.needs_review) == (edge.relation, edge.rationale, True)
    ops = GraphChange.objects.filter(object_type="edge", object_id=edge.pk).order_by("id").values_list("op", flat=True)
    assert list(ops) == ["edge.deleted", "edge.created"]


def test_memory_marks_one_at_a_time_and_an_undo_waits_for_later_acts(project, pair):
    allergy, _, _ = pair
    marked = memory_update(project=project, actor="user:7", memory_id=allergy.pk, sensitive=True, reason="health")
    archived = memory_update(project=project, actor="user:7", memory_id=allergy.pk, status="archived")
    assert Memory.objects.get(pk=allergy.pk).sensitive
    with pytest.raises(ValidationFailed):
        memory_update(project=project, actor="user:7", memory_id=allergy.pk, sensitive=False, kind="fact")
    with pytest.raises(ValidationFailed):
        memory_update(project=project, actor="user:7", memory_id=allergy.pk, status="forgotten")
    act_undo(project=project, actor="user:7", act_id=archived.act.pk)
    act_undo(project=project, actor="user:7", act_id=marked.act.pk)
    restored = Memory.objects.get(pk=allergy.pk)
    assert (restored.sensitive, restored.status) == (False, "active")
    kind = memory_update(project=project, actor="user:7", memory_id=allergy.pk, kind="constraint")
    memory_update(project=project, actor="user:7", memory_id=allergy.pk, kind="preference")
    with pytest.raises(CurationConflict, match="changed since"):
        act_undo(project=project, actor="user:7", act_id=kind.act.pk)


def test_inference_never_overrides_a_human_decision(project, pair):
    allergy, menu, edge = pair
    edge_update(project=project, actor="user:7", edge_id=edge.pk, status=EdgeStatus.REJECTED)
    created = edges_apply(menu, [Proposal(allergy, Relation.CAUSAL, 0.9, "cue 'because'")], threshold=0.6)
    assert created == [] and Edge.objects.filter(source=allergy, target=menu).count() == 1
    assert Edge.objects.get(pk=edge.pk).status == EdgeStatus.REJECTED


def test_curating_an_edge_changes_the_next_recalls_ranking_and_trace(project, agent_session):
    seed = remember(agent_session, "Xiaoming is allergic to shellfish and peanuts")
    far = remember(agent_session, "Booked the Dadong roast duck restaurant for Friday")
    for i in range(4):
        remember(agent_session, f"Note {i} about the museum opening hours on the Bund")
    edge = link(seed, far, Relation.CONDITIONAL, confidence=0.3, needs_review=True)

    def recall():
        # Full-text matches only: the vector ranking offers every memory as a weak match, the restaurant too,
        # and such a match fills k whatever its edges do.
        query = RecallQuery("what is Xiaoming allergic to", k=6, session=agent_session, preset="ripple",
                            params={"seed_count": 1, "use_vector": False, "use_dimensions": False})
        result = memory_recall(project=project, query=query, actor="t")
        scores = {i.memory.pk: i.score for i in result.items}
        carried = {a["edge_id"] for a in result.trace.activations if a["hop"] > 0}
        return scores, carried

    before, carried = recall()
    assert far.pk in before and edge.pk in carried
    edge_update(project=project, actor="user:7", edge_id=edge.pk, status=EdgeStatus.APPROVED)
    approved, carried = recall()
    assert approved[far.pk] > before[far.pk] and edge.pk in carried, "approved: the boost replaces confidence 0.3"
    edge_update(project=project, actor="user:7", edge_id=edge.pk, status=EdgeStatus.REJECTED)
    rejected, carried = recall()
    assert far.pk not in rejected and edge.pk not in carried, "rejected edges carry nothing"


# --- the API -------------------------------------------------------------------------------------------

def person(project, role: str, *, csrf: bool = False) -> APIClient:
    user = get_user_model().objects.create_user(f"c-{role}-{csrf}", password="a-long-password-1")
    Membership.objects.create(project=project, user=user, role=role)
    client = APIClient(enforce_csrf_checks=csrf)
    client.force_login(user)
    return client


def test_the_review_queue_lists_proposals_with_both_memories_weakest_first(project, pair, api):
    allergy, menu, edge = pair
    link(menu, allergy, Relation.REFERENCES, confidence=0.9)
    viewer = person(project, Role.VIEWER)
    body = viewer.get(f"/api/projects/{project.slug}/edges/?needs_review=true&order=weakest").json()
    assert body["count"] == 1
    (row,) = body["results"]
    assert row["id"] == edge.pk and row["source_label"].startswith("Xiaoming") and "Dadong" in row["target_label"]
    assert viewer.get(f"/api/projects/{project.slug}/edges/?status=nonsense").status_code == 400
    assert api.get(f"/api/projects/{project.slug}/edges/").status_code == 403, "agents do not curate"


def test_api_acts_need_the_csrf_token_and_answer_clear_errors(project, pair):
    _, _, edge = pair
    url = f"/api/projects/{project.slug}/edges/{edge.pk}/"
    strict = person(project, Role.CURATOR, csrf=True)
    assert strict.patch(url, {"status": "approved"}, format="json").status_code == 403
    curator = person(project, Role.CURATOR)
    assert curator.patch(url, {}, format="json").status_code == 400
    assert curator.patch(url, {"status": "inferred"}, format="json").status_code == 400
    assert curator.patch(f"/api/projects/{project.slug}/edges/999999/", {"status": "approved"},
                         format="json").status_code == 404
    answer = curator.patch(url, {"status": "approved", "reason": "checked"}, format="json")
    assert answer.status_code == 200, answer.content
    assert answer.json()["edge"]["status"] == "approved" and answer.json()["act"]["kind"] == "edge.approve"
    acts = curator.get(f"/api/projects/{project.slug}/curation/actions/?kind=edge.approve").json()
    assert [a["id"] for a in acts["results"]] == [answer.json()["act"]["id"]]
    undo = curator.post(f"/api/projects/{project.slug}/curation/actions/{answer.json()['act']['id']}/undo/", {},
                        format="json")
    assert undo.status_code == 200 and undo.json()["edge"]["status"] == "inferred"
    again = curator.post(f"/api/projects/{project.slug}/curation/actions/{answer.json()['act']['id']}/undo/", {},
                         format="json")
    assert again.status_code == 409 and again.json()["error"]["code"] == "conflict"
    assert CurationAct.objects.count() == 2


def test_marking_a_memory_sensitive_masks_it_for_viewers_at_once(project, agent_session, pair):
    allergy, _, _ = pair
    curator, viewer = person(project, Role.CURATOR), person(project, Role.VIEWER)
    answer = curator.patch(f"/api/projects/{project.slug}/memories/{allergy.pk}/",
                           {"sensitive": True, "reason": "health data"}, format="json")
    assert answer.status_code == 200 and answer.json()["memory"]["sensitive"] is True
    assert "shellfish" in answer.json()["memory"]["content"], "the curator still sees it"
    graph = viewer.get(f"/api/projects/{project.slug}/sessions/{agent_session.pk}/graph/").json()
    (node,) = [m for m in graph["memories"] if m["id"] == allergy.pk]
    assert node["content"] == "[sensitive]" and "shellfish" not in str(graph)
    assert viewer.patch(f"/api/projects/{project.slug}/memories/{allergy.pk}/", {"sensitive": False},
                        format="json").status_code == 403


def test_bulk_decisions_are_all_or_nothing_and_each_one_undoable(project, pair, agent_session):
    allergy, menu, edge = pair
    other = link(menu, allergy, Relation.REFERENCES, confidence=0.5, needs_review=True)
    curator = person(project, Role.CURATOR)
    url = f"/api/projects/{project.slug}/edges/bulk/"
    refused = curator.post(url, {"edge_ids": [edge.pk, 999999], "status": "rejected"}, format="json")
    assert refused.status_code == 404 and "999999" in refused.json()["error"]["message"]
    assert set(Edge.objects.values_list("status", flat=True)) == {"inferred"}, "nothing written half-way"
    done = curator.post(url, {"edge_ids": [edge.pk, other.pk], "status": "rejected"}, format="json")
    assert done.status_code == 200, done.content
    assert {e["status"] for e in done.json()["edges"]} == {"rejected"} and len(done.json()["acts"]) == 2
    act_undo(project=project, actor="user:7", act_id=done.json()["acts"][0]["id"])
    assert {Edge.objects.get(pk=edge.pk).status, Edge.objects.get(pk=other.pk).status} == {"inferred", "rejected"}


def test_the_queue_puts_the_edges_recalls_went_through_first(project, agent_session):
    seed = remember(agent_session, "Xiaoming is allergic to shellfish and peanuts")
    used = remember(agent_session, "Booked the Dadong roast duck restaurant for Friday")
    unused = remember(agent_session, "The museum opens at nine")
    quiet = link(used, unused, Relation.TEMPORAL, confidence=0.2, needs_review=True)
    busy = link(seed, used, Relation.CONDITIONAL, confidence=0.5, needs_review=True)
    for _ in range(2):
        memory_recall(project=project, query=RecallQuery("what is Xiaoming allergic to", k=4, session=agent_session,
                                                         params={"seed_count": 1, "max_hops": 1}), actor="t")
    viewer = person(project, Role.VIEWER)
    rows = viewer.get(f"/api/projects/{project.slug}/edges/?needs_review=true&order=impact").json()["results"]
    assert [(r["id"], r["impact"]) for r in rows] == [(busy.pk, 2), (quiet.pk, 0)]
    page = viewer.get(f"/p/{project.slug}/review/")
    assert page.status_code == 200 and b"review.js" in page.content
    narrowed = viewer.get(f"/p/{project.slug}/review/?session={agent_session.pk}").content.decode()
    assert f"session #{agent_session.pk}" in narrowed and "Show the whole project" in narrowed
    assert viewer.get(f"/p/{project.slug}/review/?session=99999999999999999999").status_code == 200
    other = session_create(project=project, title="Another", actor="t")
    assert viewer.get(f"/api/projects/{project.slug}/edges/?session={other.pk}").json()["count"] == 0
    assert b"Review queue (2 proposals)" in viewer.get(f"/p/{project.slug}/").content


def test_marking_offers_the_memories_that_repeat_the_same_values(project, agent_session):
    passport = remember(agent_session, "Xiaoming's passport number is E12345678")
    booking = remember(agent_session, "The hotel booking was made with passport E12345678")
    other = remember(agent_session, "The hotel booking was made for three nights")
    curator = person(project, Role.CURATOR)
    url = f"/api/projects/{project.slug}/memories/{passport.pk}/repeats/"
    rows = curator.get(url).json()
    assert [(r["id"], r["shared"]) for r in rows] == [(booking.pk, ["E12345678"])]
    memory_update(project=project, actor="user:7", memory_id=booking.pk, sensitive=True)
    assert curator.get(url).json() == [], "already sensitive: nothing more to offer"
    assert other.pk not in [r["id"] for r in rows]
    assert person(project, Role.VIEWER).get(url).status_code == 403


# --- entities ------------------------------------------------------------------------------------------

def _mentions(entity_id: int) -> list[int]:
    return sorted(EntityMention.objects.filter(entity_id=entity_id).values_list("memory_id", flat=True))


def test_merge_moves_mentions_and_names_and_undo_splits_them_back(project, agent_session):
    first = remember(agent_session, "Acme Corp sent the invoice")
    second = remember(agent_session, "Acme Corporation is the supplier")
    corp, corporation = (Entity.objects.get(project=project, normalized_name=n)
                         for n in ("acme corp", "acme corporation"))
    Entity.objects.filter(pk=corp.pk).update(evidence=[{"possibly_same_as": corporation.pk, "name": corporation.name,
                                                        "similarity": 0.78}])
    viewer = person(project, Role.VIEWER)
    flagged = viewer.get(f"/api/projects/{project.slug}/entities/?flagged=true").json()["results"]
    assert [(e["id"], e["possibly_same_as"][0]["id"]) for e in flagged] == [(corp.pk, corporation.pk)]
    curator = person(project, Role.CURATOR)
    answer = curator.post(f"/api/projects/{project.slug}/entities/{corp.pk}/merge/",
                          {"duplicate_id": corporation.pk, "reason": "the same supplier"}, format="json")
    assert answer.status_code == 200, answer.content
    body = answer.json()["entity"]
    assert body["aliases"] == ["Acme Corporation"] and body["possibly_same_as"] == [] and body["mentions"] == 2
    assert _mentions(corp.pk) == sorted([first.pk, second.pk]) and not Entity.objects.filter(pk=corporation.pk).exists()
    undo = curator.post(f"/api/projects/{project.slug}/curation/actions/{answer.json()['act']['id']}/undo/", {},
                        format="json")
    assert undo.status_code == 200, undo.content
    assert _mentions(corporation.pk) == [second.pk] and _mentions(corp.pk) == [first.pk]
    assert Entity.objects.get(pk=corp.pk).evidence[0]["possibly_same_as"] == corporation.pk


def test_rename_keeps_the_old_name_and_refuses_a_taken_one(project, agent_session):
    remember(agent_session, "We stay at the Peace Hotel near the Bund")
    remember(agent_session, "Acme Corp sent the invoice")
    bund = Entity.objects.get(project=project, normalized_name="bund")
    outcome = entity_rename(project=project, actor="user:7", entity_id=bund.pk, name="The Bund")
    assert (outcome.object.name, outcome.object.aliases) == ("The Bund", ["Bund"])
    with pytest.raises(CurationConflict, match="merge the two"):
        entity_rename(project=project, actor="user:7", entity_id=bund.pk, name="ACME corp")
    act_undo(project=project, actor="user:7", act_id=outcome.act.pk)
    assert (Entity.objects.get(pk=bund.pk).name, Entity.objects.get(pk=bund.pk).aliases) == ("Bund", [])


def test_split_takes_a_wrong_alias_off_with_its_mentions_and_undo_puts_it_back(project, agent_session):
    remember(agent_session, "We stay at the Peace Hotel near the Bund")
    fairmont = remember(agent_session, "Fairmont Peace Hotel has a jazz bar")
    peace = Entity.objects.get(project=project, normalized_name="peace hotel")
    assert peace.aliases == ["Fairmont Peace Hotel"], "the engine took the longer name as an alias"
    with pytest.raises(ValidationFailed):
        entity_split(project=project, actor="user:7", entity_id=peace.pk, alias="Nobody")
    apart = entity_split(project=project, actor="user:7", entity_id=peace.pk, alias="Fairmont Peace Hotel")
    assert apart.object.name == "Fairmont Peace Hotel" and _mentions(apart.object.pk) == [fairmont.pk]
    assert Entity.objects.get(pk=peace.pk).aliases == [] and fairmont.pk not in _mentions(peace.pk)
    act_undo(project=project, actor="user:7", act_id=apart.act.pk)
    assert Entity.objects.get(pk=peace.pk).aliases == ["Fairmont Peace Hotel"] and fairmont.pk in _mentions(peace.pk)
    assert not Entity.objects.filter(normalized_name="fairmont peace hotel").exists()


def test_a_dismissed_flag_is_gone_and_remembered(project, agent_session):
    remember(agent_session, "Acme Corp sent the invoice")
    remember(agent_session, "Acme Corporation is the supplier")
    corp, other = (Entity.objects.get(project=project, normalized_name=n) for n in ("acme corp", "acme corporation"))
    Entity.objects.filter(pk=corp.pk).update(evidence=[{"possibly_same_as": other.pk, "similarity": 0.76}])
    with pytest.raises(ValidationFailed):
        entity_flag_dismiss(project=project, actor="user:7", entity_id=other.pk, other_id=corp.pk)
    outcome = entity_flag_dismiss(project=project, actor="user:7", entity_id=corp.pk, other_id=other.pk)
    assert outcome.object.evidence == [{"not_same_as": other.pk, "by": "user:7"}]
    assert CurationAct.objects.get(pk=outcome.act.pk).kind == ActKind.ENTITY_FLAG
