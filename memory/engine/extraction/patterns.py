"""Precompiled patterns for values: URLs, e-mails, paths, phones, amounts, identifiers, numbers.

Every scanner takes the (length-preserving) normalised text and a Mask of characters already
claimed by an earlier, more specific scanner, so a phone number is never also a number, a date
never an amount, and a path never an identifier.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from .lexicon import ORGANIZATIONS, PRODUCTS

A = r"(?<![A-Za-z0-9_])"  # ASCII word start (\b treats CJK as word characters, which breaks "跟踪G7311的")
Z = r"(?![A-Za-z0-9_])"  # ASCII word end


@dataclass(frozen=True)
class Hit:
    kind: str
    start: int
    end: int
    surface: str
    value: str


class Mask:
    """Which characters an earlier scanner has claimed."""

    def __init__(self, size: int) -> None:
        self.taken = bytearray(size)
        self.spans: list[tuple[int, int]] = []

    def free(self, start: int, end: int) -> bool:
        return self.taken.find(1, start, end) < 0

    def take(self, start: int, end: int) -> None:
        self.taken[start:end] = b"\x01" * (end - start)
        self.spans.append((start, end))

    def blank(self, text: str, filler: str = "\x00") -> str:
        """The text with claimed characters replaced, so later word patterns cannot span them."""
        if not self.spans:
            return text
        chars = list(text)
        for start, end in self.spans:
            chars[start:end] = filler * (end - start)
        return "".join(chars)


def nfkc_same_length(text: str) -> str:
    """NFKC per character where that keeps the length (full-width → half-width), so offsets stay valid."""
    if text.isascii():
        return text
    out = []
    for ch in text:
        if ord(ch) < 128:
            out.append(ch)
            continue
        folded = unicodedata.normalize("NFKC", ch)
        out.append(folded if len(folded) == 1 else ch)
    return "".join(out)


def normalize_name(name: str) -> str:
    """De-duplication key: NFKC, casefolded, whitespace collapsed, punctuation trimmed at the ends."""
    text = " ".join(unicodedata.normalize("NFKC", name).casefold().split())
    start, end = 0, len(text)
    while start < end and unicodedata.category(text[start])[0] in "PS":
        start += 1
    while end > start and unicodedata.category(text[end - 1])[0] in "PS":
        end -= 1
    return text[start:end]


# --- URLs, e-mails, paths -------------------------------------------------------------------------------

URL_RE = re.compile(r"(?<![A-Za-z0-9])(?:[a-z][a-z0-9+.-]{1,15}://|www\.)[^\s<>\"'`()\[\]{}，。；、）（]+", re.I)
DOMAIN_RE = re.compile(
    A + r"(?<![@./-])(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:com|org|net|io|cn|dev|ai|app|co|uk|de|fr|jp|"
    r"info|biz|edu|gov|internal|local|cloud)(?![A-Za-z0-9_.-])", re.I)
EMAIL_RE = re.compile(r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9][A-Za-z0-9._%+-]*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*"
                      r"\.[A-Za-z]{2,}" + Z)
FILE_EXTENSIONS = (
    "py|pyi|pyx|ipynb|md|rst|txt|csv|tsv|json|jsonl|yaml|yml|toml|ini|cfg|conf|lock|js|mjs|cjs|ts|tsx|jsx|"
    "vue|svelte|html|htm|css|scss|less|sql|sh|bash|zsh|ps1|bat|go|rs|java|kt|scala|c|h|cc|cpp|hpp|cs|rb|php|"
    "swift|m|mm|r|xml|log|pdf|docx?|xlsx?|pptx?|png|jpe?g|gif|svg|webp|zip|gz|tgz|tar|whl|proto|graphql|tf|mdx|"
    "db|sqlite3?|parquet|pkl|bin|exe|dll|so|dylib|jar|war|apk|pem|key|crt|service|template|j2|html5"
)
EXT_RE = re.compile(r"\.(?:" + FILE_EXTENSIONS + r")$", re.I)
KNOWN_FILES = frozenset({
    "dockerfile", "makefile", "procfile", "readme", "license", "changelog", "gemfile", "rakefile", "jenkinsfile",
    "vagrantfile", "containerfile", "justfile",
})
SLASH_PATH_RE = re.compile(
    r"(?<![A-Za-z0-9_.:/@+\\-])(?:~/|\.{1,2}/|/)?(?:[A-Za-z0-9_.@+-]+/)+[A-Za-z0-9_.@+-]*")
BARE_FILE_RE = re.compile(
    r"(?<![A-Za-z0-9_./@+\\-])\.?[A-Za-z0-9_][A-Za-z0-9_.+-]*\.(?:" + FILE_EXTENSIONS + r")(?![A-Za-z0-9_])"
    r"|(?<![A-Za-z0-9_./@\\-])\.(?:env|gitignore|dockerignore|editorconfig|bashrc|zshrc|npmrc)(?:\.[a-z]+)?"
    r"(?![A-Za-z0-9_])"
    r"|" + A + r"(?:Dockerfile|Makefile|Procfile|Jenkinsfile|Containerfile|Vagrantfile|Justfile)" + Z)
WINDOWS_PATH_RE = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]:\\(?:[^\\\s\"'<>|:*?]+\\)*[^\\\s\"'<>|:*?]*")


def _trim_url(url: str) -> str:
    url = url.rstrip(".,;:!?'\"")
    while url.endswith(")") and url.count("(") < url.count(")"):
        url = url[:-1]
    return url


def scan_urls(text: str, mask: Mask) -> list[Hit]:
    hits = []
    for pattern in (URL_RE, DOMAIN_RE):
        for m in pattern.finditer(text):
            url = _trim_url(m.group())
            start, end = m.start(), m.start() + len(url)
            if len(url) < 4 or not mask.free(start, end):
                continue
            if pattern is DOMAIN_RE and url.casefold() in PRODUCTS:  # "Node.js" is a product
                continue
            mask.take(start, end)
            hits.append(Hit("url", start, end, url, url))
    return sorted(hits, key=lambda h: h.start)


def scan_emails(text: str, mask: Mask) -> list[Hit]:
    hits = []
    for m in EMAIL_RE.finditer(text):
        if mask.free(m.start(), m.end()):
            mask.take(m.start(), m.end())
            hits.append(Hit("email", m.start(), m.end(), m.group(), m.group().casefold()))
    return hits


def _path_ok(path: str) -> bool:
    segments = [s for s in path.split("/") if s not in ("", ".", "..", "~")]
    if not segments or all(s.replace(".", "").replace("-", "").isdigit() for s in segments):
        return False
    last = path.rsplit("/", 1)[-1]
    if EXT_RE.search(last) or last.casefold() in KNOWN_FILES or (last.startswith(".") and len(last) > 2):
        return True
    if path.startswith(("/", "./", "../", "~/")):
        return len(segments) >= 2 or path.startswith(("./", "../", "~/"))
    if path.endswith("/"):
        return len(segments) >= 1 and segments[0][:1].isalpha() and segments[0].islower() and len(segments[0]) > 1
    return len(segments) >= 3 and all(s[:1].isalnum() or s[:1] in "_." for s in segments)


def scan_paths(text: str, mask: Mask) -> list[Hit]:
    hits = []
    for pattern in (WINDOWS_PATH_RE, SLASH_PATH_RE, BARE_FILE_RE):
        for m in pattern.finditer(text):
            path = m.group().rstrip(".,:;")
            start, end = m.start(), m.start() + len(path)
            if not path or not mask.free(start, end):
                continue
            if pattern is SLASH_PATH_RE and not _path_ok(path):
                continue
            if pattern is BARE_FILE_RE and path.casefold() in PRODUCTS:
                continue
            mask.take(start, end)
            hits.append(Hit("path", start, end, path, path))
    return sorted(hits, key=lambda h: h.start)


# --- phones -----------------------------------------------------------------------------------------------

CN_MOBILE_RE = re.compile(r"(?<![\d+])(?:(?:\+|00)86[\s-]?)?1[3-9]\d(?:[\s-]?\d){8}(?!\d)")
INTL_PHONE_RE = re.compile(r"(?<![\w+])\+\d{1,3}[\s-]?(?:\(\d{1,4}\)[\s-]?)?\d{1,5}(?:[\s-]?\d{2,5}){1,4}(?!\d)")
CN_LANDLINE_RE = re.compile(r"(?<![\d-])0\d{2,3}-\d{7,8}(?!\d)")
# A number in national format, trunk prefix 0 and 10-11 digits in groups: "07700 900316", "0117 496 0182",
# "020 7946 0958". Without it a British number read as three numbers, and a new one replaced nothing.
NATIONAL_PHONE_RE = re.compile(r"(?<![\w+.,/-])0\d{2,4}(?:[ -]\d{3,6}){1,2}(?![\w.,/-]?\d)")
NATIONAL_DIGITS = (10, 11)


def normalize_phone(raw: str) -> str:
    """E.164 when the country is known: written with "+"/"00", or a Chinese mobile (1[3-9] and 11 digits).
    A written country code wins: "+1 555 100 8920" is an American number, not a Chinese mobile."""
    digits = re.sub(r"\D", "", raw)
    if raw.startswith("00"):
        digits, raw = digits[2:], "+" + raw[2:]
    if raw.startswith("+"):
        return "+" + digits
    if re.fullmatch(r"(?:86)?1[3-9]\d{9}", digits):
        return "+86" + digits[-11:]
    return digits


def scan_phones(text: str, mask: Mask) -> list[Hit]:
    hits = []
    for pattern in (CN_MOBILE_RE, INTL_PHONE_RE, CN_LANDLINE_RE, NATIONAL_PHONE_RE):
        for m in pattern.finditer(text):
            raw = m.group().strip()
            digits = sum(ch.isdigit() for ch in raw)
            if not 7 <= digits <= 15 or not mask.free(m.start(), m.end()):
                continue
            if pattern is NATIONAL_PHONE_RE and digits not in NATIONAL_DIGITS:
                continue
            mask.take(m.start(), m.end())
            hits.append(Hit("phone", m.start(), m.end(), raw, normalize_phone(raw)))
    return sorted(hits, key=lambda h: h.start)


# --- amounts ----------------------------------------------------------------------------------------------

CURRENCIES: dict[str, str] = {
    "rmb": "CNY", "cny": "CNY", "yuan": "CNY", "元": "CNY", "块": "CNY", "块钱": "CNY", "人民币": "CNY", "¥": "CNY",
    "usd": "USD", "us$": "USD", "$": "USD", "dollar": "USD", "dollars": "USD", "bucks": "USD", "美元": "USD",
    "美金": "USD", "eur": "EUR", "€": "EUR", "euro": "EUR", "euros": "EUR", "欧元": "EUR", "gbp": "GBP", "£": "GBP",
    "pound": "GBP", "pounds": "GBP", "英镑": "GBP", "jpy": "JPY", "日元": "JPY", "円": "JPY", "hkd": "HKD",
    "hk$": "HKD", "港币": "HKD", "港元": "HKD", "chf": "CHF", "aud": "AUD", "cad": "CAD", "sgd": "SGD",
    "krw": "KRW", "韩元": "KRW", "inr": "INR",
}
MULTIPLIERS: dict[str, int] = {
    "k": 1_000, "thousand": 1_000, "千": 1_000, "m": 1_000_000, "million": 1_000_000, "mn": 1_000_000,
    "百万": 1_000_000, "万": 10_000, "bn": 1_000_000_000, "billion": 1_000_000_000, "亿": 100_000_000,
}
NUM = r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
MULT = r"(?P<mult>k|thousand|million|mn|bn|billion|m|千|百万|万|亿)"
AMOUNT_AFTER_RE = re.compile(
    r"(?<![A-Za-z0-9_.])(?<!\d,)" + NUM + r"\s?" + MULT
    + r"?\s?(?P<cur>RMB|CNY|USD|EUR|GBP|JPY|HKD|CHF|AUD|CAD|SGD|KRW|INR|"
    r"yuan|dollars?|bucks|euros?|pounds?)" + Z
    + r"|(?<![A-Za-z0-9_.])(?<!\d,)" + NUM.replace("num", "num2") + r"\s?" + MULT.replace("mult", "mult2")
    + r"?\s?(?P<cur2>块钱|块|元|人民币|美元|美金|欧元|英镑|日元|円|港币|港元|韩元)", re.I)
AMOUNT_BEFORE_RE = re.compile(
    r"(?P<cur>US\$|HK\$|[$€£¥]|" + A + r"(?:RMB|CNY|USD|EUR|GBP|JPY|HKD|CHF|AUD|CAD|SGD)\s?)\s?" + NUM
    + r"(?:\s?" + MULT + Z + r")?(?![\d])")


def format_decimal(value: Decimal) -> str:
    if value == value.to_integral_value():
        return str(int(value))
    return format(value.normalize(), "f")


def _number(raw: str, mult: str | None) -> str | None:
    if len(raw) > 30:  # a digit string, not a quantity
        return None
    try:
        value = Decimal(raw.replace(",", ""))
    except InvalidOperation:
        return None
    if mult:
        value *= MULTIPLIERS.get(mult.casefold(), 1)
    return format_decimal(value)


def scan_amounts(text: str, mask: Mask) -> list[Hit]:
    hits = []
    for m in AMOUNT_AFTER_RE.finditer(text):
        num = m.group("num") or m.group("num2")
        mult = m.group("mult") or m.group("mult2")
        cur = (m.group("cur") or m.group("cur2")).casefold()
        value = _number(num, mult)
        if value is None or not mask.free(m.start(), m.end()):
            continue
        mask.take(m.start(), m.end())
        hits.append(Hit("amount", m.start(), m.end(), m.group(), f"{value} {CURRENCIES.get(cur, cur.upper())}"))
    for m in AMOUNT_BEFORE_RE.finditer(text):
        value = _number(m.group("num"), m.group("mult"))
        cur = m.group("cur").strip().casefold()
        if value is None or not mask.free(m.start(), m.end()):
            continue
        mask.take(m.start(), m.end())
        hits.append(Hit("amount", m.start(), m.end(), m.group(), f"{value} {CURRENCIES.get(cur, cur.upper())}"))
    return sorted(hits, key=lambda h: h.start)


# --- identifiers ------------------------------------------------------------------------------------------

IDENTIFIER_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("ref", re.compile(r"(?<![A-Za-z0-9_&#])#\d{1,7}" + Z)),  # PR #231
    ("ref", re.compile(r"(?<![A-Za-z0-9_-])[A-Z][A-Z0-9]{0,4}-\d{2,}(?:-\d+)*" + Z)),  # BG-58213, TR-7731
    ("ref", re.compile(r"(?<![A-Za-z0-9_-])\d{3,4}-\d{6,}" + Z)),  # ticket 781-2290045
    ("code", re.compile(r"(?<![A-Za-z0-9_.-])(?=[A-Z0-9]*\d)[A-Z][A-Z0-9]{3,}" + Z)),  # MU5102, G7311, EJ4KQ7
    ("const", re.compile(r"(?<![A-Za-z0-9_.])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+" + Z)),  # SOLD_OUT
    ("dotted", re.compile(r"(?<![A-Za-z0-9_./-])[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+(?:\(\))?"
                          r"(?![A-Za-z0-9_/-])")),  # csv.writer, Sale.objects.select_related
    ("call", re.compile(r"(?<![A-Za-z0-9_.])[A-Za-z_][A-Za-z0-9_]{2,}(?=\((?!s\)))")),  # login(, run_tests(
    ("snake", re.compile(r"(?<![A-Za-z0-9_.])_*[A-Za-z][A-Za-z0-9]*(?:_+[A-Za-z0-9]+)+_*" + Z)),
    ("camel", re.compile(r"(?<![A-Za-z0-9_.])(?:[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|[a-z]+(?:[A-Z][a-z0-9]*)+)" + Z)),
)
CALL_STOP = frozenset({"and", "the", "for", "with", "see", "e.g", "i.e", "etc", "note", "max", "min"})


def _named(word: str) -> bool:
    return word.casefold() in PRODUCTS or word.casefold() in ORGANIZATIONS


def scan_identifiers(text: str, mask: Mask) -> list[Hit]:
    hits = []
    for kind, pattern in IDENTIFIER_PATTERNS:
        for m in pattern.finditer(text):
            start, end = m.start(), m.end()
            word = m.group()
            if kind == "dotted":
                word = word.removesuffix("()")
                parts = word.split(".")
                if min(len(p) for p in parts) < 2 or word.isupper() or _named(word):
                    continue
            elif kind in ("camel", "code") and _named(word):
                continue
            elif kind == "call" and word.casefold() in CALL_STOP:
                continue
            if not mask.free(start, end):
                continue
            mask.take(start, end)
            hits.append(Hit(kind, start, end, m.group(), word))
    return sorted(hits, key=lambda h: h.start)


FLIGHT_RE = re.compile(r"^(?:[A-Z]{2}|[A-Z]\d|\d[A-Z]|[A-Z]{3})\d{2,4}[A-Z]?$")
TRAIN_RE = re.compile(r"^[GDCZTKYSL]\d{1,4}$")


# --- numbers ----------------------------------------------------------------------------------------------

NUMBER_RE = re.compile(
    r"(?<![A-Za-z0-9_.#\-+])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)*)"
    r"(?:\s?(?P<mult>million|billion|thousand|万|亿)|(?P<pct>%))?(?![\d])")


ZH_DIGITS: dict[str, int] = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
                             "八": 8, "九": 9}
_D = "[一二两三四五六七八九]"
# A quantity in Chinese numerals with a magnitude: 两万六 (26,000), 四万三, 九千四 (9,400), 十二万, 三千五百.
# Bare numerals (三周, 两天一晚) are words, not values; 万一 ("in case") and 千万 ("by all means") have no
# numeral before the magnitude; 一万多 ("over ten thousand") is an estimate, not a value to replace.
ZH_QUANTITY_RE = re.compile(
    r"(?<![一二两三四五六七八九十百千万亿零\d])"
    r"(?:(?P<wan>" + _D + r"?十" + _D + r"?|" + _D + r")万"
    r"(?:(?P<wq>" + _D + r")千|(?P<wt>" + _D + r")(?![十百千万亿]))?"
    r"|(?P<qian>" + _D + r")千(?:(?P<qb>" + _D + r")百|(?P<qt>" + _D + r")(?![十百千万亿]))?)"
    r"(?![万亿多])")


def zh_number(raw: str) -> int | None:
    """Digits, or 一 … 九十九 written in Chinese numerals (dates, times and quantities read them)."""
    if raw.isdigit():
        return int(raw)
    if raw == "十":
        return 10
    if "十" in raw:
        tens, _, ones = raw.partition("十")
        return ZH_DIGITS.get(tens, 1) * 10 + (ZH_DIGITS.get(ones, 0) if ones else 0)
    if len(raw) == 1:
        return ZH_DIGITS.get(raw)
    return None


def _zh_quantity(m: re.Match[str]) -> int:
    if m.group("wan"):
        rest = m.group("wq") or m.group("wt")
        return (zh_number(m.group("wan")) or 0) * 10_000 + (ZH_DIGITS[rest] * 1_000 if rest else 0)
    rest = m.group("qb") or m.group("qt")
    return ZH_DIGITS[m.group("qian")] * 1_000 + (ZH_DIGITS[rest] * 100 if rest else 0)


def scan_numbers(text: str, mask: Mask) -> list[Hit]:
    hits = []
    for m in ZH_QUANTITY_RE.finditer(text):
        if mask.free(m.start(), m.end()):
            mask.take(m.start(), m.end())
            hits.append(Hit("number", m.start(), m.end(), m.group(), str(_zh_quantity(m))))
    for m in NUMBER_RE.finditer(text):
        if not mask.free(m.start(), m.end()):
            continue
        raw = m.group("num")
        if raw.count(".") > 1:  # a version such as 3.12.3
            value = raw
        else:
            value = _number(raw, m.group("mult")) or raw
        if m.group("pct"):
            value += "%"
        mask.take(m.start(), m.end())
        hits.append(Hit("number", m.start(), m.end(), m.group(), value))
    return sorted(hits, key=lambda h: h.start)
