"""What the mirror writes: the current rows of whatever a run of changes touched.

The change log says which memories, edges, entities and sessions changed; their state is then read
from PostgreSQL as it is now and written as MERGEs (or deletes), so every op, present or future, is
handled the same way, a change applied twice changes nothing, and a hard forget that scrubbed the
log's snapshots still removes what it must. A project's cursor advances only after its changes are
in the graph: a restart resumes from the cursor and, at worst, writes the last batch again.

The mirror is a reader that never sees sensitive content (reads.reader.MIRROR): sensitive memories are
mirrored through the one visibility rule (`mask_memory_snapshot`, as for a viewer): masked text, no
topics, no mentions; an entity only they mention is not mirrored.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from itertools import islice
from typing import Any, TypeVar

from django.db.models import Max, OuterRef, Q
from django.utils import timezone

from ..models import (
    AgentSession,
    Edge,
    EdgeStatus,
    Entity,
    EntityMention,
    GraphChange,
    Memory,
    MemoryStatus,
    MirrorCursor,
    Project,
)
from ..reads.reader import MIRROR
from ..visibility import edge_rationale, mask_memory_snapshot
from . import cypher
from .targets import GraphTarget, configured_name

logger = logging.getLogger(__name__)

CHANGES_PER_STEP = 2000  # changes read and applied together (one cursor update)
ROWS_PER_STATEMENT = 500
WIPE_ROWS = 5000
MIRRORED_OBJECTS = ("memory", "edge", "entity", "session")
T = TypeVar("T")


@dataclass
class Touched:
    memories: set[int] = field(default_factory=set)
    entities: set[int] = field(default_factory=set)
    sessions: set[int] = field(default_factory=set)
    # edge id -> its endpoints as the log last named them (a deleted edge has no row to read them from)
    edges: dict[int, tuple[int, int] | None] = field(default_factory=dict)


def touched_by(changes: Iterable[GraphChange]) -> Touched:
    touched = Touched()
    for change in changes:
        if change.object_id is None:
            continue
        if change.object_type == "memory":
            touched.memories.add(change.object_id)
        elif change.object_type == "entity":
            touched.entities.add(change.object_id)
        elif change.object_type == "session":
            touched.sessions.add(change.object_id)
        elif change.object_type == "edge":
            snapshot = change.after or change.before or {}
            ends = (snapshot.get("source_id"), snapshot.get("target_id"))
            touched.edges[change.object_id] = ends if None not in ends else touched.edges.get(change.object_id)
    return touched


def apply(target: GraphTarget, project_id: int, touched: Touched) -> None:
    """Write the current state of everything touched (memories first, so edges find their ends)."""
    memories = list(Memory.objects.filter(project_id=project_id, pk__in=touched.memories)
                    .exclude(status=MemoryStatus.FORGOTTEN)
                    .values("id", "session_id", "content", "kind", "status", "sensitive", "at_risk", "dimensions",
                            "importance", "relevance", "novelty", "occurred_at", "created_at"))
    alive = {row["id"] for row in memories}
    _run_chunks(target, cypher.delete_nodes("Memory"), "ids", sorted(touched.memories - alive))

    sessions = touched.sessions | {row["session_id"] for row in memories}
    session_rows = list(AgentSession.objects.filter(project_id=project_id, pk__in=sessions)
                        .values("id", "title", "external_id", "created_at"))
    _run_chunks(target, cypher.delete_nodes("Session"), "ids",
                sorted(touched.sessions - {row["id"] for row in session_rows}))
    _run_chunks(target, cypher.UPSERT_SESSIONS, "rows", [_session_row(project_id, row) for row in session_rows])
    _run_chunks(target, cypher.UPSERT_MEMORIES, "rows", [_memory_row(project_id, row) for row in memories])

    _apply_mentions(target, project_id, alive, touched.entities)
    # A memory back from archive or forgetting gets its edges back, so its edges are read along with it.
    edge_ids = set(touched.edges) | set(Edge.objects.filter(Q(source_id__in=alive) | Q(target_id__in=alive))
                                        .values_list("id", flat=True))
    _apply_edges(target, project_id, edge_ids, touched.edges)


def _apply_mentions(target: GraphTarget, project_id: int, memory_ids: set[int], entity_ids: set[int]) -> None:
    visible = (Q(memory__sensitive=False) & ~Q(memory__status=MemoryStatus.FORGOTTEN)
               & Q(memory__project_id=project_id))
    mentions = list(EntityMention.objects.filter(visible & (Q(memory_id__in=memory_ids) | Q(entity_id__in=entity_ids)))
                    .values("memory_id", "entity_id", "surface"))
    entities = list(Entity.objects.filter(project_id=project_id,
                                          pk__in=entity_ids | {m["entity_id"] for m in mentions})
                    .values("id", "name", "type", "aliases"))
    _run_chunks(target, cypher.delete_nodes("Entity"), "ids", sorted(entity_ids - {row["id"] for row in entities}))
    _run_chunks(target, cypher.UPSERT_ENTITIES, "rows", [
        {"id": row["id"], "props": {"project_id": project_id, "name": row["name"], "type": row["type"],
                                    "aliases": [str(alias) for alias in row["aliases"] or []]}}
        for row in entities])
    _run_chunks(target, cypher.CLEAR_MEMORY_MENTIONS, "ids", sorted(memory_ids))
    _run_chunks(target, cypher.CLEAR_ENTITY_MENTIONS, "ids", sorted(entity_ids))
    _run_chunks(target, cypher.LINK_MENTIONS, "rows", [
        {"memory": m["memory_id"], "entity": m["entity_id"], "surface": m["surface"]} for m in mentions])
    target.run(cypher.SWEEP_ENTITIES, {"project": project_id})


def _apply_edges(target: GraphTarget, project_id: int, edge_ids: set[int],
                 logged_ends: dict[int, tuple[int, int] | None]) -> None:
    edges = list(Edge.objects.filter(project_id=project_id, pk__in=edge_ids)
                 .values("id", "source_id", "target_id", "relation", "weight", "confidence", "origin", "status",
                         "needs_review", "rationale", "created_at",
                         "source__status", "target__status", "source__sensitive", "target__sensitive"))
    ends = {eid: pair for eid, pair in logged_ends.items() if pair}
    ends.update({row["id"]: (row["source_id"], row["target_id"]) for row in edges})
    _run_chunks(target, cypher.DELETE_EDGES, "rows", [{"id": eid, "source": s, "target": t}
                                                      for eid, (s, t) in sorted(ends.items())])
    by_relation: dict[str, list[dict[str, Any]]] = {}
    for row in edges:
        forgotten = MemoryStatus.FORGOTTEN in (row["source__status"], row["target__status"])
        if row["status"] == EdgeStatus.REJECTED or forgotten or row["relation"] not in cypher.EDGE_TYPES:
            continue
        by_relation.setdefault(row["relation"], []).append(_edge_row(project_id, row))
    for relation, rows in sorted(by_relation.items()):
        _run_chunks(target, cypher.upsert_edges(relation), "rows", rows)


def _memory_row(project_id: int, row: dict[str, Any]) -> dict[str, Any]:
    shown = mask_memory_snapshot(row) if row["sensitive"] and not MIRROR.may_see_sensitive else row
    dimensions = shown.get("dimensions") or {}
    props = {
        "project_id": project_id, "session_id": row["session_id"], "content": shown["content"], "kind": row["kind"],
        "status": row["status"], "sensitive": row["sensitive"], "importance": row["importance"],
        "relevance": row["relevance"], "novelty": row["novelty"], "at_risk": row["at_risk"],
        "intent": dimensions.get("intent") or "", "sentiment": dimensions.get("sentiment") or "",
        "language": dimensions.get("language") or "",
        "topics": [str(topic) for topic in dimensions.get("topics") or []],
        "occurred_at": _iso(row["occurred_at"]), "created_at": _iso(row["created_at"]),
    }
    return {"id": row["id"], "session_id": row["session_id"], "props": props}


def _session_row(project_id: int, row: dict[str, Any]) -> dict[str, Any]:
    return {"id": row["id"], "props": {"project_id": project_id, "title": row["title"],
                                       "external_id": row["external_id"], "created_at": _iso(row["created_at"])}}


def _edge_row(project_id: int, row: dict[str, Any]) -> dict[str, Any]:
    ends = ((row["source_id"], row["source__sensitive"]), (row["target_id"], row["target__sensitive"]))
    hidden = {mid for mid, sensitive in ends if sensitive and not MIRROR.may_see_sensitive}
    props = {"project_id": project_id, "relation": row["relation"], "weight": row["weight"],
             "confidence": row["confidence"], "origin": row["origin"], "status": row["status"],
             "needs_review": row["needs_review"],
             "rationale": edge_rationale(row["rationale"], row["source_id"], row["target_id"], hidden),
             "created_at": _iso(row["created_at"])}
    return {"id": row["id"], "source": row["source_id"], "target": row["target_id"], "props": props}


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def _chunks(items: list[T], size: int) -> Iterator[list[T]]:
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


def _run_chunks(target: GraphTarget, statement: str, name: str, items: list[Any]) -> None:
    for chunk in _chunks(items, ROWS_PER_STATEMENT):
        target.run(statement, {name: chunk})


# --- the cursor ---------------------------------------------------------------------------------------

def cursor_for(project: Project, target: GraphTarget) -> MirrorCursor:
    """The project's cursor for this target; one left by another target starts again from change 0."""
    cursor, _ = MirrorCursor.objects.get_or_create(project=project, defaults={"target": target.name})
    if cursor.target != target.name:
        logger.warning("mirror of project %s moves from %s to %s: starting from change 0",
                       project.slug, cursor.target, target.name)
        cursor.target, cursor.last_change_id, cursor.resynced_at = target.name, 0, None
        cursor.save()
    return cursor


def mirror_step(target: GraphTarget, project: Project, limit: int = CHANGES_PER_STEP) -> int:
    """Apply the project's next changes after its cursor; the number applied (0: caught up)."""
    cursor = cursor_for(project, target)
    changes = list(GraphChange.objects.filter(project=project, id__gt=cursor.last_change_id).order_by("id")
                   .only("id", "object_type", "object_id", "before", "after")[:limit])
    if not changes:
        return 0
    apply(target, project.pk, touched_by(c for c in changes if c.object_type in MIRRORED_OBJECTS))
    cursor.last_change_id = changes[-1].id
    cursor.save(update_fields=["last_change_id", "updated_at"])
    return len(changes)


def mirror_catch_up(target: GraphTarget, *, limit: int = CHANGES_PER_STEP) -> int:
    """Apply every project's changes up to now; the number applied."""
    applied = 0
    for project in projects_behind(target):
        while done := mirror_step(target, project, limit):
            applied += done
    return applied


def projects_behind(target: GraphTarget) -> list[Project]:
    return _projects_behind(target.name)


def _projects_behind(target_name: str) -> list[Project]:
    """Projects with changes after their cursor for this target (two queries: each project's latest
    change id through the (project, id) index, and the cursors)."""
    latest = GraphChange.objects.filter(project=OuterRef("pk")).order_by("-id").values("id")[:1]
    rows = Project.objects.annotate(latest=latest).values_list("id", "latest")
    cursors = dict(MirrorCursor.objects.filter(target=target_name).values_list("project_id", "last_change_id"))
    behind = [pid for pid, latest_id in rows if latest_id and latest_id > cursors.get(pid, 0)]
    return list(Project.objects.filter(pk__in=behind).order_by("pk"))


def mirror_follow(target: GraphTarget, *, interval: float = 0.5, should_stop: Callable[[], bool] = lambda: False,
                  on_applied: Callable[[int], None] | None = None) -> None:
    """Keep applying changes as they come (polling every `interval` seconds when idle); a failing target
    is retried with back-off and nothing is skipped."""
    failures = 0
    while not should_stop():
        try:
            applied = mirror_catch_up(target)
            failures = 0
        except Exception as exc:  # noqa: BLE001 - the graph engine may be down: wait, then try the same again
            failures += 1
            wait = min(interval * 2 ** min(failures, 6), 30.0)
            logger.warning("graph mirror failed (%s); retrying in %.1f s", exc, wait)
            time.sleep(wait)
            continue
        if applied and on_applied:
            on_applied(applied)
        if not applied:
            time.sleep(interval)


def mirror_lag(project: Project, target_name: str | None = None) -> int | None:
    """Changes of the project not yet in the mirror; None when it was never mirrored (to this target)."""
    cursor = MirrorCursor.objects.filter(project=project).first()
    if cursor is None or (target_name is not None and cursor.target != target_name):
        return None
    return GraphChange.objects.filter(project=project, id__gt=cursor.last_change_id).count()


@dataclass(frozen=True)
class MirrorStatus:
    """What the settings page and /readyz say of a project's mirror (reads only)."""

    target: str | None  # None: the mirror is off
    lag: int | None  # changes not yet mirrored; None: never mirrored into this target
    last_change_id: int = 0
    updated_at: datetime | None = None
    resynced_at: datetime | None = None


def mirror_status(project: Project) -> MirrorStatus:
    name = configured_name()
    if name is None:
        return MirrorStatus(target=None, lag=None)
    cursor = MirrorCursor.objects.filter(project=project, target=name).first()
    if cursor is None:
        return MirrorStatus(target=name, lag=None)
    return MirrorStatus(target=name, lag=mirror_lag(project, name), last_change_id=cursor.last_change_id,
                        updated_at=cursor.updated_at, resynced_at=cursor.resynced_at)


def mirror_lag_total() -> int | None:
    """Changes of all projects not yet mirrored into the configured target (projects never mirrored count
    with all their changes); None when the mirror is off."""
    name = configured_name()
    if name is None:
        return None
    cursors = dict(MirrorCursor.objects.filter(target=name).values_list("project_id", "last_change_id"))
    return sum(GraphChange.objects.filter(project=project, id__gt=cursors.get(project.pk, 0)).count()
               for project in _projects_behind(name))


# --- rebuilding ---------------------------------------------------------------------------------------

@dataclass
class Resync:
    memories: int
    seconds: float
    last_change_id: int


def mirror_resync(target: GraphTarget, project: Project, *,
                  progress: Callable[[int], None] | None = None) -> Resync:
    """Rebuild the project's part of the graph from the rows: wipe it, write every memory (with its
    mentions and edges), then set the cursor to the last change seen before reading, so changes made
    meanwhile are applied again by the next step (harmlessly)."""
    started = time.monotonic()
    target.ensure_indexes()
    last_id = GraphChange.objects.filter(project=project).aggregate(last=Max("id"))["last"] or 0
    for label in cypher.LABELS:
        while target.run(cypher.WIPE_BATCH.format(label=label), {"project": project.pk, "limit": WIPE_ROWS})[0][0]:
            pass
    ids = list(Memory.objects.filter(project=project).exclude(status=MemoryStatus.FORGOTTEN)
               .order_by("pk").values_list("pk", flat=True))
    sessions = set(AgentSession.objects.filter(project=project).values_list("pk", flat=True))
    apply(target, project.pk, Touched(sessions=sessions))
    for chunk in _chunks(ids, ROWS_PER_STATEMENT):
        apply(target, project.pk, Touched(memories=set(chunk)))
        if progress:
            progress(len(chunk))
    cursor = cursor_for(project, target)
    cursor.last_change_id, cursor.resynced_at = last_id, timezone.now()
    cursor.save()
    return Resync(memories=len(ids), seconds=time.monotonic() - started, last_change_id=last_id)
