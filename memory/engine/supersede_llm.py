"""The LLM's judgement of which earlier memories a new one makes out of date (used when an LLM is configured).

The offline rules (supersede.py) only see a change that is announced ("moved to", "改到") and tied to the
old value by shared words; a person sees more: "We've agreed £231,500" replaces the accepted offer of
£238,000, "21k×14" replaces "月薪19k", with no change word and hardly a word in common. The LLM is shown the
new memory and a few earlier ones that state a different value of the same type, and names those the new
one replaces. It only adds to the rules: a failed or malformed answer replaces nothing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from pydantic import BaseModel, Field

from ..errors import ProviderError
from ..models import Memory
from ..providers import get_llm
from .sensitivity import shareable

logger = logging.getLogger(__name__)

MIN_CONFIDENCE = 0.7  # a superseded memory leaves default recall: only a confident judgement retires one
CONTENT_CHARS = 400

SYSTEM = (
    "You decide which earlier memories a new memory makes out of date. An earlier memory is replaced when the "
    "new one gives a different current value for the same thing it stated (the same event's date or time, the "
    "same price, amount, count, phone number, address or plan), so that the earlier value no longer holds. "
    "Not replaced: a different thing that has a value of the same kind; a value the new memory only mentions, "
    "asks about or confirms; an earlier memory that stays true as a record of what happened then. "
    'Answer JSON {"replaced": [{"candidate": n, "confidence": 0-1, "rationale": "..."}]}, with an empty list '
    "when nothing is replaced."
)


class Replaced(BaseModel):
    candidate: int = Field(ge=0)
    confidence: float = Field(ge=0, le=1)
    rationale: str = Field(max_length=300)


class ReplacedList(BaseModel):
    replaced: list[Replaced]


@dataclass(frozen=True)
class Verdict:
    old: Memory
    confidence: float
    rationale: str


def replaced_judge(memory: Memory, candidates: list[Memory]) -> list[Verdict]:
    """The candidates the LLM says `memory` replaces, confidently; [] when no LLM is configured or it fails."""
    llm = get_llm()
    if not llm.available or not candidates or not shareable([memory]):  # sensitive text never reaches an LLM
        return []
    candidates = shareable(candidates)
    if not candidates:
        return []
    listing = "\n".join(f"[{n}] ({_day(old)}) {old.content[:CONTENT_CHARS]}" for n, old in enumerate(candidates))
    try:
        answer = llm.complete_json(system=SYSTEM, schema=ReplacedList, user=(
            f"New memory ({_day(memory)}): {memory.content[:2 * CONTENT_CHARS]}\nEarlier memories:\n{listing}"))
    except ProviderError as exc:
        logger.warning("LLM supersede judgement failed for memory %s: %s", memory.pk, exc)
        return []
    verdicts: dict[int, Verdict] = {}
    for item in answer.replaced:
        if item.candidate < len(candidates) and item.confidence >= MIN_CONFIDENCE:
            old = candidates[item.candidate]
            verdicts[old.pk] = Verdict(old, round(item.confidence, 3), f"LLM: {item.rationale}".strip()[:300])
    return list(verdicts.values())


def _day(memory: Memory) -> str:
    return memory.occurred_at.date().isoformat()
