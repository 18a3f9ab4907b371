"""Provider interfaces: an embedder turns texts into vectors, an LLM answers JSON to a schema."""

from __future__ import annotations

import re
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Sequence
from typing import TypeVar

from pydantic import BaseModel

Vector = list[float]
SchemaT = TypeVar("SchemaT", bound=BaseModel)
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LETTER = re.compile(r"[^\W\d_]")


def text_script(text: str) -> str:
    """"cjk" when Chinese characters are at least a third of the letters, else "latin"."""
    letters = len(_LETTER.findall(text))
    return "cjk" if letters and len(_CJK.findall(text)) * 3 >= letters else "latin"


class Embedder(ABC):
    """Batches and caches calls to `_embed_batch`; subclasses only embed.

    `space_name` identifies the model in the database (EmbeddingSpace), so vectors of different
    models are never mixed; `dimensions` must match the vectors `_embed_batch` returns.
    """

    space_name: str
    dimensions: int
    # Scripts the model was trained on; None: any. Recall trusts the vector ranking less for a query in
    # another script (an English-only model places Chinese text almost at random).
    scripts: frozenset[str] | None = None

    def __init__(self, *, batch_size: int = 64, cache_size: int = 4096) -> None:
        self.batch_size = batch_size
        self.cache_size = cache_size
        self._cache: OrderedDict[str, Vector] = OrderedDict()
        self._lock = threading.Lock()

    @abstractmethod
    def _embed_batch(self, texts: list[str]) -> list[Vector]:
        """Embed texts (at most batch_size), returning unit-length vectors."""

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        found: dict[str, Vector] = {}
        for text in dict.fromkeys(texts):
            vector = self._cached(text)
            if vector is not None:
                found[text] = vector
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        for start in range(0, len(missing), self.batch_size):
            chunk = missing[start : start + self.batch_size]
            for text, vector in zip(chunk, self._embed_batch(chunk), strict=True):
                found[text] = vector
                self._remember(text, vector)
        return [found[t] for t in texts]

    def understands(self, text: str) -> bool:
        """Whether the model was trained on the script this text is mostly written in."""
        return self.scripts is None or text_script(text) in self.scripts

    def embed_one(self, text: str) -> Vector:
        return self.embed([text])[0]

    def _cached(self, text: str) -> Vector | None:
        with self._lock:
            vector = self._cache.get(text)
            if vector is not None:
                self._cache.move_to_end(text)
            return vector

    def _remember(self, text: str, vector: Vector) -> None:
        if self.cache_size <= 0:
            return
        with self._lock:
            self._cache[text] = vector
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)


class LLM(ABC):
    """A chat model that answers with JSON validated against a pydantic schema."""

    available: bool = True

    @abstractmethod
    def complete_json(self, *, system: str, user: str, schema: type[SchemaT]) -> SchemaT:
        """Return the validated answer or raise ProviderError; never return unchecked data."""
