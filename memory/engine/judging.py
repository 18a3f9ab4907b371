"""Deciding whether an interaction becomes a memory, and of which kind.

Offline rules always work; when an LLM is configured it is asked first, and any failure of it
(network, timeout, bad JSON) falls back to the rules, so a bad answer never breaks ingestion.
The richer two-level filter of SPEC §3.2 builds on this module.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from ..conf import memory_settings
from ..errors import ProviderError
from ..models import Interaction, InteractionKind, MemoryKind
from ..providers import get_llm

logger = logging.getLogger(__name__)

CHIT_CHAT = {
    "ok", "okay", "ok thanks", "thanks", "thank you", "thx", "sure", "yes", "no", "got it", "cool",
    "great", "nice", "hello", "hi", "bye", "sounds good", "alright", "fine",
    "好的", "好", "谢谢", "明白了", "收到", "嗯", "好吧", "可以", "没问题", "你好", "再见", "知道了",
}
KIND_BY_INTERACTION = {
    InteractionKind.USER_INPUT: MemoryKind.FACT,
    InteractionKind.ASSISTANT_OUTPUT: MemoryKind.EVENT,
    InteractionKind.AGENT_THOUGHT: MemoryKind.INTENT,
    InteractionKind.TOOL_CALL: MemoryKind.ACTION,
    InteractionKind.TOOL_RESULT: MemoryKind.RESULT,
    InteractionKind.OBSERVATION: MemoryKind.EVENT,
    InteractionKind.SYSTEM: MemoryKind.FACT,
}
# Ordered: the first matching cue decides the kind. English and Chinese.
KIND_CUES: list[tuple[MemoryKind, re.Pattern[str]]] = [
    (MemoryKind.ERROR, re.compile(
        r"\b(error|failed|failure|exception|sold out|unavailable|timeout|denied)\b|失败|错误|异常|售罄|超时", re.I)),
    (MemoryKind.CONSTRAINT, re.compile(
        r"\b(must|budget|allerg\w*|cannot|can't|at most|no more than|deadline|only)\b|预算|过敏|不能|必须|最多|不超过",
        re.I)),
    (MemoryKind.PREFERENCE, re.compile(r"\b(prefer\w*|like|love|hate|favou?rite|rather)\b|喜欢|偏好|更想|讨厌", re.I)),
    (MemoryKind.DECISION, re.compile(r"\b(decided?|choose|chose|will use|go with|settled on)\b|决定|选择|采用", re.I)),
]
IMPORTANT_KINDS = {MemoryKind.ERROR, MemoryKind.CONSTRAINT, MemoryKind.PREFERENCE, MemoryKind.DECISION}
NORMALIZE_RE = re.compile(r"[\s\W_]+", re.UNICODE)


@dataclass(frozen=True)
class Judgement:
    keep: bool
    kind: str
    importance: float
    reason: str
    scores: dict[str, float | str] = field(default_factory=dict)


class JudgeAnswer(BaseModel):
    keep: bool
    kind: Literal[tuple(MemoryKind.values)]  # type: ignore[valid-type]
    importance: int = Field(ge=1, le=5)
    reason: str = Field(max_length=500)


JUDGE_SYSTEM = (
    "You decide what an AI agent's long-term memory keeps. Given the agent's task and one "
    "interaction, answer JSON {\"keep\": bool, \"kind\": one of "
    + ", ".join(MemoryKind.values)
    + ", \"importance\": 1-5, \"reason\": short text}. Drop chit-chat and content with no information."
)


def normalized(text: str) -> str:
    return NORMALIZE_RE.sub(" ", text.lower()).strip()


def _information_length(text: str) -> int:
    # A CJK character carries about as much as a short English word.
    return sum(3 if "\u4e00" <= ch <= "\u9fff" else 1 for ch in text.strip())


def judge_by_rules(interaction: Interaction) -> Judgement:
    text = normalized(interaction.content)
    if text in CHIT_CHAT:
        return Judgement(False, MemoryKind.EVENT, 1.0, "chit-chat with no information", {"judge": "rules"})
    if _information_length(interaction.content) < memory_settings.MIN_MEMORY_CHARS:
        return Judgement(False, MemoryKind.EVENT, 1.0, "too short to carry information", {"judge": "rules"})
    kind = next((k for k, cue in KIND_CUES if cue.search(interaction.content)), None)
    kind = kind or KIND_BY_INTERACTION.get(interaction.kind, MemoryKind.FACT)
    importance = 4.0 if kind in IMPORTANT_KINDS else 3.0
    return Judgement(True, kind, importance, f"kept by rules as {kind}", {"judge": "rules", "importance": importance})


def judge_by_llm(interaction: Interaction) -> Judgement:
    task = interaction.session.task or "(no task description)"
    prompt = f"Task: {task}\nInteraction kind: {interaction.kind}\nContent:\n{interaction.content}"
    answer = get_llm().complete_json(system=JUDGE_SYSTEM, user=prompt, schema=JudgeAnswer)
    return Judgement(
        answer.keep, answer.kind, float(answer.importance), answer.reason,
        {"judge": "llm", "importance": float(answer.importance)},
    )


def judge(interaction: Interaction) -> Judgement:
    rules = judge_by_rules(interaction)
    llm = get_llm()
    if not llm.available or not rules.keep:
        return rules  # chit-chat never reaches the LLM
    try:
        return judge_by_llm(interaction)
    except ProviderError as exc:
        logger.warning("LLM judge failed for interaction %s, using rules: %s", interaction.pk, exc)
        reason = f"{rules.reason} (LLM unavailable: {exc.message[:120]})"
        scores = {**rules.scores, "llm_error": exc.message[:200]}
        return Judgement(rules.keep, rules.kind, rules.importance, reason, scores)
