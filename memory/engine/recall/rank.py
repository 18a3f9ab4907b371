"""Final ranking (SPEC §4.3): normalised activation, freshness and importance, components kept."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from .config import RecallConfig
from .seeds import RankedRow


@dataclass
class Ranked:
    memory_id: int
    score: float
    components: dict[str, float]


def freshness(occurred_at: datetime | float, now: datetime, half_life_days: float) -> float:
    """exp decay with the given half-life; `occurred_at` as a datetime or epoch seconds."""
    seconds = occurred_at if isinstance(occurred_at, float) else occurred_at.timestamp()
    age_days = max(0.0, (now.timestamp() - seconds) / 86400)
    return math.exp(-math.log(2) * age_days / half_life_days)


def rank(columns: dict[int, RankedRow], activation: dict[int, float], config: RecallConfig, now: datetime,
         k: int) -> list[Ranked]:
    """The k best of the activated memories, from three columns each (full rows are loaded for these k only)."""
    top = max(activation.values(), default=0.0) or 1.0
    ranked = []
    for memory_id in activation:
        memory = columns[memory_id]
        parts = {
            "activation": round(activation.get(memory_id, 0.0) / top, 6),
            "freshness": round(freshness(memory.occurred_at, now, config.freshness_half_life_days), 6),
            "importance": round(min(max(memory.importance, 0.0), 5.0) / 5.0, 6),
        }
        score = (config.weight_activation * parts["activation"] + config.weight_freshness * parts["freshness"]
                 + config.weight_importance * parts["importance"])
        ranked.append(Ranked(memory_id, round(score, 6), parts))
    ranked.sort(key=lambda r: (-r.score, -r.components["activation"], r.memory_id))
    return ranked[:k]
