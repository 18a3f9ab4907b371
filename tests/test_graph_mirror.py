"""The graph mirror (memory/mirror/) against a real Cypher engine: FalkorDB always, Neo4j when NEO4J_URI
is set. Each round trip goes through the real write path and the real curation and forget services,
then compares the mirror with PostgreSQL and with a mirror rebuilt from scratch. The Cypher examples of
docs/integrations.md run here too."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.test import override_settings

from curation.services import edge_update, memory_update
from memory.engine.ingest import InteractionInput, interactions_accept
from memory.engine.maintenance.forget import ForgetFilter, forget_run
from memory.engine.pipeline import interaction_process
from memory.engine.projects import project_create, session_create
from memory.mirror.sync import mirror_catch_up, mirror_lag, mirror_lag_total, mirror_resync, mirror_step
from memory.mirror.targets import FalkorTarget, GraphTarget, Neo4jTarget
from memory.models import (
    Edge,
    EdgeStatus,
    GraphChange,
    Membership,
    Memory,
    MemoryStatus,
    MirrorCursor,
    Relation,
    Role,
)
from memory.visibility import SENSITIVE_MASK

from .mirror_support import fresh_falkor, graph_state
from .test_maintenance_support import link, remember

TURNS = [
    "I'm Ana Silva and I am planning a trip to Lisbon in May",
    "My budget for the Lisbon trip is 900 EUR in total",
    "My passport number is K7741-PASSPORT, issued in Porto; please keep it for the booking",
    "Because the conference moved, I need to arrive in Lisbon on 12 May",
    "Change my budget to 1200 EUR, the conference pays for the hotel",
    "Book the hotel near Alfama since it is close to the conference venue",
]


def neo4j_or_skip() -> GraphTarget:
    """Neo4j at NEO4J_URI, emptied of mirrored nodes first: point it at a scratch database."""
    uri = os.environ.get("NEO4J_URI")
    if not uri:
        pytest.skip("NEO4J_URI is not set: no Neo4j server on this machine (the same round trip ran on FalkorDB)")
    target = Neo4jTarget(uri, os.environ.get("NEO4J_USER", "neo4j"), os.environ.get("NEO4J_PASSWORD", ""),
                         os.environ.get("NEO4J_DATABASE", "neo4j"))
    target.run("MATCH (n) WHERE n.project_id IS NOT NULL DETACH DELETE n")
    return target


@pytest.fixture(params=["falkordb", "neo4j"])
def target(request, falkordb_url):
    made = fresh_falkor(falkordb_url) if request.param == "falkordb" else neo4j_or_skip()
    made.ensure_indexes()
    yield made
    made.close()


@pytest.fixture
def trip(db):
    project = project_create(name="Mirror", slug="mirror")
    session = session_create(project=project, title="Lisbon in May", actor="test",
                             task="Plan a trip to Lisbon in May within a budget")
    accepted = interactions_accept(session=session, actor="test",
                                   items=[InteractionInput(kind="user_input", content=text) for text in TURNS])
    for entry in accepted:  # as the queue would, in order (on_commit never fires inside a test's transaction)
        interaction_process(interaction_id=entry.interaction.pk)
    return project, session


def live_edges(project) -> dict[int, tuple[str, int, int, str]]:
    rows = Edge.objects.filter(project=project).exclude(status=EdgeStatus.REJECTED).exclude(
        source__status=MemoryStatus.FORGOTTEN).exclude(target__status=MemoryStatus.FORGOTTEN)
    return {e.pk: (e.relation.upper(), e.source_id, e.target_id, e.status) for e in rows}


def assert_mirrors_the_rows(target, project) -> dict:
    state = graph_state(target, project.pk)
    memories = Memory.objects.filter(project=project).exclude(status=MemoryStatus.FORGOTTEN)
    assert set(state["memories"]) == set(memories.values_list("pk", flat=True))
    for memory in memories:
        node = state["memories"][memory.pk]
        assert node["status"] == memory.status and node["kind"] == memory.kind
        assert node["at_risk"] == memory.at_risk
        assert node["content"] == (SENSITIVE_MASK if memory.sensitive else memory.content)
    assert state["edges"] == live_edges(project)
    assert state["in_session"] == {(m.pk, m.session_id) for m in memories}
    return state


def test_a_round_trip_of_create_update_relabel_reject_and_forget(target, trip, falkordb_url):
    project, session = trip
    assert mirror_catch_up(target) == GraphChange.objects.filter(project=project).count()
    state = assert_mirrors_the_rows(target, project)
    assert state["sessions"] == {session.pk: "Lisbon in May"}
    assert "SUPERSEDES" in {edge[0] for edge in state["edges"].values()}  # 900 EUR -> 1200 EUR
    assert "Porto" in state["entities"].values()  # only the passport memory names it
    lisbon = {eid for eid, name in state["entities"].items() if name == "Lisbon"}
    assert lisbon and any(entity in lisbon for _, entity in state["mentions"])
    assert mirror_lag(project, target.name) == 0

    passport = Memory.objects.get(project=project, content__contains="K7741")
    memory_update(project=project, actor="test", memory_id=passport.pk, sensitive=True)
    edge = Edge.objects.filter(project=project, status=EdgeStatus.INFERRED).exclude(
        relation=Relation.CAUSAL).order_by("pk").first()
    edge_update(project=project, actor="test", edge_id=edge.pk, relation=Relation.CAUSAL)
    rejected = Edge.objects.filter(project=project, status=EdgeStatus.INFERRED).order_by("-pk").first()
    edge_update(project=project, actor="test", edge_id=rejected.pk, status=EdgeStatus.REJECTED)
    alfama = Memory.objects.get(project=project, content__contains="Alfama")
    forget_run(project=project, actor="test", selection=ForgetFilter(memory_ids=(alfama.pk,)), mode="hard")
    assert mirror_lag(project, target.name) > 0

    mirror_catch_up(target)
    state = assert_mirrors_the_rows(target, project)
    node = state["memories"][passport.pk]
    assert "K7741" not in str(node) and node["topics"] == [] and node["sensitive"] is True
    assert not any(memory == passport.pk for memory, _ in state["mentions"])
    assert "Porto" not in state["entities"].values()  # named by a sensitive memory only: not mirrored
    assert state["edges"][edge.pk][0] == "CAUSAL" and state["edges"][edge.pk][3] == EdgeStatus.APPROVED
    assert rejected.pk not in state["edges"] and alfama.pk not in state["memories"]
    assert all(entity in state["entities"] for _, entity in state["mentions"])
    assert all(any(e == entity for _, e in state["mentions"]) for entity in state["entities"])  # no orphans

    rebuilt = fresh_falkor(falkordb_url)
    try:
        done = mirror_resync(rebuilt, project)
        assert done.memories == len(state["memories"])
        assert graph_state(rebuilt, project.pk) == state
    finally:
        rebuilt.close()


def test_an_at_risk_flag_reaches_the_mirror_and_leaves_it_when_settled(trip, falkordb_url):
    project, session = trip
    target = fresh_falkor(falkordb_url)
    target.ensure_indexes()
    try:
        parent, child = Memory.objects.filter(project=project, status=MemoryStatus.ACTIVE).order_by("pk")[:2]
        Edge.objects.create(project=project, session=session, source=parent, target=child, relation=Relation.CAUSAL,
                            origin="agent")
        memory_update(project=project, actor="test", memory_id=parent.pk, status="archived")
        mirror_catch_up(target)
        assert graph_state(target, project.pk)["memories"][child.pk]["at_risk"] == 1.0
        memory_update(project=project, actor="test", memory_id=child.pk, still_valid=True)
        mirror_catch_up(target)
        assert graph_state(target, project.pk)["memories"][child.pk]["at_risk"] == 0.0
        assert_mirrors_the_rows(target, project)
    finally:
        target.close()


def test_a_restart_mid_stream_resumes_from_the_cursor(trip, falkordb_url):
    project, _ = trip
    first = fresh_falkor(falkordb_url)
    assert mirror_step(first, project, limit=4) == 4
    cursor = MirrorCursor.objects.get(project=project)
    fourth = GraphChange.objects.filter(project=project).order_by("id")[3].id
    assert cursor.last_change_id == fourth and cursor.target == first.name
    first.close()

    resumed = FalkorTarget(falkordb_url, first.name.rsplit("/", 1)[1])  # the same graph, a new connection
    assert resumed.name == first.name
    MirrorCursor.objects.filter(project=project).update(last_change_id=fourth - 2)  # a lost cursor save
    assert mirror_step(resumed, project, limit=3) == 3  # changes 3 and 4 written again, harmlessly
    mirror_catch_up(resumed)
    state = assert_mirrors_the_rows(resumed, project)
    assert MirrorCursor.objects.get(project=project).last_change_id == GraphChange.objects.latest("id").id

    other = fresh_falkor(falkordb_url)  # another graph: the cursor of the first one does not count there
    mirror_catch_up(other)
    assert graph_state(other, project.pk) == state
    resumed.close()
    other.close()


def test_the_commands_follow_and_rebuild(trip, falkordb_url, capsys):
    project, _ = trip
    graph = f"cw_cmd_{project.pk}"
    with override_settings(MIRROR_FALKORDB_URL=falkordb_url, MIRROR_GRAPH=graph, NEO4J_URI=""):
        call_command("graph_mirror", "--once")
        assert "changes applied; caught up" in capsys.readouterr().out
        call_command("graph_mirror_resync", "--project", "mirror", "--no-progress")
        assert f"mirror: {Memory.objects.filter(project=project).count()} memories in" in capsys.readouterr().out
        with pytest.raises(CommandError, match="No project nowhere"):
            call_command("graph_mirror_resync", "--project", "nowhere")
    check = FalkorTarget(falkordb_url, graph)
    assert_mirrors_the_rows(check, project)
    check.close()

    with override_settings(MIRROR_FALKORDB_URL="", NEO4J_URI=""), pytest.raises(CommandError, match="mirror is off"):
        call_command("graph_mirror", "--once")
    with override_settings(MIRROR_FALKORDB_URL=falkordb_url, NEO4J_URI="bolt://127.0.0.1:1"), \
            pytest.raises(CommandError, match="not both"):
        call_command("graph_mirror_resync")


def test_the_settings_page_shows_the_mirrors_lag(trip, falkordb_url, client, django_user_model):
    project, _ = trip
    admin = django_user_model.objects.create_user("mirror-admin", password="a long test password")
    Membership.objects.create(project=project, user=admin, role=Role.ADMIN)
    client.force_login(admin)
    url = f"/p/{project.slug}/settings/"
    with override_settings(MIRROR_FALKORDB_URL="", NEO4J_URI=""):
        assert "Off. With NEO4J_URI" in client.get(url).content.decode()
    graph = f"cw_page_{project.pk}"
    with override_settings(MIRROR_FALKORDB_URL=falkordb_url, MIRROR_GRAPH=graph, NEO4J_URI=""):
        assert "not mirrored yet" in client.get(url).content.decode()
        assert mirror_lag_total() == GraphChange.objects.count()
        target = FalkorTarget(falkordb_url, graph)
        mirror_step(target, project, limit=5)
        behind = GraphChange.objects.filter(project=project).count() - 5
        page = client.get(url).content.decode()
        assert f"{behind} changes behind" in page and MirrorCursor.objects.count() == 1
        assert mirror_lag_total() == behind
        mirror_catch_up(target)
        assert "0 changes behind" in client.get(url).content.decode()
        target.close()


CYPHER_EXAMPLES = re.findall(r"^```cypher\n(.*?)^```", (Path(settings.BASE_DIR) / "docs" / "integrations.md")
                             .read_text(encoding="utf-8"), flags=re.S | re.M)


def test_the_cypher_examples_of_the_integrations_page_run_on_the_mirror(db, falkordb_url):
    """docs/integrations.md's Neo4j Browser queries, as written, against a mirror of the session they name."""
    assert len(CYPHER_EXAMPLES) == 2
    project = project_create(name="Kyoto", slug="kyoto")
    session = session_create(project=project, title="Weekend in Kyoto", actor="test",
                             task="Plan two days in Kyoto for 60000 JPY")
    budget = remember(session, "Budget is 60000 JPY in total", status=MemoryStatus.SUPERSEDED)
    raised = remember(session, "The budget is now 70000 JPY")
    ryokan = remember(session, "Booked the ryokan near Gion for two nights, 18000 JPY a night")
    link(budget, raised, Relation.SUPERSEDES)
    link(raised, ryokan, Relation.CONDITIONAL)
    target = fresh_falkor(falkordb_url)
    mirror_resync(target, project)
    session_rows = target.run(CYPHER_EXAMPLES[0])
    assert len(session_rows) == 3 and sum(1 for row in session_rows if row[1] is not None) == 2
    assert target.run(CYPHER_EXAMPLES[1]) == [[raised.content, budget.content]]
    target.close()
