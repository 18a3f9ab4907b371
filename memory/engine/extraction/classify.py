"""Intent, sentiment, subjectivity, keywords and topics."""

from __future__ import annotations

import re
from collections import Counter

from .lexicon import (
    CHIT_CHAT,
    CHIT_CHAT_WORDS,
    EN_NEGATIVE_EVAL,
    EN_NEGATIVE_OUTCOME,
    EN_NEGATORS,
    EN_OPINION_CUES,
    EN_POSITIVE_EVAL,
    EN_POSITIVE_OUTCOME,
    EN_STOP,
    EN_WEAK,
    TOPIC_CUES,
    ZH_NEGATIVE_EVAL,
    ZH_NEGATIVE_OUTCOME,
    ZH_NEGATORS,
    ZH_OPINION_CUES,
    ZH_POSITIVE_EVAL,
    ZH_POSITIVE_OUTCOME,
    ZH_STOP,
)
from .segment import CJK_RE, Token

INTENTS = ("inform", "request", "question", "plan", "decide", "prefer", "constrain", "act", "report_result",
           "report_error", "chit_chat")
L = r"(?<![A-Za-z])"
R = r"(?![A-Za-z])"

ERROR_RE = re.compile(
    L + r"(?:errors?|failed|fails|failing|failure|failures|exception|traceback|sold\s+out|unavailable|timed?\s*out|"
    r"timeout|denied|refused|not\s+found|could\s+not|couldn't|invalid|crash(?:ed|es)?|fully\s+booked|no\s+rooms?\s+"
    r"left|rejected|forbidden|garbage|broken|not\s+working|doesn't\s+work|does\s+not\s+work|is\s+red)" + R
    + r"|(?<![A-Za-z])[A-Za-z]*(?:Error|Exception)" + R
    + r"|失败|错误|异常|报错|售罄|满房|无空房|超时|拒绝|不可用|挂了|崩溃|找不到|乱码|坏了|出错", re.I)
ZERO_FAILED_RE = re.compile(r"(?<![\d.])0\s+(?:failed|errors?|failures?)", re.I)
DECIDE_RE = re.compile(
    L + r"(?:decided?|decision|decides|chose|chosen|will\s+use|i'll\s+use|we'll\s+use|going\s+to\s+use|go\s+with|"
    r"going\s+with|settled?\s+on|opt(?:ed)?\s+for|let's\s+(?:go|use|take|move|do|book|keep|switch|stick|pick)|"
    r"we'll\s+take|i'll\s+take|switch(?:ed)?\s+to|stick\s+with|we\s+chose|i\s+chose)" + R
    + r"|决定|决策|选择|选定|采用|就用|改用|那就|定了|确定用|就选", re.I)
QUESTION_RE = re.compile(r"[?？]|(?:吗|呢)\s*$|怎么办|是否|能否|可否|要不要|行不行|有没有", re.M)
REQUEST_RE = re.compile(
    L + r"(?:please|pls|kindly|help\s+me|i\s+need\s+you\s+to|make\s+sure|(?:can|could|would|will)\s+you\s+"
    r"(?!like\b)(?:please\s+)?[a-z]+)" + R
    + r"|请(?!问)|帮我|帮忙|麻烦|给我|能不能|可不可以|需要你|^\s*(?:给|把)\s*\S", re.I)
IMPERATIVES = frozenset("""
add plan book find make create fix write update use replace remove delete check send show tell give move change
cancel reserve search look run keep build implement refactor upgrade install deploy set get try remind buy order
call email text confirm schedule arrange organise organize prepare draft review read open close merge revert
bump pin stream export import list compare suggest recommend translate summarise summarize explain
""".split())
IMPERATIVE_RE = re.compile(r"^\s*(?:(?:yes|ok|okay|sure|then|now|also|and|so|great|please|alright)[,!.]?\s+)*"
                           r"(?P<verb>[A-Za-z]+)" + R + r"(?!\s*:)", re.I)
CONSTRAIN_RE = re.compile(
    L + r"(?:must|mustn't|never|cannot|can't|can\s+only|only\s+(?:if|when)|at\s+most|at\s+least|no\s+more\s+than|"
    r"no\s+later\s+than|not\s+exceed|maximum|minimum|budget|allerg\w*|deadline|required|requirement|forbid\w*|"
    r"not\s+allowed|under\s+\d)" + R
    + r"|预算|过敏|不能|不得|必须|最多|最少|至少|不超过|禁止|只能|务必|截止|以内|不允许", re.I)
WEAK_CONSTRAIN_RE = re.compile(
    L + r"(?:has\s+to|have\s+to|avoid\w*|without|do\s+not|don't|within|fixed|limit)" + R + r"|不要|避开", re.I)
PREFER_RE = re.compile(
    L + r"(?:prefer\w*|i'd\s+like|i\s+would\s+like|we'd\s+like|we\s+would\s+like|i\s+like|we\s+like|i\s+love|"
    r"we'd\s+love|we\s+love|i\s+hate|favou?rite|rather|ideally|i\s+want|we\s+want|i\s+wish|"
    r"(?:don't|do\s+not|doesn't|didn't)\s+(?:like|love|want))" + R
    + r"|喜欢|偏好|更想|讨厌|最好|希望|想要|倾向", re.I)
RESULT_START_RE = re.compile(
    r"^\s*(?:done|all\s+set|completed?|finished|fixed|resolved|success\w*|booked|confirmed|result|summary)" + R
    + r"|^\s*(?:完成|已完成|搞定|成功|已(?:经)?[\u4e00-\u9fff])", re.I)
PLAN_RE = re.compile(
    L + r"(?:i\s+will|i'll|we\s+will|we'll|i\s+am\s+going\s+to|i'm\s+going\s+to|going\s+to|plan(?:s|ned|ning)?\s+"
    r"to|should|need\s+to|needs\s+to|next|then\s+i|first\s+i|i\s+can|let\s+me|will\s+need|todo|step\s+\d)" + R
    + r"|计划|打算|准备|将会|下一步|接下来|然后|应该|应在|应先|应当|需要|要先|先[\u4e00-\u9fff]{1,4}再", re.I)
RESULT_RE = re.compile(
    L + r"(?:done|completed|finished|succeeded|passed|passing|confirmed|booked|updated|created|wrote|written|edited|"
    r"saved|sent|merged|deployed|installed|found|returned|opened|green)" + R
    + r"|完成|成功|通过|已(?:写入|修改|预订|更新|确认|发送|创建|完成|记下)", re.I)


def _chit_chat(text: str) -> bool:
    if len(text) > 60:
        return False
    lowered = text.casefold().strip()
    simple = re.sub(r"[\W_]+", " ", lowered).strip()
    if simple in CHIT_CHAT:
        return True
    if not simple or any(ch.isdigit() for ch in simple) or len(simple) > 40:
        return False
    if CJK_RE.search(simple):
        return all(part in CHIT_CHAT_WORDS for part in re.split(r"[\s,，。!！~]+", simple) if part)
    return all(word in CHIT_CHAT_WORDS for word in simple.split())


def has_error(text: str) -> bool:
    return bool(ERROR_RE.search(ZERO_FAILED_RE.sub(" ", text)))


def intent(text: str, kind: str | None, raw: str | None = None) -> str:
    """`text` has values masked out; `raw` (default `text`) still shows error names such as AttributeError."""
    raw = text if raw is None else raw
    if kind == "tool_call":
        return "act"
    if kind in ("tool_result", "observation"):
        return "report_error" if has_error(raw) else "report_result"
    if _chit_chat(text):
        return "chit_chat"
    stripped = text.strip()
    if QUESTION_RE.search(stripped):
        if REQUEST_RE.search(stripped) and not stripped.casefold().startswith(("shall", "should", "would you like")):
            return "request"
        return "question"
    if DECIDE_RE.search(text):
        return "decide"
    if RESULT_START_RE.search(stripped):
        return "report_result"
    verb = IMPERATIVE_RE.match(stripped)
    if REQUEST_RE.search(stripped) or (verb and verb["verb"].casefold() in IMPERATIVES):
        return "request"
    if CONSTRAIN_RE.search(text):
        return "constrain"
    if PREFER_RE.search(text):
        return "prefer"
    if WEAK_CONSTRAIN_RE.search(text):
        return "constrain"
    if PLAN_RE.search(text):
        return "plan"
    if has_error(raw):
        return "report_error"
    if RESULT_RE.search(text):
        return "report_result"
    return "inform"


# --- sentiment ----------------------------------------------------------------------------------------

EN_WORD_RE = re.compile(r"[A-Za-z]+(?:'[a-z]+)?|[.!?;:,]")
EN_PHRASES: tuple[tuple[re.Pattern[str], float, bool], ...] = (
    (re.compile(L + r"(?:sold\s+out|fully\s+booked|no\s+rooms?\s+left|not\s+working|too\s+(?:expensive|noisy|slow|"
                r"far|late))" + R, re.I), -1.0, True),
    (re.compile(L + r"(?:no\s+problem|no\s+worries|well\s+done|all\s+set|thank\s+you|works\s+fine)" + R, re.I), 1.0,
     False),
)
ZH_LEXICON: dict[str, tuple[float, bool]] = {
    **{w: (s, True) for w, s in ZH_POSITIVE_EVAL.items()}, **{w: (s, False) for w, s in ZH_POSITIVE_OUTCOME.items()},
    **{w: (-s, True) for w, s in ZH_NEGATIVE_EVAL.items()},
    **{w: (-s, False) for w, s in ZH_NEGATIVE_OUTCOME.items()},
}
ZH_SENTIMENT_RE = re.compile("|".join(re.escape(w) for w in sorted(ZH_LEXICON, key=len, reverse=True)))
EN_OPINION_RE = re.compile(L + "(?:" + "|".join(re.escape(c) for c in EN_OPINION_CUES) + ")" + R, re.I)
ZH_OPINION_RE = re.compile("|".join(re.escape(c) for c in ZH_OPINION_CUES))


def _en_score(text: str) -> tuple[float, int]:
    score, evaluative = 0.0, 0
    window = 0
    for token in EN_WORD_RE.findall(text):
        lowered = token.casefold()
        if lowered in ".!?;:,":
            window = 0
            continue
        if lowered in EN_NEGATORS or lowered.endswith("n't"):
            window = 3
            continue
        weight, is_eval = 0.0, False
        if lowered in EN_POSITIVE_EVAL:
            weight, is_eval = EN_POSITIVE_EVAL[lowered], True
        elif lowered in EN_POSITIVE_OUTCOME:
            weight = EN_POSITIVE_OUTCOME[lowered]
        elif lowered in EN_NEGATIVE_EVAL:
            weight, is_eval = -EN_NEGATIVE_EVAL[lowered], True
        elif lowered in EN_NEGATIVE_OUTCOME:
            weight = -EN_NEGATIVE_OUTCOME[lowered]
        elif lowered.endswith(("error", "exception")) and len(lowered) > 9:
            weight = -2.0
        if weight:
            score += -weight if window else weight
            evaluative += is_eval
        window = max(0, window - 1)
    for pattern, weight, is_eval in EN_PHRASES:
        hits = len(pattern.findall(text))
        score += weight * hits
        evaluative += is_eval * hits
    return score, evaluative


def _zh_score(text: str) -> tuple[float, int]:
    score, evaluative = 0.0, 0
    for m in ZH_SENTIMENT_RE.finditer(text):
        weight, is_eval = ZH_LEXICON[m.group()]
        before = text[max(0, m.start() - 2):m.start()]
        negated = not m.group().startswith(("不", "没", "无")) and any(before.endswith(n) for n in ZH_NEGATORS)
        score += -weight if negated else weight
        evaluative += is_eval
    return score, evaluative


def sentiment(text: str, kind: str | None) -> tuple[str, str]:
    """(sentiment, subjectivity)."""
    en_score, en_eval = _en_score(text)
    zh_score, zh_eval = _zh_score(text) if CJK_RE.search(text) else (0.0, 0)
    score = en_score + zh_score
    label = "positive" if score >= 1 else "negative" if score <= -1 else "neutral"
    opinion = bool(EN_OPINION_RE.search(text) or ZH_OPINION_RE.search(text))
    evaluative = en_eval + zh_eval
    tool = kind in ("tool_call", "tool_result")
    subjective = opinion or (evaluative > 0 and not tool) or (not tool and "!" in text and label != "neutral")
    return label, "subjective" if subjective else "objective"


# --- keywords and topics ------------------------------------------------------------------------------

EN_KEYWORD_RE = re.compile(r"[A-Za-z][A-Za-z'’-]*[A-Za-z]")
ZH_KEYWORD_FLAGS = ("n", "v", "a", "l", "i", "j", "un", "eng")
ZH_TOPIC_FLAGS = ("n", "vn", "eng", "l", "j", "un")
TOPIC_WORD_RE = re.compile(r"[a-z][a-z0-9_-]*")
TOPIC_LABELS = tuple(TOPIC_CUES)
TOPIC_EXACT: dict[str, int] = {w: i for i, cues in enumerate(TOPIC_CUES.values()) for w in cues[0]}
TOPIC_AFFIXES = tuple((i, cues[1], cues[2]) for i, cues in enumerate(TOPIC_CUES.values()) if cues[1] or cues[2])
TOPIC_ZH = tuple((i, cues[3]) for i, cues in enumerate(TOPIC_CUES.values()))


def topic_labels(text: str, limit: int = 2) -> list[str]:
    """Cross-language category labels (travel, accommodation, code, error, …) from cue words."""
    counts = [0] * len(TOPIC_LABELS)
    for word in TOPIC_WORD_RE.findall(text.casefold()):
        index = TOPIC_EXACT.get(word)
        if index is not None:
            counts[index] += 1
            continue
        for index, prefixes, suffixes in TOPIC_AFFIXES:
            if (prefixes and word.startswith(prefixes)) or (suffixes and word.endswith(suffixes)):
                counts[index] += 1
                break
    if CJK_RE.search(text):
        for index, cues in TOPIC_ZH:
            counts[index] += sum(text.count(cue) for cue in cues)
    ranked = sorted((-n, i) for i, n in enumerate(counts) if n)
    return [TOPIC_LABELS[i] for _, i in ranked[:limit]]


def english_keywords(blanked: str, entity_words: set[str], limit: int = 8) -> tuple[list[str], list[str]]:
    counts: Counter[str] = Counter()
    first_seen: dict[str, int] = {}
    for m in EN_KEYWORD_RE.finditer(blanked):
        word = m.group().casefold().replace("’", "'")
        word = word.removesuffix("'s")
        if len(word) < 3 or word in EN_STOP or word in EN_WEAK:
            continue
        counts[word] += 1
        first_seen.setdefault(word, m.start())
    scores = {w: c + (0.5 if len(w) >= 7 else 0.0) + (1.0 if w in entity_words else 0.0) for w, c in counts.items()}
    ranked = sorted(scores, key=lambda w: (-scores[w], first_seen[w]))
    keywords = ranked[:limit]
    nouns = [w for w in ranked if not w.endswith(("ly", "ed")) and "'" not in w]
    return keywords, nouns[:3]


def chinese_keywords(tokens: tuple[Token, ...], taken: bytearray, idf: dict[str, float], median_idf: float,
                     limit: int = 8) -> tuple[list[str], list[str]]:
    counts: Counter[str] = Counter()
    flags: dict[str, str] = {}
    first_seen: dict[str, int] = {}
    for token in tokens:
        word = token.word.strip()
        if len(word) < 2 or word in ZH_STOP or taken.find(1, token.start, token.end) >= 0:
            continue
        if not token.flag.startswith(ZH_KEYWORD_FLAGS):
            continue
        if token.flag == "eng":
            if word.casefold() in EN_STOP or word.casefold() in EN_WEAK or len(word) < 3:
                continue
        elif not CJK_RE.search(word):
            continue
        counts[word] += 1
        flags.setdefault(word, token.flag)
        first_seen.setdefault(word, token.start)
    total = sum(counts.values()) or 1
    scores = {w: c / total * idf.get(w, median_idf) for w, c in counts.items()}
    ranked = sorted(scores, key=lambda w: (-scores[w], first_seen[w]))
    topics = [w for w in ranked if flags[w].startswith(ZH_TOPIC_FLAGS) and flags[w] not in ("v", "vd", "vg")]
    return ranked[:limit], topics[:3]
