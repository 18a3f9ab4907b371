"""Final ranking (SPEC §4.3): normalised activation, freshness and importance, components kept.

A memory's kind weighs its activation by the config's `kind_weights`: a tool call ("ci_run(branch=…)")
names what the question names, while its result, linked to it by a causal edge, tells what happened.

Two kinds of memory match a question better than they answer it, and rank at a share of their activation:
one that is itself a question (`question_weight`): "Is Gary definitely coming on Tuesday?" shares most words
with "Is Gary coming on Tuesday?" and holds no answer; and one of a word or two (`short_memory_weight`, fewer
than `short_memory_words` search terms, a speaker's label not counted): "Tom: Still. Brutal." matches on one
word and tells little. A short constraint, preference or decision is a complete fact, not a fragment ("I am
allergic to peanuts" has two search terms): it is never weighed down as short (config.SHORT_FACT_KINDS).
Both spread in full before ranking, so the reply a question got still arrives by its link. Measured in
`make eval` (docs/eval.md, the three weights together against de606a9's run): `ripple` R@5 / R@10 0.56 / 0.71
→ 0.60 / 0.72, chain R@5 0.42 → 0.45 (`hybrid` 0.33 → 0.36), far@5 0.22 → 0.27, superseded 0.46 → 0.56 (an
old date asked about again, "婚纱照还是28号吧？", had ranked above the new one), English constraint R@10
0.52 → 0.60 (it had lost to bm25+vector, 0.56); no type lost. With the tool call at 0.7 instead of 0.5 that
last figure was 0.56, a tie: one question apart."""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from datetime import datetime

from .config import SHORT_FACT_KINDS, RecallConfig
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
    """The k best of the activated memories, from their ranking columns (full rows are loaded for these k only).

    Scores and components are rounded (to 6 places, as stored in the trace) before they are compared,
    so the order is the one the trace shows; only the k kept get a components dict.
    """
    top = max(activation.values(), default=0.0) or 1.0
    now_s, half_life = now.timestamp(), config.freshness_half_life_days
    w_act, w_fresh, w_imp = config.weight_activation, config.weight_freshness, config.weight_importance
    short_words, kinds = config.short_memory_words, config.kind_weights
    scored = []
    for memory_id, value in activation.items():
        row = columns[memory_id]
        if row.asks or row.words < short_words or row.kind in kinds:  # most rows: no call on this path
            value *= math.prod(_weights(row, config).values())
        parts = (round(value / top, 6), round(freshness(row.occurred_at, now, half_life, now_s=now_s), 6),
                 round(min(max(row.importance, 0.0), 5.0) / 5.0, 6))
        score = round(w_act * parts[0] + w_fresh * parts[1] + w_imp * parts[2], 6)
        scored.append((-score, -parts[0], memory_id, parts))
    ranked = [Ranked(memory_id, -negative, dict(zip(COMPONENTS, parts, strict=True)))
              for negative, _, memory_id, parts in heapq.nsmallest(k, scored)]
    for entry in ranked:
        entry.components.update(_weights(columns[entry.memory_id], config))  # the replay says why it sank
    return ranked


def _weights(row: RankedRow, config: RecallConfig) -> dict[str, float]:
    """The factors weighing this memory's activation down, by name (none for most)."""
    weights = {}
    if row.asks and config.question_weight != 1:
        weights["question_weight"] = config.question_weight
    if (row.words < config.short_memory_words and config.short_memory_weight != 1
            and row.kind not in SHORT_FACT_KINDS):
        weights["short_memory_weight"] = config.short_memory_weight
    if config.kind_weights.get(row.kind, 1) != 1:
        weights["kind_weight"] = config.kind_weights[row.kind]
    return weights
