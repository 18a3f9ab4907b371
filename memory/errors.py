"""Errors of the memory engine. The API maps them to HTTP statuses in contextweaver_site/http/errors.py."""

from __future__ import annotations

from typing import Any


class MemoryEngineError(Exception):
    """Base error: a message for people and optional structured detail."""

    status_code = 400
    code = "invalid"

    def __init__(self, message: str, extra: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.extra = extra or {}


class NotFoundError(MemoryEngineError):
    status_code = 404
    code = "not_found"


class ValidationFailed(MemoryEngineError):
    code = "invalid"


class ProviderError(MemoryEngineError):
    """An embedding or LLM provider failed (network, timeout, bad answer)."""

    status_code = 503
    code = "provider_unavailable"


class LLMNotConfigured(ProviderError):
    """The job needs an LLM and this deployment has none (CW_LLM=none): a 503 until one is configured."""

    code = "llm_not_configured"


class EmbeddingSpaceMismatch(MemoryEngineError):
    status_code = 500
    code = "embedding_space_mismatch"


class NotPromotable(MemoryEngineError):
    """Only an interaction the filter dropped can be promoted to a memory."""

    status_code = 409
    code = "not_promotable"


class NotRetryable(MemoryEngineError):
    """Only a failed interaction, or a kept one with failed stages, can be retried."""

    status_code = 409
    code = "not_retryable"


class EditConflict(MemoryEngineError):
    """A person's edit cannot apply as asked: the graph changed since, or the edit would duplicate a row."""

    status_code = 409
    code = "conflict"


class IdempotencyConflict(MemoryEngineError):
    """An idempotency key came back with different content: answering "duplicate" would drop it."""

    status_code = 409
    code = "idempotency_conflict"


class ProcessingFailed(MemoryEngineError):
    """The write path failed for an interaction; the error is already recorded on it."""


class JobRunning(MemoryEngineError):
    """One bulk forget per project at a time: a second one waits until the first has ended."""

    status_code = 409
    code = "job_running"
