"""Background jobs on the durable Postgres queue (procrastinate). Run: manage.py procrastinate worker."""

from __future__ import annotations

from procrastinate import RetryStrategy
from procrastinate.contrib.django import app

from .engine.pipeline import embedding_cache_warm, interaction_mark_failed, interaction_process
from .models import Interaction, InteractionStatus

BATCH_AHEAD = 16

INGEST_QUEUE = "ingest"


def session_lock(session_id: int) -> str:
    """Procrastinate runs jobs sharing a lock one at a time, in the order they were deferred."""
    return f"session:{session_id}"


@app.task(queue=INGEST_QUEUE, retry=RetryStrategy(max_attempts=5, exponential_wait=2), pass_context=False)
def process_interaction(interaction_id: int) -> None:
    """Process one interaction; a failure is written on the interaction, then retried with back-off."""
    try:
        embedding_cache_warm(_pending_neighbours(interaction_id))
        interaction_process(interaction_id=interaction_id)
    except Exception as exc:
        interaction_mark_failed(interaction_id=interaction_id, error=exc)
        raise


def _pending_neighbours(interaction_id: int) -> list[int]:
    """This interaction and the next pending ones of its session, to embed in one batch."""
    session_id = Interaction.objects.filter(pk=interaction_id).values_list("session_id", flat=True).first()
    pending = Interaction.objects.filter(session_id=session_id, status=InteractionStatus.PENDING,
                                         pk__gte=interaction_id)
    return list(pending.order_by("pk").values_list("pk", flat=True)[:BATCH_AHEAD])
