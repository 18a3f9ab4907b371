"""extract_dimensions: every offline dimension of one interaction's text in one pass."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from ..cues import speaker_label
from .attributes import KIN, KIN_RE, Context, extract_attributes
from .classify import chinese_keywords, english_keywords, intent, sentiment, topic_labels
from .entities import Found, chinese_entities, english_entities, mentions, unique, value_entities
from .patterns import (
    Mask,
    nfkc_same_length,
    scan_amounts,
    scan_emails,
    scan_identifiers,
    scan_numbers,
    scan_paths,
    scan_phones,
    scan_urls,
)
from .records import Dimensions
from .segment import CJK_RE, detect_language, jieba_modules, zh_tokens
from .temporal import attach_times, occurred_at, scan_dates, scan_times, valid_until

MAX_LIST = 30
MAX_CHARS = 20_000  # longer texts (file dumps in tool results) are read up to here


def last_named(texts: Sequence[str], speaker: str | None = None) -> str | None:
    """The person (or family member: "Mum" → mother) the latest of `texts` to name one named last; the
    speakers of a transcript's lines (and `speaker`) are who talks, not who is talked about."""
    for text in reversed(texts):
        text = text[:MAX_CHARS]
        norm = nfkc_same_length(text)
        talking = {speaker, speaker_label(text, spaced=False)}
        tokens = zh_tokens(norm) if CJK_RE.search(norm) else ()
        found, tentative = _names(text, norm, norm, detect_language(norm), tokens)
        named = [(f.start, f.entity.normalized) for f in found + tentative
                 if f.entity.type == "person" and f.entity.normalized not in talking]
        named += [(m.start(), KIN[m.group().casefold()]) for m in KIN_RE.finditer(norm)]
        if named:
            return max(named)[1]
    return None


def _names(text: str, blanked: str, norm: str, language: str, tokens: tuple) -> tuple[list[Found], list[Found]]:
    """Names written in the text (English capitalised words, Chinese from jieba's tags), and the tentative ones."""
    english, tentative = english_entities(text, blanked, language)
    return english + (chinese_entities(text, norm, tokens) if tokens else []), tentative


def _unique(values: list[str], limit: int = MAX_LIST) -> list[str]:
    return list(dict.fromkeys(v for v in values if v))[:limit]


def extract_dimensions(text: str, *, now: datetime, kind: str | None = None,
                       earlier: Callable[[], Sequence[str]] = tuple) -> Dimensions:
    """Entities, intent, topics, values, times and attributes of `text`, with relative dates resolved
    against `now` (the interaction's time). Pure Python, no I/O; Chinese goes through jieba.
    Only the first MAX_CHARS characters are read. `earlier()`: the turns right before (oldest first), asked
    for only to tell whose "his/her number" this is when the text names no one."""
    text = (text or "")[:MAX_CHARS]
    norm = nfkc_same_length(text)
    language = detect_language(norm)
    mask = Mask(len(norm))
    urls = scan_urls(norm, mask)
    emails = scan_emails(norm, mask)
    paths = scan_paths(norm, mask)
    phones = scan_phones(norm, mask)
    dates = scan_dates(norm, mask, now.date())
    times = scan_times(norm, mask)
    dates = attach_times(dates, times, norm)
    amounts = scan_amounts(norm, mask)
    identifiers = scan_identifiers(norm, mask)
    numbers = scan_numbers(norm, mask)
    blanked = mask.blank(norm)

    tokens = zh_tokens(norm) if CJK_RE.search(norm) else ()
    names, tentative = _names(text, blanked, norm, language, tokens)
    found = value_entities(text, paths, urls, identifiers) + names
    all_mentions = mentions(found)
    entities = unique(all_mentions)
    named = {e.normalized for e in entities}

    attributes = extract_attributes(Context(
        text=norm, blanked=blanked, phones=phones, emails=emails, amounts=amounts, numbers=numbers,
        identifiers=identifiers, dates=dates, times=times, mentions=all_mentions, tokens=tokens,
        referent=lambda: last_named(earlier(), speaker_label(text, spaced=False)),
    ))
    label, subjectivity = sentiment(blanked, kind)
    kind_of_intent = intent(blanked, kind, norm)
    if kind_of_intent == "chit_chat":
        keywords, topic_words = [], []
    elif language == "zh" and tokens:
        mods = jieba_modules()
        keywords, topic_words = chinese_keywords(tokens, mask.taken, mods["idf"], mods["median_idf"])
    else:
        entity_words = {w for e in entities for w in e.normalized.split()}
        keywords, topic_words = english_keywords(blanked, entity_words)
    topics = _unique(topic_labels(norm) + topic_words, 5) if kind_of_intent != "chit_chat" else []

    iso_dates: list[str] = []
    stated: list[str] = []
    for hit in dates:
        days = [hit.first.isoformat()] + ([hit.last.isoformat()] if hit.last else [])
        iso_dates.extend(days)
        stated.extend(days if not hit.relative else [])
    clock = sorted([(t.start, t.at.strftime("%H:%M")) for t in times]
                   + [(d.start, d.at.strftime("%H:%M")) for d in dates if d.at is not None])
    return Dimensions(
        language=language,
        entities=entities,
        intent=kind_of_intent,
        topics=topics,
        keywords=keywords,
        sentiment=label,
        subjectivity=subjectivity,
        occurred_at=occurred_at(dates, times, now),
        valid_until=valid_until(blanked, dates, now),
        dates=_unique(iso_dates),
        times=_unique([value for _, value in clock]),
        amounts=_unique([h.value for h in amounts]),
        numbers=_unique([h.value for h in numbers]),
        urls=_unique([h.value for h in urls]),
        paths=_unique([h.value for h in paths]),
        identifiers=_unique([h.value for h in identifiers]),
        attributes=attributes,
        stated_dates=_unique(stated),
        tentative_entities=[e for e in unique(mentions(tentative)) if e.normalized not in named],
    )
