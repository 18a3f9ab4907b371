"""Pure metric functions: recall@k, reciprocal rank, edge precision/recall/F1, relation accuracy."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass


def recall_at_k(ranked: Sequence[Hashable], relevant: Iterable[Hashable], k: int) -> float | None:
    """Fraction of the relevant items found in the first k ranked items; None when nothing is relevant."""
    wanted = set(relevant)
    if not wanted:
        return None
    return len(wanted & set(ranked[:k])) / len(wanted)


def reciprocal_rank(ranked: Sequence[Hashable], relevant: Iterable[Hashable], k: int | None = None) -> float | None:
    """1/rank of the first relevant item (ranks start at 1), 0.0 if none is ranked; None when nothing is relevant."""
    wanted = set(relevant)
    if not wanted:
        return None
    for position, item in enumerate(ranked[:k] if k is not None else ranked, start=1):
        if item in wanted:
            return 1.0 / position
    return 0.0


def mean(values: Iterable[float | None]) -> float | None:
    """Mean of the defined values; None when there are none."""
    defined = [v for v in values if v is not None]
    return sum(defined) / len(defined) if defined else None


@dataclass(frozen=True)
class EdgeScores:
    true_positives: int
    predicted: int
    labelled: int
    relation_correct: int

    @property
    def precision(self) -> float:
        """TP / predicted; 0.0 when nothing was predicted (an engine that infers no edges scores 0)."""
        return self.true_positives / self.predicted if self.predicted else 0.0

    @property
    def recall(self) -> float:
        return self.true_positives / self.labelled if self.labelled else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def relation_accuracy(self) -> float | None:
        """Share of matched pairs whose relation is right; None when no pair matched."""
        return self.relation_correct / self.true_positives if self.true_positives else None

    def __add__(self, other: EdgeScores) -> EdgeScores:
        return EdgeScores(self.true_positives + other.true_positives, self.predicted + other.predicted,
                          self.labelled + other.labelled, self.relation_correct + other.relation_correct)


EMPTY_EDGE_SCORES = EdgeScores(0, 0, 0, 0)


def edge_scores(predicted: dict[tuple[Hashable, Hashable], set[str]],
                labelled: dict[tuple[Hashable, Hashable], str]) -> EdgeScores:
    """Compare directed (parent, child) pairs, ignoring relation; a matched pair's relation is right when
    the engine gave the labelled relation on any of its edges for that pair.

    `predicted` maps a pair to the relations the engine put on it; `labelled` maps a pair to its true relation.
    """
    matched = set(predicted) & set(labelled)
    correct = sum(1 for pair in matched if labelled[pair] in predicted[pair])
    return EdgeScores(true_positives=len(matched), predicted=len(predicted), labelled=len(labelled),
                      relation_correct=correct)
