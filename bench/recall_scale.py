"""Recall latency at scale: one project grown to 1k, 10k and 100k synthetic memories.

The project looks like a real one: sessions of 50–100 memories, each memory with its source
interaction, 1–2 entity mentions (entities found by the real extractor in the texts, padded to
500), about three edges (next_in_session plus two dependency edges of mixed relations to earlier
memories of the session, some approved, a few rejected; in every other session, a transcript of two
people taking turns, a next_by_speaker edge to the turn before last as well), search text from the real segmenter and
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
MAX_K = 100  # memory_settings.MAX_RECALL_K: the "k honoured up to 100"
MAX_K_QUERIES = 100
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


def project_delete(slug: str) -> bool:
    """Delete a benchmark project quickly: raw deletes for the big tables, the ORM for the rest.
    Returns whether there was one."""
    from django.db import connection

    from memory.models import Memory, NodePosition, Project

    project = Project.objects.filter(slug=slug).first()
    if project is None:
        return False
    through = Memory.sources.through._meta.db_table
    with connection.cursor() as cursor:
        for sql in (
            "DELETE FROM memory_edge WHERE project_id = %s",
            "DELETE FROM memory_entitymention WHERE memory_id IN (SELECT id FROM memory_memory WHERE project_id = %s)",
            "DELETE FROM memory_memoryembedding WHERE project_id = %s",
            f"DELETE FROM {through} WHERE memory_id IN (SELECT id FROM memory_memory WHERE project_id = %s)",
            f"DELETE FROM {NodePosition._meta.db_table} WHERE memory_id IN "
            "(SELECT id FROM memory_memory WHERE project_id = %s)",
            "DELETE FROM memory_memory WHERE project_id = %s",
            "DELETE FROM memory_interaction WHERE project_id = %s",
            "DELETE FROM memory_graphchange WHERE project_id = %s",
            "DELETE FROM memory_recalltrace WHERE project_id = %s",
        ):
            cursor.execute(sql, [project.pk])
    project.delete()
    return True


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
        for number, (session, size) in enumerate(zip(sessions, sizes, strict=True), start=state.sessions):
            members = memories[start:start + size]
            start += size
            transcript = number % 2 == 1  # every other session is two people talking, turn about
            for i, child in enumerate(members[1:], start=1):
                edges.append(Edge(project=project, session=session, source_id=members[i - 1].pk, target_id=child.pk,
                                  relation="next_in_session", origin="rule", rationale="adjacent in the session"))
                if transcript and i >= 2:
                    edges.append(Edge(project=project, session=session, source_id=members[i - 2].pk,
                                      target_id=child.pk, relation="next_by_speaker", origin="rule",
                                      rationale="the speaker's previous turn"))
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
    # The engine caches term statistics for minutes; a project grown tenfold in a minute needs them now.
    from memory.engine.recall.terms import forget_statistics

    forget_statistics()
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
gc.unfreeze()  # the ASGI module froze what it had imported: measure the pause that freeze avoids
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
        "returned_mean": round(sum(r["items"] for r in rows) / len(rows), 1),
        "sql_statements_mean": round(sum(r["sql_count"] for r in rows) / len(rows), 1),
        "sql_p50_ms": pct("sql_ms", 50), "python_p50_ms": round(percentile([r["wall_ex_embed"] - r["sql_ms"]
                                                                               for r in rows], 50), 2),
        "empty": sum(1 for r in rows if not r["items"]),
        "full_gcs": len(watch.pauses), "full_gc_max_ms": round(max(watch.pauses, default=0.0), 1),
        "slowest": [{"query": r["query"][:80], "ms": round(r["total_ex_embed"], 1), "seeds": r["seeds"],
                     "ripple": r["ripple"], "rank": r["rank"]} for r in slowest],
    }


def _fragments(scope, space, text: str, vector, pool_size: int) -> dict:
    from memory.engine.recall.seeds import entity_fragment, lexical_fragment, vector_fragment

    return {
        "vector": vector_fragment(scope, space, vector, pool_size),
        "lexical": lexical_fragment(scope, text, pool_size),
        "entities": entity_fragment(scope, text, pool_size),
    }


def sources_measure(project, space, queries: list[str], vectors: list, pool_size: int) -> dict:
    """Each seed source alone (the vector precomputed), to see whether one grows with the project.

    The entity source's time includes finding the entities the query names (inside its statement).
    """
    from memory.engine.recall.seeds import Scope, rankings

    scope = Scope(project, None, ("active",), False)
    out = {}
    for name in ("vector", "lexical", "entities"):
        latencies = []
        for text, vector in zip(queries, vectors, strict=True):
            t0 = time.perf_counter()
            rankings([_fragments(scope, space, text, vector, pool_size)[name]])
            latencies.append((time.perf_counter() - t0) * 1000)
        out[name] = {"p50_ms": round(percentile(latencies, 50), 2), "p95_ms": round(percentile(latencies, 95), 2)}
    return out


def diagnose(project, space, queries: list[str], vectors: list, pool_size: int = 30) -> dict:
    """What the seed statement does at this size: rows the full-text part must rank, and plans.

    The slowest query's combined seed statement is kept with EXPLAIN ANALYZE, as the engine runs it.
    """
    from django.db import connection

    from memory.engine.recall.seeds import Scope, lexical_query, rankings
    from memory.engine.recall.terms import scope_rows

    scope = Scope(project, None, ("active",), False)
    latencies, matched = [], []
    for text, vector in zip(queries, vectors, strict=True):
        fragments = [f for f in _fragments(scope, space, text, vector, pool_size).values() if f is not None]
        t0 = time.perf_counter()
        rankings(fragments)
        latencies.append((time.perf_counter() - t0) * 1000)
        raw = lexical_query(text, scope_rows(project.pk))
        if raw:
            with connection.cursor() as cursor:
                cursor.execute("SELECT count(*) FROM memory_memory WHERE project_id = %s AND "
                               "search_vector @@ to_tsquery('simple', %s)", [project.pk, raw])
                matched.append(cursor.fetchone()[0])
    slowest = max(range(len(queries)), key=latencies.__getitem__)
    plan = _seed_plan(scope, space, queries[slowest], vectors[slowest], pool_size)
    return {"queries": len(queries), "seeds_p50_ms": round(percentile(latencies, 50), 2),
            "seeds_p95_ms": round(percentile(latencies, 95), 2),
            "lexical_matches_p50": percentile(matched, 50), "lexical_matches_p95": percentile(matched, 95),
            "plans": {"combined": {"query": queries[slowest], "plan": plan}}}


def remeasure(project, queries: int, k: int = 10) -> dict:
    """Measure a kept project again (after an engine change) without rebuilding it."""
    from django.conf import settings
    from django.test.utils import override_settings

    from memory.engine.vector_index import space_for
    from memory.providers.minilm import MiniLMEmbedder

    embedder = MiniLMEmbedder(batch_size=64, cache_size=0)
    query_texts = queries_build(set(pool_texts()), queries)
    query_vectors = embedder.embed(query_texts)
    space = space_for(embedder)
    out: dict = {"presets": {}}
    with override_settings(MEMORY={**settings.MEMORY, "EMBEDDER": "minilm", "EMBED_CACHE_SIZE": 0}):
        recall_measure(project, query_texts[:10], "ripple", k)
        gc_settle()
        for preset in PRESETS:
            out["presets"][preset] = recall_measure(project, query_texts, preset, k)
            print(f"  {preset}: p50 {out['presets'][preset]['p50_ms']} p95 {out['presets'][preset]['p95_ms']}",
                  flush=True)
        out["sources"] = sources_measure(project, space, query_texts, query_vectors, 30)
        out["diagnosis"] = diagnose(project, space, query_texts[::5], query_vectors[::5])
    return out


def _seed_plan(scope, space, text: str, vector, pool_size: int) -> str:
    from django.db import connection

    from memory.engine.recall import seeds

    captured: list[tuple[str, list]] = []

    def capture(execute, statement, params, many, context):
        captured.append((statement, params))
        return execute(statement, params, many, context)

    with connection.execute_wrapper(capture):
        seeds.rankings([f for f in _fragments(scope, space, text, vector, pool_size).values() if f is not None])
    statement, params = captured[-1]
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, COSTS OFF) " + statement, params)
        return "\n".join(r[0] for r in cursor.fetchall())


def run(sizes: tuple[int, ...] = SIZES, queries: int = 200, k: int = 10, keep: bool = False) -> dict:
    from django.conf import settings
    from django.test.utils import override_settings

    from memory.engine.projects import project_create
    from memory.engine.vector_index import space_for
    from memory.providers.minilm import MiniLMEmbedder

    rng, nrng = random.Random(7), np.random.default_rng(7)
    if project_delete(SLUG):  # one left by --keep: its dead index entries would slow the small sizes
        index_rebuild()
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
            # The largest k a request may ask for: every preset then starts from k seeds, and ripple spreads from all.
            entry["presets_max_k"] = {}
            for preset in PRESETS:
                entry["presets_max_k"][preset] = recall_measure(project, query_texts[:MAX_K_QUERIES], preset, MAX_K)
                print(f"  {size} {preset} k={MAX_K}: {json.dumps(entry['presets_max_k'][preset])}", flush=True)
            entry["sources"] = sources_measure(project, space, query_texts, query_vectors, 30)
            print(f"  {size} seed sources: {json.dumps(entry['sources'])}", flush=True)
            results.append(entry)
        print("  recall scale: diagnosis at the largest size…", flush=True)
        diagnosis = diagnose(project, space, query_texts[::5], query_vectors[::5])
        print(f"  {json.dumps(diagnosis)}", flush=True)
    if not keep:
        project_delete(SLUG)
        index_rebuild()
    gc_server = gc_probe()
    print(f"  server-like process: {json.dumps(gc_server)}", flush=True)
    return {"gc_server": gc_server, "queries": len(query_texts), "k": k, "max_k": MAX_K,
            "max_k_queries": min(MAX_K_QUERIES, len(query_texts)), "distinct_texts": len(pool.texts),
            "pool_embed_s": round(pool.embed_s, 1), "entities": ENTITY_COUNT, "sizes": results,
            "diagnosis": diagnosis}


if __name__ == "__main__":
    import argparse

    from . import setup_django

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--keep", action="store_true", help="leave the project in the bench database")
    parser.add_argument("--diagnose", action="store_true",
                        help="build nothing: measure and diagnose the project left by --keep")
    args = parser.parse_args()
    setup_django.setup(embedder="minilm")
    if args.diagnose:
        from memory.models import Project

        print(json.dumps(remeasure(Project.objects.get(slug=SLUG), args.queries), indent=1))
        raise SystemExit
    print(json.dumps(run(tuple(int(s) for s in args.sizes.split(",")), args.queries, keep=args.keep), indent=1))
