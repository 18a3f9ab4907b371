"""Entity linking (SPEC §3.4): canonical entities per project, linked to memories by mentions.

Resolution is by normalised name, unique per project: the same name is always the same entity
(never an exact-name duplicate, whatever type a later extraction guesses). Different names are never merged silently;
merging on embedding evidence is a curation/maintenance step with its own audit trail.
"""

from __future__ import annotations

from django.db import IntegrityError, transaction

from ..models import Entity, EntityMention, Memory
from .extraction import ExtractedEntity


def entity_resolve(*, project_id: int, found: ExtractedEntity) -> tuple[Entity, bool]:
    """The project's entity for this name, created if new. Returns (entity, created)."""
    existing = Entity.objects.filter(project_id=project_id, normalized_name=found.normalized).order_by("id").first()
    if existing is not None:
        if found.name != existing.name and found.name not in existing.aliases:
            existing.aliases = [*existing.aliases, found.name]
            existing.save(update_fields=["aliases"])
        return existing, False
    try:
        with transaction.atomic():
            entity = Entity.objects.create(project_id=project_id, name=found.name,
                                           normalized_name=found.normalized, type=found.type)
    except IntegrityError:  # created concurrently by another worker: use theirs
        return Entity.objects.get(project_id=project_id, normalized_name=found.normalized), False
    return entity, True


def mentions_link(*, memory: Memory, found: list[ExtractedEntity]) -> tuple[list[Entity], int]:
    """Link the memory to its entities; returns them and how many were new to the project."""
    entities: dict[int, Entity] = {}
    surfaces: dict[int, str] = {}
    created = 0
    for item in found:
        entity, is_new = entity_resolve(project_id=memory.project_id, found=item)
        created += is_new
        if entity.pk not in entities:
            entities[entity.pk] = entity
            surfaces[entity.pk] = item.surface[:300]
    EntityMention.objects.bulk_create(
        [EntityMention(memory=memory, entity=entity, surface=surfaces[pk]) for pk, entity in entities.items()],
        ignore_conflicts=True,  # an existing mention of the same entity stays as it is
    )
    return list(entities.values()), created


def known_entity_count(*, project_id: int, found: list[ExtractedEntity]) -> int:
    names = {f.normalized for f in found}
    return Entity.objects.filter(project_id=project_id, normalized_name__in=names).values("normalized_name") \
        .distinct().count()
