"""Memories put at risk by a change to what they depend on (engine/risk.py)."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from .graph import Memory
from .project import Project


class RiskChange(models.TextChoices):
    SUPERSEDED = "superseded"  # a newer value replaced it
    CORRECTED = "corrected"  # a person changed what it says
    ARCHIVED = "archived"
    FORGOTTEN = "forgotten"


class RiskStatus(models.TextChoices):
    OPEN = "open"
    VALID = "valid"  # a person said it still holds
    SUPERSEDED = "superseded"  # a person named (or wrote) what replaces it
    ARCHIVED = "archived"  # a person archived it
    CLEARED = "cleared"  # the change was undone


class AtRisk(models.Model):
    """`memory` depends (through `path`, edge ids from the changed memory down to it) on `parent`, which
    changed: how (`change`), from what to what (`before`/`after`, when there is a value), and what replaced
    it (`replaced_by`). `hops` 1 is a direct dependent; `risk` falls with each hop."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="risks")
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="risks")
    parent = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="dependents_at_risk")
    replaced_by = models.ForeignKey(Memory, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    change = models.CharField(max_length=12, choices=RiskChange.choices)
    before = models.TextField(blank=True, default="")
    after = models.TextField(blank=True, default="")
    relations = models.JSONField(default=list)  # the relation of each edge on the path, parent first
    path = models.JSONField(default=list)  # edge ids, parent first
    hops = models.PositiveSmallIntegerField(default=1)
    risk = models.FloatField(default=1.0)
    status = models.CharField(max_length=12, choices=RiskStatus.choices, default=RiskStatus.OPEN)
    change_id = models.BigIntegerField(null=True, blank=True)  # the change-log row of the change that caused it
    resolved_by = models.CharField(max_length=120, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["memory", "parent"], condition=Q(status="open"),
                                               name="risk_open_unique")]
        indexes = [models.Index(fields=["project", "status", "-id"], name="risk_project_status")]

    def __str__(self) -> str:
        return f"{self.memory_id} at risk from {self.parent_id} ({self.change})"
