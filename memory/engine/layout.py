"""Server-side force layout of a session's graph, stored so the browser paints it at once.

Why on the server: a browser force layout of thousands of nodes takes seconds and moves every
node on each load. Here the layout is computed once per session (igraph's Fruchterman-Reingold in
C, with its grid approximation above GRID_FROM nodes: ~0.6 s for 5,000 nodes / 10,000 edges, see
docs/live.md), stored in NodePosition, and read back on every load.

Reads never write: the graph read (`positions_for`) returns the stored positions and places what
has none in memory, the same way the write side will. Writing happens after the write path commits
(`layout_soon`: a queued job, or in-process in inline mode), in `layout_update`:
- no stored layout yet: full computation;
- memories without a position (made since): placed near their already placed neighbours, in
  time order, so a new chain grows outward; never a global re-layout, so nothing the user has
  seen moves;
- when the incrementally placed nodes exceed STALE_FRACTION of the last full layout: a full
  recompute (also on demand with `manage.py graph_layout`).

Coordinates are in layout units scaled so a typical edge is UNIT long (longer where a clump had to
be spread so no two nodes are closer than MIN_GAP), centred on (0, 0); the browser fits them to its
viewport.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Iterable
from dataclasses import dataclass

import igraph
import numpy as np
from django.db import connection, transaction
from django.utils import timezone
from scipy.spatial import cKDTree

from ..models import Edge, EdgeStatus, Memory, MemoryStatus, NodePosition, SessionLayout
from .jobs import scheduler

logger = logging.getLogger(__name__)

UNIT = 80.0  # layout units per typical edge (≈ pixels at zoom 1)
GRID_FROM = 500  # nodes from which the grid variant of FR (repulsion from nearby cells only) is used
ITERATIONS = 500
STALE_FRACTION = 0.3
MIN_GAP = 0.6 * UNIT  # centre to centre: the largest node is 42 px wide (and the browser only ever spreads)
SEPARATION_ROUNDS = 200
CROWDED_SHARE = 0.1  # when this share of nodes sits closer than MIN_GAP to another, the whole drawing grows
GOLDEN_ANGLE = math.pi * (3 - math.sqrt(5))
LOCK_NAMESPACE = 0x4C59  # "LY": advisory locks of layout computations, one per session
Position = tuple[float, float]


@dataclass(frozen=True)
class LayoutStats:
    nodes: int
    edges: int
    seconds: float


def _session_nodes(session_id: int) -> list[int]:
    return list(Memory.objects.filter(session_id=session_id).exclude(status=MemoryStatus.FORGOTTEN)
                .order_by("occurred_at", "id").values_list("id", flat=True))


def _session_edges(session_id: int, nodes: Iterable[int] | None = None) -> list[tuple[int, int, float]]:
    rows = Edge.objects.filter(session_id=session_id).exclude(status=EdgeStatus.REJECTED)
    if nodes is not None:
        rows = rows.filter(source_id__in=nodes) | rows.filter(target_id__in=nodes)
    return list(rows.values_list("source_id", "target_id", "weight"))


def force_layout(nodes: list[int], edges: list[tuple[int, int, float]], *, seed: int = 0) -> dict[int, Position]:
    """Fruchterman-Reingold positions, centred, scaled so the median edge is UNIT long, clumps spread. Pure."""
    if not nodes:
        return {}
    if len(nodes) == 1:
        return {nodes[0]: (0.0, 0.0)}
    index = {node: i for i, node in enumerate(nodes)}
    pairs = [(index[s], index[t], w) for s, t, w in edges if s in index and t in index and s != t]
    graph = igraph.Graph(n=len(nodes), edges=[(a, b) for a, b, _ in pairs])
    weights = [min(5.0, max(0.1, float(w or 1.0))) for _, _, w in pairs] or None
    # Start spread over a square of side sqrt(n) centred on 0: the grid variant's cells cover that
    # area, and a start outside it (or crowded) piles nodes into a few cells: 0.8 s became 4-40 s.
    rng = np.random.default_rng(seed)
    start = ((rng.random((len(nodes), 2)) - 0.5) * math.sqrt(len(nodes))).tolist()
    coords = np.asarray(graph.layout_fruchterman_reingold(
        weights=weights, niter=ITERATIONS, seed=start, grid=len(nodes) >= GRID_FROM).coords, dtype=float)
    coords -= coords.mean(axis=0)
    typical = _typical_length(coords, pairs)
    coords *= UNIT / typical if typical > 0 else 1.0
    coords = separate(coords, MIN_GAP)
    return {node: (round(float(x), 2), round(float(y), 2)) for node, (x, y) in zip(nodes, coords, strict=True)}


def separate(coords: np.ndarray, gap: float, *, rounds: int = SEPARATION_ROUNDS) -> np.ndarray:
    """The same drawing with no two nodes closer than `gap`. Pure.

    Force layouts pull a dense cluster into a clump: nodes drawn over each other cannot be read or
    clicked, and an edge between overlapping nodes cannot be drawn at all. Each round pushes every
    pair that is too close apart along the line between them, each by half of what is missing.
    """
    coords = np.array(coords, dtype=float)
    if len(coords) < 2:
        return coords
    nearest = cKDTree(coords).query(coords, k=2)[0][:, 1]
    crowded = float(np.quantile(nearest, CROWDED_SHARE))
    if crowded < gap:  # most of the drawing is a clump: give it room as a whole before pushing pairs apart
        coords *= gap / max(crowded, gap / 8)
    for round_number in range(rounds):
        pairs = cKDTree(coords).query_pairs(gap * 1.001, output_type="ndarray")
        if not len(pairs):
            break
        delta = coords[pairs[:, 1]] - coords[pairs[:, 0]]
        distance = np.linalg.norm(delta, axis=1)
        same = distance < 1e-9  # on top of each other: part them in a direction that differs per pair
        angles = (pairs[same, 0] + round_number) * GOLDEN_ANGLE
        delta[same] = np.column_stack([np.cos(angles), np.sin(angles)])
        distance[same] = 1.0
        push = (delta / distance[:, None]) * ((gap * 1.01 - np.where(same, 0.0, distance)) / 2)[:, None]
        moves = np.zeros_like(coords)
        np.add.at(moves, pairs[:, 1], push)
        np.add.at(moves, pairs[:, 0], -push)
        coords += moves
    return coords


def _typical_length(coords: np.ndarray, pairs: list[tuple[int, int, float]]) -> float:
    if pairs:
        ends = np.asarray([(a, b) for a, b, _ in pairs])
        return float(np.median(np.linalg.norm(coords[ends[:, 0]] - coords[ends[:, 1]], axis=1)))
    distances, _ = cKDTree(coords).query(coords, k=2)
    return float(np.median(distances[:, 1]))


def layout_compute(session_id: int) -> LayoutStats:
    """Compute and store the full layout of one session (replacing what was stored)."""
    started = time.perf_counter()
    nodes = _session_nodes(session_id)
    edges = _session_edges(session_id)
    positions = force_layout(nodes, edges, seed=session_id)
    seconds = time.perf_counter() - started
    with transaction.atomic():
        with connection.cursor() as cursor:  # one computation per session stores at a time
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [LOCK_NAMESPACE, session_id])
        NodePosition.objects.filter(session_id=session_id).delete()
        alive = set(Memory.objects.filter(pk__in=list(positions)).values_list("pk", flat=True))  # none deleted since
        NodePosition.objects.bulk_create(
            [NodePosition(memory_id=m, session_id=session_id, x=x, y=y) for m, (x, y) in positions.items()
             if m in alive],
            batch_size=2000,
        )
        SessionLayout.objects.update_or_create(session_id=session_id, defaults={
            "computed_at": timezone.now(), "node_count": len(positions), "placed_since": 0, "unit": UNIT,
            "seconds": round(seconds, 3)})
    logger.debug("layout of session %s: %d nodes, %d edges in %.2f s", session_id, len(nodes), len(edges), seconds)
    return LayoutStats(len(nodes), len(edges), seconds)


def positions_for(session_id: int, memory_ids: list[int]) -> dict[int, Position]:
    """Positions of these memories: the stored ones, and for the rest where `layout_update` will put
    them (computed here, not stored: a read writes nothing)."""
    layout = SessionLayout.objects.filter(session_id=session_id).first()
    if layout is None:
        return force_layout(_session_nodes(session_id), _session_edges(session_id), seed=session_id)
    stored = dict(_stored(session_id, memory_ids))
    missing = [m for m in memory_ids if m not in stored]
    if missing:
        stored.update(_placements(session_id, missing, layout.unit))
    return stored


def layout_update(session_id: int) -> str:
    """Store what the session's layout lacks (see the module doc); what it did, for logs and tests."""
    layout = SessionLayout.objects.filter(session_id=session_id).first()
    if layout is None or layout.placed_since > STALE_FRACTION * max(layout.node_count, 10):
        layout_compute(session_id)
        return "computed"
    stored = {m for m, _ in _stored(session_id)}
    missing = [m for m in _session_nodes(session_id) if m not in stored]
    if not missing:
        return "unchanged"
    placed = _placements(session_id, missing, layout.unit)
    with transaction.atomic():
        NodePosition.objects.bulk_create(
            [NodePosition(memory_id=m, session_id=session_id, x=x, y=y) for m, (x, y) in placed.items()],
            ignore_conflicts=True,  # a concurrent update placed it first: keep theirs
        )
        SessionLayout.objects.filter(session_id=session_id).update(placed_since=layout.placed_since + len(placed))
    return f"placed {len(placed)}"


def layout_soon(session_id: int) -> None:
    """Bring the session's stored layout up to date once the current transaction commits: a job on the
    queue (one waiting per session at most), or right away in inline mode."""
    from ..conf import memory_settings

    def start() -> None:
        if memory_settings.INGEST_MODE == "queue":
            scheduler().layout(session_id)
        else:
            layout_update(session_id)

    transaction.on_commit(start)


def _placements(session_id: int, memory_ids: list[int], unit: float) -> dict[int, Position]:
    """Where memories without a position go: near their placed neighbours, in time order. Reads only."""
    order = list(Memory.objects.filter(pk__in=memory_ids).order_by("occurred_at", "id").values_list("id", flat=True))
    known = dict(_stored(session_id))
    neighbours: dict[int, set[int]] = {m: set() for m in order}
    for source, target, _weight in _session_edges(session_id, nodes=order):
        if source in neighbours:
            neighbours[source].add(target)
        if target in neighbours:
            neighbours[target].add(source)
    return place_near(order, neighbours, known, unit=unit)


def _stored(session_id: int, memory_ids: list[int] | None = None) -> Iterable[tuple[int, Position]]:
    rows = NodePosition.objects.filter(session_id=session_id)
    if memory_ids is not None and len(memory_ids) < 5000:
        rows = rows.filter(memory_id__in=memory_ids)
    for memory_id, x, y in rows.values_list("memory_id", "x", "y"):
        yield memory_id, (x, y)


def place_near(order: list[int], neighbours: dict[int, set[int]], known: dict[int, Position], *,
               unit: float = UNIT) -> dict[int, Position]:
    """Positions for new nodes, each beside the centroid of its placed neighbours. Pure.

    A node with no placed neighbour goes just outside the drawing. Each candidate spot is tried
    at golden-angle turns until it is at least MIN_GAP (scaled to `unit`) from every node, so nothing overlaps.
    """
    points = np.asarray(list(known.values()), dtype=float).reshape(-1, 2)
    tree = cKDTree(points) if len(points) else None
    centre = points.mean(axis=0) if len(points) else np.zeros(2)
    radius = float(np.max(np.linalg.norm(points - centre, axis=1))) if len(points) else 0.0
    new_points: list[np.ndarray] = []
    placed: dict[int, Position] = {}
    for memory_id in order:
        around = [known.get(n) or placed.get(n) for n in neighbours.get(memory_id, ())]
        around = [p for p in around if p is not None]
        angle = memory_id * GOLDEN_ANGLE
        if around:
            anchor, distance = np.mean(np.asarray(around, dtype=float), axis=0), unit
        else:
            anchor, distance = centre, radius + unit
        spot = anchor + distance * np.array([math.cos(angle), math.sin(angle)])
        for attempt in range(1, 24):
            if _free(spot, tree, new_points, MIN_GAP * unit / UNIT):
                break
            angle += GOLDEN_ANGLE
            spot = anchor + distance * (1 + attempt / 8) * np.array([math.cos(angle), math.sin(angle)])
        new_points.append(spot)
        placed[memory_id] = (round(float(spot[0]), 2), round(float(spot[1]), 2))
    return placed


def _free(spot: np.ndarray, tree: cKDTree | None, others: list[np.ndarray], gap: float) -> bool:
    if tree is not None and tree.query(spot, k=1)[0] < gap:
        return False
    return all(np.linalg.norm(spot - other) >= gap for other in others[-200:])
