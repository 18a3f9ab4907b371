"""People's edits of entities: rename, merge two, split an alias off, dismiss a `possibly_same_as` flag,
and put each back. The caller checks the request and holds the entities locked (select_for_update);
each function writes the rows and returns the change-log rows it made. An entity change has no session.
"""

from __future__ import annotations

from typing import Any

from ...errors import EditConflict
from ...models import Entity, EntityMention, GraphChange, Project
from ..changelog import change_record
from ..extraction.patterns import normalize_name
from ..operations import Op

RESTORED_FIELDS = ("name", "normalized_name", "type", "aliases", "evidence")


def entity_snapshot(entity: Entity, *, mentions: bool = False) -> dict[str, Any]:
    data = {"id": entity.pk, "name": entity.name, "normalized_name": entity.normalized_name, "type": entity.type,
            "aliases": list(entity.aliases), "evidence": list(entity.evidence)}
    if mentions:  # which memory mentioned it how: what an undo of a merge puts back
        data["mentions"] = [[m, s] for m, s in EntityMention.objects.filter(entity=entity).order_by("memory_id")
                            .values_list("memory_id", "surface")]
    return data


def _log(project: Project, actor: str, op: Op, entity_id: int, before: dict | None, after: dict | None
         ) -> GraphChange:
    return change_record(project=project, session=None, actor=actor, op=op, object_type="entity",
                         object_id=entity_id, before=before, after=after)


def entity_rename(project: Project, entity: Entity, *, actor: str, name: str, key: str) -> GraphChange:
    """The entity takes its right name; the old one stays as an alias."""
    before = entity_snapshot(entity)
    aliases = [a for a in entity.aliases if normalize_name(a) != key]
    entity.aliases = aliases + ([entity.name] if entity.name not in aliases and entity.name != name else [])
    entity.name, entity.normalized_name = name, key
    entity.save(update_fields=["name", "normalized_name", "aliases"])
    return _log(project, actor, Op.ENTITY_UPDATED, entity.pk, before, entity_snapshot(entity))


def entity_merge(project: Project, survivor: Entity, duplicate: Entity, *, actor: str) -> list[GraphChange]:
    """The duplicate's mentions, name and aliases go to the survivor; the duplicate is deleted."""
    survivor_before, duplicate_before = entity_snapshot(survivor), entity_snapshot(duplicate, mentions=True)
    _move_mentions(duplicate, survivor)
    names = dict.fromkeys([*survivor.aliases, duplicate.name, *duplicate.aliases])
    survivor.aliases = [a for a in names if a != survivor.name]
    survivor.save(update_fields=["aliases"])
    _drop_flags_about(project, duplicate.pk)  # the survivor's flag about it, and anyone else's: settled
    survivor.refresh_from_db(fields=["evidence"])
    duplicate.delete()
    return [_log(project, actor, Op.ENTITY_MERGED, survivor.pk, survivor_before, entity_snapshot(survivor)),
            _log(project, actor, Op.ENTITY_DELETED, duplicate_before["id"], duplicate_before,
                 {"merged_into": survivor.pk})]


def _move_mentions(source: Entity, target: Entity) -> None:
    already = set(EntityMention.objects.filter(entity=target).values_list("memory_id", flat=True))
    EntityMention.objects.filter(entity=source).exclude(memory_id__in=already).update(entity=target)
    EntityMention.objects.filter(entity=source).delete()  # those memories mention the survivor already


def _drop_flags_about(project: Project, entity_id: int) -> None:
    for other in Entity.objects.filter(project=project, evidence__contains=[{"possibly_same_as": entity_id}]):
        other.evidence = [e for e in other.evidence if e.get("possibly_same_as") != entity_id]
        other.save(update_fields=["evidence"])


def entity_split(project: Project, entity: Entity, *, actor: str, alias: str, key: str
                 ) -> tuple[Entity, list[GraphChange]]:
    """The alias becomes its own entity, with the mentions written so."""
    before = entity_snapshot(entity)
    split = Entity.objects.create(project=project, name=alias, normalized_name=key, type=entity.type,
                                  evidence=[{"split_from": entity.pk}])
    EntityMention.objects.filter(entity=entity, surface__iexact=alias).update(entity=split)
    entity.aliases = [a for a in entity.aliases if a != alias]
    entity.evidence = [e for e in entity.evidence if e.get("alias") != alias]
    entity.save(update_fields=["aliases", "evidence"])
    return split, [_log(project, actor, Op.ENTITY_UPDATED, entity.pk, before, entity_snapshot(entity)),
                   _log(project, actor, Op.ENTITY_CREATED, split.pk, None, entity_snapshot(split, mentions=True))]


def entity_flag_dismiss(project: Project, entity: Entity, *, actor: str, other_id: int) -> GraphChange:
    """The engine's flag that `other_id` may be the same goes; the person's "not the same" stays."""
    before = entity_snapshot(entity)
    entity.evidence = [e for e in entity.evidence if e.get("possibly_same_as") != other_id] + [
        {"not_same_as": other_id, "by": actor}]
    entity.save(update_fields=["evidence"])
    return _log(project, actor, Op.ENTITY_UPDATED, entity.pk, before, entity_snapshot(entity))


def entity_unsplit(project: Project, entity: Entity, split: Entity, *, actor: str, before: dict[str, Any]
                   ) -> list[GraphChange]:
    """Undo of a split: the split entity's mentions come back and it is deleted."""
    now = entity_snapshot(entity)
    EntityMention.objects.filter(entity=split).update(entity=entity)
    split_before = entity_snapshot(split)
    split.delete()
    _restore(entity, before)
    return [_log(project, actor, Op.ENTITY_UPDATED, entity.pk, now, entity_snapshot(entity)),
            _log(project, actor, Op.ENTITY_DELETED, split_before["id"], split_before, None)]


def entity_restore(project: Project, entity: Entity, *, actor: str, before: dict[str, Any]) -> GraphChange:
    """Undo of a rename or a dismissed flag: the fields as the snapshot recorded them."""
    if Entity.objects.filter(project=project, normalized_name=before["normalized_name"]).exclude(
            pk=entity.pk).exists():
        raise EditConflict(f"Another entity is called {before['name']!r} now.")
    now = entity_snapshot(entity)
    _restore(entity, before)
    return _log(project, actor, Op.ENTITY_UPDATED, entity.pk, now, entity_snapshot(entity))


def entity_unmerge(project: Project, survivor: Entity, *, actor: str, survivor_before: dict[str, Any],
                   duplicate: dict[str, Any]) -> list[GraphChange]:
    """Undo of a merge: the duplicate comes back with its id, its mentions and the survivor's old fields."""
    if Entity.objects.filter(pk=duplicate["id"]).exists() or Entity.objects.filter(
            project=project, normalized_name=duplicate["normalized_name"]).exists():
        raise EditConflict(f"Entity {duplicate['name']!r} exists again: it cannot be split back out.")
    now = entity_snapshot(survivor)
    restored = Entity.objects.create(project=project, pk=duplicate["id"], name=duplicate["name"],
                                     normalized_name=duplicate["normalized_name"], type=duplicate["type"],
                                     aliases=duplicate["aliases"], evidence=duplicate["evidence"])
    for memory_id, surface in duplicate.get("mentions", []):
        EntityMention.objects.filter(entity=survivor, memory_id=memory_id, surface=surface).update(entity=restored)
        if not EntityMention.objects.filter(entity=restored, memory_id=memory_id).exists():
            EntityMention.objects.get_or_create(entity=restored, memory_id=memory_id, defaults={"surface": surface})
    _restore(survivor, survivor_before)
    return [_log(project, actor, Op.ENTITY_UPDATED, survivor.pk, now, entity_snapshot(survivor)),
            _log(project, actor, Op.ENTITY_CREATED, restored.pk, None, entity_snapshot(restored, mentions=True))]


def _restore(entity: Entity, snapshot: dict[str, Any]) -> None:
    for name in RESTORED_FIELDS:
        setattr(entity, name, snapshot[name])
    entity.save(update_fields=list(RESTORED_FIELDS))
