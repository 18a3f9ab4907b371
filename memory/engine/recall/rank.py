"""Final ranking (SPEC §4.3): normalised activation, freshness and importance, components kept."""

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
    """The k best of the activated memories, from three columns each (full rows are loaded for these k only).

    Scores and components are rounded (to 6 places, as stored in the trace) before they are compared,
    so the order is the one the trace shows; only the k kept get a components dict.
    """
    top = max(activation.values(), default=0.0) or 1.0
    now_s, half_life = now.timestamp(), config.freshness_half_life_days
    w_act, w_fresh, w_imp = config.weight_activation, config.weight_freshness, config.weight_importance
    scored = []
    for memory_id, value in activation.items():
        row = columns[memory_id]
        parts = (round(value / top, 6), round(freshness(row.occurred_at, now, half_life, now_s=now_s), 6),
                 round(min(max(row.importance, 0.0), 5.0) / 5.0, 6))
        score = round(w_act * parts[0] + w_fresh * parts[1] + w_imp * parts[2], 6)
        scored.append((-score, -parts[0], memory_id, parts))
    return [Ranked(memory_id, -negative, dict(zip(COMPONENTS, parts, strict=True)))
            for negative, _, memory_id, parts in heapq.nsmallest(k, scored)]
