"""Entity curation: rename, merge two, split an alias off a wrong merge, and settle the engine's
`possibly_same_as` flags. Same contract as curation/services.py: one transaction, the change log,
one CurationAct, undoable from what the act recorded."""

from __future__ import annotations

from django.db import transaction

from memory.engine.edits import entities as edits
from memory.engine.extraction.patterns import normalize_name
from memory.errors import NotFoundError, ValidationFailed
from memory.models import Entity, GraphChange, Project

from .models import ActKind, CurationAct
from .services import CurationConflict, Outcome, act_record

NAME_MAX = 300


def _entity(project: Project, entity_id: int) -> Entity:
    entity = Entity.objects.select_for_update().filter(project=project, pk=entity_id).first()
    if entity is None:
        raise NotFoundError(f"No entity {entity_id} in project {project.slug!r}.")
    return entity


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
        change = edits.entity_rename(project, entity, actor=actor, name=name, key=key)
        return Outcome(act_record(project, None, actor, ActKind.ENTITY_RENAME, entity, reason, [change]), entity)


def entity_merge(*, project: Project, actor: str, survivor_id: int, duplicate_id: int, reason: str = "") -> Outcome:
    """The duplicate's mentions, name and aliases go to the survivor; the duplicate is deleted."""
    if survivor_id == duplicate_id:
        raise ValidationFailed("An entity is not merged into itself.", {"duplicate_id": ["another entity"]})
    with transaction.atomic():
        survivor, duplicate = _entity(project, survivor_id), _entity(project, duplicate_id)
        changes = edits.entity_merge(project, survivor, duplicate, actor=actor)
        return Outcome(act_record(project, None, actor, ActKind.ENTITY_MERGE, survivor, reason, changes), survivor)


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
        split, changes = edits.entity_split(project, entity, actor=actor, alias=alias, key=key)
        return Outcome(act_record(project, None, actor, ActKind.ENTITY_SPLIT, entity, reason, changes), split)


def entity_flag_dismiss(*, project: Project, actor: str, entity_id: int, other_id: int, reason: str = "") -> Outcome:
    """A person says two entities the engine thought alike are different: the flag goes, on both sides."""
    with transaction.atomic():
        entity = _entity(project, entity_id)
        flagged = [e for e in entity.evidence if e.get("possibly_same_as") == other_id]
        if not flagged:
            raise ValidationFailed(f"{entity.name!r} carries no flag about entity {other_id}.",
                                   {"other_id": ["an entity its possibly_same_as flags name"]})
        change = edits.entity_flag_dismiss(project, entity, actor=actor, other_id=other_id)
        return Outcome(act_record(project, None, actor, ActKind.ENTITY_FLAG, entity, reason, [change]), entity)


def entity_undo(project: Project, actor: str, act: CurationAct) -> tuple[Entity, list[GraphChange]]:
    """Put back an entity act (called by services.act_undo)."""
    changes = list(act.changes.order_by("id"))
    if act.kind == ActKind.ENTITY_MERGE:
        survivor_change, deleted_change = changes
        survivor = _entity(project, survivor_change.before["id"])
        return survivor, edits.entity_unmerge(project, survivor, actor=actor, survivor_before=survivor_change.before,
                                              duplicate=deleted_change.before)
    if act.kind == ActKind.ENTITY_SPLIT:
        updated, created = changes
        entity, split = _entity(project, updated.object_id), _entity(project, created.object_id)
        return entity, edits.entity_unsplit(project, entity, split, actor=actor, before=updated.before)
    (change,) = changes
    entity = _entity(project, change.object_id)
    if edits.entity_snapshot(entity) != change.after:
        raise CurationConflict(f"Entity {entity.pk} changed since this act: undo the later act first.")
    return entity, [edits.entity_restore(project, entity, actor=actor, before=change.before)]
