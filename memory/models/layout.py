"""Stored force-layout positions of each session's graph (memory/engine/layout.py computes them).

Kept in the database so a page load never recomputes a layout: after the write path commits, a job
computes a session's layout once, places new memories near their neighbours, and recomputes it when
too many nodes were placed that way (or on `manage.py graph_layout`).
"""

from __future__ import annotations

from django.db import models

from .graph import Memory
from .session import AgentSession


class SessionLayout(models.Model):
    session = models.OneToOneField(AgentSession, on_delete=models.CASCADE, primary_key=True,
                                   related_name="graph_layout")
    computed_at = models.DateTimeField()
    node_count = models.PositiveIntegerField(help_text="Nodes placed by the last full computation.")
    placed_since = models.PositiveIntegerField(default=0, help_text="Nodes placed incrementally since then.")
    unit = models.FloatField(help_text="Typical edge length in layout units: the spacing of new nodes.")
    seconds = models.FloatField(default=0.0, help_text="How long the last full computation took.")


class NodePosition(models.Model):
    memory = models.OneToOneField(Memory, on_delete=models.CASCADE, primary_key=True, related_name="layout_position")
    session = models.ForeignKey(AgentSession, on_delete=models.CASCADE, related_name="+")
    x = models.FloatField()
    y = models.FloatField()
