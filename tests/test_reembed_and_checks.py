"""Switching embedder needs no code change: a new space, `reembed`, and checks that say so."""

from __future__ import annotations

import io

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import override_settings

from memory.checks import embedding_space_check
from memory.engine.ingest import InteractionInput, interactions_accept
from memory.engine.recall import RecallQuery, memory_recall
from memory.models import EmbeddingSpace, MemoryEmbedding
from memory.providers.hashing import HashingEmbedder

pytestmark = pytest.mark.django_db(transaction=True)


class SmallHashing(HashingEmbedder):
    """Another 'model': a different space with another dimension."""

    dimensions = 64
    space_name = "hashing-64"


SMALL = {**settings.MEMORY, "EMBEDDER": "tests.test_reembed_and_checks.SmallHashing"}


def _ingest(session, texts):
    interactions_accept(session=session, items=[InteractionInput("user_input", t) for t in texts], actor="t")


def test_reembed_fills_the_new_space_and_recall_uses_it(project, agent_session):
    _ingest(agent_session, ["I am allergic to seafood", "The hotel near the Bund is sold out"])
    assert MemoryEmbedding.objects.filter(space__name="hashing-384").count() == 2
    with override_settings(MEMORY=SMALL):
        warnings = embedding_space_check(databases=["default"])
        assert [w.id for w in warnings] == ["memory.W001"]
        out = io.StringIO()
        call_command("reembed", stdout=out)
        assert "Stored 2 vectors in space hashing-64" in out.getvalue()
        assert EmbeddingSpace.objects.get(name="hashing-64").dimensions == 64
        assert embedding_space_check(databases=["default"]) == []
        result = memory_recall(project=project, query=RecallQuery(text="seafood allergy", k=1), actor="t")
        assert "seafood" in result.items[0].memory.content
        call_command("reembed", stdout=io.StringIO())  # idempotent: nothing left to embed
        assert MemoryEmbedding.objects.filter(space__name="hashing-64").count() == 2


def test_dimension_mismatch_is_an_error(project, agent_session):
    _ingest(agent_session, ["The budget is 5000 RMB for three days"])
    EmbeddingSpace.objects.filter(name="hashing-384").update(dimensions=768)
    errors = embedding_space_check(databases=["default"])
    assert [e.id for e in errors] == ["memory.E002"]
