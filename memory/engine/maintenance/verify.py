"""After a hard forget: does any text of what was forgotten remain anywhere? (docs/maintenance.md)

Before the forget, `distinctive_strings` picks, per forgotten memory, its longest words that nothing
else of the project says (no other memory, no session title or task) and the codes it holds (phone
numbers, "ZX-4471"): a word the project still uses elsewhere proves nothing when it is found.
After it, `residues_scan` looks for each of them, case-insensitively, in every text, array and JSON
column of every table that holds rows of the project (the models of memory, curation and
administration, scoped through their path to the project) and lists where one is found: table,
column and row id, never the string itself (the list would be a residue of its own).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from django.apps import apps
from django.contrib.postgres.fields import ArrayField
from django.db import connection, models

from ...models import AgentSession, Memory, MemoryKind, Project
from ..telling import memory_terms
from .scrub import like_patterns

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


def distinctive_strings(project: Project, memory_ids: set[int]) -> list[str]:
    """Strings of the memories about to be forgotten that no other memory of the project holds."""
    picked: list[str] = []
    for content in Memory.objects.filter(pk__in=memory_ids).order_by("id").values_list("content", flat=True):
        picked.extend(_candidates(content)[:PER_MEMORY])
    picked = list(dict.fromkeys(picked))[:MAX_STRINGS]
    if not picked:
        return []
    others = Memory.objects.filter(project=project).exclude(kind=MemoryKind.SUMMARY).exclude(pk__in=memory_ids)
    sql, params = others.values("id").query.sql_with_params()
    with connection.cursor() as cursor:
        # Words through the full-text index; codes ("zx-4471") by their text: the index splits them.
        cursor.execute(
            f"SELECT s FROM unnest(%s::text[]) AS s WHERE NOT EXISTS (SELECT 1 FROM {Memory._meta.db_table} m "
            f"WHERE m.id IN ({sql}) AND (CASE WHEN s ~ '[0-9]' THEN m.content ILIKE '%%' || s || '%%' "
            "ELSE m.search_vector @@ plainto_tsquery('simple', s) END))",
            [picked, *params])
        unique = {row[0] for row in cursor.fetchall()}
    labels = " ".join(f"{t} {k}" for t, k in AgentSession.objects.filter(project=project)
                      .values_list("title", "task")).lower()
    return [s for s in picked if s in unique and s not in labels]


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


def residues_scan(project: Project, strings: list[str]) -> ScanResult:
    """Where the strings are still found in the project's rows (one statement per table)."""
    targets = scan_targets()
    result = ScanResult(strings=len(strings), tables=len(targets))
    if not strings:
        return result
    raw, escaped = like_patterns(strings), like_patterns(strings, as_json=True)
    with connection.cursor() as cursor:
        for target in targets:
            tests = [(c, f"{c}::text ILIKE ANY(%s)", raw) for c in target.text_columns]
            tests += [(c, f"{c}::text ILIKE ANY(%s)", escaped) for c in target.json_columns]
            flags = ", ".join(test for _, test, _ in tests)
            cursor.execute(
                f"SELECT {target.pk}, {flags} FROM {target.table} WHERE {target.scope_sql} "
                f"AND ({' OR '.join(test for _, test, _ in tests)}) ORDER BY {target.pk}",
                [p for _, _, p in tests] + [project.pk] + [p for _, _, p in tests])
            for row in cursor.fetchall():
                result.residues.extend({"table": target.table, "column": column, "row": row[0]}
                                       for (column, _, _), hit in zip(tests, row[1:], strict=True) if hit)
    return result
