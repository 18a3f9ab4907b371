"""Attribute values ("my phone is …", "我对海鲜过敏") used to detect superseded facts.

High precision over recall: a wrong attribute makes the supersede step retire a good memory, so a
single-valued attribute that gets two different values in one text is dropped rather than guessed.
Keys are the same in English and Chinese.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..cues import speaker_label
from .entities import Found
from .patterns import FLIGHT_RE, TRAIN_RE, Hit
from .records import AttributeValue
from .segment import Token, fold_ascii
from .temporal import DateHit, TimeHit

USER = "user"
# Family members named by their relation, in either language: their attributes are not the user's.
KIN: dict[str, str] = {
    **dict.fromkeys("son daughter child children kid kids baby 儿子 女儿 孩子 小孩 宝宝".split(), "child"),
    **dict.fromkeys("wife husband spouse 老婆 老公 妻子 丈夫 太太 爱人".split(), "spouse"),
    **dict.fromkeys("mother mom mum 母亲 妈妈 老妈".split(), "mother"),
    **dict.fromkeys("father dad 父亲 爸爸 老爸".split(), "father"),
}
KIN_RE = re.compile(r"(?<![A-Za-z])(?:" + "|".join(sorted((k for k in KIN if k.isascii()), key=len, reverse=True))
                    + r")(?![A-Za-z])|" + "|".join(sorted((k for k in KIN if not k.isascii()), key=len, reverse=True)),
                    re.I)
# The fixed vocabulary. allergy is set-valued (several allergies coexist); the others hold one value.
ATTRIBUTES = (
    "phone", "email", "budget", "max_price", "allergy", "date", "check_in", "check_out", "departure_time",
    "arrival_time", "hotel", "flight", "return_flight", "train", "return_train", "deadline", "address", "name",
)
MULTI_VALUED = frozenset({"allergy"})
OWNABLE = frozenset({"phone", "email", "address"})  # a hotel or a company has these too

L = r"(?<![A-Za-z0-9_])"
R = r"(?![A-Za-z0-9_])"
SENTENCE_RE = re.compile(r"[^.!?;。！？；\n]+(?:[.!?;。！？；\n]+|$)|[.!?;。！？；\n]+")
CLAUSE_BREAK_RE = re.compile(r"[,:;，：；、。！？!?\n]")
FIRST_PERSON_RE = re.compile(r"(?<![A-Za-z'])(?:I(?:'m|'ve|'d|'ll)?|[Mm]y|[Mm]e|[Mm]ine|[Ww]e(?:'re|'ve|'d|'ll)?|"
                             r"[Oo]urs?|[Uu]s|[Mm]yself)(?![A-Za-z])|我|咱|本人")
POSSESSIVE_EN_RE = re.compile(r"(?:^|[^A-Za-z])(?:my|our)\s+(?:[A-Za-z-]+\s+){0,2}$", re.I)
POSSESSIVE_ZH_RE = re.compile(r"(?:我|我们|本人)的?\s*[\u4e00-\u9fff]{0,3}$")
# "His number's 0117 …", "她的手机是…": someone else's value, never the user's ("其他" is not 他)
THIRD_POSSESSIVE_EN_RE = re.compile(r"(?:^|[^A-Za-z])(?:his|her|their)\s+(?:[A-Za-z-]+\s+){0,2}$", re.I)
THIRD_POSSESSIVE_ZH_RE = re.compile(r"(?:(?<!其)他|她)们?的?\s*[\u4e00-\u9fff]{0,3}$")

PHONE_CUE_RE = re.compile(L + r"(?:phone|mobile|cell|tel|telephone|contact|number|whatsapp)" + R
                          + r"|电话|手机|号码|联系方式", re.I)
EMAIL_CUE_RE = re.compile(L + r"(?:e-?mail|mail)" + R + r"|邮箱|邮件", re.I)
NEW_VALUE_RE = re.compile(L + r"(?:new|now|updated?\s+to|changed?\s+to|instead)" + R + r"|新|改为|换成|更新为|改成",
                          re.I)
FROM_TO_RE = re.compile(L + r"to\s*$", re.I)
FROM_RE = re.compile(L + r"from" + R + r"|从|由", re.I)
BUDGET_CUE_RE = re.compile(L + r"budget" + R + r"|预算", re.I)
REMAINING_RE = re.compile(L + r"(?:remain\w*|left|leaves|leaving|spent|over)\s*(?:about|around|only|just)?\s*$"
                          r"|(?:剩|剩余|还剩|剩下|余|花了|超支|超出)\s*(?:约|大约)?\s*$", re.I)
# "food budget", "奖品预算": a sub-budget. Allowed before the cue: total/overall/my/the…, an amount, 总.
QUALIFIED_BUDGET_EN_RE = re.compile(r"(?<![A-Za-z])(?!(?:total|overall|whole|entire|trip|travel|complete|max|maximum|"
                                    r"my|our|your|his|her|their|the|a|an|of|is|per|daily|weekly|monthly)\s+$)"
                                    r"[A-Za-z]{2,}\s+$", re.I)
QUALIFIED_BUDGET_ZH_RE = re.compile(r"[\u4e00-\u9fff](?<![总的元万块币])\s*$")
MAX_PRICE_RE = re.compile(L + r"(?:at\s+most|no\s+more\s+than|up\s+to|under|below|max(?:imum)?|not\s+exceeding|"
                          r"limit\s+of|less\s+than)\s*$|不超过\s*$|最多\s*$|低于\s*$", re.I)
MAX_PRICE_AFTER_RE = re.compile(r"^\s*(?:以内|以下|之内)")
ALLERGY_EN_RE = re.compile(L + r"(?:allergic|allergy|allergies)\s+to\s+(?P<x>[^.;!?\n(]{2,60})", re.I)
ALLERGY_EN_BEFORE_RE = re.compile(r"(?<![A-Za-z0-9_-])(?P<x>(?:[A-Za-z-]+\s+)?[A-Za-z-]+)\s+allerg(?:y|ies)" + R, re.I)
ALLERGY_STOP_RE = re.compile(r",|\s(?:so|but|because|which|as|since|and\s+(?:i|we|she|he|they|my|our|it))\s|\s+too$|"
                             r"\s+as\s+well$", re.I)
ALLERGY_SPLIT_RE = re.compile(r"\s*(?:,|\band\b|\bor\b|&|/)\s*", re.I)
ALLERGY_MODIFIERS = frozenset("""
a an the some all any severe mild serious bad strong slight food known his her my our their your its this that
child's kid's any other also
""".split())
ALLERGY_NEGATION_RE = re.compile(L + r"(?:not|no|never|isn't|aren't|am\s+not)\s+(?:\w+\s+)?$", re.I)
ALLERGY_ZH_RE = re.compile(r"对(?P<x>[\u4e00-\u9fffA-Za-z、和及与]{1,12}?)(?<![不没])过敏")
ZH_LIST_SPLIT_RE = re.compile(r"[、和及与]")
CHECK_IN_RE = re.compile(L + r"check[-_ ]?in" + R + r"|入住", re.I)
CHECK_OUT_RE = re.compile(L + r"check[-_ ]?out" + R + r"|退房|离店", re.I)
TRIP_RE = re.compile(L + r"(?:trip|travel|stay|vacation|holiday|journey)" + R
                     + r"|行程|旅行|旅游|出行|[一二三四五六七两\d]日游|改期|改到", re.I)
ARROW_RE = re.compile(r"^\s*(?:-+>|→|=>|⟶|➔|—>|–>)\s*[A-Za-z\u4e00-\u9fff ]{0,24}$")
DEPART_RE = re.compile(L + r"(?:depart(?:s|ure|ing)?|leaves?|takes?\s+off)" + R + r"|出发|发车|起飞", re.I)
ARRIVE_RE = re.compile(L + r"(?:lands?|landing|arrives?|arrival|arriving)" + R + r"|到达|抵达|落地|到站", re.I)
BOOK_RE = re.compile(L + r"(?:book(?:ed|ing)?|reserv(?:e|ed|ation)|stay(?:ing)?\s+at|check(?:ed|ing)?\s+in(?:to)?)"
                     + R + r"|预订|预定|订了|入住", re.I)
HOTEL_HINT_RE = re.compile(L + r"(?:hotels?|rooms?|inn|hostel|resort|suite|nights?)" + R
                           + r"|酒店|宾馆|客栈|民宿|房", re.I)
HOTEL_HEADS = ("hotel", "inn", "hostel", "resort", "lodge", "motel", "suites", "酒店", "宾馆", "饭店", "客栈", "民宿",
               "旅馆", "驿站")
FAIL_RE = re.compile(L + r"(?:fail\w*|sold\s+out|fully\s+booked|no\s+rooms?|unavailable|cancel\w*|error)" + R
                     + r"|失败|满房|无空房|取消|售罄", re.I)
FLIGHT_CUE_RE = re.compile(r"(?<![A-Za-z])(?:flights?|fly|flying|flew|outbound|inbound|round[- ]trip|lands?|departs?|"
                           r"airline|airport)(?![A-Za-z])|航班|机票|起飞|降落|往返", re.I)
TRAIN_CUE_RE = re.compile(r"(?<![A-Za-z])(?:trains?|railway|rail)(?![A-Za-z])"
                          r"|车次|高铁|动车|火车|列车|车票|去程|返程|出票", re.I)
RETURN_CUE_RE = re.compile(r"(?<![A-Za-z])(?:back|return(?:ing)?|inbound)(?![A-Za-z])" + r"|返程|回程", re.I)
DEADLINE_RE = re.compile(L + r"(?:deadline|due(?!\s+to\b)(?:\s+(?:by|on|date))?)" + R
                         + r"|截止(?:日期|时间)?|期限|之前(?:完成|提交|交)|前(?:完成|提交|交付)", re.I)
ADDRESS_RE = re.compile(L + r"address\s*(?:is|:)\s*(?P<v>[^.;\n]{4,80})|地址\s*(?:是|为|:)\s*(?P<v2>[^,。;\n]{2,40})",
                        re.I)
NAME_RE = re.compile(L + r"my\s+name\s+is\s+(?P<v>[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)|(?:我叫|我的名字是)"
                     r"(?P<v2>[\u4e00-\u9fff]{2,4}?)(?=[,，。.!！\s]|$)")


@dataclass(frozen=True)
class Context:
    text: str  # normalised text
    blanked: str  # values masked out (cue words inside paths and identifiers do not count)
    phones: list[Hit]
    emails: list[Hit]
    amounts: list[Hit]
    numbers: list[Hit]
    identifiers: list[Hit]
    dates: list[DateHit]
    times: list[TimeHit]
    mentions: list[Found]
    tokens: tuple[Token, ...]
    # Who "his/her …" means when this text names no one before it: the last person the turns right before
    # named (dimensions.last_named), asked only then.
    referent: Callable[[], str | None] = lambda: None


WINDOW = 200  # characters around a value that can say whose it is (bounds the work on long texts)


class Extractor:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.sentences = [(m.start(), m.end()) for m in SENTENCE_RE.finditer(ctx.blanked)] or [(0, len(ctx.text))]
        self.starts = [start for start, _ in self.sentences]
        self.found: list[tuple[AttributeValue, bool]] = []  # (value, preferred)

    def sentence(self, pos: int) -> tuple[int, int]:
        """The sentence around `pos`, clipped to WINDOW characters either side."""
        start, end = self.sentences[max(0, bisect_right(self.starts, pos) - 1)]
        return max(start, pos - WINDOW), min(end, pos + WINDOW)

    def clause_start(self, pos: int) -> int:
        start, _ = self.sentence(pos)
        breaks = [m.end() for m in CLAUSE_BREAK_RE.finditer(self.ctx.text, start, pos)]
        return breaks[-1] if breaks else start

    def owner(self, attribute: str, cue_start: int, pos: int) -> str | None:
        """Whose value: a person named in the clause, a family member (my son → "child"), else the user
        for first-person statements; a named place or organisation for its phone, e-mail or address.
        "His/her …" is the last person named before it (not the speaker of a transcript line), else the last
        one the turns right before named ("Mum has a new mobile." / "Her new number's …"), or no one known
        (None: the value is not kept, rather than kept as the user's and replacing theirs)."""
        text = self.ctx.text
        s_start, s_end = self.sentence(min(cue_start, pos))
        first = min(cue_start, pos)
        clause = self.clause_start(first)
        people = [f for f in self.ctx.mentions if f.entity.type == "person" and clause <= f.start < first]
        if people:
            return people[-1].entity.normalized
        kin = [m for m in KIN_RE.finditer(text, max(clause, first - 40), first)]
        if kin:
            return KIN[kin[-1].group().casefold()]
        before_cue = text[max(s_start, cue_start - 60):cue_start]
        if POSSESSIVE_EN_RE.search(before_cue) or POSSESSIVE_ZH_RE.search(before_cue):
            return USER
        if THIRD_POSSESSIVE_EN_RE.search(before_cue) or THIRD_POSSESSIVE_ZH_RE.search(before_cue):
            speaker = speaker_label(text, spaced=False)  # "Raj: His number…" names who speaks, not whose value
            earlier = [f for f in self.ctx.mentions if f.entity.type == "person" and max(0, first - WINDOW) <= f.start
                       < first and f.entity.normalized != speaker]
            return earlier[-1].entity.normalized if earlier else self.ctx.referent()
        if FIRST_PERSON_RE.search(text, s_start, s_end):
            return USER
        if attribute in OWNABLE:
            named = [f for f in self.ctx.mentions if f.entity.type in ("place", "organization")
                     and clause <= f.start < first]
            if named:
                return named[-1].entity.normalized
        return USER

    def add(self, entity: str | None, attribute: str, value: str, preferred: bool = False) -> None:
        value = " ".join(value.split()).strip()
        if value and entity is not None:
            self.found.append((AttributeValue(entity=entity, attribute=attribute, value=value), preferred))

    # --- individual attributes ---

    def contact(self, hits: list[Hit], cue_re: re.Pattern[str], attribute: str) -> None:
        text = self.ctx.blanked
        for hit in hits:
            s_start, _ = self.sentence(hit.start)
            cues = [m for m in cue_re.finditer(text, s_start, hit.start)]
            cue_start = cues[-1].start() if cues else hit.start
            preferred = bool(NEW_VALUE_RE.search(text, max(s_start, hit.start - 30), hit.start)
                             or (FROM_TO_RE.search(text, max(s_start, hit.start - 8), hit.start)
                                 and FROM_RE.search(text, s_start, hit.start)))
            self.add(self.owner(attribute, cue_start, hit.start), attribute, hit.value, preferred)

    def budget(self) -> None:
        """The overall budget: not a sub-budget ("prize budget", "奖品预算") nor what is left of it."""
        text = self.ctx.blanked
        values = [h for h in (self.ctx.amounts or self.ctx.numbers)
                  if not REMAINING_RE.search(text, max(0, h.start - 12), h.start)]
        for cue in BUDGET_CUE_RE.finditer(text):
            before = text[max(0, cue.start() - 16):cue.start()]
            if QUALIFIED_BUDGET_EN_RE.search(before) or QUALIFIED_BUDGET_ZH_RE.search(before):
                continue
            s_start, s_end = self.sentence(cue.start())
            near = [(self._gap(h, cue.start(), cue.end()), h) for h in values if s_start <= h.start < s_end]
            near = [(gap, h) for gap, h in near if gap <= 30]
            if near:
                hit = min(near, key=lambda item: item[0])[1]
                self.add(self.owner("budget", cue.start(), hit.start), "budget", hit.value)

    def max_price(self) -> None:
        text = self.ctx.blanked
        for hit in self.ctx.amounts:
            before = text[max(0, hit.start - 24):hit.start]
            if MAX_PRICE_RE.search(before) or MAX_PRICE_AFTER_RE.match(text[hit.end:hit.end + 4]):
                if not BUDGET_CUE_RE.search(text, max(0, hit.start - 30), min(len(text), hit.end + 10)):
                    self.add(self.owner("max_price", hit.start, hit.start), "max_price", hit.value)

    @staticmethod
    def _gap(hit: Hit | DateHit | TimeHit, start: int, end: int) -> int:
        if hit.end <= start:
            return start - hit.end
        if hit.start >= end:
            return hit.start - end
        return 0

    def allergy(self) -> None:
        text = self.ctx.blanked
        if "过敏" not in text and "allerg" not in text.casefold():
            return
        taken: list[tuple[int, int]] = []
        for m in ALLERGY_EN_RE.finditer(text):
            if ALLERGY_NEGATION_RE.search(text[max(0, m.start() - 20):m.start()]):
                continue
            cut = ALLERGY_STOP_RE.split(m.group("x"), maxsplit=1)[0]  # found in the blanked text, read in the real
            raw = self.ctx.text[m.start("x"):m.start("x") + len(cut)]
            self._allergens(ALLERGY_SPLIT_RE.split(raw), m.start(), m.start("x"), english=True)
            taken.append((m.start(), m.end()))
        for m in ALLERGY_EN_BEFORE_RE.finditer(text):
            if any(s <= m.start() < e for s, e in taken):
                continue
            if ALLERGY_NEGATION_RE.search(text[max(0, m.start() - 20):m.start()]):
                continue
            self._allergens([self.ctx.text[m.start("x"):m.end("x")]], m.end(), m.start("x"), english=True)
        zh_taken: list[tuple[int, int]] = []
        for m in ALLERGY_ZH_RE.finditer(text):
            zh_taken.append((m.start(), m.end()))
            self._allergens(ZH_LIST_SPLIT_RE.split(self.ctx.text[m.start("x"):m.end("x")]), m.start(), m.start("x"),
                            english=False)
        tokens = self.ctx.tokens
        for i, token in enumerate(tokens):
            if token.word != "过敏" or i == 0 or any(s <= token.start < e for s, e in zh_taken):
                continue
            # "海鲜过敏", "孩子花生、芒果过敏": the nouns right before 过敏, joined by 、和及与
            allergens: list[Token] = []
            j = i - 1
            while j >= 0 and tokens[j].flag.startswith(("n", "un")) and len(tokens[j].word) >= 2:
                allergens.insert(0, tokens[j])
                if j >= 2 and tokens[j - 1].word in ("、", "和", "及", "与", ","):
                    j -= 2
                else:
                    break
            if allergens and (j < 0 or tokens[j].word not in ("不", "没", "没有", "未")):
                self._allergens([t.word for t in allergens], allergens[0].start, allergens[0].start, english=False)

    def _allergens(self, parts: Iterable[str], cue_start: int, pos: int, *, english: bool) -> None:
        owner = self.owner("allergy", cue_start, pos)
        for part in parts:
            words = [w for w in part.strip().split() if w.casefold() not in ALLERGY_MODIFIERS] if english else [part]
            value = " ".join(words).strip(" -'\"").casefold()
            if english:
                value = " ".join(fold_ascii(w) for w in value.split())
            if value and len(value) <= 40:
                self.add(owner, "allergy", value)

    def stay_dates(self) -> None:
        text = self.ctx.blanked
        for cue_re, attribute in ((CHECK_IN_RE, "check_in"), (CHECK_OUT_RE, "check_out")):
            for cue in cue_re.finditer(self.ctx.text):  # unmasked: check_in="…" is a tool argument
                after = [h for h in self.ctx.dates if cue.end() <= h.start <= cue.end() + 30]
                if not after:
                    continue
                hit = after[0]
                self.add(self.owner(attribute, cue.start(), hit.start), attribute, hit.first.isoformat())
                if attribute == "check_in" and hit.last and not CHECK_OUT_RE.search(self.ctx.text):
                    self.add(self.owner(attribute, cue.start(), hit.start), "check_out", hit.last.isoformat())
        for cue in TRIP_RE.finditer(text):
            s_start, s_end = self.sentence(cue.start())
            ranges = [h for h in self.ctx.dates if s_start <= h.start < s_end and h.last]
            if len(ranges) == 1:
                hit = ranges[0]
                value = f"{hit.first.isoformat()}/{hit.last.isoformat()}" if hit.last else hit.first.isoformat()
                self.add(self.owner("date", cue.start(), hit.start), "date", value)

    def _code_before(self, pos: int, window: int = 50) -> Hit | None:
        s_start, _ = self.sentence(pos)
        codes = [h for h in self.ctx.identifiers if h.kind == "code" and max(s_start, pos - window) <= h.start < pos
                 and (FLIGHT_RE.match(h.value) or TRAIN_RE.match(h.value))]
        return codes[-1] if codes else None

    def schedule(self) -> None:
        text, times = self.ctx.blanked, self.ctx.times
        for first, second in zip(times, times[1:], strict=False):
            if ARROW_RE.match(text[first.end:second.start]):
                code = self._code_before(first.start)
                if code is not None:
                    self.add(code.value.casefold(), "departure_time", first.at.strftime("%H:%M"))
                    self.add(code.value.casefold(), "arrival_time", second.at.strftime("%H:%M"))
        for cue_re, attribute in ((DEPART_RE, "departure_time"), (ARRIVE_RE, "arrival_time")):
            for cue in cue_re.finditer(text):
                s_start, s_end = self.sentence(cue.start())
                near = [(self._gap(t, cue.start(), cue.end()), t) for t in times if s_start <= t.start < s_end]
                near = [(gap, t) for gap, t in near if gap <= 45]
                code = self._code_before(cue.start(), 60)
                if near and code is not None:
                    hit = min(near, key=lambda item: item[0])[1]
                    self.add(code.value.casefold(), attribute, hit.at.strftime("%H:%M"))

    def hotel(self) -> None:
        text = self.ctx.blanked
        for cue in BOOK_RE.finditer(text):
            s_start, s_end = self.sentence(cue.start())
            clause = self.clause_start(cue.start())
            if FAIL_RE.search(text, clause, min(s_end, cue.end() + 25)):
                continue
            after = [f for f in self.ctx.mentions if cue.end() <= f.start <= cue.end() + 40 and f.start < s_end
                     and f.entity.type in ("place", "organization")]
            if not after:
                continue
            hotels = [f for f in after if f.entity.normalized.endswith(HOTEL_HEADS)]
            target = (hotels or after)[0]
            name = target.entity.normalized
            hotelish = name.endswith(HOTEL_HEADS) or name.startswith("hotel ")
            if not hotelish and not HOTEL_HINT_RE.search(text, s_start, s_end):
                continue
            if FAIL_RE.search(text, self.clause_start(target.start), min(s_end, target.end + 40)):
                continue
            self.add(self.owner("hotel", cue.start(), target.start), "hotel", name)

    def transport(self) -> None:
        text = self.ctx.text
        for hit in self.ctx.identifiers:
            if hit.kind != "code":
                continue
            s_start, s_end = self.sentence(hit.start)
            is_train = TRAIN_RE.match(hit.value) and TRAIN_CUE_RE.search(text, s_start, s_end)
            is_flight = FLIGHT_RE.match(hit.value) and FLIGHT_CUE_RE.search(text, s_start, s_end)
            if not (is_train or is_flight):
                continue
            back = RETURN_CUE_RE.search(text, max(s_start, hit.start - 15), hit.start)
            base = "train" if is_train else "flight"
            attribute = f"return_{base}" if back else base
            self.add(self.owner(attribute, hit.start, hit.start), attribute, hit.value)

    def deadline(self) -> None:
        text = self.ctx.blanked
        for cue in DEADLINE_RE.finditer(text):
            s_start, s_end = self.sentence(cue.start())
            near = [(self._gap(h, cue.start(), cue.end()), h) for h in self.ctx.dates if s_start <= h.start < s_end]
            near = [(gap, h) for gap, h in near if gap <= 30]
            if near:
                hit = min(near, key=lambda item: item[0])[1]
                day = hit.last or hit.first
                value = day.isoformat() + (f"T{hit.at.strftime('%H:%M')}" if hit.at else "")
                self.add(self.owner("deadline", cue.start(), hit.start), "deadline", value)

    def free_text(self) -> None:
        text = self.ctx.text
        for m in ADDRESS_RE.finditer(text):
            group = "v" if m.group("v") else "v2"
            self.add(self.owner("address", m.start(), m.start(group)), "address", m.group(group).casefold())
        for m in NAME_RE.finditer(text):
            self.add(USER, "name", (m.group("v") or m.group("v2")).casefold())

    def result(self) -> list[AttributeValue]:
        by_key: dict[tuple[str, str], list[tuple[AttributeValue, bool]]] = {}
        for item in self.found:
            by_key.setdefault((item[0].entity, item[0].attribute), []).append(item)
        out: list[AttributeValue] = []
        for (_, attribute), items in by_key.items():
            values = list(dict.fromkeys(v for v, _ in items))
            if attribute not in MULTI_VALUED and len({v.value for v in values}) > 1:
                preferred = list(dict.fromkeys(v for v, p in items if p))
                if len({v.value for v in preferred}) != 1:
                    continue  # ambiguous: two different values and nothing says which is current
                values = preferred[:1]
            out.extend(values)
        return out


def extract_attributes(ctx: Context) -> list[AttributeValue]:
    extractor = Extractor(ctx)
    extractor.contact(ctx.phones, PHONE_CUE_RE, "phone")
    extractor.contact(ctx.emails, EMAIL_CUE_RE, "email")
    extractor.budget()
    extractor.max_price()
    extractor.allergy()
    extractor.stay_dates()
    extractor.schedule()
    extractor.hotel()
    extractor.transport()
    extractor.deadline()
    extractor.free_text()
    return extractor.result()
