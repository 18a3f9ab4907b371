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
# Code-ish tokens (paths, calls, snake_case, CamelCase, key=value) do not count as English prose.
CODE_TOKEN_RE = re.compile(
    r"[A-Za-z0-9_.-]*[/_=(){}\[\]][A-Za-z0-9_./=(){}\[\]-]*|[a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*|\w+\.\w+"
)
ASCII_TOKEN_RE = re.compile(r"[a-z0-9]+")
PUNCT_ONLY_RE = re.compile(r"^[\W_]+$")

_lock = threading.Lock()
_state: dict[str, Any] = {}


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
    """jieba, its POS tagger and its TF-IDF tables, initialised on first use (about one second)."""
    if _state:
        return _state
    with _lock:
        if not _state:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                import jieba
                import jieba.analyse
                import jieba.posseg

                jieba.setLogLevel(logging.WARNING)
                jieba.initialize()
                tfidf = jieba.analyse.default_tfidf
                loaded = {
                    "jieba": jieba, "tags": jieba.posseg.dt.word_tag_tab, "freq": jieba.dt.FREQ,
                    "idf": tfidf.idf_freq, "median_idf": tfidf.median_idf,
                }
            _state.update(loaded)
    return _state


def warm_up() -> None:
    """Load jieba now (e.g. at worker start) instead of on the first Chinese text."""
    zh_tokens("预热")


def detect_language(text: str) -> str:
    """"zh" when Chinese characters outnumber the English prose words, else "en"."""
    cjk = len(CJK_RE.findall(text))
    if not cjk:
        return "en"
    prose = CODE_TOKEN_RE.sub(" ", text)
    latin = len(LATIN_WORD_RE.findall(prose))
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


@lru_cache(maxsize=512)
def zh_tokens(text: str) -> tuple[Token, ...]:
    """jieba words with their dictionary POS tags and offsets in `text` (cached per text).

    jieba.cut (dictionary + its fast HMM for unknown words) with tags looked up in jieba's
    dictionary: an order of magnitude faster than jieba.posseg, whose POS-HMM dominates the cost.
    """
    mods = jieba_modules()
    tags = mods["tags"]
    tokens: list[Token] = []
    offset = 0
    for word in mods["jieba"].cut(text):
        at = text.find(word, offset)
        if at < 0:  # jieba never drops characters, but stay safe
            at = offset
        flag, known = _flag(word, tags)
        tokens.append(Token(word, flag, at, known))
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
    for piece in jieba_modules()["jieba"].cut_for_search(text):
        piece = piece.strip().lower()
        if not piece or PUNCT_ONLY_RE.match(piece):
            continue
        if CJK_RE.search(piece):
            if piece not in ZH_STOP:
                terms.append(piece)
        else:
            terms.extend(_ascii_terms(piece))
    return terms
