"""Provider registry: `get_embedder()` and `get_llm()` build the configured providers once.

MEMORY["EMBEDDER"] / MEMORY["LLM"] take a short name below or a dotted path to a class.
"""

from __future__ import annotations

import functools
from typing import Any

from django.utils.module_loading import import_string

from ..conf import memory_settings
from .base import LLM, Embedder

EMBEDDERS = {
    "minilm": "memory.providers.minilm.MiniLMEmbedder",
    "e5": "memory.providers.e5.MultilingualE5Embedder",
    "openai": "memory.providers.openai.OpenAIEmbedder",
    "hashing": "memory.providers.hashing.HashingEmbedder",
}
LLMS = {
    "none": "memory.providers.null_llm.NoLLM",
    "openai": "memory.providers.openai.OpenAILLM",
}


def _resolve(name: str, table: dict[str, str]) -> Any:
    return import_string(table.get(name, name))


@functools.lru_cache(maxsize=1)
def get_embedder() -> Embedder:
    name = memory_settings.EMBEDDER
    cls = _resolve(name, EMBEDDERS)
    kwargs: dict[str, Any] = {
        "batch_size": memory_settings.EMBED_BATCH_SIZE, "cache_size": memory_settings.EMBED_CACHE_SIZE,
    }
    if name in ("minilm", "e5"):  # the offline models run on this machine's cores
        kwargs.update(threads=memory_settings.EMBED_THREADS)
    if name == "minilm":
        kwargs.update(precision=memory_settings.EMBED_PRECISION)
    if name == "openai":
        kwargs.update(model=memory_settings.OPENAI_EMBEDDING_MODEL, timeout=memory_settings.LLM_TIMEOUT,
                      max_retries=memory_settings.LLM_MAX_RETRIES)
    return cls(**kwargs)


@functools.lru_cache(maxsize=1)
def get_llm() -> LLM:
    name = memory_settings.LLM
    cls = _resolve(name, LLMS)
    if name == "openai":
        return cls(model=memory_settings.LLM_MODEL, timeout=memory_settings.LLM_TIMEOUT,
                   max_retries=memory_settings.LLM_MAX_RETRIES)
    return cls()


def reset_providers() -> None:
    get_embedder.cache_clear()
    get_llm.cache_clear()
