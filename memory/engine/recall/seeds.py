"""Seeds (SPEC §4.1): vector kNN + full-text + entities named in the query, fused by RRF."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVector
from django.db.models import F, QuerySet, Value
from django.db.models.functions import Length, StrIndex

from ...models import Entity, EntityMention, Memory, Project
from ...providers.base import Vector
from ..extraction import segment
from ..vector_index import nearest
from .config import RecallConfig

TSQUERY_UNSAFE = re.compile(r"[^\w\u4e00-\u9fff]+")


@dataclass
class Scope:
    project: Project
    session_id: int | None
    statuses: tuple[str, ...]
    include_sensitive: bool

    def memories(self) -> QuerySet[Memory]:
        queryset = Memory.objects.filter(project=self.project, status__in=self.statuses)
        if self.session_id is not None:
            queryset = queryset.filter(session_id=self.session_id)
        return queryset if self.include_sensitive else queryset.filter(sensitive=False)


@dataclass
class Seed:
    memory_id: int
    activation: float
    ranks: dict[str, int] = field(default_factory=dict)  # source -> 1-based rank


def vector_ranking(scope: Scope, space, vector: Vector, limit: int) -> list[int]:
    found = nearest(space=space, vector=vector, k=limit, project_id=scope.project.pk, session_id=scope.session_id,
                    statuses=scope.statuses, exclude_sensitive=not scope.include_sensitive)
    return [n.memory_id for n in found]


def lexical_query(text: str) -> str | None:
    """An OR of the query's segmented terms, safe for to_tsquery (Chinese via jieba)."""
    terms = {TSQUERY_UNSAFE.sub("", t) for t in segment(text)}
    terms = {t for t in terms if t}
    return " | ".join(sorted(terms)) if terms else None


def lexical_ranking(scope: Scope, text: str, limit: int) -> list[int]:
    raw = lexical_query(text)
    if raw is None:
        return []
    query = SearchQuery(raw, search_type="raw", config="simple")
    vector = SearchVector("search_text", config="simple")
    rows = (scope.memories().annotate(sv=vector).filter(sv=query)
            .annotate(rank=SearchRank(vector, query)).order_by("-rank", "-importance", "id")
            .values_list("id", flat=True)[:limit])
    return list(rows)


MENTIONS_PER_ENTITY = 200  # newest mentions only: a very common entity must not scan the project


def entity_ranking(scope: Scope, text: str, limit: int) -> list[int]:
    """Memories mentioning entities named in the query (whole words); more of them first, then newest."""
    lowered = text.casefold()
    named = (Entity.objects.filter(project=scope.project)
             .annotate(at=StrIndex(Value(lowered), F("normalized_name")), size=Length("normalized_name"))
             .filter(at__gt=0, size__gte=2).values_list("id", "normalized_name")[:50])
    entity_ids = [eid for eid, name in named if _whole_word(name, lowered)]
    hits: dict[int, int] = defaultdict(int)
    for entity_id in entity_ids:
        recent = (EntityMention.objects.filter(entity_id=entity_id).order_by("-memory_id")
                  .values_list("memory_id", flat=True)[:MENTIONS_PER_ENTITY])
        for memory_id in recent:
            hits[memory_id] += 1
    if not hits:
        return []
    allowed = set(scope.memories().filter(pk__in=hits).values_list("id", flat=True))
    return sorted(allowed, key=lambda m: (-hits[m], -m))[:limit]


def _whole_word(name: str, text: str) -> bool:
    """ASCII names must match as words ("use" is not in "because"); CJK names have no word breaks."""
    if not name.isascii():
        return True
    return re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", text) is not None


def fuse(rankings: dict[str, list[int]], config: RecallConfig) -> list[Seed]:
    """Reciprocal-rank fusion; the best seed gets activation 1.0, others in proportion."""
    scores: dict[int, float] = defaultdict(float)
    ranks: dict[int, dict[str, int]] = defaultdict(dict)
    for source, ids in rankings.items():
        for position, memory_id in enumerate(ids, start=1):
            scores[memory_id] += 1.0 / (config.rrf_k + position)
            ranks[memory_id][source] = position
    ordered = sorted(scores, key=lambda m: (-scores[m], m))[: config.seed_count]
    if not ordered:
        return []
    top = scores[ordered[0]]
    return [Seed(m, round(scores[m] / top, 6), ranks[m]) for m in ordered]
