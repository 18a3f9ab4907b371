"""Dates and times in English and Chinese, resolved against `now`.

A date without a year takes `now`'s year and rolls to the next year when it has already passed,
unless a weekday written beside it says which year it is in ("Tuesday 4th August" said in December 2026
is 4 August 2026, a Tuesday, not 4 August 2027, a Wednesday);
"tomorrow afternoon" / "明天下午" resolve to a day plus a period (12:00–18:00), which gives both
occurred_at (its start) and an expiry (its end).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from .patterns import Mask, zh_number

MONTHS: dict[str, int] = {
    "jan": 1, "january": 1, "feb": 2, "february": 2, "mar": 3, "march": 3, "apr": 4, "april": 4, "may": 5,
    "jun": 6, "june": 6, "jul": 7, "july": 7, "aug": 8, "august": 8, "sep": 9, "sept": 9, "september": 9,
    "oct": 10, "october": 10, "nov": 11, "november": 11, "dec": 12, "december": 12,
}
WEEKDAYS: dict[str, int] = {
    "monday": 0, "mon": 0, "tuesday": 1, "tue": 1, "tues": 1, "wednesday": 2, "wed": 2, "thursday": 3, "thu": 3,
    "thur": 3, "thurs": 3, "friday": 4, "fri": 4, "saturday": 5, "sat": 5, "sunday": 6, "sun": 6,
    "一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6,
}
END_OF_DAY = time(23, 59, 59)
PAST_GRACE_DAYS = 7
PERIODS: dict[str, tuple[time, time]] = {
    "morning": (time(6), time(12)), "noon": (time(12), time(13)), "afternoon": (time(12), time(18)),
    "evening": (time(18), time(22)), "night": (time(18), END_OF_DAY), "tonight": (time(18), END_OF_DAY),
    "凌晨": (time(0), time(6)), "早上": (time(6), time(10)), "早晨": (time(6), time(10)), "上午": (time(8), time(12)),
    "中午": (time(11), time(13)), "下午": (time(12), time(18)), "傍晚": (time(17), time(19)),
    "晚上": (time(18), END_OF_DAY), "夜里": (time(18), END_OF_DAY), "夜间": (time(18), END_OF_DAY),
    "今晚": (time(18), END_OF_DAY), "明晚": (time(18), END_OF_DAY), "今夜": (time(18), END_OF_DAY),
    "昨晚": (time(18), END_OF_DAY), "今早": (time(6), time(10)), "明早": (time(6), time(10)),
}

MON = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
       r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
ORD = r"(?:st|nd|rd|th)?"
RANGE = r"\s*(?:-|–|—|~|to|until|till|through|thru|and)\s*"
ISO_RE = re.compile(
    r"(?<![\d.])(?P<y>(?:19|20)\d{2})(?P<sep>[-/.])(?P<m>0?[1-9]|1[0-2])(?P=sep)(?P<d>0?[1-9]|[12]\d|3[01])"
    r"(?:[T ](?P<H>[01]?\d|2[0-3]):(?P<M>[0-5]\d)(?::[0-5]\d(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?(?![\d])")
EN_DAY_FIRST_RE = re.compile(
    r"(?<![A-Za-z0-9.:])(?P<d1>[0-3]?\d)" + ORD + r"(?:" + RANGE + r"(?P<d2>[0-3]?\d)" + ORD + r")?\s+(?:of\s+)?"
    r"(?P<mon>" + MON + r")\.?(?:,?\s+(?P<y>(?:19|20)\d{2}))?(?![A-Za-z])", re.I)
EN_MONTH_FIRST_RE = re.compile(
    r"(?<![A-Za-z])(?P<mon>" + MON + r")\.?\s+(?P<d1>[0-3]?\d)" + ORD + r"(?![\d:])"
    r"(?:" + RANGE + r"(?P<d2>[0-3]?\d)" + ORD + r"(?![\d:]))?(?:,?\s+(?P<y>(?:19|20)\d{2}))?(?![A-Za-z0-9])", re.I)
ZH_DATE_RE = re.compile(
    r"(?:(?P<y>\d{4})\s*年\s*)?(?P<m>\d{1,2})\s*月\s*(?P<d1>\d{1,2})\s*(?:[日号]|(?=\s*[-~–—到至]))"
    r"(?:\s*(?:到|至|-|~|–|—)\s*(?:(?P<m2>\d{1,2})\s*月\s*)?(?P<d2>\d{1,2})\s*[日号])?")
# A day of the month alone ("can't do the 28th", "moved to Tuesday the 5th", "24号那场", "19号到22号"): the
# month is the one the day comes next in. "3号线" (a metro line), "3日游" (a three-day tour) are no dates.
EN_MONTH_DAY_RE = re.compile(
    r"(?<![A-Za-z0-9])the\s+(?P<d1>[0-3]?\d)(?:st|nd|rd|th)"
    r"(?:" + RANGE + r"(?:the\s+)?(?P<d2>[0-3]?\d)(?:st|nd|rd|th))?(?![A-Za-z0-9])", re.I)
ZH_MONTH_DAY_RE = re.compile(
    r"(?<![\d.月/\-])(?P<d1>[0-3]?\d)\s*[号日](?:\s*(?:到|至|-|~|–|—)\s*(?P<d2>[0-3]?\d)\s*[号日])?"
    r"(?![线楼床门窗位车房馆口桌机院店厅台柜游元内])")
EN_PERIOD = r"(?:\s+(?:in\s+the\s+)?(?P<period>morning|afternoon|evening|night|noon))?"
EN_RELATIVE_RE = re.compile(
    r"(?<![A-Za-z])(?:(?P<dat>(?:the\s+)?day\s+after\s+tomorrow)|(?P<word>tomorrow|today|tonight|yesterday)"
    r"|(?P<this>this)\s+(?P<tp>morning|afternoon|evening)"
    r"|(?P<wmod>next|this|coming|last)\s+(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
    r"|(?:on\s+)?(?P<wd2>monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
    r"|in\s+(?P<n>\d{1,3}|a|one|two|three|four|five|six|seven)\s+(?P<unit>days?|weeks?))" + EN_PERIOD
    + r"(?![A-Za-z])", re.I)
ZH_PERIOD = r"(?P<period>凌晨|早上|早晨|上午|中午|下午|傍晚|晚上|夜里|夜间)?"
ZH_RELATIVE_RE = re.compile(
    r"(?:(?P<word>大后天|后天|明天|明日|今天|今日|昨天|前天)|(?P<pword>今晚|明晚|今夜|昨晚|今早|明早)"
    r"|(?P<wmod>下下|下|这|本|上)?(?:个)?(?:周|星期|礼拜)(?P<wd>[一二三四五六日天])"
    r"|(?P<n>\d{1,3}|[一二三四五六七八九十两]{1,3})天(?:后|以后|之后))" + ZH_PERIOD)
EN_CLOCK_RE = re.compile(
    r"(?<![\d:.])(?P<h>[01]?\d|2[0-3]):(?P<m>[0-5]\d)(?::[0-5]\d)?(?:\s*(?P<ap>[ap]\.?m\.?)(?![A-Za-z]))?(?![\d:])"
    r"|(?<![\d:.A-Za-z])(?P<h2>1[0-2]|0?[1-9])(?:[.:](?P<m2>[0-5]\d))?\s*(?P<ap2>am|pm|a\.m\.|p\.m\.)(?![A-Za-z])"
    r"|(?<![A-Za-z])(?P<named>noon|midday|midnight)(?![A-Za-z])", re.I)
ZH_CLOCK_RE = re.compile(
    r"(?:(?P<period>凌晨|早上|早晨|上午|中午|下午|傍晚|晚上|夜里|今晚|明晚|明早|今早)\s*)?"
    r"(?P<h>\d{1,2}|[零一二两三四五六七八九十]{1,3})\s*[点點时](?:\s*(?P<m>\d{1,2})\s*分?|(?P<half>半)|(?P<q>一刻|三刻))?")
# A weekday written right beside a date ("Tuesday 4th August", "Sat, 12 July", "1 月 18 日（周六）"): it names
# the year of a date written without one.
EN_WEEKDAY_RE = re.compile(r"(?<![A-Za-z])(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tues?"
                           r"|wed|thu(?:rs?)?|fri|sat|sun)\.?(?![A-Za-z])", re.I)
ZH_WEEKDAY_RE = re.compile(r"(?:周|星期|礼拜)(?P<wd>[一二三四五六日天])")
WEEKDAY_GAP = 3  # characters between a weekday and the date it labels: ", ", " (", "（"
# How many years either way a weekday may move a yearless date: one. It tells this year from the next or the
# last; a date whose weekday fits no nearer year than two away is more likely a slip than a date in 2025.
WEEKDAY_YEARS = 1
ZH_DAY_OFFSETS = {"大后天": 3, "后天": 2, "明天": 1, "明日": 1, "今天": 0, "今日": 0, "昨天": -1, "前天": -2}
EN_NUMBER_WORDS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}


@dataclass(frozen=True)
class DateHit:
    start: int
    end: int
    first: date
    last: date | None = None  # end of a range
    at: time | None = None  # a clock time written with the date (ISO datetime, 下午3点 right after 明天)
    period: tuple[time, time] | None = None
    relative: bool = False


@dataclass(frozen=True)
class TimeHit:
    start: int
    end: int
    at: time


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _roll(month: int, day: int, year: int | None, today: date, end: tuple[int, int] | None = None) -> date | None:
    """A date without a year is this year's, or next year's once it has passed (a range: once its end has
    passed). PAST_GRACE_DAYS keeps just-passed dates in this year ("the 12 October booking failed")."""
    if year is not None:
        return _safe_date(year, month, day)
    found = _safe_date(today.year, month, day)
    if found is None:
        return None
    last = _safe_date(today.year, *end) if end else found
    if last is not None and last < found:  # a range over New Year
        last = _safe_date(today.year + 1, *end) if end else found
    if last is not None and (today - last).days > PAST_GRACE_DAYS:
        found = _safe_date(today.year + 1, month, day)
    return found


def _weekday_beside(text: str, start: int, end: int) -> int | None:
    """The weekday written right before or after text[start:end], if any."""
    before, after = text[max(0, start - 12):start], text[end:end + 12]
    for pattern in (EN_WEEKDAY_RE, ZH_WEEKDAY_RE):
        for m in pattern.finditer(before):
            if len(before) - m.end() <= WEEKDAY_GAP:
                return WEEKDAYS[m["wd"].casefold()]
        m = pattern.search(after)
        if m is not None and m.start() <= WEEKDAY_GAP:
            return WEEKDAYS[m["wd"].casefold()]
    return None


def _year_of_weekday(first: date, weekday: int | None) -> date:
    """A yearless date moved to the year before or after when it falls on the weekday written beside it
    there; as rolled when no weekday is written, it already matches, or neither year has it."""
    if weekday is None or first.weekday() == weekday:
        return first
    for shift in sorted(range(-WEEKDAY_YEARS, WEEKDAY_YEARS + 1), key=lambda y: (abs(y), y)):
        moved = _safe_date(first.year + shift, first.month, first.day)
        if moved is not None and moved.weekday() == weekday:
            return moved
    return first


def yearless_date(month: int, day: int, today: date) -> date | None:
    """The date a month and day without a year stand for, said on `today` (what "12 October" resolves to)."""
    return _roll(month, day, None, today)


def _month_day(day: int, today: date, weekday: int | None = None) -> date | None:
    """The day of this month, or of the next month that has it once it is more than PAST_GRACE_DAYS
    behind ("the 4th" said on 28 March is 4 April; "the 24th" said on the 26th is still this month's).
    A weekday written with it picks the first of those months where the day falls on it ("Tuesday the 5th")."""
    if not 1 <= day <= 31:
        return None
    year, month = today.year, today.month
    candidates = []
    for _ in range(3):  # the 31st: a month or two on
        found = _safe_date(year, month, day)
        if found is not None and (today - found).days <= PAST_GRACE_DAYS:
            candidates.append(found)
        year, month = (year + 1, 1) if month == 12 else (year, month + 1)
    fitting = [c for c in candidates if c.weekday() == weekday]
    return (fitting or candidates or [None])[0]


def _range_end(first: date, month: int, day: int) -> date | None:
    found = _safe_date(first.year, month, day)
    if found is not None and found < first:
        found = _safe_date(first.year + 1, month, day)
    return found


def _weekday(today: date, weekday: int, modifier: str | None) -> date:
    monday = today - timedelta(days=today.weekday())
    if modifier in ("next", "下"):
        return monday + timedelta(days=7 + weekday)
    if modifier == "下下":
        return monday + timedelta(days=14 + weekday)
    if modifier in ("last", "上"):
        return monday - timedelta(days=7 - weekday)
    if modifier in ("this", "这", "本"):
        return monday + timedelta(days=weekday)
    ahead = (weekday - today.weekday()) % 7  # bare or "coming": the next such day, today included
    return today + timedelta(days=ahead)


def scan_dates(text: str, mask: Mask, today: date) -> list[DateHit]:
    hits: list[DateHit] = []

    def claim(start: int, end: int) -> bool:
        if not mask.free(start, end):
            return False
        mask.take(start, end)
        return True

    for m in ISO_RE.finditer(text):
        found = _safe_date(int(m["y"]), int(m["m"]), int(m["d"]))
        if found and claim(m.start(), m.end()):
            at = time(int(m["H"]), int(m["M"])) if m["H"] else None
            hits.append(DateHit(m.start(), m.end(), found, at=at))
    for m in ZH_DATE_RE.finditer(text):
        year = int(m["y"]) if m["y"] else None
        end = (int(m["m2"] or m["m"]), int(m["d2"])) if m["d2"] else None
        first = _roll(int(m["m"]), int(m["d1"]), year, today, end)
        if first is None:
            continue
        last = _range_end(first, int(m["m2"] or m["m"]), int(m["d2"])) if m["d2"] else None
        if year is None and not m["d2"]:
            first = _year_of_weekday(first, _weekday_beside(text, m.start(), m.end()))
        if claim(m.start(), m.end()):
            hits.append(DateHit(m.start(), m.end(), first, last))
    for pattern in (EN_DAY_FIRST_RE, EN_MONTH_FIRST_RE):
        for m in pattern.finditer(text):
            mon = m["mon"]
            if mon.casefold() == "may" and mon != "May":  # "2 may be" is not a date
                continue
            month = MONTHS[mon.casefold().rstrip(".")]
            year = int(m["y"]) if m["y"] else None
            first = _roll(month, int(m["d1"]), year, today, (month, int(m["d2"])) if m["d2"] else None)
            if first is None:
                continue
            last = _range_end(first, month, int(m["d2"])) if m["d2"] else None
            if m["d2"] and last is None:
                continue
            if year is None and not m["d2"]:
                first = _year_of_weekday(first, _weekday_beside(text, m.start(), m.end()))
            if claim(m.start(), m.end()):
                hits.append(DateHit(m.start(), m.end(), first, last))
    for pattern in (EN_MONTH_DAY_RE, ZH_MONTH_DAY_RE):
        for m in pattern.finditer(text):
            weekday = None if m["d2"] else _weekday_beside(text, m.start(), m.end())
            first = _month_day(int(m["d1"]), today, weekday)
            last = _month_day(int(m["d2"]), first) if first and m["d2"] else None
            if first is not None and (last is not None or not m["d2"]) and claim(m.start(), m.end()):
                hits.append(DateHit(m.start(), m.end(), first, last))
    absolute = list(hits)

    def names_a_date(m: re.Match[str]) -> bool:
        """A bare weekday written next to a date ("Friday 11 July", "1 月 18 日（周六）") only labels it."""
        return any(0 <= h.start - m.end() <= 3 or 0 <= m.start() - h.end <= 3 for h in absolute)

    for m in EN_RELATIVE_RE.finditer(text):
        if m["wd2"] and names_a_date(m):
            continue
        period_name = m["period"]
        if m["dat"]:
            day = today + timedelta(days=2)
        elif m["word"]:
            word = m["word"].casefold()
            day = today + timedelta(days={"today": 0, "tonight": 0, "tomorrow": 1, "yesterday": -1}[word])
            if word == "tonight":
                period_name = period_name or "tonight"
        elif m["this"]:
            day, period_name = today, m["tp"]
        elif m["wd"] or m["wd2"]:
            day = _weekday(today, WEEKDAYS[(m["wd"] or m["wd2"]).casefold()], (m["wmod"] or "").casefold() or None)
        else:
            count = EN_NUMBER_WORDS.get(m["n"].casefold()) or int(m["n"])
            day = today + timedelta(days=count * (7 if m["unit"].casefold().startswith("week") else 1))
        period = PERIODS.get(period_name.casefold()) if period_name else None
        if claim(m.start(), m.end()):
            hits.append(DateHit(m.start(), m.end(), day, period=period, relative=True))
    for m in ZH_RELATIVE_RE.finditer(text):
        if m["wd"] and not m["wmod"] and names_a_date(m):
            continue
        period_name = m["period"]
        if m["word"]:
            day = today + timedelta(days=ZH_DAY_OFFSETS[m["word"]])
        elif m["pword"]:
            word = m["pword"]
            day = today + timedelta(days=1 if word.startswith("明") else -1 if word.startswith("昨") else 0)
            period_name = period_name or word
        elif m["wd"]:
            day = _weekday(today, WEEKDAYS[m["wd"]], m["wmod"])
        else:
            count = zh_number(m["n"])
            if count is None:
                continue
            day = today + timedelta(days=count)
        period = PERIODS.get(period_name) if period_name else None
        if claim(m.start(), m.end()):
            hits.append(DateHit(m.start(), m.end(), day, period=period, relative=True))
    return sorted(hits, key=lambda h: h.start)


def _ampm(hour: int, marker: str | None) -> int:
    if not marker:
        return hour
    marker = marker.casefold().replace(".", "")
    if marker == "pm" and hour < 12:
        return hour + 12
    if marker == "am" and hour == 12:
        return 0
    return hour


def scan_times(text: str, mask: Mask) -> list[TimeHit]:
    hits: list[TimeHit] = []
    for m in EN_CLOCK_RE.finditer(text):
        if m["named"]:
            at = time(0) if m["named"].casefold() == "midnight" else time(12)
        elif m["h"] is not None:
            at = time(_ampm(int(m["h"]), m["ap"]), int(m["m"]))
        else:
            at = time(_ampm(int(m["h2"]), m["ap2"]), int(m["m2"] or 0))
        if mask.free(m.start(), m.end()):
            mask.take(m.start(), m.end())
            hits.append(TimeHit(m.start(), m.end(), at))
    for m in ZH_CLOCK_RE.finditer(text):
        raw, period = m["h"], m["period"]
        if not raw.isdigit() and not period:  # "安静一点" is "a bit quieter", not one o'clock
            continue
        hour = zh_number(raw)
        if hour is None or hour > 24:
            continue
        minute = int(m["m"]) if m["m"] else 30 if m["half"] else 15 if m["q"] == "一刻" else 45 if m["q"] else 0
        if minute > 59:
            continue
        if period in ("下午", "晚上", "傍晚", "夜里", "今晚", "明晚") and hour < 12:
            hour += 12
        elif period == "中午" and hour < 5:
            hour += 12
        hour %= 24
        start = m.start() if mask.free(m.start(), m.end()) else m.start("h")  # 下周三上午 may be a date already
        if mask.free(start, m.end()):
            mask.take(start, m.end())
            hits.append(TimeHit(start, m.end(), time(hour, minute)))
    return sorted(hits, key=lambda h: h.start)


EXPIRY_RE = re.compile(
    r"(?<![A-Za-z0-9_])(?:until|till|expires?|expiring|expiry|deadline|due|no\s+later\s+than)(?![A-Za-z0-9_])"
    r"|(?<![A-Za-z0-9_])by(?=\s+(?:the\s+end|end|"
    r"tomorrow|today|tonight|\d|mon|tue|wed|thu|fri|sat|sun|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec))"
    r"|有效期?(?:至|到|截至)?|截止|截至|到期|过期|之前|以前", re.I)


def attach_times(dates: list[DateHit], times: list[TimeHit], text: str) -> list[DateHit]:
    """A clock time written right next to a date belongs to it ("tomorrow 3pm", "10月19日09:45")."""
    out = []
    for hit in dates:
        at = hit.at
        if at is None:
            for t in times:
                gap = text[hit.end:t.start] if t.start >= hit.end else text[t.end:hit.start]
                if len(gap) <= 6 and re.fullmatch(r"[\s,]*(?:at|@|on|the|,|在|的)?[\s,]*", gap, re.I):
                    at = t.at
                    break
        out.append(hit if at is hit.at else DateHit(hit.start, hit.end, hit.first, hit.last, at, hit.period,
                                                   hit.relative))
    return out


def moment(day: date, at: time, tzinfo) -> datetime:
    return datetime.combine(day, at).replace(tzinfo=tzinfo)


def occurred_at(dates: list[DateHit], times: list[TimeHit], now: datetime) -> datetime | None:
    if dates:
        first = dates[0]
        at = first.at or (first.period[0] if first.period else None) or (times[0].at if times else time(0))
        return moment(first.first, at, now.tzinfo)
    if times:
        return moment(now.date(), times[0].at, now.tzinfo)
    return None


def _end_of(hit: DateHit) -> time:
    if hit.at is not None and hit.last is None:
        return hit.at
    if hit.period is not None:
        return hit.period[1]
    return END_OF_DAY


def valid_until(text: str, dates: list[DateHit], now: datetime) -> datetime | None:
    """Explicit expiry ("valid until 5 Nov", "今晚有效"), else the end of a near relative day/period."""
    if not dates:
        return None
    cues = [m.start() for m in EXPIRY_RE.finditer(text)]
    if cues:
        def distance(hit: DateHit) -> int:
            return min(abs(hit.start - c) for c in cues)

        hit = min(dates, key=distance)
        if distance(hit) <= 40:
            return moment(hit.last or hit.first, _end_of(hit), now.tzinfo)
    today = now.date()
    for hit in dates:
        if hit.relative and 0 <= (hit.first - today).days <= 2:
            until = moment(hit.first, _end_of(hit), now.tzinfo)
            if until > now:
                return until
    return None
