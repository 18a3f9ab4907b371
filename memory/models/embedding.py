"""Vectors, kept apart from memories so that no model's dimension is baked into the schema.

Each vector names the embedding space (model) that made it. The column is an untyped `vector`;
each space gets its own partial HNSW index over `vector::vector(<dims>)` (see engine/vector_index.py),
so switching embedder means a new space plus `manage.py reembed`, never a migration.
"""

from __future__ import annotations

from django.db import models
from pgvector.django import VectorField

from .graph import Memory
from .project import Project
from .session import AgentSession


class EmbeddingSpace(models.Model):
    """One embedding model: vectors of different spaces are never compared."""

    name = models.CharField(max_length=200, unique=True)
    dimensions = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.name} ({self.dimensions}d)"


class MemoryEmbedding(models.Model):
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="embeddings")
    space = models.ForeignKey(EmbeddingSpace, on_delete=models.CASCADE, related_name="embeddings")
    # Denormalised from memory so filtered searches need no join.
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    session = models.ForeignKey(AgentSession, on_delete=models.CASCADE, related_name="+")
    vector = VectorField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["memory", "space"], name="embedding_unique_space")]
        indexes = [models.Index(fields=["space", "session"], name="embedding_space_session_idx")]
