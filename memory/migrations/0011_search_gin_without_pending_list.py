"""The full-text index keeps no pending list, and memory rows leave room for in-place updates.

A GIN index with `fastupdate` on queues new entries in a pending list that every search scans in
full until a vacuum merges it; the access counts each recall writes kept it near its 4 MB limit,
which made the full-text seed of a recall slower than all its other statements together. The index
is altered in place (no rebuild) and its queue merged now. The memory table's fill factor leaves
room on each page, so an access-count update can stay on its page (a HOT update) and touch no index.
"""

from django.contrib.postgres.indexes import GinIndex
from django.db import migrations

INDEX = "memory_search_vector_gin"


class Migration(migrations.Migration):

    dependencies = [
        ("memory", "0010_next_by_speaker"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveIndex(model_name="memory", name=INDEX),
                migrations.AddIndex(model_name="memory", index=GinIndex(
                    fields=["search_vector"], name=INDEX, fastupdate=False)),
            ],
            database_operations=[
                migrations.RunSQL(
                    [f"ALTER INDEX {INDEX} SET (fastupdate = off)", f"SELECT gin_clean_pending_list('{INDEX}')"],
                    [f"ALTER INDEX {INDEX} SET (fastupdate = on)"]),
            ],
        ),
        migrations.RunSQL("ALTER TABLE memory_memory SET (fillfactor = 90)",
                          "ALTER TABLE memory_memory RESET (fillfactor)"),
    ]
