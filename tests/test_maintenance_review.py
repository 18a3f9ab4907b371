"""Edge review by a stronger model, over real HTTP to the local OpenAI-speaking server."""

from __future__ import annotations

from collections.abc import Iterator
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.test import override_settings

from memory.engine.maintenance.review import NEEDS_LLM, REVIEW_SYSTEM, review_run
from memory.errors import ProviderError
from memory.models import Edge, EdgeOrigin, EdgeStatus, GraphChange, Relation

from .openai_server import FakeOpenAI, answer_json, http_error
from .test_maintenance_support import db_state, link, remember

pytestmark = pytest.mark.django_db

SECRET = "The traveller's passport number is E1234567"


@pytest.fixture
def edges(agent_session):
    s = agent_session
    p = [remember(s, text) for text in (
        "The user wants a hotel near the Bund for three nights",
        "Searched hotels near the Bund for 12 to 15 October",
        "The riverside hotel has rooms with a view of the Bund",
        "Booked the riverside hotel for three nights",
    )]
    secret = remember(s, SECRET, sensitive=True)
    return {
        "weak": link(p[0], p[1], Relation.CAUSAL, confidence=0.4, needs_review=True),
        "none": link(p[2], p[3], Relation.REFERENCES, confidence=0.45, needs_review=True),
        "confirm": link(p[1], p[2], Relation.ELABORATES, confidence=0.5, needs_review=True),
        "human": link(p[0], p[2], Relation.CAUSAL, confidence=0.3, needs_review=True, status=EdgeStatus.APPROVED,
                      origin=EdgeOrigin.HUMAN),
        "rejected": link(p[0], p[3], Relation.TEMPORAL, confidence=0.3, needs_review=True,
                         status=EdgeStatus.REJECTED),
        "sensitive": link(secret, p[3], Relation.CAUSAL, confidence=0.3, needs_review=True),
        "strong": link(p[1], p[3], Relation.CAUSAL, confidence=0.9),
        "structural": link(p[0], p[1], Relation.SHARES_ENTITY, confidence=0.2, needs_review=True),
    }


@pytest.fixture
def llm(openai_server: FakeOpenAI) -> Iterator[FakeOpenAI]:
    memory = {**settings.MEMORY, "LLM": "openai", "LLM_MODEL": "gpt-test-small", "REVIEW_LLM_MODEL": "gpt-test-strong",
              "LLM_TIMEOUT": 0.5, "LLM_MAX_RETRIES": 0}
    with override_settings(MEMORY=memory):
        yield openai_server


def _snapshot(edge: Edge) -> tuple:
    edge.refresh_from_db()
    return edge.relation, edge.status, edge.origin, edge.confidence, edge.needs_review, edge.rationale


def test_review_relabels_confirms_and_rejects(project, edges, llm):
    untouched = {name: _snapshot(edges[name]) for name in ("human", "rejected", "sensitive", "strong", "structural")}
    llm.script_chat(
        answer_json({"relation": "temporal", "confidence": 0.85, "rationale": "the search follows the wish"}),
        answer_json({"relation": "none", "confidence": 0.9, "rationale": "no dependency"}),
        answer_json({"relation": "elaborates", "confidence": 0.3, "rationale": "weakly adds detail"}),
    )

    report = review_run(project=project, actor="user:5")

    assert report.counts == {"candidates": 4, "to_review": 3, "skipped_sensitive": 1, "relabelled": 1,
                             "rejected": 1, "confirmed": 1}
    weak = Edge.objects.get(pk=edges["weak"].pk)
    assert (weak.relation, weak.confidence, weak.origin, weak.needs_review) == ("temporal", 0.85, "llm", False)
    assert weak.rationale == "review (gpt-test-strong): the search follows the wish"
    rejected = Edge.objects.get(pk=edges["none"].pk)  # kept for people to see and overrule, never re-inferred
    assert (rejected.status, rejected.origin, rejected.needs_review) == ("rejected", "llm", False)
    assert rejected.rationale == "review (gpt-test-strong): no dependency"
    confirm = Edge.objects.get(pk=edges["confirm"].pk)
    assert (confirm.relation, confirm.confidence, confirm.needs_review) == ("elaborates", 0.3, True)  # still a proposal
    for name, before in untouched.items():
        assert _snapshot(edges[name]) == before, name
    assert len(llm.chat_requests) == 3
    for request in llm.chat_requests:
        assert request.body["model"] == "gpt-test-strong"
        system, user = request.body["messages"]
        assert system["content"].startswith(REVIEW_SYSTEM)
        assert SECRET not in user["content"]
    assert "Searched hotels near the Bund" in llm.chat_requests[0].body["messages"][1]["content"]
    ops = dict(GraphChange.objects.filter(actor="user:5", object_type="edge").values_list("object_id", "op"))
    assert ops == {edges["weak"].pk: "edge.relabelled", edges["none"].pk: "edge.rejected",
                   edges["confirm"].pk: "edge.reviewed"}
    # Reviewed edges are not sent again.
    assert review_run(project=project, actor="t").counts["to_review"] == 0
    assert len(llm.chat_requests) == 3


def test_below_confidence_widens_the_net(project, edges, llm):
    report = review_run(project=project, actor="t", below_confidence=0.95, dry_run=True)
    assert report.counts["candidates"] == 5  # the strong but unflagged edge too
    assert llm.chat_requests == []  # a dry run calls nobody


def test_dry_run_counts_equal_the_real_run(project, edges, llm):
    before = db_state()
    dry = review_run(project=project, actor="t", dry_run=True)
    assert db_state() == before
    llm.script_chat(*[answer_json({"relation": "causal", "confidence": 0.7, "rationale": "ok"})] * 3)
    real = review_run(project=project, actor="t")
    assert {k: real.counts[k] for k in dry.counts} == dry.counts
    assert sum(real.counts.get(k, 0) for k in ("relabelled", "rejected", "confirmed")) == dry.counts["to_review"]


def test_a_failing_model_changes_nothing(project, edges, llm):
    llm.script_chat(http_error(500), answer_json({"relation": "causal"}), http_error(503))
    before = db_state()
    report = review_run(project=project, actor="t")
    assert report.counts["failed"] == 3 and report.notes[0].startswith("LLM failed")
    after = db_state()
    assert after["edges"] == before["edges"] and after["memories"] == before["memories"]


def test_without_an_llm_review_refuses_clearly(project, edges):
    before = db_state()
    with pytest.raises(ProviderError, match="Edge review needs an LLM"):
        review_run(project=project, actor="t")
    assert db_state() == before
    dry = review_run(project=project, actor="t", dry_run=True)
    assert dry.counts["to_review"] == 3 and dry.notes == [NEEDS_LLM]


def test_command_without_an_llm_exits_non_zero(project, edges):
    with pytest.raises(CommandError, match="Edge review needs an LLM.*CW_LLM=openai"):
        call_command("review_edges", "--project", "travel", stdout=StringIO(), stderr=StringIO())


def test_command_fails_when_every_request_failed(project, edges, llm):
    llm.script_chat(http_error(500), http_error(500), http_error(500))
    with pytest.raises(CommandError, match="Every review request failed"):
        call_command("review_edges", "--project", "travel", stdout=StringIO(), stderr=StringIO())


def test_command_reviews(project, edges, llm):
    llm.script_chat(*[answer_json({"relation": "temporal", "confidence": 0.8, "rationale": "then"})] * 3)
    out, err = StringIO(), StringIO()
    call_command("review_edges", "--project", "travel", "--limit", "2", stdout=out, stderr=err)
    assert "review: done" in out.getvalue() and "candidates: 2" in out.getvalue()  # the sensitive one and "weak"
    assert "skipped_sensitive: 1" in out.getvalue() and "relabelled: 1" in out.getvalue()
    assert "1/1" in err.getvalue()
    with pytest.raises(CommandError, match="limit must be between 1 and 1000"):
        call_command("review_edges", "--project", "travel", "--limit", "0", stdout=StringIO(), stderr=StringIO())
