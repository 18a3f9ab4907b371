"""Telling words: the terms of a memory that few memories of its project hold, weighted by BM25's idf.

An announced change replaces an earlier value only when the two memories share telling words
(supersede.py). (A link from a memory to the earlier one that brought up the same rare words, maybe weeks
later in another session, was tried as a `references` edge: 16 of 114 were labelled dependencies in
`make eval`, and recall lost nothing without them.)
A speaker's name or "said" is in many memories of a conversation and tells nothing, so it is left out.
"""

from __future__ import annotations

import math
import time

from django.db import connection

from ..models import Memory
from .extraction import segment
from .recall.seeds import TSQUERY_UNSAFE
from .recall.terms import informative_terms

TELLING_SHARE = 0.03  # a term in more than this share of the project's memories tells nothing…
TELLING_MIN_COUNT = 5  # …unless the project is small: up to this many memories is always telling


def memory_terms(content: str) -> set[str]:
    """The text's search terms, as full-text stores them; numbers are values, not words, and a single
    Chinese character (号, 说, 三) is a particle or part of a date more often than a topic."""
    return {t for t in (TSQUERY_UNSAFE.sub("", w).lower() for w in segment(content))
            if t and not t.isdigit() and not (len(t) == 1 and "\u4e00" <= t <= "\u9fff")}


def telling_terms(memory: Memory) -> dict[str, float]:
    """The memory's telling terms with their idf in the project (one statement).

    Only the terms full-text search would use are counted (recall/terms.py: the rarest, within a budget
    of rows), each count stops one past the telling limit, and the project's size is recounted only now
    and then (project_size): on a large project the counts must not cost more than the rest of the write path."""
    total = project_size(memory.project_id)
    terms = sorted(informative_terms(memory_terms(memory.content), total))
    if not terms:
        return {}
    limit = int(max(TELLING_MIN_COUNT, TELLING_SHARE * total))
    # One small index lookup per term, stopping one past the limit (a statement joining all the terms
    # had the planner scan the whole project when its statistics were older than the project).
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT t, (SELECT count(*) FROM (SELECT 1 FROM {Memory._meta.db_table} m "
            f"WHERE m.search_vector @@ to_tsquery('simple', t) AND m.project_id = {int(memory.project_id)} "
            "LIMIT %s) hit) FROM unnest(%s::text[]) t", [limit + 1, terms])
        rows = cursor.fetchall()
    return {term: math.log(1 + (max(total, found) - found + 0.5) / (found + 0.5)) for term, found in rows
            if found <= limit}


SIZE_SECONDS = 60.0
SIZE_DRIFT = 0.05  # recount once this process wrote this share of the counted size since (at least 20)
_sizes: dict[int, tuple[float, int, int]] = {}  # project → (counted at, size, asked since)


def project_size(project_id: int) -> int:
    """The project's number of memories, recounted per process once a minute or once it may have grown
    by 5% (idf needs only its order of magnitude, and counting a large project on every write is not
    cheap). Asked once per new memory, so a replay of the same writes counts at the same points and
    `make eval` gives the same links run after run; the clock only bounds how stale another process's
    writes leave it."""
    now = time.monotonic()
    cached = _sizes.get(project_id)
    if cached:
        counted_at, size, asked = cached
        if asked < max(20, SIZE_DRIFT * size) and now - counted_at < SIZE_SECONDS:
            _sizes[project_id] = (counted_at, size, asked + 1)
            return size
    size = Memory.objects.filter(project_id=project_id).count()
    _sizes[project_id] = (now, size, 1)
    return size
