"""The baselines every engine preset is compared with, computed over the same interactions in the same run.

- `bm25`: Okapi BM25 (k1 1.2, b 0.75) over every interaction of the question's scope, all of them (no
  filter), tokenised by lower-cased words, Chinese segmented with jieba;
- `bm25+vector`: that BM25 ranking and the configured embedder's cosine ranking over the same
  interactions, fused by reciprocal-rank fusion (k = 60);
- `bm25+vector+neighbours`: that fused ranking, each hit followed by the turns right before and after it
  in its session: the "take the turns next to each hit" rule a graph of dependencies has to beat on chain
  questions (issue 11 measured it reaching far evidence more often than the engine did).

They answer "what would a plain search over the agent's history give?", the bar the graph must clear.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field

import jieba

from .dataset import EvalFile, EvalInteraction, Question

BASELINES = ("bm25", "bm25+vector", "bm25+vector+neighbours")
RRF_K = 60
K1, B = 1.2, 0.75
_WORD = re.compile(r"\w+", re.UNICODE)
_CJK = re.compile(r"[\u3400-\u9fff]")
# Words too common to say what a question is about (used only to tell far evidence from near).
STOPWORDS = frozenset(
    "a an and are as at be by can did do does for from had has have how i in is it its me my of on or our "
    "should so that the their them there they this to was we were what when where which who why will with "
    "you your 的 了 是 在 我 你 他 她 们 吗 呢 吧 和 与 就 都 也 要 会 什么 怎么 哪 哪些 多少 "
    "一个 这个 那个 有 没有".split())


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens; runs of Chinese characters segmented by jieba."""
    lowered = text.lower()
    if _CJK.search(lowered):
        return [t for piece in jieba.lcut(lowered) for t in _WORD.findall(piece)]
    return _WORD.findall(lowered)


def content_terms(text: str) -> set[str]:
    return {t for t in tokens(text) if t not in STOPWORDS and (len(t) > 1 or _CJK.match(t))}


def is_far(question: str, evidence: str) -> bool:
    """Far evidence shares no content word with the question: only a link can lead a search to it."""
    return not (content_terms(question) & content_terms(evidence))


class BM25:
    def __init__(self, documents: list[list[str]]) -> None:
        self.documents = [Counter(d) for d in documents]
        self.lengths = [len(d) for d in documents]
        self.average = sum(self.lengths) / len(self.lengths) if self.lengths else 0.0
        frequency = Counter(term for d in self.documents for term in d)
        n = len(documents)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in frequency.items()}

    def scores(self, query: list[str]) -> list[float]:
        terms = [t for t in dict.fromkeys(query) if t in self.idf]
        result = []
        for counts, length in zip(self.documents, self.lengths, strict=True):
            norm = K1 * (1 - B + B * length / self.average) if self.average else K1
            result.append(sum(self.idf[t] * counts[t] * (K1 + 1) / (counts[t] + norm) for t in terms if counts[t]))
        return result


@dataclass
class BaselineIndex:
    """One file's interactions, tokenised and embedded once, searched per question scope."""

    spec: EvalFile
    embedder: object
    _vectors: dict[str, list[float]] = field(default_factory=dict)
    _tokens: dict[str, list[str]] = field(default_factory=dict)
    _around: dict[str, tuple[str, ...]] = field(default_factory=dict)  # the turns before and after, same session

    def __post_init__(self) -> None:
        items = self.spec.interactions
        for session in self.spec.sessions:
            ids = [i.id for i in session.interactions]
            for position, local_id in enumerate(ids):
                self._around[local_id] = tuple(ids[j] for j in (position - 1, position + 1) if 0 <= j < len(ids))
        self._tokens = {i.id: tokens(i.content) for i in items}
        self._vectors = dict(zip((i.id for i in items), self.embedder.embed([i.content for i in items]),
                                 strict=True))

    def _scope(self, question: Question) -> list[EvalInteraction]:
        if question.scope == "project":
            return self.spec.interactions
        return next(s.interactions for s in self.spec.sessions if s.key == question.scope)

    def rank(self, question: Question, baseline: str, k: int) -> list[str]:
        items = self._scope(question)
        ids = [i.id for i in items]
        bm25 = BM25([self._tokens[i] for i in ids]).scores(tokens(question.text))
        by_text = [ids[j] for j in sorted(range(len(ids)), key=lambda j: -bm25[j]) if bm25[j] > 0]
        if baseline == "bm25":
            return by_text[:k]
        query = self.embedder.embed_one(question.text)
        similarity = {i: _cosine(query, self._vectors[i]) for i in ids}
        by_vector = sorted(ids, key=lambda i: -similarity[i])
        fused: dict[str, float] = {}
        for ranking in (by_text, by_vector):
            for position, local_id in enumerate(ranking, start=1):
                fused[local_id] = fused.get(local_id, 0.0) + 1.0 / (RRF_K + position)
        ranked = sorted(fused, key=lambda i: -fused[i])
        if baseline == "bm25+vector":
            return ranked[:k]
        return self._with_neighbours(ranked, set(ids), k)

    def _with_neighbours(self, ranked: list[str], in_scope: set[str], k: int) -> list[str]:
        """Each hit, then the turn before it and the turn after it in its session (when in scope and not listed)."""
        taken: dict[str, None] = {}
        for local_id in ranked:
            for neighbour in (local_id, *self._around.get(local_id, ())):
                if neighbour in in_scope:
                    taken.setdefault(neighbour)
            if len(taken) >= k:
                break
        return list(taken)[:k]


def _cosine(a: list[float], b: list[float]) -> float:
    norms = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b, strict=True)) / norms if norms else 0.0
