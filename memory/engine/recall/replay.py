"""Stored recalls read back for replay: the list, one trace step by step, and two traces compared.

Reads only. A trace is self-contained: it shows the text each returned memory had when it ran (not
today's), the change-log position it ran at, and how many changes came after to the memories it used
and their edges. What the graph looks like now is added beside it (does each memory and edge still
exist, with which status), so the page can draw memories that are gone as ghosts. Every text goes
through the visibility rule (memory/visibility.py, `memory_mask`): a forgotten memory's text is shown
to nobody, a sensitive one's only to readers who may see sensitive content, and the query, context and
narrative only when every memory the recall touched may be shown.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from django.contrib.postgres.expressions import ArraySubquery
from django.db import connection
from django.db.models import BooleanField, Q, QuerySet
from django.db.models.expressions import RawSQL

from ...models import Edge, EdgeOrigin, GraphChange, Interaction, Memory, Project, RecallTrace
from ...visibility import memory_mask, recall_query_hidden_sql

PREVIEW_CHARS = 160  # of each memory's text in the replay's node list (the ranking keeps the whole text)


def recall_list(*, project: Project, show_sensitive: bool, session_id: int | None = None, actor: str = "",
                text: str = "", memory_id: int | None = None, edge_id: int | None = None) -> QuerySet[RecallTrace]:
    """The project's stored recalls, newest first, each annotated `query_hidden` for this reader.

    `session_id`: recalls scoped to that session or returning one of its memories. `text` searches the
    queries this reader may see, so a search cannot reveal a hidden one by what it matches. `memory_id`:
    recalls that returned it (the memory panel); `edge_id`: recalls it carried activation in (the edge panel).
    """
    hidden = RawSQL(recall_query_hidden_sql(show_sensitive), [], output_field=BooleanField())
    queryset = RecallTrace.objects.filter(project=project).annotate(query_hidden=hidden)
    if session_id is not None:
        its_memories = ArraySubquery(Memory.objects.filter(session_id=session_id).values("id"))
        queryset = queryset.filter(Q(session_id=session_id) | Q(returned_ids__overlap=its_memories))
    if actor:
        queryset = queryset.filter(actor=actor)
    if text:
        queryset = queryset.filter(query__icontains=text, query_hidden=False)
    if memory_id is not None:
        queryset = queryset.filter(returned_ids__contains=[memory_id])
    if edge_id is not None:
        queryset = queryset.filter(RawSQL("memory_recalltrace.activations @> %s::jsonb",
                                          [json.dumps([{"edge_id": edge_id}])], output_field=BooleanField()))
    return queryset.defer("seeds", "activations", "context", "context_lines", "narrative").order_by("-id")


def recall_summary(trace: RecallTrace, query_hidden: bool | None = None,
                   names: dict[str, str] | None = None) -> dict[str, Any]:
    """One row of the list, the query as this reader may see it: `query_hidden` as decided, or else as the
    list's queryset annotated it (hidden when unknown). `names`: actor_names of the page's actors."""
    params = trace.params or {}
    hidden = bool(getattr(trace, "query_hidden", True)) if query_hidden is None else query_hidden
    names = names or {}
    return {
        "id": trace.pk, "created_at": trace.created_at, "actor": trace.actor,
        "actor_name": names.get(trace.actor, trace.actor), "session_id": trace.session_id,
        "query": None if hidden else trace.query, "query_hidden": hidden, "preset": params.get("preset", ""),
        "k": params.get("k"), "scope": params.get("scope", ""), "returned": len(trace.returned_ids),
        "touched": len(trace.touched_ids), "change_id": trace.change_id,
        "total_ms": (trace.timings or {}).get("total_ms"),
    }


@dataclass(frozen=True)
class _Now:
    """A memory as it is now, for the replay's ghosts and masks."""

    exists: bool
    status: str = ""
    sensitive: bool = False
    kind: str = ""
    session_id: int | None = None
    content: str = ""


def _memories_now(ids: set[int]) -> dict[int, _Now]:
    rows = Memory.objects.filter(pk__in=ids).values_list("pk", "status", "sensitive", "kind", "session_id", "content")
    found = {pk: _Now(True, status, sensitive, kind, session, content)
             for pk, status, sensitive, kind, session, content in rows}
    return {pk: found.get(pk, _Now(False)) for pk in ids}


def recall_replay(trace: RecallTrace, *, show_sensitive: bool, names: dict[str, str] | None = None) -> dict[str, Any]:
    """The whole trace as this reader may see it: seeds, each hop's arrivals, ranking, context, and the
    memories and edges it names with what became of them since. `names`: what to call its actor."""
    stored = {entry["memory_id"]: entry for entry in trace.ranking}
    ids = set(trace.touched_ids) | set(stored) | {s["memory_id"] for s in trace.seeds}
    now = _memories_now(ids)
    masks = {pk: memory_mask(exists=m.exists, status=m.status, sensitive=m.sensitive, show_sensitive=show_sensitive)
             for pk, m in now.items()}
    # The same rule as the list's SQL (recall_query_hidden_sql), decided here from the rows just read.
    hidden_any = any(masks.values())
    memories = {}
    for pk, m in now.items():
        entry = stored.get(pk, {})
        text = entry.get("content", m.content)
        memories[str(pk)] = {
            "id": pk, "exists": m.exists, "status": m.status or None, "sensitive": m.sensitive or
            bool(entry.get("sensitive")), "kind": entry.get("kind", m.kind) or None,
            "session_id": entry.get("session_id", m.session_id), "returned": pk in stored,
            "text": masks[pk] or text[:PREVIEW_CHARS], "masked": masks[pk],
        }
    seed_activation = {s["memory_id"]: s["activation"] for s in trace.seeds}
    ranking = [{"rank": e["rank"], "memory_id": e["memory_id"], "score": e["score"], "components": e["components"],
                "seed_activation": seed_activation.get(e["memory_id"]), "path": e.get("path", []),
                "text": masks.get(e["memory_id"]) or e.get("content") or now[e["memory_id"]].content}
               for e in trace.ranking]
    return {
        **recall_summary(trace, hidden_any, names),
        "params": trace.params, "timings": trace.timings,
        "changes_since": _changes_since(trace),
        "seeds": trace.seeds,
        "steps": _steps(trace.activations),
        "ranking": ranking,
        "context_lines": _context_lines(trace, masks, hidden_any),
        "narrative": "" if hidden_any else trace.narrative,
        "memories": memories,
        "edges": _edges_now(trace.activations),
        "led_to": led_to(trace),
    }


def led_to(trace: RecallTrace) -> list[dict[str, Any]]:
    """What the agent did after this recall: the interactions it sent naming it (`recall_id`), their memories
    and the edges learned from that use (engine/use.py). Ids and kinds only: no text to mask."""
    found = []
    for interaction in (Interaction.objects.filter(recall=trace).prefetch_related("memories").order_by("pk")
                        .only("pk", "session_id", "kind", "used")):
        memory_ids = sorted(m.pk for m in interaction.memories.all())
        edges = list(Edge.objects.filter(target_id__in=memory_ids, origin=EdgeOrigin.USE)
                     .values("id", "source_id", "target_id", "confidence").order_by("id"))
        found.append({"interaction_id": interaction.pk, "session_id": interaction.session_id,
                      "kind": interaction.kind, "memory_ids": memory_ids, "used": list(interaction.used),
                      "edges": edges})
    return found


# One statement: the project's change-log rows after the trace's (the (project, id) index), each kept when
# it is about a memory the recall used or an edge whose either end, before or after, is one. The ids are
# hashed once (IN over a set-returning subquery), so a long log costs one probe per row, not a scan of ids.
_CHANGES_SINCE_SQL = f"""
WITH used AS (SELECT DISTINCT unnest(%s::bigint[]) AS id)
SELECT count(*) FROM {GraphChange._meta.db_table} c
WHERE c.project_id = %s AND c.id > %s AND (
  (c.object_type = 'memory' AND c.object_id IN (SELECT id FROM used))
  OR (c.object_type = 'edge' AND (
    (c.after ->> 'source_id')::bigint IN (SELECT id FROM used)
    OR (c.after ->> 'target_id')::bigint IN (SELECT id FROM used)
    OR (c.before ->> 'source_id')::bigint IN (SELECT id FROM used)
    OR (c.before ->> 'target_id')::bigint IN (SELECT id FROM used))))
"""


def _changes_since(trace: RecallTrace) -> int | None:
    """Changes since the trace ran to what it used: the memories it started from, reached or returned
    (archived, marked, re-kinded, merged, forgotten…) and the edges touching them (drawn, approved,
    rejected, relabelled, redirected, deleted). Changes elsewhere in the project and other recalls do not
    count. None: unknown (a trace stored before the change id was kept)."""
    if trace.change_id is None:
        return None
    used = sorted(set(trace.touched_ids) | set(trace.returned_ids))
    if not used:
        return 0
    with connection.cursor() as cursor:
        cursor.execute(_CHANGES_SINCE_SQL, [used, trace.project_id, trace.change_id])
        return cursor.fetchone()[0]


def _steps(activations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Arrivals grouped by hop (hop 0: the seeds), strongest first within a hop."""
    by_hop: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for arrival in activations:
        by_hop[int(arrival.get("hop", 0))].append(arrival)
    return [{"hop": hop, "arrivals": sorted(by_hop[hop], key=lambda a: (-a["activation"], a["memory_id"]))}
            for hop in sorted(by_hop)]


def _context_lines(trace: RecallTrace, masks: dict[int, str | None], hidden_any: bool) -> list[dict[str, Any]]:
    """The told context line by line; a line of a memory this reader may not see is replaced by its mask.
    A trace stored before lines were kept has only the whole context: shown only when nothing is hidden."""
    if trace.context_lines:
        return [{"memory_id": line["memory_id"], "text": masks.get(line["memory_id"]) or line["text"]}
                for line in trace.context_lines]
    if hidden_any or not trace.context:
        return []
    return [{"memory_id": None, "text": line} for line in trace.context.split("\n")]


def _edges_now(activations: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The edges that carried activation, as they are now (a rejected or deleted one shows as such)."""
    ids = {a["edge_id"] for a in activations if a.get("edge_id")}
    rows = {pk: (relation, status) for pk, relation, status in
            Edge.objects.filter(pk__in=ids).values_list("pk", "relation", "status")}
    return {str(pk): {"id": pk, "exists": pk in rows, "relation_now": rows.get(pk, (None, None))[0],
                      "status_now": rows.get(pk, (None, None))[1]} for pk in sorted(ids)}


def recall_compare(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """Two replays side by side: what entered the second's ranking, what left, what moved, and the edges
    that carried activation to a returned memory in one recall but not in the other."""
    rank_a = {e["memory_id"]: e["rank"] for e in first["ranking"]}
    rank_b = {e["memory_id"]: e["rank"] for e in second["ranking"]}
    moved = [{"memory_id": m, "from": rank_a[m], "to": rank_b[m]} for m in rank_b
             if m in rank_a and rank_a[m] != rank_b[m]]
    return {
        "entered": [{"memory_id": m, "rank": r} for m, r in rank_b.items() if m not in rank_a],
        "left": [{"memory_id": m, "rank": r} for m, r in rank_a.items() if m not in rank_b],
        "moved": sorted(moved, key=lambda x: x["to"]),
        "stayed": sorted(m for m in rank_b if rank_a.get(m) == rank_b[m]),
        "edges_only_first": sorted(_carrying_edges(first) - _carrying_edges(second)),
        "edges_only_second": sorted(_carrying_edges(second) - _carrying_edges(first)),
    }


def _carrying_edges(replay: dict[str, Any]) -> set[int]:
    """Edges on the path of a returned memory: those that made a difference to the ranking."""
    return {step["edge_id"] for entry in replay["ranking"] for step in entry["path"] if step.get("edge_id")}
