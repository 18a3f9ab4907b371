"""Reading the store: search under a namespace prefix (by recall when there is a query) and the namespaces.

A search with a query is the engine's recall, mapped back to the items whose *current* value made the
recalled memories, with the recall's score. Its scope is the namespace's session when the prefix holds
exactly one namespace; otherwise the project, asking for more memories than items wanted, since memories
of other sessions or of values no item holds any more take places in the ranking (the recall engine
scopes to one session or the whole project only). An item whose text the selective filter dropped
(chit-chat, too short, a repeat) has no memory, so only a search without a query lists it.

A search without a query lists the items under the prefix, most recently updated first. Both apply the
value filter in SQL (paths.value_filter). A reader who may not see sensitive content (memory/access.py)
gets no item whose memory is sensitive when it filters, since a match would tell what the masked value holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Exists, OuterRef, QuerySet

from ...access import Access
from ...conf import memory_settings
from ...errors import ValidationFailed
from ...models import Memory, StoreItem
from ..recall import RecallQuery, memory_recall
from ..recall.config import recall_defaults
from .items import namespace_check
from .paths import value_filter

MAX_LIMIT = 1000
MAX_OFFSET = 100_000
# Project-wide recall: memories asked for per item wanted (other sessions' memories share the ranking).
PROJECT_RECALL_FACTOR = 3
WILDCARD = "*"


@dataclass(frozen=True)
class Found:
    item: StoreItem
    score: float | None = None
    recall_id: int | None = None  # the recall a search by query ran: a put after it may say it used it


def items_under(project_id: int, prefix: list[str]) -> QuerySet[StoreItem]:
    items = StoreItem.objects.filter(project_id=project_id)
    return items.filter(**{f"namespace__0_{len(prefix)}": prefix}) if prefix else items


def items_search(access: Access, prefix: list[str], *, query: str | None = None,
                 conditions: dict[str, Any] | None = None, limit: int = 10, offset: int = 0) -> list[Found]:
    namespace_check(prefix, allow_empty=True)
    _page_check(limit, offset)
    items = items_under(access.project.pk, prefix).filter(value_filter(conditions))
    if conditions and not access.may_see_sensitive:
        items = items.exclude(Exists(Memory.sources.through.objects.filter(
            interaction_id=OuterRef("interaction_id"), memory__sensitive=True)))
    if not query:
        return [Found(item) for item in items.order_by("-updated_at", "-id")[offset:offset + limit]]
    return _recalled(access, items, query, limit, offset)


def _page_check(limit: int, offset: int) -> None:
    if not 1 <= limit <= MAX_LIMIT or not 0 <= offset <= MAX_OFFSET:
        raise ValidationFailed(f"limit is 1 to {MAX_LIMIT}, offset 0 to {MAX_OFFSET}",
                               {"limit": [f"1 to {MAX_LIMIT}"], "offset": [f"0 to {MAX_OFFSET}"]})


def _recalled(access: Access, items: QuerySet[StoreItem], query: str, limit: int, offset: int) -> list[Found]:
    wanted = offset + limit
    if wanted > memory_settings.MAX_RECALL_K:
        most = memory_settings.MAX_RECALL_K
        raise ValidationFailed(f"a search with a query returns at most {most} items (offset + limit)",
                               {"limit": [f"offset + limit at most {most}"]})
    sessions = list(items.values_list("session_id", flat=True).distinct()[:2])
    if not sessions:
        return []
    session = items.first().session if len(sessions) == 1 else None
    k = wanted if session is not None else min(memory_settings.MAX_RECALL_K, wanted * PROJECT_RECALL_FACTOR)
    preset = recall_defaults(access.project)[1]
    result = memory_recall(project=access.project, actor=access.actor, query=RecallQuery(
        text=query, k=k, session=session, include_sensitive=access.may_see_sensitive, preset=preset,
        counts_as_access=access.is_agent))
    score_of: dict[int, float] = {}  # interaction id -> the best score of a memory it backs
    for recalled in result.items:
        for source in recalled.memory.provenance:
            score_of[source.pk] = max(score_of.get(source.pk, 0.0), recalled.score)
    found = [Found(item, score_of[item.interaction_id], result.trace.pk)
             for item in items.filter(interaction_id__in=list(score_of)).select_related("interaction")]
    found.sort(key=lambda f: (-(f.score or 0.0), -f.item.updated_at.timestamp(), -f.item.pk))
    return found[offset:offset + limit]


def namespaces_list(project_id: int, *, prefix: list[str] | None = None, suffix: list[str] | None = None,
                    max_depth: int | None = None, limit: int = 100, offset: int = 0) -> list[list[str]]:
    """The namespaces holding items, matching `prefix` and `suffix` (`*` matches any one label), cut to
    `max_depth` labels, sorted, one page. The literal start of `prefix` narrows the rows in SQL."""
    prefix, suffix = _pattern(prefix or []), _pattern(suffix or [])
    _page_check(limit, offset)
    if max_depth is not None and not 1 <= max_depth <= 1000:
        raise ValidationFailed("max_depth is at least 1", {"max_depth": ["at least 1"]})
    literal = []
    for label in prefix:
        if label == WILDCARD:
            break
        literal.append(label)
    found = items_under(project_id, literal).values_list("namespace", flat=True).distinct()
    matching = {tuple(ns[:max_depth] if max_depth else ns) for ns in found
                if _matches(prefix, ns) and _matches(suffix[::-1], ns[::-1])}
    return [list(ns) for ns in sorted(matching)[offset:offset + limit]]


def _pattern(labels: list[str]) -> list[str]:
    return namespace_check(labels, allow_empty=True)


def _matches(pattern: list[str], namespace: list[str]) -> bool:
    return len(namespace) >= len(pattern) and all(p in (WILDCARD, n) for p, n in zip(pattern, namespace, strict=False))
