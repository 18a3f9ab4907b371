"""Stored recalls read back (memory/api/recalls.py, engine/recall/replay.py): list, trace, compare, re-run.

Each trace is read as every kind of reader (viewer, curator, admin, agent token), after the graph changed
(an edge rejected, a memory forgotten), and checked against what the recall itself returned.
"""

from __future__ import annotations

import json

import pytest

from curation.services import edge_draw, edge_update, memory_update
from memory.engine.maintenance.forget import ForgetFilter, forget_run
from memory.engine.projects import session_create
from memory.engine.recall import RecallQuery, memory_recall
from memory.models import Edge, GraphChange, RecallTrace
from memory.visibility import FORGOTTEN_MASK, SENSITIVE_MASK

from .test_maintenance_support import link, remember

pytestmark = pytest.mark.django_db
SECRET = "ZX-4417-LOCKER"


@pytest.fixture
def trip(agent_session):
    """dates → booking (conditional) → sold out (causal), and a sensitive locker code beside them."""
    dates = remember(agent_session, "Travel dates are fixed to 12 to 14 October for the Shanghai trip")
    booking = remember(agent_session, "Booking request sent to the riverside hotel near the Bund")
    sold_out = remember(agent_session, "The riverside hotel answered that every room is sold out")
    locker = remember(agent_session, f"The hotel luggage locker code is {SECRET}", sensitive=True)
    first = link(dates, booking, "conditional")
    second = link(booking, sold_out, "causal")
    return {"dates": dates, "booking": booking, "sold_out": sold_out, "locker": locker, "edges": (first, second)}


def url(project, *parts) -> str:
    return "/".join([f"/api/projects/{project.slug}/recalls", *map(str, parts)]) + "/"


def recall(project, text: str, *, sensitive: bool, **params):
    return memory_recall(project=project, actor="user:someone", query=RecallQuery(
        text, k=4, include_sensitive=sensitive, params={"seed_count": 1, **params}))


def test_a_trace_reads_back_as_it_ran_step_by_step(project, trip, readers):
    result = recall(project, "why is the riverside hotel sold out", sensitive=False)
    body = readers["curator"].get(url(project, result.trace.pk)).json()
    assert body["query"] == "why is the riverside hotel sold out" and body["query_hidden"] is False
    assert [e["memory_id"] for e in body["ranking"]] == [i.memory.pk for i in result.items]
    assert [e["text"] for e in body["ranking"]] == [i.memory.content for i in result.items]
    assert body["steps"][0]["hop"] == 0 and {a["memory_id"] for a in body["steps"][0]["arrivals"]} == {
        s["memory_id"] for s in body["seeds"]}
    reached = {a["memory_id"]: a for step in body["steps"][1:] for a in step["arrivals"]}
    assert trip["dates"].pk in reached and reached[trip["dates"].pk]["relation"] == "conditional"
    assert body["change_id"] == GraphChange.objects.filter(project=project).exclude(op="recall.completed").order_by(
        "-id").values_list("id", flat=True).first()
    assert body["changes_since"] == 0
    lines = body["context_lines"]
    assert lines[0]["memory_id"] is None and {line["memory_id"] for line in lines[1:]} == {
        i.memory.pk for i in result.items}
    assert "\n".join(line["text"] for line in lines) == result.context
    edge_ids = {str(e.pk) for e in trip["edges"]}
    assert edge_ids <= set(body["edges"]) and all(body["edges"][e]["exists"] for e in edge_ids)


def test_a_trace_stays_readable_after_an_edge_is_rejected_and_its_text_after_an_edit(project, trip, readers):
    # Full-text matches only: the vector ranking offers every memory as a (weak) match, the dates too.
    result = recall(project, "why is the riverside hotel sold out", sensitive=False, use_vector=False,
                    use_dimensions=False)
    first, _ = trip["edges"]
    edge_update(project=project, actor="user:someone", edge_id=first.pk, status="rejected")
    sold_out = trip["sold_out"]
    sold_out.content = "edited later: the hotel has rooms again"
    sold_out.save(update_fields=["content"])
    body = readers["viewer"].get(url(project, result.trace.pk)).json()
    assert body["edges"][str(first.pk)] == {"id": first.pk, "exists": True, "relation_now": "conditional",
                                            "status_now": "rejected"}
    shown = {e["memory_id"]: e["text"] for e in body["ranking"]}
    assert shown[sold_out.pk] == "The riverside hotel answered that every room is sold out"  # as it was shown
    assert body["changes_since"] >= 1
    rerun = readers["viewer"].post(url(project, result.trace.pk, "rerun"))
    assert rerun.status_code == 201
    diff = rerun.json()["diff"]
    # The dates were reached through the edge now rejected: they left, and that edge made the difference.
    assert trip["dates"].pk in {e["memory_id"] for e in diff["left"]}
    assert first.pk in diff["edges_only_first"] and first.pk not in diff["edges_only_second"]


def test_changes_since_count_only_what_the_recall_used(project, trip, readers):
    """Issue 45 #6: the badge counted every change of the project. Changes to memories the recall did not use
    (another session's, an edge between them) do not count; a change to a memory it returned does, and so does
    an edge drawn to one."""
    result = recall(project, "why is the riverside hotel sold out", sensitive=False, use_vector=False,
                    use_dimensions=False)
    used = set(result.trace.touched_ids) | set(result.trace.returned_ids)
    returned = result.items[0].memory
    elsewhere = session_create(project=project, title="Museum visit", task="Plan a museum day", actor="test")
    ticket = remember(elsewhere, "Museum tickets for the Shanghai Museum are booked for Saturday morning")
    audio = remember(elsewhere, "The audio guide at the museum costs 40 RMB and needs a passport deposit")
    assert not {ticket.pk, audio.pk} & used
    drawn = edge_draw(project=project, actor="user:someone", source_id=ticket.pk, target_id=audio.pk,
                      relation="conditional").object
    edge_update(project=project, actor="user:someone", edge_id=drawn.pk, status="rejected")
    memory_update(project=project, actor="user:someone", memory_id=audio.pk, sensitive=True)
    memory_update(project=project, actor="user:someone", memory_id=ticket.pk, kind="event")
    unrelated = GraphChange.objects.filter(project=project, id__gt=result.trace.change_id).exclude(
        op="recall.completed").count()
    assert unrelated == 5  # the session, the edge drawn and rejected, two memories: the badge counted them all
    assert readers["viewer"].get(url(project, result.trace.pk)).json()["changes_since"] == 0
    memory_update(project=project, actor="user:someone", memory_id=returned.pk, kind="event")
    assert readers["viewer"].get(url(project, result.trace.pk)).json()["changes_since"] == 1
    edge_draw(project=project, actor="user:someone", source_id=ticket.pk, target_id=returned.pk, relation="references")
    body = readers["curator"].get(url(project, result.trace.pk)).json()
    assert body["changes_since"] == 2
    # Another recall changes nothing it used.
    recall(project, "why is the riverside hotel sold out", sensitive=False, use_vector=False, use_dimensions=False)
    assert readers["viewer"].get(url(project, result.trace.pk)).json()["changes_since"] == 2


def test_sensitive_memories_queries_and_context_are_masked_for_viewers_and_tokens(project, trip, readers):
    result = recall(project, "hotel luggage locker code", sensitive=True, seed_count=4)
    assert trip["locker"].pk in [i.memory.pk for i in result.items]
    for reader in ("viewer", "token", "curator", "admin"):
        answer = readers[reader].get(url(project, result.trace.pk))
        body = answer.json()
        listing = readers[reader].get(url(project)).json()["results"]
        (row,) = [r for r in listing if r["id"] == result.trace.pk]
        if reader in ("curator", "admin"):
            assert SECRET in answer.content.decode() and body["query"] == row["query"] == "hotel luggage locker code"
            continue
        assert SECRET not in answer.content.decode() + json.dumps(listing), reader
        assert body["query"] is None and body["query_hidden"] and row["query"] is None, reader
        assert body["memories"][str(trip["locker"].pk)]["text"] == SENSITIVE_MASK
        assert any(line["text"] == SENSITIVE_MASK for line in body["context_lines"])
        assert readers[reader].get(url(project), {"q": "locker"}).json()["count"] == 0, reader
        assert readers[reader].post(url(project, result.trace.pk, "rerun")).status_code == 403
    assert readers["curator"].get(url(project), {"q": "locker"}).json()["count"] == 1


def test_a_forgotten_memory_is_shown_to_nobody_and_a_hard_forget_leaves_a_ghost(project, trip, readers):
    result = recall(project, "why is the riverside hotel sold out", sensitive=True, seed_count=3)
    booking = trip["booking"]
    forget_run(project=project, actor="user:admin", selection=ForgetFilter(memory_ids=(booking.pk,)), mode="soft")
    for reader in ("viewer", "admin"):
        body = readers[reader].get(url(project, result.trace.pk)).json()
        assert body["memories"][str(booking.pk)]["text"] == FORGOTTEN_MASK
        assert "Booking request" not in json.dumps(body), reader
        assert body["query"] is None
    forget_run(project=project, actor="user:admin", selection=ForgetFilter(memory_ids=(booking.pk,)), mode="hard")
    body = readers["admin"].get(url(project, result.trace.pk)).json()
    ghost = body["memories"][str(booking.pk)]
    assert ghost["exists"] is False and ghost["text"] == FORGOTTEN_MASK
    assert "Booking request" not in json.dumps(body)


def test_the_list_filters_by_session_actor_and_text_and_pages(project, trip, readers, agent_session):
    for text in ("riverside hotel", "travel dates", "quarterly report"):
        memory_recall(project=project, actor="token:ab12", query=RecallQuery(text, session=agent_session))
    recall(project, "the Bund", sensitive=False)
    client = readers["viewer"]
    everything = client.get(url(project)).json()
    assert everything["count"] == 4 and everything["results"][0]["query"] == "the Bund"  # newest first
    assert client.get(url(project), {"actor": "token:ab12"}).json()["count"] == 3
    assert [r["query"] for r in client.get(url(project), {"q": "DATES"}).json()["results"]] == ["travel dates"]
    assert client.get(url(project), {"session": agent_session.pk}).json()["count"] == 4  # "the Bund" returned one
    page = client.get(url(project), {"limit": 2, "offset": 2}).json()
    assert len(page["results"]) == 2 and page["previous"]
    assert client.get(url(project), {"session": 10**9}).status_code == 404
    assert client.get(url(project), {"session": "x"}).status_code == 400
    assert client.get(url(project), {"q": "x" * 201}).status_code == 400
    assert client.get(url(project, 10**9)).status_code == 404


def test_compare_says_what_entered_left_and_moved(project, trip, readers):
    hybrid = memory_recall(project=project, actor="t", query=RecallQuery("riverside hotel sold out", k=3,
                                                                         preset="hybrid"))
    ripple = memory_recall(project=project, actor="t", query=RecallQuery("riverside hotel sold out", k=3,
                                                                         preset="ripple", params={"seed_count": 1}))
    body = readers["viewer"].get(url(project, hybrid.trace.pk, "compare", ripple.trace.pk)).json()
    before = {i.memory.pk: i.rank for i in hybrid.items}
    after = {i.memory.pk: i.rank for i in ripple.items}
    diff = body["diff"]
    assert {e["memory_id"] for e in diff["entered"]} == set(after) - set(before)
    assert {e["memory_id"] for e in diff["left"]} == set(before) - set(after)
    assert {(m["memory_id"], m["from"], m["to"]) for m in diff["moved"]} == {
        (m, before[m], after[m]) for m in set(before) & set(after) if before[m] != after[m]}
    carried = {step["edge_id"] for i in ripple.items for step in i.path if step.get("edge_id")}
    assert set(diff["edges_only_second"]) == carried and diff["edges_only_first"] == []
    assert body["first"]["id"] == hybrid.trace.pk and body["second"]["id"] == ripple.trace.pk


def test_reading_a_trace_writes_nothing(project, trip, readers):
    result = recall(project, "riverside hotel", sensitive=False)
    counts = (GraphChange.objects.count(), RecallTrace.objects.count(), Edge.objects.count())
    readers["viewer"].get(url(project, result.trace.pk))
    readers["viewer"].get(url(project))
    readers["viewer"].get(url(project, result.trace.pk, "compare", result.trace.pk))
    assert (GraphChange.objects.count(), RecallTrace.objects.count(), Edge.objects.count()) == counts


def test_the_list_names_the_recalls_a_memory_returned_and_an_edge_carried(project, trip, readers):
    through = recall(project, "why is the riverside hotel sold out", sensitive=False)
    elsewhere = recall(project, "travel dates October", sensitive=False, max_hops=0)
    client = readers["viewer"]
    dates, conditional = trip["dates"], trip["edges"][0]
    returned_dates = {r["id"] for r in client.get(url(project), {"memory": dates.pk}).json()["results"]}
    assert returned_dates == {t.trace.pk for t in (through, elsewhere) if dates.pk in t.trace.returned_ids}
    assert through.trace.pk in returned_dates
    carried = [r["id"] for r in client.get(url(project), {"edge": conditional.pk}).json()["results"]]
    assert carried == [through.trace.pk]  # the recall without hops carried nothing
    assert client.get(url(project), {"edge": 10**9}).json()["count"] == 0
    assert client.get(url(project), {"memory": 0}).status_code == 400


def test_the_recalls_page_lists_them_masked_and_links_each_to_its_sessions_replay(project, trip, readers,
                                                                                  agent_session):
    secret = recall(project, "hotel luggage locker code", sensitive=True, seed_count=4)
    plain = recall(project, "riverside hotel booking", sensitive=False)
    page = f"/p/{project.slug}/recalls/"
    for reader, sees_secret in (("viewer", False), ("curator", True)):
        html = readers[reader].get(page).content.decode()
        assert (SECRET in html) is False  # the query does not quote the code itself; the memory text is never listed
        assert ("hotel luggage locker code" in html) is sees_secret, reader
        assert "riverside hotel booking" in html
        replay_link = f"/p/{project.slug}/sessions/{agent_session.pk}/?recall={plain.trace.pk}"
        assert replay_link in html, reader  # a project-wide recall opens in the session of what it returned
    searched = readers["viewer"].get(page, {"q": "locker"}).content.decode()
    assert "No stored recall matches this search." in searched and f'data-recall-id="{secret.trace.pk}"' not in searched
    assert readers["viewer"].get(page, {"q": "x" * 500}).status_code == 200
