"""A real FalkorDB for the mirror's tests (memory/mirror/local.py) and what they read back from it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from memory.mirror.local import running_falkordb
from memory.mirror.targets import FalkorTarget, GraphTarget


@pytest.fixture(scope="session")
def falkordb_url() -> Iterator[str]:
    with running_falkordb() as url:
        yield url


def fresh_falkor(url: str) -> FalkorTarget:
    """A target on a graph of its own, so tests never see each other's nodes."""
    return FalkorTarget(url, f"cw_test_{uuid.uuid4().hex[:12]}")


def graph_state(target: GraphTarget, project_id: int) -> dict[str, Any]:
    """Everything the mirror holds for a project, in plain comparable values."""
    memories = {row[0]: row[1] for row in target.run(
        "MATCH (m:Memory {project_id: $p}) RETURN m.id, properties(m)", {"p": project_id})}
    edges = {row[0]: (row[1], row[2], row[3], row[4]) for row in target.run(
        "MATCH (a:Memory {project_id: $p})-[e]->(b:Memory) RETURN e.id, type(e), a.id, b.id, e.status",
        {"p": project_id})}
    entities = {row[0]: row[1] for row in target.run(
        "MATCH (e:Entity {project_id: $p}) RETURN e.id, e.name", {"p": project_id})}
    mentions = {(row[0], row[1]) for row in target.run(
        "MATCH (m:Memory {project_id: $p})-[:MENTIONS]->(e:Entity) RETURN m.id, e.id", {"p": project_id})}
    sessions = {row[0]: row[1] for row in target.run(
        "MATCH (s:Session {project_id: $p}) RETURN s.id, s.title", {"p": project_id})}
    in_session = {(row[0], row[1]) for row in target.run(
        "MATCH (m:Memory {project_id: $p})-[:IN_SESSION]->(s:Session) RETURN m.id, s.id", {"p": project_id})}
    return {"memories": memories, "edges": edges, "entities": entities, "mentions": mentions,
            "sessions": sessions, "in_session": in_session}
