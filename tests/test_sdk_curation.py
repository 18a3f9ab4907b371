"""The Python client's curation operations (clients/python: curation.py, people.py) on a live server.

A person logs in through the real login page with `login=Login(...)`; the client sends the CSRF token
back on each write. Curators act, viewers read (sensitive text masked) and are refused acts, agents'
tokens are refused curation, a wrong password is a clear error.
"""

from __future__ import annotations

import asyncio

import pytest
from contextweaver_client import AsyncClient, Client, Forbidden, Login, Retry, Unauthorized
from django.contrib.auth import get_user_model

from curation.models import CurationAct
from memory.engine.projects import project_create, session_create, token_issue
from memory.models import Edge, Interaction, InteractionStatus, Membership, Memory, Relation, Role

from .test_maintenance_support import link, remember

pytestmark = pytest.mark.django_db(transaction=True)

FAST = Retry(attempts=2, backoff=0.01, max_wait=0.05)
PASSWORD = "curate-with-care-42"


@pytest.fixture
def world(module_server_url):
    project = project_create(name="Curated", slug="curated")
    session = session_create(project=project, title="Shanghai", actor="test")
    allergy = remember(session, "Xiaoming is allergic to shellfish and peanuts")
    dinner = remember(session, "Booked the dinner at the Dadong roast duck restaurant for Friday")
    phone = remember(session, "My phone number is 13812345678", sensitive=True)
    edge = link(allergy, dinner, Relation.TEMPORAL, confidence=0.4, needs_review=True, rationale="cue 'then'")
    users = get_user_model().objects
    for name, role in (("cora", Role.CURATOR), ("vic", Role.VIEWER)):
        Membership.objects.create(project=project, user=users.create_user(name, password=PASSWORD), role=role)
    return {"project": project, "session": session, "allergy": allergy, "dinner": dinner, "phone": phone,
            "edge": edge, "url": module_server_url}


def person(world, username: str, password: str = PASSWORD) -> Client:
    return Client(world["url"], project="curated", login=Login(username, password), retry=FAST)


def test_a_curator_reviews_decides_draws_and_undoes_through_the_client(world):
    edge, allergy, dinner, session = world["edge"], world["allergy"], world["dinner"], world["session"]
    filtered = Interaction.objects.create(project=world["project"], session=session, kind="user_input",
                                          content="Remember that Xiaoming's passport expires in March 2027",
                                          occurred_at=allergy.occurred_at, status=InteractionStatus.FILTERED,
                                          reason="filtered for the test")
    with person(world, "cora") as cw:
        queue = cw.review_queue(needs_review=True)
        assert queue.count == 1 and queue.results[0].id == edge.pk
        assert queue.results[0].source_label.startswith("Xiaoming is allergic") and queue.results[0].impact == 0

        approved = cw.approve_edge(edge.pk, reason="the booking had to respect the allergy")
        assert approved.edge.status == "approved" and approved.act.kind == "edge.approve"
        cora = get_user_model().objects.get(username="cora")
        assert approved.act.actor == f"user:{cora.pk}" and approved.act.reason.startswith("the booking")
        assert Edge.objects.get(pk=edge.pk).status == "approved"

        relabelled = cw.relabel_edge(edge.pk, "conditional", reason="only if the allergy holds")
        assert relabelled.edge.relation == "conditional"
        undone = cw.undo(relabelled.act.id, reason="it was right before")
        assert undone.act.kind == "undo" and undone.edge.relation == "temporal"

        drawn = cw.draw_edge(dinner.pk, world["phone"].pk, "elaborates", reason="the booking's contact")
        assert drawn.edge.origin == "human" and drawn.edge.status == "approved"
        bulk = cw.decide_edges([drawn.edge.id], "rejected", reason="not really")
        assert [e.status for e in bulk.edges] == ["rejected"] and len(bulk.acts) == 1
        deleted = cw.delete_edge(drawn.edge.id, reason="tidy up")
        assert deleted.edge is None and not Edge.objects.filter(pk=drawn.edge.id).exists()

        marked = cw.update_memory(dinner.pk, sensitive=True, reason="names a restaurant")
        assert marked.memory.sensitive and Memory.objects.get(pk=dinner.pk).sensitive
        assert cw.update_memory(dinner.pk, status="archived").memory.status == "archived"
        assert isinstance(cw.memory_repeats(world["phone"].pk), list)

        promoted = cw.promote(session.pk, filtered.pk)
        assert promoted.status == "kept" and promoted.memory_ids

        entities = cw.entities(q="Xiaoming")
        assert entities.count >= 1 and entities.results[0].mentions >= 1
        renamed = cw.rename_entity(entities.results[0].id, "Xiaoming Li", reason="full name")
        assert renamed.entity.name == "Xiaoming Li" and "Xiaoming" in renamed.entity.aliases

        log = cw.curation_log(limit=50)
        kinds = [act.kind for act in log.results]
        assert log.count == CurationAct.objects.filter(project=world["project"]).count() == len(kinds)
        assert kinds[0] == "entity.rename" and "edge.approve" in kinds and "undo" in kinds
        assert {act.actor_name for act in log.results} == {"cora"}
        assert next(a for a in log.results if a.id == relabelled.act.id).undone


def test_a_viewer_reads_masked_and_may_not_act_async(world):
    async def run() -> None:
        async with AsyncClient(world["url"], project="curated", login=Login("vic", PASSWORD), retry=FAST) as cw:
            queue = await cw.review_queue()
            assert queue.count == 2 and {e.id for e in queue.results} >= {world["edge"].pk}
            with pytest.raises(Forbidden, match="curator role"):
                await cw.approve_edge(world["edge"].pk)
            with pytest.raises(Forbidden):
                await cw.update_memory(world["phone"].pk, sensitive=False)

    link(world["dinner"], world["phone"], Relation.ELABORATES)
    asyncio.run(run())
    edges = {e.pk: e.status for e in Edge.objects.filter(project=world["project"])}
    assert edges[world["edge"].pk] == "inferred" and Memory.objects.get(pk=world["phone"].pk).sensitive
    assert not CurationAct.objects.exists()


def test_the_viewer_sees_the_sensitive_label_masked_and_the_curator_sees_it(world):
    link(world["dinner"], world["phone"], Relation.ELABORATES)
    with person(world, "vic") as viewer, person(world, "cora") as curator:
        as_viewer = {e.target_id: e.target_label for e in viewer.review_queue().results}
        as_curator = {e.target_id: e.target_label for e in curator.review_queue().results}
    assert "13812345678" not in as_viewer[world["phone"].pk]
    assert "13812345678" in as_curator[world["phone"].pk]


def test_agents_tokens_may_not_curate_and_a_wrong_password_is_refused(world):
    token = token_issue(project=world["project"])[1]
    with Client(world["url"], token, project="curated", retry=FAST) as agent:
        with pytest.raises(Forbidden, match="API tokens may not curate"):
            agent.approve_edge(world["edge"].pk)
    with person(world, "cora", password="not-the-password") as wrong:
        with pytest.raises(Unauthorized, match="Login failed") as refused:
            wrong.review_queue()
    assert refused.value.code == "login_failed"
    assert Edge.objects.get(pk=world["edge"].pk).status == "inferred" and not CurationAct.objects.exists()


def test_a_client_is_an_agent_or_a_person_not_both_nor_neither():
    with pytest.raises(ValueError, match="one of the two"):
        Client("http://127.0.0.1:9", "cw_x", project="p", login=Login("a", "b"))
    with pytest.raises(ValueError, match="one of the two"):
        Client("http://127.0.0.1:9", project="p")
    with pytest.raises(ValueError, match="Name the project"):
        Client("http://127.0.0.1:9", "cw_x")
    with pytest.raises(ValueError, match="username and a password"):
        Login("ana", "")
    assert "secret" not in repr(Login("ana", "secret"))
