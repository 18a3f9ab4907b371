"""Column lists for the raw statements of the hot paths (recall, the write path).

There, building a queryset cost more than running it: `Model.objects.raw()` with these columns
gives the same model instances (field converters applied) without the query compiler.
"""

from __future__ import annotations

from ..models import Memory

SEARCH_ONLY = ("search_text", "search_vector")  # the segmented text and its tsvector: never read back


def memory_columns(alias: str = "") -> str:
    """Every column of memory_memory but the search-only ones, optionally qualified by a table alias."""
    prefix = f"{alias}." if alias else ""
    return ", ".join(f"{prefix}{f.column}" for f in Memory._meta.concrete_fields if f.name not in SEARCH_ONLY)
