"""Ingest throughput through the real write path: `interactions_accept` + `interaction_process`, inline.

Runs (RUNS): the hashing embedder and MiniLM one interaction per call, as an agent posting turn by
turn would send them, and MiniLM ten per call (the pipeline then embeds the batch in one model
call). Inline mode runs the whole pipeline (embed, extract, score, memory + vector + entities +
edges + supersede, change log, live events) right after the accept transaction commits, in the
same call. Sessions hold 50 interactions; four of them start with the demo scenarios (English and
Chinese, with their task), the rest are English prose and agent-memory sentences (bench/corpus.py),
half with a task. Every text is used once per run and each run has a fresh embedder, so its cache
never answers for a new interaction. Stage times come from wrapping the pipeline's functions
during the measured run (StageTimers); a cProfile of a few more interactions follows it.

Then queue mode as deployed (`run_workers`, WORKER_RUNS): the same sessions are accepted with their
jobs queued, and real worker processes drain the backlog, one with all cores for the model, then
two with one model thread each.
"""

from __future__ import annotations

import cProfile
import json
import pstats
import random
import time
from pathlib import Path

from .corpus import mixed_corpus
from .setup_django import gc_settle, percentile

DEMO_DATA = Path(__file__).resolve().parent.parent / "memory" / "demo" / "data"
SESSION_SIZE = 50
KINDS = ["user_input", "assistant_output", "tool_call", "tool_result", "observation", "agent_thought"]
TASKS = ["Plan a three-day trip to Kyoto within a 2500 EUR budget", "Fix the failing report export tests",
         "Document the standard library helpers the team relies on", ""]
# Stages timed (inclusive wall time) during the measured run: (label, module, attribute). Nested stages
# overlap (change-log rows are also written inside "memory + vector + …", and so on).
STAGES = [
    ("accept transaction (row + change log)", "memory.engine.ingest", "_accept_one"),
    ("process transaction (incl. commit and live events)", "memory.engine.pipeline", "interaction_process"),
    ("  dimension extraction", "memory.engine.pipeline", "extract_dimensions"),
    ("  similar memories of the session (exact kNN)", "memory.engine.pipeline", "nearest"),
    ("  scoring", "memory.engine.pipeline", "score"),
    ("  memory + vector + entities + edges + supersede", "memory.engine.pipeline", "_memory_create"),
    ("    entity linking", "memory.engine.pipeline", "mentions_link"),
    ("    edge candidates", "memory.engine.pipeline", "_candidates"),
    ("    edge inference", "memory.engine.pipeline", "infer"),
    ("    edges apply", "memory.engine.pipeline", "edges_apply"),
    ("    supersede", "memory.engine.pipeline", "supersede_apply"),
    ("change log rows (everywhere)", "memory.engine.changelog", "change_record"),
    ("live events after commit (everywhere)", "memory.engine.events", "publish"),
]


class StageTimers:
    """Wall time per stage, by wrapping module attributes for the duration of a `with` block.

    Also: the embedder's model calls, every SQL statement (Django's execute_wrapper) and every
    COMMIT. A function imported by name into several modules is wrapped wherever it was imported.
    """

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self._undo: list[tuple[object, str, object]] = []

    def _add(self, label: str, seconds: float) -> None:
        self.seconds[label] = self.seconds.get(label, 0.0) + seconds
        self.calls[label] = self.calls.get(label, 0) + 1

    def _wrap(self, label: str, original):
        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self._add(label, time.perf_counter() - t0)
        return timed

    def _patch(self, owner, name: str, label: str) -> None:
        original = getattr(owner, name)
        self._undo.append((owner, name, vars(owner).get(name, _MISSING)))
        setattr(owner, name, self._wrap(label, original))

    def __enter__(self) -> StageTimers:
        import importlib
        import sys

        from django.db import connections

        from memory.providers import get_embedder

        for label, module, name in STAGES:
            original = getattr(importlib.import_module(module), name)
            for mod in [m for key, m in list(sys.modules.items()) if key.startswith("memory.") and m]:
                if getattr(mod, name, None) is original:
                    self._patch(mod, name, label)
        self._patch(get_embedder(), "_embed_batch", "  embedding model calls")
        connection = connections["default"]
        connection.ensure_connection()
        self._patch(connection, "_commit", "COMMITs")

        def sql(execute, statement, params, many, context):
            t0 = time.perf_counter()
            try:
                return execute(statement, params, many, context)
            finally:
                self._add("SQL statements (everywhere)", time.perf_counter() - t0)

        self._sql = connection.execute_wrapper(sql)
        self._sql.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._sql.__exit__(*exc)
        for owner, name, original in reversed(self._undo):
            if original is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, original)

    def table(self, interactions: int, whole_seconds: float) -> list[dict]:
        order = [label for label, _, _ in STAGES]
        order.insert(3, "  embedding model calls")
        order += ["SQL statements (everywhere)", "COMMITs"]
        return [{"stage": label, "ms_per_interaction": round(self.seconds[label] * 1000 / interactions, 2),
                 "calls_per_interaction": round(self.calls[label] / interactions, 1),
                 "share": round(self.seconds[label] / whole_seconds, 3)}
                for label in order if label in self.seconds]


_MISSING = object()


def sessions_plan(count: int, seed: int = 0) -> list[tuple[str, list[tuple[str, str]]]]:
    """[(task, [(kind, content)…])…]: sessions of SESSION_SIZE, `count` interactions in all."""
    rng = random.Random(seed)
    scenarios = [json.loads(p.read_text()) for p in sorted(DEMO_DATA.glob("*.json"))]
    corpus = mixed_corpus(count, seed=21)
    rng.shuffle(corpus)
    stream = iter(corpus)
    plan = []
    while sum(len(items) for _, items in plan) < count:
        size = min(SESSION_SIZE, count - sum(len(items) for _, items in plan))
        index = len(plan)
        if index < len(scenarios):
            scenario = scenarios[index]
            items = [(i["kind"], i["content"]) for i in scenario["interactions"]][:size]
            task = scenario["task"]
        else:
            items, task = [], TASKS[index % len(TASKS)]
        while len(items) < size:
            items.append((rng.choice(KINDS), next(stream)))
        plan.append((task, items))
    return plan


def _ingest(project, plan, actor: str, title: str = "ingest", batch: int = 1) -> list[float]:
    """Post the plan session by session, `batch` interactions per call; returns each call's latency."""
    from memory.engine.ingest import InteractionInput, interactions_accept
    from memory.engine.projects import session_create

    latencies = []
    for number, (task, items) in enumerate(plan):
        session = session_create(project=project, title=f"{title} {number}", task=task, actor=actor)
        for start in range(0, len(items), batch):
            inputs = [InteractionInput(kind=kind, content=content) for kind, content in items[start:start + batch]]
            t0 = time.perf_counter()
            interactions_accept(session=session, items=inputs, actor=actor)
            latencies.append((time.perf_counter() - t0) * 1000)
    return latencies


def _cprofile_top(profile: cProfile.Profile, interactions: int, count: int = 12) -> list[dict]:
    """The functions with the most own time (cProfile's tottime), per interaction."""
    stats = pstats.Stats(profile).stats  # {(file, line, name): (cc, nc, tt, ct, callers)}
    top = sorted(stats.items(), key=lambda kv: -kv[1][2])[:count]
    root = str(Path(__file__).resolve().parent.parent) + "/"
    return [{"function": f"{file.replace(root, '').split('site-packages/')[-1]}:{line}({name})",
             "own_ms_per_interaction": round(v[2] * 1000 / interactions, 2),
             "calls_per_interaction": round(v[1] / interactions, 1)} for (file, line, name), v in top]


def run_one(embedder: str, count: int, profile_count: int = 0, batch: int = 1) -> dict:
    from django.conf import settings
    from django.db.models import Count
    from django.test.utils import override_settings

    from memory.engine.extraction import warm_up
    from memory.engine.projects import project_create
    from memory.models import Edge, Interaction, Memory
    from memory.providers import get_embedder

    from .recall_scale import project_delete

    slug = f"bench-ingest-{embedder}-{batch}"
    project_delete(slug)
    project = project_create(name=f"bench ingest {embedder}", slug=slug)
    plan = sessions_plan(count + profile_count)
    measured, profiled = _split(plan, count)
    with override_settings(MEMORY={**settings.MEMORY, "EMBEDDER": embedder, "INGEST_MODE": "inline"}):
        warm_up()
        get_embedder().embed(["warm up the model"])
        _ingest(project, [("", [("user_input", f"Warm-up note {i}: the hotel budget is {i}00 EUR.")
                               for i in range(5)])], actor="bench", title="warm-up")
        gc_settle()
        with StageTimers() as timers:
            started = time.perf_counter()
            latencies = _ingest(project, measured, actor="bench", batch=batch)
            seconds = time.perf_counter() - started
        counted = {"project": project, "session__title__startswith": "ingest "}
        interactions = sum(len(items) for _, items in measured)
        result = {
            "embedder": embedder, "batch": batch, "interactions": interactions, "sessions": len(measured),
            "seconds": round(seconds, 1), "per_s": round(interactions / seconds, 1),
            "p50_ms": round(percentile(latencies, 50), 1), "p95_ms": round(percentile(latencies, 95), 1),
            "p99_ms": round(percentile(latencies, 99), 1),
            "statuses": dict(Interaction.objects.filter(**counted).values("status").annotate(n=Count("id"))
                             .values_list("status", "n")),
            "memories": Memory.objects.filter(**counted).count(), "edges": Edge.objects.filter(**counted).count(),
            "stages": timers.table(interactions, seconds), "cprofile_interactions": 0, "cprofile": [],
        }
        if profiled:
            profiler = cProfile.Profile()
            profiler.enable()
            _ingest(project, profiled, actor="bench", title="profiled")
            profiler.disable()
            result["cprofile_interactions"] = sum(len(items) for _, items in profiled)
            result["cprofile"] = _cprofile_top(profiler, result["cprofile_interactions"])
    project_delete(slug)
    return result


def _split(plan, count: int):
    """The first `count` interactions are measured, the rest profiled (whole sessions)."""
    measured, seen = [], 0
    for task, items in plan:
        if seen >= count:
            break
        take = items[: count - seen]
        measured.append((task, take))
        seen += len(take)
    profiled = [(task, items) for task, items in plan[len(measured):]]
    return measured, profiled


def run_workers(embedder: str, count: int, workers: int, threads: int) -> dict:
    """Queue mode as deployed: accept a backlog (one interaction per call, jobs queued), then let
    `workers` real worker processes (`manage.py procrastinate worker --one-shot`, `threads` model
    threads each) drain it. Throughput is measured between the first and the last interaction
    processed, so the workers' start-up (loading the model) is left out."""
    import os
    import subprocess
    import sys

    from django.conf import settings
    from django.db import connection
    from django.db.models import Count, Max, Min
    from django.test.utils import override_settings

    from memory.engine.projects import project_create
    from memory.models import Edge, Interaction, Memory

    from .recall_scale import project_delete
    from .setup_django import BENCH_DB

    slug = f"bench-ingest-queue-{embedder}-{workers}"
    project_delete(slug)
    with connection.cursor() as cursor:  # jobs left by an interrupted run would be drained too
        cursor.execute("DELETE FROM procrastinate_jobs WHERE status IN ('todo', 'doing')")
    project = project_create(name=f"bench ingest queue {embedder} {workers}", slug=slug)
    plan, _ = _split(sessions_plan(count), count)
    with override_settings(MEMORY={**settings.MEMORY, "EMBEDDER": embedder, "INGEST_MODE": "queue"}):
        _ingest(project, plan, actor="bench")
    env = {**os.environ, "CW_DB_NAME": BENCH_DB, "CW_EMBEDDER": embedder, "CW_EMBED_THREADS": str(threads),
           "CW_INGEST_MODE": "queue"}
    root = Path(__file__).resolve().parent.parent
    started = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "manage.py", "procrastinate", "worker", "--queues", "ingest",
                               "--one-shot"], cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True) for _ in range(workers)]
    errors = [proc.communicate()[1][-500:] for proc in procs if proc.wait() != 0]
    wall = time.perf_counter() - started
    rows = Interaction.objects.filter(project=project)
    span = rows.aggregate(first=Min("processed_at"), last=Max("processed_at"))
    seconds = (span["last"] - span["first"]).total_seconds()
    interactions = rows.count()
    result = {
        "embedder": embedder, "workers": workers, "threads": threads, "interactions": interactions,
        "sessions": len(plan), "seconds": round(seconds, 1), "wall_s": round(wall, 1),
        "per_s": round((interactions - 1) / seconds, 1) if seconds > 0 else 0.0,
        "statuses": dict(rows.values("status").annotate(n=Count("id")).values_list("status", "n")),
        "memories": Memory.objects.filter(project=project).count(),
        "edges": Edge.objects.filter(project=project).count(), "errors": errors,
    }
    project_delete(slug)
    return result


RUNS = (("hashing", 1), ("minilm", 1), ("minilm", 10))
# Queue mode: (workers, model threads each). Two cores here: one worker with both, or two with one each.
WORKER_RUNS = ((1, 0), (2, 1))


def run(count: int = 1000, profile_count: int = 100) -> dict:
    """hashing and MiniLM one interaction per call (MiniLM also profiled), then MiniLM 10 per call;
    then MiniLM in queue mode, drained by one and by two workers."""
    out = {}
    for embedder, batch in RUNS:
        key = f"{embedder}-{batch}"
        print(f"  ingest with the {embedder} embedder, {batch} per call…", flush=True)
        out[key] = run_one(embedder, count, profile_count if key == "minilm-1" else 0, batch=batch)
        summary = {k: v for k, v in out[key].items() if k not in ("stages", "cprofile")}
        print(f"  {json.dumps(summary)}", flush=True)
    for workers, threads in WORKER_RUNS:
        key = f"queue-minilm-{workers}w"
        print(f"  ingest in queue mode, MiniLM, {workers} worker(s)…", flush=True)
        out[key] = run_workers("minilm", count, workers, threads)
        print(f"  {json.dumps(out[key])}", flush=True)
    return out


if __name__ == "__main__":
    import argparse

    from . import setup_django

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--profile", type=int, default=100, help="interactions profiled after the measurement")
    parser.add_argument("--workers", type=int, default=0, help="only the queue mode, drained by this many workers")
    parser.add_argument("--threads", type=int, default=0, help="model threads per worker (0: all cores)")
    args = parser.parse_args()
    setup_django.setup(embedder="minilm")
    if args.workers:
        print(json.dumps(run_workers("minilm", args.count, args.workers, args.threads), indent=1))
        raise SystemExit
    print(json.dumps(run(args.count, args.profile), indent=1))
