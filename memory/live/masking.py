"""What a viewer may see of the change log: sensitive memories' content is masked.

One function for every path that hands change snapshots to people (websocket live events, the
websocket catch-up, `GET …/changes/`), so the rule cannot drift between them. A memory counts as
sensitive if its snapshot says so *or* it is sensitive now: content recorded before it was marked
(e.g. its `memory.created` row) must not leak through the log either. The raw interactions a
sensitive memory was made from carry the same text, so their content is masked too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..models import Memory

SENSITIVE_MASK = "[sensitive]"  # the same marker as the REST serializers use
# Dimensions that describe a text without quoting it; every other key (entities, keywords, values,
# attributes…) is derived from the content and dropped for viewers.
SAFE_DIMENSIONS = ("language", "intent", "sentiment", "subjectivity", "source_kind")


@dataclass(frozen=True)
class SensitiveRefs:
    """Ids whose content a viewer must not see, computed once per batch of changes."""

    memory_ids: frozenset[int] = field(default_factory=frozenset)
    interaction_ids: frozenset[int] = field(default_factory=frozenset)

    def to_json(self) -> dict[str, list[int]]:
        return {"memory": sorted(self.memory_ids), "interaction": sorted(self.interaction_ids)}

    @classmethod
    def from_json(cls, data: dict[str, list[int]] | None) -> SensitiveRefs:
        data = data or {}
        return cls(frozenset(data.get("memory", ())), frozenset(data.get("interaction", ())))


def sensitive_refs(changes: list[dict[str, Any]]) -> SensitiveRefs:
    """Look up which memories and interactions named by these changes are sensitive now (≤ 2 queries)."""
    memory_ids = {c["object_id"] for c in changes if c["object_type"] == "memory" and c["object_id"]}
    interaction_ids = {c["object_id"] for c in changes if c["object_type"] == "interaction" and c["object_id"]}
    sensitive_memories: set[int] = set()
    if memory_ids:
        sensitive_memories = set(Memory.objects.filter(pk__in=memory_ids, sensitive=True).values_list("pk", flat=True))
    sensitive_interactions: set[int] = set()
    if interaction_ids:
        through = Memory.sources.through
        sensitive_interactions = set(
            through.objects.filter(interaction_id__in=interaction_ids, memory__sensitive=True)
            .values_list("interaction_id", flat=True)
        )
    return SensitiveRefs(frozenset(sensitive_memories), frozenset(sensitive_interactions))


def mask_memory_snapshot(data: dict[str, Any]) -> dict[str, Any]:
    masked = {**data, "content": SENSITIVE_MASK, "sensitive": True}
    if isinstance(data.get("dimensions"), dict):
        masked["dimensions"] = {k: v for k, v in data["dimensions"].items() if k in SAFE_DIMENSIONS}
    return masked


def mask_change(change: dict[str, Any], refs: SensitiveRefs) -> dict[str, Any]:
    """The change as a viewer may see it (a copy when anything is masked, else the same dict)."""
    kind, object_id = change["object_type"], change["object_id"]
    if kind == "memory":
        hide = object_id in refs.memory_ids or any(
            isinstance(s, dict) and s.get("sensitive") for s in (change.get("before"), change.get("after")))
        if hide:
            return {**change, **{key: mask_memory_snapshot(change[key]) for key in ("before", "after")
                                 if isinstance(change.get(key), dict)}}
    elif kind == "interaction" and object_id in refs.interaction_ids:
        return {**change, **{key: {**change[key], "content": SENSITIVE_MASK} for key in ("before", "after")
                             if isinstance(change.get(key), dict) and "content" in change[key]}}
    return change


def changes_for_viewer(changes: list[dict[str, Any]], *, show_sensitive: bool,
                       refs: SensitiveRefs | None = None) -> list[dict[str, Any]]:
    """Changes as this reader may see them. Pass `refs` when already computed for the batch."""
    if show_sensitive or not changes:
        return changes
    refs = sensitive_refs(changes) if refs is None else refs
    return [mask_change(change, refs) for change in changes]
