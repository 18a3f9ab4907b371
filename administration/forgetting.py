"""Bulk forgetting for project admins: dry run, confirmation, a background job with progress, the audit.

1. `forget_preview`: the real forget run in a transaction that is rolled back (engine/maintenance/
   forget.py), so its counts are what the job will do, plus a sample of the selected memories, the
   interactions deleted or emptied (by status) and the sessions deleted whole (a hard forget whose
   filter names sessions and nothing else: ForgetFilter.whole_sessions).
2. `forget_job_start`: the admin typed the project's slug and the count they were shown still holds;
   a ForgetJob row is written and the job handed to the queue (or, without a worker, a thread).
3. `forget_job_run`: the forget itself (one transaction), then VACUUM of the tables it touched (deleted
   rows stay in the data files until then), then the verification scan (verify.py) over every table of
   the project for the forgotten memories' distinctive strings. Progress is written on a connection of
   its own, so the page sees it while the forget's transaction is still open.
The filter as typed is kept only while the job waits or runs; the audit keeps the masked one.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import timedelta

import psycopg
from django.db import connection, connections, transaction
from django.db.models import Count
from django.utils import timezone

from memory.conf import memory_settings
from memory.engine.maintenance.common import REDACTED
from memory.engine.maintenance.forget import ForgetFilter, forget_run, forget_selection
from memory.engine.maintenance.verify import distinctive_strings, residues_scan
from memory.errors import JobRunning, MemoryEngineError, ValidationFailed
from memory.live.listener import conninfo
from memory.models import AgentSession, Interaction, InteractionStatus, Memory, Project
from memory.selectors import actor_names

from .models import ForgetJob, JobState

logger = logging.getLogger(__name__)

SAMPLE_SIZE = 5
PROGRESS_SECONDS = 0.25  # at most this often a progress row is written
ACTIVE_STATES = (JobState.QUEUED, JobState.RUNNING)
STALE_AFTER = timedelta(hours=6)
# What a hard forget deletes from or rewrites; VACUUM after it, so the deleted text leaves the data files.
VACUUMED_TABLES = ("memory_memory", "memory_edge", "memory_entitymention", "memory_entity", "memory_memoryembedding",
                   "memory_interaction", "memory_recalltrace", "memory_graphchange", "memory_memory_sources",
                   "memory_agentsession", "memory_storeitem", "memory_nodeposition", "memory_sessionlayout",
                   "curation_curationact")


def forget_preview(project: Project, actor: str, selection: ForgetFilter, mode: str) -> dict:
    """What the forget would do, counted by running it and rolling it back; a few of its memories; the
    interactions it deletes (those of the sessions deleted whole) and empties, by status; and the sessions
    it deletes whole, named. Read after the rollback, so as they are now."""
    report = forget_run(project=project, actor=actor, selection=selection, mode=mode, dry_run=True)
    touched = sorted(set(report.ids.get("deleted" if mode == "hard" else "forgotten", [])))
    sample = Memory.objects.filter(pk__any_of=touched[:SAMPLE_SIZE]).select_related("session").order_by("id")
    sessions = sorted(set(report.ids.get("sessions_deleted", [])))
    emptied = sorted(set(report.ids.get("interactions_redacted", [])))
    return {"mode": mode, "memories": report.counts["memories"], "counts": dict(sorted(report.counts.items())),
            "sample": [{"id": m.pk, "kind": m.kind, "session_id": m.session_id, "session": str(m.session),
                        "occurred_at": m.occurred_at, "sensitive": m.sensitive, "content": m.content}
                       for m in sample],
            "interactions": {"deleted": _by_status(Interaction.objects.filter(session_id__in=sessions)),
                             "emptied": _by_status(Interaction.objects.filter(pk__any_of=emptied))},
            "deleted_sessions": [
                {"id": s.pk, "name": str(s), "memories": s.n_memories, "interactions": s.n_interactions}
                for s in AgentSession.objects.filter(project=project, pk__in=sessions).order_by("id").annotate(
                    n_memories=Count("memories", distinct=True), n_interactions=Count("interactions", distinct=True))]}


def _by_status(interactions) -> dict[str, int]:
    counted = dict(interactions.order_by().values_list("status").annotate(n=Count("id")))
    return {status: counted.get(status, 0) for status in InteractionStatus.values}


def forget_job_start(project: Project, actor: str, selection: ForgetFilter, mode: str, *, confirm: str,
                     expect_memories: int) -> ForgetJob:
    """Queue a confirmed forget. Refused (nothing written) on a wrong confirmation, a selection that
    changed since the dry run, or another forget of the project still running."""
    if confirm != project.slug:
        raise ValidationFailed(f"type the project's slug ({project.slug}) to confirm",
                               {"confirm": [f"must be {project.slug!r}"]})
    count = len(forget_selection(project, selection, mode=mode))
    if count != expect_memories:
        raise ValidationFailed(f"the selection now holds {count} memories, not the {expect_memories} of the dry "
                               "run; run the dry run again", {"expect_memories": [f"selection holds {count}"]})
    with transaction.atomic():
        Project.objects.select_for_update().filter(pk=project.pk).first()  # one start at a time per project
        _stale_jobs_end(project)
        running = ForgetJob.objects.filter(project=project, state__in=ACTIVE_STATES).order_by("id").first()
        if running is not None:
            raise JobRunning(f"forget job #{running.pk} of this project has not ended yet; wait for it")
        job = ForgetJob.objects.create(project=project, actor=actor, mode=mode, filter=selection.audit_json(),
                                       pending_filter=selection.to_json(), expect_memories=count, total=count)
        transaction.on_commit(lambda: _dispatch(job.pk))
    return job


def _stale_jobs_end(project: Project) -> None:
    """A job still waiting or running after STALE_AFTER lost its worker (stopped mid-run: its transaction
    rolled back); it is marked failed, so it does not block the project's forgetting for ever."""
    ForgetJob.objects.filter(project=project, state__in=ACTIVE_STATES,
                             created_at__lt=timezone.now() - STALE_AFTER).update(
        state=JobState.FAILED, phase=JobState.FAILED, pending_filter=None, finished_at=timezone.now(),
        error="no end after 6 hours: its worker stopped; run the dry run again to see what is left")


def _dispatch(job_id: int) -> None:
    """To the durable queue when workers run it (INGEST_MODE "queue"), else a thread of this process."""
    if memory_settings.INGEST_MODE == "queue":
        from .tasks import forget_job

        forget_job.defer(job_id=job_id)
        return
    threading.Thread(target=_run_in_thread, args=(job_id,), name=f"forget-job-{job_id}", daemon=True).start()


def _run_in_thread(job_id: int) -> None:
    try:
        forget_job_run(job_id)
    finally:
        connections.close_all()


class _ProgressWriter:
    """The job's phase and counter, written on an autocommit side connection (the forget's own
    transaction is invisible to the page until it commits), at most every PROGRESS_SECONDS."""

    def __init__(self, job: ForgetJob) -> None:
        self.job = job
        self.conn = psycopg.connect(conninfo("forget-progress"), autocommit=True)
        self.last = 0.0

    def phase(self, name: str, done: int = 0, total: int | None = None) -> None:
        self.job.phase, self.job.done = name, done
        if total is not None:
            self.job.total = total
        self._write()

    def __call__(self, done: int, total: int) -> None:
        self.job.done, self.job.total = done, total
        if time.monotonic() - self.last >= PROGRESS_SECONDS or done == total:
            self._write()

    def _write(self) -> None:
        self.last = time.monotonic()
        self.conn.execute(f"UPDATE {ForgetJob._meta.db_table} SET phase = %s, done = %s, total = %s, state = %s "
                          "WHERE id = %s", [self.job.phase, self.job.done, self.job.total, self.job.state, self.job.pk])

    def close(self) -> None:
        self.conn.close()


def forget_job_run(job_id: int) -> ForgetJob:
    """Run a queued job to its end (a job that already ran is left alone: a retried task)."""
    job = ForgetJob.objects.select_related("project").get(pk=job_id)
    if job.state != JobState.QUEUED:
        return job
    job.state, job.started_at = JobState.RUNNING, timezone.now()
    job.save(update_fields=["state", "started_at"])
    selection = ForgetFilter.from_json(job.pending_filter or {})
    progress = None
    try:
        progress = _ProgressWriter(job)
        hard = job.mode == "hard"
        progress.phase("selecting")
        ids = forget_selection(job.project, selection, mode=job.mode)
        strings = distinctive_strings(job.project, set(ids), selection.whole_sessions()) if hard else []
        progress.phase("forgetting", 0, len(ids))
        report = forget_run(project=job.project, actor=job.actor, selection=selection, mode=job.mode,
                            expect_memories=job.expect_memories, progress=progress)
        job.counts = dict(sorted(report.counts.items()))
        _filter_erase(job)  # before the scan: the filter as typed is a copy of the text too
        if hard:
            progress.phase("vacuuming", 0, len(VACUUMED_TABLES))
            job.vacuumed = _vacuum(progress)
            progress.phase("verifying")
            job.verification = residues_scan(job.project, strings).to_json()
        job.state, job.done, job.total = JobState.DONE, len(ids), len(ids)
    except Exception as exc:  # the audit records every ending, the failures too
        job.state = JobState.FAILED
        job.error = _error_text(exc, selection, job.phase)
        if not isinstance(exc, MemoryEngineError):
            logger.exception("forget job %s failed", job.pk)
    finally:
        if progress is not None:
            progress.close()
    _filter_erase(job)
    job.phase, job.finished_at = job.state, timezone.now()
    job.save(update_fields=["state", "phase", "done", "total", "counts", "vacuumed", "verification", "error",
                            "pending_filter", "finished_at"])
    return job


def _filter_erase(job: ForgetJob) -> None:
    job.pending_filter = None
    ForgetJob.objects.filter(pk=job.pk).update(pending_filter=None)


def _vacuum(progress: _ProgressWriter) -> list[str]:
    """VACUUM needs autocommit: inside an outer transaction (a test's) it is skipped (the audit then lists
    no table vacuumed)."""
    if connection.in_atomic_block:
        return []
    done = []
    with connection.cursor() as cursor:
        for table in VACUUMED_TABLES:
            cursor.execute(f"VACUUM (ANALYZE) {table}")
            done.append(table)
            progress(len(done), len(VACUUMED_TABLES))
    return done


def _error_text(exc: Exception, selection: ForgetFilter, phase: str) -> str:
    """What went wrong, for the audit: the engine's message with the filter's text masked, else the
    kind of failure only (details are in the server log, not in the audit)."""
    if not isinstance(exc, MemoryEngineError):
        return f"{type(exc).__name__} while {phase}; see the server log"
    message = exc.message
    for secret in (selection.text_contains, selection.entity if isinstance(selection.entity, str) else ""):
        if secret:
            message = message.replace(secret, REDACTED)
    return message


def forget_jobs(project: Project, limit: int | None = None) -> list[ForgetJob]:
    """The audit trail, newest first."""
    return list(ForgetJob.objects.filter(project=project).order_by("-id")[:limit])


def jobs_json(jobs: list[ForgetJob]) -> list[dict]:
    """Jobs as the API, the page and its socket show them (never the filter as typed), with who ran them."""
    names = actor_names(job.actor for job in jobs)
    return [_job_json(job, names.get(job.actor, job.actor)) for job in jobs]


def job_json(job: ForgetJob) -> dict:
    return jobs_json([job])[0]


def _job_json(job: ForgetJob, actor_name: str) -> dict:
    verification = job.verification
    moment = lambda value: value.isoformat() if value else None  # noqa: E731
    return {"id": job.pk, "actor": job.actor, "actor_name": actor_name, "mode": job.mode, "filter": job.filter,
            "state": job.state, "phase": job.phase, "done": job.done, "total": job.total,
            "expect_memories": job.expect_memories, "counts": job.counts, "vacuumed": job.vacuumed,
            "verification": verification, "residues": None if verification is None else len(verification["residues"]),
            "error": job.error, "created_at": moment(job.created_at), "started_at": moment(job.started_at),
            "finished_at": moment(job.finished_at)}
