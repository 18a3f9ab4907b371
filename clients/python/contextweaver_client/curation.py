"""The curation operations: the review queue, edge and memory acts, entities, the curation log and undo.

They are people's acts: a client made with `login=Login(...)` of a curator (or admin) may do them, a
viewer may read the queue, the entities and the log, and an agent's token is refused (403). Every act
is logged on the server with its `reason` and can be undone. Writes are not replayed after a lost answer
(a second approve would log a second act); reads are.
"""

from __future__ import annotations

from collections.abc import Iterable

from .api import Api, Plan, _many, _one, _query, operation
from .curation_models import (
    ActPage,
    EdgeAct,
    EdgeBulk,
    EntityAct,
    EntityPage,
    MemoryAct,
    Repeat,
    ReviewPage,
    Undone,
)
from .exchange import Call
from .models import JSON, Interaction

APPROVED, REJECTED = "approved", "rejected"


class CurationApi(Api):
    """The agent API's operations plus the curation ones (for a client logged in as a person)."""

    def _act(self, method: str, parse, *path: object, body: JSON | None = None,
             params: JSON | None = None) -> Call:
        return Call(method, self._path(*path), parse=parse, json=body, params=params, replayable=False)

    # The review queue and edge acts ------------------------------------------------------------------

    @operation
    def review_queue(self, *, session_id: int | None = None, status: str | None = None,
                     needs_review: bool | None = None, relation: str | None = None, order: str = "newest",
                     limit: int = 100, offset: int = 0) -> Plan[ReviewPage]:
        """Edges with both memories' text. `order`: newest, weakest (lowest confidence first) or impact
        (the edges most stored recalls went through first)."""
        flag = None if needs_review is None else str(needs_review).lower()
        params = _query(session=session_id, status=status, needs_review=flag, relation=relation, order=order,
                        limit=limit, offset=offset)
        return (yield Call("GET", self._path("edges"), parse=_one(ReviewPage), params=params))

    @operation
    def draw_edge(self, source_id: int, target_id: int, relation: str, *, reason: str = "") -> Plan[EdgeAct]:
        """A new edge from the parent `source_id` to the child `target_id`, approved and human-made."""
        body = {"source_id": source_id, "target_id": target_id, "relation": relation, "reason": reason}
        return (yield self._act("POST", _one(EdgeAct), "edges", body=body))

    @operation
    def approve_edge(self, edge_id: int, *, reason: str = "") -> Plan[EdgeAct]:
        """Confirm an inferred edge: inference never changes it again and recall weighs it more."""
        return (yield self._edge_update(edge_id, {"status": APPROVED, "reason": reason}))

    @operation
    def reject_edge(self, edge_id: int, *, reason: str = "") -> Plan[EdgeAct]:
        """Reject an edge: it carries no activation and inference never creates it again."""
        return (yield self._edge_update(edge_id, {"status": REJECTED, "reason": reason}))

    @operation
    def relabel_edge(self, edge_id: int, relation: str, *, reason: str = "") -> Plan[EdgeAct]:
        """Correct an edge's relation (causal, temporal, conditional, elaborates, …)."""
        return (yield self._edge_update(edge_id, {"relation": relation, "reason": reason}))

    def _edge_update(self, edge_id: int, body: JSON) -> Call[EdgeAct]:
        return self._act("PATCH", _one(EdgeAct), "edges", edge_id, body=body)

    @operation
    def delete_edge(self, edge_id: int, *, reason: str = "") -> Plan[EdgeAct]:
        """Delete an edge (reject it instead to keep the engine from inferring it again)."""
        return (yield self._act("DELETE", _one(EdgeAct), "edges", edge_id, params=_query(reason=reason or None)))

    @operation
    def decide_edges(self, edge_ids: Iterable[int], status: str, *, reason: str = "") -> Plan[EdgeBulk]:
        """Approve or reject several edges at once (one act each; all or nothing)."""
        body = {"edge_ids": list(edge_ids), "status": status, "reason": reason}
        return (yield self._act("POST", _one(EdgeBulk), "edges", "bulk", body=body))

    # Memories ---------------------------------------------------------------------------------------

    @operation
    def update_memory(self, memory_id: int, *, sensitive: bool | None = None, status: str | None = None,
                      kind: str | None = None, reason: str = "") -> Plan[MemoryAct]:
        """Mark or unmark a memory sensitive, archive or restore it (`status` archived / active), or correct
        its kind; only the fields given change."""
        body: JSON = {"reason": reason, **{name: value for name, value in
                                           (("sensitive", sensitive), ("status", status), ("kind", kind))
                                           if value is not None}}
        return (yield self._act("PATCH", _one(MemoryAct), "memories", memory_id, body=body))

    @operation
    def still_valid(self, memory_id: int, *, reason: str = "") -> Plan[MemoryAct]:
        """Settle an at-risk flag: what the memory depends on changed, and you checked it still holds (an act,
        undoable). `Conflict` when it is not at risk. Archive it instead (`update_memory(status="archived")`)
        when it no longer holds."""
        body: JSON = {"still_valid": True, "reason": reason}
        return (yield self._act("PATCH", _one(MemoryAct), "memories", memory_id, body=body))

    @operation
    def memory_repeats(self, memory_id: int) -> Plan[list[Repeat]]:
        """Other memories repeating this memory's values, to mark them sensitive too (curators)."""
        return (yield Call("GET", self._path("memories", memory_id, "repeats"), parse=_many(Repeat)))

    @operation
    def promote(self, session_id: int, interaction_id: int) -> Plan[Interaction]:
        """Keep an interaction the filter dropped: it becomes a memory."""
        return (yield self._act("POST", _one(Interaction), "sessions", session_id, "interactions", interaction_id,
                                "promote"))

    # Entities ---------------------------------------------------------------------------------------

    @operation
    def entities(self, *, flagged: bool = False, q: str = "", limit: int = 100,
                 offset: int = 0) -> Plan[EntityPage]:
        """The project's entities; `flagged` keeps those with a possible duplicate."""
        params = _query(flagged=flagged, q=q or None, limit=limit, offset=offset)
        return (yield Call("GET", self._path("entities"), parse=_one(EntityPage), params=params))

    @operation
    def rename_entity(self, entity_id: int, name: str, *, reason: str = "") -> Plan[EntityAct]:
        """Rename an entity; the old name stays an alias."""
        return (yield self._act("PATCH", _one(EntityAct), "entities", entity_id, body={"name": name, "reason": reason}))

    @operation
    def merge_entities(self, survivor_id: int, duplicate_id: int, *, reason: str = "") -> Plan[EntityAct]:
        """Merge `duplicate_id` into `survivor_id` (its mentions and names follow; it is deleted)."""
        body = {"duplicate_id": duplicate_id, "reason": reason}
        return (yield self._act("POST", _one(EntityAct), "entities", survivor_id, "merge", body=body))

    @operation
    def split_entity(self, entity_id: int, alias: str, *, reason: str = "") -> Plan[EntityAct]:
        """Split a wrongly merged alias off into an entity of its own."""
        body = {"alias": alias, "reason": reason}
        return (yield self._act("POST", _one(EntityAct), "entities", entity_id, "split", body=body))

    @operation
    def dismiss_entity_flag(self, entity_id: int, other_id: int, *, reason: str = "") -> Plan[EntityAct]:
        """Settle a possibly-same-as flag: the two entities are different."""
        body = {"other_id": other_id, "reason": reason}
        return (yield self._act("POST", _one(EntityAct), "entities", entity_id, "dismiss", body=body))

    # The curation log -------------------------------------------------------------------------------

    @operation
    def curation_log(self, *, session_id: int | None = None, actor: str = "", kind: str | None = None,
                     limit: int = 100, offset: int = 0) -> Plan[ActPage]:
        """The curation acts, newest first."""
        params = _query(session=session_id, actor=actor or None, kind=kind, limit=limit, offset=offset)
        return (yield Call("GET", self._path("curation", "actions"), parse=_one(ActPage), params=params))

    @operation
    def undo(self, act_id: int, *, reason: str = "") -> Plan[Undone]:
        """Undo an act (recorded as an act itself); 409 when undone already or the object changed since."""
        return (yield self._act("POST", _one(Undone), "curation", "actions", act_id, "undo", body={"reason": reason}))
