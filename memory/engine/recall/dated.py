"""A question about when something happened is answered by a memory that says when (SPEC §4.3).

"When is Pickle booked in for her treatment?" matches the turns about the treatment; the one that
answers it ("Booked it. Langford, Tuesday 4th August.") often shares no word with the question and
came in by a link or a weak match. Among the memories a recall activated, those stating a date or a
time (their `dates` and `times` dimensions, relative ones resolved at ingest) get their activation
multiplied before ranking. Measured in `make eval` (docs/eval.md) at ×1.5: temporal questions' R@5
0.72 → 0.79 (EN 0.67 → 0.76, ZH 0.77 → 0.82), superseded 0.44 → 0.46, no type lost anything.
"""

from __future__ import annotations

from django.db import connection

from ...models import Memory
from ..cues import TIME_QUESTION

# jsonb arrays: absent or empty means the memory states no date (or time).
DATED = ("coalesce(m.dimensions -> 'dates', '[]'::jsonb) <> '[]'::jsonb "
         "OR coalesce(m.dimensions -> 'times', '[]'::jsonb) <> '[]'::jsonb")


def asks_when(text: str) -> bool:
    """"When did …", "what date …", "how long …", "什么时候 / 哪天 / 几点 / 多久 …"."""
    return bool(TIME_QUESTION.search(text))


def dated(memory_ids: list[int]) -> set[int]:
    """The memories among these that state a date or a time (one query)."""
    if not memory_ids:
        return set()
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT m.id FROM {Memory._meta.db_table} m WHERE m.id = ANY(%s) AND ({DATED})",
                       [memory_ids])
        return {row[0] for row in cursor.fetchall()}


def dated_boost(activation: dict[int, float], factor: float) -> tuple[dict[int, float], set[int]]:
    """The activation with the dated memories' multiplied by `factor`, for ranking only (the trace keeps
    what the links and the search gave), and which memories those were."""
    found = dated(list(activation))
    return {m: a * factor if m in found else a for m, a in activation.items()}, found
