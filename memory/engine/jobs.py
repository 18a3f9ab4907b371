"""The engine's port to the job queue: what it asks to have done later, and nothing of how.

The engine imports neither the queue (memory/tasks.py, procrastinate) nor the site (request ids): the
app wires a `Scheduler` in at start (memory/apps.py), and a test or a tool may wire another. Each call
is made where the engine would have deferred the job itself, so a queue that enqueues on Django's
connection (procrastinate does) commits or rolls back with the caller's transaction.
"""

from __future__ import annotations

from typing import Protocol


class Scheduler(Protocol):
    def process(self, session_id: int, interaction_ids: list[int]) -> None:
        """Process these new interactions of a session, in order."""

    def layout(self, session_id: int) -> None:
        """Bring the session's stored layout up to date."""

    def retry(self, interaction_id: int) -> None:
        """Run a kept interaction's failed stages again, after a while."""


class SchedulerMissing(RuntimeError):
    """Queue mode without a scheduler: the app's ready() did not run (a script without django.setup())."""


_scheduler: Scheduler | None = None


def scheduler_set(scheduler: Scheduler | None) -> None:
    global _scheduler
    _scheduler = scheduler


def scheduler() -> Scheduler:
    if _scheduler is None:
        raise SchedulerMissing("no job scheduler is wired in: call django.setup() (memory.apps wires the queue)")
    return _scheduler
