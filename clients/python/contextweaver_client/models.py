"""Typed results: one frozen dataclass per shape the API answers with (its OpenAPI schema, /api/schema/).

Fields the server adds later are ignored rather than breaking an older client; `from_json` fills each
field from the JSON key of the same name, parsing ISO times and nested results from the type hints.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from typing import Any, Self

JSON = dict[str, Any]


class Result:
    """Base of the results: `from_json` builds one from the API's JSON object."""

    @classmethod
    def from_json(cls, data: JSON) -> Self:
        hints = _hints(cls)
        values = {f.name: _convert(hints[f.name], data[f.name])
                  for f in dataclasses.fields(cls) if f.name in data}  # type: ignore[arg-type]
        return cls(**values)


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _convert(hint: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):  # `X | None`
        inner = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        return _convert(inner[0], value) if len(inner) == 1 else value
    if origin is list:
        (item,) = typing.get_args(hint)
        return [_convert(item, entry) for entry in value]
    if hint is datetime:
        return datetime.fromisoformat(value)
    if isinstance(hint, type) and issubclass(hint, Result):
        return hint.from_json(value)
    return value


@dataclass(frozen=True)
class Session(Result):
    id: int
    title: str = ""
    task: str = ""
    external_id: str = ""
    subject: str = ""  # whom the session is for, when the agent said
    metadata: JSON = field(default_factory=dict)
    created_at: datetime | None = None
    last_activity_at: datetime | None = None
    interaction_count: int = 0
    memory_count: int = 0
    filtered_count: int = 0
    failed_count: int = 0  # failed, or kept with failed stages: both are retried
    edge_count: int = 0
    proposal_count: int = 0
    last_change_at: datetime | None = None


@dataclass(frozen=True)
class Accepted(Result):
    """One sent interaction as the server took it: `duplicate` when its idempotency key was seen before.

    `error` says why processing failed (status "failed"; the server retries it). `stage_errors` names the
    stages ("dimensions", "scoring", "entities", "edges", "supersede") its memory was kept without, each with
    a reason; they are retried too, and `retry_interaction` runs them again at once."""

    id: int
    status: str
    duplicate: bool = False
    memory_ids: list[int] = field(default_factory=list)
    reason: str = ""
    error: str = ""
    stage_errors: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Interaction(Result):
    id: int
    session_id: int
    kind: str
    content: str
    status: str
    metadata: JSON = field(default_factory=dict)
    occurred_at: datetime | None = None
    received_at: datetime | None = None
    idempotency_key: str | None = None
    scores: JSON = field(default_factory=dict)
    reason: str = ""
    error: str = ""
    stage_errors: dict[str, str] = field(default_factory=dict)
    attempts: int = 0
    memory_ids: list[int] = field(default_factory=list)
    external_id: str = ""
    recall_id: int | None = None
    used: list[int] = field(default_factory=list)
    links: list[DeclaredLink] = field(default_factory=list)


@dataclass(frozen=True)
class DeclaredLink(Result):
    """A link an interaction declared (`by` id, idempotency_key or external_id, naming `ref`) and what became
    of it: `waiting` (its parent has not arrived, or an end is unprocessed), `resolved` (into `edge_ids`) or
    `no_memory` (an end kept no memory, nor did anything the parent depends on)."""

    by: str
    ref: str
    relation: str = "causal"
    parent_id: int | None = None
    status: str = "waiting"
    edge_ids: list[int] = field(default_factory=list)
    note: str = ""


@dataclass(frozen=True)
class Page(Result):
    """One page of a listing: `count` in all, `next` / `previous` the links to the pages beside it; each
    listing's page adds its `results`."""

    count: int = 0
    next: str | None = None
    previous: str | None = None


@dataclass(frozen=True)
class InteractionPage(Page):
    results: list[Interaction] = field(default_factory=list)


@dataclass(frozen=True)
class Risk(Result):
    """Why a memory may be out of date: `parent_id`, a memory it depends on, changed (`change`: superseded,
    corrected, archived or forgotten; its values `before` and `after`, masked when the caller may not see them),
    `replaced_by_id` is what replaced it, reached through the edges `path` (their `relations`, parent first)."""

    parent_id: int
    change: str
    risk: float
    parent_label: str | None = None
    parent_status: str = ""
    before: str = ""
    after: str = ""
    replaced_by_id: int | None = None
    replaced_by_label: str | None = None
    relations: list[str] = field(default_factory=list)
    path: list[int] = field(default_factory=list)
    hops: int = 1
    since: datetime | None = None


@dataclass(frozen=True)
class Memory(Result):
    """A memory. `label`, `entities` and `position` come only with the graph, `at_risk_why` only with
    `memories()`; a sensitive memory the caller may not see arrives masked. `at_risk`: how much a change to
    what it depends on may have made it out of date (0 none, 1 a direct dependent, halved each further hop)."""

    id: int
    session_id: int
    content: str
    kind: str
    status: str
    dimensions: JSON = field(default_factory=dict)
    importance: float = 0.0
    relevance: float = 0.0
    novelty: float = 0.0
    sensitive: bool = False
    at_risk: float = 0.0
    access_count: int = 0
    occurred_at: datetime | None = None
    created_at: datetime | None = None
    sources: list[JSON] = field(default_factory=list)
    label: str = ""
    entities: list[str] = field(default_factory=list)
    position: JSON | None = None
    at_risk_why: list[Risk] = field(default_factory=list)


@dataclass(frozen=True)
class MemoryPage(Page):
    results: list[Memory] = field(default_factory=list)


@dataclass(frozen=True)
class Edge(Result):
    id: int
    source_id: int
    target_id: int
    relation: str
    status: str
    weight: float = 1.0
    confidence: float = 1.0
    origin: str = ""
    needs_review: bool = False
    rationale: str = ""
    created_at: datetime | None = None


@dataclass(frozen=True)
class Entity(Result):
    id: int
    name: str
    type: str
    aliases: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Graph(Result):
    session: Session
    memories: list[Memory]
    edges: list[Edge]
    entities: list[Entity] = field(default_factory=list)
    last_change_id: int = 0
    truncated: bool = False
    total_memories: int = 0
    around: int | None = None


@dataclass(frozen=True)
class Change(Result):
    """One row of the change log: `op` on `object_type` #`object_id`, with the snapshots before and after."""

    id: int
    session_id: int | None
    op: str
    object_type: str
    object_id: int
    actor: str = ""
    before: JSON | None = None
    after: JSON | None = None
    created_at: datetime | None = None


@dataclass(frozen=True)
class ChangePage(Result):
    """Changes after a cursor, in order; pass `last_change_id` as the next `after`."""

    changes: list[Change]
    last_change_id: int
    has_more: bool = False


@dataclass(frozen=True)
class Recalled(Result):
    rank: int
    score: float
    memory: Memory
    components: dict[str, float] = field(default_factory=dict)
    path: list[JSON] = field(default_factory=list)
    at_risk: list[Risk] = field(default_factory=list)  # why it may be out of date (empty: nothing it needs changed)


@dataclass(frozen=True)
class Recall(Result):
    """A recall's answer: the ranked memories, the edges between them, and `context`, the memories told in
    dependency order (what an agent puts in its prompt). `recall_id` names its stored trace."""

    recall_id: int
    query: str
    memories: list[Recalled]
    edges: list[Edge] = field(default_factory=list)
    context: str = ""
    narrative: str = ""
    params: JSON = field(default_factory=dict)
    timings: JSON = field(default_factory=dict)


@dataclass(frozen=True)
class Forgotten(Result):
    """A soft forget: the memory is no longer recalled or shown; `already` when it had been forgotten before."""

    memory_id: int
    status: str
    already: bool = False


@dataclass(frozen=True)
class Link:
    """An earlier interaction the one sent depends on, named by exactly one of our `id`, its `idempotency_key`
    or its `external_id` (the framework's id; it may arrive later: the link waits for it). Once both ends are
    processed it becomes an edge of origin `agent`. `relation`: causal (default), conditional, temporal,
    elaborates, part_of or references."""

    id: int | None = None
    idempotency_key: str | None = None
    external_id: str | None = None
    relation: str = "causal"

    def to_json(self) -> JSON:
        named = {name: value for name, value in (("id", self.id), ("idempotency_key", self.idempotency_key),
                                                 ("external_id", self.external_id)) if value is not None}
        return {**named, "relation": self.relation}


@dataclass(frozen=True)
class NewInteraction:
    """One interaction to send in a batch (`kind`: user_input, assistant_output, agent_thought, tool_call,
    tool_result, observation or system).

    `external_id`: the framework's own id (message, tool-call or span id), unique in the session, so a resend
    is a duplicate and `links` may name it. `links`: what it depends on (`Link`s or their JSON). `recall_id`:
    the recall it acted on, `used`: the memory ids it acted on (edges of origin `use`)."""

    kind: str
    content: str
    metadata: JSON | None = None
    occurred_at: datetime | None = None
    idempotency_key: str | None = None
    external_id: str = ""
    links: tuple[Link | JSON, ...] = ()
    recall_id: int | None = None
    used: tuple[int, ...] = ()

    def to_json(self) -> JSON:
        body: JSON = {"kind": self.kind, "content": self.content}
        optional = (("metadata", self.metadata), ("idempotency_key", self.idempotency_key),
                    ("recall_id", self.recall_id),
                    ("occurred_at", self.occurred_at.isoformat() if self.occurred_at is not None else None))
        body.update((name, value) for name, value in optional if value is not None)
        if self.external_id:
            body["external_id"] = self.external_id
        if self.links:
            body["links"] = [link.to_json() if isinstance(link, Link) else dict(link) for link in self.links]
        if self.used:
            body["used"] = list(self.used)
        return body


# Store (the key-value store behind the LangGraph adapter) ---------------------------------------------


@dataclass(frozen=True)
class StoreItem(Result):
    """One stored item: `value` exactly as put (masked when a curator marked its memory sensitive and the
    caller may not see it: `sensitive`). `score` comes with a search by query (the recall's)."""

    namespace: list[str]
    key: str
    value: JSON
    created_at: datetime
    updated_at: datetime
    score: float | None = None
    sensitive: bool = False
    session_id: int = 0
    interaction_id: int | None = None
    recall_id: int | None = None  # a search by query: the recall it ran (give it to a put written from it)


@dataclass(frozen=True)
class StorePut(Result):
    """A put's answer: `forgotten_memory_ids` are the replaced value's memories, forgotten softly."""

    item: StoreItem
    created: bool = False
    forgotten_memory_ids: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class StoreDeleted(Result):
    deleted: bool
    forgotten_memory_ids: list[int] = field(default_factory=list)
