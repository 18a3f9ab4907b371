"""Export a project or a session, and import an export into a new project (docs/administration.md).

JSON Lines: a header line, then one line per row — sessions, interactions, memories (with the ids of
their source interactions), entities, mentions, edges — each with its id and a `type`. The rows come
from the masked read layer (memory/reads/export.py): what the exporter may not see is masked there, and
forgotten memories are left out. Derived and historical rows are not exported: vectors (re-embedded
on import), the change log, recall traces, layout positions.

GraphML (for Gephi, yEd, Neo4j's tools): memories and entities as nodes, edges and mentions as edges,
with their attributes.

Import reads a whole JSON Lines export first and refuses it whole, naming the line and field, on any
error, and on anything the API would refuse (nesting, NUL characters, lone surrogates, content and
metadata over their limits); only then does it write everything in one transaction, with new ids.
"""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from rest_framework.utils.json import strict_constant

from contextweaver_site.http.parsers import json_problems
from memory.api.serializers import SessionInput
from memory.conf import memory_settings
from memory.engine.ingest import EXTERNAL_ID_MAX, IDEMPOTENCY_KEY_MAX, metadata_problem
from memory.engine.projects_load import LOADED, project_load
from memory.errors import ValidationFailed
from memory.models import (
    EdgeOrigin,
    EdgeStatus,
    Entity,
    EntityMention,
    EntityType,
    InteractionKind,
    InteractionStatus,
    MemoryKind,
    MemoryStatus,
    Project,
    Relation,
)
from memory.reads.export import FORMAT_VERSION

EXPORTED = LOADED  # in dependency order
GRAPHML_NS = "http://graphml.graphdrawing.org/xmlns"


@dataclass(frozen=True)
class Field:
    name: str
    kind: type | tuple[type, ...]  # what the JSON value must be
    choices: tuple[str, ...] = ()
    null: bool = False
    ref: str = ""  # the row type an id refers to
    default: Any = None  # when given, the field may be left out (files written before it was exported)


def _f(name: str, kind: Any, **extra: Any) -> Field:
    return Field(name, kind, **extra)


NUMBER = (int, float)
FIELDS: dict[str, tuple[Field, ...]] = {
    "session": (_f("external_id", str), _f("title", str), _f("task", str), _f("metadata", dict),
                _f("created_at", datetime)),
    "interaction": (_f("session", int, ref="session"), _f("kind", str, choices=tuple(InteractionKind.values)),
                    _f("content", str), _f("metadata", dict), _f("occurred_at", datetime),
                    _f("idempotency_key", str, null=True),
                    _f("status", str, choices=tuple(InteractionStatus.values)), _f("scores", dict),
                    _f("reason", str), _f("external_id", str, default="")),
    "memory": (_f("session", int, ref="session"), _f("content", str), _f("kind", str, choices=tuple(MemoryKind.values)),
               _f("dimensions", dict), _f("importance", NUMBER), _f("relevance", NUMBER), _f("novelty", NUMBER),
               _f("status", str, choices=tuple(MemoryStatus.values)), _f("sensitive", bool),
               _f("occurred_at", datetime), _f("sources", list, ref="interaction")),
    "entity": (_f("name", str), _f("normalized_name", str),
               _f("entity_type", str, choices=tuple(EntityType.values)),
               _f("aliases", list), _f("evidence", list)),
    "mention": (_f("memory", int, ref="memory"), _f("entity", int, ref="entity"), _f("surface", str)),
    "edge": (_f("session", int, null=True, ref="session"), _f("source", int, ref="memory"),
             _f("target", int, ref="memory"), _f("relation", str, choices=tuple(Relation.values)),
             _f("weight", NUMBER), _f("confidence", NUMBER), _f("origin", str, choices=tuple(EdgeOrigin.values)),
             _f("status", str, choices=tuple(EdgeStatus.values)), _f("needs_review", bool), _f("rationale", str)),
}


def _moment(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


# --- export --------------------------------------------------------------------------------------------


def export_jsonl(rows: Iterable[dict]) -> Iterator[str]:
    for row in rows:
        yield json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n"


def export_graphml(rows: Iterable[dict]) -> str:
    """Memories and entities as nodes; edges and mentions as edges; every attribute declared as GraphML wants."""
    keys = {("node", "label"): "string", ("node", "type"): "string", ("node", "kind"): "string",
            ("node", "status"): "string", ("node", "session"): "long", ("node", "importance"): "double",
            ("node", "sensitive"): "boolean", ("node", "occurred_at"): "string", ("node", "entity_type"): "string",
            ("edge", "relation"): "string", ("edge", "weight"): "double", ("edge", "confidence"): "double",
            ("edge", "origin"): "string", ("edge", "status"): "string", ("edge", "rationale"): "string"}
    root = ET.Element("graphml", xmlns=GRAPHML_NS)
    for (domain, name), kind in keys.items():
        ET.SubElement(root, "key", {"id": f"{domain[0]}_{name}", "for": domain, "attr.name": name, "attr.type": kind})
    graph = ET.SubElement(root, "graph", id="contextweaver", edgedefault="directed")

    def element(tag: str, attrs: dict, data: dict) -> None:
        node = ET.SubElement(graph, tag, attrs)
        for name, value in data.items():
            if value is not None:
                text = str(value).lower() if isinstance(value, bool) else str(value)
                ET.SubElement(node, "data", key=f"{tag[0]}_{name}").text = text

    for row in rows:
        kind = row["type"]
        if kind == "memory":
            element("node", {"id": f"m{row['id']}"}, {
                "label": row["content"], "type": "memory", "kind": row["kind"], "status": row["status"],
                "session": row["session"], "importance": row["importance"], "sensitive": row["sensitive"],
                "occurred_at": row["occurred_at"]})
        elif kind == "entity":
            element("node", {"id": f"e{row['id']}"}, {"label": row["name"], "type": "entity",
                                                      "entity_type": row["entity_type"]})
        elif kind == "edge":
            element("edge", {"id": f"r{row['id']}", "source": f"m{row['source']}", "target": f"m{row['target']}"}, {
                "relation": row["relation"], "weight": row["weight"], "confidence": row["confidence"],
                "origin": row["origin"], "status": row["status"], "rationale": row["rationale"]})
        elif kind == "mention":
            element("edge", {"id": f"n{row['id']}", "source": f"m{row['memory']}", "target": f"e{row['entity']}"},
                    {"relation": "mentions"})
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# --- import --------------------------------------------------------------------------------------------


def _refused(line: int, field: str, message: str) -> ValidationFailed:
    return ValidationFailed(f"line {line}, field {field!r}: {message}; nothing was imported",
                            {"line": [str(line)], "field": [field]})


# What the API would take, the import takes: the longest text of each field (characters) where the API
# writes it (memory/api/serializers.py SessionInput, the idempotency key) or else its column holds.
_SESSION_INPUT = SessionInput().fields
TEXT_LIMITS: dict[str, dict[str, int]] = {
    "session": {name: _SESSION_INPUT[name].max_length for name in ("external_id", "title", "task")},
    "interaction": {"idempotency_key": IDEMPOTENCY_KEY_MAX, "external_id": EXTERNAL_ID_MAX},
    "entity": {name: Entity._meta.get_field(name).max_length for name in ("name", "normalized_name")},
    "mention": {"surface": EntityMention._meta.get_field("surface").max_length},
}
CONTENT_KINDS = ("interaction", "memory")  # content at most MAX_CONTENT_BYTES (a memory is part of one)
METADATA_KINDS = ("session", "interaction")  # metadata as the API bounds it (size and depth)


def _over_limit(kind: str, row: dict) -> tuple[str, str] | None:
    """The first field of a row (of checked types) that the API would refuse, and why."""
    for name, limit in TEXT_LIMITS.get(kind, {}).items():
        if row[name] is not None and len(row[name]) > limit:
            return name, f"is {len(row[name])} characters; the limit is {limit}"
    if kind in CONTENT_KINDS:
        size, limit = len(row["content"].encode("utf-8")), memory_settings.MAX_CONTENT_BYTES
        if size > limit:
            return "content", f"is {size} bytes; the limit is {limit} bytes (CW_MAX_CONTENT_BYTES)"
    if kind in METADATA_KINDS:
        problem = metadata_problem(row["metadata"])
        if problem:
            return "metadata", problem
    return None


def _checked(line: int, row: Any, seen: dict[str, set[int]]) -> dict:
    if not isinstance(row, dict):
        raise _refused(line, "type", "each line must be a JSON object")
    kind = row.get("type")
    if not isinstance(kind, str) or kind not in FIELDS:
        raise _refused(line, "type", f"unknown row type {kind!r} (expected one of {', '.join(EXPORTED)})")
    if not isinstance(row.get("id"), int) or isinstance(row.get("id"), bool):
        raise _refused(line, "id", "an integer id is required")
    if row["id"] in seen[kind]:
        raise _refused(line, "id", f"{kind} {row['id']} appears twice")
    for spec in FIELDS[kind]:
        if spec.name not in row and spec.default is not None:
            row[spec.name] = spec.default
        elif spec.name not in row:
            raise _refused(line, spec.name, "missing")
        value = row[spec.name]
        if value is None and spec.null:
            continue
        expected = str if spec.kind is datetime else spec.kind
        if not isinstance(value, expected) or (isinstance(value, bool) and spec.kind is not bool):
            raise _refused(line, spec.name, f"expected {getattr(spec.kind, '__name__', 'a number')}")
        if spec.kind is datetime:
            try:
                datetime.fromisoformat(value)
            except ValueError:
                raise _refused(line, spec.name, "not an ISO 8601 date and time") from None
        if spec.kind is NUMBER and not _finite(value):
            raise _refused(line, spec.name, "expected a finite number")
        if spec.choices and value not in spec.choices:
            raise _refused(line, spec.name, f"{value!r} is not one of {', '.join(spec.choices)}")
        if spec.ref:
            ids = value if isinstance(value, list) else [value]
            if any(not isinstance(i, int) or isinstance(i, bool) for i in ids):
                raise _refused(line, spec.name, f"expected {spec.ref} ids (integers)")
            missing = [i for i in ids if i not in seen[spec.ref]]
            if missing:
                raise _refused(line, spec.name, f"refers to {spec.ref} {missing[0]!r}, not defined on an earlier line")
    over = _over_limit(kind, row)
    if over:
        raise _refused(line, *over)
    seen[kind].add(row["id"])
    return row


def _finite(value: int | float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an integer beyond any float
        return False


def _finite_float(text: str) -> float:
    """A JSON number as a float, refused when out of range (1e999): jsonb could not store it."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is out of range")
    return value


def import_parse(lines: Iterable[str]) -> list[dict]:
    """Every row of an export, checked (types, choices, references to earlier lines, and the API's limits:
    nesting, text PostgreSQL can store, content and metadata sizes); the first error refuses the whole file."""
    rows, seen = [], {kind: set() for kind in FIELDS}
    depth = memory_settings.MAX_JSON_DEPTH
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            row = json.loads(text, parse_constant=strict_constant, parse_float=_finite_float)
        except RecursionError:
            raise _refused(number, "-", f"nested too deeply (at most {depth} levels)") from None
        except ValueError as exc:
            raise _refused(number, "-", f"not JSON ({getattr(exc, 'msg', exc)})") from None
        problems = json_problems(row, max_depth=depth)  # the API parser's own checks (http/parsers.py)
        if problems:
            field, messages = min(problems.items())
            raise _refused(number, "-" if field == "non_field_errors" else field, messages[0])
        if number == 1:
            if not isinstance(row, dict) or row.get("type") != "export" or row.get("version") != FORMAT_VERSION:
                raise _refused(1, "type", f"not a ContextWeaver export (version {FORMAT_VERSION} header expected)")
            continue
        rows.append(_checked(number, row, seen))
    if not rows and not seen["session"]:
        raise _refused(1, "-", "the export holds no rows")
    return rows


def import_into_new_project(rows: list[dict], *, name: str, slug: str) -> Project:
    """Write checked rows (import_parse) into a new project, in one transaction; memories are re-embedded.
    The engine writes them (engine/projects_load.py)."""
    return project_load(rows, name=name, slug=slug)
