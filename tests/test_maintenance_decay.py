"""Decay and archive on the real database: what faded is archived, what people stand behind is not."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.core.management import CommandError, call_command
from django.test import override_settings
from django.utils import timezone

from memory.engine.events import session_group
from memory.engine.maintenance.decay import decay_run, memories_restore
from memory.engine.recall import RecallQuery, memory_recall
from memory.errors import ValidationFailed
from memory.models import EdgeOrigin, EdgeStatus, GraphChange, Memory, Relation

from .test_maintenance_support import db_state, link, remember

pytestmark = pytest.mark.django_db
IN_MEMORY_LAYER = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}


@pytest.fixture
def aged(agent_session):
    """Memories of every kind of fate, 200 days old unless said otherwise."""
    now = timezone.now()
    old = now - timedelta(days=200)
    s = agent_session
    memories = {
        "faded": remember(s, "The hotel lobby had a blue carpet during the first visit", importance=1.0,
                          occurred_at=old),
        "important": remember(s, "The budget for the whole trip is 5000 RMB at most", importance=5.0,
                              occurred_at=now - timedelta(days=60)),
        "fresh": remember(s, "The taxi driver mentioned a new noodle shop nearby", importance=1.0,
                          occurred_at=now - timedelta(days=1)),
        "used": remember(s, "The museum on the river closes early on Mondays", importance=1.0, occurred_at=old,
                         access_count=6, last_accessed_at=now - timedelta(days=2)),
        "sensitive": remember(s, "Passport number of the traveller is kept in the safe", importance=1.0,
                              occurred_at=old, sensitive=True),
        "superseded": remember(s, "The old phone number of the hotel was 021-5555-0000", importance=1.0,
                               occurred_at=old, status="superseded"),
        "vouched": remember(s, "The traveller dislikes crowded breakfast rooms", importance=1.0, occurred_at=old),
        "forgotten": remember(s, "An old note the admin forgot about the parking lot", importance=1.0,
                              occurred_at=old, status="forgotten"),
    }
    link(memories["fresh"], memories["vouched"], Relation.ELABORATES, status=EdgeStatus.APPROVED,
         origin=EdgeOrigin.HUMAN)
    return memories


def test_faded_memories_are_archived_and_the_rest_untouched(project, aged):
    report = decay_run(project=project, actor="user:1")

    assert sorted(report.ids["archived"]) == sorted([aged["faded"].pk, aged["superseded"].pk])
    assert report.counts["archived"] == 2
    status = dict(Memory.objects.values_list("id", "status"))
    assert status[aged["faded"].pk] == status[aged["superseded"].pk] == "archived"
    for name in ("important", "fresh", "used", "vouched"):
        assert status[aged[name].pk] == "active", name
    assert status[aged["sensitive"].pk] == "active"
    assert status[aged["forgotten"].pk] == "forgotten"
    changes = GraphChange.objects.filter(op="memory.archived").order_by("object_id")
    assert [c.object_id for c in changes] == sorted(report.ids["archived"])
    for change in changes:
        assert change.actor == "user:1"
        assert change.before["status"] in ("active", "superseded") and change.after["status"] == "archived"
        assert 0 <= change.after["decay_weight"] < 0.05
    audit = GraphChange.objects.get(op="maintenance.decay")
    assert audit.after["counts"]["archived"] == 2 and audit.actor == "user:1"


def test_dry_run_counts_what_the_real_run_does_and_writes_nothing(project, aged, django_capture_on_commit_callbacks):
    before = db_state()
    with django_capture_on_commit_callbacks() as callbacks:
        dry = decay_run(project=project, actor="t", dry_run=True)
    assert callbacks == [], "a dry run publishes nothing"
    assert db_state() == before
    real = decay_run(project=project, actor="t")
    assert dry.dry_run and not real.dry_run
    assert dry.counts == real.counts and dry.ids == real.ids
    assert real.counts["archived"] == 2


def test_archived_leaves_default_recall_and_comes_back_when_asked(project, aged):
    text = "hotel lobby blue carpet first visit"
    decay_run(project=project, actor="t")  # before any recall: a recall counts as use and refreshes
    after = memory_recall(project=project, query=RecallQuery(text, k=8, preset="vector"), actor="t")
    assert aged["faded"].pk not in [i.memory.pk for i in after.items]
    asked = memory_recall(project=project, query=RecallQuery(text, k=3, preset="vector",
                                                             params={"statuses": ["active", "archived"]}), actor="t")
    assert asked.items[0].memory.pk == aged["faded"].pk


def test_a_recall_counts_as_use(project, aged):
    memory_recall(project=project, query=RecallQuery("hotel lobby blue carpet first visit", k=1, preset="vector"),
                  actor="t")
    report = decay_run(project=project, actor="t", dry_run=True)
    assert report.ids["archived"] == [aged["superseded"].pk]


def test_restore_brings_archived_back(project, aged):
    decay_run(project=project, actor="t")
    report = memories_restore(project=project, actor="t", memory_ids=[aged["faded"].pk])
    assert report.counts["restored"] == 1
    assert Memory.objects.get(pk=aged["faded"].pk).status == "active"
    assert GraphChange.objects.filter(op="memory.restored", object_id=aged["faded"].pk).count() == 1


def test_settings_per_project_and_per_run(project, aged):
    project.settings = {"maintenance": {"decay_archive_threshold": 0.3}}
    project.save()
    report = decay_run(project=project, actor="t", dry_run=True)
    assert aged["important"].pk in report.ids["archived"]  # 1.0 × 0.25 < 0.3
    assert aged["fresh"].pk not in report.ids["archived"]  # 0.2 < 0.3, but the parent end of an approved edge
    report = decay_run(project=project, actor="t", dry_run=True, threshold=0.05, half_life_days=1000)
    assert report.counts["archived"] == 0  # 0.2 × 0.5^0.2 ≈ 0.17: nothing fades that slowly
    report = decay_run(project=project, actor="t", dry_run=True, kinds=["preference"], threshold=1.0)
    assert report.counts["examined"] == 0  # every memory here is a fact


def test_force_archives_named_memories_but_never_vouched_or_sensitive(project, aged):
    named = [aged["important"].pk, aged["vouched"].pk, aged["sensitive"].pk]
    report = decay_run(project=project, actor="t", memory_ids=named, force=True)
    assert report.ids["archived"] == [aged["important"].pk]


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"threshold": -1}, "threshold"),
    ({"half_life_days": 0}, "half_life_days"),
    ({"kinds": ["gossip"]}, "kinds"),
    ({"memory_ids": [10**9]}, "memory_ids"),
    ({"force": True}, "memory_ids"),
])
def test_bad_parameters_are_refused_before_anything_is_written(project, aged, kwargs, field):
    before = db_state()
    with pytest.raises(ValidationFailed) as error:
        decay_run(project=project, actor="t", **kwargs)
    assert field in error.value.extra
    assert db_state() == before


@override_settings(CHANNEL_LAYERS=IN_MEMORY_LAYER)
def test_archiving_is_published_after_commit(project, agent_session, aged, django_capture_on_commit_callbacks):
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(session_group(agent_session.pk), channel)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        decay_run(project=project, actor="t")
    assert callbacks, "publication waits for the commit"
    for callback in callbacks:
        callback()
    ops = []
    while len(ops) < 2:
        message = async_to_sync(layer.receive)(channel)
        ops += [c["op"] for c in message["changes"]]
    assert ops == ["memory.archived", "memory.archived"]


def test_command_dry_run_then_run(project, aged):
    out, err = StringIO(), StringIO()
    call_command("decay_memories", "--project", "travel", "--dry-run", stdout=out, stderr=err)
    assert "dry run, nothing was written" in out.getvalue() and "archived: 2" in out.getvalue()
    assert "decay" in err.getvalue() and "2/2" in err.getvalue()  # the progress bar went to stderr
    assert Memory.objects.filter(status="archived").count() == 0
    out = StringIO()
    call_command("decay_memories", "--project", "travel", stdout=out, stderr=StringIO())
    assert "decay: done" in out.getvalue() and "archived: 2" in out.getvalue()
    assert Memory.objects.filter(status="archived").count() == 2
    call_command("decay_memories", "--project", "travel", "--restore", "--ids", str(aged["faded"].pk),
                 stdout=StringIO(), stderr=StringIO())
    assert Memory.objects.get(pk=aged["faded"].pk).status == "active"


@pytest.mark.parametrize(("args", "message"), [
    (["--project", "nope"], "No project with slug 'nope'"),
    (["--project", "travel", "--threshold", "-2"], "invalid decay parameters"),
    (["--project", "travel", "--ids", "999999999"], "unknown memory id(s)"),
    (["--project", "travel", "--session", "999999999"], "No session 999999999"),
])
def test_command_errors_are_clear(project, aged, args, message):
    before = db_state()
    with pytest.raises(CommandError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call_command("decay_memories", *args, stdout=StringIO(), stderr=StringIO())
    assert db_state() == before
