"""A recall's answer as its caller may see it (the API, the SDK, MCP's recall tool)."""

from __future__ import annotations

from typing import Any

from ..engine.recall import RecallResult
from .reader import Reader
from .risk import risk_rows
from .rows import edge_rows, memory_row


def recall_body(reader: Reader, result: RecallResult) -> dict[str, Any]:
    """The ranked memories with provenance, the subgraph linking them, the context and narrative. A recall for
    a reader who may not see sensitive content left sensitive memories out already (RecallQuery.include_sensitive);
    the rows are masked all the same, so a memory marked during the recall does not leave in clear."""
    show = reader.may_see_sensitive
    why = risk_rows(reader, [item.memory.pk for item in result.items if item.memory.at_risk])
    return {
        "recall_id": result.trace.pk, "query": result.trace.query, "params": result.trace.params,
        "timings": result.trace.timings,
        "memories": [{"rank": item.rank, "score": item.score, "components": item.components, "path": item.path,
                      "memory": memory_row(item.memory, masked=item.memory.sensitive and not show),
                      "at_risk": why.get(item.memory.pk, [])}
                     for item in result.items],
        "edges": edge_rows(reader, result.edges), "context": result.context, "narrative": result.narrative,
    }
