"""The live view end to end: a real uvicorn server, real websockets, writers in other processes.

The server runs the embedded default (in-memory channel layer); changes made by other processes
reach it through the PostgreSQL LISTEN/NOTIFY bridge.
"""

from __future__ import annotations

import json
import threading
import time

import pytest
from django.contrib.auth import get_user_model
from django.db import transaction

from memory.engine.changelog import change_record
from memory.engine.ingest import InteractionInput, interactions_accept
from memory.models import GraphChange, Membership, Memory, Role

from . import test_live_support as support
from .test_live_support import catch_up, change_ids, close_code, open_socket, receive_until, run_writer, session_cookie

live_server_process = support.live_server_process  # a module fixture: one server for this file

pytestmark = pytest.mark.django_db(transaction=True)


def member(project, name: str, role: str = Role.VIEWER):
    user = get_user_model().objects.create_user(name, password="pw-" + name)
    Membership.objects.create(project=project, user=user, role=role)
    return user


def ingest_in_other_process(session_id: int, text: str) -> None:
    run_writer(
        "from memory.engine.ingest import InteractionInput, interactions_accept\n"
        "from memory.models import AgentSession\n"
        f"s = AgentSession.objects.get(pk={session_id})\n"
        f"interactions_accept(session=s, items=[InteractionInput('user_input', {text!r})], actor='cli')\n"
    )


def last_id(session) -> int:
    return GraphChange.objects.filter(session=session).order_by("-id").values_list("id", flat=True).first() or 0


def test_anonymous_socket_is_closed_with_4403(live_server_process, agent_session):
    with open_socket(live_server_process, agent_session.pk, cookie=None) as ws:
        assert close_code(ws) == 4403


def test_non_member_and_unknown_session_are_both_closed_with_4404(live_server_process, agent_session):
    outsider = get_user_model().objects.create_user("outsider", password="pw")
    cookie = session_cookie(outsider)
    with open_socket(live_server_process, agent_session.pk, cookie) as ws:
        assert close_code(ws) == 4404  # as for a session that does not exist (tests/test_live_auth.py)
    viewer = member(agent_session.project, "viewer")
    with open_socket(live_server_process, 999_999_999, session_cookie(viewer)) as ws:
        assert close_code(ws) == 4404


def test_foreign_origin_is_refused(live_server_process, agent_session):
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    cookie = session_cookie(member(agent_session.project, "viewer"))
    with pytest.raises(InvalidStatus):
        connect(live_server_process.ws_url(agent_session.pk), origin="http://evil.example",
                additional_headers={"Cookie": f"sessionid={cookie}"}, open_timeout=10)


def test_change_made_in_another_process_reaches_the_socket(live_server_process, agent_session):
    cookie = session_cookie(member(agent_session.project, "curator", Role.CURATOR))
    with open_socket(live_server_process, agent_session.pk, cookie) as ws:
        start = last_id(agent_session)
        catch_up(ws, start)  # subscribed and up to date
        began = time.monotonic()
        ingest_in_other_process(agent_session.pk, "The budget is 900 EUR for the whole trip")
        messages = receive_until(ws, lambda ms: any(
            c["op"] == "interaction.kept" for m in ms if m["type"] == "changes" for c in m["changes"]))
        latency = time.monotonic() - began
    received = [c for m in messages if m["type"] == "changes" for c in m["changes"]]
    expected = list(GraphChange.objects.filter(session=agent_session, id__gt=start).order_by("id"))
    assert [c["id"] for c in received] == [c.id for c in expected]  # all, once, in commit order
    assert {c["op"] for c in received} >= {"interaction.received", "memory.created", "interaction.kept"}
    created = next(c for c in received if c["op"] == "memory.created")
    assert created["after"]["content"] == "The budget is 900 EUR for the whole trip"
    assert set(created) == {"id", "project_id", "session_id", "actor", "op", "object_type", "object_id", "before",
                            "after", "created_at"}
    print(f"cross-process delivery incl. subprocess start: {latency:.2f} s")


def test_catch_up_returns_exactly_the_missed_changes_in_pages(live_server_process, agent_session):
    viewer = member(agent_session.project, "viewer")
    interactions_accept(session=agent_session, items=[InteractionInput("user_input", "Hotel near the Bund")],
                        actor="t")
    cursor = last_id(agent_session)
    with transaction.atomic():  # a backlog larger than one page
        for i in range(620):
            change_record(project=agent_session.project, session=agent_session, actor="t", op="session.created",
                          object_type="session", object_id=i)
    missed = list(GraphChange.objects.filter(session=agent_session, id__gt=cursor).order_by("id")
                  .values_list("id", flat=True))
    with open_socket(live_server_process, agent_session.pk, session_cookie(viewer)) as ws:
        messages = catch_up(ws, cursor)
    pages = [m for m in messages if m["type"] == "changes"]
    assert change_ids(messages) == missed
    assert all(len(p["changes"]) <= 500 for p in pages) and len(pages) == 2
    assert all(p["last_change_id"] == p["changes"][-1]["id"] for p in pages)
    assert messages[-1] == {"type": "caught_up", "last_change_id": missed[-1]}


def test_live_changes_during_a_catch_up_are_neither_lost_nor_repeated(live_server_process, agent_session):
    cookie = session_cookie(member(agent_session.project, "viewer"))
    with transaction.atomic():
        for i in range(1500):
            change_record(project=agent_session.project, session=agent_session, actor="t", op="session.created",
                          object_type="session", object_id=i)

    def write_live() -> None:
        for i in range(30):
            with transaction.atomic():
                change_record(project=agent_session.project, session=agent_session, actor="t", op="session.created",
                              object_type="session", object_id=i)
            time.sleep(0.005)

    with open_socket(live_server_process, agent_session.pk, cookie) as ws:
        writer = threading.Thread(target=write_live)
        ws.send(json.dumps({"type": "catch_up", "after": 0}))
        writer.start()
        writer.join()
        everything = list(GraphChange.objects.filter(session=agent_session).order_by("id").values_list("id", flat=True))
        messages = receive_until(ws, lambda ms: set(change_ids(ms)) >= set(everything)
                                 and any(m["type"] == "caught_up" for m in ms))
    ids = change_ids(messages)
    assert len(ids) == len(set(ids)), "no change is sent twice"
    assert sorted(ids) == everything
    before_caught_up = change_ids(messages[: next(i for i, m in enumerate(messages) if m["type"] == "caught_up")])
    assert before_caught_up == sorted(before_caught_up)


def test_viewer_gets_sensitive_content_masked_curator_does_not(live_server_process, agent_session):
    interactions_accept(session=agent_session, items=[InteractionInput("user_input", "My passport number is X1234567")],
                        actor="t")
    Memory.objects.filter(session=agent_session).update(sensitive=True)  # marked after it was logged
    viewer, curator = member(agent_session.project, "viewer"), member(agent_session.project, "cur", Role.CURATOR)
    seen = {}
    for user in (viewer, curator):
        with open_socket(live_server_process, agent_session.pk, session_cookie(user)) as ws:
            seen[user.username] = [c for m in catch_up(ws, 0) if m["type"] == "changes" for c in m["changes"]]
    text = json.dumps(seen["viewer"])
    assert "X1234567" not in text and "passport" not in text
    created = next(c for c in seen["viewer"] if c["op"] == "memory.created")
    assert created["after"]["content"] == "[sensitive]" and created["after"]["sensitive"] is True
    received = next(c for c in seen["viewer"] if c["op"] == "interaction.received")
    assert received["after"]["content"] == "[sensitive]"
    assert "X1234567" in json.dumps(seen["cur"])
    # Live, too: a memory marked sensitive in another process reaches the viewer masked, before and after.
    interactions_accept(session=agent_session, items=[InteractionInput("user_input", "The PIN code is 4321")],
                        actor="t")
    pin = Memory.objects.get(session=agent_session, content__contains="4321")
    with open_socket(live_server_process, agent_session.pk, session_cookie(viewer)) as ws:
        catch_up(ws, last_id(agent_session))
        run_writer(
            "from django.db import transaction\n"
            "from memory.engine.changelog import change_record\n"
            "from memory.engine.snapshots import memory_snapshot\n"
            "from memory.models import Memory\n"
            f"m = Memory.objects.get(pk={pin.pk})\n"
            "with transaction.atomic():\n"
            "    before = memory_snapshot(m)\n"
            "    m.sensitive = True\n"
            "    m.save(update_fields=['sensitive'])\n"
            "    change_record(project=m.project, session=m.session, actor='cli', op='memory.updated',\n"
            "                  object_type='memory', object_id=m.pk, before=before, after=memory_snapshot(m))\n"
        )
        messages = receive_until(ws, lambda ms: "memory.updated" in json.dumps(ms))
    update = next(c for m in messages if m["type"] == "changes" for c in m["changes"] if c["op"] == "memory.updated")
    assert update["before"]["content"] == update["after"]["content"] == "[sensitive]"
    assert "4321" not in json.dumps(messages)


def test_change_made_inside_the_server_process_arrives_once(live_server_process, agent_session):
    """The server's own writes also take the NOTIFY path (no second, local copy)."""
    from urllib.request import Request, urlopen

    from memory.engine.projects import token_issue

    token = token_issue(project=agent_session.project)[1]
    cookie = session_cookie(member(agent_session.project, "viewer"))
    with open_socket(live_server_process, agent_session.pk, cookie) as ws:
        start = last_id(agent_session)
        catch_up(ws, start)
        body = json.dumps({"kind": "user_input", "content": "Dinner reservation at 7 pm on Friday"}).encode()
        request = Request(f"{live_server_process.origin}/api/projects/{agent_session.project.slug}/sessions/"
                          f"{agent_session.pk}/interactions/?wait=true", data=body, method="POST",
                          headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
        with urlopen(request, timeout=30) as response:
            assert response.status == 201
        expected = list(GraphChange.objects.filter(session=agent_session, id__gt=start).order_by("id")
                        .values_list("id", flat=True))
        messages = receive_until(ws, lambda ms: set(change_ids(ms)) >= set(expected))
        time.sleep(0.5)  # a duplicate would arrive right behind
        try:
            messages.append(json.loads(ws.recv(timeout=0.5)))
        except TimeoutError:
            pass
    assert change_ids(messages) == expected


def test_listener_reconnects_and_delivers_what_committed_while_it_was_away(live_server_process, agent_session):
    from django.db import connection

    cookie = session_cookie(member(agent_session.project, "viewer"))
    with open_socket(live_server_process, agent_session.pk, cookie) as ws:
        start = last_id(agent_session)
        catch_up(ws, start)
        with connection.cursor() as cursor:  # cut the listener's connection from the database side
            cursor.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                           "WHERE application_name = %s AND datname = current_database()",
                           [f"contextweaver-live-{live_server_process.process.pid}"])
            assert cursor.fetchone()[0] == 1
        with transaction.atomic():  # committed while nobody listens: no notification will ever say so
            change_record(project=agent_session.project, session=agent_session, actor="t", op="session.created",
                          object_type="session", object_id=1, after={"mark": "while-away"})
        messages = receive_until(ws, lambda ms: "while-away" in json.dumps(ms), timeout=60)
    assert change_ids(messages) == [last_id(agent_session)]
    assert "reconnecting" in live_server_process.log_text()


def test_a_repeat_of_a_sensitive_memory_and_an_edge_quoting_it_reach_a_viewer_masked(live_server_process,
                                                                                      agent_session):
    """`interaction.received` of a repeat (pending: not yet known to be one) and an edge whose rationale quotes
    the value, both written in another process, reach an open viewer socket without the value."""
    interactions_accept(session=agent_session, actor="t", items=[
        InteractionInput("user_input", "The hotel needs a contact number for the booking"),
        InteractionInput("user_input", "My phone is +8613912345678")])
    plain = Memory.objects.get(session=agent_session, content__contains="hotel")
    secret = Memory.objects.get(session=agent_session, content__contains="phone")
    Memory.objects.filter(pk=secret.pk).update(sensitive=True)
    viewer = member(agent_session.project, "viewer")
    with open_socket(live_server_process, agent_session.pk, session_cookie(viewer)) as ws:
        catch_up(ws, last_id(agent_session))
        run_writer(
            "from django.db import transaction\n"
            "from memory.engine.changelog import change_record\n"
            "from memory.engine.snapshots import edge_snapshot, interaction_snapshot\n"
            "from memory.models import Edge, Interaction, Memory\n"
            f"m = Memory.objects.get(pk={secret.pk})\n"
            "with transaction.atomic():\n"
            "    i = Interaction.objects.create(project=m.project, session=m.session, kind='user_input',\n"
            "                                   content='my phone is +8613912345678', occurred_at=m.occurred_at)\n"
            "    change_record(project=m.project, session=m.session, actor='cli', op='interaction.received',\n"
            "                  object_type='interaction', object_id=i.pk, after=interaction_snapshot(i))\n"
            f"    e = Edge.objects.create(project=m.project, session=m.session, source_id={plain.pk}, target=m,\n"
            "                            relation='references', rationale='reuses +8613912345678')\n"
            "    change_record(project=m.project, session=m.session, actor='cli', op='edge.created',\n"
            "                  object_type='edge', object_id=e.pk, after=edge_snapshot(e))\n"
        )
        messages = receive_until(ws, lambda ms: "edge.created" in json.dumps(ms))
    changes = [c for m in messages if m["type"] == "changes" for c in m["changes"]]
    received = next(c for c in changes if c["op"] == "interaction.received")
    edge = next(c for c in changes if c["op"] == "edge.created")
    assert received["after"]["content"] == "[not processed yet]" and edge["after"]["rationale"] == "[sensitive]"
    assert "8613912345678" not in json.dumps(messages)


def test_a_memory_unmarked_sensitive_reaches_an_open_viewer_socket_with_its_content(live_server_process,
                                                                                     agent_session):
    """Issue 45 #5: a curator marks a memory sensitive, then unmarks it (the curation service, in another
    process); an open viewer socket gets the mark masked and the unmark with the text it may read again.
    What is logged while the memory was sensitive stays masked for the viewer."""
    interactions_accept(session=agent_session, items=[InteractionInput(
        "user_input", "The gate code of the Pudong apartment is 7719, valid until Sunday")], actor="t")
    memory = Memory.objects.get(session=agent_session, content__contains="7719")
    curator = member(agent_session.project, "cur", Role.CURATOR)
    viewer = member(agent_session.project, "viewer")

    def curate(sensitive: bool) -> None:
        run_writer(
            "from curation.services import memory_update\n"
            "from memory.models import Memory\n"
            f"m = Memory.objects.get(pk={memory.pk})\n"
            f"memory_update(project=m.project, actor='user:{curator.pk}', memory_id=m.pk, sensitive={sensitive},\n"
            "              reason='a door code')\n"
        )

    def updates(messages) -> list[dict]:
        return [c for m in messages if m["type"] == "changes" for c in m["changes"] if c["op"] == "memory.updated"]

    with open_socket(live_server_process, agent_session.pk, session_cookie(viewer)) as ws:
        catch_up(ws, last_id(agent_session))
        curate(True)
        marked = receive_until(ws, lambda ms: len(updates(ms)) >= 1)
        curate(False)
        unmarked = receive_until(ws, lambda ms: len(updates(ms)) >= 1)
    (mark,) = updates(marked)
    assert mark["after"]["sensitive"] is True and mark["after"]["content"] == "[sensitive]"
    assert "7719" not in json.dumps(marked)
    (unmark,) = updates(unmarked)
    assert unmark["after"]["sensitive"] is False
    assert unmark["after"]["content"] == memory.content  # the viewer may read it again: live, no reload
    assert unmark["before"]["content"] == "[sensitive]"  # recorded while sensitive: stays masked
    # The catch-up (a page that reconnects) and the HTTP change log tell the same.
    with open_socket(live_server_process, agent_session.pk, session_cookie(viewer)) as ws:
        again = [c for m in catch_up(ws, mark["id"] - 1) if m["type"] == "changes" for c in m["changes"]]
    assert [c["after"]["content"] for c in again if c["op"] == "memory.updated"] == ["[sensitive]", memory.content]


def test_an_edge_from_another_session_reaches_the_page_of_the_session_its_old_end_lives_in(live_server_process,
                                                                                          project):
    """A supersede across sessions is recorded with the new memory's session; the old memory's session page
    hears of the edge as it happens too (the listener sends an edge change to the sessions of both ends)."""
    from memory.engine.projects import session_create

    march = session_create(project=project, title="March", actor="t")
    april = session_create(project=project, title="April", actor="t")
    interactions_accept(session=march, items=[InteractionInput("user_input", "My phone number is +1 555 201 3344.")],
                        actor="t")
    (old,) = Memory.objects.filter(session=march)
    cookie = session_cookie(member(project, "viewer"))
    with open_socket(live_server_process, march.pk, cookie) as ws:
        catch_up(ws, last_id(march))
        ingest_in_other_process(april.pk, "Note that my phone number has changed to +1 555 987 6543.")
        messages = receive_until(ws, lambda ms: any(c["op"] == "edge.created" for c in _changes(ms)))
    (created,) = [c for c in _changes(messages) if c["op"] == "edge.created"]
    assert created["session_id"] == april.pk
    assert (created["after"]["source_id"], created["after"]["relation"], created["after"]["needs_review"]) == (
        old.pk, "supersedes", True)
    # Only edges cross over: April's memory and interaction changes stay on April's socket.
    assert {c["object_type"] for c in _changes(messages)} == {"edge"}


def _changes(messages):
    return [c for m in messages if m["type"] == "changes" for c in m["changes"]]
