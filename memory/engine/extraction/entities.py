"""Named things: files, URLs, products, capitalised English names, Chinese names via jieba POS tags."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .lexicon import (
    EN_NOT_NAMES,
    EN_WEAK,
    FIRST_NAMES,
    NAME_CONNECTORS,
    ORG_FIRST,
    ORG_HEADS,
    ORGANIZATIONS,
    PERSON_CUES,
    PERSON_TITLES,
    PLACE_FIRST,
    PLACE_HEADS,
    PLACES,
    PRODUCTS,
    PRODUCTS_CASE_SENSITIVE,
    ZH_COMPOUND_SURNAMES,
    ZH_NAME_PREFIXES,
    ZH_NOT_NAMES,
    ZH_ORG_SUFFIXES,
    ZH_ORGANIZATIONS,
    ZH_PLACE_ENDINGS,
    ZH_PLACE_SUFFIXES,
    ZH_PLACES,
    ZH_PRODUCTS,
    ZH_SURNAMES,
    ZH_VERB_ENDINGS,
)
from .patterns import EXT_RE, KNOWN_FILES, Hit, Mask, normalize_name
from .records import ExtractedEntity
from .segment import CJK_RE, Token

PERSON, PLACE, ORGANIZATION, PRODUCT, FILE, CONCEPT, OTHER = (
    "person", "place", "organization", "product", "file", "concept", "other")


@dataclass(frozen=True)
class Found:
    start: int
    end: int
    entity: ExtractedEntity


def make_entity(surface: str, name: str, kind: str) -> ExtractedEntity:
    return ExtractedEntity(surface=surface, name=name, normalized=normalize_name(name), type=kind)


def _alternation(words: list[str]) -> str:
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


_product_keys_ci = [k for k, v in PRODUCTS.items() if v not in PRODUCTS_CASE_SENSITIVE and k not in
                    {p.casefold() for p in PRODUCTS_CASE_SENSITIVE}]
PRODUCT_CI_RE = re.compile(r"(?<![A-Za-z0-9_.\-/])(?:" + _alternation(_product_keys_ci) + r")(?![A-Za-z0-9_\-])",
                           re.I)
PRODUCT_CS_RE = re.compile(r"(?<![A-Za-z0-9_.\-/])(?:" + _alternation(sorted(PRODUCTS_CASE_SENSITIVE))
                           + r")(?![A-Za-z0-9_\-])")
ORG_RE = re.compile(r"(?<![A-Za-z0-9_.\-])(?:" + _alternation(list(ORGANIZATIONS.values())) + r")(?![A-Za-z0-9_\-])")
MODULE_RE = re.compile(r"(?<![A-Za-z0-9_.\-])(?P<name>[A-Za-z][A-Za-z0-9_.\-]{1,30})\s+(?:module|library|package|"
                       r"framework|crate|gem|plugin)s?(?![A-Za-z])")
MODULE_NOT_NAMES = frozenset("""
new built-in builtin stdlib standard third-party external this that same any no one a an the own custom core main
whole entire big small local extra other additional separate installed dependency helper utility utils python
python's our your my their its such every each some which what default existing single only first second
add install use remove import need needs want update upgrade
""".split())
TOKEN = r"[A-Z][a-z\u00e0-\u00ff]+(?:[-'’][A-Za-z\u00e0-\u00ff]+)*"
CONNECTOR = r"(?:" + "|".join(sorted(NAME_CONNECTORS | {"&"})) + r")"
RUN_RE = re.compile(r"(?<![A-Za-z0-9_])" + TOKEN + r"(?:[ \t]+(?:" + CONNECTOR + r"[ \t]+)?" + TOKEN + r")*"
                    r"(?:[ \t]+\d{1,3}(?![A-Za-z0-9_.:]))?(?![A-Za-z0-9_])")
WORD_RE = re.compile(r"[A-Za-z\u00e0-\u00ff][\w'’-]*|\d+")
TITLE_RE = re.compile(r"(?<![A-Za-z])(?:Mr|Mrs|Ms|Dr|Prof|Mx)\.?[ \t]+(?P<name>" + TOKEN + r"(?:[ \t]+" + TOKEN
                      + r")?)")
# A name someone introduces or greets ("Hi, this is Kenji Sato", "Hello, Ana Silva again", "Omar Haddad
# here") is a person's, whatever its first name.
INTRODUCED_RE = re.compile(r"\b(?:this is|i am|i'm|my name is|name's|(?:hello|hi|hey|dear),?)[ \t]+$", re.I)
HERE_RE = re.compile(r"[ \t]+here\b", re.I)
TRAILING_NUMBER_RE = re.compile(r"[ \t]+(\d{1,3}|[A-Z])(?![A-Za-z0-9_.:])")
NUMBERED_HEADS = frozenset({"terminal", "gate", "hall", "platform", "building", "room", "line", "pier", "t"})
OPENERS = "\"'“‘([{「『<"
BOUNDARIES = ".!?:;\n。！？：；)]}」』>"
ZH_PROPER = frozenset({"ns", "nr", "nrfg", "nt", "nrt"})
ZH_FUNCTION_CHARS = frozenset("并和在的了是就也都还又把被对从向给让用为与及或而但如若"
                              "会要能可将已再才只不没很太最更每各前后时这那有个次")
ZH_SUFFIXES = ZH_PLACE_SUFFIXES | ZH_ORG_SUFFIXES
ZH_LEXICON_RE = re.compile("(?P<name>" + _alternation([*ZH_PRODUCTS, *ZH_ORGANIZATIONS, *ZH_PLACES]) + ")(?P<suffix>"
                           + _alternation(sorted(ZH_SUFFIXES)) + ")?")


def _sentence_initial(text: str, start: int) -> bool:
    i = start - 1
    while i >= 0 and (text[i] in " \t" or text[i] in OPENERS):
        if text[i] in OPENERS:
            return True
        i -= 1
    if i < 0:
        return True
    if text[i] in BOUNDARIES:
        return True
    # list markers such as "1. " or "- "
    return text[i] in "-*•" and (i == 0 or text[i - 1] in " \t\n")


def _word_before(text: str, start: int) -> str:
    words = WORD_RE.findall(text[max(0, start - 30):start])
    return words[-1].casefold() if words else ""


def _word_after(text: str, end: int) -> str:
    m = WORD_RE.match(text[end:end + 30].lstrip(" \t"))
    return m.group().casefold() if m else ""


def _introduced(blanked: str, start: int, end: int) -> bool:
    return (INTRODUCED_RE.search(blanked[max(0, start - 20):start]) is not None
            or HERE_RE.match(blanked, end) is not None)


def _english_type(words: list[str], before: str, after: str, introduced: bool = False) -> str:
    lowered = [w.casefold() for w in words]
    name = " ".join(lowered)
    if name in PLACES:
        return PLACE
    if name in ORGANIZATIONS:
        return ORGANIZATION
    if name in PRODUCTS:
        return PRODUCT
    first = lowered[0]
    head = lowered[-1]
    if "of" in lowered[1:]:
        head = lowered[lowered.index("of", 1) - 1]
    if head.isdigit() and len(lowered) > 1:
        head = lowered[-2]
    if first in PERSON_TITLES:
        return PERSON
    if head in ORG_HEADS or first in ORG_FIRST:
        return ORGANIZATION
    if head in PLACE_HEADS or first in PLACE_FIRST:
        return PLACE
    if first in FIRST_NAMES and len(lowered) <= 3:
        return PERSON
    if any(w in PLACES for w in lowered):
        return PLACE
    if before in PERSON_CUES or introduced:
        return PERSON
    if after in PLACE_HEADS:
        return PLACE
    if after in ORG_HEADS:
        return ORGANIZATION
    return OTHER


def _known_single(word: str) -> bool:
    key = word.casefold()
    return key in PLACES or key in ORGANIZATIONS or key in PRODUCTS or key in FIRST_NAMES


def english_entities(text: str, blanked: str, language: str) -> tuple[list[Found], list[Found]]:
    """Products, organisations and capitalised names in `blanked` (values already masked out), and the
    tentative ones: a single capitalised word opening a sentence ("Tom: Dale says…") is a name only if
    it is written mid-sentence too, here or in earlier memories (the pipeline asks the project)."""
    found: list[Found] = []
    mask = Mask(len(blanked))
    for pattern in (PRODUCT_CI_RE, PRODUCT_CS_RE):
        for m in pattern.finditer(blanked):
            if mask.free(m.start(), m.end()):
                mask.take(m.start(), m.end())
                canonical = PRODUCTS[m.group().casefold()]
                found.append(Found(m.start(), m.end(), make_entity(text[m.start():m.end()], canonical, PRODUCT)))
    for m in ORG_RE.finditer(blanked):
        if mask.free(m.start(), m.end()):
            mask.take(m.start(), m.end())
            name = ORGANIZATIONS[m.group().casefold()]
            found.append(Found(m.start(), m.end(), make_entity(text[m.start():m.end()], name, ORGANIZATION)))
    for m in MODULE_RE.finditer(blanked):
        name = m.group("name").rstrip(".")
        key = name.casefold()
        if (key in MODULE_NOT_NAMES or key.endswith(("ing", "ed")) or key in EN_NOT_NAMES or key in EN_WEAK
                or not mask.free(m.start("name"), m.start("name") + len(name))):
            continue
        mask.take(m.start("name"), m.start("name") + len(name))
        display = PRODUCTS.get(key, name)
        found.append(Found(m.start("name"), m.start("name") + len(name),
                           make_entity(text[m.start("name"):m.start("name") + len(name)], display, PRODUCT)))
    for m in TITLE_RE.finditer(blanked):
        if mask.free(m.start(), m.end()):
            mask.take(m.start(), m.end())
            found.append(Found(m.start(), m.end(), make_entity(text[m.start():m.end()], m.group("name"), PERSON)))

    blanked = mask.blank(blanked)
    accepted_singles: set[str] = set()
    deferred: list[tuple[int, int, str]] = []
    for m in RUN_RE.finditer(blanked):
        spans = [(w.start() + m.start(), w.end() + m.start(), w.group()) for w in WORD_RE.finditer(m.group())]
        initial = _sentence_initial(blanked, m.start())
        # a possessive ends the name: "Maya's school" -> "Maya"
        for i, (s, e, w) in enumerate(spans):
            if w.endswith(("'s", "’s")):
                spans = spans[:i] + [(s, e - 2, w[:-2])]
                break
        while spans and (spans[0][2].casefold() in EN_NOT_NAMES or spans[0][2].casefold() in NAME_CONNECTORS):
            spans = spans[1:]
            initial = False
        while spans and (spans[-1][2].casefold() in EN_NOT_NAMES or spans[-1][2].casefold() in NAME_CONNECTORS):
            spans = spans[:-1]
        if spans and spans[-1][2].isdigit() and (len(spans) < 2 or spans[-2][2].casefold() not in NUMBERED_HEADS):
            spans = spans[:-1]
        if not spans:
            continue
        if spans[-1][2].casefold() in NUMBERED_HEADS:
            number = TRAILING_NUMBER_RE.match(text, spans[-1][1])
            if number:
                spans.append((number.start(1), number.end(1), number.group(1)))
        start, end = spans[0][0], spans[-1][1]
        words = [w for _, _, w in spans]
        if len(words) == 1:
            word = words[0]
            if _known_single(word):
                pass
            elif word.casefold() in PLACE_HEADS or word.casefold() in ORG_HEADS:
                continue
            elif language != "en" or len(word) < 3:
                continue
            elif initial:
                deferred.append((start, end, word))
                continue
            else:
                accepted_singles.add(word)
        surface = text[start:end]
        kind = _english_type(words, _word_before(blanked, start), _word_after(blanked, end),
                             _introduced(blanked, start, end))
        if kind == OTHER and language != "en":  # "Seq Scan", "Execution Time" in a Chinese tool result
            continue
        found.append(Found(start, end, make_entity(surface, " ".join(words), kind)))
    tentative: list[Found] = []
    for start, end, word in deferred:
        kind = _english_type([word], _word_before(blanked, start), _word_after(blanked, end))
        (found if word in accepted_singles else tentative).append(
            Found(start, end, make_entity(text[start:end], word, kind)))
    return found, tentative


def value_entities(text: str, paths: list[Hit], urls: list[Hit], identifiers: list[Hit]) -> list[Found]:
    found = []
    for hit in paths:
        last = hit.value.rstrip("/").rsplit("/", 1)[-1].rsplit("\\", 1)[-1]
        is_file = bool(EXT_RE.search(last)) or last.casefold() in KNOWN_FILES or last.startswith(".")
        kind = FILE if is_file or not hit.value.startswith("/") else OTHER
        found.append(Found(hit.start, hit.end, make_entity(text[hit.start:hit.end], hit.value, kind)))
    for hit in urls:
        found.append(Found(hit.start, hit.end, make_entity(text[hit.start:hit.end], hit.value, OTHER)))
    for hit in identifiers:
        if hit.kind == "camel":
            found.append(Found(hit.start, hit.end, make_entity(text[hit.start:hit.end], hit.value, CONCEPT)))
    return found


def _is_person(word: str, known: bool) -> bool:
    if word in ZH_NOT_NAMES or not 2 <= len(word) <= 4 or not CJK_RE.fullmatch(word[0]):
        return False
    if word[-1] in ZH_PLACE_ENDINGS or word[-1] in ZH_VERB_ENDINGS:
        return False
    if word[-1] in "家氏" and len(word) <= 3:  # 马家厨房, 李家村, 陈昊家: a family's place, not a person
        return False
    surname = word[:2] in ZH_COMPOUND_SURNAMES or word[0] in ZH_SURNAMES
    if known:
        return surname and len(word) >= 3
    return surname or (word[0] in ZH_NAME_PREFIXES and len(word) <= 3)


def _single_ok(token: Token) -> str | None:
    """The entity type of one proper-noun token, or None when it is a mis-tagged common word."""
    word = token.word
    if word in ZH_NOT_NAMES or len(word) < 2:
        return None
    if token.flag == "ns":
        return PLACE
    if token.flag == "nt":  # 浦东国际机场 is tagged nt but is a place
        return PLACE if any(word.endswith(s) for s in ZH_PLACE_SUFFIXES if len(s) >= 2) else ORGANIZATION
    if token.flag in ("nr", "nrfg", "un") and _is_person(word, token.known):
        return PERSON
    if token.flag in ("nr", "nrfg", "un") and word[-1] in ZH_PLACE_ENDINGS and len(word) >= 3 \
            and word[0] not in ZH_NAME_PREFIXES:
        return PLACE  # 蓝月谷, tagged a name; 小馆 ("the little restaurant") is no name at all
    return None


def _name_before_verb(token: Token) -> str | None:
    """老葛 of 老葛说, 陈昊 of 陈昊家: the name jieba glued a verb (or 家, "home") to."""
    word = token.word
    if token.flag not in ("nr", "nrfg", "un") or len(word) < 3 or word[-1] not in ZH_VERB_ENDINGS | {"家"}:
        return None
    return word[:-1] if _is_person(word[:-1], False) else None


def _suffix(word: str) -> bool:
    """酒店, 东站 — or a short word ending in one (会议中心, 宴会厅 is not: 厅 is no suffix)."""
    return word in ZH_SUFFIXES or (len(word) <= 4 and CJK_RE.match(word) is not None
                                   and any(word.endswith(s) for s in ZH_SUFFIXES if len(s) >= 2))


def _suffix_after(tokens: tuple[Token, ...], k: int) -> list[Token]:
    """The suffix tokens right after a name: 酒店, or two words ending in one (会议 + 中心)."""
    if k < len(tokens) and _suffix(tokens[k].word):
        return [tokens[k]]
    if k + 1 < len(tokens) and CJK_RE.match(tokens[k].word) and tokens[k].end == tokens[k + 1].start:
        pair = tokens[k].word + tokens[k + 1].word
        if len(pair) <= 4 and _suffix(pair):
            return [tokens[k], tokens[k + 1]]
    return []


def _proper(token: Token) -> bool:
    if not CJK_RE.match(token.word):
        return False
    if token.flag == "un":  # a word jieba's HMM found: a name unless it starts with a function word
        return 2 <= len(token.word) <= 4 and token.word[0] not in ZH_FUNCTION_CHARS
    return token.flag in ZH_PROPER


# Someone introducing themselves by name: "我是李强。", "我叫王芳，", "还是孙浩。" (the same person, again).
ZH_INTRODUCED_RE = re.compile(r"(?:我是|我叫|我的名字是|还是)(?P<name>[\u4e00-\u9fff]{2,3})(?=[。，,.!！;；\s]|$)")


def chinese_entities(text: str, norm: str, tokens: tuple[Token, ...]) -> list[Found]:
    """Names from jieba's dictionary tags (ns place, nr person, nt organisation) and the words its HMM
    found, merged with neighbours (上海 + 虹桥) and with a following suffix (全季 + 酒店, 杭州 + 东站)."""
    found: list[Found] = []
    mask = Mask(len(norm))
    n = len(tokens)
    i = 0
    while i < n:
        token = tokens[i]
        if not _proper(token) or not mask.free(token.start, token.end):
            i += 1
            continue
        j = i
        while j + 1 < n and _proper(tokens[j + 1]) and mask.free(tokens[j + 1].start, tokens[j + 1].end):
            j += 1
        run = tokens[i:j + 1]
        suffix = _suffix_after(tokens, j + 1)
        i = j + 1 + (len(suffix) if suffix else 0)
        suffix_word = "".join(t.word for t in suffix)
        name = "".join(t.word for t in run) + suffix_word
        start, end = run[0].start, (suffix[-1] if suffix else run[-1]).end
        singles = [_single_ok(t) for t in run]
        unknown = [t.flag == "un" and t.word not in ZH_NOT_NAMES for t in run]
        if suffix:
            if not any(singles) and not any(unknown):
                continue
            kind = ORGANIZATION if any(suffix_word.endswith(s) for s in ZH_ORG_SUFFIXES) else PLACE
        elif len(run) == 1:
            if singles[0] is None:
                trimmed = _name_before_verb(token)
                if not trimmed:
                    continue
                name, end, singles[0] = trimmed, start + len(trimmed), PERSON
            kind = singles[0]
        else:
            flags = {t.flag for t in run}
            if not (flags & ZH_PROPER) or not (any(singles) or any(unknown)):
                continue
            if run[-1].flag == "nt":
                kind = ORGANIZATION
            elif "ns" in flags:
                kind = PLACE
            elif "nt" in flags:
                kind = ORGANIZATION
            elif _is_person(name, False):
                kind = PERSON
            else:
                kind = OTHER
        mask.take(start, end)
        found.append(Found(start, end, make_entity(text[start:end], name, kind)))
    for m in ZH_INTRODUCED_RE.finditer(norm):  # "你好，我是李强。": jieba may tag the name as a place's start
        start, end = m.start("name"), m.end("name")
        if _is_person(m.group("name"), False) and not any(f.start < end and start < f.end and f.entity.type == PERSON
                                                         for f in found):
            found = [f for f in found if not (f.start < end and start < f.end)]  # "西安" after it stays
            found.append(Found(start, end, make_entity(text[start:end], m.group("name"), PERSON)))
    for m in ZH_LEXICON_RE.finditer(norm):  # known names jieba does not tag (外滩, 微信, 阿里巴巴集团)
        if not mask.free(m.start(), m.end()):
            continue
        word, base, suffix = m.group(), m.group("name"), m.group("suffix")
        if suffix:
            kind = PLACE if suffix in ZH_PLACE_SUFFIXES else ORGANIZATION
        else:
            kind = PRODUCT if base in ZH_PRODUCTS else ORGANIZATION if base in ZH_ORGANIZATIONS else PLACE
        found.append(Found(m.start(), m.end(), make_entity(text[m.start():m.end()], word, kind)))
    return found


def mentions(found: list[Found]) -> list[Found]:
    """All mentions in position order, overlaps resolved in favour of the earlier, longer span."""
    found = sorted(found, key=lambda f: (f.start, -(f.end - f.start)))
    out: list[Found] = []
    last_end = -1
    for item in found:
        key = item.entity.normalized
        if not key or (len(key) < 2 and not CJK_RE.match(key)) or item.start < last_end:
            continue
        last_end = item.end
        out.append(item)
    return out


def unique(found: list[Found]) -> list[ExtractedEntity]:
    """One entity per normalised name; the first mention's surface and type win."""
    seen: set[str] = set()
    out: list[ExtractedEntity] = []
    for item in found:
        if item.entity.normalized not in seen:
            seen.add(item.entity.normalized)
            out.append(item.entity)
    return out
