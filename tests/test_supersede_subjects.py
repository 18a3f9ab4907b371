"""A value replaces only a value of the same subject (issue 45, finding 2).

One person's change had superseded another's across the demo's travellers and sessions. Now: the same
person named (or the same speaker, or the session's declared subject) replaces; different people never do;
and where nothing tells whose values they are across sessions, the replacement is proposed for review, to
be applied only by a person's approval (and undone by rejecting it).
"""

from __future__ import annotations

from curation.services import act_undo, edge_update
from eval.subjects import demo_subjects_audit
from memory.engine.ingest import InteractionInput, interactions_accept
from memory.engine.pipeline import interaction_process
from memory.engine.projects import session_create
from memory.models import AgentSession, Edge, GraphChange, Memory, MemoryStatus, Relation


def _say(session: AgentSession, *texts: str) -> list[Memory]:
    accepted = interactions_accept(session=session, actor="test",
                                   items=[InteractionInput(kind="user_input", content=t) for t in texts])
    memories = []
    for entry in accepted:
        interaction = interaction_process(interaction_id=entry.interaction.pk)
        memories.extend(interaction.memories.all())
    return memories


def _supersedes(project) -> list[Edge]:
    return list(Edge.objects.filter(project=project, relation=Relation.SUPERSEDES).order_by("pk"))


def test_the_demo_travel_desk_supersedes_only_within_one_traveller(db):
    """The demo's scenario sessions and nine live episodes per language through the pipeline: every supersede
    joins two memories of one traveller (before the fix: 13 of 28 joined two travellers)."""
    audit = demo_subjects_audit(episodes=9, slug="subjects-test")
    assert audit.wrong == []
    assert audit.right >= 9  # the episodes' own changes (dates moved, a time, a phone) still supersede
    assert (audit.failed, dict(audit.stage_failures)) == (0, {})


def test_one_travellers_budget_does_not_replace_anothers_in_another_session(project):
    lisbon = session_create(project=project, title="Lisbon", task="Plan Ana Silva's Lisbon trip", actor="t")
    vienna = session_create(project=project, title="Vienna", task="Plan Omar Haddad's Vienna trip", actor="t")
    (ana,) = _say(lisbon, "Hi, this is Ana Silva. My budget is 1200 EUR in total.")
    (omar,) = _say(vienna, "Omar Haddad here: my budget is 900 EUR in total.")
    ana.refresh_from_db()
    assert ana.status == MemoryStatus.ACTIVE and omar.status == MemoryStatus.ACTIVE
    assert _supersedes(project) == []


def test_user_in_two_sessions_is_proposed_not_replaced_and_a_person_decides(project):
    first = session_create(project=project, title="March", actor="t")
    second = session_create(project=project, title="April", actor="t")
    (old,) = _say(first, "My phone number is +1 555 201 3344.")
    (new,) = _say(second, "Note that my phone number has changed to +1 555 987 6543.")
    (edge,) = _supersedes(project)
    assert (edge.source_id, edge.target_id, edge.needs_review, edge.status) == (old.pk, new.pk, True, "inferred")
    assert "proposed" in edge.rationale
    old.refresh_from_db()
    assert old.status == MemoryStatus.ACTIVE  # nothing replaced until a person says so

    approved = edge_update(project=project, actor="user:1", edge_id=edge.pk, status="approved")
    old.refresh_from_db()
    assert old.status == MemoryStatus.SUPERSEDED
    assert [c.op for c in approved.act.changes.order_by("id")] == ["edge.updated", "memory.superseded"]

    act_undo(project=project, actor="user:1", act_id=approved.act.pk)
    old.refresh_from_db()
    assert old.status == MemoryStatus.ACTIVE  # the undo puts the proposal back, and the memory with it

    edge_update(project=project, actor="user:1", edge_id=edge.pk, status="rejected")
    old.refresh_from_db()
    assert old.status == MemoryStatus.ACTIVE


def test_rejecting_a_wrong_supersede_restores_the_memory(project, agent_session):
    old, new = _say(agent_session, "My phone number is +1 555 201 3344.",
                    "My phone number has changed to +1 555 987 6543.")
    (edge,) = _supersedes(project)
    assert not edge.needs_review
    old.refresh_from_db()
    assert old.status == MemoryStatus.SUPERSEDED  # one session, nobody named: the session's own value
    edge_update(project=project, actor="user:1", edge_id=edge.pk, status="rejected")
    old.refresh_from_db()
    assert old.status == MemoryStatus.ACTIVE


def test_sessions_that_name_the_same_subject_replace_across_sessions(project):
    first = session_create(project=project, title="March", subject="customer-42", actor="t")
    second = session_create(project=project, title="April", subject="customer-42", actor="t")
    other = session_create(project=project, title="April, someone else", subject="customer-7", actor="t")
    (old,) = _say(first, "My phone number is +1 555 201 3344.")
    _say(other, "Note that my phone number has changed to +1 555 111 2222.")
    old.refresh_from_db()
    assert old.status == MemoryStatus.ACTIVE and _supersedes(project) == []  # another customer's change
    (new,) = _say(second, "Note that my phone number has changed to +1 555 987 6543.")
    old.refresh_from_db()
    assert old.status == MemoryStatus.SUPERSEDED
    (edge,) = _supersedes(project)
    assert (edge.source_id, edge.target_id, edge.needs_review) == (old.pk, new.pk, False)
    # the old memory's own session hears that it was replaced (its page shows it live)
    change = GraphChange.objects.get(op="memory.superseded", object_id=old.pk)
    assert change.session_id == first.pk


def test_the_session_subject_is_set_and_read_through_the_api(api, project):
    answer = api.post(f"/api/projects/{project.slug}/sessions/", {"title": "Kyoto", "subject": " Kenji Sato "},
                      format="json")
    assert answer.status_code == 201 and answer.json()["subject"] == "Kenji Sato"
    assert AgentSession.objects.get(pk=answer.json()["id"]).subject == "Kenji Sato"
    too_long = api.post(f"/api/projects/{project.slug}/sessions/", {"subject": "x" * 201}, format="json")
    assert too_long.status_code == 400 and "subject" in too_long.json()["error"]["fields"]
