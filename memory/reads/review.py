"""The review queue's edges with both memories' labels, as a reader may see them (curation's API)."""

from __future__ import annotations

from typing import Any

from ..models import Edge
from ..visibility import SENSITIVE_MASK
from .reader import Reader
from .rows import edge_row, hidden_memories, memory_label


def review_rows(reader: Reader, edges: list[Edge]) -> list[dict[str, Any]]:
    """Edges (source and target loaded) with their session, impact and the labels of their ends: a sensitive
    end's label and the edge's rationale masked for a reader who may not see it."""
    hidden = hidden_memories(reader, (i for e in edges for i in (e.source_id, e.target_id)))
    rows = []
    for edge in edges:
        row = {**edge_row(edge, hidden), "session_id": edge.session_id, "impact": getattr(edge, "impact", 0) or 0}
        for end in ("source", "target"):
            memory = getattr(edge, end)
            row[f"{end}_label"] = SENSITIVE_MASK if memory.pk in hidden else memory_label(memory.content)
        rows.append(row)
    return rows
