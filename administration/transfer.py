"""Export a project or a session, and import an export into a new project (docs/administration.md).

JSON Lines: a header line, then one line per row — sessions, interactions, memories (with the ids of
their source interactions), entities, mentions, edges — each with its id and a `type`. What the
exporter may not see is masked by the one visibility rule (memory/visibility.py: a sensitive memory's
text for viewers and tokens, and the interactions it came from); forgotten memories are left out with
their mentions and edges, and so are interactions that only forgotten memories came from. Derived and
historical rows are not exported: vectors (re-embedded on import), the change log, recall traces,
layout positions.

GraphML (for Gephi, yEd, Neo4j's tools): memories and entities as nodes, edges and mentions as edges,
with their attributes.

Import reads a whole JSON Lines export first and refuses it whole, naming the line and field, on any
error; only then does it write everything in one transaction, with new ids.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from memory.access import Access
from memory.engine.extraction import segment
from memory.engine.projects import project_create
from memory.engine.vector_index import EmbeddingRow, embeddings_copy, space_for
from memory.errors import ValidationFailed
from memory.models import (
    AgentSession,
    Edge,
    EdgeOrigin,
    EdgeStatus,
    Entity,
    EntityMention,
    EntityType,
    Interaction,
    InteractionKind,
    InteractionStatus,
    Memory,
    MemoryKind,
    MemoryStatus,
    Project,
    Relation,
)
from memory.providers import get_embedder
from memory.visibility import (
    SENSITIVE_MASK,
    edge_rationale,
    interaction_mask,
    mask_interaction,
    mask_memory_snapshot,
)

FORMAT_VERSION = 1
EXPORTED = ("session", "interaction", "memory", "entity", "mention", "edge")  # in dependency order
GRAPHML_NS = "http://graphml.graphdrawing.org/xmlns"


@dataclass(frozen=True)
class Field:
    name: str
    kind: type | tuple[type, ...]  # what the JSON value must be
    choices: tuple[str, ...] = ()
    null: bool = False
    ref: str = ""  # the row type an id refers to


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
                    _f("reason", str)),
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


def export_rows(access: Access, session: AgentSession | None = None) -> Iterator[dict]:
    """The export of the project (or one session of it) as the reader may see it, row by row: every row
    that could quote a sensitive memory passes through the visibility rule (memory/visibility.py)."""
    project = access.project
    scope = Q(project=project) if session is None else Q(session=session)
    memories = list(Memory.objects.filter(scope).exclude(status=MemoryStatus.FORGOTTEN)
                    .prefetch_related("sources").order_by("id"))
    kept = {m.pk for m in memories}
    hidden = set() if access.may_see_sensitive else {m.pk for m in memories if m.sensitive}
    hidden_sources = {i.pk for m in memories if m.pk in hidden for i in m.sources.all()}
    forgotten_only = set(Interaction.objects.filter(scope, memories__status=MemoryStatus.FORGOTTEN)
                         .exclude(memories__status__in=[s for s in MemoryStatus.values if s != "forgotten"])
                         .values_list("id", flat=True))
    sessions = AgentSession.objects.filter(project=project) if session is None else [session]
    yield {"type": "export", "version": FORMAT_VERSION, "project": {"slug": project.slug, "name": project.name},
           "session": None if session is None else session.pk, "masked": not access.may_see_sensitive}
    for s in sorted(sessions, key=lambda s: s.pk):
        yield {"type": "session", "id": s.pk, "external_id": s.external_id, "title": s.title, "task": s.task,
               "metadata": s.metadata, "created_at": _moment(s.created_at)}
    for i in Interaction.objects.filter(scope).exclude(pk__any_of=forgotten_only).order_by("id"):
        mask = None if access.may_see_sensitive else interaction_mask(i.pk, i.status, hidden_sources)
        row = {"type": "interaction", "id": i.pk, "session": i.session_id, "kind": i.kind, "content": i.content,
               "metadata": i.metadata, "occurred_at": _moment(i.occurred_at), "idempotency_key": i.idempotency_key,
               "status": i.status, "scores": i.scores, "reason": i.reason}
        yield mask_interaction(row, mask)
    for m in memories:
        row = {"type": "memory", "id": m.pk, "session": m.session_id, "content": m.content, "kind": m.kind,
               "dimensions": m.dimensions, "importance": m.importance, "relevance": m.relevance,
               "novelty": m.novelty, "status": m.status, "sensitive": m.sensitive,
               "occurred_at": _moment(m.occurred_at), "sources": sorted(i.pk for i in m.sources.all())}
        yield mask_memory_snapshot(row) if m.pk in hidden else row
    mentions = list(EntityMention.objects.filter(memory_id__any_of=kept).order_by("id"))
    hidden_names = {mention.entity_id for mention in mentions if mention.memory_id in hidden}
    shown_names = {mention.entity_id for mention in mentions if mention.memory_id not in hidden}
    for e in Entity.objects.filter(pk__any_of={m.entity_id for m in mentions}).order_by("id"):
        masked = e.pk in hidden_names - shown_names  # named only in what the reader may not see
        yield {"type": "entity", "id": e.pk, "name": SENSITIVE_MASK if masked else e.name,
               "normalized_name": f"{SENSITIVE_MASK} {e.pk}" if masked else e.normalized_name, "entity_type": e.type,
               "aliases": [] if masked else e.aliases, "evidence": [] if masked else e.evidence}
    for mention in mentions:
        yield {"type": "mention", "id": mention.pk, "memory": mention.memory_id, "entity": mention.entity_id,
               "surface": SENSITIVE_MASK if mention.memory_id in hidden else mention.surface}
    for e in Edge.objects.filter(source_id__any_of=kept, target_id__any_of=kept).order_by("id"):
        yield {"type": "edge", "id": e.pk, "session": e.session_id, "source": e.source_id, "target": e.target_id,
               "relation": e.relation, "weight": e.weight, "confidence": e.confidence, "origin": e.origin,
               "status": e.status, "needs_review": e.needs_review,
               "rationale": edge_rationale(e.rationale, e.source_id, e.target_id, hidden)}


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


def _checked(line: int, row: Any, seen: dict[str, set[int]]) -> dict:
    if not isinstance(row, dict):
        raise _refused(line, "type", "each line must be a JSON object")
    kind = row.get("type")
    if kind not in FIELDS:
        raise _refused(line, "type", f"unknown row type {kind!r} (expected one of {', '.join(EXPORTED)})")
    if not isinstance(row.get("id"), int) or isinstance(row.get("id"), bool):
        raise _refused(line, "id", "an integer id is required")
    if row["id"] in seen[kind]:
        raise _refused(line, "id", f"{kind} {row['id']} appears twice")
    for spec in FIELDS[kind]:
        if spec.name not in row:
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
        if spec.choices and value not in spec.choices:
            raise _refused(line, spec.name, f"{value!r} is not one of {', '.join(spec.choices)}")
        if spec.ref:
            ids = value if isinstance(value, list) else [value]
            missing = [i for i in ids if i not in seen[spec.ref]]
            if missing:
                raise _refused(line, spec.name, f"refers to {spec.ref} {missing[0]!r}, not defined on an earlier line")
    seen[kind].add(row["id"])
    return row


def import_parse(lines: Iterable[str]) -> list[dict]:
    """Every row of an export, checked (types, choices, references to earlier lines); the first error
    refuses the whole file."""
    rows, seen = [], {kind: set() for kind in FIELDS}
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            row = json.loads(text)
        except ValueError as exc:
            raise _refused(number, "-", f"not JSON ({exc.msg})") from None
        if number == 1:
            if not isinstance(row, dict) or row.get("type") != "export" or row.get("version") != FORMAT_VERSION:
                raise _refused(1, "type", f"not a ContextWeaver export (version {FORMAT_VERSION} header expected)")
            continue
        rows.append(_checked(number, row, seen))
    if not rows and not seen["session"]:
        raise _refused(1, "-", "the export holds no rows")
    return rows


def import_into_new_project(rows: list[dict], *, name: str, slug: str) -> Project:
    """Write checked rows (import_parse) into a new project, in one transaction; memories are re-embedded."""
    new: dict[str, dict[int, int]] = {kind: {} for kind in FIELDS}
    now = timezone.now()
    with transaction.atomic():
        project = project_create(name=name, slug=slug)
        by_kind = {kind: [r for r in rows if r["type"] == kind] for kind in EXPORTED}
        for r in by_kind["session"]:
            s = AgentSession.objects.create(project=project, external_id=r["external_id"], title=r["title"],
                                            task=r["task"], metadata=r["metadata"])
            AgentSession.objects.filter(pk=s.pk).update(created_at=datetime.fromisoformat(r["created_at"]))
            new["session"][r["id"]] = s.pk
        interactions = Interaction.objects.bulk_create(Interaction(
            project=project, session_id=new["session"][r["session"]], kind=r["kind"], content=r["content"],
            metadata=r["metadata"], occurred_at=datetime.fromisoformat(r["occurred_at"]),
            idempotency_key=r["idempotency_key"], status=r["status"], scores=r["scores"], reason=r["reason"],
            processed_at=now) for r in by_kind["interaction"])
        new["interaction"] = {r["id"]: i.pk for r, i in zip(by_kind["interaction"], interactions, strict=True)}
        memories = Memory.objects.bulk_create(Memory(
            project=project, session_id=new["session"][r["session"]], content=r["content"],
            search_text=" ".join(segment(r["content"])), kind=r["kind"], dimensions=r["dimensions"],
            importance=r["importance"], relevance=r["relevance"], novelty=r["novelty"], status=r["status"],
            sensitive=r["sensitive"], occurred_at=datetime.fromisoformat(r["occurred_at"]))
            for r in by_kind["memory"])
        new["memory"] = {r["id"]: m.pk for r, m in zip(by_kind["memory"], memories, strict=True)}
        Memory.sources.through.objects.bulk_create(
            Memory.sources.through(memory_id=new["memory"][r["id"]], interaction_id=new["interaction"][i])
            for r in by_kind["memory"] for i in r["sources"])
        entities = Entity.objects.bulk_create(Entity(
            project=project, name=r["name"], normalized_name=r["normalized_name"], type=r["entity_type"],
            aliases=r["aliases"], evidence=r["evidence"]) for r in by_kind["entity"])
        new["entity"] = {r["id"]: e.pk for r, e in zip(by_kind["entity"], entities, strict=True)}
        EntityMention.objects.bulk_create(EntityMention(
            memory_id=new["memory"][r["memory"]], entity_id=new["entity"][r["entity"]], surface=r["surface"])
            for r in by_kind["mention"])
        Edge.objects.bulk_create(Edge(
            project=project, session_id=None if r["session"] is None else new["session"][r["session"]],
            source_id=new["memory"][r["source"]], target_id=new["memory"][r["target"]], relation=r["relation"],
            weight=r["weight"], confidence=r["confidence"], origin=r["origin"], status=r["status"],
            needs_review=r["needs_review"], rationale=r["rationale"]) for r in by_kind["edge"])
        embedder = get_embedder()
        vectors = embedder.embed([m.content for m in memories]) if memories else []
        embeddings_copy(space_for(embedder), (EmbeddingRow(m.pk, project.pk, m.session_id, v)
                                             for m, v in zip(memories, vectors, strict=True)))
    return project
