"""Summaries of clusters: extractive offline (EN and ZH), the LLM over real HTTP when configured."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command
from django.test import override_settings
from django.utils import timezone

from memory.engine.maintenance.extractive import split_sentences
from memory.engine.maintenance.summarise import LLM_SYSTEM, summarise_run
from memory.engine.recall import RecallQuery, memory_recall
from memory.errors import NotFoundError, ValidationFailed
from memory.models import Edge, Entity, GraphChange, Memory, MemoryEmbedding, Relation

from .openai_server import FakeOpenAI, answer_json, answer_text
from .test_maintenance_support import db_state, remember

pytestmark = pytest.mark.django_db

EN = [
    "We will fly to Shanghai on 12 October. The flight leaves at 9am from Berlin.",
    "The hotel near the Bund is booked for three nights. Breakfast costs 8.5 EUR and is included.",
    "The airline confirmed the flight to Shanghai. Seat 14A is reserved on the flight.",
]
ZH = [
    "我们10月12日飞往上海。航班早上九点从北京出发。",
    "外滩附近的酒店订了三晚。酒店含早餐。",
    "航空公司确认了飞往上海的航班。座位是14A。",
]


def _cluster(session, texts: list[str], **kwargs) -> list[Memory]:
    start = timezone.now() - timedelta(hours=1)
    return [remember(session, t, occurred_at=start + timedelta(minutes=i), **kwargs) for i, t in enumerate(texts)]


def _positions(summary: str, members: list[Memory]) -> list[tuple[int, int]]:
    """Where each sentence of the summary comes from: (member, sentence) — it must come from somewhere."""
    found = []
    for sentence in split_sentences(summary):
        bare = sentence.rstrip("。.")
        hits = [(i, j) for i, m in enumerate(members) for j, s in enumerate(split_sentences(m.content))
                if s.rstrip("。.") == bare]
        assert hits, f"{sentence!r} is not a sentence of any member"
        found.append(hits[0])
    return found


def test_sentences_split_in_both_languages():
    assert split_sentences("Breakfast costs 8.5 EUR. It's included!") == ["Breakfast costs 8.5 EUR.", "It's included!"]
    assert split_sentences("酒店订了三晚。含早餐！好") == ["酒店订了三晚。", "含早餐！", "好"]


@pytest.mark.parametrize("texts", [EN, ZH], ids=["en", "zh"])
def test_extractive_summary_links_every_member(project, agent_session, texts):
    members = _cluster(agent_session, texts)
    report = summarise_run(project=project, actor="user:3", memory_ids=[m.pk for m in members])

    [summary_id] = report.ids["summary"]
    summary = Memory.objects.get(pk=summary_id)
    assert summary.kind == "summary" and summary.status == "active" and summary.session_id == agent_session.pk
    assert summary.dimensions["summary"] == {"method": "extractive", "model": None,
                                             "members": [m.pk for m in members]}
    positions = _positions(summary.content, members)
    assert positions == sorted(positions) and len(set(positions)) == len(positions)  # told in order, once each
    assert 2 <= len(positions) <= 5
    if texts is ZH:
        assert " " not in summary.content and summary.content.endswith("。")
    parents = Edge.objects.filter(target=summary, relation=Relation.SUMMARIZES)
    assert sorted(parents.values_list("source_id", flat=True)) == [m.pk for m in members]
    assert MemoryEmbedding.objects.filter(memory=summary).count() == 1
    assert summary.search_text and summary.occurred_at == members[-1].occurred_at
    ops = list(GraphChange.objects.filter(actor="user:3").order_by("id").values_list("op", flat=True))
    assert ops == ["memory.created", "edge.created", "edge.created", "edge.created", "maintenance.summarise"]


def test_summary_is_recalled(project, agent_session):
    members = _cluster(agent_session, EN)
    report = summarise_run(project=project, actor="t", memory_ids=[m.pk for m in members])
    summary = Memory.objects.get(pk=report.ids["summary"][0])
    result = memory_recall(project=project, query=RecallQuery(summary.content, k=1, preset="vector"), actor="t")
    assert result.items[0].memory.pk == summary.pk


def test_cluster_by_session_or_entity(project, agent_session):
    members = _cluster(agent_session, EN)
    remember(agent_session, "A summary written earlier about something else entirely", kind="summary")
    dry = summarise_run(project=project, actor="t", session_id=agent_session.pk, dry_run=True)
    assert dry.ids["members"] == [m.pk for m in members]  # summaries are not summarised again
    assert dry.counts == {"members": 3, "summaries": 1, "edges": 3}
    shanghai = Entity.objects.get(project=project, normalized_name="shanghai")
    by_entity = summarise_run(project=project, actor="t", entity="Shanghai", dry_run=True)
    expected = sorted(m.pk for m in members if m.mentions.filter(entity=shanghai).exists())
    assert by_entity.ids["members"] == expected and len(expected) == 2
    assert summarise_run(project=project, actor="t", entity=shanghai.pk, dry_run=True).ids == by_entity.ids


def test_dry_run_counts_equal_the_real_run(project, agent_session):
    members = _cluster(agent_session, EN)
    before = db_state()
    dry = summarise_run(project=project, actor="t", memory_ids=[m.pk for m in members], dry_run=True)
    assert db_state() == before
    real = summarise_run(project=project, actor="t", memory_ids=[m.pk for m in members])
    assert dry.counts == real.counts
    assert Memory.objects.filter(kind="summary").count() == real.counts["summaries"]
    assert Edge.objects.filter(relation="summarizes").count() == real.counts["edges"]


@pytest.mark.parametrize(("kwargs", "error"), [
    ({"memory_ids": "one"}, ValidationFailed),
    ({"memory_ids": [10**9, 10**9 + 1]}, ValidationFailed),
    ({}, ValidationFailed),
    ({"entity": "Atlantis"}, ValidationFailed),
    ({"session_id": 10**9}, NotFoundError),
    ({"memory_ids": "again"}, ValidationFailed),
])
def test_bad_clusters_write_nothing(project, agent_session, kwargs, error):
    members = _cluster(agent_session, EN)
    if kwargs.get("memory_ids") == "one":
        kwargs = {"memory_ids": [members[0].pk]}
    if kwargs.get("memory_ids") == "again":
        summarise_run(project=project, actor="t", memory_ids=[m.pk for m in members])
        kwargs = {"memory_ids": [m.pk for m in reversed(members)]}
    before = db_state()
    with pytest.raises(error):
        summarise_run(project=project, actor="t", **kwargs)
    assert db_state() == before


# --- the LLM path, over real HTTP -----------------------------------------------------------------


@pytest.fixture
def llm(openai_server: FakeOpenAI) -> Iterator[FakeOpenAI]:
    memory = {**settings.MEMORY, "LLM": "openai", "LLM_MODEL": "gpt-test-writer", "LLM_TIMEOUT": 0.5,
              "LLM_MAX_RETRIES": 0, "EMBEDDER": "hashing"}
    with override_settings(MEMORY=memory):
        yield openai_server


def test_llm_writes_the_summary(project, agent_session, llm):
    members = _cluster(agent_session, EN)
    text = "Flight to Shanghai on 12 October at 9am (seat 14A); hotel near the Bund, three nights."
    llm.script_chat(answer_json({"summary": text}))

    report = summarise_run(project=project, actor="t", memory_ids=[m.pk for m in members])

    summary = Memory.objects.get(pk=report.ids["summary"][0])
    assert summary.content == text
    assert summary.dimensions["summary"]["method"] == "llm"
    assert summary.dimensions["summary"]["model"] == "gpt-test-writer"
    assert set(Edge.objects.filter(target=summary).values_list("origin", flat=True)) == {"llm"}
    [request] = llm.chat_requests
    system, user = request.body["messages"]
    assert system["content"].startswith(LLM_SYSTEM.format(sentences=5))
    assert all(m.content in user["content"] for m in members)
    assert user["content"].index(members[0].content) < user["content"].index(members[2].content)


@pytest.mark.parametrize("script", [
    [answer_text("Here is a summary: flights and hotels"), answer_text("{not json")],
    [answer_json({"summary": ""}), answer_json({"text": "wrong field"})],
], ids=["malformed", "schema-violation"])
def test_a_failing_llm_falls_back_to_extractive(project, agent_session, llm, script):
    members = _cluster(agent_session, EN)
    llm.script_chat(*script)
    report = summarise_run(project=project, actor="t", memory_ids=[m.pk for m in members])
    summary = Memory.objects.get(pk=report.ids["summary"][0])
    assert summary.dimensions["summary"]["method"] == "extractive"
    assert "LLM unavailable" in summary.dimensions["summary"]["note"] and report.notes
    _positions(summary.content, members)
    assert llm.pending() == 0 and len(llm.chat_requests) == 2  # the provider's extra attempt after bad JSON


def test_sensitive_members_never_reach_the_llm(project, agent_session, llm):
    members = _cluster(agent_session, EN)
    Memory.objects.filter(pk=members[1].pk).update(sensitive=True)
    report = summarise_run(project=project, actor="t", memory_ids=[m.pk for m in members])
    assert llm.chat_requests == []
    summary = Memory.objects.get(pk=report.ids["summary"][0])
    assert summary.dimensions["summary"]["method"] == "extractive"
    quotes_sensitive = any(s.rstrip(".") in summary.content for s in split_sentences(members[1].content))
    assert summary.sensitive == quotes_sensitive


def test_use_llm_false_stays_offline(project, agent_session, llm):
    members = _cluster(agent_session, EN)
    summarise_run(project=project, actor="t", memory_ids=[m.pk for m in members], use_llm=False)
    assert llm.chat_requests == []


def test_command(project, agent_session):
    members = _cluster(agent_session, ZH)
    out, err = StringIO(), StringIO()
    call_command("summarise_cluster", "--project", "travel", "--session", str(agent_session.pk), stdout=out,
                 stderr=err)
    assert "summarise: done" in out.getvalue() and "summaries: 1" in out.getvalue()
    assert re.search(r"summary ids: \d+", out.getvalue())
    assert Edge.objects.filter(relation="summarizes").count() == len(members)
    with pytest.raises(CommandError, match="already summarised"):
        call_command("summarise_cluster", "--project", "travel", "--session", str(agent_session.pk),
                     stdout=StringIO(), stderr=StringIO())
    with pytest.raises(CommandError, match="name the cluster"):
        call_command("summarise_cluster", "--project", "travel", stdout=StringIO(), stderr=StringIO())
