"""The world of tests/test_masking_every_exit.py (no tests here): one project whose sensitive content is
reachable from every kind of object the visibility rule names, made through the engine's own paths.

Built once for the module and committed (the live server, the websocket and the SDK read it from other
processes), deleted afterwards.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from administration.models import ForgetJob
from curation.entities import entity_rename
from curation.services import memory_update
from memory.engine.changelog import change_record
from memory.engine.ingest import InteractionInput, interactions_accept
from memory.engine.maintenance.summarise import summarise_run
from memory.engine.projects import project_create, session_create, token_issue
from memory.engine.recall import RecallQuery, memory_recall
from memory.engine.snapshots import edge_snapshot, interaction_snapshot
from memory.engine.store import item_put
from memory.models import (
    AgentSession,
    Entity,
    Interaction,
    InteractionStatus,
    Membership,
    Memory,
    Project,
    Role,
    StoreItem,
)

from .test_maintenance_support import link

MARK_CONTENT = "ZQ90817263"  # the passport number: in the sensitive memory, its interactions, summary, store value
MARK_ENTITY = "Quarrington"  # "Dr. Vexillon Quarrington": an entity only sensitive memories mention
MARK_ENTITY_FIRST = "Vexillon"
MARK_RATIONALE = "Ptarmigan"  # only in the rationale of the edge quoting the value
MARKS = {"content": MARK_CONTENT, "entity": MARK_ENTITY, "entity (first name)": MARK_ENTITY_FIRST,
         "rationale": MARK_RATIONALE}
SECRET_TEXT = f"Dr. Vexillon Quarrington keeps my passport number {MARK_CONTENT} for the visa application"
PLAIN_TEXT = "We travel to Lisbon in May and each of us needs a valid passport for the trip"
PLAIN_MARK = "Lisbon"  # a plain memory's word: every reader sees it (the exits are not simply empty)
RATIONALE = f"reuses {MARK_CONTENT} ({MARK_RATIONALE} rule)"
STORE_NAMESPACE = ["exits", "travellers"]
STORE_VALUE = {"text": f"Passport {MARK_CONTENT} of the traveller expires in March 2031", "digits": 90817263}
SLUG = "exits"
PASSWORD = "a-long-password-1"


def leaks(text: str) -> list[str]:
    """The marks found in `text` (by name)."""
    return [name for name, mark in MARKS.items() if mark in text]


def snippet(text: str, width: int = 90) -> str:
    """Where the first mark sits in `text`, with some context either side."""
    at = min((text.find(mark) for mark in MARKS.values() if mark in text), default=-1)
    if at < 0:
        return ""
    return text[max(0, at - width):at + width].replace("\n", " ")


def leak_report(where: str, text: str) -> str:
    return f"{where}: leaks {leaks(text)}: …{snippet(text)}…"


@dataclass
class World:
    project: Project
    session: AgentSession
    store_session: AgentSession
    ids: dict[str, int]
    token: str  # the project's agent token (raw)
    users: dict[str, Any]  # viewer, curator, admin
    values: dict[str, object] = field(default_factory=dict)  # path parameters for the URL patterns
    cookies: dict[str, str] = field(default_factory=dict)  # committed login sessions (viewer, curator)


def _accept(session: AgentSession, text: str) -> Interaction:
    """One interaction through the write path, processed inline as the pipeline does (autocommit: at once)."""
    (accepted,) = interactions_accept(session=session, actor="test", items=[InteractionInput("user_input", text)])
    interaction = Interaction.objects.get(pk=accepted.interaction.pk)
    assert interaction.status != InteractionStatus.PENDING, f"not processed: {interaction.status}"
    return interaction


def build_world() -> World:
    project = project_create(name="Exits trips", slug=SLUG)
    session = session_create(project=project, title="Exits trip to Lisbon", task="Plan a trip to Lisbon in May",
                             actor="test")
    users = {}
    for role in (Role.VIEWER, Role.CURATOR, Role.ADMIN):
        users[str(role)] = get_user_model().objects.create_user(f"exits-{role}", password=PASSWORD)
        Membership.objects.create(project=project, user=users[str(role)], role=role)
    curator = f"user:{users['curator'].pk}"
    plain_source = _accept(session, PLAIN_TEXT)
    (plain,) = Memory.objects.filter(sources=plain_source)
    budget_source = _accept(session, "The budget for the whole Lisbon trip is 1800 EUR")
    (budget,) = Memory.objects.filter(sources=budget_source)
    source = _accept(session, SECRET_TEXT)
    (secret,) = Memory.objects.filter(sources=source)
    assert not secret.sensitive, "marked later, so the log holds its text as created"
    assert Entity.objects.filter(project=project, name__contains=MARK_ENTITY).exists(), "the entity is extracted"
    repeat = _accept(session, SECRET_TEXT)  # an exact repeat: filtered and attached to the memory
    assert repeat.status == InteractionStatus.FILTERED and secret.sources.filter(pk=repeat.pk).exists(), (
        repeat.status, repeat.reason)
    with transaction.atomic():  # a repeat not processed yet (the queue has not reached it)
        pending = Interaction.objects.create(project=project, session=session, kind="user_input",
                                             content=f"Once more: my passport number is {MARK_CONTENT}",
                                             occurred_at=timezone.now(), status=InteractionStatus.PENDING)
        change_record(project=project, session=session, actor="test", op="interaction.received",
                      object_type="interaction", object_id=pending.pk, after=interaction_snapshot(pending))
    with transaction.atomic():  # an edge whose rationale quotes the value, waiting for review
        edge = link(plain, secret, "elaborates", rationale=RATIONALE, needs_review=True, confidence=0.4)
        change_record(project=project, session=session, actor="engine", op="edge.created", object_type="edge",
                      object_id=edge.pk, after=edge_snapshot(edge))
    summary_id = summarise_run(project=project, actor="test", memory_ids=[secret.pk, plain.pk],
                               use_llm=False).ids["summary"][0]
    assert MARK_CONTENT in Memory.objects.get(pk=summary_id).content

    put = item_put(project=project, namespace=STORE_NAMESPACE, key="passport", value=STORE_VALUE, actor="test",
                   wait=True)
    item = StoreItem.objects.get(pk=put.item.pk)
    store_memory = Memory.objects.filter(sources=item.interaction_id).first()
    assert store_memory is not None, "the store value made a memory"
    with transaction.atomic():  # the store memory hangs off the trip session's graph (a ghost there)
        far = link(budget, store_memory, "references", rationale=RATIONALE)
        change_record(project=project, session=session, actor="engine", op="edge.created", object_type="edge",
                      object_id=far.pk, after=edge_snapshot(far))

    recall = memory_recall(project=project, actor=curator, query=RecallQuery(
        f"passport {MARK_CONTENT} of Dr. {MARK_ENTITY_FIRST} {MARK_ENTITY}", k=4, session=session,
        include_sensitive=True))
    assert secret.pk in recall.trace.touched_ids
    other = memory_recall(project=project, actor=curator,
                          query=RecallQuery("budget of the Lisbon trip", k=3, session=session))

    # Marked sensitive now: the mark reaches the summary; the store memory is marked too.
    mark = memory_update(project=project, actor=curator, memory_id=secret.pk, sensitive=True, reason="a passport")
    memory_update(project=project, actor=curator, memory_id=store_memory.pk, sensitive=True, reason="a passport")
    assert Memory.objects.get(pk=summary_id).sensitive
    entity = Entity.objects.get(project=project, name__contains=MARK_ENTITY)
    entity_rename(project=project, actor=curator, entity_id=entity.pk,  # a curator's act on the hidden entity
                  name=f"Dr. {MARK_ENTITY_FIRST} {MARK_ENTITY}")

    api_token, token = token_issue(project=project)
    job = ForgetJob.objects.create(project=project, actor="t", mode="soft", expect_memories=0, state="done")
    ids = {"plain": plain.pk, "budget": budget.pk, "secret": secret.pk, "summary": summary_id,
           "store_memory": store_memory.pk, "source": source.pk, "repeat": repeat.pk, "pending": pending.pk,
           "plain_source": plain_source.pk, "store_interaction": item.interaction_id, "edge": edge.pk,
           "far_edge": far.pk, "recall": recall.trace.pk, "other_recall": other.trace.pk, "act": mark.act.pk,
           "job": job.pk, "entity": entity.pk}
    store_session = AgentSession.objects.get(pk=item.session_id)
    world = World(project, session, store_session, ids, token, users)
    world.values = {"project_slug": project.slug, "session_id": session.pk, "interaction_id": source.pk,
                    "memory_id": secret.pk, "memory2_id": plain.pk, "recall_id": recall.trace.pk,
                    "other_id": other.trace.pk, "job_id": job.pk, "entity_id": entity.pk, "act_id": mark.act.pk,
                    "edge_id": edge.pk, "user_id": users["viewer"].pk, "object_id": users["viewer"].pk,
                    "token_id": api_token.pk, "uidb64": "MQ", "token": "not-a-real-token"}
    return world


def world_delete(world: World) -> None:
    world.project.delete()
    for user in world.users.values():
        user.delete()
