"""The write path on the real database: filter scores, entities, inferred edges, supersede."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from memory.engine import supersede
from memory.engine.inference import Proposal, edges_apply
from memory.engine.ingest import InteractionInput, interactions_accept
from memory.engine.projects import project_create, session_create
from memory.models import Edge, EdgeOrigin, EdgeStatus, Entity, GraphChange, Interaction, Memory, Relation

pytestmark = pytest.mark.django_db(transaction=True)


def _send(session, *items: tuple[str, str] | tuple[str, str, dict], hours_ago: float = 1,
          start: datetime | None = None) -> list[Interaction]:
    start = start or timezone.now() - timedelta(hours=hours_ago)
    inputs = [InteractionInput(it[0], it[1], it[2] if len(it) > 2 else {}, start + timedelta(minutes=i))
              for i, it in enumerate(items)]
    accepted = interactions_accept(session=session, items=inputs, actor="test")
    return [Interaction.objects.get(pk=a.interaction.pk) for a in accepted]


def test_scores_are_kept_on_every_interaction(agent_session):
    kept, chat = _send(agent_session, ("user_input", "My budget is 5000 RMB for the whole trip"),
                       ("user_input", "ok thanks"))
    assert kept.status == "kept" and chat.status == "filtered" and "chit-chat" in chat.reason
    assert {"relevance", "importance", "novelty", "total"} <= set(kept.scores)
    assert kept.scores["total"] >= 3.0 and kept.scores["importance"] >= 4.0


def test_a_repeat_is_not_stored_again(agent_session):
    first, second = _send(agent_session, ("user_input", "I am allergic to seafood, please avoid it"),
                          ("user_input", "I am allergic to seafood, please avoid it!"))
    assert first.status == "kept" and second.status == "filtered"
    memory = Memory.objects.get(session=agent_session)
    assert f"repeats memory #{memory.pk}" == second.reason
    assert set(memory.sources.values_list("pk", flat=True)) == {first.pk, second.pk}


def test_entities_are_canonical_per_project(agent_session):
    _send(agent_session, ("user_input", "Please book the Bund Garden Hotel for two nights"),
          ("tool_result", "Bund Garden Hotel: no rooms left for 12 October", {"tool": "hotel_search"}))
    hotels = Entity.objects.filter(project=agent_session.project, normalized_name="bund garden hotel")
    assert hotels.count() == 1
    assert hotels.get().mentions.count() == 2


def test_a_known_name_opening_a_sentence_is_a_mention(agent_session):
    """"Tom: Dale says…" — Dale opens the sentence, so only a project that knows Dale takes it as a name."""
    (first,) = _send(agent_session, ("user_input", "Tom: Dale says it's the clutch. Sorry, no car this week."))
    assert not Entity.objects.filter(project=agent_session.project, normalized_name="dale").exists()
    _send(agent_session, ("user_input", "Tom: the garage is run by Dale, and he is fair about prices."))
    (later,) = _send(agent_session, ("user_input", "Tom: Dale rang. The flywheel has gone too."))
    dale = Entity.objects.get(project=agent_session.project, normalized_name="dale")
    assert dale.mentions.filter(memory__sources=later).exists()
    assert not dale.mentions.filter(memory__sources=first).exists(), "nothing known then: not linked later"
    assert not Entity.objects.filter(project=agent_session.project, normalized_name="sorry").exists()


def test_a_speakers_label_links_nothing_a_name_in_the_text_does(agent_session):
    """Every turn of Maria names her ("Maria: …"): that alone is no shared entity; Elena, talked about, is."""
    turns = _send(agent_session, ("user_input", "Maria: The barn at Hollins flooded after a burst pipe."),
                  ("user_input", "Tom: Oh no, what now for the wedding?"),
                  ("user_input", "Maria: Tom, the cinema on Friday is booked for the four of us."),
                  ("user_input", "Maria: Elena found another venue, Ashby Hall near Malton."),
                  ("user_input", "Tom: Elena must be relieved, Ashby Hall sounds lovely."))
    memory = {i: Memory.objects.get(sources=turn) for i, turn in enumerate(turns)}
    maria = Entity.objects.get(project=agent_session.project, normalized_name="maria")
    assert maria.mentions.filter(memory=memory[0]).exists()  # still a mention: "what did Maria say" finds it
    shared = {(e.source_id, e.target_id) for e in Edge.objects.filter(session=agent_session, relation="shares_entity")}
    assert (memory[0].pk, memory[2].pk) not in shared and (memory[2].pk, memory[3].pk) not in shared
    assert (memory[3].pk, memory[4].pk) in shared


def test_tool_result_follows_its_call(agent_session):
    _send(agent_session,
          ("tool_call", "hotel_search(city='Shanghai', checkin='2026-10-12')",
           {"tool": "hotel_search", "call_id": "c7"}),
          ("tool_result", "hotel_search returned 3 hotels under 800 RMB near the Bund",
           {"tool": "hotel_search", "call_id": "c7"}))
    edge = Edge.objects.get(session=agent_session, relation=Relation.CAUSAL)
    assert edge.confidence == 0.9 and not edge.needs_review and "call" in edge.rationale


def test_an_agent_step_depends_on_the_step_before_it(agent_session):
    request, call, result, thought, reply, follow_up = _send(
        agent_session,
        ("user_input", "Find me a direct flight from London to Lisbon on 14 March"),
        ("tool_call", "flight_search(origin='LHR', destination='LIS', date='2026-03-14', direct=True)",
         {"tool": "flight_search", "call_id": "f1"}),
        ("tool_result", "3 direct flights: TP1351 07:05 £142, BA500 09:40 £168, U28403 12:15 £96",
         {"tool": "flight_search", "call_id": "f1"}),
        ("agent_thought", "U28403 is the cheapest direct option; the user cares about price, so propose it"),
        ("assistant_output", "The cheapest direct flight is easyJet U28403 at 12:15 for £96."),
        ("user_input", "Great, also remind me to renew my passport before the trip"))
    edges = {(e.source.sources.get().pk, e.target.sources.get().pk): e
             for e in Edge.objects.filter(session=agent_session).exclude(relation__in=("next_in_session",
                                                                                     "shares_entity"))}
    for parent, child in ((request, call), (result, thought)):
        edge = edges[(parent.pk, child.pk)]
        assert edge.relation == Relation.CAUSAL and edge.rationale.startswith("agent step"), edge.rationale
    assert edges[(call.pk, result.pk)].relation == Relation.CAUSAL  # the result of this call
    # A reply or a new request is not an agent step: no such edge to the turn before it.
    for parent, child in ((thought, reply), (reply, follow_up)):
        assert (parent.pk, child.pk) not in edges or not edges[(parent.pk, child.pk)].rationale.startswith(
            "agent step")


def test_causal_cue_links_to_the_related_memory(agent_session):
    _send(agent_session, ("tool_call", "book_hotel(name='Bund Garden Hotel', dates='12-14 October')"),
          ("observation", "The Bund Garden Hotel booking failed because the hotel is sold out for 12-14 October"))
    edge = Edge.objects.get(session=agent_session, relation=Relation.CAUSAL)
    assert edge.target.content.startswith("The Bund Garden Hotel booking failed")
    assert edge.source.content.startswith("book_hotel") and edge.rationale


def test_new_phone_supersedes_only_the_old_phone(agent_session):
    _send(agent_session, ("user_input", "My phone number is 138 0013 8000"),
          ("user_input", "My budget is 5000 RMB in total"),
          ("user_input", "Update: my new phone number is 139 1234 5678"))
    old = Memory.objects.get(content__contains="138 0013")
    new = Memory.objects.get(content__contains="139 1234")
    budget = Memory.objects.get(content__contains="budget")
    assert old.status == "superseded" and new.status == "active" and budget.status == "active"
    assert Edge.objects.filter(source=old, target=new, relation=Relation.SUPERSEDES).exists()
    assert GraphChange.objects.filter(op="memory.superseded", object_id=old.pk).exists()


@pytest.mark.parametrize("turns", [
    ("My phone number is 07700 900316", "The plumber came by this morning. His number is 07700 900845."),
    ("我的手机号是138 0013 8000", "装修师傅来过了，他的电话是139 1234 5678"),
], ids=["en", "zh"])
def test_someone_elses_number_does_not_replace_the_users(agent_session, turns):
    _send(agent_session, *(("user_input", text) for text in turns))
    mine = Memory.objects.get(content=turns[0])
    assert mine.status == "active", "'his number' is not the user's new number"
    assert not Edge.objects.filter(source=mine, relation=Relation.SUPERSEDES).exists()


def test_a_number_changed_for_the_person_named_a_turn_before_replaces_theirs_only(agent_session):
    _send(agent_session, ("user_input", "Nadia: My mobile is 07700 900111."),
          ("user_input", "Felix: Classic Mum."),
          ("user_input", "Nadia: Her mobile's on the blink, so if you ring her on 07700 900418 try Dad's."),
          ("user_input", "Nadia: Also, Mum has a new mobile. The old one died."),
          ("user_input", "Nadia: Her new number's 07700 900733. The old number's gone."))
    mums_old = Memory.objects.get(content__contains="900418")
    mums_new = Memory.objects.get(content__contains="900733")
    assert mums_old.status == "superseded"
    assert Edge.objects.filter(source=mums_old, target=mums_new, relation=Relation.SUPERSEDES).exists()
    assert Memory.objects.get(content__contains="900111").status == "active", "Nadia's own number stays"


def test_chinese_interaction_gets_dimensions_and_search_terms(agent_session):
    (item,) = _send(agent_session, ("user_input", "我对海鲜过敏，餐厅一定要避开海鲜"))
    memory = Memory.objects.get(sources=item)
    assert memory.dimensions["language"] == "zh" and memory.kind == "constraint"
    assert "海鲜" in memory.search_text.split()


def test_human_decisions_win_over_inference(agent_session):
    _send(agent_session, ("user_input", "Dates are 12 to 14 October"), ("user_input", "Then book the hotel"))
    parent, child = Memory.objects.filter(session=agent_session).order_by("occurred_at")
    Edge.objects.filter(source=parent, target=child).delete()
    Edge.objects.create(project=child.project, session=child.session, source=parent, target=child,
                        relation=Relation.CAUSAL, status=EdgeStatus.REJECTED, origin=EdgeOrigin.HUMAN)
    with transaction.atomic():
        created = edges_apply(child, [Proposal(parent, Relation.CAUSAL, 0.9, "again"),
                                      Proposal(parent, Relation.TEMPORAL, 0.9, "other relation")], threshold=0.6)
    assert created == []
    assert Edge.objects.filter(source=parent, target=child).count() == 1


def test_weak_edges_are_kept_as_proposals(agent_session):
    _send(agent_session, ("user_input", "Dates are 12 to 14 October"), ("user_input", "Lunch is at noon"))
    parent, child = Memory.objects.filter(session=agent_session).order_by("occurred_at")
    with transaction.atomic():
        (edge,) = edges_apply(child, [Proposal(parent, Relation.ELABORATES, 0.4, "weak")], threshold=0.6)
    assert edge.status == EdgeStatus.INFERRED and edge.needs_review


def test_announced_change_supersedes_the_related_old_value(agent_session):
    _send(agent_session, ("user_input", "The staging database for the smoke test is on port 5432 of the db host"),
          ("user_input", "Lunch with the team is booked for Friday"),
          ("user_input", "Correction: the staging database for the smoke test moved to port 6432"))
    old = Memory.objects.get(content__contains="5432")
    new = Memory.objects.get(content__contains="6432")
    lunch = Memory.objects.get(content__contains="Lunch")
    assert old.status == "superseded" and lunch.status == "active"
    edge = Edge.objects.get(source=old, target=new, relation=Relation.SUPERSEDES)
    assert "announced change" in edge.rationale


def test_a_restated_date_does_not_make_another_things_price_stale(agent_session):
    """Tied only by a date both name, a change replaces a date: the price of the other thing on that day stays."""
    _send(agent_session, ("user_input", "The landlord said I can stay on till the 3rd for an extra £90."),
          ("user_input", "I moved the removals van to the 3rd as well, so it's £520 now."),
          ("user_input", "The gig on the 9th costs £15 a ticket."),
          ("user_input", "Update: the gig moved from the 9th to the 11th."))
    stay = Memory.objects.get(content__contains="landlord")
    assert stay.status == "active", "the van's new price is no new price of the stay"
    assert not Edge.objects.filter(source=stay, relation=Relation.SUPERSEDES).exists()
    gig = Memory.objects.get(content__contains="£15")
    assert gig.status == "superseded", "a restated date does replace that date"


def test_a_corrected_figure_replaces_the_one_it_names(agent_session):
    """"Final numbers: 68, not 75" says the 75 changed, though no change verb does."""
    _send(agent_session, ("user_input", "The Orrin lunch headcount has gone up to 75, they are flying people in."),
          ("user_input", "Malik rang. Final numbers: 68, not 75, seven can't travel."))
    old = Memory.objects.get(content__contains="flying")
    assert old.status == "superseded"
    assert Edge.objects.filter(source=old, relation=Relation.SUPERSEDES, rationale__contains="number").exists()


def test_reused_values_link_to_the_one_memory_that_produced_them(agent_session):
    base, other, derived = _send(
        agent_session,
        ("tool_result", "Customer count query: 4,812 paying customers at the start of Q2", {"tool": "sql"}),
        ("user_input", "Our churn review meeting is scheduled for Thursday afternoon"),
        ("agent_thought", "Decision: the churn rate base is 4,812 - 163 = 4,649 paying customers, so we use 4,649"),
    )
    base_memory, derived_memory = base.memories.get(), derived.memories.get()
    edge = Edge.objects.get(source=base_memory, target=derived_memory, relation=Relation.REFERENCES)
    assert "4812" in edge.rationale and edge.confidence >= 0.6
    # The meeting note shares no value with the calculation: nothing but adjacency links them.
    relations = set(Edge.objects.filter(source=other.memories.get(), target=derived_memory)
                    .values_list("relation", flat=True))
    assert relations <= {Relation.NEXT_IN_SESSION}


def test_a_value_from_a_constraint_makes_a_conditional_edge_to_its_first_source_only(agent_session):
    constraint, echo, used = _send(
        agent_session,
        ("user_input", "Constraint: the build must stay on Python 3.12 because ops certified only that version"),
        ("assistant_output", "Understood, the build will use Python 3.12 as required by ops"),
        ("tool_call", "docker_build(base_image='python:3.12-slim', tag='billing-3.12')", {"tool": "docker"}),
    )
    used_memory = used.memories.get()
    by_value = Edge.objects.filter(target=used_memory, rationale__contains="3.12")
    # One parent per shared value, the memory it came from, not every memory that repeats it.
    assert [(e.source_id, e.relation) for e in by_value] == [(constraint.memories.get().pk, Relation.CONDITIONAL)]
    assert not Edge.objects.filter(source=echo.memories.get(), target=used_memory, rationale__contains="3.12")


@pytest.mark.parametrize("question", [
    "Is your phone number still 138 0013 8000? Or is it 139 1234 5678 now?",
    "Just to confirm: my phone is 139 1234 5678, right?",
    "电话还是139 1234 5678吗？",
])
def test_a_question_or_a_confirmation_never_supersedes(agent_session, question):
    _send(agent_session, ("user_input", "My phone number is 138 0013 8000"), ("assistant_output", question))
    old = Memory.objects.get(content__contains="138 0013", content__startswith="My phone")
    assert old.status == "active", "a question about a value does not change it"
    assert not Edge.objects.filter(relation=Relation.SUPERSEDES).exists()


@pytest.mark.parametrize("change", [
    "The hotel check-in was pushed back to 18 October",
    "We postponed the hotel check-in until 18 October",
    "酒店入住推迟到10月18日",
])
def test_a_moved_date_supersedes_the_old_one(agent_session, change):
    first = "Hotel check-in is on 12 October" if change[0].isascii() else "酒店入住是10月12日"
    _send(agent_session, ("user_input", first), ("user_input", change))
    old = Memory.objects.filter(session=agent_session).order_by("occurred_at").first()
    assert old.status == "superseded", [m.content for m in Memory.objects.all()]


def _second_session(project, title: str = "Two weeks later"):
    return session_create(project=project, title=title, task="", actor="test")


def test_a_change_announced_in_a_later_session_supersedes_the_value_set_in_an_earlier_one(agent_session):
    (old,) = _send(agent_session, ("user_input", "Maria: I have a van on hold from Leeds Van Hire, £140 for the day."),
                   hours_ago=3)
    later = _second_session(agent_session.project)
    (new,) = _send(later, ("user_input", "Maria: I rang Leeds Van Hire. They've moved the booking, it's £165 now."))
    old_memory, new_memory = old.memories.get(), new.memories.get()
    old_memory.refresh_from_db()
    assert old_memory.status == "superseded"
    edge = Edge.objects.get(source=old_memory, target=new_memory, relation=Relation.SUPERSEDES)
    assert edge.session_id == later.pk and "amount" in edge.rationale


def test_a_change_about_something_else_does_not_supersede_across_sessions(agent_session):
    """Sharing a speaker's name and a value type is not being about the same thing."""
    filler = [("user_input", f"Tom: note {i} about the garden, the shed and the {word}.")
              for i, word in enumerate(["roses", "fence", "pond", "path", "gate", "hedge"])]
    _send(agent_session, ("user_input", "Tom: The plumber quoted £300 for the boiler service."), *filler, hours_ago=3)
    later = _second_session(agent_session.project)
    _send(later, ("user_input", "Tom: The gym membership went up to £45 a month now."))
    quote = Memory.objects.get(content__contains="plumber")
    assert quote.status == "active"
    assert not Edge.objects.filter(relation=Relation.SUPERSEDES).exists()


def test_a_value_repeated_in_conversation_is_no_dependency_but_a_thought_working_with_a_result_is(agent_session):
    """Turns that repeat a figure echo it; an agent's thought computing with a tool's figure builds on it."""
    said, echoed = _send(agent_session, ("user_input", "Raj: Gary quoted £640 for the three fence panels."),
                         ("user_input", "Hannah: £640 sounds fair, I'll pay my half of the panels."))
    analysis = _second_session(agent_session.project, "Churn analysis")
    result, _, thought = _send(
        analysis, ("tool_result", "4,812 paying customers at the start of Q2."),
        ("tool_result", "163 test accounts created by the QA team in April."),  # so no "next step" link decides it
        ("agent_thought", "Without the test accounts 4,812 leaves 4,649 real customers: the base for the churn rate."))
    links = Edge.objects.filter(source=said.memories.get(), target=echoed.memories.get())
    assert not links.exclude(relation__in=[Relation.NEXT_IN_SESSION, Relation.SHARES_ENTITY]).exists(), \
        list(links.values_list("relation", "rationale"))
    assert result.status == thought.status == "kept", [(i.content, i.status, i.reason) for i in (result, thought)]
    edge = Edge.objects.get(source=result.memories.get(), target=thought.memories.get(), relation=Relation.REFERENCES)
    assert "4812" in edge.rationale


@pytest.mark.parametrize("old_text, new_text", [
    ("Tom: Dale at the garage says the clutch job is £650 with the labour.",
     "Tom: Dale at the garage let me off some of the labour on the clutch job. £610 altogether."),
    ("阿慧：国际学校的学费问清楚了，一学期两万六，不含午餐和校车",
     "阿慧：不过国际学校的学费跟开放日说的不一样，通知里写的是一学期两万八"),
])
def test_a_value_given_again_differently_supersedes_the_old_one(agent_session, old_text, new_text):
    """No "changed to" or "改为": the figure or day is just given again, differently, about the same thing."""
    (old,) = _send(agent_session, ("user_input", old_text), hours_ago=48)
    (new,) = _send(_second_session(agent_session.project), ("user_input", new_text))
    old_memory = old.memories.get()
    assert old_memory.status == "superseded", [(m.content, m.status) for m in Memory.objects.all()]
    assert Edge.objects.filter(source=old_memory, target=new.memories.get(), relation=Relation.SUPERSEDES).exists()


def test_a_change_that_names_the_old_day_supersedes_it_without_a_word_in_common(agent_session):
    """"24号那场取消了，改到29号" restates the day it replaces: that is tie enough."""
    topics = ("周末去看了装修的灯", "猫今天吃了不少罐头", "公司楼下新开了面馆", "我妈寄来了一箱橘子",
              "晚上打算跑五公里", "新买的耳机音质不错")
    filler = [("user_input", f"阿杰：{topic}") for topic in topics]
    # said on 10 and 12 March: "24号" is the 24th of March both times (near a month's end it could differ)
    _send(agent_session, ("user_input", "阿杰：科目三我也约上了，24号"), *filler,
          start=datetime(2026, 3, 10, 4, tzinfo=UTC))
    later = _second_session(agent_session.project)
    _send(later, ("user_input", "阿杰：驾校说考场的设备要检修，24号那场取消了，统一改到29号"),
          start=datetime(2026, 3, 12, 4, tzinfo=UTC))
    booked = Memory.objects.get(content__contains="约上了")
    assert booked.status == "superseded"
    assert Memory.objects.get(content__contains="灯").status == "active"
    edge = Edge.objects.get(source=booked, relation=Relation.SUPERSEDES)
    assert "date" in edge.rationale


def test_a_change_naming_the_same_rare_name_supersedes_across_sessions(agent_session):
    """"New total is £980" shares one telling word with "£650 all in": the name of the mechanic, Dale."""
    filler = [("user_input", f"Tom: note {i} about the {word}.")
              for i, word in enumerate(["garden", "shed", "pond", "gate", "hedge", "roses", "fence"])]
    _send(agent_session, ("user_input", "Tom: the garage is run by Dale. He quoted £650 all in for the clutch."),
          *filler, hours_ago=48)
    later = _second_session(agent_session.project)
    _send(later, ("user_input", "Tom: And Dale rang this morning, the flywheel has gone as well. New total is £980."))
    quote = Memory.objects.get(content__contains="£650")
    assert quote.status == "superseded"
    assert "amount" in Edge.objects.get(source=quote, relation=Relation.SUPERSEDES).rationale


def test_a_date_read_from_tomorrow_is_not_a_value_a_change_replaces(agent_session):
    """'I'll call the hotel tomorrow' names no date; a later 'moved to 2 May' must not replace it."""
    _send(agent_session, ("user_input", "I'll call the Riverside hotel about the banquet hall tomorrow"),
          ("user_input", "The Riverside hotel banquet is set for 16 May"), hours_ago=3)
    later = _second_session(agent_session.project)
    _send(later, ("user_input", "The Riverside hotel banquet was moved to 2 May"))
    call, banquet = (Memory.objects.get(content__contains="call the"),
                     Memory.objects.get(content__contains="set for 16 May"))
    assert call.dimensions["dates"] and not call.dimensions["stated_dates"]
    assert call.status == "active" and banquet.status == "superseded"


def test_one_travellers_new_value_does_not_replace_anothers(agent_session):
    """A travel desk serves several people in one session: Sofia's budget is not a new value of Kenji's,
    and a phone change said without a name is about the traveller the session was last about."""
    _send(agent_session,
          ("user_input", "Hi, this is Kenji Sato. I need a hotel in Bologna from 14 to 18 June. "
                         "My budget is at most 1200 EUR a night."),
          ("user_input", "Hi, this is Sofia Rossi. I need a hotel in Bologna from 3 to 7 May. "
                         "My budget is at most 900 EUR a night."),
          ("user_input", "Hello, Tom Becker again. Please find me a flight from Copenhagen to Oslo on 15 October. "
                         "You can reach me on +1 555 379 1408."),
          ("assistant_output", "Found flight SK 1467 at 08:05 for 145 EUR."),
          ("user_input", "Book it. And note that my phone number has changed to +1 555 425 5803."),
          ("user_input", "Hello, Diego Ramos again. Please find me a flight from Copenhagen to Oslo on 14 September. "
                         "You can reach me on +1 555 934 5514."))
    assert Memory.objects.get(content__contains="Kenji").status == "active"
    assert Memory.objects.get(content__contains="Tom Becker").status == "superseded"
    changed = Memory.objects.get(content__contains="425 5803")
    assert changed.status == "active" and changed.dimensions["attributes"] == [
        {"entity": "user", "attribute": "phone", "value": "+15554255803"}]
    edges = Edge.objects.filter(relation=Relation.SUPERSEDES)
    assert [(e.source.content[:16], e.target_id) for e in edges] == [("Hello, Tom Becke", changed.pk)]


def test_a_named_persons_own_value_in_another_session_is_replaced_by_their_new_one(agent_session):
    """Across sessions "my phone" is replaced only when both sides are known to be the same person."""
    kenji, sofia = _send(
        agent_session,
        ("user_input", "Hi, this is Kenji Sato. If the hotel needs me, my mobile is +81 90 1234 5678."),
        ("user_input", "Hi, this is Sofia Rossi. For my booking, my mobile is +39 347 555 0101."), hours_ago=48)
    later = _second_session(agent_session.project)
    (new,) = _send(later, ("user_input", "Hello, Kenji Sato again. My mobile number has changed: "
                                         "the new one is +81 90 8765 4321."))
    old, other, changed = kenji.memories.get(), sofia.memories.get(), new.memories.get()
    old.refresh_from_db()
    other.refresh_from_db()
    assert old.status == "superseded" and other.status == "active" and changed.status == "active"
    edge = Edge.objects.get(relation=Relation.SUPERSEDES)
    assert (edge.source_id, edge.target_id) == (old.pk, changed.pk)
    assert edge.rationale.startswith("new phone of user")


@pytest.mark.parametrize("second_task, replaced", [
    ("继续规划陈先生一家的云南行程：丽江住宿和活动，并更新联系方式。", True),
    ("为王女士规划杭州两日游。", False),
])
def test_my_phone_in_two_sessions_is_one_persons_when_both_tasks_name_them(second_task, replaced):
    """Nobody is named in either session's turns; the sessions' tasks say whom they are for. The same person
    on both sides: the new number replaces the old one. Another person: both numbers stay."""
    project = project_create(name="Trips", slug="trips")
    first = session_create(project=project, title="机票和酒店", actor="test",
                           task="为陈先生一家四口规划 7 月 10 日至 16 日的云南行程。")
    (old,) = _send(first, ("user_input", "订票的联系电话用我的手机 139 0171 2345。"), hours_ago=48)
    later = session_create(project=project, title="丽江", task=second_task, actor="test")
    (new,) = _send(later, ("user_input", "对了，我换了新手机号 186 2100 8899，以后都用这个联系我。"))
    old_memory = old.memories.get()
    old_memory.refresh_from_db()
    assert new.memories.get().status == "active"
    assert (old_memory.status == "superseded") is replaced
    assert Edge.objects.filter(source=old_memory, relation=Relation.SUPERSEDES).exists() is replaced


def test_a_speakers_new_number_in_national_format_replaces_their_old_one(agent_session):
    (first,) = _send(agent_session, ("user_input", "Tom: my number's 07700 900316 if the garage needs me."),
                     hours_ago=48)
    later = _second_session(agent_session.project)
    (second,) = _send(later, ("user_input", "Tom: I'm switching to a new number from tomorrow: 07700 900845."))
    old = first.memories.get()
    old.refresh_from_db()
    assert old.status == "superseded" and second.memories.get().status == "active"
    # read as a phone, not as the numbers 7700 and 900316
    assert Edge.objects.get(source=old, relation=Relation.SUPERSEDES).rationale == "new phone of user: 07700900845"


def test_a_tools_quote_does_not_replace_the_constraint_it_answers(agent_session):
    """"素食可以在标准桌内换成素食套餐" swaps a dish, it changes no budget: a tool's result never replaces what
    someone requires (it had replaced the event's constraints and hid them from recall)."""
    (constraint,) = _send(agent_session, ("agent_thought", "约束：1 月 18 日晚，杭州，预算 15 万元，120 人，清真 8 人、"
                                                           "素食 5 人，需要舞台和 LED 屏。"), hours_ago=2)
    _send(agent_session, ("tool_call", "venue_quote(city='杭州', guests=120)"),
          ("tool_result", "报价：标准桌餐 2,880 元/桌（10 人）；清真桌由场地合作的清真餐厅单独出餐，3,200 元/桌；"
                          "素食可以在标准桌内换成素食套餐，不加价。"))
    memory = constraint.memories.get()
    memory.refresh_from_db()
    assert memory.kind == "constraint" and memory.status == "active"
    assert not Edge.objects.filter(source=memory, relation=Relation.SUPERSEDES).exists()


def test_the_agents_check_against_a_limit_does_not_replace_the_limit(agent_session):
    """"Still under Martin's sign-off" with a new total is the agent checking the limit, not changing it: the
    agent's thoughts and tool calls replace no value by the rules, and a thought is never replaced."""
    (limit,) = _send(agent_session, ("user_input", "Money: the one-off migration spend can't go over 2,500 GBP ex VAT, "
                                                   "that's what Martin signed off."), hours_ago=2)
    (plan,) = _send(agent_session, ("agent_thought", "Plan: the cutover costs 2,340 GBP, Martin's sign-off is fine."),
                    hours_ago=1.5)
    _send(agent_session,
          ("agent_thought", "Headcount up by one, so the migration is now about 2,385 GBP instead of 2,340 GBP, "
                            "still under Martin's 2,500 GBP sign-off."),
          ("tool_call", "sms_send(to='Martin', text='Migration total changed to 2,385 GBP instead of 2,340 GBP')"))
    for memory in (limit.memories.get(), plan.memories.get()):
        assert memory.status == "active", memory.content
    assert not Edge.objects.filter(relation=Relation.SUPERSEDES).exists()
    # The person who set the limit changes it.
    (raised,) = _send(agent_session,
                      ("user_input", "Martin has raised the limit to 3,000 GBP ex VAT for the migration."))
    edge = Edge.objects.get(relation=Relation.SUPERSEDES)
    assert (edge.source_id, edge.target_id) == (limit.memories.get().pk, raised.memories.get().pk)


@pytest.mark.parametrize(("limit", "check"), [
    ("The one-off spend can't go over 2,500 GBP, and the monthly bill has to stay below 450 GBP.",
     "Headcount is up: 15 mailboxes instead of 14, about 2,385 GBP, still under the 2,500 GBP limit."),
    ("约束：总预算不超过 20 万，9 月 30 日前完工，最早 6 月 3 日开工。",
     "补砖 8 片下单了，柜子推到 9 月 16 日装，加上后总花费仍在 20 万以内。"),
], ids=["en", "zh"])
def test_a_limit_named_as_still_kept_is_not_replaced(agent_session, limit, check):
    """"Still under the 2,500 GBP limit" / "仍在 20 万以内" checks a bound: the bound is no value the update restates
    (it had replaced the project's constraints through the figure it repeats)."""
    (constraint,) = _send(agent_session, ("user_input", limit), hours_ago=2)
    _send(agent_session, ("assistant_output", check))
    memory = constraint.memories.get()
    assert memory.status == "active"
    assert not Edge.objects.filter(source=memory, relation=Relation.SUPERSEDES).exists()


def test_a_town_both_name_does_not_tie_a_change_to_an_earlier_value(agent_session):
    """A place is where many things happen: the check-up in 盐城 moves the inspection, not the deadline set
    because she moves from 盐城 (a person's name both mention does tie them, see the Dale test above)."""
    (deadline,) = _send(agent_session, ("user_input", "她 10 月 1 日从盐城搬过来跟我们住，所以 9 月 30 日之前"
                                                      "必须全部完工。"), hours_ago=2)
    _send(agent_session, ("user_input", "糟了，周四我婆婆在盐城要做复查，验收那天家里没人，只能挪到周六 5 号了。"))
    assert Entity.objects.filter(project=agent_session.project, normalized_name="盐城", type="place").exists()
    memory = deadline.memories.get()
    assert memory.status == "active"
    assert not Edge.objects.filter(relation=Relation.SUPERSEDES).exists()


@pytest.mark.parametrize(("first", "other", "own"), [
    ("Maria: Got my ticket! The York train on the 12th of February, the 08:05 from Leeds.",
     "Tom: I've changed my York train ticket from Leeds: moved to the 14th of February, the 08:40.",
     "Maria: Mine's moved too: the York train from Leeds is now on the 15th of February."),
    ("阿慧：抢到了！2月12号成都东到长沙南的高铁，早上八点零五的，三张",
     "小敏：我刚在12306上改了成都东到长沙南的高铁，换成14号早上八点四十的",
     "阿慧：我这边成都东到长沙南的高铁也改签了，换成15号的"),
], ids=["en", "zh"])
def test_one_speakers_change_does_not_replace_another_speakers_plan(agent_session, first, other, own):
    """A transcript's people each announce changes to their own plans ("小敏：…" too, with no space)."""
    (hers,) = _send(agent_session, ("user_input", first), hours_ago=48)
    later = _second_session(agent_session.project)
    _send(later, ("user_input", other))
    (own,) = _send(later, ("user_input", own))
    memory = hers.memories.get()
    memory.refresh_from_db()
    assert memory.status == "superseded"
    (edge,) = Edge.objects.filter(source=memory, relation=Relation.SUPERSEDES)
    assert edge.target_id == own.memories.get().pk, "the other speaker's rebooking is no new value of hers"


def test_the_speaker_named_in_metadata_keeps_one_persons_change_off_anothers_plan(agent_session):
    """The same as above with the speakers given only as the interactions' `speaker` metadata."""
    (hers,) = _send(agent_session, ("user_input", "Got my ticket! The York train on the 12th of February, the 08:05 "
                                                  "from Leeds.", {"speaker": "Maria"}), hours_ago=48)
    later = _second_session(agent_session.project)
    _send(later, ("user_input", "I've changed my York train ticket from Leeds: moved to the 14th of February, the "
                                "08:40.", {"speaker": "Tom"}))
    (own,) = _send(later, ("user_input", "Mine's moved too: the York train from Leeds is now on the 15th of "
                                         "February.", {"speaker": "maria"}))
    (edge,) = Edge.objects.filter(source=hers.memories.get(), relation=Relation.SUPERSEDES)
    assert edge.target_id == own.memories.get().pk, "Tom's rebooking is no new value of Maria's"


def test_a_users_own_old_value_is_found_however_many_other_sessions_gave_one_since(agent_session):
    """Other sessions' values may fill the latest MAX_OLDER_VALUES; the session's own old one still counts."""
    (first,) = _send(agent_session, ("user_input", "Please note my mobile is +44 7700 900123."), hours_ago=72)
    for n in range(supersede.MAX_OLDER_VALUES + 1):
        _send(_second_session(agent_session.project, f"Traveller {n}"),
              ("user_input", f"Please note my mobile is +44 7700 901{n:03d}."), hours_ago=48)
    _send(agent_session, ("user_input", "My mobile number has changed: the new one is +44 7700 900456."))
    old = first.memories.get()
    old.refresh_from_db()
    assert old.status == "superseded"
    assert Memory.objects.filter(project=agent_session.project, status="superseded").count() == 1


def test_a_users_value_in_another_session_is_not_replaced_even_by_an_announced_change(agent_session):
    """One project's agent serves many people: "my number changed" in one session says nothing about whose
    number was given in another (the demo's live session once replaced ten travellers' dates at once)."""
    (first,) = _send(agent_session, ("user_input", "If the hotel needs to reach us, my mobile is +44 7700 900123."),
                     hours_ago=48)
    later = _second_session(agent_session.project)
    _send(later, ("user_input", "For this booking my mobile is +44 7700 900789."),
          ("user_input", "Oh, and my mobile number changed last week: the new one is +44 7700 900456."))
    old = first.memories.get()
    old.refresh_from_db()
    assert old.status == "active"
    same_session = Memory.objects.get(content__contains="900789")
    assert same_session.status == "superseded", "within its own session the change replaces the old number"


def test_a_speakers_turn_links_to_their_own_previous_turn_past_the_reply(agent_session):
    """In a transcript each turn links to its speaker's previous turn (next_by_speaker), which the other
    person's reply stands between; an agent's turns, naming no speaker, get no such edge."""
    survey, reply, quote, fair, fence = _send(
        agent_session,
        ("user_input", "Felix: Survey came back. The rear wall has damp and the roof needs work."),
        ("user_input", "Nadia: Oh no. Is it bad?"),
        ("user_input", "Felix: The roofer's quote is £6,500, so I'm asking them to knock some off."),
        ("user_input", "Nadia: Fair enough, that is a lot of money."),
        ("user_input", "Nadia: Anyway, Gary says the fence panels arrive on Friday."))
    assert {i.status for i in (survey, reply, quote, fair, fence)} == {"kept"}
    by_speaker = {(e.source.sources.get().pk, e.target.sources.get().pk)
                  for e in Edge.objects.filter(session=agent_session, relation=Relation.NEXT_BY_SPEAKER)}
    # Nadia's fence turn follows her own previous turn, which adjacency links already: the speaker's edge
    # goes to her turn before that.
    assert by_speaker == {(survey.pk, quote.pk), (reply.pk, fair.pk), (reply.pk, fence.pk)}, by_speaker
    edge = Edge.objects.get(relation=Relation.NEXT_BY_SPEAKER, target=quote.memories.get())
    assert edge.status == EdgeStatus.INFERRED and not edge.needs_review
    assert edge.rationale == "the speaker's previous turn"


def test_the_speaker_can_come_in_metadata_and_in_chinese_labels(agent_session):
    said, _, again = _send(agent_session,
                           ("user_input", "The survey came back with damp in the rear wall.", {"speaker": "Felix"}),
                           ("user_input", "That sounds expensive to fix.", {"speaker": "Nadia"}),
                           ("user_input", "The roofer quoted six and a half thousand for it.", {"speaker": "felix"}))
    assert Edge.objects.filter(source=said.memories.get(), target=again.memories.get(),
                               relation=Relation.NEXT_BY_SPEAKER).exists()
    # A speaker must be a name: a number in that field names nobody, and the turn's own label decides.
    numbered = _second_session(agent_session.project, "Numbered")
    first_said, _, then_said = _send(
        numbered, ("user_input", "Felix: The survey came back with damp in the rear wall.", {"speaker": 7}),
        ("user_input", "Nadia: That sounds expensive to fix.", {"speaker": 8}),
        ("user_input", "Felix: The roofer quoted six and a half thousand for it."))
    assert Edge.objects.filter(source=first_said.memories.get(), target=then_said.memories.get(),
                               relation=Relation.NEXT_BY_SPEAKER).exists()
    chat = _second_session(agent_session.project, "聊天")
    first, _, second = _send(chat, ("user_input", "小敏：婚期定了，五月二号，在常德办。"),
                             ("user_input", "姐姐：太好了！酒店订了吗？"),
                             ("user_input", "小敏：酒店看中了沅江宾馆的宴会厅，每桌两千六。"))
    assert Edge.objects.filter(source=first.memories.get(), target=second.memories.get(),
                               relation=Relation.NEXT_BY_SPEAKER).exists()


def test_turns_that_name_no_speaker_get_no_speaker_edge(agent_session):
    _send(agent_session, ("user_input", "Book a hotel near the Bund for 12 to 14 October"),
          ("tool_call", "hotel_search(city='Shanghai', near='Bund')"),
          ("tool_result", "Riverside Hotel: 2 rooms left at 980 CNY a night", {"tool": "hotel_search"}),
          ("agent_thought", "The Riverside Hotel fits the budget; book it"))
    assert not Edge.objects.filter(session=agent_session, relation=Relation.NEXT_BY_SPEAKER).exists()
