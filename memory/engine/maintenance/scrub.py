"""Redaction for hard forget: find forgotten text in stored rows and replace it, keeping ids.

The needles are the forgotten texts:
- each forgotten memory's (and source interaction's) whole content, and each of its sentences long
  enough to be specific, so an extractive summary or a recall context quoting one sentence is
  caught too; replaced wherever they occur;
- the names of entities that only forgotten memories mentioned (the person, the address...),
  replaced as whole words (any case), e.g. in the query of a recall that asked about them.
Rows are found in SQL (`ILIKE ANY`, over the JSON text for JSON columns: a superset) and rewritten
in Python, string by string, with the marker REDACTED.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db import connection
from django.db.models import Q

from ...models import GraphChange, Interaction, Project, RecallTrace
from ..cues import information_length
from .common import REDACTED
from .extractive import split_sentences

MIN_SENTENCE_NEEDLE = 12  # information length (a CJK character counts 3): shorter sentences are too common
MIN_NAME_NEEDLE = 4  # information length: "Bob" stays, "Quistberg" and "小明" go
MEMORY_CONTENT_FIELDS = ("content",)
MEMORY_DERIVED_FIELDS = ("dimensions",)  # entities, values and keywords extracted from the content
INTERACTION_FIELDS = ("content", "metadata", "reason")


@dataclass
class Needles:
    texts: list[str] = field(default_factory=list)  # replaced as they are
    names: list[str] = field(default_factory=list)  # replaced as whole words, any case

    def add_texts(self, texts: Iterable[str], *, sentences: bool = True) -> None:
        """Whole texts and (optionally) their specific sentences, longest first (so a sentence
        never splits a longer needle it is part of)."""
        found = set(self.texts)
        for text in texts:
            if text and text.strip():
                found.update({text, text.strip()})
                if sentences:
                    found.update(s for s in split_sentences(text) if information_length(s) >= MIN_SENTENCE_NEEDLE)
        self.texts = sorted(found, key=lambda n: (-len(n), n))

    def add_names(self, names: Iterable[str]) -> None:
        found = set(self.names) | {n.strip() for n in names if n and information_length(n.strip()) >= MIN_NAME_NEEDLE}
        self.names = sorted(found, key=lambda n: (-len(n), n))

    def __bool__(self) -> bool:
        return bool(self.texts or self.names)

    def everything(self) -> list[str]:
        return self.texts + self.names

    def redact(self, text: str) -> str:
        for needle in self.texts:
            if needle in text:
                text = text.replace(needle, REDACTED)
        if self.names:
            text = self._names_pattern().sub(REDACTED, text)
        return text

    def _names_pattern(self) -> re.Pattern[str]:
        parts = [rf"(?<!\w){re.escape(n)}(?!\w)" if n.isascii() else re.escape(n) for n in self.names]
        return re.compile("|".join(parts), re.IGNORECASE)


def redact_json(value: Any, needles: Needles) -> Any:
    if isinstance(value, str):
        return needles.redact(value)
    if isinstance(value, list):
        return [redact_json(item, needles) for item in value]
    if isinstance(value, dict):
        return {key: redact_json(item, needles) for key, item in value.items()}
    return value


def like_patterns(needles: list[str], *, as_json: bool = False) -> list[str]:
    """LIKE patterns matching each needle as stored: raw in text columns, JSON-escaped in jsonb::text."""
    patterns = []
    for needle in needles:
        text = json.dumps(needle, ensure_ascii=False)[1:-1] if as_json else needle
        patterns.append("%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%")
    return patterns


def ids_matching(table: str, project: Project, text_columns: tuple[str, ...], json_columns: tuple[str, ...],
                 needles: Needles) -> list[int]:
    """Ids of the project's rows in `table` where any column may hold any needle (one scan)."""
    if not needles:
        return []
    raw, escaped = like_patterns(needles.everything()), like_patterns(needles.everything(), as_json=True)
    tests = [f"{c} ILIKE ANY(%s)" for c in text_columns] + [f"{c}::text ILIKE ANY(%s)" for c in json_columns]
    params: list[Any] = [project.pk] + [raw] * len(text_columns) + [escaped] * len(json_columns)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id FROM {table} WHERE project_id = %s AND ({' OR '.join(tests)})", params)
        return [row[0] for row in cursor.fetchall()]


def traces_scrub(project: Project, needles: Needles, *, reached: set[int] = frozenset()) -> int:
    """Recall traces: the forgotten text leaves query, context, narrative and every JSON column; ids stay.

    A recall that reached a forgotten memory (a seed, an arrival or a returned one) loses its query,
    context and narrative whole, and the context lines of the header and of forgotten memories: the
    question asked about what was forgotten in words of its own ("locker code ZX-4471?")."""
    texts, jsons = ("query", "context", "narrative"), ("seeds", "activations", "ranking", "params", "context_lines")
    columns = texts + jsons
    reaching = set(RecallTrace.objects.filter(project=project).filter(
        Q(touched_ids__overlap=list(reached)) | Q(returned_ids__overlap=list(reached))).values_list("id", flat=True)) \
        if reached else set()
    candidates = reaching | set(ids_matching(RecallTrace._meta.db_table, project, texts, jsons, needles))
    changed = 0
    for trace in RecallTrace.objects.filter(pk__in=candidates).order_by("id"):
        values = {name: redact_json(getattr(trace, name), needles) for name in columns}
        if trace.pk in reaching:
            values.update({name: REDACTED for name in texts if getattr(trace, name)})
            hidden = [line.get("memory_id") is None or line.get("memory_id") in reached
                      for line in values["context_lines"]]
            values["context_lines"] = [{**line, "text": REDACTED} if hide else line
                                       for line, hide in zip(values["context_lines"], hidden, strict=True)]
        if any(values[name] != getattr(trace, name) for name in columns):
            for name, value in values.items():
                setattr(trace, name, value)
            trace.save(update_fields=list(columns))
            changed += 1
    return changed


def _blank_fields(snapshot: Any, content: tuple[str, ...], derived: tuple[str, ...] = ()) -> Any:
    if not isinstance(snapshot, dict):
        return snapshot
    blanked = {**snapshot}
    for name in content:
        if name in blanked and blanked[name] not in (None, "", {}, []):
            blanked[name] = REDACTED
    for name in derived:
        if name in blanked and blanked[name]:
            blanked[name] = {}
    return blanked


BLANKED = {"memory": (MEMORY_CONTENT_FIELDS, MEMORY_DERIVED_FIELDS), "edge": (("rationale",), ()),
           "interaction": (INTERACTION_FIELDS, ())}


def changes_scrub(project: Project, needles: Needles, *, memory_ids: set[int], edge_ids: set[int],
                  interaction_ids: set[int], up_to_id: int) -> int:
    """Change-log snapshots: the content of forgotten objects (in rows up to `up_to_id`, written
    before this forget) is replaced whole, and any occurrence of forgotten text anywhere in
    before/after is replaced in place. Ids stay. Returns how many rows changed."""
    by_object = {"memory": memory_ids, "edge": edge_ids, "interaction": interaction_ids}
    rows: dict[int, GraphChange] = {}
    blank: set[int] = set()
    for object_type, ids in by_object.items():
        if ids:
            for change in GraphChange.objects.filter(project=project, id__lte=up_to_id, object_type=object_type,
                                                     object_id__in=ids):
                rows[change.pk] = change
                blank.add(change.pk)
    matching = ids_matching(GraphChange._meta.db_table, project, (), ("before", "after"), needles)
    for change in GraphChange.objects.filter(pk__in=matching):
        rows.setdefault(change.pk, change)
    changed = 0
    for change in rows.values():
        before, after = change.before, change.after
        if change.pk in blank:
            before, after = (_blank_fields(s, *BLANKED[change.object_type]) for s in (before, after))
        before, after = redact_json(before, needles), redact_json(after, needles)
        if (before, after) != (change.before, change.after):
            change.before, change.after = before, after
            change.save(update_fields=["before", "after"])
            changed += 1
    return changed


def interactions_scrub(project: Project, needles: Needles, *, whole_ids: set[int]) -> dict[int, int]:
    """Source interactions of forgotten memories lose their content and metadata; other interactions
    that back no memory lose the forgotten text they repeat. Interactions backing a surviving memory
    are left alone (that memory still holds what they say). Returns {interaction id: session id}."""
    candidates = set(whole_ids) | set(ids_matching(Interaction._meta.db_table, project, ("content", "reason"),
                                                   ("metadata", "scores"), needles))
    changed = {}
    for interaction in Interaction.objects.filter(pk__in=candidates, memories__isnull=True).order_by("id"):
        values = {"content": needles.redact(interaction.content), "reason": needles.redact(interaction.reason),
                  "metadata": redact_json(interaction.metadata, needles),
                  "scores": redact_json(interaction.scores, needles)}
        if interaction.pk in whole_ids:
            values.update(content=REDACTED, metadata={})
        if any(values[name] != getattr(interaction, name) for name in values):
            for name, value in values.items():
                setattr(interaction, name, value)
            interaction.save(update_fields=list(values))
            changed[interaction.pk] = interaction.session_id
    return changed
