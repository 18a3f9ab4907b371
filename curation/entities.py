"""Entity curation: rename, merge two, split an alias off a wrong merge, and settle the engine's
`possibly_same_as` flags. Same contract as curation/services.py: one transaction, the change log,
one CurationAct, undoable from what the act recorded."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from memory.engine.changelog import change_record
from memory.engine.extraction.patterns import normalize_name
from memory.engine.operations import Op
from memory.errors import NotFoundError, ValidationFailed
from memory.models import Entity, EntityMention, GraphChange, Project

from .models import ActKind, CurationAct
from .services import CurationConflict, Outcome, act_record

NAME_MAX = 300


def entity_snapshot(entity: Entity, *, mentions: bool = False) -> dict[str, Any]:
    data = {"id": entity.pk, "name": entity.name, "normalized_name": entity.normalized_name, "type": entity.type,
            "aliases": list(entity.aliases), "evidence": list(entity.evidence)}
    if mentions:  # which memory mentioned it how: what an undo of a merge puts back
        data["mentions"] = [[m, s] for m, s in EntityMention.objects.filter(entity=entity).order_by("memory_id")
                            .values_list("memory_id", "surface")]
    return data


def _entity(project: Project, entity_id: int) -> Entity:
    entity = Entity.objects.select_for_update().filter(project=project, pk=entity_id).first()
    if entity is None:
        raise NotFoundError(f"No entity {entity_id} in project {project.slug!r}.")
    return entity


def _log(project: Project, actor: str, op: Op, entity_id: int, before: dict | None, after: dict | None
         ) -> GraphChange:
    return change_record(project=project, session=None, actor=actor, op=op, object_type="entity",
                         object_id=entity_id, before=before, after=after)


def entity_rename(*, project: Project, actor: str, entity_id: int, name: str, reason: str = "") -> Outcome:
    """Give an entity its right name; the old one stays as an alias. A name another entity has is a 409:
    merge the two instead."""
    name = " ".join(name.split())
    key = normalize_name(name)
    if not key or len(name) > NAME_MAX:
        raise ValidationFailed("Give the entity a name.", {"name": [f"1 to {NAME_MAX} characters"]})
    with transaction.atomic():
        entity = _entity(project, entity_id)
        taken = Entity.objects.filter(project=project, normalized_name=key).exclude(pk=entity.pk).first()
        if taken is not None:
            raise CurationConflict(f"Entity {taken.pk} is already called {taken.name!r}: merge the two instead.",
                                   {"entity_id": taken.pk})
        before = entity_snapshot(entity)
        aliases = [a for a in entity.aliases if normalize_name(a) != key]
        entity.aliases = aliases + ([entity.name] if entity.name not in aliases and entity.name != name else [])
        entity.name, entity.normalized_name = name, key
        entity.save(update_fields=["name", "normalized_name", "aliases"])
        change = _log(project, actor, Op.ENTITY_UPDATED, entity.pk, before, entity_snapshot(entity))
        return Outcome(act_record(project, None, actor, ActKind.ENTITY_RENAME, entity, reason, [change]), entity)


def entity_merge(*, project: Project, actor: str, survivor_id: int, duplicate_id: int, reason: str = "") -> Outcome:
    """The duplicate's mentions, name and aliases go to the survivor; the duplicate is deleted."""
    if survivor_id == duplicate_id:
        raise ValidationFailed("An entity is not merged into itself.", {"duplicate_id": ["another entity"]})
    with transaction.atomic():
        survivor, duplicate = _entity(project, survivor_id), _entity(project, duplicate_id)
        survivor_before, duplicate_before = entity_snapshot(survivor), entity_snapshot(duplicate, mentions=True)
        _move_mentions(duplicate, survivor)
        names = dict.fromkeys([*survivor.aliases, duplicate.name, *duplicate.aliases])
        survivor.aliases = [a for a in names if a != survivor.name]
        survivor.save(update_fields=["aliases"])
        _drop_flags_about(project, duplicate.pk)  # the survivor's flag about it, and anyone else's: settled
        survivor.refresh_from_db(fields=["evidence"])
        duplicate.delete()
        changes = [_log(project, actor, Op.ENTITY_MERGED, survivor.pk, survivor_before, entity_snapshot(survivor)),
                   _log(project, actor, Op.ENTITY_DELETED, duplicate_before["id"], duplicate_before,
                        {"merged_into": survivor.pk})]
        return Outcome(act_record(project, None, actor, ActKind.ENTITY_MERGE, survivor, reason, changes), survivor)


def _move_mentions(source: Entity, target: Entity) -> None:
    already = set(EntityMention.objects.filter(entity=target).values_list("memory_id", flat=True))
    EntityMention.objects.filter(entity=source).exclude(memory_id__in=already).update(entity=target)
    EntityMention.objects.filter(entity=source).delete()  # those memories mention the survivor already


def _drop_flags_about(project: Project, entity_id: int) -> None:
    for other in Entity.objects.filter(project=project, evidence__contains=[{"possibly_same_as": entity_id}]):
        other.evidence = [e for e in other.evidence if e.get("possibly_same_as") != entity_id]
        other.save(update_fields=["evidence"])


def entity_split(*, project: Project, actor: str, entity_id: int, alias: str, reason: str = "") -> Outcome:
    """Take a wrongly merged alias off an entity: it becomes its own entity, with the mentions written so."""
    with transaction.atomic():
        entity = _entity(project, entity_id)
        if alias not in entity.aliases:
            raise ValidationFailed(f"{alias!r} is not an alias of {entity.name!r}.",
                                   {"alias": [f"one of: {', '.join(entity.aliases) or 'no aliases'}"]})
        key = normalize_name(alias)
        if Entity.objects.filter(project=project, normalized_name=key).exists():
            raise CurationConflict(f"An entity called {alias!r} exists already.")
        before = entity_snapshot(entity)
        split = Entity.objects.create(project=project, name=alias, normalized_name=key, type=entity.type,
                                      evidence=[{"split_from": entity.pk}])
        EntityMention.objects.filter(entity=entity, surface__iexact=alias).update(entity=split)
        entity.aliases = [a for a in entity.aliases if a != alias]
        entity.evidence = [e for e in entity.evidence if e.get("alias") != alias]
        entity.save(update_fields=["aliases", "evidence"])
        changes = [_log(project, actor, Op.ENTITY_UPDATED, entity.pk, before, entity_snapshot(entity)),
                   _log(project, actor, Op.ENTITY_CREATED, split.pk, None, entity_snapshot(split, mentions=True))]
        return Outcome(act_record(project, None, actor, ActKind.ENTITY_SPLIT, entity, reason, changes), split)


def entity_flag_dismiss(*, project: Project, actor: str, entity_id: int, other_id: int, reason: str = "") -> Outcome:
    """A person says two entities the engine thought alike are different: the flag goes, on both sides."""
    with transaction.atomic():
        entity = _entity(project, entity_id)
        flagged = [e for e in entity.evidence if e.get("possibly_same_as") == other_id]
        if not flagged:
            raise ValidationFailed(f"{entity.name!r} carries no flag about entity {other_id}.",
                                   {"other_id": ["an entity its possibly_same_as flags name"]})
        before = entity_snapshot(entity)
        entity.evidence = [e for e in entity.evidence if e.get("possibly_same_as") != other_id] + [
            {"not_same_as": other_id, "by": actor}]
        entity.save(update_fields=["evidence"])
        change = _log(project, actor, Op.ENTITY_UPDATED, entity.pk, before, entity_snapshot(entity))
        return Outcome(act_record(project, None, actor, ActKind.ENTITY_FLAG, entity, reason, [change]), entity)


def entity_undo(project: Project, actor: str, act: CurationAct) -> tuple[Entity, list[GraphChange]]:
    """Put back an entity act (called by services.act_undo)."""
    changes = list(act.changes.order_by("id"))
    if act.kind == ActKind.ENTITY_MERGE:
        survivor_change, deleted_change = changes
        return _unmerge(project, actor, survivor_change.before, deleted_change.before)
    if act.kind == ActKind.ENTITY_SPLIT:
        updated, created = changes
        entity = _entity(project, updated.object_id)
        split = _entity(project, created.object_id)
        before = entity_snapshot(entity)
        EntityMention.objects.filter(entity=split).update(entity=entity)
        split_before = entity_snapshot(split)
        split.delete()
        _restore(entity, updated.before)
        return entity, [_log(project, actor, Op.ENTITY_UPDATED, entity.pk, before, entity_snapshot(entity)),
                        _log(project, actor, Op.ENTITY_DELETED, split_before["id"], split_before, None)]
    (change,) = changes
    entity = _entity(project, change.object_id)
    if entity_snapshot(entity) != change.after:
        raise CurationConflict(f"Entity {entity.pk} changed since this act: undo the later act first.")
    before = entity_snapshot(entity)
    if Entity.objects.filter(project=project, normalized_name=change.before["normalized_name"]).exclude(
            pk=entity.pk).exists():
        raise CurationConflict(f"Another entity is called {change.before['name']!r} now.")
    _restore(entity, change.before)
    return entity, [_log(project, actor, Op.ENTITY_UPDATED, entity.pk, before, entity_snapshot(entity))]


def _restore(entity: Entity, snapshot: dict[str, Any]) -> None:
    for name in ("name", "normalized_name", "type", "aliases", "evidence"):
        setattr(entity, name, snapshot[name])
    entity.save(update_fields=["name", "normalized_name", "type", "aliases", "evidence"])


def _unmerge(project: Project, actor: str, survivor_before: dict, duplicate: dict) -> tuple[Entity, list[GraphChange]]:
    survivor = _entity(project, survivor_before["id"])
    if Entity.objects.filter(pk=duplicate["id"]).exists() or Entity.objects.filter(
            project=project, normalized_name=duplicate["normalized_name"]).exists():
        raise CurationConflict(f"Entity {duplicate['name']!r} exists again: it cannot be split back out.")
    before = entity_snapshot(survivor)
    restored = Entity.objects.create(project=project, pk=duplicate["id"], name=duplicate["name"],
                                     normalized_name=duplicate["normalized_name"], type=duplicate["type"],
                                     aliases=duplicate["aliases"], evidence=duplicate["evidence"])
    for memory_id, surface in duplicate.get("mentions", []):
        EntityMention.objects.filter(entity=survivor, memory_id=memory_id, surface=surface).update(entity=restored)
        if not EntityMention.objects.filter(entity=restored, memory_id=memory_id).exists():
            EntityMention.objects.get_or_create(entity=restored, memory_id=memory_id, defaults={"surface": surface})
    _restore(survivor, survivor_before)
    return survivor, [_log(project, actor, Op.ENTITY_UPDATED, survivor.pk, before, entity_snapshot(survivor)),
                      _log(project, actor, Op.ENTITY_CREATED, restored.pk, None,
                           entity_snapshot(restored, mentions=True))]
