"""OpenAI (or any OpenAI-compatible endpoint: OPENAI_BASE_URL) embeddings and chat.

The `openai` client retries 429/5xx/timeouts with back-off (max_retries); we add one more
attempt when an answer is not valid JSON for the schema, then give up with ProviderError.
Callers treat ProviderError as "fall back to the offline rules", so ingestion never breaks.
"""

from __future__ import annotations

import json
import logging

import openai
from pydantic import ValidationError

from ..errors import ProviderError
from .base import LLM, Embedder, SchemaT, Vector

logger = logging.getLogger(__name__)

KNOWN_DIMENSIONS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}


def make_client(*, timeout: float, max_retries: int) -> openai.OpenAI:
    """Key and base URL come from OPENAI_API_KEY / OPENAI_BASE_URL, as the client reads them."""
    return openai.OpenAI(timeout=timeout, max_retries=max_retries)


class OpenAIEmbedder(Embedder):
    def __init__(self, *, model: str, timeout: float = 20.0, max_retries: int = 2,
                 client: openai.OpenAI | None = None, dimensions: int | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.model = model
        self.space_name = f"openai:{model}"
        self.client = client or make_client(timeout=timeout, max_retries=max_retries)
        self._dimensions = dimensions or KNOWN_DIMENSIONS.get(model)

    @property
    def dimensions(self) -> int:  # type: ignore[override]
        if self._dimensions is None:
            self._dimensions = len(self._embed_batch(["dimension probe"])[0])
        return self._dimensions

    def _embed_batch(self, texts: list[str]) -> list[Vector]:
        try:
            response = self.client.embeddings.create(model=self.model, input=texts)
        except openai.OpenAIError as exc:
            raise ProviderError(f"embedding request failed: {exc}") from exc
        except (ValueError, AttributeError, TypeError) as exc:  # the SDK decoding a malformed 200 answer
            raise ProviderError(f"embedding endpoint returned a malformed answer: {exc}") from exc
        try:
            data = sorted(response.data, key=lambda item: item.index)
            vectors = [list(item.embedding) for item in data]
        except (AttributeError, TypeError) as exc:  # a 200 body that is not an embeddings list
            raise ProviderError(f"embedding endpoint returned a malformed answer: {exc}") from exc
        if len(vectors) != len(texts):
            raise ProviderError(f"embedding endpoint returned {len(vectors)} vectors for {len(texts)} texts")
        return vectors


class OpenAILLM(LLM):
    def __init__(self, *, model: str, timeout: float = 20.0, max_retries: int = 2,
                 client: openai.OpenAI | None = None) -> None:
        self.model = model
        self.client = client or make_client(timeout=timeout, max_retries=max_retries)

    def complete_json(self, *, system: str, user: str, schema: type[SchemaT]) -> SchemaT:
        messages = [
            {"role": "system", "content": system + "\nAnswer with one JSON object only."},
            {"role": "user", "content": user},
        ]
        last_problem = ""
        for _attempt in range(2):
            raw = self._ask(messages)
            try:
                return schema.model_validate(json.loads(raw))
            except (json.JSONDecodeError, ValidationError, TypeError) as exc:
                last_problem = f"{type(exc).__name__}: {str(exc)[:300]}"
                logger.warning("LLM answer rejected (%s); raw=%r", last_problem, raw[:200])
        raise ProviderError(f"LLM answer did not match the schema: {last_problem}")

    def _ask(self, messages: list[dict[str, str]]) -> str:
        try:
            response = self.client.chat.completions.create(
                model=self.model, messages=messages, response_format={"type": "json_object"}, temperature=0
            )
        except openai.OpenAIError as exc:
            raise ProviderError(f"LLM request failed: {type(exc).__name__}: {exc}") from exc
        try:
            content = response.choices[0].message.content if response.choices else None
        except (AttributeError, IndexError, TypeError) as exc:  # a 200 body that is not a chat completion
            raise ProviderError(f"LLM returned a malformed response: {type(exc).__name__}: {exc}") from exc
        if not content or not isinstance(content, str):
            raise ProviderError("LLM returned an empty answer")
        return content
