"""The offline mode: no LLM; the engine's rules do the work."""

from __future__ import annotations

from ..errors import ProviderError
from .base import LLM, SchemaT


class NoLLM(LLM):
    available = False

    def complete_json(self, *, system: str, user: str, schema: type[SchemaT]) -> SchemaT:
        raise ProviderError("No LLM is configured (CW_LLM=none); the offline rules apply.")
