"""A scope HNSW serves poorly (few memories pass its filters): short once, then recall goes exact at once."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory.engine.projects import project_create, session_create
from memory.engine.recall import RecallQuery, hnsw_memo, memory_recall
from memory.engine.vector_index import space_for
from memory.models import Memory
from memory.providers import get_embedder

from .test_vector_index import _populate

pytestmark = pytest.mark.django_db


@pytest.fixture
def small_beside_big():
    """1,500 memories, only 20 of them active: the nearest 100 by HNSW hold about one active memory."""
    rng = np.random.default_rng(11)
    space = space_for(get_embedder())
    project = project_create(name="Mostly archived")
    memories = _populate(session_create(project=project, title="s", actor="test"), 1500, rng, space)
    active = memories[:20]
    Memory.objects.filter(project=project).exclude(pk__in=[m.pk for m in active]).update(status="archived")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_memoryembedding")
    hnsw_memo.forget_short_scopes()
    yield project, active
    hnsw_memo.forget_short_scopes()


def _knn_statements(project) -> tuple[list[int], int]:
    with CaptureQueriesContext(connection) as captured:
        result = memory_recall(project=project, query=RecallQuery("memory", k=5, preset="vector"), actor="t")
    knn = [q for q in captured.captured_queries if "<=>" in q["sql"] or "cosine_distance" in q["sql"]]
    return [i.memory.pk for i in result.items], len(knn)


def test_second_recall_skips_the_short_hnsw_pass(small_beside_big):
    small, memories = small_beside_big
    first, first_knn = _knn_statements(small)
    second, second_knn = _knn_statements(small)
    assert first_knn == 2  # HNSW, then the exact rerun
    assert second_knn == 1  # straight to exact
    assert first == second and set(first) <= {m.pk for m in memories}
