"""Words and patterns the offline rules look for, in English and Chinese."""

from __future__ import annotations

import re

from ..models import InteractionKind, MemoryKind

CHIT_CHAT = {
    "ok", "okay", "ok thanks", "thanks", "thank you", "thx", "sure", "yes", "no", "got it", "cool",
    "great", "nice", "hello", "hi", "bye", "sounds good", "alright", "fine",
    "好的", "好", "谢谢", "明白了", "收到", "嗯", "好吧", "可以", "没问题", "你好", "再见", "知道了",
}
KIND_BY_INTERACTION = {
    InteractionKind.USER_INPUT: MemoryKind.FACT,
    InteractionKind.ASSISTANT_OUTPUT: MemoryKind.EVENT,
    InteractionKind.AGENT_THOUGHT: MemoryKind.INTENT,
    InteractionKind.TOOL_CALL: MemoryKind.ACTION,
    InteractionKind.TOOL_RESULT: MemoryKind.RESULT,
    InteractionKind.OBSERVATION: MemoryKind.EVENT,
    InteractionKind.SYSTEM: MemoryKind.FACT,
}
# Ordered: the first matching cue decides the kind. English and Chinese.
KIND_CUES: list[tuple[MemoryKind, re.Pattern[str]]] = [
    (MemoryKind.ERROR, re.compile(
        r"\b(error|failed|failure|exception|sold out|unavailable|timeout|denied)\b|失败|错误|异常|售罄|超时", re.I)),
    (MemoryKind.CONSTRAINT, re.compile(
        r"\b(must|budget|allerg\w*|cannot|can't|at most|no more than|deadline|only)\b|预算|过敏|不能|必须|最多|不超过",
        re.I)),
    (MemoryKind.PREFERENCE, re.compile(r"\b(prefer\w*|like|love|hate|favou?rite|rather)\b|喜欢|偏好|更想|讨厌", re.I)),
    (MemoryKind.DECISION, re.compile(r"\b(decided?|choose|chose|will use|go with|settled on)\b|决定|选择|采用", re.I)),
]
# Phrases that announce a replaced value; single words like "now" or "updated" fire on everything.
CHANGE_CUE = re.compile(
    r"\b(changed (to|from)|has changed|have changed|is now|are now|instead of|correction|"
    r"no longer|from now on|the new (one|number|date|time|address|price|quote)|updated to|"
    r"(moved|pushed|put|postponed|rescheduled|brought forward|delayed)( \w+){0,3} (to|until|for)|"
    r"(raised|increased|went up|dropped|lowered|cut)( \w+){0,2} to|now costs?|my new (number|phone|address|email)|"
    # a moved date, a new figure, a revised plan: said about the value rather than naming it
    r"(pushed|moved|put)( \w+){0,2} (back|forward|up)|(moved|moving|rescheduled) (it|the \w+)|"
    r"(new|revised|final|updated) (total|numbers?|price|quote|date|time|figures?|estimate|count|headcount)|"
    r"(gone|come) (up|down) to|\d[\d,.]*\w*,? not [£$€]?\d[\d,.]*|"  # "has gone up to 75", "Final numbers: 68, not 75"
    r"(a|one|two|three|\d+) (days?|weeks?|months?|hours?) (later|earlier|early)|"
    r"(switching|changing|switched) (to|the|my|our)|instead|in the end|came to|drop(ped)? to|"
    r"(up|down) to [£$€]?\d|\d[\d,.]*\w*( a head| each| a night| per \w+)? now)\b|"
    r"\bnot (on|in|at) (the )?\w+\b\s*[.!]?\s*$"
    r"|改为|改成|改到|换成|换了新|更正|调整为|不再|推迟到|延期到|提前到|涨到|降到|变成了|新号码|换号"
    r"|挪到|往后挪|往前挪|改回|改约|改了|加到|减到|谈到|给到|涨了|现在要|推到|延到|又改|换到|改在"
    r"|最后.{0,6}[定谈]", re.I)
# A value named as a bound the plan stays inside ("still under Martin's 2,500 GBP sign-off", "总花费仍在 20 万以内",
# "仍在 3 月 22 日的定损期限内"): a check against it, which neither restates nor changes it (supersede.py).
# "不超过 1500 元" is not one: it sets the bound.
CHECKED_BOUND = re.compile(
    r"\bstill (?:well |comfortably )?(?:under|within|below|inside)\b[^.;:!?\n]*"
    r"|(?:仍然|仍|依然)在[^，,。；;：:！!？?\n]*|还在[^，,。；;：:！!？?\n]*?(?:以内|之内|范围内|期限内)", re.I)
# Wordings that give a figure again, differently, without announcing a change ("£910 altogether", "每桌2788…比五一
# 便宜", "跟开放日说的不一样", "原来那个138的已经停掉了"). Too common to count as a change for importance; enough to
# let supersede look for the value they replace, which must still be tied to them (supersede.py). "More like the
# 10th" was one too, but it replaced a memory holding another fact still asked for (the day work began).
RESTATED_VALUE_CUE = re.compile(r"\baltogether\b|停掉|停用|不一样|约到|便宜|比.{0,8}[少多贵]|算下来", re.I)
# A question about a value, or a check that it still holds, never replaces it ("is it still the 14th?",
# "so the quote is 4,000, right?", "还是14号吗？").
ASKS_OR_CONFIRMS = re.compile(
    r"[?？]\s*$|[吗呢]\s*[。！!]?\s*$|\b(is it still|are we still|still on for|right\?|correct\?|just to confirm|"
    r"confirm(ing)? (that|the))\b|还是.{0,12}[吗吧]|对吧|是吧|没错吧|确认一下", re.I)
# A question about when something happened, or how long it took: its answer is a memory that says when.
TIME_QUESTION = re.compile(
    r"\bwhen (is|was|did|does|do|will|are|were|has|have|had|would|should|can|could)\b|^\s*when\b|\bwhen\s*[?？]|"
    r"\b(what|which) (date|day|time|week|month|year)\b|\bhow long\b|\bhow many (days|weeks|months|years|hours)\b|"
    r"什么时候|哪天|哪一天|几号|几月|几点|多久|多长时间|星期几|周几|哪个周|什么日子|日期", re.I)
# A question about an amount, a price or a count (not of days: that one is about time): its answer states one.
AMOUNT_QUESTION = re.compile(
    r"\bhow (much|many)\b(?! (days|weeks|months|years|hours)\b)|"
    r"\bwhat (is|was|were|are) the (price|cost|total|budget|amount|quote|fee|number|figure)s?\b|"
    r"\bwhat did .{0,30}\bcost\b|多少(?!天|小时|分钟|年|个月|周)|几个|几人|价格|费用|报价|预算是", re.I)
# A question about a cause ("why was the gig cancelled?", "what made him …", 为什么): in a conversation its answer
# is often told just before the turn that matches, by the same speaker ("Marcus has quit." … "So the gig is off.").
CAUSE_QUESTION = re.compile(
    r"^\s*why\b|\bwhy (is|was|did|does|do|will|are|were|has|have|had|would|should|can|could)\b|\bhow come\b|"
    r"\bwhat (made|led|caused|prompted)\b|为什么|为啥|怎么会|什么原因|原因是", re.I)
# "Maria: …" / "小敏： …": the turn's speaker, as a conversation transcript labels it. A colon counts only with a
# space after it unless the caller checks the label is a person: "约束：…" and "报价：…" are headings, and reading
# every "X：" as a speaker cost chain recall in `make eval` (far@5 0.185 -> 0.130).
SPEAKER_LABEL = re.compile(r"^\s*([^\s:：]{1,40})\s*[:：](\s?)")


def named_speaker(metadata: dict | None) -> str | None:
    """The speaker an interaction's metadata names (`"speaker": "Maria"`), case-folded; a string only."""
    named = (metadata or {}).get("speaker")
    return named.strip().casefold() if isinstance(named, str) and named.strip() else None


def speaker_label(content: str, *, spaced: bool = True) -> str | None:
    """The transcript speaker a turn opens with, case-folded like an entity's normalised name.
    `spaced=False` also takes "小敏：姐…" (no space after the colon), for callers that check it is a person."""
    label = SPEAKER_LABEL.match(content)
    return label.group(1).casefold() if label and (label.group(2) or not spaced) else None


def turn_speaker(content: str, metadata: dict | None) -> str | None:
    """Who says a transcript's turn, for linking it to the same speaker's previous turn: the metadata's
    `speaker`, else any label it opens with ("Felix: …", "小敏：…"). A heading read as a speaker costs
    one structural edge at most; supersede reads speakers more strictly (subjects.speakers_of)."""
    return named_speaker(metadata) or speaker_label(content, spaced=False)


NORMALIZE_RE = re.compile(r"[\s\W_]+", re.UNICODE)


def normalized(text: str) -> str:
    """Lower-cased words only: how chit-chat and repeats are compared."""
    return NORMALIZE_RE.sub(" ", text.lower()).strip()


CJK_CHAR = re.compile("[\u4e00-\u9fff]")


def information_length(text: str) -> int:
    """Characters, with a CJK character counted like a short English word (3)."""
    stripped = text.strip()
    return len(stripped) + 2 * len(CJK_CHAR.findall(stripped))
