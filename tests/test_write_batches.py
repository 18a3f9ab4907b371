"""Batches on the write path: several interactions of a session in one transaction, one change-log
append, and a worker's job taking the pending interactions that follow its own."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.db import connection, transaction
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from memory.engine.changelog import change_record, changes_deferred
from memory.engine.ingest import InteractionInput, interactions_accept
from memory.engine.pipeline import interactions_process_batch
from memory.models import GraphChange, Interaction, Memory
from memory.tasks import process_interaction

pytestmark = pytest.mark.django_db(transaction=True)
QUEUE = {**settings.MEMORY, "INGEST_MODE": "queue"}
TEXTS = ["The hotel budget is 800 RMB per night near the Bund",
         "We land in Shanghai at 08:40 on 12 October",
         "ok thanks",
         "Because the Bund hotels are sold out on 12 October, book the Jing'an one"]


@override_settings(MEMORY=QUEUE)
def _pending(session, texts=TEXTS) -> list[int]:
    accepted = interactions_accept(session=session, items=[InteractionInput("user_input", t) for t in texts],
                                   actor="test")
    return [a.interaction.pk for a in accepted]


def _ops(session) -> list[tuple[str, int | None]]:
    return list(GraphChange.objects.filter(session=session, object_type__in=["interaction", "memory"])
                .exclude(op="interaction.received").order_by("id").values_list("op", "object_id"))


def test_a_batch_commits_once_and_appends_its_changes_in_one_statement(agent_session):
    ids = _pending(agent_session)
    with CaptureQueriesContext(connection) as queries:
        interactions_process_batch(ids)
    appends = [q["sql"] for q in queries.captured_queries if q["sql"].startswith("INSERT INTO memory_graphchange")]
    assert len(appends) == 1
    statuses = dict(Interaction.objects.filter(pk__in=ids).values_list("pk", "status"))
    assert [statuses[i] for i in ids] == ["kept", "kept", "filtered", "kept"]
    # The log reads in pipeline order: each interaction's memory before its verdict, interactions in turn.
    verdicts = [object_id for op, object_id in _ops(agent_session) if op.startswith("interaction.")]
    assert verdicts == ids
    memories = list(Memory.objects.filter(session=agent_session).order_by("id"))
    assert [m.content for m in memories] == [t for t in TEXTS if t != "ok thanks"]
    # Later members of the batch saw the earlier ones: each memory follows the one before it.
    for before, after in zip(memories, memories[1:], strict=False):
        assert list(after.in_edges.filter(relation="next_in_session").values_list("source_id", flat=True)) \
            == [before.pk]


def test_a_failing_member_leaves_nothing_half_way_and_the_others_are_processed(agent_session):
    ids = _pending(agent_session, TEXTS[:2])
    missing = max(ids) + 10_000
    interactions_process_batch([ids[0], missing, ids[1]])  # the missing one fails the batch's transaction
    assert set(Interaction.objects.filter(pk__in=ids).values_list("status", flat=True)) == {"kept"}
    assert Memory.objects.filter(session=agent_session).count() == 2
    ops = _ops(agent_session)
    assert [op for op, _ in ops] == ["memory.created", "interaction.kept"] * 2  # once each: the batch left nothing


def test_a_job_takes_the_pending_interactions_after_its_own(agent_session):
    ids = _pending(agent_session)
    process_interaction(interaction_id=ids[1])  # the second one's job: the first is left for its own job
    statuses = dict(Interaction.objects.filter(pk__in=ids).values_list("pk", "status"))
    assert statuses[ids[0]] == "pending"
    assert [statuses[i] for i in ids[1:]] == ["kept", "filtered", "kept"]
    changes = GraphChange.objects.count()
    process_interaction(interaction_id=ids[2])  # already done by the batch: nothing changes
    assert GraphChange.objects.count() == changes
    process_interaction(interaction_id=ids[0])
    assert Interaction.objects.get(pk=ids[0]).status == "kept"


def test_a_job_for_a_vanished_interaction_does_nothing(agent_session):
    changes = GraphChange.objects.count()
    process_interaction(interaction_id=10**12)
    assert GraphChange.objects.count() == changes


def test_deferred_changes_are_appended_at_the_end_or_not_at_all(agent_session):
    with transaction.atomic(), changes_deferred():
        first = change_record(project=agent_session.project, session=agent_session, actor="t",
                              op="memory.updated", object_type="memory", object_id=10**9 + 1)
        second = change_record(project=agent_session.project, session=agent_session, actor="t",
                               op="memory.archived", object_type="memory", object_id=10**9 + 2)
        assert first.id is None and not GraphChange.objects.filter(object_id__gt=10**9).exists()
    assert first.id < second.id
    assert list(GraphChange.objects.filter(object_id__gt=10**9).order_by("id").values_list("op", flat=True)) \
        == ["memory.updated", "memory.archived"]
    with pytest.raises(RuntimeError), transaction.atomic(), changes_deferred():
        change_record(project=agent_session.project, session=agent_session, actor="t", op="memory.updated",
                      object_type="memory", object_id=10**9 + 3)
        raise RuntimeError("the change fails")
    assert not GraphChange.objects.filter(object_id=10**9 + 3).exists()


def test_a_batch_failing_at_its_end_keeps_nothing_of_it_and_then_processes_each(agent_session, caplog):
    """Interactions of two projects cannot share one change-log append: the batch fails after all of
    its work was done, everything is rolled back, and each interaction is then processed on its own."""
    from memory.engine.projects import project_create, session_create

    other = session_create(project=project_create(name="Other", slug="other-batch"), title="o", task="",
                           actor="test")
    ids = _pending(agent_session, TEXTS[:1]) + _pending(other, TEXTS[1:2])
    interactions_process_batch(ids)
    assert "batch of 2 interactions failed" in caplog.text and "several projects" in caplog.text
    assert set(Interaction.objects.filter(pk__in=ids).values_list("status", flat=True)) == {"kept"}
    for session in (agent_session, other):
        assert [op for op, _ in _ops(session)] == ["memory.created", "interaction.kept"]
        assert Memory.objects.filter(session=session).count() == 1
