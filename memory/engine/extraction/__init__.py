"""Offline dimension extraction (SPEC §3.3): pure Python, English and Simplified Chinese.

With an LLM configured, the judge's view of the same text is merged in (`with_llm_dimensions`).

No database, network or LLM. Chinese goes through jieba (its built-in dictionary only), loaded
lazily on the first Chinese text; call `warm_up()` at worker start to pay that second up front.
"""

from __future__ import annotations

from .attributes import ATTRIBUTES, MULTI_VALUED
from .classify import INTENTS
from .dimensions import extract_dimensions
from .llm_merge import with_llm_dimensions
from .records import AttributeValue, Dimensions, ExtractedEntity
from .segment import detect_language, segment, term_overlap, warm_up

__all__ = [
    "ATTRIBUTES",
    "INTENTS",
    "MULTI_VALUED",
    "AttributeValue",
    "Dimensions",
    "ExtractedEntity",
    "detect_language",
    "extract_dimensions",
    "segment",
    "term_overlap",
    "warm_up",
    "with_llm_dimensions",
]
