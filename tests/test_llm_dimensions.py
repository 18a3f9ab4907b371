"""Dimensions with an LLM: the judge's entities, intent, topics and sentiment merged into the rules' own.

Why: the rules miss names they have no pattern for; the LLM may invent. Only names found in the text
are taken, labels outside our lists are ignored, and a failed request leaves the rules' dimensions.
"""

from __future__ import annotations

from rest_framework.test import APIClient

from memory.models import AgentSession, Entity, Interaction, Memory

from .openai_server import FakeOpenAI, answer_json, http_error
from .test_pipeline_llm import llm_configured, send  # noqa: F401  (fixture)

CONTENT = "Book the table at Casa Lola for Friday, my colleague Joana is vegetarian"


def judge(**dims) -> dict:
    return {"relevance": 5, "importance": 4, "novelty": 4, "kind": "fact", "reason": "a booking detail", **dims}


def test_llm_entities_and_labels_are_merged(api: APIClient, agent_session: AgentSession,
                                            llm_configured: FakeOpenAI) -> None:  # noqa: F811
    llm_configured.script_chat(answer_json(judge(
        entities=[{"name": "Casa Lola", "type": "organization"}, {"name": "Joana", "type": "person"},
                  {"name": "Lisbon Marriott", "type": "place"}],  # not in the text: never taken
        intent="request", topics=["Dinner", "dietary needs"], sentiment="neutral")))
    row = send(api, agent_session, CONTENT)
    assert row["status"] == "kept"
    memory = Memory.objects.get(pk=row["memory_ids"][0])
    names = {e["name"] for e in memory.dimensions["entities"]}
    assert {"Casa Lola", "Joana"} <= names and "Lisbon Marriott" not in names
    assert memory.dimensions["intent"] == "request"
    assert memory.dimensions["topics"] == ["dinner", "dietary needs"]
    assert Entity.objects.filter(project=agent_session.project, normalized_name="casa lola").exists()
    assert not Entity.objects.filter(normalized_name="lisbon marriott").exists()


def test_unknown_labels_are_ignored_but_the_scores_kept(api: APIClient, agent_session: AgentSession,
                                                        llm_configured: FakeOpenAI) -> None:  # noqa: F811
    llm_configured.script_chat(answer_json(judge(intent="gossip", sentiment="ecstatic",
                                                 entities=[{"name": "vegetarian", "type": "alien"}])))
    row = send(api, agent_session, CONTENT)
    memory = Memory.objects.get(pk=row["memory_ids"][0])
    assert Interaction.objects.get(pk=row["id"]).scores["judge"] == "llm" and memory.importance == 4
    assert memory.dimensions["intent"] != "gossip" and memory.dimensions["sentiment"] != "ecstatic"
    taken = next(e for e in memory.dimensions["entities"] if e["name"] == "vegetarian")  # the rules miss it
    assert taken["type"] == "other"


def test_a_failed_request_leaves_the_rules_dimensions(api: APIClient, agent_session: AgentSession,
                                                      llm_configured: FakeOpenAI) -> None:  # noqa: F811
    llm_configured.script_chat(http_error(500), http_error(500))
    row = send(api, agent_session, CONTENT)
    memory = Memory.objects.get(pk=row["memory_ids"][0])
    assert Interaction.objects.get(pk=row["id"]).scores["judge"] == "rules"
    assert memory.dimensions["intent"]  # the rules' intent is there
