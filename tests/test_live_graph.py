"""The session graph for the browser: stored positions, neighbourhoods, masking, session counts."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient
from scipy.spatial import cKDTree

from memory.engine import layout
from memory.engine.ingest import InteractionInput, interactions_accept
from memory.engine.pipeline import interaction_process_safely
from memory.engine.projects import session_create
from memory.models import Edge, GraphChange, Membership, Memory, NodePosition, Role, SessionLayout
from memory.selectors import session_list

TRIP = ["Budget is 5000 RMB for the Shanghai trip", "Dates are 12 to 14 October",
        "Hotel must be near the Bund because of the budget", "Book the Peace Hotel near the Bund",
        "Visit the Yu Garden on the first day", "Try xiaolongbao near the Yu Garden"]


def graph_url(session, **params) -> str:
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return f"/api/projects/{session.project.slug}/sessions/{session.pk}/graph/" + (f"?{query}" if query else "")


def changes_url(session) -> str:
    return f"/api/projects/{session.project.slug}/sessions/{session.pk}/changes/"


def client_for(project, role: str | None) -> APIClient:
    user = get_user_model().objects.create_user(f"u-{role}", password="pw")
    if role:
        Membership.objects.create(project=project, user=user, role=role)
    client = APIClient()
    client.force_login(user)
    return client


def feed(session, texts) -> None:
    """Ingest and process now (inline processing waits for a commit these tests never make), then do what
    the write path leaves for after its commit: update the stored layout (see the transactional test)."""
    for text in texts:
        for entry in interactions_accept(session=session, items=[InteractionInput("user_input", text)], actor="t"):
            interaction_process_safely(interaction_id=entry.interaction.pk)
    layout.layout_update(session.pk)


WRITES = ("INSERT", "UPDATE", "DELETE", "PG_ADVISORY")


def writes_of(queries) -> list[str]:
    return [q["sql"] for q in queries if q["sql"].lstrip().upper().startswith(WRITES) or "advisory" in q["sql"]]


@pytest.mark.django_db
def test_graph_nodes_carry_stored_positions_and_drawing_fields(agent_session):
    feed(agent_session, TRIP)
    client = client_for(agent_session.project, Role.VIEWER)
    body = client.get(graph_url(agent_session)).json()
    assert body["truncated"] is False and body["total_memories"] == len(body["memories"]) >= 5
    assert body["last_change_id"] == GraphChange.objects.filter(session=agent_session).latest("id").id
    node = body["memories"][0]
    for name in ("id", "content", "kind", "label", "importance", "status", "sensitive", "occurred_at", "entities",
                 "intent", "position", "dimensions", "sources"):
        assert name in node, name
    assert isinstance(node["position"]["x"], float) and isinstance(node["entities"], list)
    assert any(node["entities"] for node in body["memories"])
    edge = body["edges"][0]
    for name in ("relation", "weight", "confidence", "origin", "status", "needs_review", "rationale"):
        assert name in edge, name
    spots = {(n["position"]["x"], n["position"]["y"]) for n in body["memories"]}
    assert len(spots) == len(body["memories"]), "no two nodes on the same spot"
    computed = SessionLayout.objects.get(session=agent_session).computed_at
    with CaptureQueriesContext(connection) as queries:
        again = client.get(graph_url(agent_session)).json()
    assert not writes_of(queries.captured_queries), "reading the graph writes nothing"
    assert [n["position"] for n in again["memories"]] == [n["position"] for n in body["memories"]]
    assert SessionLayout.objects.get(session=agent_session).computed_at == computed, "cached, not recomputed"


@pytest.mark.django_db(transaction=True)
def test_the_write_path_stores_the_layout_after_it_commits(agent_session):
    for text in TRIP[:3]:
        interactions_accept(session=agent_session, items=[InteractionInput("user_input", text)], actor="t")
    kept = Memory.objects.filter(session=agent_session).count()
    assert kept >= 2 and NodePosition.objects.filter(session=agent_session).count() == kept
    assert SessionLayout.objects.get(session=agent_session).node_count >= 1


@pytest.mark.django_db
def test_a_read_before_any_layout_is_stored_places_everything_and_writes_nothing(agent_session):
    feed(agent_session, TRIP[:4])
    SessionLayout.objects.filter(session=agent_session).delete()
    NodePosition.objects.filter(session=agent_session).delete()
    client = client_for(agent_session.project, Role.VIEWER)
    with CaptureQueriesContext(connection) as queries:
        body = client.get(graph_url(agent_session)).json()
    assert not writes_of(queries.captured_queries)
    assert all(n["position"] for n in body["memories"]) and not NodePosition.objects.exists()
    assert layout.layout_update(agent_session.pk) == "computed"  # what the job after the next write does
    assert NodePosition.objects.filter(session=agent_session).count() == len(body["memories"])


@pytest.mark.django_db
def test_a_new_memory_is_placed_near_its_neighbours_and_nothing_else_moves(agent_session):
    feed(agent_session, TRIP[:4])
    client = client_for(agent_session.project, Role.VIEWER)
    before = {n["id"]: n["position"] for n in client.get(graph_url(agent_session)).json()["memories"]}
    feed(agent_session, ["The Peace Hotel near the Bund has a river view room"])
    after = {n["id"]: n["position"] for n in client.get(graph_url(agent_session)).json()["memories"]}
    (new_id,) = set(after) - set(before)
    assert all(after[m] == before[m] for m in before)
    neighbours = {e.source_id for e in Edge.objects.filter(target_id=new_id)} | \
        {e.target_id for e in Edge.objects.filter(source_id=new_id)}
    assert neighbours
    centre = np.mean([[after[m]["x"], after[m]["y"]] for m in neighbours], axis=0)
    distance = math.dist(centre, (after[new_id]["x"], after[new_id]["y"]))
    assert distance <= 3 * layout.UNIT
    assert SessionLayout.objects.get(session=agent_session).placed_since == 1


@pytest.mark.django_db
def test_neighbourhood_loading_and_truncation(agent_session):
    feed(agent_session, TRIP)
    client = client_for(agent_session.project, Role.VIEWER)
    first = Memory.objects.filter(session=agent_session).order_by("occurred_at", "id").first()
    body = client.get(graph_url(agent_session, around=first.pk, hops=1)).json()
    ids = {n["id"] for n in body["memories"]}
    linked = {first.pk} | {e.target_id for e in Edge.objects.filter(source=first).exclude(status="rejected")} | \
        {e.source_id for e in Edge.objects.filter(target=first).exclude(status="rejected")}
    assert ids == linked and body["around"] == first.pk
    assert body["truncated"] is (len(ids) < body["total_memories"])
    assert all(e["source_id"] in ids and e["target_id"] in ids for e in body["edges"])
    limited = client.get(graph_url(agent_session, limit=2)).json()
    assert limited["truncated"] is True and len(limited["memories"]) == 2
    newest = set(Memory.objects.filter(session=agent_session).order_by("-occurred_at", "-id")
                 .values_list("id", flat=True)[:2])
    assert {n["id"] for n in limited["memories"]} == newest
    assert client.get(graph_url(agent_session, hops=9)).status_code == 400
    assert client.get(graph_url(agent_session, around=999_999_999)).status_code == 404


@pytest.mark.django_db
def test_viewers_get_sensitive_memories_masked_in_graph_and_change_log(agent_session):
    feed(agent_session, ["My passport number is X1234567 issued in Berlin"])
    Memory.objects.filter(session=agent_session).update(sensitive=True)
    viewer = client_for(agent_session.project, Role.VIEWER)
    curator = client_for(agent_session.project, Role.CURATOR)
    for url in (graph_url(agent_session), changes_url(agent_session)):
        seen = viewer.get(url).content.decode()
        assert "X1234567" not in seen and "Berlin" not in seen and "[sensitive]" in seen
        assert "X1234567" in curator.get(url).content.decode()
    node = viewer.get(graph_url(agent_session)).json()["memories"][0]
    assert node["label"] == node["content"] == "[sensitive]" and node["entities"] == []
    assert set(node["dimensions"]) <= {"language", "intent", "sentiment", "subjectivity", "source_kind"}


@pytest.mark.django_db
def test_graph_and_socket_need_membership(agent_session):
    assert client_for(agent_session.project, None).get(graph_url(agent_session)).status_code == 404  # as if none
    assert APIClient().get(graph_url(agent_session)).status_code in (401, 403)


@pytest.mark.django_db
def test_session_list_counts_in_one_query(project):
    sessions = [session_create(project=project, title=f"s{i}", task="Plan a trip to Shanghai", actor="t")
                for i in range(3)]
    feed(sessions[0], TRIP[:4] + ["thanks", "ok"])
    feed(sessions[1], TRIP[4:])
    Edge.objects.filter(session=sessions[0]).update(needs_review=True)
    with CaptureQueriesContext(connection) as queries:
        rows = {s.pk: s for s in session_list(project=project)}
    assert len(queries) == 1
    first = rows[sessions[0].pk]
    assert first.interaction_count == 6
    assert first.memory_count == Memory.objects.filter(session=sessions[0]).count()
    assert first.filtered_count == 6 - first.memory_count >= 1
    assert first.edge_count == first.proposal_count == Edge.objects.filter(session=sessions[0]).count() > 0
    assert rows[sessions[2].pk].interaction_count == rows[sessions[2].pk].memory_count == 0
    assert first.last_change_at == GraphChange.objects.filter(session=sessions[0]).latest("id").created_at


def synthetic_graph(nodes: int, edges: int, seed: int = 1) -> tuple[list[int], list[tuple[int, int, float]]]:
    """A session-like graph: a time chain plus links inside topics."""
    rng = np.random.default_rng(seed)
    ids = list(range(1, nodes + 1))
    pairs = {(i, i + 1) for i in range(1, nodes)}
    topics = rng.integers(0, max(1, nodes // 50), nodes)
    members: dict[int, list[int]] = {}
    for node, topic in zip(ids, topics, strict=True):
        members.setdefault(int(topic), []).append(node)
    while len(pairs) < edges:
        a = int(rng.integers(1, nodes + 1))
        group = members[int(topics[a - 1])]
        b = group[int(rng.integers(0, len(group)))]
        if a != b:
            pairs.add((min(a, b), max(a, b)))
    return ids, [(a, b, 1.0) for a, b in pairs]


@pytest.mark.parametrize("nodes", [1000, 5000])
def test_force_layout_is_fast_enough(nodes):
    ids, edges = synthetic_graph(nodes, 2 * nodes)
    started = time.perf_counter()
    positions = layout.force_layout(ids, edges, seed=1)
    seconds = time.perf_counter() - started
    print(f"force layout of {nodes} nodes / {len(edges)} edges: {seconds:.2f} s")
    assert len(positions) == nodes
    assert seconds < 5.0
    points = np.asarray(list(positions.values()))
    lengths = [math.dist(positions[a], positions[b]) for a, b, _ in edges]
    assert float(np.median(lengths)) >= layout.UNIT - 1.0  # scaled to the unit at least (clumps are spread)
    assert len({tuple(p) for p in points}) == nodes


def nearest_gaps(positions: dict) -> np.ndarray:
    points = np.asarray(list(positions.values()), dtype=float)
    return cKDTree(points).query(points, k=2)[0][:, 1]


@pytest.mark.parametrize("nodes,edges", [(30, 200), (120, 400), (1000, 2000)])
def test_force_layout_draws_no_node_over_another(nodes, edges):
    # Dense topics pull force layouts into clumps; an edge between overlapping nodes cannot even be drawn
    # (Cytoscape warns "invalid endpoints"), and the nodes cannot be read or clicked.
    ids, pairs = synthetic_graph(nodes, edges, seed=nodes)
    positions = layout.force_layout(ids, pairs, seed=1)
    assert nearest_gaps(positions).min() >= layout.MIN_GAP * 0.99


def test_separate_parts_nodes_drawn_on_the_same_spot():
    coords = np.zeros((6, 2))
    coords[5] = (500.0, 0.0)
    parted = layout.separate(coords, 48.0)
    gaps = cKDTree(parted).query(parted, k=2)[0][:, 1]
    assert gaps.min() >= 48.0 * 0.99
    centre = parted[:5].mean(axis=0)
    assert np.linalg.norm(parted[:5] - centre, axis=1).max() < 3 * 48.0  # the clump opened into a small cluster
    assert parted[5][0] > parted[:5, 0].max()  # and the node apart from it stays apart, on its side


def test_place_near_puts_nodes_beside_their_neighbours_without_overlap():
    known = {1: (0.0, 0.0), 2: (80.0, 0.0), 3: (0.0, 80.0)}
    placed = layout.place_near([10, 11, 12], {10: {1, 2}, 11: {10}, 12: set()}, known)
    assert math.dist(placed[10], (40.0, 0.0)) <= 2 * layout.UNIT
    assert math.dist(placed[11], placed[10]) <= 3 * layout.UNIT
    assert math.dist(placed[12], (26.7, 26.7)) > 80  # no neighbour: outside the drawing
    spots = list(known.values()) + list(placed.values())
    assert min(math.dist(a, b) for i, a in enumerate(spots) for b in spots[i + 1:]) >= layout.UNIT / 2


@pytest.mark.django_db
def test_graph_layout_command_recomputes(agent_session, capsys):
    from django.core.management import call_command

    feed(agent_session, TRIP[:3])
    call_command("graph_layout", session=[agent_session.pk])
    assert NodePosition.objects.filter(session=agent_session).count() == Memory.objects.filter(
        session=agent_session).count()
    assert "nodes" in capsys.readouterr().out


def bulk_session(session, nodes: int, edges: int) -> list[Memory]:
    """A big session made straight in the tables (the pipeline would take minutes)."""
    from django.utils import timezone

    now = timezone.now()
    memories = Memory.objects.bulk_create([
        Memory(project=session.project, session=session, content=f"Memory number {i} about topic {i % 97}",
               kind="fact", occurred_at=now, dimensions={"intent": "inform", "language": "en"})
        for i in range(nodes)
    ], batch_size=2000)
    ids, pairs = synthetic_graph(nodes, edges)
    by_index = {i: m.pk for i, m in zip(ids, memories, strict=True)}
    Edge.objects.bulk_create([
        Edge(project=session.project, session=session, source_id=by_index[a], target_id=by_index[b],
             relation="references") for a, b, _ in pairs
    ], batch_size=5000)
    return memories


@pytest.mark.slow
@pytest.mark.django_db
def test_graph_of_5000_memories_loads_in_seconds_and_is_cached(agent_session):
    bulk_session(agent_session, 5000, 10000)
    client = client_for(agent_session.project, Role.CURATOR)
    timings = []
    for _ in range(2):
        started = time.perf_counter()
        response = client.get(graph_url(agent_session, limit=5000))
        timings.append(time.perf_counter() - started)
        assert response.status_code == 200
    body = response.json()
    print(f"graph of 5000 memories / 10000 edges: first load {timings[0]:.2f} s (with layout), "
          f"then {timings[1]:.2f} s; {len(response.content) / 1e6:.1f} MB")
    assert len(body["memories"]) == 5000 and len(body["edges"]) == 10000
    assert all(n["position"] for n in body["memories"])
    assert timings[0] < 15 and timings[1] < 6


@pytest.mark.django_db
def test_fast_graph_json_matches_the_documented_serializers(agent_session):
    """The rows memory/reads builds by hand have the shape the OpenAPI schema documents (the serializers'
    own representation, which they refuse to give views), masked or not."""
    from rest_framework.serializers import ModelSerializer

    from memory.api import serializers as s
    from memory.reads.rows import edge_row, graph_node
    from memory.selectors import session_graph

    feed(agent_session, TRIP[:4])
    Memory.objects.filter(pk=Memory.objects.filter(session=agent_session).first().pk).update(sensitive=True)
    graph = session_graph(session=agent_session)
    context = {"positions": graph.positions, "entity_names": graph.entity_names}
    for memory in Memory.objects.filter(session=agent_session).prefetch_related("sources"):
        rows = [graph_node(memory, masked=masked, sources=graph.sources.get(memory.pk, []),
                           position=graph.positions.get(memory.pk), entities=graph.entity_names.get(memory.pk, []))
                for masked in (False, True)]
        documented = ModelSerializer.to_representation(s.GraphMemoryOutput(context=context), memory)
        assert rows[0] == documented
        assert rows[1].keys() == documented.keys() and rows[1]["content"] == "[sensitive]"
    for edge in graph.edges:
        assert edge_row(edge, frozenset()) == ModelSerializer.to_representation(s.EdgeOutput(), edge)
    with pytest.raises(TypeError, match="memory.reads"):
        _ = s.MemoryOutput(memory).data
