"""Supersede with an LLM configured, over real HTTP to a local OpenAI-compatible server.

Why: the rules only see a change that is announced and tied to the old value by words; "We've agreed
£231,500" replaces an accepted offer of £238,000 without either. The LLM names what a memory replaces;
a weak or out-of-range answer retires nothing, a failed request leaves the rules' decisions, and a
question is never shown to it.
"""

from __future__ import annotations

from rest_framework.test import APIClient

from memory.engine.supersede_llm import SYSTEM
from memory.models import AgentSession, Edge, EdgeOrigin, Memory, Relation

from .openai_server import FakeOpenAI, answer_json, http_error
from .test_pipeline_llm import llm_configured, send  # noqa: F401  (fixture)

OFFER = "Felix: They accepted my offer! The little terrace on Damgate Street, £238,000."
AGREED = "Felix: The seller accepted a reduction. We've agreed £231,500."


def keep(kind: str = "fact") -> dict:
    return {"relevance": 5, "importance": 4, "novelty": 4, "kind": kind, "reason": "a detail of the purchase"}


def no_links() -> dict:
    return {"links": []}


def test_the_llm_names_the_earlier_value_a_memory_replaces(api: APIClient, agent_session: AgentSession,
                                                           llm_configured: FakeOpenAI) -> None:  # noqa: F811
    llm_configured.script_chat(answer_json(keep()))  # the offer: nothing earlier, so no other request
    send(api, agent_session, OFFER)
    assert len(llm_configured.chat_requests) == 1
    llm_configured.script_chat(answer_json(keep()), answer_json(no_links()), answer_json(
        {"replaced": [{"candidate": 0, "confidence": 0.9, "rationale": "the agreed price replaces the offer"}]}))

    row = send(api, agent_session, AGREED)

    assert row["status"] == "kept" and llm_configured.pending() == 0
    offer, agreed = Memory.objects.get(content=OFFER), Memory.objects.get(content=AGREED)
    assert offer.status == "superseded" and agreed.status == "active"
    edge = Edge.objects.get(source=offer, target=agreed, relation=Relation.SUPERSEDES)
    assert (edge.origin, edge.confidence) == (EdgeOrigin.LLM, 0.9)
    assert edge.rationale == "LLM: the agreed price replaces the offer"
    system, user = llm_configured.chat_requests[-1].body["messages"]
    assert system["content"].startswith(SYSTEM)
    assert AGREED in user["content"] and f"[0] ({offer.occurred_at.date().isoformat()}) {OFFER}" in user["content"]


def test_a_weak_or_unknown_answer_retires_nothing(api: APIClient, agent_session: AgentSession,
                                                  llm_configured: FakeOpenAI) -> None:  # noqa: F811
    llm_configured.script_chat(answer_json(keep()))
    send(api, agent_session, OFFER)
    llm_configured.script_chat(answer_json(keep()), answer_json(no_links()), answer_json({"replaced": [
        {"candidate": 0, "confidence": 0.5, "rationale": "perhaps the same house"},
        {"candidate": 7, "confidence": 0.95, "rationale": "no such candidate"}]}))

    send(api, agent_session, AGREED)

    assert llm_configured.pending() == 0
    assert Memory.objects.get(content=OFFER).status == "active"
    assert not Edge.objects.filter(relation=Relation.SUPERSEDES).exists()


def test_a_failed_judgement_leaves_the_rules_decision(api: APIClient, agent_session: AgentSession,
                                                      llm_configured: FakeOpenAI) -> None:  # noqa: F811
    llm_configured.script_chat(answer_json(keep()))
    send(api, agent_session, "The smoke test runs 40 checks against the staging database")
    llm_configured.script_chat(answer_json(keep()), answer_json(no_links()))
    send(api, agent_session, "The staging database for the smoke test is on port 5432 of the db host")
    # The change: the rules replace the port; the LLM, asked about the 40 checks, fails twice (one retry).
    llm_configured.script_chat(answer_json(keep()), answer_json(no_links()), http_error(500), http_error(500))

    row = send(api, agent_session, "Correction: the staging database for the smoke test moved to port 6432")

    assert row["status"] == "kept" and llm_configured.pending() == 0
    port = Memory.objects.get(content__contains="5432")
    assert port.status == "superseded"
    (edge,) = Edge.objects.filter(relation=Relation.SUPERSEDES)
    assert edge.source_id == port.pk and edge.origin == EdgeOrigin.RULE
    assert Memory.objects.get(content__contains="40 checks").status == "active"
    assert "40 checks" in llm_configured.chat_requests[-1].body["messages"][1]["content"]
    assert "5432" not in llm_configured.chat_requests[-1].body["messages"][1]["content"], "replaced: not asked"


def test_a_question_is_never_shown_to_the_judge(api: APIClient, agent_session: AgentSession,
                                                llm_configured: FakeOpenAI) -> None:  # noqa: F811
    llm_configured.script_chat(answer_json(keep()))
    send(api, agent_session, OFFER)
    llm_configured.script_chat(answer_json(keep()), answer_json(no_links()))

    send(api, agent_session, "Felix: so is it still £238,000 or did they come down to £231,500?")

    assert llm_configured.pending() == 0 and len(llm_configured.chat_requests) == 3, "no supersede request"
    assert Memory.objects.get(content=OFFER).status == "active"
