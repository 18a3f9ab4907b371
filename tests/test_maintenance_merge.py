"""Merging duplicates on the real database: edges follow the survivor, provenance stays, humans win."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db.models import F, Q
from django.utils import timezone

from memory.engine.ingest import InteractionInput, interactions_accept
from memory.engine.maintenance.merge import duplicates_find, merge_memories, merge_run
from memory.engine.projects import session_create
from memory.engine.recall import RecallQuery, memory_recall
from memory.errors import NotFoundError, ValidationFailed
from memory.models import Edge, EdgeOrigin, EdgeStatus, EntityMention, GraphChange, Memory, MemoryEmbedding, Relation

from .test_maintenance_support import db_state, link, remember

pytestmark = pytest.mark.django_db

ALLERGY = "Xiaoming is allergic to peanuts and shellfish at every meal"


@pytest.fixture
def graph(agent_session):
    """A (older) and B (its duplicate), with edges that exercise every redirect rule."""
    start = timezone.now() - timedelta(hours=2)
    s = agent_session

    def at(minutes: int):
        return start + timedelta(minutes=minutes)

    m = {
        "cause": remember(s, "The waiter asked about food allergies before ordering", occurred_at=at(0)),
        "a": remember(s, ALLERGY, occurred_at=at(1), importance=3.0),
        "b": remember(s, ALLERGY + "!", occurred_at=at(2), importance=4.5),
        "c": remember(s, "Book the seafood-free restaurant near the Bund for dinner", occurred_at=at(3)),
        "budget_a": remember(s, "The dinner budget is 300 RMB per person", occurred_at=at(4)),
        "budget_b": remember(s, "The dinner budget is 450 RMB per person", occurred_at=at(5)),
    }
    Memory.objects.filter(pk=m["b"].pk).update(access_count=3, last_accessed_at=timezone.now())
    e = {
        "cause_b": link(m["cause"], m["b"], Relation.CAUSAL),  # redirected to cause -> a
        "b_c": link(m["b"], m["c"], Relation.TEMPORAL),  # redirected to a -> c
        "a_c": link(m["a"], m["c"], Relation.CAUSAL),  # twin of b_c2, inferred
        "b_c2": link(m["b"], m["c"], Relation.CAUSAL, status=EdgeStatus.APPROVED, origin=EdgeOrigin.HUMAN),
        "a_b": link(m["a"], m["b"], Relation.NEXT_IN_SESSION),  # would be a self-loop
    }
    return m, e


def test_duplicates_are_found_but_not_different_values(project, graph):
    m, _ = graph
    pairs = duplicates_find(project)
    assert [(p.survivor_id, p.duplicate_id) for p in pairs] == [(m["a"].pk, m["b"].pk)]
    assert pairs[0].similarity >= 0.93
    # "300 RMB" and "450 RMB" are near-identical sentences, but different values
    assert all(m["budget_b"].pk not in (p.survivor_id, p.duplicate_id) for p in pairs)


def test_merge_redirects_edges_keeps_provenance_and_human_decisions(project, graph):
    m, e = graph
    a_sources = set(m["a"].sources.values_list("pk", flat=True))
    b_sources = set(m["b"].sources.values_list("pk", flat=True))
    b_entities = set(EntityMention.objects.filter(memory=m["b"]).values_list("entity_id", flat=True))

    report = merge_run(project=project, actor="user:7")

    assert report.counts["merged"] == 1 and report.ids["merged"] == [m["b"].pk]
    a, b = Memory.objects.get(pk=m["a"].pk), Memory.objects.get(pk=m["b"].pk)
    assert b.status == "forgotten" and b.dimensions["merged_into"] == a.pk
    assert a.status == "active" and a.dimensions["merged_from"] == [b.pk]
    assert set(a.sources.values_list("pk", flat=True)) == a_sources | b_sources  # provenance kept
    assert a.importance == 4.5 and a.access_count == 3 and a.last_accessed_at is not None
    assert not MemoryEmbedding.objects.filter(memory=b).exists()
    assert MemoryEmbedding.objects.filter(memory=a).count() == 1
    assert not Edge.objects.filter(Q(source=b) | Q(target=b)).exists()
    assert not Edge.objects.filter(source=F("target")).exists()
    edges = {(x.source_id, x.target_id, x.relation): x for x in Edge.objects.filter(project=project)}
    assert (m["cause"].pk, a.pk, "causal") in edges
    assert edges[(a.pk, m["c"].pk, "temporal")].pk == e["b_c"].pk  # the same row, redirected
    twin = edges[(a.pk, m["c"].pk, "causal")]
    assert twin.pk == e["a_c"].pk and twin.status == "approved" and twin.origin == "human"  # the human decision won
    assert (a.pk, a.pk, "next_in_session") not in edges
    assert set(EntityMention.objects.filter(memory=a).values_list("entity_id", flat=True)) >= b_entities
    assert not EntityMention.objects.filter(memory=b).exists()
    ops = list(GraphChange.objects.filter(actor="user:7").order_by("id").values_list("op", flat=True))
    assert ops.count("edge.redirected") == 2 and ops.count("edge.deleted") == 2 and ops.count("edge.updated") == 1
    assert ops.count("memory.merged") == 1 and ops.count("memory.updated") == 1 and ops[-1] == "maintenance.merge"
    assert report.counts["edges_redirected"] == 2 and report.counts["edges_dropped"] == 2


def test_recall_never_returns_the_merged_duplicate(project, graph):
    m, _ = graph
    merge_run(project=project, actor="t")
    for preset in ("vector", "hybrid", "ripple"):
        result = memory_recall(project=project, query=RecallQuery("allergic to peanuts and shellfish", k=10,
                                                                  preset=preset), actor="t")
        ids = [i.memory.pk for i in result.items]
        assert m["a"].pk in ids and m["b"].pk not in ids, preset


def test_dry_run_counts_equal_the_real_run(project, graph):
    before = db_state()
    dry = merge_run(project=project, actor="t", dry_run=True)
    assert db_state() == before
    real = merge_run(project=project, actor="t")
    assert dry.counts == real.counts and dry.ids == real.ids
    assert real.counts["merged"] == 1


def test_a_human_edge_between_them_means_two_things(project, graph):
    m, e = graph
    Edge.objects.filter(pk=e["a_b"].pk).update(status=EdgeStatus.APPROVED)
    assert duplicates_find(project) == []


@pytest.mark.django_db(transaction=True)
def test_project_scope_merges_across_sessions(project, agent_session):
    """Through the real write path: the ingest filter drops repeats within a session, not across."""
    other = session_create(project=project, title="Second trip", task="Plan a weekend in Hangzhou", actor="t")
    text = "Xiaoming is allergic to peanuts and needs nut-free meals"
    for session in (agent_session, other):
        interactions_accept(session=session, items=[InteractionInput("user_input", text)], actor="t")
    assert Memory.objects.filter(content=text).count() == 2
    assert merge_run(project=project, actor="t").counts["merged"] == 0  # per session: no duplicates
    report = merge_run(project=project, actor="t", scope="project")
    assert report.counts["merged"] == 1
    assert Memory.objects.filter(content=text, status="active").count() == 1


def test_explicit_merge_of_named_memories(project, graph):
    m, _ = graph
    report = merge_memories(project=project, actor="t", survivor_id=m["c"].pk, duplicate_ids=[m["budget_a"].pk])
    assert report.ids["merged"] == [m["budget_a"].pk]
    assert Memory.objects.get(pk=m["budget_a"].pk).dimensions["merged_into"] == m["c"].pk


def test_sensitivity_is_sticky(project, graph):
    m, _ = graph
    Memory.objects.filter(pk=m["b"].pk).update(sensitive=True)
    merge_run(project=project, actor="t")
    assert Memory.objects.get(pk=m["a"].pk).sensitive


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"survivor_id": 10**9, "duplicate_ids": [1]}, "survivor_id"),
    ({"survivor_id": "a", "duplicate_ids": ["a"]}, "duplicate_ids"),
    ({"survivor_id": "a", "duplicate_ids": []}, "duplicate_ids"),
    ({"survivor_id": "a", "duplicate_ids": ["c", 10**9]}, "duplicate_ids"),
    ({"survivor_id": "a", "duplicate_ids": ["forgotten"]}, "duplicate_ids"),
])
def test_bad_explicit_merges_write_nothing(project, graph, agent_session, kwargs, field):
    m, _ = graph
    m["forgotten"] = remember(agent_session, "A note that was already forgotten long ago", status="forgotten")
    resolve = {k: (m[v].pk if isinstance(v, str) else v) for k, v in kwargs.items() if k == "survivor_id"}
    resolve["duplicate_ids"] = [m[v].pk if isinstance(v, str) else v for v in kwargs["duplicate_ids"]]
    before = db_state()
    with pytest.raises(ValidationFailed) as error:
        merge_memories(project=project, actor="t", **resolve)
    assert field in error.value.extra
    assert db_state() == before


def test_bad_search_parameters_write_nothing(project, graph):
    before = db_state()
    with pytest.raises(ValidationFailed):
        merge_run(project=project, actor="t", threshold=0.2)
    with pytest.raises(ValidationFailed):
        merge_run(project=project, actor="t", scope="galaxy")
    with pytest.raises(NotFoundError):
        merge_run(project=project, actor="t", session_id=10**9)
    assert db_state() == before


def test_command(project, graph):
    m, _ = graph
    out, err = StringIO(), StringIO()
    call_command("merge_duplicates", "--project", "travel", "--dry-run", stdout=out, stderr=err)
    assert "merged: 1" in out.getvalue() and "dry run" in out.getvalue() and "merge" in err.getvalue()
    assert Memory.objects.get(pk=m["b"].pk).status == "active"
    call_command("merge_duplicates", "--project", "travel", stdout=StringIO(), stderr=StringIO())
    assert Memory.objects.get(pk=m["b"].pk).status == "forgotten"
    with pytest.raises(CommandError, match="--survivor and --duplicates go together"):
        call_command("merge_duplicates", "--project", "travel", "--survivor", str(m["a"].pk), stdout=StringIO())
    with pytest.raises(CommandError, match="already forgotten"):
        call_command("merge_duplicates", "--project", "travel", "--survivor", str(m["a"].pk), "--duplicates",
                     str(m["b"].pk), stdout=StringIO(), stderr=StringIO())
