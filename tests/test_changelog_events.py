"""The change log is written with the change, in order, and published only after commit."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction
from django.test import override_settings

from memory.engine.changelog import change_record
from memory.engine.events import session_group
from memory.engine.ingest import InteractionInput, interactions_accept
from memory.models import GraphChange, Interaction

IN_MEMORY_LAYER = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}


@pytest.mark.django_db(transaction=True)
def test_change_record_refuses_to_run_outside_a_transaction(project):
    with pytest.raises(RuntimeError):
        change_record(project=project, session=None, actor="t", op="memory.updated", object_type="memory", object_id=1)


@pytest.mark.django_db
def test_change_record_refuses_an_operation_outside_the_contract(project):
    with pytest.raises(ValueError), transaction.atomic():
        change_record(project=project, session=None, actor="t", op="memory.renamed", object_type="memory", object_id=1)


@pytest.mark.django_db
def test_rolled_back_change_leaves_no_log_and_no_event(agent_session):
    before = GraphChange.objects.count()
    with pytest.raises(ZeroDivisionError):
        with transaction.atomic():
            interactions_accept(session=agent_session, items=[InteractionInput("user_input", "Budget is 900 EUR")],
                                actor="t")
            raise ZeroDivisionError
    assert GraphChange.objects.count() == before
    assert not Interaction.objects.exists()


@override_settings(CHANNEL_LAYERS=IN_MEMORY_LAYER)
@pytest.mark.django_db
def test_events_are_published_after_commit_and_round_trip_json(agent_session, django_capture_on_commit_callbacks):
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(session_group(agent_session.pk), channel)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        interactions_accept(session=agent_session, items=[InteractionInput("user_input", "Budget is 900 EUR")],
                            actor="token:1")
    assert callbacks, "publication waits for the commit"
    for callback in callbacks:
        callback()
    message = async_to_sync(layer.receive)(channel)
    assert message["type"] == "graph.changed"
    change = message["changes"][0]
    assert change["op"] == "interaction.received" and change["actor"] == "token:1"
    assert json.loads(json.dumps(message)) == message
    received = GraphChange.objects.get(session=agent_session, op="interaction.received")
    assert message["last_change_id"] == change["id"] == received.id


@pytest.mark.django_db(transaction=True)
def test_change_ids_increase_in_pipeline_order(api, agent_session):
    url = f"/api/projects/{agent_session.project.slug}/sessions/{agent_session.pk}/interactions/?wait=true"
    for text in ["Budget is 5000 RMB", "Dates are 12 to 14 October", "thanks"]:
        api.post(url, {"kind": "user_input", "content": text}, format="json")
    ops = list(GraphChange.objects.filter(session=agent_session).order_by("id").values_list("op", flat=True))
    assert ops == [
        "session.created",
        "interaction.received", "memory.created", "interaction.kept",
        "interaction.received", "memory.created", "edge.created", "interaction.kept",
        "interaction.received", "interaction.filtered",
    ]
