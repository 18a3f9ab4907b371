"""A supersede across sessions shows in both sessions' graphs (issue 45, finding 2).

The edge is stored with the new memory's session; its source, the old memory, lives in another session. Each
session's graph sends the edge and, at its far end, a ghost: a small row for the other session's memory (its
session and title, kind, status, time and text), masked by the visibility rule, never a forgotten memory.
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from curation.services import edge_update
from memory.engine.ingest import InteractionInput, interactions_accept
from memory.engine.maintenance.forget import memory_forget
from memory.engine.pipeline import interaction_process
from memory.engine.projects import project_create, session_create
from memory.models import AgentSession, Edge, Membership, Memory, MemoryStatus, Relation, Role
from memory.visibility import SENSITIVE_MASK

OLD_PHONE = "My phone number is +1 555 201 3344."
NEW_PHONE = "Note that my phone number has changed to +1 555 987 6543."


def _say(session: AgentSession, text: str) -> Memory:
    (entry,) = interactions_accept(session=session, actor="test", items=[InteractionInput("user_input", text)])
    (memory,) = interaction_process(interaction_id=entry.interaction.pk).memories.all()
    return memory


def _client(project, role: str) -> APIClient:
    user = get_user_model().objects.create_user(f"ghost-{role}", password="pw")
    Membership.objects.create(project=project, user=user, role=role)
    client = APIClient()
    client.force_login(user)
    return client


def _graph(client, session, **params) -> dict:
    query = "&".join(f"{k}={v}" for k, v in params.items())
    response = client.get(f"/api/projects/{session.project.slug}/sessions/{session.pk}/graph/"
                          + (f"?{query}" if query else ""))
    assert response.status_code == 200, response.content
    return response.json()


@pytest.fixture
def replaced(project):
    """March holds the old phone number, April the new one; the supersede is proposed (nobody named)."""
    march = session_create(project=project, title="March", actor="t")
    april = session_create(project=project, title="April", actor="t")
    old = _say(march, OLD_PHONE)
    new = _say(april, NEW_PHONE)
    edge = Edge.objects.get(project=project, relation=Relation.SUPERSEDES)
    assert (edge.source_id, edge.target_id, edge.session_id, edge.needs_review) == (old.pk, new.pk, april.pk, True)
    return march, april, old, new, edge


@pytest.mark.parametrize("approved", [False, True])
def test_each_sessions_graph_has_the_edge_and_the_other_end_as_a_ghost(project, replaced, approved):
    march, april, old, new, edge = replaced
    if approved:  # applied: the old memory is superseded, and its session's graph says by what
        edge_update(project=project, actor="user:1", edge_id=edge.pk, status="approved")
    curator = _client(project, Role.CURATOR)

    old_side = _graph(curator, march)
    assert [m["id"] for m in old_side["memories"]] == [old.pk]
    assert [(e["id"], e["source_id"], e["target_id"], e["relation"]) for e in old_side["edges"]] == [
        (edge.pk, old.pk, new.pk, "supersedes")]
    (ghost,) = old_side["ghosts"]
    assert ghost == {"id": new.pk, "session_id": april.pk, "session_title": "April", "kind": new.kind,
                     "status": "active", "sensitive": False,
                     "occurred_at": new.occurred_at.isoformat().replace("+00:00", "Z"), "content": NEW_PHONE,
                     "label": NEW_PHONE}
    assert old_side["memories"][0]["status"] == ("superseded" if approved else "active")

    new_side = _graph(curator, april)
    assert [m["id"] for m in new_side["memories"]] == [new.pk]
    assert [e["id"] for e in new_side["edges"]] == [edge.pk]
    assert [(g["id"], g["session_id"], g["session_title"], g["content"], g["status"]) for g in new_side["ghosts"]] == [
        (old.pk, march.pk, "March", OLD_PHONE, "superseded" if approved else "active")]
    assert new_side["total_memories"] == 1  # a ghost is not one of the session's memories

    # A neighbourhood of the new memory reaches the ghost too.
    around = _graph(curator, april, around=new.pk, hops=1)
    assert [e["id"] for e in around["edges"]] == [edge.pk] and [g["id"] for g in around["ghosts"]] == [old.pk]


def test_a_viewer_gets_a_sensitive_ghost_masked_and_its_edge_without_rationale(project, replaced):
    march, april, old, new, edge = replaced
    Memory.objects.filter(pk=new.pk).update(sensitive=True)
    viewer, curator = _client(project, Role.VIEWER), _client(project, Role.CURATOR)

    seen = _graph(viewer, march)
    (ghost,) = seen["ghosts"]
    assert (ghost["id"], ghost["content"], ghost["label"], ghost["sensitive"]) == (
        new.pk, SENSITIVE_MASK, SENSITIVE_MASK, True)
    assert seen["edges"][0]["rationale"] == SENSITIVE_MASK
    assert "987" not in str(seen)
    whole = _graph(curator, march)
    assert whole["ghosts"][0]["content"] == NEW_PHONE and whole["edges"][0]["rationale"] == edge.rationale


def test_no_forgotten_memory_is_a_ghost_nor_an_edge_to_it(project, replaced):
    march, april, old, new, edge = replaced
    memory_forget(project=project, actor="user:1", memory_id=old.pk)
    curator = _client(project, Role.CURATOR)
    new_side = _graph(curator, april)
    assert new_side["ghosts"] == [] and new_side["edges"] == []
    assert _graph(curator, march)["memories"] == []
    response = curator.get(f"/api/projects/{project.slug}/sessions/{april.pk}/graph/ghosts/?ids={old.pk}")
    assert response.status_code == 200 and response.json() == {"ghosts": []}


def test_the_ghost_read_gives_only_other_sessions_memories_of_the_project(project, replaced):
    """What the page reads when a live edge reaches a memory it does not hold."""
    march, april, old, new, edge = replaced
    other_project = project_create(name="Elsewhere", slug="elsewhere")
    stranger = _say(session_create(project=other_project, title="Theirs", actor="t"), OLD_PHONE)
    Memory.objects.filter(pk=new.pk).update(sensitive=True)
    url = f"/api/projects/{project.slug}/sessions/{march.pk}/graph/ghosts/?ids={old.pk},{new.pk},{stranger.pk}"

    viewer = _client(project, Role.VIEWER)
    (ghost,) = viewer.get(url).json()["ghosts"]  # not March's own memory, not another project's
    assert (ghost["id"], ghost["session_id"], ghost["session_title"], ghost["content"]) == (
        new.pk, april.pk, "April", SENSITIVE_MASK)
    assert _client(project, Role.CURATOR).get(url).json()["ghosts"][0]["content"] == NEW_PHONE
    assert viewer.get(url.split("?")[0] + "?ids=1;DROP").status_code == 400
    assert viewer.get(url.split("?")[0]).status_code == 400


def test_a_memorys_and_an_edges_history_include_the_edge_recorded_in_the_other_session(project, replaced):
    march, april, old, new, edge = replaced
    edge_update(project=project, actor="user:1", edge_id=edge.pk, status="approved")
    curator = _client(project, Role.CURATOR)
    base = f"/api/projects/{project.slug}/sessions/{march.pk}/changes/?after=0"
    ops = [c["op"] for c in curator.get(f"{base}&memory={old.pk}").json()["changes"]]
    assert "edge.created" in ops and "edge.updated" in ops and "memory.superseded" in ops
    assert [c["op"] for c in curator.get(f"{base}&edge={edge.pk}").json()["changes"]] == [
        "edge.created", "edge.updated"]
    old.refresh_from_db()
    assert old.status == MemoryStatus.SUPERSEDED


def test_the_live_listener_sends_an_edge_change_to_the_sessions_of_both_ends(project, replaced):
    from memory.engine.snapshots import change_snapshot
    from memory.live.listener import crossing_messages
    from memory.models import GraphChange

    march, april, old, new, edge = replaced
    created = GraphChange.objects.get(object_type="edge", object_id=edge.pk, op="edge.created")
    assert created.session_id == april.pk
    snapshots = [change_snapshot(c) for c in GraphChange.objects.filter(project=project).order_by("id")]
    messages = crossing_messages(snapshots)
    assert list(messages) == [f"session.{march.pk}"]  # April's own group has it already
    assert [c["id"] for m in messages[f"session.{march.pk}"] for c in m["changes"]] == [created.pk]
