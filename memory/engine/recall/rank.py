"""Final ranking (SPEC §4.3): normalised activation, freshness and importance, components kept.

A memory that is itself a question ranks at `question_weight` of its activation: "Is Gary definitely coming
on Tuesday?" shares most words with "Is Gary coming on Tuesday?" and holds no answer. Measured in `make eval`
(docs/eval.md) at 0.7 in `hybrid` and `ripple`: `ripple` R@5 0.567 → 0.584, chain 0.416 → 0.427, superseded
0.457 → 0.514 (the old date asked about again, "婚纱照还是28号吧？", had ranked above the new one); no type lost.
It spread in full before ranking, so the reply it got still arrives by its link."""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from datetime import datetime

from .config import RecallConfig
from .seeds import RankedRow

COMPONENTS = ("activation", "freshness", "importance")


@dataclass
class Ranked:
    memory_id: int
    score: float
    components: dict[str, float]


def freshness(occurred_at: datetime | float, now: datetime, half_life_days: float, *,
              now_s: float | None = None) -> float:
    """exp decay with the given half-life; `occurred_at` as a datetime or epoch seconds (`now_s`: now's)."""
    seconds = occurred_at if isinstance(occurred_at, float) else occurred_at.timestamp()
    age_days = max(0.0, ((now.timestamp() if now_s is None else now_s) - seconds) / 86400)
    return math.exp(-math.log(2) * age_days / half_life_days)


def rank(columns: dict[int, RankedRow], activation: dict[int, float], config: RecallConfig, now: datetime,
         k: int) -> list[Ranked]:
    """The k best of the activated memories, from four columns each (full rows are loaded for these k only).

    Scores and components are rounded (to 6 places, as stored in the trace) before they are compared,
    so the order is the one the trace shows; only the k kept get a components dict.
    """
    top = max(activation.values(), default=0.0) or 1.0
    now_s, half_life = now.timestamp(), config.freshness_half_life_days
    w_act, w_fresh, w_imp = config.weight_activation, config.weight_freshness, config.weight_importance
    question_weight = config.question_weight
    scored = []
    for memory_id, value in activation.items():
        row = columns[memory_id]
        if row.asks:
            value *= question_weight
        parts = (round(value / top, 6), round(freshness(row.occurred_at, now, half_life, now_s=now_s), 6),
                 round(min(max(row.importance, 0.0), 5.0) / 5.0, 6))
        score = round(w_act * parts[0] + w_fresh * parts[1] + w_imp * parts[2], 6)
        scored.append((-score, -parts[0], memory_id, parts))
    ranked = [Ranked(memory_id, -negative, dict(zip(COMPONENTS, parts, strict=True)))
              for negative, _, memory_id, parts in heapq.nsmallest(k, scored)]
    if question_weight != 1:
        for entry in ranked:
            if columns[entry.memory_id].asks:
                entry.components["question_weight"] = question_weight  # the replay says why it sank
    return ranked
