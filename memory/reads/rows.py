"""The JSON rows every exit sends, built already masked for their reader (memory/visibility.py's rule).

Memories, graph nodes, ghosts, edges and interactions leave the server only as these rows: the REST
API, the session page's embedded data, the curation answers, the export and the SDK/MCP (which read the
API) all build them here. Each builder takes the reader (`may_see_sensitive`) or the batch's hidden ids
computed once for the reader, never a boolean flag a caller could forget to pass.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from rest_framework.fields import DateTimeField

from ..models import Edge, Interaction, InteractionLink, Memory
from ..visibility import (
    SENSITIVE_MASK,
    edge_rationale,
    interaction_mask,
    mask_interaction,
    mask_memory_snapshot,
    sensitive_interaction_ids,
    sensitive_memory_ids,
)
from .reader import Reader

LABEL_CHARS = 60
_DATETIME = DateTimeField()


def memory_label(content: str) -> str:
    """The first line of the content, cut at a word near LABEL_CHARS."""
    line = " ".join(content.strip().splitlines()[0].split()) if content.strip() else ""
    if len(line) <= LABEL_CHARS:
        return line
    cut = line[:LABEL_CHARS]
    space = cut.rfind(" ")
    return (cut[:space] if space > LABEL_CHARS // 2 else cut).rstrip(" ,.;:") + "…"


def when(value: datetime | None) -> str | None:
    """DRF's DateTimeField output; UTC values (all of ours) take the short path."""
    if value is None:
        return None
    if value.utcoffset() == timedelta(0):
        return value.isoformat()[:-6] + "Z"
    return _DATETIME.to_representation(value)


def hidden_memories(reader: Reader, ids: Iterable[int]) -> frozenset[int]:
    """The memories among `ids` whose text this reader may not see (one query; none for who may)."""
    return frozenset() if reader.may_see_sensitive else frozenset(sensitive_memory_ids(ids))


def hidden_interactions(reader: Reader, ids: Iterable[int]) -> frozenset[int]:
    """The interactions among `ids` a sensitive memory was made from or absorbed, for this reader."""
    return frozenset() if reader.may_see_sensitive else frozenset(sensitive_interaction_ids(ids))


# --- memories ----------------------------------------------------------------------------------------------


def provenance_row(source: dict[str, Any]) -> dict[str, Any]:
    return {**source, "occurred_at": when(source["occurred_at"])}


def _provenance(memory: Memory) -> list[dict[str, Any]]:
    return [{"interaction_id": i.pk, "kind": i.kind, "metadata": i.metadata, "occurred_at": i.occurred_at,
             "idempotency_key": i.idempotency_key} for i in memory.provenance]


def memory_row(memory: Memory, *, masked: bool, sources: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A memory as the API sends it (`sources`: its provenance, read from the memory when not given)."""
    row = {
        "id": memory.pk, "session_id": memory.session_id, "content": memory.content, "kind": memory.kind,
        "dimensions": memory.dimensions or {}, "importance": memory.importance, "relevance": memory.relevance,
        "novelty": memory.novelty, "status": memory.status, "sensitive": memory.sensitive,
        "at_risk": memory.at_risk, "access_count": memory.access_count, "occurred_at": when(memory.occurred_at),
        "created_at": when(memory.created_at),
        "sources": [provenance_row(s) for s in (_provenance(memory) if sources is None else sources)],
    }
    return mask_memory_snapshot(row) if masked else row


def memory_rows(reader: Reader, memories: Iterable[Memory]) -> list[dict[str, Any]]:
    """Memories as this reader may see them: a sensitive one's text, derived dimensions and source
    metadata masked for who may not see it."""
    return [memory_row(m, masked=m.sensitive and not reader.may_see_sensitive) for m in memories]


def graph_node(memory: Memory, *, masked: bool, sources: list[dict], position: tuple[float, float] | None,
               entities: list[str]) -> dict[str, Any]:
    """A node of the session graph: the memory plus what the browser draws with. Built directly: the DRF
    field machinery took ~1.5 s for 5,000 nodes."""
    node = {**memory_row(memory, masked=False, sources=sources), "label": memory_label(memory.content),
            "intent": (memory.dimensions or {}).get("intent") or "", "entities": entities,
            "position": {"x": position[0], "y": position[1]} if position else None}
    return {**mask_memory_snapshot(node), "label": SENSITIVE_MASK, "entities": []} if masked else node


def ghost_row(row: Any, *, masked: bool) -> dict[str, Any]:
    """A memory of another session at the far end of an edge (a `selectors.graph_ghosts` row)."""
    ghost = {"id": row.id, "session_id": row.session_id, "session_title": row.session__title or "",
             "kind": row.kind, "status": row.status, "sensitive": row.sensitive,
             "occurred_at": when(row.occurred_at), "content": row.content, "label": memory_label(row.content)}
    return {**mask_memory_snapshot(ghost), "label": SENSITIVE_MASK} if masked else ghost


# --- edges -------------------------------------------------------------------------------------------------


def edge_row(edge: Edge, hidden: frozenset[int]) -> dict[str, Any]:
    """An edge; touching a memory in `hidden` (see hidden_memories), its rationale is masked (rules quote
    values: "new phone: +86…"). Built directly: 10,000 edges through DRF fields took ~1 s."""
    return {"id": edge.pk, "source_id": edge.source_id, "target_id": edge.target_id, "relation": edge.relation,
            "weight": edge.weight, "confidence": edge.confidence, "origin": edge.origin, "status": edge.status,
            "needs_review": edge.needs_review,
            "rationale": edge_rationale(edge.rationale, edge.source_id, edge.target_id, hidden),
            "created_at": when(edge.created_at)}


def edge_rows(reader: Reader, edges: list[Edge]) -> list[dict[str, Any]]:
    hidden = hidden_memories(reader, (i for e in edges for i in (e.source_id, e.target_id)))
    return [edge_row(e, hidden) for e in edges]


# --- interactions ------------------------------------------------------------------------------------------


def _interaction_row(interaction: Interaction, links: list[dict[str, Any]]) -> dict[str, Any]:
    return {"id": interaction.pk, "session_id": interaction.session_id, "kind": interaction.kind,
           "content": interaction.content, "metadata": interaction.metadata,
           "occurred_at": when(interaction.occurred_at), "received_at": when(interaction.received_at),
           "idempotency_key": interaction.idempotency_key, "external_id": interaction.external_id,
           "recall_id": interaction.recall_id, "used": list(interaction.used), "links": links,
           "status": interaction.status,
           "scores": interaction.scores, "reason": interaction.reason, "error": interaction.error,
           "stage_errors": interaction.stage_errors, "attempts": interaction.attempts,
           "memory_ids": sorted(m.pk for m in interaction.memories.all())}


def interaction_rows(reader: Reader, interactions: list[Interaction]) -> list[dict[str, Any]]:
    """Interactions (with `memories` prefetched) as this reader may see them (one query for the batch): one a
    sensitive memory came from, or still pending (it may repeat one), shows no content for who may not."""
    links = _links_of([i.pk for i in interactions])
    if reader.may_see_sensitive:
        return [_interaction_row(i, links.get(i.pk, [])) for i in interactions]
    hidden = hidden_interactions(reader, (i.pk for i in interactions))
    return [mask_interaction(_interaction_row(i, links.get(i.pk, [])), interaction_mask(i.pk, i.status, hidden))
            for i in interactions]


def _links_of(interaction_ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    """The links these interactions declared, each with what became of it (one query). Ids and names only:
    no content of either end."""
    found: dict[int, list[dict[str, Any]]] = {}
    for link in InteractionLink.objects.filter(child_id__in=interaction_ids).order_by("pk"):
        found.setdefault(link.child_id, []).append(
            {"by": link.by, "ref": link.ref, "relation": link.relation, "parent_id": link.parent_id,
             "status": link.status, "edge_ids": list(link.edge_ids), "note": link.note})
    return found
