"""Background jobs of administration on the durable queue (procrastinate): bulk forgetting."""

from __future__ import annotations

from procrastinate.contrib.django import app

MAINTENANCE_QUEUE = "maintenance"


@app.task(queue=MAINTENANCE_QUEUE, pass_context=False)
def forget_job(job_id: int) -> None:
    """Run one confirmed forget job; the job row records how it ended (no retry: a failed forget
    rolled back whole, and the admin decides whether to run it again)."""
    from .forgetting import forget_job_run

    forget_job_run(job_id)
