"""Which query terms are too common to help full-text seeds, from PostgreSQL's own statistics.

A term found in a large share of memories matches thousands of rows that then all need ranking,
and says little about the query. ANALYZE (autovacuum) already keeps the most common lexemes of
`memory.search_vector` with their frequencies in `pg_stats`, so no table of our own is needed.
The statistics cover the whole table, not one project: a fair estimate of the work a term brings,
refreshed every few minutes per process.
"""

from __future__ import annotations

import threading
import time

from django.db import connection

COMMON_ROWS = 500  # a term estimated in more memories than this is dropped from the query
ROWS_BUDGET = 1000  # and the kept terms together may match about this many (the rarest are kept first)
REFRESH_SECONDS = 300.0

_lock = threading.Lock()
_cache: dict[str, object] = {"at": float("-inf"), "freq": {}}


def term_frequencies() -> dict[str, float]:
    """Estimated number of memories containing each of the most common terms (empty before ANALYZE).

    A count rather than a share: in a small project every term is cheap to rank, however common.
    """
    with _lock:
        if time.monotonic() - _cache["at"] < REFRESH_SECONDS:  # type: ignore[operator]
            return _cache["freq"]  # type: ignore[return-value]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT s.most_common_elems::text::text[], s.most_common_elem_freqs, c.reltuples FROM pg_stats s "
            "JOIN pg_class c ON c.oid = 'memory_memory'::regclass WHERE s.tablename = 'memory_memory' "
            "AND s.attname = 'search_vector' AND s.schemaname = current_schema()"
        )
        row = cursor.fetchone()
    freq = {term: share * max(row[2], 0) for term, share in zip(row[0], row[1], strict=False)} if row and row[0] else {}
    with _lock:
        _cache.update(at=time.monotonic(), freq=freq)
    return freq


def informative_terms(terms: set[str]) -> list[str]:
    """The terms worth searching for, rarest first, within a budget of rows to rank.

    Full-text ranks every matching row, so the work is the sum of the terms' frequencies: common
    terms are left out, then the rarest terms are kept while their estimated matches fit
    ROWS_BUDGET. The rarest term is always kept, so a query of common words still searches.
    A term missing from the statistics is rarer than every listed one: it is estimated at the
    smallest listed frequency (0 before the first ANALYZE, when everything is kept).
    """
    freq = term_frequencies()
    floor = min(freq.values(), default=0.0)
    ordered = sorted(terms, key=lambda t: (freq.get(t, floor), t))
    kept, rows = [], 0.0
    for term in ordered:
        estimate = freq.get(term, floor)
        if kept and (estimate > COMMON_ROWS or rows + estimate > ROWS_BUDGET):
            break
        kept.append(term)
        rows += estimate
    return sorted(kept)


def forget_statistics() -> None:
    """Drop the cached frequencies (tests, or right after a bulk load and ANALYZE)."""
    with _lock:
        _cache.update(at=float("-inf"), freq={})
