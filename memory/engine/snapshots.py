"""JSON snapshots of rows, as stored in the change log's before/after and sent to browsers."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db.models import Model

from ..models import Edge, GraphChange, Interaction, Memory

INTERACTION_FIELDS = ("id", "session_id", "kind", "content", "metadata", "occurred_at", "status", "scores", "reason",
                      "error", "stage_errors")
MEMORY_FIELDS = ("id", "session_id", "kind", "content", "dimensions", "importance", "relevance", "novelty", "status",
                 "sensitive", "at_risk", "occurred_at")
EDGE_FIELDS = ("id", "session_id", "source_id", "target_id", "relation", "weight", "confidence", "origin", "status",
               "needs_review", "rationale")
CHANGE_FIELDS = ("id", "project_id", "session_id", "actor", "op", "object_type", "object_id", "before", "after",
                 "created_at")


def snapshot(row: Model, fields: tuple[str, ...]) -> dict[str, Any]:
    values = {name: getattr(row, name) for name in fields}
    return {name: v.isoformat() if isinstance(v, datetime) else v for name, v in values.items()}


def interaction_snapshot(interaction: Interaction) -> dict[str, Any]:
    return snapshot(interaction, INTERACTION_FIELDS)


def memory_snapshot(memory: Memory) -> dict[str, Any]:
    return snapshot(memory, MEMORY_FIELDS)


def edge_snapshot(edge: Edge) -> dict[str, Any]:
    return snapshot(edge, EDGE_FIELDS)


def snapshot_sql(model: type[Model], fields: tuple[str, ...], alias: str, replaced: tuple[str, ...] = ()) -> str:
    """The snapshot of a row built by the server (jsonb), for change rows written in SQL; each field of
    `replaced` takes the next %s parameter instead of its value. Not for datetime fields (the server
    would write them in its own format)."""
    parts = []
    for name in fields:
        column = model._meta.get_field(name)
        if column.get_internal_type() in ("DateTimeField", "DateField"):
            raise ValueError(f"snapshot_sql cannot write {name}, a date, as snapshot() does")
        parts.append(f"'{name}', {'%s::text' if name in replaced else f'{alias}.{column.column}'}")
    return f"jsonb_build_object({', '.join(parts)})"


def change_snapshot(change: GraphChange) -> dict[str, Any]:
    return snapshot(change, CHANGE_FIELDS)
