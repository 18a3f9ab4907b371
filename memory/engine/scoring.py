"""The selective filter (SPEC §3.2): coarse similarity to the task focus, then R/I/N scores 1–5.

total = w_r·relevance + w_i·importance + w_n·novelty (default 0.5/0.3/0.2), kept at ≥ 3.0; all
thresholds and weights are per project (Project.settings["filter"]). The offline scorer uses the
embedding similarity to the task, the similarity to the session's existing memories (novelty;
near-identical means "repeats memory #n") and importance cues in English and Chinese. An LLM scorer,
when configured, answers the same scores as schema-checked JSON; any failure falls back offline.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pydantic import BaseModel, Field

from ..conf import memory_settings
from ..errors import ProviderError
from ..models import EntityType, Interaction, InteractionKind, MemoryKind, Project
from ..providers import get_llm
from .cues import CHANGE_CUE, CHIT_CHAT, KIND_BY_INTERACTION, KIND_CUES, information_length, normalized
from .extraction import INTENTS, Dimensions
from .sensitivity import text_shareable

logger = logging.getLogger(__name__)

FILTER_DEFAULTS: dict[str, float] = {
    "coarse_min_similarity": -1.0,  # below: clearly off-task, dropped before scoring (-1 = off)
    "relevance_floor": 0.05,  # similarity to the task mapped to relevance 1 …
    "relevance_ceiling": 0.45,  # … and to relevance 5 (calibrated per embedder, see EMBEDDER_CALIBRATION)
    "duplicate_similarity": 0.93,  # at or above: a paraphrase of an existing memory
    "weight_relevance": 0.5,
    "weight_importance": 0.3,
    "weight_novelty": 0.2,
    "keep_threshold": 3.0,
}
# Similarities mean different things per model: where an embedder's on-task range lies.
EMBEDDER_CALIBRATION: dict[str, dict[str, float]] = {
    "all-MiniLM-L6-v2": {"relevance_floor": 0.05, "relevance_ceiling": 0.45},
    "hashing-384": {"relevance_floor": -0.05, "relevance_ceiling": 0.25},
    "openai:text-embedding-3-small": {"relevance_floor": 0.1, "relevance_ceiling": 0.5},
}
# What the agent's user says and the agent's own tool traffic are on-task by construction: their
# relevance never drops below this, whatever the similarity says (SPEC: drop only clear off-task).
RELEVANCE_FLOOR_BY_KIND: dict[str, float] = {
    InteractionKind.USER_INPUT: 3.0, InteractionKind.TOOL_CALL: 3.0, InteractionKind.TOOL_RESULT: 3.0,
    InteractionKind.AGENT_THOUGHT: 2.5, InteractionKind.ASSISTANT_OUTPUT: 2.0, InteractionKind.OBSERVATION: 2.5,
    InteractionKind.SYSTEM: 2.5,
}
IMPORTANCE_CUES: list[tuple[float, re.Pattern[str]]] = [
    (2.0, re.compile(r"\b(budget|allerg\w*|deadline|must|never|cannot|can't|only if|at most|no more than)\b"
                     r"|预算|过敏|截止|必须|不能|不要|最多|不超过|只能", re.I)),
    (1.5, re.compile(r"\b(decided?|decision|chose|choose|will use|go with|failed|failure|error|sold out|"
                     r"exception|refused|denied)\b|决定|选择|采用|失败|错误|报错|满房|售罄|异常", re.I)),
    (1.0, re.compile(r"\b(prefer\w*|favou?rite|like|love|hate|remember|important|phone|email|address)\b"
                     r"|喜欢|偏好|讨厌|记住|重要|电话|邮箱|地址", re.I)),
]
VALUE_DIMENSIONS = ("dates", "times", "amounts", "paths", "identifiers", "urls")


@dataclass(frozen=True)
class Scores:
    keep: bool
    kind: str
    relevance: float
    importance: float
    novelty: float
    total: float
    reason: str
    duplicate_of: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"relevance": self.relevance, "importance": self.importance, "novelty": self.novelty,
                "total": self.total, **self.extra}


@dataclass(frozen=True)
class Evidence:
    """What the offline scorer looks at, computed once by the pipeline."""

    task_similarity: float | None  # None when the session has no task focus
    nearest_memory_id: int | None
    nearest_similarity: float
    dimensions: Dimensions
    new_entities: int
    values_differ_from_nearest: bool = False  # same words, other numbers/dates: an update, not a repeat


class LLMEntity(BaseModel):
    name: str = Field(min_length=1, max_length=120)
    type: str = Field(default="other", max_length=40)  # unknown types become "other" when merged


class LLMScores(BaseModel):
    """The judge's answer: scores and kind, plus the dimensions it sees (all optional, merged with the
    rules' extraction by `extraction.with_llm_dimensions`; one request does both)."""

    relevance: int = Field(ge=1, le=5)
    importance: int = Field(ge=1, le=5)
    novelty: int = Field(ge=1, le=5)
    kind: Literal[tuple(MemoryKind.values)]  # type: ignore[valid-type]
    reason: str = Field(max_length=400)
    entities: list[LLMEntity] = Field(default_factory=list, max_length=20)
    # Lenient on purpose: a label outside our lists is ignored when merged, not a reason to lose the scores.
    intent: str | None = Field(default=None, max_length=40)
    topics: list[str] = Field(default_factory=list, max_length=8)
    sentiment: str | None = Field(default=None, max_length=20)


def filter_settings(project: Project, space_name: str = "") -> dict[str, float]:
    """Defaults, then the embedder's calibration, then the project's own settings."""
    return {**FILTER_DEFAULTS, **EMBEDDER_CALIBRATION.get(space_name, {}), **(project.settings or {}).get("filter", {})}


def _clamp(value: float, low: float = 1.0, high: float = 5.0) -> float:
    return round(max(low, min(high, value)), 2)


def memory_kind(interaction: Interaction, dimensions: Dimensions) -> str:
    if dimensions.intent == "report_error":
        return MemoryKind.ERROR
    cue = next((kind for kind, pattern in KIND_CUES if pattern.search(interaction.content)), None)
    return cue or KIND_BY_INTERACTION.get(interaction.kind, MemoryKind.FACT)


def importance_score(interaction: Interaction, dimensions: Dimensions) -> float:
    score = 2.5 + sum(bonus for bonus, pattern in IMPORTANCE_CUES if pattern.search(interaction.content))
    score += 1.0 if CHANGE_CUE.search(interaction.content) else 0.0  # a corrected value drives what follows
    score += 0.5 * sum(bool(values) for values in (dimensions.amounts, dimensions.dates or dimensions.times,
                                                   dimensions.entities))
    if interaction.kind == InteractionKind.TOOL_RESULT and dimensions.intent == "report_error":
        score += 1.0
    return _clamp(score)


def novelty_score(evidence: Evidence) -> float:
    base = 5.0 - 4.0 * max(0.0, (evidence.nearest_similarity - 0.5) / 0.45)
    if evidence.values_differ_from_nearest:
        base = max(base, 4.0)  # the same sentence with a new value is news
    has_values = any(getattr(evidence.dimensions, name) for name in VALUE_DIMENSIONS)
    return _clamp(base + 0.5 * min(evidence.new_entities, 2) + (0.5 if has_values else 0.0))


def relevance_score(interaction: Interaction, evidence: Evidence, settings: dict[str, float]) -> float:
    floor = RELEVANCE_FLOOR_BY_KIND.get(interaction.kind, 2.0)
    if evidence.task_similarity is None:
        return max(floor, 3.0)
    low, high = settings["relevance_floor"], settings["relevance_ceiling"]
    return max(floor, _clamp(1.0 + 4.0 * (evidence.task_similarity - low) / max(high - low, 1e-6)))


def score_offline(interaction: Interaction, evidence: Evidence, settings: dict[str, float]) -> Scores:
    dims = evidence.dimensions
    kind = memory_kind(interaction, dims)
    if normalized(interaction.content) in CHIT_CHAT or dims.intent == "chit_chat":
        return Scores(False, kind, 1.0, 1.0, 1.0, 1.0, "chit-chat with no information",
                      extra={"judge": "rules", "verdict": verdict("chit_chat")})
    if information_length(interaction.content) < memory_settings.MIN_MEMORY_CHARS:
        return Scores(False, kind, 1.0, 1.0, 1.0, 1.0, "too short to carry information",
                      extra={"judge": "rules", "verdict": verdict("too_short")})
    if (evidence.nearest_memory_id and evidence.nearest_similarity >= settings["duplicate_similarity"]
            and not evidence.values_differ_from_nearest):
        return Scores(False, kind, 3.0, 1.0, 1.0, 1.6, f"repeats memory #{evidence.nearest_memory_id}",
                      duplicate_of=evidence.nearest_memory_id,
                      extra={"judge": "rules", "verdict": verdict("duplicate", memory=evidence.nearest_memory_id)})
    sim = evidence.task_similarity
    if sim is not None and sim < settings["coarse_min_similarity"]:
        return Scores(False, kind, 1.0, 1.0, 1.0, 1.0, f"off-task (similarity {sim:.2f} to the task focus)",
                      extra={"judge": "rules", "stage": "coarse", "task_similarity": round(sim, 4),
                             "verdict": verdict("off_task", similarity=round(sim, 2))})
    relevance = relevance_score(interaction, evidence, settings)
    importance = importance_score(interaction, dims)
    novelty = novelty_score(evidence)
    scores = _decide(kind, relevance, importance, novelty, settings, "rules",
                     {"task_similarity": None if sim is None else round(sim, 4)})
    return _without_focus(scores) if sim is None else scores


def _without_focus(scores: Scores) -> Scores:
    """No task focus, no judge of relevance: the filter is conservative and keeps what it would drop.

    Only chit-chat, too-short text and true duplicates (handled before scoring) are dropped then; with a
    flat relevance, novelty alone decided, and informative turns that resembled earlier ones were lost.
    """
    if scores.keep:
        return scores
    return replace(scores, keep=True, reason=f"{scores.reason}; kept: the session has no task focus, so only "
                                             "chit-chat and duplicates are dropped",
                   extra={**scores.extra, "verdict": {**scores.extra.get("verdict", {}), "code": "kept_without_focus"}})


def _decide(kind: str, relevance: float, importance: float, novelty: float, settings: dict[str, float],
            judge: str, extra: dict[str, Any], reason: str | None = None) -> Scores:
    total = round(settings["weight_relevance"] * relevance + settings["weight_importance"] * importance
                  + settings["weight_novelty"] * novelty, 3)
    keep = total >= settings["keep_threshold"]
    said = reason or (f"{'kept' if keep else 'dropped'}: total {total} "
                      f"({'≥' if keep else '<'} {settings['keep_threshold']}) as {kind}")
    # A judge's own words (the LLM's reason) have no code: pages show them as written.
    coded = {} if reason else {"verdict": verdict("kept" if keep else "dropped", total=total,
                                                  threshold=settings["keep_threshold"], kind=kind)}
    return Scores(keep, kind, relevance, importance, novelty, total, said, extra={"judge": judge, **extra, **coded})


def verdict(code: str, **params: Any) -> dict[str, Any]:
    """The filter's decision as a code and its values, kept in the scores beside the English `reason`, so a
    page can say it in the reader's language (frontend/src/reasons.js)."""
    return {"code": code, **params}


LLM_SYSTEM = (
    "You score one interaction of an AI agent for its long-term memory. Scores 1-5: relevance to the "
    "task, importance (does it constrain or drive later decisions: budgets, dates, allergies, preferences, "
    "decisions, failures), novelty (new entity, value or constraint vs repeating what is known). kind is one "
    "of " + ", ".join(MemoryKind.values) + ". Also give what it is about: entities it names (name as written, "
    "type one of " + ", ".join(EntityType.values) + "), intent (one of " + ", ".join(INTENTS) + "), up to 5 short "
    "topics and sentiment (positive, negative, neutral). Answer JSON {relevance, importance, novelty, kind, reason, "
    "entities: [{name, type}], intent, topics, sentiment}."
)


def score(interaction: Interaction, evidence: Evidence, settings: dict[str, float]) -> Scores:
    """LLM scores when configured (chit-chat, duplicates and off-task never reach it), else rules."""
    offline = score_offline(interaction, evidence, settings)
    llm = get_llm()
    if not llm.available or offline.duplicate_of or offline.extra.get("stage") == "coarse" or offline.total == 1.0:
        return offline
    if not text_shareable(interaction.project_id, interaction.content):  # it repeats a sensitive value
        return replace(offline, reason=f"{offline.reason} (not sent to the LLM: it repeats a sensitive value)",
                       extra={**offline.extra, "llm_skipped": "sensitive"})
    prompt = f"Task: {interaction.session.task or '(none)'}\nKind: {interaction.kind}\nContent:\n{interaction.content}"
    try:
        answer = llm.complete_json(system=LLM_SYSTEM, user=prompt, schema=LLMScores)
    except ProviderError as exc:
        logger.warning("LLM scorer failed for interaction %s, using rules: %s", interaction.pk, exc)
        return Scores(offline.keep, offline.kind, offline.relevance, offline.importance, offline.novelty,
                      offline.total, f"{offline.reason} (LLM unavailable: {exc.message[:120]})",
                      extra={**offline.extra, "llm_error": exc.message[:200],
                             "verdict": {**offline.extra.get("verdict", {}), "llm_unavailable": True}})
    seen = {"entities": [e.model_dump() for e in answer.entities], "intent": answer.intent,
            "topics": answer.topics, "sentiment": answer.sentiment}
    judged = _decide(answer.kind, answer.relevance, answer.importance, answer.novelty, settings, "llm",
                     {k: v for k, v in offline.extra.items() if k != "verdict"}  # the rules' verdict is not the LLM's
                     | {"judge": "llm", "llm_dimensions": seen}, reason=answer.reason)
    return _without_focus(judged) if evidence.task_similarity is None else judged
