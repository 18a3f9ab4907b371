"""manage.py reembed: embed memories with the configured embedder (after changing CW_EMBEDDER).

Vectors are streamed with COPY while the space's HNSW index is dropped, and the index is built
once at the end, in one transaction: searches in that space are exact (slower) until it commits.
"""

from __future__ import annotations

from collections.abc import Iterator

from django.core.management.base import BaseCommand
from django.db import transaction
from tqdm import tqdm

from memory.engine.vector_index import EmbeddingRow, bulk_load, space_for
from memory.models import Memory, MemoryEmbedding
from memory.providers import get_embedder
from memory.providers.base import Embedder


class Command(BaseCommand):
    help = "Compute vectors for memories in the configured embedder's space (COPY + one index build)."

    def add_arguments(self, parser):
        parser.add_argument("--project", help="Only this project slug")
        parser.add_argument("--all", action="store_true", help="Also replace vectors that already exist")
        parser.add_argument("--batch-size", type=int, default=256)

    def handle(self, *args, project, all, batch_size, **options):
        embedder = get_embedder()
        space = space_for(embedder)
        memories = Memory.objects.exclude(status="forgotten")
        if project:
            memories = memories.filter(project__slug=project)
        if not all:
            memories = memories.exclude(embeddings__space=space)
        # Read everything first: the COPY stream must not share its connection with other queries.
        todo = list(memories.order_by("id").values_list("id", "project_id", "session_id", "content"))
        self.stdout.write(f"Embedding {len(todo)} memories with {space.name} ({space.dimensions}-d)")
        with tqdm(total=len(todo), unit="mem", disable=not todo) as bar, transaction.atomic():
            MemoryEmbedding.objects.filter(space=space, memory_id__in=[row[0] for row in todo]).delete()
            loaded = bulk_load(space, _rows(embedder, todo, batch_size, bar))
        self.stdout.write(self.style.SUCCESS(f"Stored {loaded} vectors in space {space.name}."))


def _rows(embedder: Embedder, todo: list[tuple[int, int, int, str]], batch_size: int,
          bar: tqdm) -> Iterator[EmbeddingRow]:
    """Embed batch by batch while COPY consumes the rows (no database access in here)."""
    for start in range(0, len(todo), batch_size):
        chunk = todo[start:start + batch_size]
        vectors = embedder.embed([content for *_, content in chunk])
        for (memory_id, project_id, session_id, _), vector in zip(chunk, vectors, strict=True):
            yield EmbeddingRow(memory_id, project_id, session_id, vector)
        bar.update(len(chunk))
