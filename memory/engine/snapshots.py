"""JSON snapshots of rows, as stored in the change log's before/after and sent to browsers."""

from __future__ import annotations

from typing import Any

from ..models import Edge, Interaction, Memory


def interaction_snapshot(interaction: Interaction) -> dict[str, Any]:
    return {
        "id": interaction.pk,
        "session_id": interaction.session_id,
        "kind": interaction.kind,
        "content": interaction.content,
        "metadata": interaction.metadata,
        "occurred_at": interaction.occurred_at.isoformat(),
        "status": interaction.status,
        "scores": interaction.scores,
        "reason": interaction.reason,
    }


def memory_snapshot(memory: Memory) -> dict[str, Any]:
    return {
        "id": memory.pk,
        "session_id": memory.session_id,
        "kind": memory.kind,
        "content": memory.content,
        "dimensions": memory.dimensions,
        "importance": memory.importance,
        "relevance": memory.relevance,
        "novelty": memory.novelty,
        "status": memory.status,
        "sensitive": memory.sensitive,
        "occurred_at": memory.occurred_at.isoformat(),
    }


def edge_snapshot(edge: Edge) -> dict[str, Any]:
    return {
        "id": edge.pk,
        "session_id": edge.session_id,
        "source": edge.source_id,
        "target": edge.target_id,
        "relation": edge.relation,
        "weight": edge.weight,
        "confidence": edge.confidence,
        "origin": edge.origin,
        "status": edge.status,
        "needs_review": edge.needs_review,
        "rationale": edge.rationale,
    }
