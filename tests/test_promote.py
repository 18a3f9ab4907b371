"""Promoting a filtered interaction: a person overrides the selective filter, through the real write path."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from memory.engine.ingest import InteractionInput, interactions_accept
from memory.engine.pipeline import interaction_promote
from memory.errors import NotPromotable
from memory.models import GraphChange, Interaction, Membership, Memory, Role

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def dropped(agent_session) -> tuple[Interaction, Interaction]:
    items = [InteractionInput("user_input", "My budget is 5000 RMB for the whole trip"),
             InteractionInput("user_input", "ok thanks")]
    kept, chat = (Interaction.objects.get(pk=a.interaction.pk)
                  for a in interactions_accept(session=agent_session, items=items, actor="test"))
    assert kept.status == "kept" and chat.status == "filtered"
    return kept, chat


def _client(django_user_model, project, role: str) -> APIClient:
    user = django_user_model.objects.create_user(username=role, password="x")
    Membership.objects.create(project=project, user=user, role=role)
    client = APIClient()
    client.force_login(user)
    return client


def url(interaction: Interaction) -> str:
    return (f"/api/projects/{interaction.project.slug}/sessions/{interaction.session_id}/interactions/"
            f"{interaction.pk}/promote/")


def test_a_filtered_interaction_becomes_a_memory_with_the_filters_reason_kept(dropped):
    _kept, chat = dropped
    promoted = interaction_promote(interaction_id=chat.pk, actor="user:alice")
    assert promoted.status == "kept"
    memory = Memory.objects.get(sources=chat)
    assert memory.content == "ok thanks" and memory.session_id == chat.session_id
    assert promoted.reason.startswith("promoted by user:alice (the filter said: chit-chat")
    change = GraphChange.objects.filter(object_type="interaction", object_id=chat.pk).latest("id")
    assert (change.op, change.actor) == ("interaction.promoted", "user:alice")
    assert GraphChange.objects.filter(op="memory.created", object_id=memory.pk).exists()
    # Linked into the graph like any memory (adjacent to the budget memory).
    assert memory.in_edges.filter(relation="next_in_session").exists()


def test_only_filtered_interactions_can_be_promoted(dropped):
    kept, chat = dropped
    with pytest.raises(NotPromotable):
        interaction_promote(interaction_id=kept.pk, actor="user:alice")
    interaction_promote(interaction_id=chat.pk, actor="user:alice")
    with pytest.raises(NotPromotable):  # twice: the second finds it kept
        interaction_promote(interaction_id=chat.pk, actor="user:alice")
    assert Memory.objects.filter(sources=chat).count() == 1


def test_api_roles_and_errors(dropped, django_user_model, project, api):
    kept, chat = dropped
    viewer, curator = (_client(django_user_model, project, r) for r in (Role.VIEWER, Role.CURATOR))
    assert viewer.post(url(chat)).status_code == 403
    refused = api.post(url(chat))  # an agent token: curation is for people
    assert refused.status_code == 403 and "person" in refused.json()["error"]["message"]
    assert not Memory.objects.filter(sources=chat).exists()
    answer = curator.post(url(chat))
    assert answer.status_code == 200, answer.content
    assert answer.json()["status"] == "kept" and answer.json()["memory_ids"]
    again = curator.post(url(chat))
    assert again.status_code == 409 and again.json()["error"]["code"] == "not_promotable"
    missing = curator.post(url(chat).replace(f"/{chat.pk}/", "/999999/"))
    assert missing.status_code == 404
