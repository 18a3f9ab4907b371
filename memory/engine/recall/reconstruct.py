"""Reconstruction (SPEC §4.4): order chosen memories causes-first, and tell them as one context."""

from __future__ import annotations

import functools
import heapq
import re

from ...models import Edge, EdgeStatus, Memory, Relation
from ..rows import RowReader, reading_cursor

# Relations that order parent before child in the told context.
ORDERING = {Relation.CAUSAL, Relation.CONDITIONAL, Relation.TEMPORAL, Relation.ELABORATES, Relation.PART_OF,
            Relation.SUPERSEDES, Relation.REFERENCES, Relation.SUMMARIZES}
LINK_WORDS = {
    "en": {Relation.CAUSAL: "because of", Relation.CONDITIONAL: "only if", Relation.TEMPORAL: "after",
           Relation.ELABORATES: "details", Relation.PART_OF: "step of", Relation.SUPERSEDES: "replaces",
           Relation.REFERENCES: "refers to", Relation.SUMMARIZES: "summarises"},
    "zh": {Relation.CAUSAL: "因为", Relation.CONDITIONAL: "前提是", Relation.TEMPORAL: "在其后",
           Relation.ELABORATES: "细化", Relation.PART_OF: "属于", Relation.SUPERSEDES: "取代",
           Relation.REFERENCES: "提到", Relation.SUMMARIZES: "总结"},
}
HEADER = {"en": "What is known, causes before effects:", "zh": "已知信息（原因在前，结果在后）："}
CJK = re.compile(r"[\u4e00-\u9fff]")


def subgraph_edges(memory_ids: list[int]) -> list[Edge]:
    """The edges among these memories, rejected ones left out (a plain statement: cheaper than a query)."""
    ids = sorted(set(memory_ids))
    if not ids:
        return []
    edges = _edge_reader()
    with reading_cursor() as cursor:
        cursor.execute(f"SELECT {edges.columns('e')} FROM {Edge._meta.db_table} e WHERE e.source_id = ANY(%s) "
                       "AND e.target_id = ANY(%s) AND e.status <> %s ORDER BY e.id", [ids, ids, EdgeStatus.REJECTED])
        return [edges.instance(row) for row in cursor.fetchall()]


@functools.cache
def _edge_reader() -> RowReader:
    return RowReader.for_columns(Edge)


def dependency_order(memories: list[Memory], edges: list[Edge]) -> list[Memory]:
    """Topological order over ordering relations (cycles broken by time), ties by time then id."""
    by_id = {m.pk: m for m in memories}
    parents: dict[int, set[int]] = {m.pk: set() for m in memories}
    children: dict[int, set[int]] = {m.pk: set() for m in memories}
    for edge in edges:
        if edge.relation in ORDERING and edge.source_id in by_id and edge.target_id in by_id:
            parents[edge.target_id].add(edge.source_id)
            children[edge.source_id].add(edge.target_id)
    key = {m.pk: (m.occurred_at, m.pk) for m in memories}
    ready = [(key[m], m) for m in parents if not parents[m]]
    heapq.heapify(ready)
    ordered: list[Memory] = []
    done: set[int] = set()
    while len(ordered) < len(memories):
        if not ready:  # a cycle: release the earliest remaining memory
            rest = min((m for m in parents if m not in done), key=key.__getitem__)
            ready.append((key[rest], rest))
        _, memory_id = heapq.heappop(ready)
        if memory_id in done:
            continue
        done.add(memory_id)
        ordered.append(by_id[memory_id])
        for child in children[memory_id]:  # each edge looked at once: k=100 made the scan of all pairs show
            its_parents = parents[child]
            if child not in done and memory_id in its_parents:
                its_parents.discard(memory_id)
                if not its_parents:
                    heapq.heappush(ready, (key[child], child))
    return ordered


def language_of(memories: list[Memory]) -> str:
    cjk = sum(len(CJK.findall(m.content)) for m in memories)
    return "zh" if cjk * 3 > sum(len(m.content) for m in memories) * 0.5 else "en"


def told_lines(ordered: list[Memory], edges: list[Edge], notes: dict[int, str] | None = None
               ) -> list[tuple[int | None, str]]:
    """The context line by line, each with its memory (None for the header), so a replay links them.
    `notes`: a line told right after a memory's own (why it may be out of date: engine/risk.py)."""
    if not ordered:
        return []
    language = language_of(ordered)
    number = {m.pk: i for i, m in enumerate(ordered, start=1)}
    links: dict[int, list[str]] = {}
    for edge in edges:
        if edge.relation in ORDERING and edge.source_id in number and edge.target_id in number:
            words = LINK_WORDS[language][edge.relation]
            links.setdefault(edge.target_id, []).append(f"{words} #{number[edge.source_id]}")
    lines: list[tuple[int | None, str]] = [(None, HEADER[language])]
    for memory in ordered:
        suffix = f" ({'; '.join(links[memory.pk])})" if memory.pk in links else ""
        lines.append((memory.pk, f"{number[memory.pk]}. [{memory.kind}] {memory.content}{suffix}"))
        if notes and memory.pk in notes:
            lines.append((memory.pk, notes[memory.pk]))
    return lines


def tell(ordered: list[Memory], edges: list[Edge]) -> str:
    """Numbered lines in dependency order, each naming what it depends on ("because of #1")."""
    return "\n".join(line for _, line in told_lines(ordered, edges))
