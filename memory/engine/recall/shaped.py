"""A question's shape says what its answer holds (SPEC §4.3): "when …?" a date, "how much …?" an amount.

"When is Pickle booked in for her treatment?" matches the turns about the treatment; the one that
answers it ("Booked it. Langford, Tuesday 4th August.") often shares no word with the question and
came in by a link or a weak match. "How much was the deposit?" is answered by the turn that says
"£120", which may say "paid it" rather than "deposit". Among the memories a recall activated, those
holding the value the question asks for (their dimensions, relative dates resolved at ingest) get
their activation multiplied before ranking; the trace keeps what the links and the search gave.

Measured in `make eval` (docs/eval.md) at ×1.5: for "when", temporal questions' R@5 0.72 → 0.79
(EN 0.67 → 0.76, ZH 0.77 → 0.82), superseded 0.44 → 0.46, no type lost anything. For "how much",
`ripple` R@5 0.54 → 0.55 and MRR 0.52 → 0.54 (fact 0.72 → 0.75, cross-session 0.50 → 0.53); Chinese
superseded R@5 lost 0.52 → 0.48 (an old price rises with the new one), still above both baselines.

A "why …?" question has a shape too, but its answer holds no particular value: it is told before the turn
that matches. `cause_asked` says so, and the spread looks back (ripple.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.db import connection

from ...models import Memory
from ..cues import AMOUNT_QUESTION, CAUSE_QUESTION, TIME_QUESTION
from .config import RecallConfig


@dataclass(frozen=True)
class Shape:
    """One kind of question: the trace's params say `<name>_question`, a raised memory's components
    `<name>_boost`, and RecallConfig's `<name>_question_boost` is the factor (1 turns it off)."""

    name: str
    question: re.Pattern[str]
    dimensions: tuple[str, ...]  # a memory holding any of these answers it

    @property
    def parameter(self) -> str:
        return f"{self.name}_question_boost"

    def condition(self) -> str:
        """SQL on memory row `m`: it holds one of the dimensions (jsonb arrays; absent or empty: no)."""
        return " OR ".join(f"coalesce(m.dimensions -> '{d}', '[]'::jsonb) <> '[]'::jsonb" for d in self.dimensions)


SHAPES = (
    Shape("time", TIME_QUESTION, ("dates", "times")),
    Shape("amount", AMOUNT_QUESTION, ("amounts", "numbers")),
)


def shapes_asked(text: str, config: RecallConfig) -> list[Shape]:
    """The shapes this question has, among those the config boosts."""
    return [s for s in SHAPES if getattr(config, s.parameter) > 1 and s.question.search(text)]


def cause_asked(text: str, config: RecallConfig) -> bool:
    """The question asks why, and the config boosts looking back for the cause."""
    return config.cause_question_boost > 1 and bool(CAUSE_QUESTION.search(text))


def holding(memory_ids: list[int], shapes: list[Shape]) -> dict[str, set[int]]:
    """For each shape, the memories among these that hold its value (one query for all shapes)."""
    found: dict[str, set[int]] = {s.name: set() for s in shapes}
    if not memory_ids or not shapes:
        return found
    columns = ", ".join(f"({s.condition()})" for s in shapes)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT m.id, {columns} FROM {Memory._meta.db_table} m WHERE m.id = ANY(%s)", [memory_ids])
        for memory_id, *holds in cursor.fetchall():
            for shape, held in zip(shapes, holds, strict=True):
                if held:
                    found[shape.name].add(memory_id)
    return found


def shaped_boost(activation: dict[int, float], shapes: list[Shape],
                 config: RecallConfig) -> tuple[dict[int, float], dict[int, dict[str, float]]]:
    """The activation to rank by, and per raised memory its `<name>_boost` components (factors multiply
    when a memory answers two shapes)."""
    found = holding(list(activation), shapes)
    boosts: dict[int, dict[str, float]] = {}
    for shape in shapes:
        factor = getattr(config, shape.parameter)
        for memory_id in found[shape.name]:
            boosts.setdefault(memory_id, {})[f"{shape.name}_boost"] = factor
    ranking = dict(activation)
    for memory_id, components in boosts.items():
        for factor in components.values():
            ranking[memory_id] *= factor
    return ranking, boosts
