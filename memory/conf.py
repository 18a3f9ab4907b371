"""`memory_settings`: the MEMORY settings dict checked against DEFAULTS, so a typo fails loudly."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

DEFAULTS: dict[str, Any] = {
    # providers: a short name (see providers/__init__.py) or a dotted path to a class
    "EMBEDDER": "minilm",
    "LLM": "none",
    "LLM_MODEL": "gpt-4o-mini",
    "LLM_TIMEOUT": 20.0,
    "LLM_MAX_RETRIES": 2,
    "OPENAI_EMBEDDING_MODEL": "text-embedding-3-small",
    "EMBED_BATCH_SIZE": 64,
    "EMBED_CACHE_SIZE": 4096,
    # threads for the local model (0: the library's default, all cores). With several workers on few
    # cores, 1 each keeps them from fighting over the cores (docs/benchmarks.md, ingest)
    "EMBED_THREADS": 0,
    # the local model's arithmetic: "auto" (bf16 on CPUs with bfloat16 instructions, else fp32), "bf16", "fp32"
    "EMBED_PRECISION": "auto",
    # agent API limits
    "MAX_CONTENT_BYTES": 32 * 1024,
    "MAX_BATCH": 100,
    # metadata of an interaction or a session: its JSON size in bytes and how deeply it may nest
    "MAX_METADATA_BYTES": 16 * 1024,
    "MAX_METADATA_DEPTH": 8,
    # any JSON request body: nesting beyond this is refused (400) before a view reads it
    "MAX_JSON_DEPTH": 32,
    # "queue": a procrastinate worker processes interactions; "inline": on commit, in-process
    "INGEST_MODE": "queue",
    # vector search
    "HNSW_M": 16,
    "HNSW_EF_CONSTRUCTION": 64,
    "HNSW_EF_SEARCH": 100,
    # processing
    "MIN_MEMORY_CHARS": 12,
    "DEFAULT_RECALL_K": 8,
    "MAX_RECALL_K": 100,
    # maintenance (docs/maintenance.md); a project may override the lower-cased keys in
    # Project.settings["maintenance"], e.g. {"decay_archive_threshold": 0.1}
    # decay: weight = importance/5 × 0.5^(days since occurred or last accessed / half-life)
    #        × (1 + boost·ln(1 + access count)); archived below the threshold
    "DECAY_HALF_LIFE_DAYS": 30.0,
    "DECAY_ACCESS_BOOST": 0.5,
    "DECAY_ARCHIVE_THRESHOLD": 0.05,
    # merge: cosine similarity at or above which two memories are duplicates (the ingest filter's 0.93)
    "MERGE_SIMILARITY": 0.93,
    "MERGE_NEIGHBOURS": 5,  # nearest neighbours looked at per memory
    # summarise: extractive summaries keep at most this many sentences / characters
    "SUMMARY_MAX_SENTENCES": 5,
    "SUMMARY_MAX_CHARS": 1200,
    "SUMMARY_MAX_MEMBERS": 200,
    # review: the stronger model that re-checks weak inferred edges ("" = LLM_MODEL)
    "REVIEW_LLM_MODEL": "",
    "REVIEW_MAX_EDGES": 200,
    # decay works in transactions of this many memories
    "MAINTENANCE_BATCH_SIZE": 200,
}

INGEST_MODES = {"queue", "inline"}


class MemorySettings:
    def __init__(self, user: dict[str, Any] | None = None) -> None:
        user = user or {}
        unknown = set(user) - set(DEFAULTS)
        if unknown:
            raise ImproperlyConfigured(f"Unknown MEMORY setting(s): {', '.join(sorted(unknown))}")
        self._values = {**DEFAULTS, **user}
        if self._values["INGEST_MODE"] not in INGEST_MODES:
            raise ImproperlyConfigured(f"MEMORY['INGEST_MODE'] must be one of {sorted(INGEST_MODES)}")

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"Invalid MEMORY setting: {name}") from None


_cached: MemorySettings | None = None


def get_memory_settings() -> MemorySettings:
    global _cached
    if _cached is None:
        _cached = MemorySettings(getattr(settings, "MEMORY", {}))
    return _cached


class _Proxy:
    def __getattr__(self, name: str) -> Any:
        return getattr(get_memory_settings(), name)


memory_settings: Any = _Proxy()


def reload_memory_settings(*, setting: str, **kwargs: Any) -> None:
    """Drop cached settings and providers when a test overrides MEMORY."""
    global _cached
    if setting == "MEMORY":
        _cached = None
        from .providers import reset_providers

        reset_providers()
