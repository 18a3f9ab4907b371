"""Recall parameters and the named presets (SPEC §4). Every value can be overridden per request."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

from ...conf import memory_settings
from ...errors import ValidationFailed
from ...models import MemoryKind, MemoryStatus, Relation

RELATION_WEIGHTS: dict[str, float] = {
    Relation.CAUSAL: 1.2,
    Relation.CONDITIONAL: 1.1,
    Relation.ELABORATES: 1.0,
    Relation.PART_OF: 1.0,
    Relation.SHARES_ENTITY: 0.5,  # structural and always confidence 1.0: it must not carry the most
    Relation.SUMMARIZES: 1.0,
    Relation.TEMPORAL: 0.8,
    Relation.REFERENCES: 0.8,
    Relation.NEXT_IN_SESSION: 0.6,
    # a transcript speaker's own previous turn: where the story they go on with was told (docs/eval.md)
    Relation.NEXT_BY_SPEAKER: 1.0,
    Relation.SUPERSEDES: 0.5,
}
MAX_HOPS_LIMIT = 3
QUESTION_WEIGHT = 0.7
SHORT_MEMORY_WEIGHT = 0.7
KIND_WEIGHTS: dict[str, float] = {MemoryKind.ACTION: 0.5}
# Kinds that state a complete fact however few words they take ("I am allergic to peanuts", "Window seat,
# please"): never weighed down as short (rank.py). Chit-chat and fragments are facts or events at most.
SHORT_FACT_KINDS = frozenset({MemoryKind.CONSTRAINT, MemoryKind.PREFERENCE, MemoryKind.DECISION})
RECALLABLE_STATUSES = {MemoryStatus.ACTIVE, MemoryStatus.ARCHIVED, MemoryStatus.SUPERSEDED}


@dataclass(frozen=True)
class RecallConfig:
    use_vector: bool = True
    use_lexical: bool = True
    use_dimensions: bool = True
    seed_count: int = 8
    candidate_pool: int = 30  # per seed source, before fusion
    rrf_k: int = 10  # small: the best matches stand out (at 60, eight seeds were within 10% of each other)
    # the vector ranking's share in the fusion when the embedder does not know the query's script
    foreign_vector_weight: float = 0.3
    # the entity source's share in the fusion: it orders the memories naming a queried entity by how many
    # they name, then by recency, which says little about the question (at 1 it buried the best text match)
    entity_weight: float = 0.25
    max_hops: int = 2
    decay: float = 0.8
    aggregation: str = "sum"  # or "max"
    approved_boost: float = 1.2
    min_activation: float = 0.02
    fan_normalise: bool = True  # divide what a node passes on by √(its number of edges)
    relation_weights: dict[str, float] = field(default_factory=lambda: dict(RELATION_WEIGHTS))
    weight_activation: float = 0.6
    weight_freshness: float = 0.3
    weight_importance: float = 0.1
    freshness_half_life_days: float = 30.0
    # a "when …?" question: the activation of memories stating a date or time is multiplied by this (shaped.py)
    time_question_boost: float = 1.5
    # a "how much / how many …?" question: the same for memories stating an amount or a number
    amount_question_boost: float = 1.5
    # a "why …?" question: what a matched turn passes back to its speaker's earlier turn is multiplied by this
    # (ripple.py: the cause is often told just before)
    cause_question_boost: float = 3.0
    # a memory that is itself a question ("定哪天了？", "Is Gary definitely coming on Tuesday?"): its activation is
    # multiplied by this before ranking (rank.py). It still spreads in full: its answer is the next turn.
    question_weight: float = 1.0
    # a memory saying fewer search terms than short_memory_words ("Tom: Still. Brutal.", "小敏：对哦，赶紧改"; a
    # speaker's label not counted) matches a word of the question and tells little: its activation is multiplied
    # by short_memory_weight (rank.py). "I am allergic to peanuts, so no satay please" has three.
    short_memory_words: int = 3
    short_memory_weight: float = 1.0
    # a memory's activation multiplied by its kind's weight here (rank.py); a kind not named keeps 1. A tool call
    # ("ci_run(branch=…)") names what a question names, while its result, linked to it, tells what happened.
    kind_weights: dict[str, float] = field(default_factory=dict)
    statuses: tuple[str, ...] = (MemoryStatus.ACTIVE,)
    narrate: bool = False  # retell the context with the configured LLM (ignored without one)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


PRESETS: dict[str, RecallConfig] = {
    "vector": RecallConfig(use_lexical=False, use_dimensions=False, max_hops=0, time_question_boost=1.0,
                           amount_question_boost=1.0, cause_question_boost=1.0,
                           weight_activation=1.0, weight_freshness=0.0, weight_importance=0.0),
    "hybrid": RecallConfig(max_hops=0, question_weight=QUESTION_WEIGHT, short_memory_weight=SHORT_MEMORY_WEIGHT,
                           kind_weights=dict(KIND_WEIGHTS)),
    "ripple": RecallConfig(max_hops=2, question_weight=QUESTION_WEIGHT, short_memory_weight=SHORT_MEMORY_WEIGHT,
                           kind_weights=dict(KIND_WEIGHTS)),
}
RECALL_PRESETS = tuple(PRESETS)
DEFAULT_PRESET = "ripple"


def recall_defaults(project) -> tuple[int, str]:
    """The k and preset a recall uses when the caller names none: the project's settings (settings page,
    administration/engine_settings.py), else MEMORY["DEFAULT_RECALL_K"] and ripple."""
    chosen = (project.settings or {}).get("recall", {}) or {}
    k, preset = chosen.get("k"), chosen.get("preset")
    valid_k = isinstance(k, int) and not isinstance(k, bool) and 1 <= k <= memory_settings.MAX_RECALL_K
    return (k if valid_k else memory_settings.DEFAULT_RECALL_K,
            preset if preset in RECALL_PRESETS else DEFAULT_PRESET)


def config_for(preset: str, overrides: dict[str, Any] | None = None) -> RecallConfig:
    """The preset with per-request overrides, checked so a bad value is a clear 400."""
    if preset not in PRESETS:
        raise ValidationFailed(f"unknown preset {preset!r}", {"preset": [f"use one of {', '.join(PRESETS)}"]})
    overrides = dict(overrides or {})
    known = {f.name for f in fields(RecallConfig)}
    unknown = sorted(set(overrides) - known)
    if unknown:
        raise ValidationFailed(f"unknown recall parameter(s): {', '.join(unknown)}",
                               {"params": [f"unknown: {', '.join(unknown)}; known: {', '.join(sorted(known))}"]})
    wrong_type = sorted(name for name, value in overrides.items() if not _type_fits(name, value))
    if wrong_type:
        raise ValidationFailed(f"recall parameter(s) of the wrong type: {', '.join(wrong_type)}",
                               {name: [f"expected {_expected(name)}"] for name in wrong_type})
    if "relation_weights" in overrides:
        unknown_relations = sorted(set(overrides["relation_weights"]) - set(RELATION_WEIGHTS))
        if unknown_relations:
            raise ValidationFailed(
                f"unknown relation(s) in relation_weights: {', '.join(unknown_relations)}",
                {"relation_weights": [f"use the relations {', '.join(sorted(RELATION_WEIGHTS))}"]})
        overrides["relation_weights"] = {**RELATION_WEIGHTS, **overrides["relation_weights"]}
    if "kind_weights" in overrides:
        unknown_kinds = sorted(set(overrides["kind_weights"]) - set(MemoryKind.values))
        if unknown_kinds:
            raise ValidationFailed(
                f"unknown kind(s) in kind_weights: {', '.join(unknown_kinds)}",
                {"kind_weights": [f"use the kinds {', '.join(sorted(MemoryKind.values))}"]})
        overrides["kind_weights"] = {**PRESETS[preset].kind_weights, **overrides["kind_weights"]}
    if "statuses" in overrides:
        overrides["statuses"] = tuple(overrides["statuses"])
    config = replace(PRESETS[preset], **overrides)
    _check(config)
    return config


_DEFAULTS = RecallConfig()


def _expected(name: str) -> str:
    default = getattr(_DEFAULTS, name)
    if isinstance(default, bool):
        return "true or false"
    if isinstance(default, (int, float)):
        return "a number"
    return {"dict": "an object of relation → number", "tuple": "a list of statuses"}.get(type(default).__name__,
                                                                                       type(default).__name__)


def _type_fits(name: str, value: Any) -> bool:
    """JSON types per parameter: a bool is not a number here, and "yes" is not true."""
    default = getattr(_DEFAULTS, name)
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, int):
        return isinstance(value, int) and not isinstance(value, bool)
    if isinstance(default, float):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(default, dict):
        return isinstance(value, dict) and all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                               for v in value.values())
    if isinstance(default, tuple):
        return isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)
    return isinstance(value, type(default))


# Numeric parameters and their allowed ranges: (low, high, low is allowed). Values outside them made
# divisions by zero, infinities written into the trace's jsonb, or rankings that mean nothing.
RANGES: dict[str, tuple[float, float, bool]] = {
    "rrf_k": (1, 1000, True),
    "foreign_vector_weight": (0, 1, True),
    "entity_weight": (0, 1, True),
    "decay": (0, 1, False),
    "approved_boost": (0, 10, True),
    "min_activation": (0, 1, True),
    "weight_activation": (0, 10, True),
    "weight_freshness": (0, 10, True),
    "weight_importance": (0, 10, True),
    "freshness_half_life_days": (0, 36500, False),
    "time_question_boost": (1, 10, True),
    "amount_question_boost": (1, 10, True),
    "cause_question_boost": (1, 10, True),
    "question_weight": (0, 1, True),
    "short_memory_words": (0, 1000, True),
    "short_memory_weight": (0, 1, True),
}
MAX_RELATION_WEIGHT = 10.0


def _finite(value: float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an int beyond any float
        return False


def _range_problems(config: RecallConfig) -> dict[str, list[str]]:
    problems: dict[str, list[str]] = {}
    for name, (low, high, low_allowed) in RANGES.items():
        value = getattr(config, name)
        inside = _finite(value) and (low <= value if low_allowed else low < value) and value <= high
        if not inside:
            problems[name] = [f"must be {'at least' if low_allowed else 'more than'} {low} and at most {high}"]
    for name in ("relation_weights", "kind_weights"):
        if not all(_finite(w) and 0 <= w <= MAX_RELATION_WEIGHT for w in getattr(config, name).values()):
            problems[name] = [f"each weight must be from 0 to {MAX_RELATION_WEIGHT}"]
    if not problems and not config.weight_activation + config.weight_freshness + config.weight_importance > 0:
        problems["weight_activation"] = ["the three ranking weights must not all be 0"]
    return problems


def _check(config: RecallConfig) -> None:
    problems = _range_problems(config)
    if not 0 <= config.max_hops <= MAX_HOPS_LIMIT:
        problems["max_hops"] = [f"must be between 0 and {MAX_HOPS_LIMIT}"]
    if config.aggregation not in ("sum", "max"):
        problems["aggregation"] = ["must be 'sum' or 'max'"]
    if not set(config.statuses) <= RECALLABLE_STATUSES or not config.statuses:
        problems["statuses"] = [f"choose from {', '.join(sorted(RECALLABLE_STATUSES))}; forgotten is never recalled"]
    if not 1 <= config.seed_count <= 100 or not 1 <= config.candidate_pool <= 500:
        problems["seed_count"] = ["seed_count 1-100, candidate_pool 1-500"]
    if not any((config.use_vector, config.use_lexical, config.use_dimensions)):
        problems["use_vector"] = ["at least one seed source must be on"]
    if problems:
        raise ValidationFailed("invalid recall parameters", problems)
