"""Items of the key-value store that LangGraph's `BaseStore` (and any client) reads and writes.

An item is what the caller put, kept exactly (get returns it as written); its text also went into the
memory graph as an interaction of the namespace's session, so a search with a query is a recall. The
namespace is a text array, so "every namespace under (a, b)" is a prefix condition on it.
"""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.db import models

from .project import Project
from .session import AgentSession, Interaction


class StoreItem(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="store_items")
    # The namespace's session (engine/store.py derives it): its memories are the items' memories.
    session = models.ForeignKey(AgentSession, on_delete=models.CASCADE, related_name="store_items")
    namespace = ArrayField(models.TextField())
    key = models.TextField()
    value = models.JSONField()
    # The interaction the latest put sent into the memory graph; None when that put was not indexed.
    interaction = models.ForeignKey(Interaction, on_delete=models.SET_NULL, null=True, blank=True,
                                    related_name="store_items")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["project", "namespace", "key"], name="store_item_unique")]
        indexes = [models.Index(fields=["project", "-updated_at"], name="store_item_recent_idx")]

    def __str__(self) -> str:
        return f"{'/'.join(self.namespace)}:{self.key}"
