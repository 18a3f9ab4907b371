"""Extractive summaries: the most central sentences of a cluster, in their original order.

Offline and language-agnostic apart from sentence boundaries (English . ! ? ; followed by a space,
Chinese 。！？； anywhere, line breaks). Centrality is a sentence's mean cosine similarity to the
others (the cluster's shared subject), nudged by its memory's importance; near-repeats of a chosen
sentence are skipped so the summary covers more than one point.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..cues import information_length, normalized

SPLIT = re.compile(r"(?<=[。！？；!?])\s*|(?<=[.;])\s+|\n+")
CJK_END = re.compile(r"[\u3400-\u9fff\uff00-\uffef]$")
TERMINAL = "。！？；.!?;…"
MIN_INFORMATION = 6  # shorter fragments ("OK.", "好。") say nothing on their own
REDUNDANT = 0.85


@dataclass(frozen=True)
class Sentence:
    memory_id: int
    position: tuple[int, int]  # (memory order, sentence order): the order they are told in
    text: str
    importance: float
    sensitive: bool


def split_sentences(text: str) -> list[str]:
    return [part.strip() for part in SPLIT.split(text or "") if part and part.strip()]


def sentences_of(memories: list) -> list[Sentence]:
    """Every informative sentence of the memories (in order), each text once."""
    found: list[Sentence] = []
    seen: set[str] = set()
    for i, memory in enumerate(memories):
        for j, text in enumerate(split_sentences(memory.content)):
            key = normalized(text)
            if key in seen:
                continue
            seen.add(key)
            found.append(Sentence(memory.pk, (i, j), text, float(memory.importance), bool(memory.sensitive)))
    informative = [s for s in found if information_length(s.text) >= MIN_INFORMATION]
    return informative or found


def central_sentences(sentences: list[Sentence], vectors: list[list[float]], *, max_sentences: int,
                      max_chars: int) -> list[Sentence]:
    """Pick by centrality, skip near-repeats, respect the budget; return them in told order."""
    if not sentences:
        return []
    matrix = np.asarray(vectors, dtype=float)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    matrix = matrix / np.where(norms == 0, 1.0, norms)
    similarity = matrix @ matrix.T
    n = len(sentences)
    centrality = (similarity.sum(axis=1) - 1.0) / (n - 1) if n > 1 else np.ones(1)
    scores = [float(c) * (0.75 + 0.05 * min(max(s.importance, 0.0), 5.0)) for c, s in zip(centrality, sentences,
                                                                                         strict=True)]
    chosen: list[int] = []
    used = 0
    for index in sorted(range(n), key=lambda i: (-scores[i], sentences[i].position)):
        if len(chosen) >= max_sentences:
            break
        if any(similarity[index, other] >= REDUNDANT for other in chosen):
            continue
        length = len(sentences[index].text) + 1
        if chosen and used + length > max_chars:
            continue
        chosen.append(index)
        used += length
    return sorted((sentences[i] for i in chosen), key=lambda s: s.position)


def join_sentences(sentences: list[Sentence]) -> str:
    """One text: each sentence closed by punctuation of its language, spaces only between Latin ones."""
    parts: list[str] = []
    for sentence in sentences:
        text = sentence.text
        if text[-1] not in TERMINAL:
            text += "。" if CJK_END.search(text) else "."
        if parts and not parts[-1].endswith(tuple("。！？；")):
            parts.append(" ")
        parts.append(text)
    return "".join(parts)
