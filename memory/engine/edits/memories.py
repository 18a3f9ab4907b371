"""People's edits of a memory (sensitive, status, kind): the engine's one writer of them.

Marking a memory sensitive reaches what was written from its text: every summary made from it (and the
summaries of those summaries) is marked too, in the same transaction, each with its own change, so the
summary's text stops reaching viewers, tokens, recall and LLM prompts at the same moment. Unmarking a
memory leaves its summaries as they are: one may quote another sensitive member, and a person can
unmark it on its own. Undoing the mark (curation's act_undo) puts back every memory the mark changed.
"""

from __future__ import annotations

from typing import Any

from ...models import Edge, GraphChange, Memory, MemoryStatus, Relation, RiskChange
from ..changelog import change_record
from ..operations import Op
from ..risk import risk_propagate, risks_follow
from ..snapshots import memory_snapshot

EDITABLE = ("sensitive", "status", "kind", "at_risk")
SETTLED = (MemoryStatus.ARCHIVED, MemoryStatus.SUPERSEDED)  # a memory taken out of use is no longer at risk
MAX_DERIVED_DEPTH = 8  # summaries of summaries; deeper chains are not made by the summariser


def derived_summaries(memory_ids: set[int]) -> list[Memory]:
    """The live summaries written from these memories, directly or through other summaries."""
    found: dict[int, Memory] = {}
    frontier = set(memory_ids)
    for _ in range(MAX_DERIVED_DEPTH):
        targets = set(Edge.objects.filter(source_id__in=frontier, relation=Relation.SUMMARIZES)
                      .values_list("target_id", flat=True)) - found.keys() - memory_ids
        if not targets:
            break
        for summary in (Memory.objects.select_for_update(of=("self",)).select_related("session")
                        .filter(pk__in=targets).exclude(status=MemoryStatus.FORGOTTEN)):
            found[summary.pk] = summary
        frontier = targets
    return sorted(found.values(), key=lambda m: m.pk)


def memory_edit(memory: Memory, *, actor: str, name: str, value: Any) -> list[GraphChange]:
    """Set one editable field of a locked memory and record it; a mark reaches its summaries. The memory's
    own change comes first."""
    if name not in EDITABLE:
        raise ValueError(f"{name!r} is not an editable field of a memory")
    values = {name: value}
    if name == "status" and value in SETTLED and memory.at_risk:
        values["at_risk"] = 0.0  # its flag is settled with it, and an undo puts both back
    if name == "at_risk" and not (isinstance(value, int | float) and 0 <= value <= 1):
        raise ValueError("at_risk is a risk between 0 and 1")
    changes = [_set(memory, actor, values)]
    if name == "status" and value == MemoryStatus.ARCHIVED:
        risk_propagate(memory, RiskChange.ARCHIVED, actor=actor)
    if name == "sensitive" and value:
        changes += [_set(summary, actor, {"sensitive": True})
                    for summary in derived_summaries({memory.pk}) if not summary.sensitive]
    return changes


def memory_restore(memory: Memory, *, actor: str, before: dict[str, Any]) -> GraphChange:
    """Put back the editable fields a change's `before` snapshot recorded (an undo)."""
    return _set(memory, actor, {name: before[name] for name in EDITABLE if name in before})


def _set(memory: Memory, actor: str, values: dict[str, Any]) -> GraphChange:
    before = memory_snapshot(memory)
    changed = [name for name, value in values.items() if getattr(memory, name) != value]
    for name in changed:
        setattr(memory, name, values[name])
    memory.save(update_fields=[*changed, "updated_at"])
    if "at_risk" in changed:
        risks_follow(memory, actor=actor, before_level=before["at_risk"])
    return change_record(project=memory.project, session=memory.session, actor=actor, op=Op.MEMORY_UPDATED,
                         object_type="memory", object_id=memory.pk, before=before, after=memory_snapshot(memory))
