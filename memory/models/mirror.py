"""How far the graph mirror (memory/mirror/) has applied each project's change log.

Per project, because change ids ascend in commit order only within a project (engine/changelog.py):
one cursor for all projects could pass over a change of one project committed after a larger id of
another. `target` names the graph the cursor belongs to; pointed at another graph, the mirror starts
that project again from change 0.
"""

from __future__ import annotations

from django.db import models

from .project import Project


class MirrorCursor(models.Model):
    project = models.OneToOneField(Project, on_delete=models.CASCADE, primary_key=True, related_name="mirror_cursor")
    target = models.CharField(max_length=300, help_text="The graph mirrored into, e.g. 'neo4j bolt://host:7687/neo4j'.")
    last_change_id = models.BigIntegerField(default=0, help_text="Every change up to this id is in the mirror.")
    updated_at = models.DateTimeField(auto_now=True)
    resynced_at = models.DateTimeField(null=True, blank=True, help_text="The last rebuild from scratch.")
