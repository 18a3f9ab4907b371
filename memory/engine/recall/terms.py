"""Which query terms are too common to help full-text seeds, from PostgreSQL's own statistics.

A term found in a large share of memories matches thousands of rows that then all need ranking,
and says little about the query. ANALYZE (autovacuum) already keeps the most common lexemes of
`memory.search_vector` with their frequencies in `pg_stats`, so no table of our own is needed.

The statistics cover the whole table, every project together. A search ranks only the matches in its
scope, so a term's table-wide count is scaled by the scope's share of the table: in a database of many
projects, a word common across all of them is still searched for in a small one (counted table-wide,
"sister" or "trip" were dropped from every query of a 470-memory project once 50,000 other memories
held them, and full-text R@10 in `make eval` fell 0.68 → 0.61). Both are refreshed every few minutes
per process.
"""

from __future__ import annotations

import threading
import time

from django.db import connection

# The kept terms together may match about this many memories of the scope (the rarest are kept first). A
# separate cut at 500 for any one term cost R@5 0.54 → 0.51 in projects of 5,000-8,000 memories (`make eval`'s
# labelled files, each beside copies of the others) and saved no time at 100,000 (`make bench`: ripple p95 18.0 ms
# either way).
ROWS_BUDGET = 1000
REFRESH_SECONDS = 300.0
SCOPES_CACHED = 4096  # scope sizes kept per process (the cache is emptied when it would grow past this)

_lock = threading.Lock()
_cache: dict[str, object] = {"at": float("-inf"), "freq": {}, "rows": 0.0}
_scope_rows: dict[tuple[int, int | None], tuple[float, int]] = {}  # (project, session) → (counted at, rows)


def _statistics() -> tuple[dict[str, float], float]:
    """The estimated number of memories containing each of the most common terms, and the table's size."""
    with _lock:
        if time.monotonic() - _cache["at"] < REFRESH_SECONDS:  # type: ignore[operator]
            return _cache["freq"], _cache["rows"]  # type: ignore[return-value]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT s.most_common_elems::text::text[], s.most_common_elem_freqs, c.reltuples FROM pg_class c "
            "LEFT JOIN pg_stats s ON s.tablename = 'memory_memory' AND s.attname = 'search_vector' "
            "AND s.schemaname = current_schema() WHERE c.oid = 'memory_memory'::regclass"
        )
        row = cursor.fetchone()
    rows = max(float(row[2]), 0.0) if row else 0.0  # -1 before the first ANALYZE
    freq = {term: share * rows for term, share in zip(row[0], row[1], strict=False)} if row and row[0] else {}
    with _lock:
        _cache.update(at=time.monotonic(), freq=freq, rows=rows)
    return freq, rows


def term_frequencies() -> dict[str, float]:
    """Estimated number of memories, table-wide, containing each of the most common terms (empty before
    ANALYZE). A count rather than a share: in a small project every term is cheap to rank, however common."""
    return _statistics()[0]


def scope_rows(project_id: int, session_id: int | None = None) -> int:
    """How many memories a search of this project (or of one of its sessions) covers; recounted per
    process every REFRESH_SECONDS, like the term statistics it scales (a count of a large project is a few
    milliseconds, too much for every recall)."""
    key = (project_id, session_id)
    now = time.monotonic()
    with _lock:
        cached = _scope_rows.get(key)
        if cached and now - cached[0] < REFRESH_SECONDS:
            return cached[1]
    column, value = ("session_id", session_id) if session_id is not None else ("project_id", project_id)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM memory_memory WHERE {column} = %s", [value])
        rows = int(cursor.fetchone()[0])
    with _lock:
        if len(_scope_rows) >= SCOPES_CACHED:
            _scope_rows.clear()
        _scope_rows[key] = (now, rows)
    return rows


def informative_terms(terms: set[str], scope_size: int | None = None) -> list[str]:
    """The terms worth searching for, rarest first, within a budget of rows to rank.

    Full-text ranks every matching row of the scope, so the work is the sum of the terms' matches there:
    the rarest terms are kept while their estimated matches fit ROWS_BUDGET. The rarest term is always kept,
    so a query of common words still searches.
    `scope_size` is the number of memories searched (None: the whole table); a term's table-wide count is
    scaled by that share. A term missing from the statistics is rarer than every listed one: it is
    estimated at the smallest listed frequency (0 before the first ANALYZE, when everything is kept).
    """
    freq, table_rows = _statistics()
    share = 1.0 if scope_size is None or table_rows <= 0 else min(1.0, scope_size / table_rows)
    floor = min(freq.values(), default=0.0)
    ordered = sorted(terms, key=lambda t: (freq.get(t, floor), t))
    kept, rows = [], 0.0
    for term in ordered:
        estimate = freq.get(term, floor) * share
        if kept and rows + estimate > ROWS_BUDGET:
            break
        kept.append(term)
        rows += estimate
    return sorted(kept)


def forget_statistics() -> None:
    """Drop the cached frequencies and scope sizes (tests, or right after a bulk load and ANALYZE)."""
    with _lock:
        _cache.update(at=float("-inf"), freq={}, rows=0.0)
        _scope_rows.clear()
