"""Background jobs on the durable Postgres queue (procrastinate). Run: manage.py procrastinate worker."""

from __future__ import annotations

from procrastinate import RetryStrategy
from procrastinate.contrib.django import app

from .engine.pipeline import interaction_mark_failed, interaction_process

INGEST_QUEUE = "ingest"


@app.task(queue=INGEST_QUEUE, retry=RetryStrategy(max_attempts=5, exponential_wait=2), pass_context=False)
def process_interaction(interaction_id: int) -> None:
    """Process one interaction; a failure is written on the interaction, then retried with back-off."""
    try:
        interaction_process(interaction_id=interaction_id)
    except Exception as exc:
        interaction_mark_failed(interaction_id=interaction_id, error=exc)
        raise
