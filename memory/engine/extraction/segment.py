"""Language detection, jieba (loaded lazily, once, quietly) and search tokens."""

from __future__ import annotations

import logging
import re
import threading
import unicodedata
import warnings
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .lexicon import EN_STOP, ZH_STOP

CJK_RE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
LATIN_WORD_RE = re.compile(r"[A-Za-z][A-Za-z'’-]*")
ASCII_CHUNK_RE = re.compile(r"[!-~]+")  # runs of printable ASCII without spaces
# Code-ish chunks (paths, calls, snake_case, CamelCase, key=value, a.b) are not English prose.
CODE_MARK_RE = re.compile(r"[/_=(){}\[\]]|[a-z][A-Z]|[A-Za-z0-9]\.[A-Za-z]")
ASCII_TOKEN_RE = re.compile(r"[a-z0-9]+")
PUNCT_ONLY_RE = re.compile(r"^[\W_]+$")

_lock = threading.Lock()
_jieba: dict[str, Any] | None = None


@dataclass(frozen=True)
class Token:
    word: str
    flag: str  # jieba's dictionary POS tag; "un" for a word its HMM found, "eng"/"m"/"x" for Latin, digits, rest
    start: int
    known: bool  # in jieba's dictionary as a word (not guessed by the HMM)

    @property
    def end(self) -> int:
        return self.start + len(self.word)


def jieba_modules() -> dict[str, Any]:
    """jieba, its dictionary POS tags and its TF-IDF table, initialised once on first use (about one second)."""
    global _jieba
    if _jieba is not None:
        return _jieba
    with _lock:
        if _jieba is None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                import jieba
                import jieba.analyse
                import jieba.posseg

                jieba.setLogLevel(logging.WARNING)
                jieba.initialize()
                tfidf = jieba.analyse.default_tfidf
                _jieba = {
                    "jieba": jieba, "tags": jieba.posseg.dt.word_tag_tab, "freq": jieba.dt.FREQ,
                    "idf": tfidf.idf_freq, "median_idf": tfidf.median_idf,
                }
    return _jieba


def warm_up() -> None:
    """Load jieba now (e.g. at worker start) instead of on the first Chinese text."""
    zh_tokens("预热")


def detect_language(text: str) -> str:
    """Return "zh" when Chinese characters outnumber English prose words (code does not count), else "en"."""
    cjk = len(CJK_RE.findall(text))
    if not cjk:
        return "en"
    latin = 0
    for chunk in ASCII_CHUNK_RE.findall(text):
        if not CODE_MARK_RE.search(chunk):
            latin += len(LATIN_WORD_RE.findall(chunk))
    return "zh" if cjk >= latin else "en"


def _flag(word: str, tags: dict[str, str]) -> tuple[str, bool]:
    tag = tags.get(word)
    if tag is not None:
        return tag, True
    if CJK_RE.match(word):
        return "un", False
    if word[:1].isascii() and word[:1].isalpha():
        return "eng", False
    if word[:1].isdigit():
        return "m", False
    return "x", False


PIECE = 200
BREAK_RE = re.compile(r"[\s,.;:!?，。；：！？、]")


def pieces(text: str) -> list[tuple[int, str]]:
    """(offset, piece) with pieces of at most PIECE characters, cut after punctuation where possible.

    jieba's HMM copies its path at every step, so one very long unpunctuated run would cost O(n²)."""
    if len(text) <= PIECE:
        return [(0, text)]
    out, start = [], 0
    while start < len(text):
        end = min(len(text), start + PIECE)
        if end < len(text):
            cut = max((m.end() for m in BREAK_RE.finditer(text, start + PIECE // 2, end)), default=end)
            end = cut
        out.append((start, text[start:end]))
        start = end
    return out


@lru_cache(maxsize=512)
def zh_tokens(text: str) -> tuple[Token, ...]:
    """jieba words with their dictionary POS tags and offsets in `text` (cached per text).

    jieba.cut (dictionary + its fast HMM for unknown words) with tags looked up in jieba's
    dictionary: an order of magnitude faster than jieba.posseg, whose POS-HMM dominates the cost.
    """
    mods = jieba_modules()
    tags = mods["tags"]
    tokens: list[Token] = []
    for base, piece in pieces(text):
        offset = 0
        for word in mods["jieba"].cut(piece):
            at = piece.find(word, offset)
            if at < 0:  # jieba never drops characters, but stay safe
                at = offset
            flag, known = _flag(word, tags)
            tokens.append(Token(word, flag, base + at, known))
            offset = at + len(word)
    return tuple(tokens)


def fold_ascii(word: str) -> str:
    """A light plural fold so "hotels" finds "hotel" (applied to documents and queries alike)."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is", "os", "as")):
        return word[:-1]
    return word


def _ascii_terms(chunk: str) -> list[str]:
    out = []
    for word in ASCII_TOKEN_RE.findall(chunk):
        if word in EN_STOP or (len(word) == 1 and not word.isdigit()):
            continue
        out.append(fold_ascii(word))
    return out


def segment(text: str) -> list[str]:
    """Search terms: Chinese words via jieba (cut_for_search), English words lower-cased.

    Punctuation and stop words are dropped; code and paths split into their word parts
    (reports/views.py -> reports, views, py) so a query can match any of them.
    """
    text = unicodedata.normalize("NFKC", text)
    if not CJK_RE.search(text):
        return _ascii_terms(text.lower())
    terms: list[str] = []
    cut_for_search = jieba_modules()["jieba"].cut_for_search
    for piece in (word for _, chunk in pieces(text) for word in cut_for_search(chunk)):
        piece = piece.strip().lower()
        if not piece or PUNCT_ONLY_RE.match(piece):
            continue
        if CJK_RE.search(piece):
            if piece not in ZH_STOP:
                terms.append(piece)
        else:
            terms.extend(_ascii_terms(piece))
    return terms


def term_overlap(a: str, b: str) -> float:
    """Cosine of the two texts' search-term sets: how alike they are for a text the embedder cannot read."""
    first, second = set(segment(a)), set(segment(b))
    if not first or not second:
        return 0.0
    return len(first & second) / (len(first) * len(second)) ** 0.5
