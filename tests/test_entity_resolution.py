"""Entity resolution: normalised name, then embedding similarity with lexical evidence; never a silent merge."""

from __future__ import annotations

import pytest

from memory.engine.entities import entity_resolve
from memory.engine.extraction.records import ExtractedEntity
from memory.models import Entity

pytestmark = pytest.mark.django_db


def found(name: str, type_: str = "place") -> ExtractedEntity:
    return ExtractedEntity(surface=name, name=name, normalized=" ".join(name.casefold().split()), type=type_)


def test_a_shorter_name_inside_a_similar_one_is_the_same_entity_with_evidence(project):
    hotel, created = entity_resolve(project_id=project.pk, found=found("Bund Garden Hotel"))
    assert created
    again, created = entity_resolve(project_id=project.pk, found=found("Bund Garden"))
    assert again.pk == hotel.pk and not created
    again.refresh_from_db()
    assert "Bund Garden" in again.aliases
    [evidence] = again.evidence
    assert evidence["alias"] == "Bund Garden" and evidence["similarity"] >= 0.8
    assert Entity.objects.filter(project=project).count() == 1


def test_chinese_names_resolve_by_characters(project):
    hotel, _ = entity_resolve(project_id=project.pk, found=found("上海外滩酒店"))
    same, created = entity_resolve(project_id=project.pk, found=found("外滩酒店"))
    assert same.pk == hotel.pk and not created


def test_similar_names_without_evidence_stay_apart_and_are_flagged(project):
    first, _ = entity_resolve(project_id=project.pk, found=found("Garden Hotel Bund Shanghai"))
    second, created = entity_resolve(project_id=project.pk, found=found("Bund Garden Hotel Pudong"))
    assert created and second.pk != first.pk  # "Pudong" is not in the first name: no merge
    [flag] = second.evidence
    assert flag["possibly_same_as"] == first.pk and flag["similarity"] >= 0.75


def test_other_types_and_unrelated_names_are_never_taken(project):
    city, _ = entity_resolve(project_id=project.pk, found=found("Bund Garden Hotel"))
    person, created = entity_resolve(project_id=project.pk, found=found("Bund Garden", "person"))
    assert created and person.pk != city.pk and person.evidence == []
    other, created = entity_resolve(project_id=project.pk, found=found("Peninsula Hotel"))
    assert created and other.evidence == []


def test_a_single_word_is_not_evidence(project):
    hotel, _ = entity_resolve(project_id=project.pk, found=found("Garden Hotel"))
    word, created = entity_resolve(project_id=project.pk, found=found("Garden"))
    assert created and word.pk != hotel.pk
