"""Typed results of the curation API (curation/api/ on the server): acts, the review queue, entities."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from .models import JSON, Edge, Memory, Page, Result


@dataclass(frozen=True)
class CurationAct(Result):
    """One act of the curation log: `kind` (edge.approve, memory.sensitive, undo, …) on `object_type`
    #`object_id` by `actor` (user:<id>, named `actor_name`); `undone` once someone undid it."""

    id: int
    kind: str
    object_type: str
    object_id: int
    session_id: int | None = None
    actor: str = ""
    actor_name: str = ""
    reason: str = ""
    undoes_id: int | None = None
    undone: bool = False
    created_at: datetime | None = None


@dataclass(frozen=True)
class ReviewEdge(Edge):
    """An edge of the review queue, with both memories' text as the caller may see it (sensitive ones
    masked for viewers) and `impact`, the stored recalls whose activation went through it."""

    session_id: int | None = None
    source_label: str = ""
    target_label: str = ""
    impact: int = 0


@dataclass(frozen=True)
class ReviewPage(Page):
    results: list[ReviewEdge] = field(default_factory=list)


@dataclass(frozen=True)
class EdgeAct(Result):
    """An act on an edge and the edge as it is now (None once deleted)."""

    act: CurationAct
    edge: ReviewEdge | None = None


@dataclass(frozen=True)
class EdgeBulk(Result):
    acts: list[CurationAct]
    edges: list[ReviewEdge]


@dataclass(frozen=True)
class MemoryAct(Result):
    act: CurationAct
    memory: Memory


@dataclass(frozen=True)
class Repeat(Result):
    """Another memory repeating values of a sensitive one (`shared`), to mark it sensitive too."""

    id: int
    session_id: int
    label: str
    shared: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class CuratedEntity(Result):
    """An entity with its mention count and its possible duplicates (`possibly_same_as`: id, name,
    similarity)."""

    id: int
    name: str
    type: str
    aliases: list[str] = field(default_factory=list)
    mentions: int = 0
    possibly_same_as: list[JSON] = field(default_factory=list)


@dataclass(frozen=True)
class EntityPage(Page):
    results: list[CuratedEntity] = field(default_factory=list)


@dataclass(frozen=True)
class EntityAct(Result):
    act: CurationAct
    entity: CuratedEntity


@dataclass(frozen=True)
class ActPage(Page):
    results: list[CurationAct] = field(default_factory=list)


@dataclass(frozen=True)
class Undone(Result):
    """An undo: the undo act, and the object it restored (an edge, a memory or an entity)."""

    act: CurationAct
    edge: ReviewEdge | None = None
    memory: Memory | None = None
    entity: CuratedEntity | None = None


__all__ = ["ActPage", "CuratedEntity", "CurationAct", "EdgeAct", "EdgeBulk", "EntityAct", "EntityPage", "MemoryAct",
           "Repeat", "ReviewEdge", "ReviewPage", "Undone"]
