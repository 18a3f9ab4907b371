"""What every maintenance job shares: its report, progress callbacks, dry runs, settings, checks.

Dry runs of jobs that rewrite the graph (decay, merge, forget) run the real code inside a
transaction that is rolled back, so the counts they report are the counts a real run produces
(nothing is committed and no event is published: events leave only after a commit). Jobs whose
real run would call a paid model (summarise, review) count from a plan instead and call nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from ...conf import memory_settings
from ...errors import NotFoundError, ValidationFailed
from ...models import MAX_ID, AgentSession, Entity, Memory, MemoryKind, Project
from ..changelog import change_record

Progress = Callable[[int, int], None]  # (units done, units in total)
REDACTED = "[forgotten]"
MAX_IDS = 10_000


def no_progress(done: int, total: int) -> None:
    """The default callback: callers without a progress bar."""


@dataclass
class JobReport:
    """What a job did (or, in a dry run, would do): counts per kind of change, and the ids touched."""

    job: str
    dry_run: bool
    counts: dict[str, int] = field(default_factory=dict)
    ids: dict[str, list[int]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)  # what the run was asked to do (mode, model...)

    def add(self, name: str, n: int = 1) -> None:
        self.counts[name] = self.counts.get(name, 0) + n

    def touch(self, name: str, *ids: int) -> None:
        self.ids.setdefault(name, []).extend(ids)

    def to_json(self) -> dict[str, Any]:
        return {"job": self.job, "dry_run": self.dry_run, "params": dict(self.params),
                "counts": dict(sorted(self.counts.items())),
                "ids": {k: sorted(set(v)) for k, v in sorted(self.ids.items())}, "notes": list(self.notes)}


class _DryRunRollback(Exception):
    """Raised at the end of a dry run to undo everything it wrote."""


@contextmanager
def rolled_back_if(dry_run: bool) -> Iterator[None]:
    """Run the body for real, or (dry run) inside a transaction that is rolled back at the end."""
    if not dry_run:
        yield
        return
    try:
        with transaction.atomic():
            yield
            raise _DryRunRollback
    except _DryRunRollback:
        pass


def setting(project: Project, name: str) -> Any:
    """A maintenance setting: the project's override (lower-case key) or MEMORY[name]."""
    overrides = (project.settings or {}).get("maintenance", {}) or {}
    return overrides.get(name.lower(), getattr(memory_settings, name))


def batches(items: list[int], size: int) -> Iterable[list[int]]:
    size = max(int(size), 1)
    for start in range(0, len(items), size):
        yield items[start:start + size]


def session_in(project: Project, session_id: int | None) -> AgentSession | None:
    """The project's session with this id (None for None), or a 404-style error."""
    if session_id is None:
        return None
    session = AgentSession.objects.filter(project=project, pk=session_id).first()
    if session is None:
        raise NotFoundError(f"No session {session_id} in project {project.slug!r}.")
    return session




def entity_ref(text: str | None) -> int | str | None:
    """What a person typed to name an entity: an id (ASCII digits) or a name; None when empty."""
    if text and text.isascii() and text.isdigit():
        return int(text)
    return text or None


def entity_in(project: Project, entity: int | str | None, *, may_see_sensitive: bool = True) -> Entity | None:
    """An entity of the project by id or by name (normalised like the extractor does, roughly).

    For a caller who may not see sensitive content, an entity named only in sensitive memories is
    unknown, with the same answer as one that does not exist."""
    if isinstance(entity, str):
        entity = entity_ref(entity)
    if entity is None:
        return None
    queryset = Entity.objects.filter(project=project)
    if not may_see_sensitive:
        queryset = queryset.filter(mentions__memory__sensitive=False).distinct()
    if isinstance(entity, int):
        found = queryset.filter(pk=entity).first() if 0 < entity <= MAX_ID else None
    else:
        name = " ".join(str(entity).casefold().split())
        found = queryset.filter(normalized_name=name).first() or queryset.filter(name__iexact=str(entity)).first()
    if found is None:
        raise ValidationFailed(f"No entity {entity!r} in project {project.slug!r}.", {"entity": ["unknown entity"]})
    return found


def memories_in(project: Project, ids: Iterable[int], *, field_name: str = "memory_ids",
                allow_forgotten: bool = False) -> dict[int, Memory]:
    """The project's memories with these ids; any unknown (or, unless allowed, forgotten) id is a 400."""
    wanted = list(dict.fromkeys(int(i) for i in ids))
    if len(wanted) > MAX_IDS:
        raise ValidationFailed(f"at most {MAX_IDS} ids per call", {field_name: [f"at most {MAX_IDS} ids"]})
    found = {m.pk: m for m in Memory.objects.filter(project=project, pk__in=wanted)}
    unknown = [i for i in wanted if i not in found]
    if unknown:
        listed = ", ".join(map(str, unknown[:20]))
        raise ValidationFailed(f"unknown memory id(s) in project {project.slug!r}: {listed}",
                               {field_name: [f"unknown in this project: {listed}"]})
    if not allow_forgotten:
        gone = [i for i in wanted if found[i].status == "forgotten"]
        if gone:
            listed = ", ".join(map(str, gone[:20]))
            raise ValidationFailed(f"memory id(s) already forgotten: {listed}", {field_name: [f"forgotten: {listed}"]})
    return {i: found[i] for i in wanted}


def kinds_checked(kinds: Iterable[str] | None) -> tuple[str, ...]:
    kinds = tuple(dict.fromkeys(kinds or ()))
    unknown = [k for k in kinds if k not in MemoryKind.values]
    if unknown:
        raise ValidationFailed(f"unknown memory kind(s): {', '.join(unknown)}",
                               {"kinds": [f"use some of {', '.join(MemoryKind.values)}"]})
    return kinds


def audit_record(project: Project, actor: str, report: JobReport, params: dict[str, Any]) -> None:
    """One change-log row per job run: who ran what, with which parameters, and what it changed."""
    if report.dry_run:
        return
    with transaction.atomic():
        change_record(project=project, session=None, actor=actor, op=f"maintenance.{report.job}",
                      object_type="maintenance", object_id=None,
                      after={"params": params, "counts": dict(sorted(report.counts.items()))})
