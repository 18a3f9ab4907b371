"""The change log: every change to the graph, in commit order, with actor and before/after.

One log serves three readers: the audit trail, the live stream (a page that reconnects asks for
changes after the last id it saw) and the cursor of the graph mirror. Rows are written in the
same transaction as the change they record (engine/changelog.py).
"""

from __future__ import annotations

from django.db import models

from .project import Project
from .session import AgentSession


class GraphChange(models.Model):
    id = models.BigAutoField(primary_key=True)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="changes")
    session = models.ForeignKey(AgentSession, on_delete=models.SET_NULL, null=True, blank=True, related_name="changes")
    actor = models.CharField(max_length=120)
    op = models.CharField(max_length=40)
    object_type = models.CharField(max_length=20)
    object_id = models.BigIntegerField(null=True)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["session", "id"]), models.Index(fields=["project", "id"])]

    def __str__(self) -> str:
        return f"#{self.id} {self.op} {self.object_type}:{self.object_id}"
