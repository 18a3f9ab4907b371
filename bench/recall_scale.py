"""Recall latency at scale: one project grown to 1k, 10k and 100k synthetic memories.

The project looks like a real one: sessions of 50–100 memories, each memory with its source
interaction, 1–2 entity mentions (entities found by the real extractor in the texts, padded to
500), about three edges (next_in_session plus two dependency edges of mixed relations to earlier
memories of the session, some approved, a few rejected), search text from the real segmenter and
a MiniLM vector. Only a few thousand distinct texts are embedded with MiniLM; every memory reuses
one of them with a small random perturbation of its vector (renormalised), so the texts cost
seconds instead of the ten minutes or so MiniLM needs for 100k distinct texts on two cores. Each
size is built on top of the previous one (1k ⊂ 10k ⊂ 100k), vectors go in with `bulk_load` (COPY),
then VACUUM ANALYZE.

Measured per size: `memory_recall` (project scope, k=10) with the presets hybrid and ripple
(2 hops), on held-out queries; timings come from the stored trace (embed_ms, seeds_ms, ripple_ms,
rank_and_reconstruct_ms, total_ms). The query embedder's cache is off, so every query is embedded.
The three seed sources are also timed one by one to show which of them grows with the project;
at the largest size `diagnose()` times the slow steps against what-ifs of the suggested fixes and
keeps the engine's EXPLAIN ANALYZE plans; `gc_probe()` measures a server-like process's full GC.

    python -m bench.recall_scale --sizes 1000,10000 --keep    build, measure, leave the data
    python -m bench.recall_scale --diagnose                   diagnose the data left by --keep
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import numpy as np

from .corpus import SLOTS, mixed_corpus, prose_sentences, sentences
from .setup_django import gc_settle, percentile

SIZES = (1_000, 10_000, 100_000)
QUICK_SIZES = (1_000, 10_000)
SLUG = "bench-recall-scale"
DISTINCT_TEXTS = 3000
ENTITY_COUNT = 500
NOISE = 0.015  # per-dimension σ of the perturbation: cosine to the original text's vector ≈ 0.95
PRESETS = ("hybrid", "ripple")
DEMO_DATA = Path(__file__).resolve().parent.parent / "memory" / "demo" / "data"
KINDS = (["fact"] * 4 + ["event"] * 3 + ["action"] * 3 + ["result"] * 3 + ["decision", "preference", "constraint",
         "intent", "error", "error"])
SOURCE_KINDS = ["user_input", "assistant_output", "tool_call", "tool_result", "observation", "agent_thought"]
DEPENDENCY_RELATIONS = (["causal"] * 3 + ["temporal"] * 3 + ["elaborates"] * 3 + ["references"] * 2
                        + ["conditional", "part_of", "shares_entity", "shares_entity", "supersedes"])


@dataclass
class Pool:
    """The distinct texts with everything computed once per text."""

    texts: list[str]
    vectors: np.ndarray
    search_text: list[str]
    dimensions: list[dict]
    entity_names: list[list[str]]  # normalised names of the entities the extractor found
    entities: list[tuple[str, str, str]]  # (name, normalized, type), ENTITY_COUNT of them
    embed_s: float


@dataclass
class State:
    memories: int = 0
    sessions: int = 0
    edges: int = 0
    mentions: int = 0
    entity_ids: dict[str, int] = field(default_factory=dict)
    entity_weights: np.ndarray | None = None


def demo_texts() -> list[str]:
    out = []
    for path in sorted(DEMO_DATA.glob("*.json")):
        out.extend(i["content"] for i in json.loads(path.read_text())["interactions"])
    return out


def pool_texts() -> list[str]:
    demo = demo_texts()
    return list(dict.fromkeys(demo + mixed_corpus(DISTINCT_TEXTS - len(demo), seed=3)))


def pool_build(embedder) -> Pool:
    from django.utils import timezone

    from memory.engine.extraction import extract_dimensions, segment

    texts = pool_texts()
    t0 = time.perf_counter()
    vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
    embed_s = time.perf_counter() - t0
    now = timezone.now()
    dims, names, found = [], [], Counter()
    info: dict[str, tuple[str, str]] = {}
    for text in texts:
        d = extract_dimensions(text, now=now, kind="observation")
        dims.append({**d.to_json(), "source_kind": "observation"})
        names.append(list(dict.fromkeys(e.normalized for e in d.entities)))
        for e in d.entities:
            found[e.normalized] += 1
            info.setdefault(e.normalized, (e.name, e.type))
    entities = [(info[n][0], n, info[n][1]) for n, _ in found.most_common(ENTITY_COUNT)]
    extra = (f"{prefix}-{i:03d}" for i in range(ENTITY_COUNT) for prefix in ("ticket", "svc", "customer"))
    while len(entities) < ENTITY_COUNT:
        name = next(extra)
        entities.append((name, name, "other"))
    search = [" ".join(segment(t)) for t in texts]
    return Pool(texts, vectors, search, dims, names, entities, embed_s)


def queries_build(used: set[str], count: int) -> list[str]:
    """Held-out prose (60%), new template sentences (30%) and short entity questions (10%)."""
    rng = random.Random(11)
    prose = [t for t in prose_sentences() if t not in used]
    rng.shuffle(prose)
    n_prose, n_short = count * 6 // 10, count // 10
    templates = [t for t in sentences(count * 2, seed=77) if t not in used][: count - n_prose - n_short]
    short = [
        rng.choice(["What is {person} allergic to?", "budget for the {trip}", "errors in {path}",
                    "hotel near {landmark} in {city}", "why did {test} fail", "{person} travel preferences"])
        .format(**{k: rng.choice(v) for k, v in SLOTS.items()})
        for _ in range(n_short)
    ]
    return prose[:n_prose] + templates + short


def project_delete(slug: str) -> None:
    """Delete a benchmark project quickly: raw deletes for the big tables, the ORM for the rest."""
    from django.db import connection

    from memory.models import Memory, Project

    project = Project.objects.filter(slug=slug).first()
    if project is None:
        return
    through = Memory.sources.through._meta.db_table
    with connection.cursor() as cursor:
        for sql in (
            "DELETE FROM memory_edge WHERE project_id = %s",
            "DELETE FROM memory_entitymention WHERE memory_id IN (SELECT id FROM memory_memory WHERE project_id = %s)",
            "DELETE FROM memory_memoryembedding WHERE project_id = %s",
            f"DELETE FROM {through} WHERE memory_id IN (SELECT id FROM memory_memory WHERE project_id = %s)",
            "DELETE FROM memory_memory WHERE project_id = %s",
            "DELETE FROM memory_interaction WHERE project_id = %s",
            "DELETE FROM memory_graphchange WHERE project_id = %s",
            "DELETE FROM memory_recalltrace WHERE project_id = %s",
        ):
            cursor.execute(sql, [project.pk])
    project.delete()


def index_rebuild() -> None:
    """After a big delete: rebuild the HNSW indexes (cheap on what is left) and vacuum."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname FROM pg_indexes WHERE indexname LIKE 'memory_emb_hnsw_%%'")
        for (name,) in cursor.fetchall():
            cursor.execute(f"REINDEX INDEX {name}")
        for table in ("memory_memory", "memory_edge", "memory_entitymention", "memory_memoryembedding",
                      "memory_interaction"):
            cursor.execute(f"VACUUM ANALYZE {table}")


def grow(project, space, pool: Pool, state: State, target: int, rng: random.Random,
         nrng: np.random.Generator) -> dict:
    """Add memories (with sessions, interactions, mentions, edges, vectors) up to `target`."""
    from django.db import connection, transaction
    from django.utils import timezone

    from memory.engine.vector_index import EmbeddingRow, bulk_load
    from memory.models import AgentSession, Edge, Entity, EntityMention, Interaction, Memory

    timings: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        timings[name] = round(now - clock, 2)
        clock = now

    if not state.entity_ids:
        made = Entity.objects.bulk_create(Entity(project=project, name=n, normalized_name=norm, type=kind)
                                          for n, norm, kind in pool.entities)
        state.entity_ids = {e.normalized_name: e.pk for e in made}
        weights = 1.0 / np.arange(1, len(made) + 1) ** 0.8  # a few entities are everywhere, most are rare
        state.entity_weights = weights / weights.sum()
    entity_list = [e[1] for e in pool.entities]
    wanted = target - state.memories
    sizes: list[int] = []
    while sum(sizes) < wanted:
        sizes.append(rng.randint(50, 100))
    sizes[-1] -= sum(sizes) - wanted
    now = timezone.now()
    with transaction.atomic():
        sessions = AgentSession.objects.bulk_create(
            AgentSession(project=project, title=f"session {state.sessions + i}") for i in range(len(sizes)))
        plan = []  # (session, text index, occurred_at, kind)
        for session, size in zip(sessions, sizes, strict=True):
            at = now - timedelta(days=rng.uniform(0, 365))
            for _ in range(size):
                at += timedelta(seconds=rng.uniform(20, 300))
                plan.append((session, rng.randrange(len(pool.texts)), at))
        interactions = Interaction.objects.bulk_create(
            (Interaction(project=project, session=s, kind=rng.choice(SOURCE_KINDS), content=pool.texts[t],
                         occurred_at=at, status="kept", processed_at=now) for s, t, at in plan),
            batch_size=5000)
        lap("interactions_s")
        memories = Memory.objects.bulk_create(
            (Memory(project=project, session=s, content=pool.texts[t], search_text=pool.search_text[t],
                    kind=rng.choice(KINDS), dimensions=pool.dimensions[t], importance=round(rng.uniform(1, 5), 1),
                    relevance=round(rng.uniform(1, 5), 1), novelty=round(rng.uniform(1, 5), 1),
                    status=rng.choices(["active", "archived", "superseded", "forgotten"], [92, 4, 3, 1])[0],
                    sensitive=rng.random() < 0.02, occurred_at=at) for s, t, at in plan),
            batch_size=5000)
        lap("memories_s")
        Memory.sources.through.objects.bulk_create(
            (Memory.sources.through(memory_id=m.pk, interaction_id=i.pk)
             for m, i in zip(memories, interactions, strict=True)), batch_size=10000)
        mentions = []
        for memory, (_, t, _) in zip(memories, plan, strict=True):
            names = [n for n in pool.entity_names[t] if n in state.entity_ids][:2]
            if not names:
                picks = nrng.choice(len(entity_list), size=rng.randint(1, 2), replace=False, p=state.entity_weights)
                names = [entity_list[p] for p in picks]
            mentions.extend(EntityMention(memory_id=memory.pk, entity_id=state.entity_ids[n], surface=n)
                            for n in names)
        EntityMention.objects.bulk_create(mentions, batch_size=10000)
        lap("mentions_s")
        edges = []
        start = 0
        for session, size in zip(sessions, sizes, strict=True):
            members = memories[start:start + size]
            start += size
            for i, child in enumerate(members[1:], start=1):
                edges.append(Edge(project=project, session=session, source_id=members[i - 1].pk, target_id=child.pk,
                                  relation="next_in_session", origin="rule", rationale="adjacent in the session"))
                earlier = members[max(0, i - 12):i]
                for parent in rng.sample(earlier, min(len(earlier), rng.choice([1, 2, 2, 3]))):
                    status = rng.choices(["inferred", "approved", "rejected"], [85, 12, 3])[0]
                    confidence = round(rng.uniform(0.45, 0.95), 2)
                    edges.append(Edge(project=project, session=session, source_id=parent.pk, target_id=child.pk,
                                      relation=rng.choice(DEPENDENCY_RELATIONS), weight=round(rng.uniform(0.5, 1), 2),
                                      confidence=confidence, origin=rng.choice(["rule", "rule", "llm"]),
                                      status=status, needs_review=status == "inferred" and confidence < 0.6,
                                      rationale="synthetic"))
        Edge.objects.bulk_create(edges, batch_size=10000)
        lap("edges_s")
    text_ids = np.asarray([t for _, t, _ in plan])
    vectors = pool.vectors[text_ids] + nrng.normal(0.0, NOISE, (len(plan), pool.vectors.shape[1])).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    rows = [EmbeddingRow(m.pk, project.pk, m.session_id, v) for m, v in zip(memories, vectors.tolist(), strict=True)]
    with connection.cursor() as cursor:
        # The HNSW graph of 100k vectors needs ~200 MB; the default 64 MB makes the build spill and crawl.
        cursor.execute("SET maintenance_work_mem = '1GB'")
    bulk_load(space, rows)
    lap("vectors_copy_and_index_s")
    with connection.cursor() as cursor:
        for table in ("memory_memory", "memory_edge", "memory_entitymention", "memory_entity", "memory_interaction",
                      Memory.sources.through._meta.db_table, "memory_agentsession"):
            cursor.execute(f"VACUUM ANALYZE {table}")
        cursor.execute("RESET maintenance_work_mem")
    lap("vacuum_analyze_s")
    state.memories, state.sessions = target, state.sessions + len(sessions)
    state.edges += len(edges)
    state.mentions += len(mentions)
    return {"build_s": round(sum(timings.values()), 1), "steps": timings}


GC_PROBE = """
import gc, json, os, time
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "contextweaver_site.settings.base")
import django
django.setup()
import contextweaver_site.asgi  # what a web process imports (it also warms jieba)
from memory.providers import get_embedder
get_embedder().embed(["warm up"])
t0 = time.perf_counter()
gc.collect()
print(json.dumps({"objects": len(gc.get_objects()), "full_gc_ms": round((time.perf_counter() - t0) * 1000, 1)}))
"""


def gc_probe() -> dict:
    """A server-like process (ASGI app imported, MiniLM loaded): how long one full GC pause takes."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-c", GC_PROBE], cwd=root, capture_output=True, text=True,
                          env={**os.environ, "CW_EMBEDDER": "minilm"}, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


class GcWatch:
    """Counts full (generation 2) collections and their pauses while active."""

    def __init__(self) -> None:
        self.pauses: list[float] = []
        self._start = 0.0

    def _callback(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        elif info["generation"] == 2:
            self.pauses.append((time.perf_counter() - self._start) * 1000)

    def __enter__(self) -> GcWatch:
        import gc

        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc) -> None:
        import gc

        gc.callbacks.remove(self._callback)


def recall_measure(project, queries: list[str], preset: str, k: int) -> dict:
    from django.db import connection

    from memory.engine.recall import RecallQuery, memory_recall

    rows = []
    sql = {"count": 0, "seconds": 0.0}

    def count_sql(execute, statement, params, many, context):
        t0 = time.perf_counter()
        try:
            return execute(statement, params, many, context)
        finally:
            sql["count"] += 1
            sql["seconds"] += time.perf_counter() - t0

    with GcWatch() as watch, connection.execute_wrapper(count_sql):
        for text in queries:
            sql.update(count=0, seconds=0.0)
            t0 = time.perf_counter()
            result = memory_recall(project=project, query=RecallQuery(text=text, k=k, preset=preset), actor="bench")
            wall = (time.perf_counter() - t0) * 1000
            t = result.trace.timings
            embed = t.get("embed_ms", 0.0)
            rows.append({"embed": embed, "seeds": t["seeds_ms"], "ripple": t["ripple_ms"],
                         "rank": t["rank_and_reconstruct_ms"], "total_ex_embed": t["total_ms"] - embed,
                         "wall_ex_embed": wall - embed, "arrivals": len(result.trace.activations),
                         "items": len(result.items), "query": text, "sql_count": sql["count"],
                         "sql_ms": sql["seconds"] * 1000})

    def pct(key: str, q: float) -> float:
        return round(percentile([r[key] for r in rows], q), 2)

    slowest = sorted(rows, key=lambda r: -r["total_ex_embed"])[:3]
    return {
        "p50_ms": pct("total_ex_embed", 50), "p95_ms": pct("total_ex_embed", 95),
        "wall_p50_ms": pct("wall_ex_embed", 50), "wall_p95_ms": pct("wall_ex_embed", 95),
        "embed_p50_ms": pct("embed", 50), "embed_p95_ms": pct("embed", 95),
        "seeds_p50_ms": pct("seeds", 50), "ripple_p50_ms": pct("ripple", 50), "rank_p50_ms": pct("rank", 50),
        "seeds_p95_ms": pct("seeds", 95), "ripple_p95_ms": pct("ripple", 95), "rank_p95_ms": pct("rank", 95),
        "arrivals_mean": round(sum(r["arrivals"] for r in rows) / len(rows), 1),
        "sql_statements_mean": round(sum(r["sql_count"] for r in rows) / len(rows), 1),
        "sql_p50_ms": pct("sql_ms", 50), "python_p50_ms": round(percentile([r["wall_ex_embed"] - r["sql_ms"]
                                                                               for r in rows], 50), 2),
        "empty": sum(1 for r in rows if not r["items"]),
        "full_gcs": len(watch.pauses), "full_gc_max_ms": round(max(watch.pauses, default=0.0), 1),
        "slowest": [{"query": r["query"][:80], "ms": round(r["total_ex_embed"], 1), "seeds": r["seeds"],
                     "ripple": r["ripple"], "rank": r["rank"]} for r in slowest],
    }


def sources_measure(project, space, queries: list[str], vectors: list, pool_size: int) -> dict:
    """Each seed source alone (the vector is precomputed), to see which one grows with the project."""
    from memory.engine.recall.seeds import Scope, entity_ranking, lexical_ranking, vector_ranking

    scope = Scope(project, None, ("active",), False)
    calls = {
        "vector": lambda q, v: vector_ranking(scope, space, v, pool_size),
        "lexical": lambda q, v: lexical_ranking(scope, q, pool_size),
        "entities": lambda q, v: entity_ranking(scope, q, pool_size),
    }
    out = {}
    for name, call in calls.items():
        latencies = []
        for text, vector in zip(queries, vectors, strict=True):
            t0 = time.perf_counter()
            call(text, vector)
            latencies.append((time.perf_counter() - t0) * 1000)
        out[name] = {"p50_ms": round(percentile(latencies, 50), 2), "p95_ms": round(percentile(latencies, 95), 2)}
    return out


def lexical_queryset(scope, text: str, limit: int):
    """The queryset of seeds.lexical_ranking, rebuilt here to EXPLAIN it."""
    from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVector

    from memory.engine.recall.seeds import lexical_query

    query = SearchQuery(lexical_query(text), search_type="raw", config="simple")
    vector = SearchVector("search_text", config="simple")
    return (scope.memories().annotate(sv=vector).filter(sv=query).annotate(rank=SearchRank(vector, query))
            .order_by("-rank", "-importance", "id").values_list("id", flat=True)[:limit])


def entity_queryset(scope, text: str, limit: int):
    """The second queryset of seeds.entity_ranking, rebuilt here to EXPLAIN it."""
    from django.db.models import Count, F, Value
    from django.db.models.functions import Length, StrIndex

    from memory.models import Entity

    entity_ids = list(Entity.objects.filter(project=scope.project)
                      .annotate(at=StrIndex(Value(text.casefold()), F("normalized_name")),
                                size=Length("normalized_name"))
                      .filter(at__gt=0, size__gte=2).values_list("id", flat=True)[:50])
    return (scope.memories().filter(mentions__entity_id__in=entity_ids).annotate(hits=Count("mentions", distinct=True))
            .order_by("-hits", F("importance").desc(), "-occurred_at").values_list("id", flat=True)[:limit])


LEXICAL_SQL = (
    "SELECT id FROM bench_scratch_lex WHERE project_id = %s AND status = 'active' AND NOT sensitive "
    "AND tsv @@ to_tsquery('simple', %s) ORDER BY ts_rank(tsv, to_tsquery('simple', %s)) DESC, importance DESC, id "
    "LIMIT %s"
)
ENTITY_SQL = (
    "SELECT m.id FROM unnest(%s::bigint[]) AS q(entity_id) CROSS JOIN LATERAL (SELECT s.memory_id "
    "FROM bench_scratch_mention s WHERE s.entity_id = q.entity_id ORDER BY s.memory_id DESC LIMIT %s) c "
    "JOIN memory_memory m ON m.id = c.memory_id WHERE m.project_id = %s AND m.status = 'active' AND NOT m.sensitive "
    "GROUP BY m.id ORDER BY count(*) DESC, m.importance DESC, m.occurred_at DESC LIMIT %s"
)


def diagnose(project, queries: list[str], pool_size: int = 30, k: int = 10) -> dict:
    """Where the time goes at this size, and what the suggested fixes would save.

    Each slow stage is timed as the engine runs it and as a what-if built on scratch copies
    (never touching the engine's tables): a stored tsvector column, dropping query terms found in
    more than 2% of the project's memories, at most 200 memories per entity with an
    (entity, memory) index, and ranking on three columns before loading full rows for the top k.
    """
    from django.db import connection
    from django.db.models import F, Value
    from django.db.models.functions import Length, StrIndex

    from memory.engine.recall import RecallQuery, _load_with_provenance, memory_recall
    from memory.engine.recall.seeds import Scope, entity_ranking, lexical_query, lexical_ranking
    from memory.models import Entity, Memory

    scope = Scope(project, None, ("active",), False)
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS bench_scratch_lex, bench_scratch_mention")
        cursor.execute("CREATE TABLE bench_scratch_lex AS SELECT id, project_id, status, sensitive, importance, "
                       "to_tsvector('simple', coalesce(search_text, '')) AS tsv FROM memory_memory")
        cursor.execute("CREATE INDEX ON bench_scratch_lex USING gin (tsv)")
        cursor.execute("CREATE TABLE bench_scratch_mention AS SELECT entity_id, memory_id FROM memory_entitymention")
        cursor.execute("CREATE INDEX ON bench_scratch_mention (entity_id, memory_id)")
        cursor.execute("VACUUM ANALYZE bench_scratch_lex")
        cursor.execute("VACUUM ANALYZE bench_scratch_mention")
        t0 = time.perf_counter()
        cursor.execute("SELECT word, ndoc FROM ts_stat(%s)",
                       [f"SELECT tsv FROM bench_scratch_lex WHERE project_id = {int(project.pk)}"])
        df = dict(cursor.fetchall())
        ts_stat_ms = (time.perf_counter() - t0) * 1000
    common = 0.02 * Memory.objects.filter(project=project).count()

    def lexical_stored(text: str, prune: bool) -> list[int]:
        raw = lexical_query(text)
        if raw is None:
            return []
        if prune:
            terms = raw.split(" | ")
            raw = " | ".join([t for t in terms if df.get(t, 0) <= common] or terms)
        with connection.cursor() as cursor:
            cursor.execute(LEXICAL_SQL, [project.pk, raw, raw, pool_size])
            return [r[0] for r in cursor.fetchall()]

    def entities_capped(text: str) -> list[int]:
        ids = list(Entity.objects.filter(project=project)
                   .annotate(at=StrIndex(Value(text.casefold()), F("normalized_name")), size=Length("normalized_name"))
                   .filter(at__gt=0, size__gte=2).values_list("id", flat=True)[:50])
        if not ids:
            return []
        with connection.cursor() as cursor:
            cursor.execute(ENTITY_SQL, [ids, 200, project.pk, pool_size])
            return [r[0] for r in cursor.fetchall()]

    activated = [list({a["memory_id"] for a in memory_recall(
        project=project, query=RecallQuery(text=q, k=k, preset="ripple"), actor="bench").trace.activations})
        for q in queries]

    def load_lean(ids: list[int]) -> None:
        rows = sorted(Memory.objects.filter(pk__in=ids).values_list("id", "importance", "occurred_at"),
                      key=lambda r: (-r[1], r[2]))  # stands in for rank(): same columns, same amount of work
        _load_with_provenance([r[0] for r in rows[:k]])

    variants = {
        "lexical (engine: to_tsvector per row, all terms)": lambda i, q: lexical_ranking(scope, q, pool_size),
        "lexical, stored tsvector": lambda i, q: lexical_stored(q, prune=False),
        "lexical, stored tsvector + terms in >2% of memories dropped": lambda i, q: lexical_stored(q, prune=True),
        "entities (engine: every mention of every named entity)": lambda i, q: entity_ranking(scope, q, pool_size),
        "entities, ≤200 newest mentions per entity + (entity, memory) index": lambda i, q: entities_capped(q),
        "ripple: load all activated memories + sources (engine)": lambda i, q: _load_with_provenance(activated[i]),
        "ripple: rank on 3 columns, full rows + sources for top k only": lambda i, q: load_lean(activated[i]),
    }
    rows, slowest = [], {}
    for name, call in variants.items():
        latencies = []
        for i, text in enumerate(queries):
            t0 = time.perf_counter()
            call(i, text)
            latencies.append((time.perf_counter() - t0) * 1000)
        rows.append({"variant": name, "p50_ms": round(percentile(latencies, 50), 2),
                     "p95_ms": round(percentile(latencies, 95), 2)})
        slowest[name.split(" ")[0]] = queries[max(range(len(queries)), key=latencies.__getitem__)]
    plans = {
        "lexical": {"query": slowest["lexical"],
                    "plan": lexical_queryset(scope, slowest["lexical"], pool_size).explain(analyze=True)},
        "entities": {"query": slowest["entities"],
                     "plan": entity_queryset(scope, slowest["entities"], pool_size).explain(analyze=True)},
    }
    matched = []
    for text in queries:
        raw = lexical_query(text)
        if raw:
            with connection.cursor() as cursor:
                cursor.execute("SELECT count(*) FROM bench_scratch_lex WHERE project_id = %s AND tsv @@ "
                               "to_tsquery('simple', %s)", [project.pk, raw])
                matched.append(cursor.fetchone()[0])
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE bench_scratch_lex, bench_scratch_mention")
    return {"queries": len(queries), "variants": rows, "ts_stat_ms": round(ts_stat_ms, 1), "plans": plans,
            "lexical_matches_p50": percentile(matched, 50), "lexical_matches_p95": percentile(matched, 95),
            "activated_p50": percentile([len(a) for a in activated], 50)}


def run(sizes: tuple[int, ...] = SIZES, queries: int = 200, k: int = 10, keep: bool = False) -> dict:
    from django.conf import settings
    from django.test.utils import override_settings

    from memory.engine.projects import project_create
    from memory.engine.vector_index import space_for
    from memory.providers.minilm import MiniLMEmbedder

    rng, nrng = random.Random(7), np.random.default_rng(7)
    project_delete(SLUG)
    embedder = MiniLMEmbedder(batch_size=64, cache_size=0)
    pool = pool_build(embedder)
    query_texts = queries_build(set(pool.texts), queries)
    query_vectors = embedder.embed(query_texts)
    project = project_create(name="bench recall scale", slug=SLUG)
    space = space_for(embedder)
    state = State()
    results = []
    # Cache off: every recall embeds its query, as a new question would.
    with override_settings(MEMORY={**settings.MEMORY, "EMBEDDER": "minilm", "EMBED_CACHE_SIZE": 0}):
        for size in sizes:
            print(f"  recall scale: building {size} memories…", flush=True)
            build = grow(project, space, pool, state, size, rng, nrng)
            print(f"  built in {build['build_s']} s {build['steps']}", flush=True)
            entry = {"memories": size, "sessions": state.sessions, "edges": state.edges, "mentions": state.mentions,
                     **build, "presets": {}}
            recall_measure(project, query_texts[:10], "ripple", k)  # warm-up: caches, model, plans
            gc_settle()
            for preset in PRESETS:
                entry["presets"][preset] = recall_measure(project, query_texts, preset, k)
                print(f"  {size} {preset}: {json.dumps(entry['presets'][preset])}", flush=True)
            entry["sources"] = sources_measure(project, space, query_texts, query_vectors, 30)
            print(f"  {size} seed sources: {json.dumps(entry['sources'])}", flush=True)
            results.append(entry)
        print("  recall scale: diagnosis at the largest size…", flush=True)
        diagnosis = diagnose(project, query_texts[::5], k=k)
        print(f"  {json.dumps(diagnosis)}", flush=True)
    if not keep:
        project_delete(SLUG)
        index_rebuild()
    gc_server = gc_probe()
    print(f"  server-like process: {json.dumps(gc_server)}", flush=True)
    return {"gc_server": gc_server, "queries": len(query_texts), "k": k, "distinct_texts": len(pool.texts),
            "pool_embed_s": round(pool.embed_s, 1), "entities": ENTITY_COUNT, "sizes": results,
            "diagnosis": diagnosis}


if __name__ == "__main__":
    import argparse

    from . import setup_django

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--keep", action="store_true", help="leave the project in the bench database")
    parser.add_argument("--diagnose", action="store_true", help="only diagnose the project left by --keep")
    args = parser.parse_args()
    setup_django.setup(embedder="minilm")
    if args.diagnose:
        from memory.models import Project

        project = Project.objects.get(slug=SLUG)
        print(json.dumps(diagnose(project, queries_build(set(pool_texts()), args.queries)[::5]), indent=1))
        raise SystemExit
    print(json.dumps(run(tuple(int(s) for s in args.sizes.split(",")), args.queries, keep=args.keep), indent=1))
