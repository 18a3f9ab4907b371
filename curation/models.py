"""The curation log: every act of a person on the graph, with its reason and the changes it made.

The changes themselves (before / after snapshots) are in the change log (memory.GraphChange), which
live views, replay and the mirror read; an act points at them, so it can be listed by person,
session and kind, and undone from the snapshots it recorded.
"""

from __future__ import annotations

from django.db import models

from memory.models import AgentSession, GraphChange, Project


class ActKind(models.TextChoices):
    EDGE_APPROVE = "edge.approve"
    EDGE_REJECT = "edge.reject"
    EDGE_RELABEL = "edge.relabel"
    EDGE_DRAW = "edge.draw"
    EDGE_DELETE = "edge.delete"
    MEMORY_SENSITIVE = "memory.sensitive"
    MEMORY_STATUS = "memory.status"
    MEMORY_KIND = "memory.kind"
    MEMORY_RISK = "memory.risk"  # an at-risk flag settled: it still holds
    ENTITY_RENAME = "entity.rename"
    ENTITY_MERGE = "entity.merge"
    ENTITY_SPLIT = "entity.split"
    ENTITY_FLAG = "entity.flag"  # a possibly_same_as flag dismissed
    UNDO = "undo"


class CurationAct(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="curation_acts")
    session = models.ForeignKey(AgentSession, on_delete=models.SET_NULL, null=True, blank=True,
                                related_name="curation_acts")
    actor = models.CharField(max_length=120)
    kind = models.CharField(max_length=20, choices=ActKind.choices)
    object_type = models.CharField(max_length=20)
    object_id = models.BigIntegerField()
    reason = models.TextField(blank=True, default="")
    changes = models.ManyToManyField(GraphChange, related_name="curation_acts", blank=True)
    undoes = models.OneToOneField("self", on_delete=models.SET_NULL, null=True, blank=True, related_name="undone_by")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["project", "-id"]), models.Index(fields=["session", "-id"])]

    def __str__(self) -> str:
        return f"#{self.pk} {self.kind} {self.object_type}:{self.object_id} by {self.actor}"
