"""Every enum value the pages show has a display name, and the Chinese page shows it in Chinese."""

from __future__ import annotations

import pytest
from django.utils import translation

from memory.engine import stages
from memory.engine.extraction import entities as entity_extraction
from memory.models import (
    EdgeOrigin,
    EdgeStatus,
    InteractionKind,
    InteractionStatus,
    MemoryKind,
    MemoryStatus,
    Relation,
)
from memory.web import labels

ENTITY_TYPES = {entity_extraction.PERSON, entity_extraction.PLACE, entity_extraction.ORGANIZATION,
                entity_extraction.PRODUCT, entity_extraction.FILE, entity_extraction.CONCEPT,
                entity_extraction.OTHER}
COVERED = {
    # A forgotten memory is scrubbed and never shown, so it needs no display name.
    "kinds": {k.value for k in MemoryKind}, "statuses": {s.value for s in MemoryStatus} - {MemoryStatus.FORGOTTEN},
    "relations": {r.value for r in Relation}, "origins": {o.value for o in EdgeOrigin},
    "edgeStatuses": {s.value for s in EdgeStatus}, "interactionKinds": {k.value for k in InteractionKind},
    "interactionStatuses": {s.value for s in InteractionStatus}, "entityTypes": ENTITY_TYPES,
    "sentiments": {"positive", "negative", "neutral"},  # extraction/classify.py's sentiment()
    "stages": set(stages.STAGES),  # why a kept interaction's stage failed (the session page's Failed view)
}


@pytest.mark.parametrize("name", sorted(COVERED))
def test_each_value_has_a_label(name):
    assert {c["value"] for c in labels.all_choices()[name]} == COVERED[name]


@pytest.mark.parametrize("name", sorted(COVERED))
def test_the_chinese_labels_are_chinese(name):
    with translation.override("zh-hans"):
        untranslated = [c["value"] for c in labels.all_choices()[name] if not any(
            "\u4e00" <= ch <= "\u9fff" for ch in c["label"]) and c["label"] != "LLM"]
    assert not untranslated, f"{name}: no Chinese label for {untranslated}"
