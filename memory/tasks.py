"""Background jobs on the durable Postgres queue (procrastinate). Run: manage.py procrastinate worker."""

from __future__ import annotations

import logging

from procrastinate import RetryStrategy
from procrastinate.contrib.django import app
from procrastinate.exceptions import AlreadyEnqueued

from contextweaver_site.request_id import bound as bound_request_id
from contextweaver_site.request_id import current as current_request_id

from .engine.pipeline import interaction_mark_failed, interaction_process_with_followers, interaction_retry
from .errors import NotRetryable, ProcessingFailed
from .models import AgentSession, Interaction

logger = logging.getLogger(__name__)

FOLLOWERS = 15  # pending interactions of the same session processed along with a job's own

INGEST_QUEUE = "ingest"


def session_lock(session_id: int) -> str:
    """Procrastinate runs jobs sharing a lock one at a time, in the order they were deferred."""
    return f"session:{session_id}"


@app.task(queue=INGEST_QUEUE, retry=RetryStrategy(max_attempts=5, exponential_wait=2), pass_context=False)
def process_interaction(interaction_id: int, request_id: str = "") -> None:
    """Process one interaction (with the pending ones after it, in one batch); a failure is written on
    the interaction, then retried with back-off. A job whose interaction no longer exists (forgotten
    with its project) has nothing to do. `request_id`: the HTTP request's that queued it, for the logs."""
    with bound_request_id(request_id):
        _process(interaction_id)


def _process(interaction_id: int) -> None:
    try:
        interaction_process_with_followers(interaction_id=interaction_id, followers=FOLLOWERS)
    except Interaction.DoesNotExist:
        logger.info("interaction %s no longer exists; nothing to process", interaction_id)
    except ProcessingFailed:
        raise  # recorded on the interaction already
    except Exception as exc:
        interaction_mark_failed(interaction_id=interaction_id, error=exc)
        raise


RETRY_AFTER_SECONDS = 30  # the first retry of failed stages; the queue's back-off spaces the later ones


@app.task(queue=INGEST_QUEUE, retry=RetryStrategy(max_attempts=4, exponential_wait=30), pass_context=False)
def retry_interaction(interaction_id: int) -> None:
    """Run a kept interaction's failed stages again (engine/stages.py); raises while some still fail, so the
    queue tries again with back-off. After the last attempt they stay recorded for a person's retry."""
    try:
        interaction = interaction_retry(interaction_id=interaction_id)
    except (Interaction.DoesNotExist, NotRetryable):
        return  # forgotten meanwhile, or retried already by a person
    if interaction.stage_errors:
        still = ", ".join(sorted(interaction.stage_errors))
        raise ProcessingFailed(f"interaction {interaction_id}: stages still failing: {still}")


def retry_job(interaction_id: int) -> None:
    """Queue the retry of an interaction's failed stages, unless one is waiting already."""
    try:
        retry_interaction.configure(queueing_lock=f"retry:{interaction_id}", lock=session_lock_of(interaction_id),
                                    schedule_in={"seconds": RETRY_AFTER_SECONDS}).defer(interaction_id=interaction_id)
    except AlreadyEnqueued:
        pass


def session_lock_of(interaction_id: int) -> str:
    session_id = Interaction.objects.filter(pk=interaction_id).values_list("session_id", flat=True).first()
    return session_lock(session_id or 0)


@app.task(queue=INGEST_QUEUE, retry=RetryStrategy(max_attempts=3, exponential_wait=2), pass_context=False)
def update_layout(session_id: int) -> None:
    """Store the positions of a session's new memories (or recompute a stale layout): the graph read only
    reads them. A session whose memories are gone with it has nothing to lay out."""
    from .engine.layout import layout_update

    if AgentSession.objects.filter(pk=session_id).exists():
        logger.debug("layout of session %s: %s", session_id, layout_update(session_id))


class QueueScheduler:
    """The engine's job port (engine/jobs.py) on this queue; wired in by memory/apps.py."""

    def process(self, session_id: int, interaction_ids: list[int]) -> None:
        # One lock per session: several workers run sessions in parallel, a session's jobs in order
        # (each memory links to the one before it, so two of one session must not interleave).
        job = process_interaction.configure(lock=session_lock(session_id))
        request_id = current_request_id()  # the worker logs under the id of the request that brought it
        for interaction_id in interaction_ids:
            job.defer(interaction_id=interaction_id, request_id=request_id)

    def layout(self, session_id: int) -> None:
        layout_job(session_id)

    def retry(self, interaction_id: int) -> None:
        retry_job(interaction_id)


def layout_job(session_id: int) -> None:
    """Queue the session's layout update unless one is already waiting (its queueing lock)."""
    try:
        update_layout.configure(queueing_lock=f"layout:{session_id}").defer(session_id=session_id)
    except AlreadyEnqueued:
        pass  # the waiting job will see this commit's memories too
