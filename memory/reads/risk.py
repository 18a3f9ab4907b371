"""Why a memory is at risk, as this reader may see it: which memory it depends on changed, how, and through
which edges. The changed memory and its replacement are named by label; a sensitive one's label and the values
quoted from it are masked for who may not see it, and a forgotten one is never quoted."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..engine.risk import risks_of
from ..models import AtRisk, Memory
from ..visibility import SENSITIVE_MASK, memory_mask
from .reader import Reader
from .rows import memory_label, when


def _mask(memory: Memory, reader: Reader) -> str | None:
    return memory_mask(exists=True, status=memory.status, sensitive=memory.sensitive,
                       show_sensitive=reader.may_see_sensitive)


def _label(memory: Memory | None, reader: Reader) -> str | None:
    return None if memory is None else _mask(memory, reader) or memory_label(memory.content)


def _quotable(memory: Memory | None, reader: Reader) -> bool:
    return memory is None or _mask(memory, reader) is None


def risk_row(row: AtRisk, reader: Reader) -> dict[str, Any]:
    quotable = _quotable(row.parent, reader) and _quotable(row.replaced_by, reader)
    mask = SENSITIVE_MASK if row.before or row.after else ""
    return {"parent_id": row.parent_id, "parent_label": _label(row.parent, reader), "parent_status": row.parent.status,
            "change": row.change, "before": row.before if quotable else mask, "after": row.after if quotable else mask,
            "replaced_by_id": row.replaced_by_id, "replaced_by_label": _label(row.replaced_by, reader),
            "relations": list(row.relations), "path": list(row.path), "hops": row.hops, "risk": row.risk,
            "since": when(row.created_at)}


def risk_rows(reader: Reader, memory_ids: Iterable[int]) -> dict[int, list[dict[str, Any]]]:
    """{memory id: why it is at risk, highest risk first} for those of these memories that are (one query)."""
    return {memory_id: [risk_row(row, reader) for row in rows]
            for memory_id, rows in risks_of(list(memory_ids)).items()}
