"""Redaction for hard forget: find forgotten text in stored rows and replace it, keeping ids.

The needles are the forgotten texts:
- each forgotten memory's (and source interaction's) whole content, and each of its sentences long
  enough to be specific, so an extractive summary or a recall context quoting one sentence is
  caught too; replaced wherever they occur;
- the names of entities that only forgotten memories mentioned (the person, the address...),
  replaced as whole words (any case), e.g. in the query of a recall that asked about them.
Rows that may hold a needle are found in SQL (`ILIKE ANY`, any case: a superset) when the needles are
few; a hard forget of thousands of memories has tens of thousands of needles, and then the rows are read
once and searched in Python with an Aho-Corasick automaton (all needles in one pass over each string).
The strings that hold one are rewritten with the marker REDACTED; changed rows are written back pipelined.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import ahocorasick
from django.db import connection
from django.db.models import Q

from ...models import GraphChange, Interaction, InteractionStatus, Memory, Project, RecallTrace
from ...models.lookups import id_array
from ..cues import information_length
from .common import REDACTED
from .extractive import split_sentences

MIN_SENTENCE_NEEDLE = 12  # information length (a CJK character counts 3): shorter sentences are too common
MIN_NAME_NEEDLE = 4  # information length: "Bob" stays, "Quistberg" and "小明" go
MEMORY_CONTENT_FIELDS = ("content",)
MEMORY_DERIVED_FIELDS = ("dimensions",)  # entities, values and keywords extracted from the content
INTERACTION_FIELDS = ("content", "metadata", "reason")


def _json_escaped(text: str) -> str:
    """A string as it appears inside JSON text (quotes, backslashes and control characters escaped, the
    rest as it is, as both json.dumps and PostgreSQL's jsonb output write it)."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


def _automaton(words: Iterable[tuple[str, str]]) -> ahocorasick.Automaton | None:
    automaton = ahocorasick.Automaton()
    for key, value in words:
        automaton.add_word(key, value)
    if len(automaton) == 0:
        return None
    automaton.make_automaton()
    return automaton


@dataclass
class Needles:
    texts: list[str] = field(default_factory=list)  # replaced as they are
    names: list[str] = field(default_factory=list)  # replaced as whole words, any case
    # Short whole texts ("ok", "look at it"): replaced only where they are a whole string, since inside
    # other text they are everyone's words ("lo[forgotten]ing").
    whole: set[str] = field(default_factory=set)
    _index: tuple | None = field(default=None, repr=False, compare=False)

    def add_texts(self, texts: Iterable[str], *, sentences: bool = True, short: bool = True) -> None:
        """Whole texts and (optionally) their specific sentences, longest first (so a sentence
        never splits a longer needle it is part of). Short texts are replaced where they are a whole
        string, or (`short=False`) not looked for at all."""
        found = set(self.texts)
        for text in texts:
            if not (text and text.strip()):
                continue
            if information_length(text.strip()) < MIN_SENTENCE_NEEDLE:
                if short:
                    self.whole.add(text.strip())
                continue
            found.update({text, text.strip()})
            if sentences:
                found.update(s for s in split_sentences(text) if information_length(s) >= MIN_SENTENCE_NEEDLE)
        self.texts = sorted(found, key=lambda n: (-len(n), n))
        self._index = None

    def add_names(self, names: Iterable[str]) -> None:
        found = set(self.names) | {n.strip() for n in names if n and information_length(n.strip()) >= MIN_NAME_NEEDLE}
        self.names = sorted(found, key=lambda n: (-len(n), n))
        self._index = None

    def __bool__(self) -> bool:
        return bool(self.texts or self.names or self.whole)

    def _built(self) -> tuple:
        """(texts as they are, everything folded to lower case, the names' pattern, everything as written
        inside JSON text and folded), built once per change."""
        if self._index is None:
            exact = _automaton((t, t) for t in self.texts)
            folded = _automaton((n.lower(), n) for n in self.texts + self.names if n.lower())
            parts = [rf"(?<!\w){re.escape(n)}(?!\w)" if n.isascii() else re.escape(n) for n in self.names]
            in_json = _automaton([(_json_escaped(n).lower(), n) for n in self.texts + self.names if n.lower()]
                                 + [(f'"{_json_escaped(w).lower()}"', w) for w in self.whole])
            self._index = (exact, folded, re.compile("|".join(parts), re.IGNORECASE) if parts else None, in_json)
        return self._index

    def found_in(self, text: str) -> bool:
        """Whether the text may hold a needle (any case: a superset of what `redact` replaces)."""
        if not text:
            return False
        folded = self._built()[1]
        return text.strip() in self.whole or (folded is not None and next(folded.iter(text.lower()), None) is not None)

    def found_in_json(self, raw: str) -> bool:
        """The same for a JSON document as the server writes it (a superset again: keys are searched too),
        without parsing it: a hard forget searches every change row of the project."""
        in_json = self._built()[3]
        return bool(raw) and in_json is not None and next(in_json.iter(raw.lower()), None) is not None

    def redact(self, text: str) -> str:
        if not text:
            return text
        if text.strip() in self.whole:
            return REDACTED
        exact, _, names, _ = self._built()
        if exact is not None:
            for needle in sorted({n for _, n in exact.iter(text)}, key=lambda n: (-len(n), n)):
                text = text.replace(needle, REDACTED)
        if names is not None and self.found_in(text):
            text = names.sub(REDACTED, text)
        return text


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
        text = _json_escaped(needle) if as_json else needle
        patterns.append("%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%")
    return patterns


READ_BATCH = 2000  # rows per fetch when the needles are searched here


def rows_update(model: type, fields: list[str], objects: list) -> None:
    """Write these fields of the objects (anything with `pk` and the fields' attributes) back in one
    UPDATE from one array per column (Django's bulk_update builds a CASE per field and row; an UPDATE
    per row costs a round trip's work per row)."""
    if not objects:
        return
    columns = [model._meta.get_field(name) for name in fields]
    pk = model._meta.pk
    names = ", ".join(["pk", *(c.column for c in columns)])
    arrays = ", ".join([f"%s::{pk.db_type(connection)}[]", *(f"%s::{c.db_type(connection)}[]" for c in columns)])
    sql = (f"UPDATE {model._meta.db_table} t SET {', '.join(f'{c.column} = v.{c.column}' for c in columns)} "
           f"FROM unnest({arrays}) AS v({names}) WHERE t.{pk.column} = v.pk")
    objects = sorted(objects, key=lambda obj: obj.pk)  # the order of id_array's literal
    values = [id_array(obj.pk for obj in objects)]
    values += [[c.get_db_prep_value(getattr(obj, c.attname), connection) for obj in objects] for c in columns]
    with connection.cursor() as cursor:
        cursor.execute(sql, values)


def rows_redact(model: type, fields: tuple[str, ...], ids: Iterable[int], needles: Needles, *,
                whole: set[int] = frozenset()) -> set[int]:
    """Read these rows' fields, replace the forgotten text in them (each whole, if its row is in `whole`
    and the field holds anything) and write back the rows that changed; returns their ids."""
    rows = []
    for pk, *values in model.objects.filter(pk__any_of=ids).values_list("pk", *fields):
        redacted = [REDACTED if pk in whole and value else redact_json(value, needles) for value in values]
        if redacted != values:
            rows.append(SimpleNamespace(pk=pk, **dict(zip(fields, redacted, strict=True))))
    rows_update(model, list(fields), rows)
    return {row.pk for row in rows}


def strings_in(value: Any, *, as_json: bool = False) -> Iterator[str]:
    """Every string a column value holds: a text as it is; for JSON (read as its text, as Django's
    cursor returns it) the string values, not the keys."""
    if as_json and isinstance(value, str):
        value = json.loads(value)
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings_in(item)


SQL_NEEDLES_MAX = 200  # up to this many needles the server filters the rows; beyond, Python does (one pass)


def ids_matching(table: str, project: Project, text_columns: tuple[str, ...], json_columns: tuple[str, ...],
                 needles: Needles, *, where: str = "") -> list[int]:
    """Ids of the project's rows in `table` (narrowed by `where`, an SQL condition) where any column may
    hold any needle. A forget of a few memories has few needles: `ILIKE ANY` in the server, which reads
    the rows where they are. Thousands of needles would make that one comparison per needle and row, so
    the rows are then read in batches and searched here, all needles in one pass (Aho-Corasick)."""
    if not needles:
        return []
    scope = f"project_id = %s {f'AND ({where})' if where else ''}"
    words = needles.texts + needles.names + sorted(needles.whole)
    with connection.cursor() as cursor:
        if len(words) <= SQL_NEEDLES_MAX:
            raw, escaped = like_patterns(words), like_patterns(words, as_json=True)
            tests = [f"{c} ILIKE ANY(%s)" for c in text_columns] + [f"{c}::text ILIKE ANY(%s)" for c in json_columns]
            cursor.execute(f"SELECT id FROM {table} WHERE {scope} AND ({' OR '.join(tests)})",
                           [project.pk] + [raw] * len(text_columns) + [escaped] * len(json_columns))
            return [row[0] for row in cursor.fetchall()]
        cursor.execute(f"SELECT {', '.join(('id', *text_columns, *json_columns))} FROM {table} WHERE {scope}",
                       [project.pk])
        found = []
        while rows := cursor.fetchmany(READ_BATCH):
            for row in rows:
                texts, jsons = row[1:1 + len(text_columns)], row[1 + len(text_columns):]
                if any(needles.found_in(t) for t in texts if t) or any(
                        needles.found_in_json(value) if isinstance(value, str) else
                        any(needles.found_in(s) for s in strings_in(value)) for value in jsons if value):
                    found.append(row[0])
        return found


def traces_scrub(project: Project, needles: Needles, *, reached: set[int] = frozenset()) -> int:
    """Recall traces: the forgotten text leaves query, context, narrative and every JSON column; ids stay.

    A recall that reached a forgotten memory (a seed, an arrival or a returned one) loses its query,
    context and narrative whole, and the context lines of the header and of forgotten memories: the
    question asked about what was forgotten in words of its own ("locker code ZX-4471?")."""
    texts, jsons = ("query", "context", "narrative"), ("seeds", "activations", "ranking", "params", "context_lines")
    columns = texts + jsons
    reaching = set()
    if reached:  # one array parameter (the ORM's `overlap` would build an expression per id)
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT id FROM {RecallTrace._meta.db_table} WHERE project_id = %s "
                           "AND (touched_ids && %s::bigint[] OR returned_ids && %s::bigint[])",
                           [project.pk, id_array(reached), id_array(reached)])
            reaching = {row[0] for row in cursor.fetchall()}
    candidates = reaching | set(ids_matching(RecallTrace._meta.db_table, project, texts, jsons, needles))
    changed = []
    for trace in RecallTrace.objects.filter(pk__any_of=candidates).order_by("id"):
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
            changed.append(trace)
    rows_update(RecallTrace, list(columns), changed)
    return len(changed)


BLANKED = {"memory": (MEMORY_CONTENT_FIELDS, MEMORY_DERIVED_FIELDS), "edge": (("rationale",), ()),
           "interaction": ((*INTERACTION_FIELDS, "error"), ()),
           "session": (("title", "task", "external_id"), ("metadata",))}
EMPTY_JSON = "('null', '\"\"', '{}', '[]')"  # jsonb values with nothing to blank (None, "", {}, [])


def _blanked_sql(column: str, content: tuple[str, ...], derived: tuple[str, ...]) -> str:
    """A snapshot column (jsonb) with its content fields replaced by REDACTED (the %s parameters, one per
    content field) and its derived fields emptied, where they hold anything; other values unchanged."""
    parts = [f"'{name}', CASE WHEN {column}->'{name}' NOT IN {EMPTY_JSON} THEN to_jsonb(%s::text) END"
             for name in content]
    parts += [f"'{name}', CASE WHEN {column}->'{name}' NOT IN {EMPTY_JSON[:-1]}, 'false', '0') "
              f"THEN '{{}}'::jsonb END" for name in derived]
    return (f"CASE WHEN jsonb_typeof({column}) = 'object' "
            f"THEN {column} || jsonb_strip_nulls(jsonb_build_object({', '.join(parts)})) ELSE {column} END")


def _change_rows_about(project: Project, objects: dict[str, set[int]], up_to_id: int) -> dict[str, list[int]]:
    """Ids of the change rows (up to `up_to_id`) about these objects, per object type. Read as three small
    columns and matched here: `object_id = ANY(ten thousand ids)` is a linear search per row, and no
    index holds object ids."""
    found: dict[str, list[int]] = {object_type: [] for object_type in objects}
    if not objects:
        return found
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id, object_type, object_id FROM {GraphChange._meta.db_table} "
                       "WHERE project_id = %s AND id <= %s AND object_type = ANY(%s)",
                       [project.pk, up_to_id, sorted(objects)])
        for change_id, object_type, object_id in cursor.fetchall():
            if object_id in objects[object_type]:
                found[object_type].append(change_id)
    return found


def _blank(object_type: str, change_ids: list[int]) -> set[int]:
    """The content of the forgotten object leaves these change rows, in one UPDATE built by the server:
    a hard forget of 10,000 memories blanks tens of thousands of rows. Returns the ids changed."""
    content, derived = BLANKED[object_type]
    table = GraphChange._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH blanked AS (SELECT id, {_blanked_sql('before', content, derived)} AS before, "
            f"{_blanked_sql('after', content, derived)} AS after FROM {table} WHERE id = ANY(%s::bigint[])) "
            f"UPDATE {table} g SET before = b.before, after = b.after FROM blanked b WHERE g.id = b.id "
            f"AND (g.before IS DISTINCT FROM b.before OR g.after IS DISTINCT FROM b.after) RETURNING g.id",
            [REDACTED] * (2 * len(content)) + [id_array(change_ids)])
        return {row[0] for row in cursor.fetchall()}


def changes_scrub(project: Project, needles: Needles, *, memory_ids: set[int], edge_ids: set[int],
                  interaction_ids: set[int], up_to_id: int, session_ids: set[int] = frozenset()) -> int:
    """Change-log snapshots: the content of forgotten objects (in rows up to `up_to_id`, written
    before this forget; a deleted session's title and task too) is replaced whole, and then any
    occurrence of forgotten text anywhere in before/after is replaced in place. Ids stay. Returns how
    many rows changed."""
    objects = {kind: ids for kind, ids in {"memory": memory_ids, "edge": edge_ids, "interaction": interaction_ids,
                                           "session": session_ids}.items() if ids}
    changed: set[int] = set()
    for object_type, change_ids in _change_rows_about(project, objects, up_to_id).items():
        if change_ids:
            changed |= _blank(object_type, change_ids)
    matching = ids_matching(GraphChange._meta.db_table, project, (), ("before", "after"), needles)
    return len(changed | rows_redact(GraphChange, ("before", "after"), matching, needles))


def interactions_scrub(project: Project, needles: Needles, *, whole_ids: set[int],
                       repeats: Iterable[str] = ()) -> set[int]:
    """Source interactions of forgotten memories lose their content and metadata; so does any other
    interaction backing no memory whose whole content is one of `repeats` (the forgotten memories' and
    sources' texts: the same turn sent again, filtered as a repeat, failed or still pending), and one of
    those still pending or failed is settled as filtered (reason REDACTED): processed later, it would make
    the forgotten memory again, or one of the marker. Other interactions that back no memory lose the
    forgotten text they repeat. Interactions backing a surviving memory are left alone (that memory still
    holds what they say). Returns the ids of those changed.

    The sources are emptied first, in one UPDATE (ten thousand of them in a large forget); only the rows
    that still hold forgotten text afterwards (in any column) are read and rewritten here."""
    table, sources = Interaction._meta.db_table, Memory.sources.through._meta.db_table
    backing_none = f"NOT EXISTS (SELECT 1 FROM {sources} s WHERE s.interaction_id = {table}.id)"
    changed: set[int] = set()
    repeats = sorted({text.strip() for text in repeats if text and text.strip()})
    with connection.cursor() as cursor:
        if repeats:  # joined on the texts (hashed), not `= ANY(array)`: one linear search per row
            cursor.execute(f"SELECT {table}.id FROM {table} JOIN unnest(%s::text[]) AS r(text) "
                           f"ON btrim({table}.content) = r.text WHERE {table}.project_id = %s AND {backing_none}",
                           [repeats, project.pk])
            copies = {row[0] for row in cursor.fetchall()}
            cursor.execute(f"UPDATE {table} SET status = %s, reason = %s, error = '', processed_at = now() "
                           f"WHERE id = ANY(%s::bigint[]) AND status IN (%s, %s) RETURNING id",
                           [InteractionStatus.FILTERED, REDACTED, id_array(copies), InteractionStatus.PENDING,
                            InteractionStatus.FAILED])
            changed = {row[0] for row in cursor.fetchall()}
            whole_ids = set(whole_ids) | copies
        if whole_ids:
            cursor.execute(f"UPDATE {table} SET content = %s, metadata = '{{}}'::jsonb WHERE id = ANY(%s::bigint[]) "
                           f"AND {backing_none} AND (content <> %s OR metadata <> '{{}}'::jsonb) RETURNING id",
                           [REDACTED, id_array(whole_ids), REDACTED])
            changed |= {row[0] for row in cursor.fetchall()}
    candidates = ids_matching(table, project, ("content", "reason"), ("metadata", "scores"), needles,
                              where=backing_none)
    return changed | rows_redact(Interaction, ("content", "reason", "metadata", "scores"), candidates, needles)


# Free text of other apps that may quote memories (a curator's reason for an act), with the fields that
# say which object the row is about; each app registers its own (in its AppConfig.ready), so the engine
# imports none of theirs.
@dataclass(frozen=True)
class FreeText:
    model: type
    fields: tuple[str, ...]
    object_type_field: str = "object_type"
    object_id_field: str = "object_id"


FREE_TEXT: list[FreeText] = []


def free_text_register(entry: FreeText) -> None:
    if entry not in FREE_TEXT:
        FREE_TEXT.append(entry)


def free_text_scrub(project: Project, needles: Needles, *, gone: dict[str, set[int]]) -> int:
    """Registered free text: a row about a forgotten object (`gone`: object type → ids) loses it whole
    (a reason words what it judged in its own way); any other row loses the forgotten text it quotes.
    Returns the rows changed."""
    changed = 0
    for entry in FREE_TEXT:
        model, fields = entry.model, entry.fields
        about = Q()
        for object_type, ids in gone.items():
            if ids:
                about |= Q(**{entry.object_type_field: object_type, f"{entry.object_id_field}__any_of": ids})
        rows_about = model.objects.filter(project=project).filter(about) if about else model.objects.none()
        whole = set(rows_about.values_list("pk", flat=True))
        columns = tuple(model._meta.get_field(name).column for name in fields)
        candidates = whole | set(ids_matching(model._meta.db_table, project, columns, (), needles))
        changed += len(rows_redact(model, fields, candidates, needles, whole=whole))
    return changed
