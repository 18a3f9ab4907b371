"""A session's graph and its ghosts, as a reader may see them (the session page, the API, the SDK)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..models import AgentSession
from ..selectors import SessionGraph, graph_ghosts, session_graph
from .reader import Reader
from .rows import edge_row, ghost_row, graph_node, hidden_memories


def graph_view(reader: Reader, *, session: AgentSession, around: int | None, hops: int, limit: int | None
               ) -> tuple[SessionGraph, dict[str, Any]]:
    """The graph read (for its counts) and its rows: memories, edges, ghosts, entities. For a reader who may
    not see sensitive content, a sensitive memory's node and ghost are masked, the edges touching one show
    no rationale, and an entity only sensitive memories mention is left out."""
    graph = session_graph(session=session, around=around, hops=hops, limit=limit)
    show = reader.may_see_sensitive
    hidden = hidden_memories(reader, (i for e in graph.edges for i in (e.source_id, e.target_id)))
    entities = graph.entities
    if not show:
        named = {n for m in graph.memories if not m.sensitive for n in graph.entity_names.get(m.pk, [])}
        entities = [e for e in entities if e.name in named]
    return graph, {
        "memories": [graph_node(m, masked=m.sensitive and not show, sources=graph.sources.get(m.pk, []),
                                position=graph.positions.get(m.pk), entities=graph.entity_names.get(m.pk, []))
                     for m in graph.memories],
        "edges": [edge_row(e, hidden) for e in graph.edges],
        "ghosts": [ghost_row(g, masked=g.sensitive and not show) for g in graph.ghosts],
        "entities": [{"id": e.pk, "name": e.name, "type": e.type, "aliases": list(e.aliases)} for e in entities],
    }


def ghost_rows(reader: Reader, *, session: AgentSession, ids: Iterable[int]) -> list[dict[str, Any]]:
    """Other sessions' memories among `ids`, as the graph draws them at the far end of an edge."""
    return [ghost_row(g, masked=g.sensitive and not reader.may_see_sensitive)
            for g in graph_ghosts(session=session, ids=ids)]
