"""A tiny deterministic lexical embedder, for fast unit tests only (never the default)."""

from __future__ import annotations

import hashlib
import math
import re

from .base import Embedder, Vector

TOKEN_RE = re.compile(r"[a-z0-9]+|[\u4e00-\u9fff]")


class HashingEmbedder(Embedder):
    """Hashes words (and CJK character bigrams) into a signed bag-of-features vector."""

    dimensions = 384
    space_name = "hashing-384"

    def _embed_batch(self, texts: list[str]) -> list[Vector]:
        return [self._vector(text) for text in texts]

    def _vector(self, text: str) -> Vector:
        tokens = TOKEN_RE.findall(text.lower())
        features = tokens + [a + b for a, b in zip(tokens, tokens[1:], strict=False) if len(a) == len(b) == 1]
        vector = [0.0] * self.dimensions
        for feature in features or ["<empty>"]:
            digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
            index = int.from_bytes(digest[:4], "little") % self.dimensions
            vector[index] += 1.0 if digest[4] & 1 else -1.0
        norm = math.sqrt(sum(v * v for v in vector)) or 1.0
        return [v / norm for v in vector]
