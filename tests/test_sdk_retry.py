"""The Python client's `retry_interaction` (clients/python) against a live uvicorn server on the test database.

What failed of an interaction is run again through both clients: a kept one's failed stages, and a failed
interaction through the whole write path; the results carry `error`, `stage_errors` and `attempts`; nothing
failed is a Conflict, a viewer is refused. A module of its own: its server processes interactions (the retry
runs the write path), which only one test per module server may rely on (conftest.module_server_url).
"""

from __future__ import annotations

import asyncio

import pytest
from contextweaver_client import AsyncClient, Client, Conflict, Forbidden, Login, NotFound, Retry
from django.contrib.auth import get_user_model

from memory.engine.projects import project_create, token_issue
from memory.models import GraphChange, Interaction, InteractionStatus, Membership, Role

pytestmark = pytest.mark.django_db(transaction=True)

FAST = Retry(attempts=3, backoff=0.01, max_wait=0.05)
PASSWORD = "retry-with-care-42"
STAGE_REASON = "RuntimeError: the entity index was unavailable"
ERROR = "ConnectionError: embedding service unreachable"


def test_what_failed_is_retried_through_both_clients(module_server_url):
    project = project_create(name="SDK retry", slug="sdk-retry")
    token = token_issue(project=project)[1]
    viewer = get_user_model().objects.create_user("vera", password=PASSWORD)
    Membership.objects.create(project=project, user=viewer, role=Role.VIEWER)

    with Client(module_server_url, token, project="sdk-retry", retry=FAST) as cw:
        session = cw.create_session(title="Retries", task="Plan a trip to Lisbon within a budget",
                                    subject="Ana Silva")
        assert session.subject == "Ana Silva"
        kept = cw.send(session.id, "user_input", "My budget for the Lisbon trip is 900 EUR in total", wait=True)
        assert kept.status == "kept" and kept.error == "" and kept.stage_errors == {}
        # The memory was kept without its entities (what a failing stage leaves: engine/stages.py).
        Interaction.objects.filter(pk=kept.id).update(stage_errors={"entities": STAGE_REASON})
        before = cw.interaction(session.id, kept.id)
        assert before.stage_errors == {"entities": STAGE_REASON} and before.attempts == 0
        assert cw.sessions()[0].failed_count == 1

        retried = cw.retry_interaction(session.id, kept.id)
        assert retried.id == kept.id and retried.status == "kept" and retried.stage_errors == {}
        assert retried.memory_ids == kept.memory_ids
        assert GraphChange.objects.filter(op="interaction.retried", object_id=kept.id).count() == 1
        with pytest.raises(Conflict) as nothing:  # nothing of it failed any more
            cw.retry_interaction(session.id, kept.id)
        assert nothing.value.status == 409 and nothing.value.code == "not_retryable"
        with pytest.raises(NotFound):
            cw.retry_interaction(session.id, 999999)

    failed = Interaction.objects.create(
        project=project, session_id=session.id, kind="user_input", occurred_at=retried.occurred_at,
        content="I am allergic to shellfish, so no seafood dinners please", status=InteractionStatus.FAILED,
        error=ERROR, attempts=2)

    async def through_asyncio():
        async with AsyncClient(module_server_url, token, project="sdk-retry", retry=FAST) as client:
            seen = await client.interaction(session.id, failed.pk)
            return seen, await client.retry_interaction(session.id, failed.pk), await client.sessions()

    seen, again, sessions = asyncio.run(through_asyncio())
    assert (seen.status, seen.error, seen.attempts) == ("failed", ERROR, 2)
    assert again.status == "kept" and again.error == "" and again.memory_ids and again.attempts == 2
    assert sessions[0].failed_count == 0

    still = Interaction.objects.create(
        project=project, session_id=session.id, kind="observation", occurred_at=retried.occurred_at,
        content="The hotel booking service timed out", status=InteractionStatus.FAILED, error=ERROR, attempts=1)
    with Client(module_server_url, project="sdk-retry", login=Login("vera", PASSWORD), retry=FAST) as person:
        with pytest.raises(Forbidden):  # viewers read; curators, admins and the agent retry
            person.retry_interaction(session.id, still.pk)
        assert person.interaction(session.id, still.pk).error == ERROR
    assert Interaction.objects.get(pk=still.pk).status == InteractionStatus.FAILED
