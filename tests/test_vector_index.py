"""pgvector search on the real database: the HNSW index is used, filtered searches still fill k."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memory.engine.projects import project_create, session_create
from memory.engine.vector_index import EmbeddingRow, bulk_load, nearest, search_plan, space_for
from memory.models import EmbeddingSpace, Memory, MemoryEmbedding
from memory.providers import get_embedder

pytestmark = pytest.mark.django_db

DIMS = 384


def _unit(rng: np.random.Generator) -> list[float]:
    v = rng.standard_normal(DIMS)
    return (v / np.linalg.norm(v)).tolist()


def _populate(session, count: int, rng: np.random.Generator, space: EmbeddingSpace) -> list[Memory]:
    now = timezone.now()
    memories = Memory.objects.bulk_create(
        Memory(project_id=session.project_id, session=session, content=f"memory {i}", occurred_at=now)
        for i in range(count)
    )
    bulk_load(space, (EmbeddingRow(m.pk, session.project_id, session.pk, _unit(rng)) for m in memories))
    return memories


@pytest.fixture
def big_project():
    rng = np.random.default_rng(7)
    project = project_create(name="Big")
    space = space_for(get_embedder())
    sessions = [session_create(project=project, title=f"s{i}", actor="test") for i in range(3)]
    _populate(sessions[0], 2500, rng, space)
    _populate(sessions[1], 12, rng, space)
    return project, sessions, space, rng


def test_project_search_uses_hnsw_index(big_project):
    project, _sessions, space, rng = big_project
    plan = search_plan(space=space, vector=_unit(rng), k=10, project_id=project.pk)
    assert f"memory_emb_hnsw_{space.pk}" in plan, plan


def test_session_search_returns_k_when_k_exist(big_project):
    project, sessions, space, rng = big_project
    found = nearest(space=space, vector=_unit(rng), k=10, project_id=project.pk, session_id=sessions[1].pk)
    assert len(found) == 10
    in_session = set(MemoryEmbedding.objects.filter(session=sessions[1]).values_list("memory_id", flat=True))
    assert {n.memory_id for n in found} <= in_session
    # Exact search: distances ascending and equal to a brute-force check of the closest one.
    assert [n.distance for n in found] == sorted(n.distance for n in found)


def test_status_filter_still_fills_k(big_project):
    project, sessions, space, rng = big_project
    query = _unit(rng)
    top = nearest(space=space, vector=query, k=50, project_id=project.pk)
    Memory.objects.filter(pk__in=[n.memory_id for n in top]).update(status="archived")
    again = nearest(space=space, vector=query, k=50, project_id=project.pk)
    assert len(again) == 50
    assert not {n.memory_id for n in top} & {n.memory_id for n in again}


def test_a_large_k_with_some_memories_out_of_scope_needs_no_exact_search(big_project):
    """HNSW scans more candidates than k, so the memories a filter removes afterwards (a tenth archived)
    leave k in scope: the exact search, which reads every vector of the project, is not needed."""
    project, sessions, space, rng = big_project
    archived = list(Memory.objects.filter(session=sessions[0]).values_list("pk", flat=True)[::10])
    Memory.objects.filter(pk__in=archived).update(status="archived")
    with CaptureQueriesContext(connection) as queries:
        found = nearest(space=space, vector=_unit(rng), k=100, project_id=project.pk)
    assert len(found) == 100 and not {n.memory_id for n in found} & set(archived)
    searches = [q["sql"] for q in queries.captured_queries if "ORDER BY" in q["sql"]]
    assert len(searches) == 1 and "cosine_distance" not in searches[0], searches


def test_project_search_does_not_cross_projects(big_project):
    project, _sessions, space, rng = big_project
    other = project_create(name="Other")
    lonely = session_create(project=other, title="only", actor="test")
    mine = _populate(lonely, 3, rng, space)
    found = nearest(space=space, vector=_unit(rng), k=10, project_id=other.pk)
    assert {n.memory_id for n in found} == {m.pk for m in mine}
