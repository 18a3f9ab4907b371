"""After a hard forget: does any text of what was forgotten remain anywhere? (docs/maintenance.md)

Before the forget, `distinctive_strings` picks, per forgotten memory, its longest words and the codes
it holds (phone numbers, "ZX-4471"), and keeps those that nothing else of the project holds: not the
other memories (text, search text, dimensions), not the entities they mention, not a session's title
or task, not a word of the engine's own vocabulary ("conditional" is also a relation). A word the
project still uses elsewhere proves nothing when it is found. A session deleted whole adds the same
strings of each of its interactions that backs no memory (filtered, failed, pending: nothing else
would look for their text), kept only if no interaction of another session holds them either.
After it, `residues_scan` reads every text, array and JSON column of every table that holds rows of
the project (the models of memory, curation and administration, scoped through their path to the
project) and looks for them in every string (JSON values, not keys), case-insensitively: English
words as whole words ("parser" is not found in "configparser"), Chinese words and codes anywhere.
It lists where one is found: table, column and row id, never the string itself (the list would be
a residue of its own).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import ahocorasick
from django.apps import apps
from django.contrib.postgres.fields import ArrayField
from django.db import connection, models

from ...models import AgentSession, Entity, EntityMention, Interaction, Memory, MemoryKind, Project
from ..telling import memory_terms
from .scrub import READ_BATCH, strings_in

SCANNED_APPS = ("memory", "curation", "administration")
PER_MEMORY = 3  # strings per forgotten memory: enough to find a fragment, few enough to scan fast
MAX_STRINGS = 1000
MIN_ASCII_WORD = 5  # "hyndland", "quistberg": shorter English words are shared by chance
MIN_CJK_WORD = 2  # 婚期, 菜市场
CODE_RE = re.compile(r"(?<![\w-])(?=[\w@.+-]*\d)[A-Za-z0-9][\w@.+-]{3,}[A-Za-z0-9](?![\w-])")
CJK_RE = re.compile(r"[\u4e00-\u9fff]")


@dataclass(frozen=True)
class Target:
    table: str
    pk: str
    text_columns: tuple[str, ...]
    json_columns: tuple[str, ...]
    scope_sql: str  # a condition on the project id (one %s)


@dataclass
class ScanResult:
    strings: int
    tables: int
    residues: list[dict] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"strings": self.strings, "tables": self.tables, "residues": self.residues}


def _candidates(text: str) -> list[str]:
    """The words and codes of a text worth looking for, longest first."""
    lowered = text.lower()
    words = {t for t in memory_terms(text) if t in lowered and (
        len(t) >= MIN_CJK_WORD if CJK_RE.search(t) else len(t) >= MIN_ASCII_WORD)}
    codes = {c.lower() for c in CODE_RE.findall(text)}
    return sorted(words | codes, key=lambda s: (-len(s), s))


def distinctive_strings(project: Project, memory_ids: set[int], sessions: Iterable[int] = ()) -> list[str]:
    """Strings of the memories about to be forgotten that nothing else of the project holds: not the
    other memories (their text, search text and dimensions, summaries aside: the cascade rewrites
    those), not the names of entities that stay, not the title or task of a session that stays. Found the
    way the scan will look for them, so whatever the scan finds later was not there for another reason.

    `sessions`: those deleted whole (ForgetFilter.whole_sessions). Their interactions that back no memory
    (filtered, failed, pending) hold text no memory does: their strings are looked for too (up to half of
    MAX_STRINGS), unless an interaction of another session also holds them."""
    sessions = sorted(set(sessions))
    picked: list[str] = []
    for content in Memory.objects.filter(pk__any_of=memory_ids).order_by("id").values_list("content", flat=True):
        picked.extend(_candidates(content)[:PER_MEMORY])
    said = _session_strings(sessions, set(picked))
    picked = list(dict.fromkeys(picked))[:MAX_STRINGS - min(len(said), MAX_STRINGS // 2)]
    said = said[:MAX_STRINGS - len(picked)]
    if said:  # the project's other sessions may say the same ("thanks", a place's name): proves nothing
        others = Interaction.objects.filter(project=project).exclude(session_id__in=sessions)
        found = _Finder(said)
        repeated: set[str] = set()
        for row in others.values_list("content", flat=True).iterator(chunk_size=READ_BATCH):
            repeated |= found.matches(row)
        picked += [s for s in said if s not in repeated]
    if not picked:
        return []
    finder = _Finder(picked)
    others = Memory.objects.filter(project=project).exclude(kind=MemoryKind.SUMMARY).exclude(pk__any_of=memory_ids)
    elsewhere: set[str] = set()
    for row in others.values_list("content", "search_text", "dimensions").iterator(chunk_size=READ_BATCH):
        for value in row:
            for text in strings_in(value):
                elsewhere |= finder.matches(text)
    by_doomed = set(EntityMention.objects.filter(memory_id__any_of=memory_ids).values_list("entity_id", flat=True))
    by_others = set(EntityMention.objects.filter(memory__in=others, entity_id__any_of=by_doomed)
                    .values_list("entity_id", flat=True))
    names = (Entity.objects.filter(project=project).exclude(pk__any_of=by_doomed - by_others)
             .values_list("name", "aliases"))
    staying = AgentSession.objects.filter(project=project).exclude(pk__in=sessions).values_list("title", "task")
    for row in (*names, *staying):
        for text in strings_in(list(row)):
            elsewhere |= finder.matches(text)
    vocabulary = _engine_vocabulary()
    return [s for s in picked if s not in elsewhere and s not in vocabulary]


def _session_strings(sessions: list[int], known: set[str]) -> list[str]:
    """The candidates of the sessions' interactions that back no memory, PER_MEMORY each, in id order,
    without those already picked from the memories."""
    if not sessions:
        return []
    unbacked = Interaction.objects.filter(session_id__in=sessions, memories__isnull=True).order_by("id")
    found: list[str] = []
    for content in unbacked.values_list("content", flat=True).iterator(chunk_size=READ_BATCH):
        found.extend(s for s in _candidates(content)[:PER_MEMORY] if s not in known)
    return list(dict.fromkeys(found))


def _engine_vocabulary() -> set[str]:
    """The choice values of the scanned models (kinds, relations, statuses, roles…): the engine writes
    them into rows of its own ("relation": "conditional"), whatever was forgotten."""
    values = {str(value).lower() for model in apps.get_models() if model._meta.app_label in SCANNED_APPS
              for f in model._meta.concrete_fields for value, _ in (f.choices or [])}
    return values | {word for value in values for word in re.split(r"[^a-z0-9]+", value) if word}


def _project_path(model: type[models.Model]) -> str | None:
    """How the model's rows belong to a project: a condition with one %s for its id, or None."""
    if model is Project:
        return f"{model._meta.pk.column} = %s"
    names = {f.name: f for f in model._meta.concrete_fields}
    if "project" in names and names["project"].related_model is Project:
        return f"{names['project'].column} = %s"
    for fk in model._meta.concrete_fields:
        parent = fk.related_model if fk.is_relation else None
        if parent is not None and any(f.name == "project" for f in parent._meta.concrete_fields):
            parents = f"SELECT {parent._meta.pk.column} FROM {parent._meta.db_table} WHERE project_id = %s"
            return f"{fk.column} IN ({parents})"
    return None


def _is_text(f: models.Field) -> bool:
    return isinstance(f, (models.CharField, models.TextField)) and not f.choices


def scan_targets() -> list[Target]:
    targets = []
    for model in apps.get_models():
        if model._meta.app_label not in SCANNED_APPS or not model._meta.managed or model._meta.proxy:
            continue
        scope = _project_path(model)
        fields = model._meta.concrete_fields
        texts = tuple(f.column for f in fields if _is_text(f) or (isinstance(f, ArrayField) and _is_text(f.base_field)))
        jsons = tuple(f.column for f in fields if isinstance(f, models.JSONField))
        if scope and (texts or jsons):
            targets.append(Target(model._meta.db_table, model._meta.pk.column, texts, jsons, scope))
    return sorted(targets, key=lambda t: t.table)


class _Finder:
    """The strings, found in one pass per text: English words as whole words, the rest anywhere."""

    def __init__(self, strings: list[str]) -> None:
        self.automaton = ahocorasick.Automaton()
        for text in strings:
            self.automaton.add_word(text, text)
        self.automaton.make_automaton()

    def _hits(self, text: str) -> Iterator[str]:
        lowered = text.lower()
        for end, needle in self.automaton.iter(lowered):
            start = end - len(needle) + 1
            if not needle.isascii() or CODE_RE.fullmatch(needle) or (
                    not _wordy(lowered, start - 1) and not _wordy(lowered, end + 1)):
                yield needle

    def found(self, text: str) -> bool:
        return next(self._hits(text), None) is not None

    def matches(self, text: str) -> set[str]:
        return set(self._hits(text))


def _wordy(text: str, at: int) -> bool:
    return 0 <= at < len(text) and (text[at].isalnum() or text[at] == "_")


def _rows(target: Target, project: Project) -> Iterator[tuple]:
    columns = ", ".join((target.pk, *target.text_columns, *target.json_columns))
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {columns} FROM {target.table} WHERE {target.scope_sql} ORDER BY {target.pk}",
                       [project.pk])
        while rows := cursor.fetchmany(READ_BATCH):
            yield from rows


def residues_scan(project: Project, strings: list[str]) -> ScanResult:
    """Where the strings are still found in the project's rows (each table read once)."""
    targets = scan_targets()
    result = ScanResult(strings=len(strings), tables=len(targets))
    if not strings:
        return result
    finder = _Finder(strings)
    for target in targets:
        columns = [(c, False) for c in target.text_columns] + [(c, True) for c in target.json_columns]
        for row in _rows(target, project):
            for (column, as_json), value in zip(columns, row[1:], strict=True):
                if value is not None and any(finder.found(text) for text in strings_in(value, as_json=as_json)):
                    result.residues.append({"table": target.table, "column": column, "row": row[0]})
    return result
