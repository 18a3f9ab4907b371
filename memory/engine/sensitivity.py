"""What counts as sensitive text, for every reader that may not see it: a memory a person marked, and any
text that says one of its distinctive values again (a passport number, a phone, an e-mail: `distinctive`).

Two users of the rule:
- LLM prompts. A provider is a reader outside the project, so every prompt builder (filter scoring, edge
  linking, supersede judging, edge review, narration, summaries) takes its memories through `shareable`
  and a new interaction's text through `text_shareable`. A sensitive memory is left out of a prompt (not
  masked: "[sensitive]" would tell the model nothing); a new interaction repeating a value is judged by
  the rules alone.
- The write path. A new memory whose text repeats a sensitive memory's distinctive value is born sensitive
  (`repeats_sensitive`), so its text and its interaction are masked like the first's: the mark reaches
  what is said again after it, not only what was said before.
tests/test_side_doors.py captures every prompt a configured LLM receives and looks for such values.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..models import Memory, MemoryStatus

# Values specific enough that another text holding one repeats the same private fact.
REPEATABLE_KEYS = ("identifiers", "urls", "paths")
MIN_NUMBER_DIGITS = 5  # phone numbers, account numbers; not "3 nights"
MIN_VALUE_CHARS = 3
MIN_DISTINCTIVE_DIGITS = 5
DATE_RE = re.compile(r"\b\d{4}-\d{1,2}-\d{1,2}\b")
SENSITIVE_SCAN_LIMIT = 500  # the project's most recent sensitive memories checked against a new text


def repeated_values(memory: Memory) -> list[str]:
    """The memory's values another text could repeat: identifiers, URLs, paths, long numbers, attribute
    values (a phone, an e-mail, an allergy)."""
    dims = memory.dimensions or {}
    values = [str(v) for key in REPEATABLE_KEYS for v in dims.get(key, [])]
    values += [str(v) for v in dims.get("numbers", []) if sum(c.isdigit() for c in str(v)) >= MIN_NUMBER_DIGITS]
    values += [str(a["value"]) for a in dims.get("attributes", []) if isinstance(a, dict) and a.get("value")]
    return list(dict.fromkeys(v for v in values if len(v) >= MIN_VALUE_CHARS))


def shareable(memories: Iterable[Memory]) -> list[Memory]:
    """The memories a prompt may quote: none marked sensitive, none repeating a sensitive one's value
    (a later "call the doctor again at +86…" is not marked, but says what the marked one said)."""
    memories = [m for m in memories if not m.sensitive]
    if not memories:
        return []
    values = _sensitive_values(memories[0].project_id)
    return [m for m in memories if _free_of(m.content, values)]


def text_shareable(project_id: int, text: str) -> bool:
    """Whether a new text may be sent: not when it says again a value of a sensitive memory."""
    return _free_of(text, _sensitive_values(project_id))


def _sensitive_values(project_id: int) -> list[str]:
    """The repeatable values of the project's sensitive memories, casefolded (one query; the newest
    SENSITIVE_SCAN_LIMIT of them)."""
    sensitive = (Memory.objects.filter(project_id=project_id, sensitive=True).exclude(status=MemoryStatus.FORGOTTEN)
                 .only("dimensions").order_by("-id")[:SENSITIVE_SCAN_LIMIT])
    return list(dict.fromkeys(value.casefold() for memory in sensitive for value in repeated_values(memory)
                              if distinctive(value)))


def distinctive(value: str) -> bool:
    """A value that names one private thing wherever it is said again: a run of MIN_DISTINCTIVE_DIGITS digits or
    more, spaces and dashes aside (a passport, a phone, an account), or an e-mail address. A date, a time, an
    amount, a path or a word ("2027-10-12", "4000 CNY", "docs/") said again is not the marked memory's secret:
    a person decides about those (the repeats offer)."""
    if "@" in value and "." in value.split("@")[-1]:
        return True
    if DATE_RE.search(value):
        return False
    return any(len(run) >= MIN_DISTINCTIVE_DIGITS for run in re.findall(r"\d+", re.sub(r"[\s\-()]", "", value)))


def _free_of(text: str, values: list[str]) -> bool:
    folded = text.casefold()
    return not any(value in folded for value in values)


def repeats_sensitive(project_id: int, text: str) -> bool:
    """Whether a new memory's text says a distinctive value of one of the project's sensitive memories again."""
    return not text_shareable(project_id, text)
