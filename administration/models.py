"""The audit trail of bulk forgetting: one row per forget job, from the dry run's confirmation to its end.

While the job waits or runs, `pending_filter` holds the filter as it was typed (the worker needs the
text match or entity name it selects by); it is erased when the job ends, so what stays is who, when,
the filter with any text replaced by "[forgotten]", the counts, and the verification scan's result.
"""

from __future__ import annotations

from django.db import models

from memory.models import Project


class JobState(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class ForgetJob(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="forget_jobs")
    actor = models.CharField(max_length=120)
    mode = models.CharField(max_length=8)
    filter = models.JSONField(default=dict, help_text="The filter as audited: text and entity names masked.")
    pending_filter = models.JSONField(null=True, blank=True, help_text="The filter as typed, until the job ends.")
    expect_memories = models.PositiveIntegerField()
    state = models.CharField(max_length=8, choices=JobState.choices, default=JobState.QUEUED)
    phase = models.CharField(max_length=40, blank=True, default="")
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    counts = models.JSONField(default=dict)
    verification = models.JSONField(null=True, blank=True, help_text="strings, tables, residues (table/column/row).")
    vacuumed = models.JSONField(default=list)
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["project", "-id"], name="forgetjob_project_newest")]

    def __str__(self) -> str:
        return f"forget job #{self.pk} ({self.mode}, {self.state})"
