"""Embedding spaces, their HNSW indexes, bulk vector loads and nearest-neighbour search.

Vectors live in one untyped `vector` column; each space has a partial HNSW index over
`vector::vector(dims)` restricted to its rows. Project-wide search uses that index; search
inside one session is exact (a btree on (space, session) narrows the rows), because pgvector
0.6.2 has no iterative index scans and an HNSW scan followed by a session filter can return
fewer than k rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from django.db import connection, transaction

from ..conf import memory_settings
from ..errors import EmbeddingSpaceMismatch
from ..models import EmbeddingSpace, MemoryEmbedding
from ..providers.base import Embedder, Vector

TABLE = MemoryEmbedding._meta.db_table


@dataclass(frozen=True)
class Neighbour:
    memory_id: int
    distance: float

    @property
    def similarity(self) -> float:
        return 1.0 - self.distance


def space_for(embedder: Embedder) -> EmbeddingSpace:
    """The database row of the embedder's space, created (with its index) on first use."""
    space, created = EmbeddingSpace.objects.get_or_create(
        name=embedder.space_name, defaults={"dimensions": embedder.dimensions}
    )
    if space.dimensions != embedder.dimensions:
        raise EmbeddingSpaceMismatch(
            f"Embedding space {space.name!r} holds {space.dimensions}-d vectors but the embedder "
            f"returns {embedder.dimensions}-d; configure another space name or run `manage.py reembed`."
        )
    if created:
        index_create(space)
    return space


_cached_spaces: dict[tuple[str, str, int], EmbeddingSpace] = {}


def cached_space_for(embedder: Embedder) -> EmbeddingSpace:
    """space_for without its query on every recall: a space row is never deleted, only created.

    A row read inside an open transaction might still be rolled back, so it is kept only once that
    transaction commits; a flush of the database (tests) empties the cache through post_migrate.
    """
    key = (str(connection.settings_dict["NAME"]), embedder.space_name, embedder.dimensions)
    space = _cached_spaces.get(key)
    if space is None:
        space = space_for(embedder)
        transaction.on_commit(lambda: _cached_spaces.setdefault(key, space))
    return space


def cached_spaces_clear(**kwargs) -> None:
    _cached_spaces.clear()


def index_name(space: EmbeddingSpace) -> str:
    return f"memory_emb_hnsw_{space.pk}"


def index_create(space: EmbeddingSpace) -> None:
    m, ef = int(memory_settings.HNSW_M), int(memory_settings.HNSW_EF_CONSTRUCTION)
    with connection.cursor() as cursor:
        cursor.execute(
            f"CREATE INDEX IF NOT EXISTS {index_name(space)} ON {TABLE} "
            f"USING hnsw ((vector::vector({int(space.dimensions)})) vector_cosine_ops) "
            f"WITH (m = {m}, ef_construction = {ef}) WHERE space_id = {int(space.pk)}"
        )


def index_drop(space: EmbeddingSpace) -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX IF EXISTS {index_name(space)}")


def vector_literal(vector: Sequence[float]) -> str:
    return "[" + ",".join(map("{:.7g}".format, vector)) + "]"


@dataclass(frozen=True)
class EmbeddingRow:
    memory_id: int
    project_id: int
    session_id: int
    vector: Vector


def embeddings_copy(space: EmbeddingSpace, rows: Iterable[EmbeddingRow]) -> int:
    """Stream vectors into the table with COPY (row-by-row INSERT into an indexed table crawls).

    `rows` is consumed while COPY is in progress, so it must not touch the database itself.
    """
    count = 0
    connection.ensure_connection()
    with connection.connection.cursor() as cursor:
        with cursor.copy(f"COPY {TABLE} (memory_id, space_id, project_id, session_id, vector) FROM STDIN") as copy:
            for row in rows:
                copy.write(f"{row.memory_id}\t{space.pk}\t{row.project_id}\t{row.session_id}\t{vector_literal(row.vector)}\n")
                count += 1
    return count


def bulk_load(space: EmbeddingSpace, rows: Iterable[EmbeddingRow]) -> int:
    """COPY with the space's index dropped, then rebuild it once: minutes become seconds."""
    with transaction.atomic():
        index_drop(space)
        count = embeddings_copy(space, rows)
        with connection.cursor() as cursor:
            # Django's FKs are deferred; their pending checks would block CREATE INDEX.
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        index_create(space)
        with connection.cursor() as cursor:
            cursor.execute(f"ANALYZE {TABLE}")  # fresh statistics, so the planner picks the index
    return count


# HNSW candidates per wanted result. The filters apply after the scan (status, sensitive): asked for exactly k,
# a scan of a project with 10% of its memories out of scope came up short, and the exact search that then
# takes over read every vector of the project (recall at k=100: p95 144 ms at 100,000 memories, `make bench`).
CANDIDATES_PER_RESULT = 2


def hnsw_candidates(k: int) -> int:
    """How many nearest vectors a project-wide search scans for k results (and its `hnsw.ef_search`)."""
    return max(int(memory_settings.HNSW_EF_SEARCH), CANDIDATES_PER_RESULT * k)


def search_statement(
    *, space: EmbeddingSpace, vector: Vector, k: int, project_id: int, session_id: int | None = None,
    statuses: Sequence[str] = ("active",), exclude_sensitive: bool = False, exact: bool = False,
    memory_columns: str = "",
) -> tuple[str, list]:
    """SQL and parameters of a kNN search: HNSW for a project, exact within one session (or when asked).

    Rows are (memory_id, distance), then `memory_columns`: more columns of the memory row `m`.
    """
    dims, space_id = int(space.dimensions), int(space.pk)
    extra = f", {memory_columns}" if memory_columns else ""
    query_vec = f"%s::vector({dims})"
    filters = ["m.status = ANY(%s)"] + (["NOT m.sensitive"] if exclude_sensitive else [])
    if session_id is not None or exact:
        # Exact: cosine_distance() is not index-able, so the planner scans the scope's rows.
        distance = f"cosine_distance(e.vector::vector({dims}), {query_vec})"
        owner, owner_id = ("session_id", session_id) if session_id is not None else ("project_id", project_id)
        sql = (
            f"SELECT e.memory_id, {distance} AS d{extra} FROM {TABLE} e JOIN memory_memory m ON m.id = e.memory_id "
            f"WHERE e.space_id = {space_id} AND e.{owner} = %s AND {' AND '.join(filters)} "
            f"ORDER BY d LIMIT %s"
        )
        return sql, [vector_literal(vector), owner_id, list(statuses), k]
    # Project-wide: the inner query is a plain ORDER BY distance over the space's partial index,
    # so the planner always walks HNSW; memory filters apply to its candidates afterwards.
    candidates = hnsw_candidates(k)
    sql = (
        f"SELECT c.memory_id, c.d{extra} FROM (SELECT e.memory_id, (e.vector::vector({dims})) <=> {query_vec} AS d "
        f"FROM {TABLE} e WHERE e.space_id = {space_id} AND e.project_id = %s ORDER BY d LIMIT {candidates}) c "
        f"JOIN memory_memory m ON m.id = c.memory_id WHERE {' AND '.join(filters)} ORDER BY c.d LIMIT %s"
    )
    return sql, [vector_literal(vector), project_id, list(statuses), k]


def nearest(*, k: int, session_id: int | None = None, **search) -> list[Neighbour]:
    """The k memories closest to the vector (cosine), within a project or one session."""
    if session_id is not None:  # exact: no HNSW setting to scope, so no transaction of its own
        with connection.cursor() as cursor:
            cursor.execute(*search_statement(k=k, session_id=session_id, **search))
            return [Neighbour(memory_id, float(d)) for memory_id, d in cursor.fetchall()]
    found = _run_search(*search_statement(k=k, session_id=session_id, **search), k)
    if session_id is None and len(found) < k:
        # An HNSW scan filtered afterwards (other projects, statuses) can come up short: go exact.
        found = _run_search(*search_statement(k=k, session_id=session_id, exact=True, **search), k)
    return found


def _run_search(sql: str, params: list, k: int, *, explain: bool = False) -> list:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL hnsw.ef_search = {hnsw_candidates(k)}")
        cursor.execute(("EXPLAIN " if explain else "") + sql, params)
        rows = cursor.fetchall()
    return [r[0] for r in rows] if explain else [Neighbour(memory_id, float(d)) for memory_id, d in rows]


def search_plan(*, k: int, **search) -> str:
    """The planner's plan for a search (for tests and diagnostics)."""
    sql, params = search_statement(k=k, **search)
    return "\n".join(_run_search(sql, params, k, explain=True))
