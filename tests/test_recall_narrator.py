"""The optional LLM narrator, over real HTTP to the local OpenAI-speaking server.

Why: a narrative is a convenience on top of the rules' context. It must never be asked for
without the request wanting it, never see a sensitive memory, and never break a recall.
"""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.conf import settings
from django.test import override_settings
from django.utils import timezone

from memory.engine.ingest import InteractionInput, interactions_accept
from memory.engine.recall import RecallQuery, memory_recall
from memory.models import Memory, RecallTrace

from .openai_server import FakeOpenAI, answer_json, answer_text

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "Passport number of the traveller is X1234567 for the Lisbon hotel check-in"


@pytest.fixture
def memories(agent_session) -> list[Memory]:
    start = timezone.now() - timedelta(hours=1)
    texts = ["The Lisbon hotel booking failed because every room is sold out on 12 October",
             "We decided to move the Lisbon trip to 19 October after the hotel was sold out", SECRET]
    items = [InteractionInput("user_input", t, occurred_at=start + timedelta(minutes=i)) for i, t in enumerate(texts)]
    interactions_accept(session=agent_session, items=items, actor="test")  # offline rules: no LLM yet
    Memory.objects.filter(content=SECRET).update(sensitive=True)
    return list(Memory.objects.filter(session=agent_session).order_by("occurred_at"))


@pytest.fixture
def narrator(openai_server: FakeOpenAI):
    memory = {**settings.MEMORY, "LLM": "openai", "LLM_MODEL": "gpt-test-narrator", "LLM_TIMEOUT": 0.5,
              "LLM_MAX_RETRIES": 0}
    with override_settings(MEMORY=memory):
        yield openai_server


def _recall(project, **params):
    query = RecallQuery("why did the Lisbon hotel booking fail", k=5, include_sensitive=True, preset="ripple",
                        params=params)
    return memory_recall(project=project, query=query, actor="test")


def test_narrative_is_the_llms_account_and_is_stored(project, memories, narrator):
    account = "The hotel was sold out on 12 October, so the trip moved to 19 October."
    narrator.script_chat(answer_json({"narrative": account}))
    result = _recall(project, narrate=True)
    assert result.narrative == account
    assert RecallTrace.objects.get(pk=result.trace.pk).narrative == account
    assert "narrate_ms" in result.trace.timings
    assert SECRET in result.context  # the caller may see it...
    [request] = narrator.chat_requests
    assert "X1234567" not in json.dumps(request.body)  # ...but the LLM never does
    assert "sold out" in json.dumps(request.body)


def test_no_narrative_unless_asked(project, memories, narrator):
    result = _recall(project)
    assert result.narrative == "" and narrator.chat_requests == []


def test_a_bad_answer_leaves_the_rules_context(project, memories, narrator):
    narrator.script_chat(answer_text("The hotel was full."), answer_text("still not JSON"))
    result = _recall(project, narrate=True)
    assert result.narrative == ""
    assert "sold out" in result.context and result.items


def test_without_an_llm_narrate_is_ignored(project, memories):
    result = _recall(project, narrate=True)
    assert result.narrative == "" and result.context


def test_the_api_returns_the_narrative(project, memories, narrator, api):
    narrator.script_chat(answer_json({"narrative": "Sold out on the 12th; moved to the 19th."}))
    response = api.post(f"/api/projects/{project.slug}/recall/",
                        {"query": "why did the Lisbon hotel booking fail", "params": {"narrate": True}}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["narrative"] == "Sold out on the 12th; moved to the 19th."
    bad = api.post(f"/api/projects/{project.slug}/recall/", {"query": "x", "params": {"narrate": "loud"}},
                   format="json")
    assert bad.status_code == 400
