"""Stored recalls, so that any recall can be replayed and compared later."""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models

from .project import Project
from .session import AgentSession


class RecallTrace(models.Model):
    """One recall as it ran: enough to replay it after the graph has changed (memory/engine/recall/replay.py).

    `ranking` keeps the text each returned memory had, `context_lines` the told context line by line with
    its memory, `change_id` the last change-log row of the project when it ran. `touched_ids` (seeds and
    every memory activation reached) and `returned_ids` are indexed, so "recalls that returned this memory"
    and the visibility of a query (hidden when it touched a memory the reader may not see) are one lookup.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="recalls")
    session = models.ForeignKey(AgentSession, on_delete=models.CASCADE, null=True, blank=True, related_name="recalls")
    actor = models.CharField(max_length=120)
    query = models.TextField()
    params = models.JSONField(default=dict)
    seeds = models.JSONField(default=list)
    activations = models.JSONField(default=list)
    ranking = models.JSONField(default=list)
    context = models.TextField(blank=True, default="")
    narrative = models.TextField(blank=True, default="")  # the LLM narrator's account, when asked for
    context_lines = models.JSONField(default=list)  # [{"memory_id": id or null for the header, "text": line}]
    timings = models.JSONField(default=dict)
    change_id = models.BigIntegerField(null=True, blank=True)
    touched_ids = ArrayField(models.BigIntegerField(), default=list, blank=True)
    returned_ids = ArrayField(models.BigIntegerField(), default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            models.Index(fields=["project", "-id"], name="recall_project_newest"),
            models.Index(fields=["session", "-id"], name="recall_session_newest"),
            GinIndex(fields=["touched_ids"], name="recall_touched_gin"),
            GinIndex(fields=["returned_ids"], name="recall_returned_gin"),
        ]
