"""The one visibility rule (memory/visibility.py) on every REST and page way out, for viewers and agents.

Each test reads what used to leak a sensitive memory's text to a viewer or an agent token: an edge's
rationale, the raw interaction behind it (pending or repeated), the session page's embedded
interactions, the change log's recall rows, a maintenance answer's dimensions. The websocket side is
in test_live_websocket.py.
"""

from __future__ import annotations

import json

import pytest
from django.db import transaction

from memory.engine.changelog import change_record
from memory.engine.ingest import InteractionInput, interactions_accept
from memory.engine.snapshots import edge_snapshot
from memory.models import GraphChange, Interaction, InteractionStatus, Membership, Memory, Role

from .test_maintenance_support import link, remember

pytestmark = pytest.mark.django_db
PHONE = "+8613912345678"


@pytest.fixture
def phone_change(agent_session):
    """A sensitive memory and an edge whose rationale quotes its value, logged as the engine logs it."""
    old = remember(agent_session, "My phone number is +8613800138000")
    new = remember(agent_session, f"My new phone number is {PHONE}", sensitive=True)
    with transaction.atomic():
        edge = link(old, new, "supersedes", rationale=f"new phone of user: {PHONE}")
        change_record(project=agent_session.project, session=agent_session, actor="engine", op="edge.created",
                      object_type="edge", object_id=edge.pk, after=edge_snapshot(edge))
    return new, edge


def base(session) -> str:
    return f"/api/projects/{session.project.slug}/sessions/{session.pk}"


def test_an_edge_rationale_quoting_a_sensitive_value_is_masked_in_the_graph_and_the_change_log(
        agent_session, readers, phone_change):
    _, edge = phone_change
    for reader in ("viewer", "token", "curator"):
        graph = readers[reader].get(f"{base(agent_session)}/graph/").json()
        changes = readers[reader].get(f"{base(agent_session)}/changes/").json()
        (drawn,) = [e for e in graph["edges"] if e["id"] == edge.pk]
        (logged,) = [c for c in changes["changes"] if c["op"] == "edge.created"]
        if reader == "curator":
            assert PHONE in drawn["rationale"] and PHONE in logged["after"]["rationale"]
        else:
            assert drawn["rationale"] == logged["after"]["rationale"] == "[sensitive]", reader
            assert PHONE not in json.dumps(graph) + json.dumps(changes), reader


def test_a_repeat_attached_to_a_sensitive_memory_and_a_pending_interaction_are_masked(agent_session, readers):
    secret = remember(agent_session, f"My new phone number is {PHONE}", sensitive=True)
    repeat = Interaction.objects.create(project=agent_session.project, session=agent_session, kind="user_input",
                                        content=f"my new phone number is {PHONE}", occurred_at=secret.occurred_at,
                                        status=InteractionStatus.FILTERED, reason=f"repeats memory #{secret.pk}")
    secret.sources.add(repeat)
    (pending,) = interactions_accept(session=agent_session, actor="t", items=[
        InteractionInput("user_input", f"Please call me on {PHONE} tomorrow")])  # not processed: no commit here
    assert Interaction.objects.get(pk=pending.interaction.pk).status == InteractionStatus.PENDING
    for reader in ("viewer", "token"):
        listing = readers[reader].get(f"{base(agent_session)}/interactions/").json()
        detail = readers[reader].get(f"{base(agent_session)}/interactions/{repeat.pk}/").json()
        assert PHONE not in json.dumps(listing) + json.dumps(detail), reader
        contents = {row["id"]: row["content"] for row in listing["results"]}
        assert contents[repeat.pk] == "[sensitive]" and contents[pending.interaction.pk] == "[not processed yet]"
    curator = readers["curator"].get(f"{base(agent_session)}/interactions/").json()
    assert sum(PHONE in row["content"] for row in curator["results"]) == 3


def test_the_session_page_embeds_filtered_repeats_masked_for_a_viewer(agent_session, client, django_user_model):
    secret = remember(agent_session, f"My new phone number is {PHONE}", sensitive=True)
    repeat = Interaction.objects.create(project=agent_session.project, session=agent_session, kind="user_input",
                                        content=f"my new phone number is {PHONE}", occurred_at=secret.occurred_at,
                                        status=InteractionStatus.FILTERED, reason=f"repeats memory #{secret.pk}")
    secret.sources.add(repeat)
    page = f"/p/{agent_session.project.slug}/sessions/{agent_session.pk}/"
    for role, shown in ((Role.VIEWER, False), (Role.CURATOR, True)):
        user = django_user_model.objects.create_user(f"page-{role}", password="a-long-password-1")
        Membership.objects.create(project=agent_session.project, user=user, role=role)
        client.force_login(user)
        html = client.get(page).content.decode()
        assert (PHONE in html) is shown, role
        assert shown or "[sensitive]" in html


def test_recall_rows_of_the_change_log_carry_no_query_and_only_visible_memories(agent_session, readers):
    secret = remember(agent_session, "Xiaoming's passport number is K7741 for the hotel check-in", sensitive=True)
    plain = remember(agent_session, "The hotel check-in opens at 14:00 at the front desk")
    url = f"/api/projects/{agent_session.project.slug}/recall/"
    query = {"query": "hotel check-in passport", "session_id": agent_session.pk, "k": 5, "preset": "hybrid"}
    assert readers["curator"].post(url, query, format="json").status_code == 200
    (row,) = GraphChange.objects.filter(op="recall.completed")
    assert "query" not in row.after and {secret.pk, plain.pk} <= set(row.after["memory_ids"])
    for reader, sees_secret in (("viewer", False), ("token", False), ("curator", True)):
        changes = readers[reader].get(f"{base(agent_session)}/changes/").json()["changes"]
        (logged,) = [c for c in changes if c["op"] == "recall.completed"]
        assert "passport" not in json.dumps(logged)
        assert (secret.pk in logged["after"]["memory_ids"]) is sees_secret and plain.pk in logged["after"]["memory_ids"]


def test_a_persons_recall_does_not_count_as_an_access_an_agents_does(agent_session, readers):
    memory = remember(agent_session, "The hotel check-in opens at 14:00 at the front desk")
    url = f"/api/projects/{agent_session.project.slug}/recall/"
    query = {"query": "hotel check-in", "session_id": agent_session.pk, "k": 3}
    for reader, expected in (("viewer", 0), ("curator", 0), ("token", 1)):
        assert readers[reader].post(url, query, format="json").status_code == 200
        assert Memory.objects.get(pk=memory.pk).access_count == expected, reader


def test_an_entity_change_names_only_what_the_reader_may_see(agent_session):
    from curation.entities import entity_rename
    from memory.engine.events import group_messages, project_wide_group
    from memory.engine.snapshots import change_snapshot
    from memory.models import Entity
    from memory.visibility import changes_for_viewer

    secret = remember(agent_session, "Xiaoming's doctor is at the Huashan Hospital", sensitive=True)
    hospital = Entity.objects.get(project=agent_session.project, normalized_name="huashan hospital")
    outcome = entity_rename(project=agent_session.project, actor="user:1", entity_id=hospital.pk,
                            name="Huashan Hospital Pudong")
    (change,) = outcome.act.changes.all()
    snapshot = change_snapshot(change)
    (shown,) = changes_for_viewer([snapshot], show_sensitive=False)
    assert shown["after"]["name"] == shown["before"]["name"] == "[sensitive]" and shown["after"]["aliases"] == []
    assert "Huashan" not in json.dumps(shown)
    assert changes_for_viewer([snapshot], show_sensitive=True)[0]["after"]["name"] == "Huashan Hospital Pudong"
    assert list(group_messages([snapshot])) == [f"project.{agent_session.project_id}",
                                                 project_wide_group(agent_session.project_id)]
    assert secret.pk  # only a sensitive memory mentions it


def test_the_reasons_a_failure_recorded_are_masked_with_the_interaction(agent_session, readers):
    """An error's first line may quote the value that broke it: a sensitive memory's source interaction keeps
    no such text for a viewer or a token (the failed stages' names stay)."""
    secret = remember(agent_session, f"My new phone number is {PHONE}", sensitive=True)
    source = secret.sources.get()
    Interaction.objects.filter(pk=source.pk).update(
        error=f"ValueError: bad phone {PHONE}", stage_errors={"dimensions": f"ValueError: bad phone {PHONE}"})
    for reader in ("viewer", "token"):
        detail = readers[reader].get(f"{base(agent_session)}/interactions/{source.pk}/").json()
        assert PHONE not in json.dumps(detail), reader
        assert detail["stage_errors"] == {"dimensions": "[sensitive]"}
    curator = readers["curator"].get(f"{base(agent_session)}/interactions/{source.pk}/").json()
    assert PHONE in curator["error"] and PHONE in curator["stage_errors"]["dimensions"]
