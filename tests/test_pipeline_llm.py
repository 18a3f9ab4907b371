"""The ingest pipeline with the OpenAI LLM judge, over real HTTP to a local OpenAI-compatible server.

Why: the LLM decides kind/importance and may drop an interaction, but it must never break
ingestion. When it fails (HTTP errors, bad JSON, timeouts) the offline rules decide instead, and
chit-chat is filtered before any paid request is made.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings
from django.test import override_settings
from rest_framework.test import APIClient

from memory.engine.ingest import InteractionInput, interactions_accept
from memory.engine.pipeline import interaction_process
from memory.engine.scoring import LLM_SYSTEM
from memory.models import AgentSession, Interaction, Memory

from .conftest import interactions_url
from .openai_server import Behaviour, FakeOpenAI, answer_json, answer_text, http_error, raw_json, slow

pytestmark = pytest.mark.django_db(transaction=True)

LLM_MODEL = "gpt-test-judge"
BUDGET = "My budget is 5000 RMB for the whole trip"  # the rules call this a constraint, importance ≥ 4


@pytest.fixture
def llm_configured(openai_server: FakeOpenAI) -> Iterator[FakeOpenAI]:
    """MEMORY with the OpenAI judge, a short timeout and one retry; providers are rebuilt on entry/exit."""
    memory = {**settings.MEMORY, "LLM": "openai", "LLM_MODEL": LLM_MODEL, "LLM_TIMEOUT": 0.5,
              "LLM_MAX_RETRIES": 1, "EMBEDDER": "hashing", "INGEST_MODE": "inline"}
    with override_settings(MEMORY=memory):
        yield openai_server


def send(api: APIClient, session: AgentSession, content: str, kind: str = "user_input") -> dict[str, Any]:
    """POST one interaction with ?wait=true and return its row from the answer."""
    response = api.post(interactions_url(session) + "?wait=true", {"kind": kind, "content": content}, format="json")
    assert response.status_code == 201, response.content
    [row] = response.json()["interactions"]
    return row


def test_llm_keep_decides_kind_and_importance(api: APIClient, agent_session: AgentSession,
                                              llm_configured: FakeOpenAI) -> None:
    """The LLM's scores win over the rules and are recorded as such (total 0.5·5 + 0.3·5 + 0.2·4 = 4.8)."""
    llm_configured.script_chat(answer_json(
        {"relevance": 5, "importance": 5, "novelty": 4, "kind": "constraint", "reason": "limits where to stay"}))

    row = send(api, agent_session, "We should only look at hotels near the Bund")

    assert row["status"] == "kept"
    [memory] = Memory.objects.filter(session=agent_session)
    assert row["memory_ids"] == [memory.pk]
    assert (memory.kind, memory.importance) == ("constraint", 5.0)
    interaction = Interaction.objects.get(pk=row["id"])
    assert interaction.scores["judge"] == "llm"
    assert (interaction.scores["relevance"], interaction.scores["importance"], interaction.scores["novelty"],
            interaction.scores["total"]) == (5, 5, 4, 4.8)
    assert interaction.reason == "limits where to stay"
    [request] = llm_configured.chat_requests
    assert request.body["model"] == LLM_MODEL
    system, user = request.body["messages"]
    assert system["content"].startswith(LLM_SYSTEM)
    assert agent_session.task in user["content"]
    assert "We should only look at hotels near the Bund" in user["content"]


def test_llm_drop_filters_the_interaction_with_its_reason(api: APIClient, agent_session: AgentSession,
                                                          llm_configured: FakeOpenAI) -> None:
    """A kept-by-rules interaction the LLM drops is filtered, stores no memory, and says why."""
    llm_configured.script_chat(answer_json({"relevance": 2, "importance": 1, "novelty": 1, "kind": "event",
                                            "reason": "restates the task without new information"}))

    row = send(api, agent_session, "Let me think about the Shanghai trip for a moment")

    assert row["status"] == "filtered"
    assert row["memory_ids"] == []
    assert row["reason"] == "restates the task without new information"
    interaction = Interaction.objects.get(pk=row["id"])
    assert interaction.scores["judge"] == "llm"
    assert not Memory.objects.filter(session=agent_session).exists()
    assert len(llm_configured.chat_requests) == 1


@pytest.mark.parametrize(("script", "error"), [
    ([http_error(500), http_error(500)], "InternalServerError"),
    ([answer_text("I think you should keep it."), answer_text("{keep: yes")], "JSONDecodeError"),
    ([answer_json({"relevance": 5, "importance": 5, "novelty": 5, "kind": "gossip", "reason": "x"})] * 2,
     "ValidationError"),
    ([slow(3.0), slow(3.0)], "APITimeoutError"),
    ([raw_json({"id": "chatcmpl-x", "object": "chat.completion", "choices": [{"index": 0}]})], "malformed response"),
], ids=["http-500", "malformed-json", "schema-violation", "timeout", "choice-without-message"])
def test_llm_failure_falls_back_to_the_rules(api: APIClient, agent_session: AgentSession, llm_configured: FakeOpenAI,
                                             script: list[Behaviour], error: str) -> None:
    """Whatever goes wrong with the LLM, the memory is stored by the offline rules and the reason says so."""
    llm_configured.script_chat(*script)

    started = time.monotonic()
    row = send(api, agent_session, BUDGET)
    assert time.monotonic() - started < 5.0

    assert row["status"] == "kept"
    [memory] = Memory.objects.filter(session=agent_session)
    assert memory.kind == "constraint" and memory.importance >= 4.0
    assert memory.embeddings.count() == 1
    interaction = Interaction.objects.get(pk=row["id"])
    assert interaction.error == ""
    assert interaction.scores["judge"] == "rules"
    assert error in interaction.scores["llm_error"]
    assert "LLM unavailable" in interaction.reason
    assert "LLM unavailable" in row["reason"]
    # every scripted answer was asked for: the client's one retry, or the extra attempt after bad JSON
    assert len(llm_configured.chat_requests) == len(script)
    assert llm_configured.pending() == 0


def test_chit_chat_never_reaches_the_llm(api: APIClient, agent_session: AgentSession,
                                         llm_configured: FakeOpenAI) -> None:
    """Chit-chat and too-short inputs are filtered by the rules before any LLM request is made."""
    for content in ("ok thanks", "好的", "see you"):
        row = send(api, agent_session, content)
        assert row["status"] == "filtered", content
        assert row["memory_ids"] == []

    assert llm_configured.chat_requests == []
    assert llm_configured.requests == []  # the hashing embedder makes no requests either
    assert not Memory.objects.filter(session=agent_session).exists()


def test_engine_path_judges_once_and_reprocessing_does_not_ask_again(agent_session: AgentSession,
                                                                     llm_configured: FakeOpenAI) -> None:
    """Through the engine API (no HTTP view): inline ingestion asks the LLM once per interaction,
    chit-chat in the same batch is never sent, and running the pipeline again is a no-op."""
    llm_configured.script_chat(answer_json(
        {"relevance": 4, "importance": 4, "novelty": 4, "kind": "preference", "reason": "a lasting taste"}))
    items = [InteractionInput("user_input", "ok thanks"),
             InteractionInput("user_input", "Window seats on the train make me happy")]

    accepted = interactions_accept(session=agent_session, items=items, actor="test")
    statuses = [Interaction.objects.get(pk=a.interaction.pk).status for a in accepted]
    assert statuses == ["filtered", "kept"]  # inline mode processed them on commit

    chit, taste = (interaction_process(interaction_id=a.interaction.pk) for a in accepted)
    assert chit.status == "filtered" and chit.scores["judge"] == "rules"
    assert taste.status == "kept" and taste.scores["judge"] == "llm"
    [memory] = Memory.objects.filter(session=agent_session)
    assert (memory.kind, memory.importance) == ("preference", 4.0)
    [request] = llm_configured.chat_requests
    assert "Window seats on the train" in request.body["messages"][1]["content"]
