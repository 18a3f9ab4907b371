"""A flaky OpenAI for the soak test: each chat request draws its fate at random (seeded), not from a script.

tests/openai_server.FakeOpenAI answers what a test scripted; a soak sends thousands of requests in an
order nobody controls, so here every chat request independently fails (HTTP 500 or 429), hangs past
the client's timeout, or gets a valid answer for the prompt it carries: the pipeline's scoring prompt
(memory.engine.scoring.LLMScores) or its link prompt (memory.engine.inference.LLMLinks). Every
outcome is counted, so the report can say how many LLM calls the app made and how many failed.
"""

from __future__ import annotations

import random
import re
import threading
from collections import Counter
from typing import Any

from tests.openai_server import (
    CHAT_PATH,
    Behaviour,
    FakeOpenAI,
    RecordedRequest,
    answer_json,
    http_error,
    rate_limited,
    slow,
)

SCORE_PROMPT = "You score one interaction"  # start of memory.engine.scoring.LLM_SYSTEM
LINK_PROMPT = "You link a new memory"  # start of memory.engine.inference.LLM_SYSTEM
# What the soak's texts are about, mapped to the kind a judge would give them (the rest are facts).
KIND_CUES = [
    (re.compile(r"\b(prefer|favourite|like|love|hate)\b", re.I), "preference"),
    (re.compile(r"\b(budget|must|never|at most|no more than|deadline|allergic|cannot)\b", re.I), "constraint"),
    (re.compile(r"\b(decided|decision|will use|go with|chose)\b", re.I), "decision"),
    (re.compile(r"\b(error|failed|timeout|exception|refused|sold out)\b", re.I), "error"),
    (re.compile(r"^\w+\(", re.I), "action"),
    (re.compile(r"\b(found|returned|results?|rows?)\b", re.I), "result"),
]
SMALL_TALK = re.compile(r"\b(weather|weekend|coffee|lunch|by the way)\b", re.I)
CAPITALISED = re.compile(r"\b[A-Z][a-z]{2,}(?: [A-Z][a-z]{2,})?\b")
LINK_RELATIONS = ("elaborates", "temporal", "references", "causal", "part_of")


class FlakyOpenAI(FakeOpenAI):
    """FakeOpenAI whose chat answers fail at `failure_rate` (500/429 half each), time out at `timeout_rate`
    (a delay of `hang_seconds`, longer than the client's timeout) and otherwise answer validly.

    Requests are counted, not stored: a soak makes tens of thousands and their prompts are not needed.
    """

    def __init__(self, *, failure_rate: float = 0.3, timeout_rate: float = 0.1, hang_seconds: float = 3.0,
                 seed: int = 7, retry_after_ms: int = 100) -> None:
        super().__init__()
        self.failure_rate, self.timeout_rate, self.hang_seconds = failure_rate, timeout_rate, hang_seconds
        self.retry_after_ms = retry_after_ms
        self.outcomes: Counter[str] = Counter()  # chat requests by what they got
        self.paths: Counter[str] = Counter()
        self._random = random.Random(seed)
        self._local = threading.local()

    # -- FakeOpenAI hooks --------------------------------------------------------------------
    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.paths[request.path] += 1

    def _respond(self, path: str, request: Any) -> tuple[int, dict[str, str], Any]:
        self._local.request = request  # _next() only gets the path; the answer depends on the prompt
        return super()._respond(path, request)

    def _next(self, path: str) -> Behaviour | None:
        if path != CHAT_PATH:
            return None  # embeddings: the hash vectors of the base class (the soak embeds offline anyway)
        with self._lock:
            draw = self._random.random()
            coin = self._random.random()
        request = getattr(self._local, "request", {}) or {}
        if draw < self.failure_rate:
            outcome, behaviour = ("http_500", http_error(500, retry_after_ms=self.retry_after_ms)) if coin < 0.5 \
                else ("http_429", rate_limited(retry_after_ms=self.retry_after_ms))
        elif draw < self.failure_rate + self.timeout_rate:
            outcome, behaviour = "timeout", slow(self.hang_seconds, answer_json({}))
        else:
            outcome, behaviour = self._answer(request)
        with self._lock:
            self.outcomes[outcome] += 1
        return behaviour

    # -- valid answers -------------------------------------------------------------------------
    def _answer(self, request: dict[str, Any]) -> tuple[str, Behaviour]:
        messages = request.get("messages") or [{}]
        system = str(messages[0].get("content", ""))
        user = str(messages[-1].get("content", ""))
        if system.startswith(SCORE_PROMPT):
            return "answered_score", answer_json(score_answer(user))
        if system.startswith(LINK_PROMPT):
            return "answered_links", answer_json(links_answer(user))
        return "answered_unknown_prompt", answer_json({})  # invalid for any schema: the caller falls back

    def summary(self) -> dict[str, Any]:
        with self._lock:
            outcomes = dict(self.outcomes)
        chat = sum(outcomes.values())
        answered = sum(n for name, n in outcomes.items() if name.startswith("answered"))
        return {"chat_requests": chat, "embedding_requests": self.paths.get("/v1/embeddings", 0),
                "answered": answered, "http_500": outcomes.get("http_500", 0),
                "http_429": outcomes.get("http_429", 0), "timed_out": outcomes.get("timeout", 0),
                "by_outcome": outcomes}


def score_answer(prompt: str) -> dict[str, Any]:
    """A valid LLMScores for the scoring prompt ("Task: …\\nKind: …\\nContent:\\n…"): small talk scores low
    (dropped by the total), the rest is kept, with a kind from the text and the capitalised names in it
    (names the text contains, so extraction.with_llm_dimensions keeps them)."""
    content = prompt.split("Content:\n", 1)[-1]
    kind = next((name for pattern, name in KIND_CUES if pattern.search(content)), "fact")
    if SMALL_TALK.search(content):
        return {"relevance": 1, "importance": 1, "novelty": 2, "kind": "event", "reason": "small talk, off the task",
                "entities": [], "intent": "chit_chat", "topics": [], "sentiment": "neutral"}
    names = list(dict.fromkeys(CAPITALISED.findall(content)))[:3]
    importance = 5 if kind in ("constraint", "decision", "error") else 3
    return {"relevance": 4, "importance": importance, "novelty": 3, "kind": kind,
            "reason": f"a {kind} the agent will need later",
            "entities": [{"name": name, "type": "other"} for name in names], "intent": "inform",
            "topics": [kind], "sentiment": "neutral"}


def links_answer(prompt: str) -> dict[str, Any]:
    """A valid LLMLinks: the first candidate (the "[0] …" line), linked with a relation picked from the text."""
    candidates = re.findall(r"^\[(\d+)\]", prompt, re.M)
    if not candidates:
        return {"links": []}
    relation = LINK_RELATIONS[len(prompt) % len(LINK_RELATIONS)]
    return {"links": [{"candidate": int(candidates[0]), "relation": relation, "confidence": 0.75,
                       "rationale": "builds on the earlier step"}]}
