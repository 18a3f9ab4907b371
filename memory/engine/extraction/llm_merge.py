"""Merging what the LLM judge saw (entities, intent, topics, sentiment) into the rules' dimensions.

The rules stay the base: dates, amounts, identifiers and attributes are theirs alone (exact and
checkable). The LLM adds entities the rules missed (never drops one), and its intent, topics and
sentiment replace the rules' guesses when it gives them. Only text that appears in the content is
taken as an entity, so an LLM cannot invent a name.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ...models import EntityType
from .classify import INTENTS
from .patterns import normalize_name
from .records import Dimensions, ExtractedEntity

SENTIMENTS = ("positive", "negative", "neutral")


def with_llm_dimensions(dims: Dimensions, seen: dict[str, Any] | None, content: str) -> Dimensions:
    if not seen:
        return dims
    entities = list(dims.entities)
    known = {e.normalized for e in entities}
    folded = content.casefold()
    for item in seen.get("entities") or []:
        name = str(item.get("name", "")).strip()
        key = normalize_name(name)
        if not key or key in known or name.casefold() not in folded:
            continue
        kind = item.get("type") if item.get("type") in EntityType.values else EntityType.OTHER
        entities.append(ExtractedEntity(surface=name, name=name, normalized=key, type=kind))
        known.add(key)
    topics = [str(t).strip().casefold() for t in seen.get("topics") or [] if str(t).strip()]
    intent = seen.get("intent") if seen.get("intent") in INTENTS else dims.intent
    sentiment = seen.get("sentiment") if seen.get("sentiment") in SENTIMENTS else dims.sentiment
    return replace(dims, entities=entities, intent=intent, topics=topics[:5] or dims.topics, sentiment=sentiment)
