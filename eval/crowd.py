"""A crowded table: the eval run again beside many memories of another project.

A product database holds many projects, and PostgreSQL's statistics (which full-text search uses to judge
a word too common to search for) count them all together. The labelled files alone make a table of about
2,000 memories, where that never shows; so `make eval` also fills the table with copies of the eval's own
memories in one more project, ingests and asks everything again, and reports both runs side by side.
(Counted table-wide, the common-word cut once dropped the words that mattered: ripple R@10 0.716 → 0.694,
supersede pairs 20 → 14, with 50,000 other memories.)
"""

from __future__ import annotations

from django.db import connection, transaction

from memory.engine.projects import project_create, session_create
from memory.engine.recall.terms import forget_statistics
from memory.models import Memory, Project

CROWD_SLUG = "eval-crowd"
COPIED_COLUMNS = ("content", "kind", "dimensions", "importance", "relevance", "novelty", "status", "sensitive",
                  "access_count", "occurred_at", "created_at", "updated_at", "search_text")


def crowd_fill(times: int) -> int:
    """Copy every memory of the other eval projects `times` over into one more project (rows only: no
    embeddings, entities or edges, which other projects' recalls never read), then ANALYZE so the statistics
    see them. Returns the table's size."""
    crowd_empty()
    project = project_create(name="Crowd (other projects)", slug=CROWD_SLUG)
    session = session_create(project=project, title="copies", actor="eval")
    columns = ", ".join(COPIED_COLUMNS)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {Memory._meta.db_table} ({columns}, session_id, project_id) "
            f"SELECT {columns}, %s, %s FROM {Memory._meta.db_table} m CROSS JOIN generate_series(1, %s) "
            f"WHERE m.project_id IN (SELECT id FROM {Project._meta.db_table} WHERE slug LIKE 'eval-%%' "
            "AND slug <> %s)", [session.pk, project.pk, times, CROWD_SLUG])
    return _analyze()


def crowd_empty() -> None:
    """Remove the copies (one statement for the rows; the project's own delete then has nothing to cascade)."""
    project = Project.objects.filter(slug=CROWD_SLUG).first()
    if project is None:
        return
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {Memory._meta.db_table} WHERE project_id = %s", [project.pk])
    project.delete()
    _analyze()


def _analyze() -> int:
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {Memory._meta.db_table}")
        cursor.execute(f"SELECT count(*) FROM {Memory._meta.db_table}")
        rows = cursor.fetchone()[0]
    forget_statistics()  # the engine caches the statistics for minutes
    return rows
