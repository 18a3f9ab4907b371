"""The one visibility rule for sensitive content: what a reader who may not see it gets instead.

Every way out uses it: REST serializers and the graph's fast path, live messages and their catch-up,
the change log, interaction lists, the session page's embedded data, maintenance answers. The rule:

- a sensitive memory shows no content, no content-derived dimensions, no source metadata;
- an interaction a sensitive memory was made from (or that repeats one and was attached to it)
  shows no content or metadata; nor does a pending one, which may turn out to repeat one;
- an edge touching a sensitive memory shows no rationale (rules quote values: "new phone: +86…");
- a recall event names only the memories the reader may see, and never the query;
- a stored recall (its replay) shows a memory's text only if the memory still exists, is not forgotten,
  and is not sensitive (or the reader may see that); its query, context and narrative only if every
  memory it touched passes the same test, since they may quote or ask about one;
- an entity change shows its names only if a memory the reader may see mentions the entity, and
  lists only such memories among its mentions;
- a store item (engine/store) whose current value made a sensitive memory shows its value masked
  (`mask_store_value`).

A memory counts as sensitive if it is now *or* a snapshot says it was: content recorded before it was
marked (its `memory.created` row) must not leak through the log either. Once unmarked, a change's
snapshots are judged one by one: those recorded while it was sensitive stay masked, the unmark's `after`
(and what follows) shows the text, so a page open for a viewer shows it again without a reload.
Whether a reader may see sensitive content is the access rule's answer (memory/access.py,
`Access.may_see_sensitive`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .models import EntityMention, Interaction, InteractionStatus, Memory, MemoryStatus

SENSITIVE_MASK = "[sensitive]"
PENDING_MASK = "[not processed yet]"
FORGOTTEN_MASK = "[forgotten]"
# Dimensions that describe a text without quoting it; every other key (entities, keywords, values,
# attributes…) is derived from the content and dropped.
SAFE_DIMENSIONS = ("language", "intent", "sentiment", "subjectivity", "source_kind")


@dataclass(frozen=True)
class SensitiveRefs:
    """Ids whose content a reader must not see, computed once per batch of changes."""

    memory_ids: frozenset[int] = field(default_factory=frozenset)
    interaction_ids: frozenset[int] = field(default_factory=frozenset)
    pending_interaction_ids: frozenset[int] = field(default_factory=frozenset)  # pending now, not in the snapshot
    hidden_entity_ids: frozenset[int] = field(default_factory=frozenset)  # no visible memory mentions them


def sensitive_memory_ids(ids: Iterable[int]) -> set[int]:
    ids = {i for i in ids if i}
    return set(Memory.objects.filter(pk__in=ids, sensitive=True).values_list("pk", flat=True)) if ids else set()


def sensitive_interaction_ids(ids: Iterable[int]) -> set[int]:
    """The interactions among `ids` that a sensitive memory was made from or absorbed as a repeat."""
    ids = {i for i in ids if i}
    if not ids:
        return set()
    return set(Memory.sources.through.objects.filter(interaction_id__in=ids, memory__sensitive=True)
               .values_list("interaction_id", flat=True))


def _named_memories(change: dict[str, Any]) -> set[int]:
    """The memories a change is about or points at (an edge's ends, a recall's results)."""
    kind, object_id = change["object_type"], change["object_id"]
    named = {object_id} if kind == "memory" and object_id else set()
    for snapshot in (change.get("before"), change.get("after")):
        if not isinstance(snapshot, dict):
            continue
        if kind == "edge":
            named |= {snapshot.get("source_id"), snapshot.get("target_id")} - {None}
        elif kind == "recall":
            named |= set(snapshot.get("memory_ids") or [])
        elif kind == "entity":
            named |= {m for m, _ in snapshot.get("mentions") or []}
    return named


def sensitive_refs(changes: list[dict[str, Any]]) -> SensitiveRefs:
    """Which memories and interactions named by these changes are sensitive (or pending) now (≤ 3 queries)."""
    memory_ids = set().union(*(_named_memories(c) for c in changes)) if changes else set()
    interaction_ids = {c["object_id"] for c in changes if c["object_type"] == "interaction" and c["object_id"]}
    pending = set(Interaction.objects.filter(pk__in=interaction_ids, status=InteractionStatus.PENDING)
                  .values_list("pk", flat=True)) if interaction_ids else set()
    entity_ids = {c["object_id"] for c in changes if c["object_type"] == "entity" and c["object_id"]}
    shown = set(EntityMention.objects.filter(entity_id__in=entity_ids, memory__sensitive=False)
                .values_list("entity_id", flat=True)) if entity_ids else set()
    return SensitiveRefs(frozenset(sensitive_memory_ids(memory_ids)),
                         frozenset(sensitive_interaction_ids(interaction_ids)), frozenset(pending),
                         frozenset(entity_ids - shown))


def mask_memory_snapshot(data: dict[str, Any]) -> dict[str, Any]:
    masked = {**data, "content": SENSITIVE_MASK, "sensitive": True}
    if isinstance(data.get("dimensions"), dict):
        masked["dimensions"] = {k: v for k, v in data["dimensions"].items() if k in SAFE_DIMENSIONS}
    if isinstance(data.get("sources"), list):
        masked["sources"] = [{**s, "metadata": {}} if isinstance(s, dict) else s for s in data["sources"]]
    return masked


def memory_mask(*, exists: bool, status: str, sensitive: bool, show_sensitive: bool) -> str | None:
    """What stands in for a memory's text in a stored recall, or None when this reader may see it.

    A forgotten or deleted memory is hidden from everyone (a hard forget has also scrubbed the trace)."""
    if not exists or status == MemoryStatus.FORGOTTEN:
        return FORGOTTEN_MASK
    if sensitive and not show_sensitive:
        return SENSITIVE_MASK
    return None


def recall_query_hidden_sql(show_sensitive: bool, table: str = "memory_recalltrace") -> str:
    """SQL true when a stored recall touched a memory whose text this reader may not see (memory_mask's
    rule): its query is then hidden, and a text search must not match it."""
    sensitive = "" if show_sensitive else " OR m.sensitive"
    return (f"EXISTS (SELECT 1 FROM unnest({table}.touched_ids) AS t(id) LEFT JOIN {Memory._meta.db_table} m "
            f"ON m.id = t.id WHERE m.id IS NULL OR m.status = '{MemoryStatus.FORGOTTEN}'{sensitive})")


def interaction_mask(interaction_id: int, status: str, sensitive_ids: set[int] | frozenset[int]) -> str | None:
    """What stands in for an interaction's content, or None when the reader may see it."""
    if interaction_id in sensitive_ids:
        return SENSITIVE_MASK
    if status == InteractionStatus.PENDING:
        return PENDING_MASK
    return None


def mask_interaction(data: dict[str, Any], mask: str | None) -> dict[str, Any]:
    """A masked interaction keeps no text of its own: its content, metadata, what an LLM judge read in it
    (its scores keep their numbers only), and the reasons a failure recorded (an error's first line may
    quote a value; the failed stages' names stay)."""
    if mask is None:
        return data
    return {**data, **({"content": mask} if "content" in data else {}),
            **({"metadata": {}} if "metadata" in data else {}),
            **({"scores": {k: v for k, v in data["scores"].items() if isinstance(v, int | float)}}
               if isinstance(data.get("scores"), dict) else {}),
            **({"error": mask} if data.get("error") else {}),
            **({"stage_errors": {stage: mask for stage in data["stage_errors"]}}
               if isinstance(data.get("stage_errors"), dict) else {})}


def edge_rationale(rationale: str, source_id: int, target_id: int, sensitive_ids: set[int] | frozenset[int]) -> str:
    return SENSITIVE_MASK if rationale and (source_id in sensitive_ids or target_id in sensitive_ids) else rationale


def mask_change(change: dict[str, Any], refs: SensitiveRefs) -> dict[str, Any]:
    """The change as a reader who may not see sensitive content sees it (a copy when anything changes)."""
    kind, object_id = change["object_type"], change["object_id"]
    snapshots = {key: change[key] for key in ("before", "after") if isinstance(change.get(key), dict)}
    if kind == "memory":
        # Each snapshot on its own: sensitive now masks both; otherwise one recorded while sensitive stays
        # masked, and one recorded since it was unmarked shows, so an unmark carries the text it frees.
        masked = {key: mask_memory_snapshot(s) for key, s in snapshots.items()
                  if object_id in refs.memory_ids or s.get("sensitive")}
        return {**change, **masked} if masked else change
    elif kind == "interaction":
        status = InteractionStatus.PENDING if object_id in refs.pending_interaction_ids else ""
        mask = interaction_mask(object_id, status, refs.interaction_ids)
        return {**change, **{key: mask_interaction(s, mask) for key, s in snapshots.items()}}
    elif kind == "edge":
        return {**change, **{key: {**s, "rationale": edge_rationale(s.get("rationale", ""), s.get("source_id"),
                                                                    s.get("target_id"), refs.memory_ids)}
                             for key, s in snapshots.items() if "rationale" in s}}
    elif kind == "entity":
        hidden = object_id in refs.hidden_entity_ids
        return {**change, **{key: _entity_view(s, hidden, refs.memory_ids) for key, s in snapshots.items()}}
    elif kind == "recall":
        return {**change, **{key: {k: v for k, v in s.items() if k != "query"}
                             | {"memory_ids": [i for i in s.get("memory_ids") or [] if i not in refs.memory_ids]}
                             for key, s in snapshots.items()}}
    return change


def _entity_view(snapshot: dict[str, Any], hidden: bool, sensitive_ids: frozenset[int]) -> dict[str, Any]:
    mentions = [[m, surface] for m, surface in snapshot.get("mentions") or [] if m not in sensitive_ids]
    view = {**snapshot, **({"mentions": mentions} if "mentions" in snapshot else {})}
    if hidden:
        view.update(name=SENSITIVE_MASK, normalized_name=SENSITIVE_MASK, aliases=[], evidence=[])
    return view


def changes_for_viewer(changes: list[dict[str, Any]], *, show_sensitive: bool,
                       refs: SensitiveRefs | None = None) -> list[dict[str, Any]]:
    """Changes as this reader may see them. Pass `refs` when already computed for the batch."""
    if show_sensitive or not changes:
        return changes
    refs = sensitive_refs(changes) if refs is None else refs
    return [mask_change(change, refs) for change in changes]


def mask_store_value(value: Any) -> Any:
    """A store item's value whose memory is sensitive: every text, number and flag masked, its shape kept,
    so code reading `value["field"]` gets the mask instead of the content (or an error)."""
    if isinstance(value, dict):
        return {key: mask_store_value(child) for key, child in value.items()}
    if isinstance(value, list):
        return [mask_store_value(child) for child in value]
    return None if value is None else SENSITIVE_MASK
