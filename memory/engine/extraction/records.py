"""The extractor's public records: frozen, typed, JSON-serialisable."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class ExtractedEntity:
    surface: str  # as written in the text
    name: str  # display form, e.g. "Bund Garden Hotel", "小明", "reports/views.py"
    normalized: str  # de-duplication key: NFKC, casefolded, whitespace collapsed, punctuation trimmed
    type: str  # a memory.models.EntityType value


@dataclass(frozen=True)
class AttributeValue:
    entity: str  # normalised entity name, or "user" for the user's own attribute
    attribute: str  # canonical key, the same in English and Chinese (see attributes.ATTRIBUTES)
    value: str  # normalised value


@dataclass(frozen=True)
class Dimensions:
    language: str
    entities: list[ExtractedEntity]
    intent: str
    topics: list[str]
    keywords: list[str]
    sentiment: str
    subjectivity: str
    occurred_at: datetime | None
    valid_until: datetime | None
    dates: list[str]
    times: list[str]
    amounts: list[str]
    numbers: list[str]
    urls: list[str]
    paths: list[str]
    identifiers: list[str]
    attributes: list[AttributeValue]
    # The dates the text names ("the 28th of March", "5月2号"), not those resolved from "tomorrow" or
    # "next Tuesday": only a named date can be the value a later change replaces.
    stated_dates: list[str] = field(default_factory=list)
    # Names only if the project knows them already ("Dale" opening a sentence): not stored as such; the
    # pipeline moves the known ones into `entities`.
    tentative_entities: list[ExtractedEntity] = field(default_factory=list)

    @classmethod
    def empty(cls) -> Dimensions:
        """No dimensions: what a memory holds while extraction failed on it (stored, to be retried)."""
        return cls(language="", entities=[], intent="", topics=[], keywords=[], sentiment="", subjectivity="",
                   occurred_at=None, valid_until=None, dates=[], times=[], amounts=[], numbers=[], urls=[], paths=[],
                   identifiers=[], attributes=[])

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("tentative_entities")
        data["occurred_at"] = self.occurred_at.isoformat() if self.occurred_at else None
        data["valid_until"] = self.valid_until.isoformat() if self.valid_until else None
        return data
