"""Stored recalls, so that any recall can be replayed and compared later."""

from __future__ import annotations

from django.db import models

from .project import Project
from .session import AgentSession


class RecallTrace(models.Model):
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
    timings = models.JSONField(default=dict)
    created_at = models.DateTimeField(auto_now_add=True)
