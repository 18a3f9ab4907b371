"""System checks for configuration mistakes (run by every manage.py command and at start-up)."""

from __future__ import annotations

import os

from django.core import checks
from django.db import DatabaseError, connections

from .conf import memory_settings


@checks.register("memory")
def providers_check(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    errors: list[checks.CheckMessage] = []
    try:
        from .providers import get_embedder

        get_embedder()
    except Exception as exc:  # noqa: BLE001 - any import/config failure is reported, not raised
        errors.append(checks.Error(f"MEMORY['EMBEDDER'] could not be loaded: {exc}", id="memory.E001",
                                   hint="Use minilm, openai, hashing or a dotted path to an Embedder class."))
    if "openai" in (memory_settings.LLM, memory_settings.EMBEDDER) and not os.environ.get("OPENAI_API_KEY"):
        errors.append(checks.Error(
            "An OpenAI provider is configured but OPENAI_API_KEY is not set.", id="memory.E004",
            hint="Set OPENAI_API_KEY (and OPENAI_BASE_URL for compatible servers)."))
    return errors


@checks.register(checks.Tags.database)
def embedding_space_check(app_configs=None, databases=None, **kwargs) -> list[checks.CheckMessage]:
    """The configured embedder must agree with the vectors already stored."""
    if not databases or "default" not in databases:
        return []
    from .models import EmbeddingSpace, MemoryEmbedding
    from .providers import get_embedder

    try:
        if EmbeddingSpace._meta.db_table not in connections["default"].introspection.table_names():
            return []
        embedder = get_embedder()
        space = EmbeddingSpace.objects.filter(name=embedder.space_name).first()
        others = MemoryEmbedding.objects.exclude(space__name=embedder.space_name).exists()
    except (DatabaseError, Exception):  # noqa: BLE001 - reported by providers_check or at connect time
        return []
    found: list[checks.CheckMessage] = []
    if space is not None and space.dimensions != embedder.dimensions:
        found.append(checks.Error(
            f"Embedding space {space.name!r} stores {space.dimensions}-d vectors but the embedder makes "
            f"{embedder.dimensions}-d ones.", id="memory.E002", hint="Run `manage.py reembed` or fix CW_EMBEDDER."))
    if others and (space is None or not MemoryEmbedding.objects.filter(space=space).exists()):
        found.append(checks.Warning(
            f"Stored vectors were made by another embedder than {embedder.space_name!r}; recall will find nothing "
            "until they are re-embedded.", id="memory.W001", hint="Run `python manage.py reembed`."))
    return found
