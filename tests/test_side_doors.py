"""Side doors sensitive text used to leave by (issue 46), each shut and checked from the outside:
the export's edge rationales and pending interactions, every prompt a configured LLM receives, a summary
made before its member was marked, the idempotency key as an oracle, and the summarise job's answers.

The LLM test captures every request a real `openai` client sends to a local OpenAI-speaking server
(tests/openai_server.py) while the write path, supersede, narration, review and summaries run.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from django.conf import settings
from django.test import override_settings
from django.utils import timezone

from curation.models import CurationAct
from curation.services import act_undo, memory_update
from memory.engine.maintenance.review import review_run
from memory.engine.maintenance.summarise import summarise_run
from memory.models import Edge, Interaction, InteractionStatus, Memory
from memory.visibility import PENDING_MASK, SENSITIVE_MASK

from .conftest import interactions_url
from .openai_server import FakeOpenAI
from .test_maintenance_support import link, remember

pytestmark = pytest.mark.django_db(transaction=True)

PASSPORT = "XK7781234"
DOCTOR = "+8613911112222"


# --- 1. the export ---------------------------------------------------------------------------------------


def test_the_export_masks_edge_rationales_and_pending_repeats_for_viewers_and_tokens(project, agent_session,
                                                                                     readers):
    plain = remember(agent_session, "We travel with a passport each")
    secret = remember(agent_session, f"My passport number is {PASSPORT}", sensitive=True)
    link(plain, secret, "elaborates", rationale=f"reuses {PASSPORT}")
    Interaction.objects.create(project=project, session=agent_session, kind="user_input",
                               content=f"Again, the passport is {PASSPORT}", status=InteractionStatus.PENDING,
                               occurred_at=timezone.now())

    for reader in ("viewer", "token"):
        for file in ("jsonl", "graphml"):
            answer = readers[reader].get(f"/api/projects/{project.slug}/export/?file={file}")
            assert answer.status_code == 200, answer.content
            body = b"".join(answer.streaming_content) if answer.streaming else answer.content
            assert PASSPORT.encode() not in body, (reader, file)
        rows = [json.loads(line) for line in
                b"".join(readers[reader].get(f"/api/projects/{project.slug}/export/").streaming_content).splitlines()]
        [edge] = [r for r in rows if r["type"] == "edge"]
        assert edge["rationale"] == SENSITIVE_MASK
        [pending] = [r for r in rows if r["type"] == "interaction" and r["status"] == "pending"]
        assert pending["content"] == PENDING_MASK

    admin = b"".join(readers["admin"].get(f"/api/projects/{project.slug}/export/").streaming_content)
    assert f"reuses {PASSPORT}".encode() in admin  # who may see it gets it whole


# --- 2. every LLM prompt ---------------------------------------------------------------------------------


@pytest.fixture
def llm(openai_server: FakeOpenAI) -> Iterator[FakeOpenAI]:
    """The OpenAI provider pointed at the capturing server; unscripted answers are errors, so every path
    falls back to its rules after sending (what it sent is what the test reads)."""
    memory = {**settings.MEMORY, "LLM": "openai", "LLM_MODEL": "gpt-test", "LLM_TIMEOUT": 0.5,
              "LLM_MAX_RETRIES": 0, "EMBEDDER": "hashing", "INGEST_MODE": "inline"}
    with override_settings(MEMORY=memory):
        yield openai_server


def _sent(server: FakeOpenAI) -> str:
    return "\n".join(json.dumps(r.body, ensure_ascii=False) for r in server.chat_requests)


def test_no_prompt_carries_a_sensitive_memory(project, agent_session, readers, llm):
    url = interactions_url(agent_session) + "?wait=true"
    secrets = [f"My passport number is {PASSPORT}, keep it for the visa", f"The doctor's phone is {DOCTOR}"]
    for text in secrets:
        assert readers["token"].post(url, {"kind": "user_input", "content": text}, format="json").status_code == 201
    for memory in Memory.objects.filter(project=project):
        memory_update(project=project, actor="user:1", memory_id=memory.pk, sensitive=True)
    llm.requests.clear()

    later = ["The visa appointment needs the passport on Monday at the consulate",  # linking, supersede
             f"Please call the doctor again at {DOCTOR} about the vaccine",  # repeats a sensitive value
             "The doctor's phone changed, the clinic moved to Pudong"]
    for text in later:
        assert readers["token"].post(url, {"kind": "user_input", "content": text}, format="json").status_code == 201
    recall = readers["curator"].post(f"/api/projects/{project.slug}/recall/",
                                     {"query": "what about the passport and the doctor?", "params": {"narrate": True}},
                                     format="json")
    assert recall.status_code == 200, recall.content
    plain = Memory.objects.filter(project=project, sensitive=False).order_by("id")
    secret = Memory.objects.filter(project=project, sensitive=True).first()
    link(secret, plain[0], "elaborates", needs_review=True, confidence=0.3)
    link(plain[0], plain[1], "elaborates", needs_review=True, confidence=0.3)
    review_run(project=project, actor="user:1")
    summarise_run(project=project, actor="user:1", memory_ids=[secret.pk, plain[0].pk])

    assert llm.chat_requests, "the LLM paths ran"  # scoring and linking of the later turns at least
    sent = _sent(llm)
    assert PASSPORT not in sent and DOCTOR not in sent and "13911112222" not in sent
    assert "visa appointment" in sent  # what may be sent still is


# --- 3. a summary made before the mark -------------------------------------------------------------------


def test_marking_a_member_reaches_its_summary_and_the_undo_puts_it_back(project, agent_session, readers):
    members = [remember(agent_session, f"The hotel booking code is {PASSPORT}"),
               remember(agent_session, "The hotel is near the Bund, three nights")]
    summary = Memory.objects.get(pk=summarise_run(project=project, actor="t", memory_ids=[m.pk for m in members],
                                                  use_llm=False).ids["summary"][0])
    assert PASSPORT in summary.content and not summary.sensitive

    outcome = memory_update(project=project, actor="user:1", memory_id=members[0].pk, sensitive=True)

    summary.refresh_from_db()
    assert summary.sensitive
    graph = readers["viewer"].get(f"/api/projects/{project.slug}/sessions/{agent_session.pk}/graph/").json()
    assert PASSPORT not in json.dumps(graph)
    recall = readers["token"].post(f"/api/projects/{project.slug}/recall/", {"query": "hotel booking code"},
                                   format="json")
    assert PASSPORT not in recall.content.decode()
    assert sorted(c.object_id for c in outcome.act.changes.all()) == sorted([members[0].pk, summary.pk])

    act_undo(project=project, actor="user:1", act_id=outcome.act.pk)
    summary.refresh_from_db()
    members[0].refresh_from_db()
    assert not summary.sensitive and not members[0].sensitive
    assert CurationAct.objects.filter(undoes=outcome.act).exists()


# --- 4. idempotency keys ---------------------------------------------------------------------------------


def test_an_idempotency_key_answers_alike_whatever_guess_comes_with_it(project, agent_session, readers):
    url = interactions_url(agent_session) + "?wait=true"
    first = readers["token"].post(url, {"kind": "user_input", "content": "My card PIN is 4821, never share it",
                                        "idempotency_key": "turn-7"}, format="json")
    assert first.status_code == 201
    [memory_id] = first.json()["interactions"][0]["memory_ids"]
    memory_update(project=project, actor="user:1", memory_id=memory_id, sensitive=True)

    answers = []
    for guess in ("My card PIN is 4821, never share it", "My card PIN is 0000, never share it"):
        answer = readers["token"].post(url, {"kind": "user_input", "content": guess, "idempotency_key": "turn-7"},
                                       format="json")
        answers.append((answer.status_code, answer.json()))
    assert answers[0] == answers[1]
    assert answers[0][0] == 409 and "differs" not in json.dumps(answers[0][1])

    # one who may see the content keeps the usual answer: a true retry is a duplicate
    same = readers["curator"].post(url, {"kind": "user_input", "content": "My card PIN is 4821, never share it",
                                         "idempotency_key": "turn-7"}, format="json")
    assert same.status_code == 200 and same.json()["interactions"][0]["duplicate"] is True
    assert Interaction.objects.filter(session=agent_session).count() == 1


# --- 7. the summarise job --------------------------------------------------------------------------------


def test_summarise_tells_a_token_nothing_of_sensitive_memories(project, agent_session, readers):
    secret = remember(agent_session, "Dr. Okonkwo prescribed the insulin dose", sensitive=True)
    shown = [remember(agent_session, "The hotel is near the Bund"), remember(agent_session, "The Bund walk at night")]
    url = f"/api/projects/{project.slug}/maintenance/summarise/"

    unknown = readers["token"].post(url, {"entity": "Nobody Atall", "dry_run": True}, format="json")
    named_only_in_secret = readers["token"].post(url, {"entity": "Okonkwo", "dry_run": True}, format="json")
    assert named_only_in_secret.status_code == unknown.status_code == 400
    assert named_only_in_secret.json()["error"]["code"] == unknown.json()["error"]["code"]

    dry = readers["token"].post(url, {"session_id": agent_session.pk, "dry_run": True}, format="json")
    assert dry.status_code == 200, dry.content
    assert sorted(dry.json()["ids"]["members"]) == sorted(m.pk for m in shown)
    assert secret.pk not in dry.json()["ids"]["members"]
    admin = readers["admin"].post(url, {"session_id": agent_session.pk, "dry_run": True}, format="json")
    assert secret.pk in admin.json()["ids"]["members"]  # the rule hides, it does not change the job
    assert Edge.objects.count() == 0  # dry runs wrote nothing


# --- what a mark reaches when it is said again -----------------------------------------------------------


@pytest.mark.parametrize(("value", "private"), [
    ("+8613800138000", True), ("138-0013-8000", True), (PASSPORT, True), ("ana.silva@example.com", True),
    ("2027-10-12", False), ("08:00", False), ("4000 CNY", False), ("docs/", False), ("read_file", False)])
def test_only_distinctive_values_carry_a_mark_to_new_memories(value, private):
    from memory.engine.sensitivity import distinctive

    assert distinctive(value) is private


def test_a_new_memory_repeating_a_marked_value_is_born_sensitive_and_a_shared_path_is_not(project, agent_session,
                                                                                        readers):
    url = interactions_url(agent_session) + "?wait=true"
    first = readers["token"].post(url, {"kind": "user_input",
                                        "content": f"Read docs/setup.md; my doctor's phone is {DOCTOR}"},
                                  format="json").json()["interactions"][0]
    [marked] = first["memory_ids"]
    memory_update(project=project, actor="user:1", memory_id=marked, sensitive=True)

    rows = {}
    for name, text in (("repeat", f"Call {DOCTOR} tomorrow morning about the test results"),
                       ("path", "Then update docs/setup.md with the new install steps")):
        rows[name] = readers["token"].post(url, {"kind": "user_input", "content": text},
                                           format="json").json()["interactions"][0]
    repeat = Memory.objects.get(pk=rows["repeat"]["memory_ids"][0])
    path = Memory.objects.get(pk=rows["path"]["memory_ids"][0])
    assert repeat.sensitive and not path.sensitive
    shown = readers["viewer"].get(f"/api/projects/{project.slug}/sessions/{agent_session.pk}/interactions/").json()
    assert DOCTOR not in json.dumps(shown) and "docs/setup.md" in json.dumps(shown)
