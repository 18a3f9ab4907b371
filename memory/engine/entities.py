"""Entity linking (SPEC §3.4): canonical entities per project, linked to memories by mentions.

Resolution is by normalised name first, unique per project: the same name is always the same
entity (never an exact-name duplicate, whatever type a later extraction guesses). A new name is
then compared with the project's entities of the same type that share a word with it, by
embedding similarity, and taken as one of them only with evidence on both sides: similar enough,
and every word of the shorter name in the longer one ("Bund Garden" → "Bund Garden Hotel",
"Wei Li" → "Li Wei", 外滩酒店 → 上海外滩酒店). The new name becomes an alias and the evidence is
kept on the entity. A similar name without that lexical evidence ("Acme Corp" / "Acme
Corporation") stays its own entity, with the possible match recorded for a curator: never a
silent merge.
"""

from __future__ import annotations

import re

import numpy as np
from django.db import IntegrityError, transaction
from django.db.models import Q

from ..models import Entity, EntityMention, Memory
from ..providers import get_embedder
from .extraction import ExtractedEntity

SAME_SIMILARITY = 0.8  # with the words of one name inside the other: the same entity, kept as an alias
POSSIBLE_SIMILARITY = 0.75  # without that evidence: recorded as a possible duplicate only
CANDIDATES = 20
WORD = re.compile(r"[\w\u4e00-\u9fff]+")
CJK = re.compile(r"[\u4e00-\u9fff]")


def entities_named(*, project_id: int, found: list[ExtractedEntity]) -> dict[str, Entity]:
    """The project's entities for these names, by normalised name: one query for a whole memory."""
    names = {f.normalized for f in found}
    if not names:
        return {}
    return {e.normalized_name: e for e in Entity.objects.filter(project_id=project_id, normalized_name__in=names)}


def entity_resolve(*, project_id: int, found: ExtractedEntity, known: dict[str, Entity] | None = None
                   ) -> tuple[Entity, bool]:
    """The project's entity for this name, created if new. Returns (entity, created).

    `known` (from `entities_named`) answers the exact-name lookup without a query.
    """
    if known is not None:
        existing = known.get(found.normalized)
    else:
        existing = Entity.objects.filter(project_id=project_id, normalized_name=found.normalized).first()
    if existing is not None:
        if found.name != existing.name and found.name not in existing.aliases:
            existing.aliases = [*existing.aliases, found.name]
            existing.save(update_fields=["aliases"])
        return existing, False
    similar = _similar_entities(project_id, found)
    same = next(((e, sim) for e, sim in similar if sim >= SAME_SIMILARITY and _words_contained(found, e)), None)
    if same is not None:
        entity, similarity = same
        if found.name not in entity.aliases:
            entity.aliases = [*entity.aliases, found.name]
        entity.evidence = [*entity.evidence, {"alias": found.name, "similarity": round(similarity, 3),
                                              "rule": "similar, and one name's words are in the other"}]
        entity.save(update_fields=["aliases", "evidence"])
        return entity, False
    evidence = [{"possibly_same_as": e.pk, "name": e.name, "similarity": round(sim, 3)}
                for e, sim in similar if sim >= POSSIBLE_SIMILARITY]
    try:
        with transaction.atomic():
            entity = Entity.objects.create(project_id=project_id, name=found.name, evidence=evidence,
                                           normalized_name=found.normalized, type=found.type)
    except IntegrityError:  # created concurrently by another worker: use theirs
        return Entity.objects.get(project_id=project_id, normalized_name=found.normalized), False
    return entity, True


def _words(name: str) -> set[str]:
    """Words of a name; CJK runs as single characters, so containment works without word breaks."""
    words = set()
    for run in WORD.findall(name.casefold()):
        words |= set(run) if CJK.search(run) else {run}
    return words


def _words_contained(found: ExtractedEntity, entity: Entity) -> bool:
    """Lexical evidence: every word of the shorter name is in the longer one, and the shorter one is
    more than a single word (a CJK name: more than two characters)."""
    mine, theirs = _words(found.name), _words(entity.name)
    shorter, longer = sorted((mine, theirs), key=len)
    cjk = any(CJK.search(w) for w in shorter)
    return len(shorter) >= (3 if cjk else 2) and shorter <= longer


def _similar_entities(project_id: int, found: ExtractedEntity) -> list[tuple[Entity, float]]:
    """Entities of the same type sharing a word with the name, most similar first (name embeddings)."""
    words = [w for w in WORD.findall(found.normalized) if len(w) >= 2][:6]
    if not words:
        return []
    shares = Q()
    for word in words:
        shares |= Q(normalized_name__contains=word)
    rows = list(Entity.objects.filter(project_id=project_id, type=found.type).filter(shares).order_by("id")
                [:CANDIDATES])
    if not rows:
        return []
    vectors = np.asarray(get_embedder().embed([found.name, *[e.name for e in rows]]))
    similarity = vectors[1:] @ vectors[0]
    return sorted(zip(rows, (float(s) for s in similarity), strict=True), key=lambda pair: -pair[1])


def mentions_link(*, memory: Memory, found: list[ExtractedEntity], known: dict[str, Entity] | None = None
                  ) -> tuple[list[Entity], int]:
    """Link the memory to its entities; returns them and how many were new to the project.

    `known` is `entities_named` for these names, when the caller already has it.
    """
    entities: dict[int, Entity] = {}
    surfaces: dict[int, str] = {}
    created = 0
    known = dict(known) if known is not None else entities_named(project_id=memory.project_id, found=found)
    for item in found:
        entity, is_new = entity_resolve(project_id=memory.project_id, found=item, known=known)
        known[item.normalized] = entity
        created += is_new
        if entity.pk not in entities:
            entities[entity.pk] = entity
            surfaces[entity.pk] = item.surface[:300]
    EntityMention.objects.bulk_create(
        [EntityMention(memory=memory, entity=entity, surface=surfaces[pk]) for pk, entity in entities.items()],
        ignore_conflicts=True,  # an existing mention of the same entity stays as it is
    )
    return list(entities.values()), created
