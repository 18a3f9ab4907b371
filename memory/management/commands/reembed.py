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
        ids = list(memories.order_by("id").values_list("id", flat=True))
        self.stdout.write(f"Embedding {len(ids)} memories with {space.name} ({space.dimensions}-d)")
        with tqdm(total=len(ids), unit="mem", disable=not ids) as bar, transaction.atomic():
            MemoryEmbedding.objects.filter(space=space, memory_id__in=ids).delete()
            loaded = bulk_load(space, _rows(embedder, ids, batch_size, bar))
        self.stdout.write(self.style.SUCCESS(f"Stored {loaded} vectors in space {space.name}."))


def _rows(embedder: Embedder, ids: list[int], batch_size: int, bar: tqdm) -> Iterator[EmbeddingRow]:
    for start in range(0, len(ids), batch_size):
        chunk = list(
            Memory.objects.filter(id__in=ids[start:start + batch_size])
            .order_by("id").values_list("id", "project_id", "session_id", "content")
        )
        vectors = embedder.embed([content for *_, content in chunk])
        for (memory_id, project_id, session_id, _), vector in zip(chunk, vectors, strict=True):
            yield EmbeddingRow(memory_id, project_id, session_id, vector)
        bar.update(len(chunk))
