"""Hard forget at scale: 10,000 memories forgotten with the whole cascade, in a project of 20,000.

The project is built like recall_scale's (sessions of 50–100 memories with their interactions, entity
mentions, about three edges each and a MiniLM-like vector), plus recall traces that returned memories
of both halves and change-log rows for every memory, so the cascade has everything to rewrite. Half
of the sessions are then forgotten in one hard forget (`forget_run`, one transaction), as the forget
job runs it; the job's other steps are timed apart: picking the distinctive strings, VACUUM of the
touched tables, the verification scan. The scan's result is part of the numbers (0 residues expected).

    python -m bench.forget_scale [--total 20000] [--forget 10000]
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import Counter

import numpy as np

from .setup_django import gc_settle

SLUG = "bench-forget-scale"
TARGET_SECONDS = 5.0


def _timed(fn, *args, **kwargs) -> tuple[float, object]:
    started = time.perf_counter()
    result = fn(*args, **kwargs)
    return round(time.perf_counter() - started, 2), result


def _history(project, rng: random.Random) -> int:
    """Change-log rows (one per memory, as ingest writes them) and recall traces touching both halves."""
    from django.db import transaction
    from django.utils import timezone

    from memory.models import GraphChange, Memory, RecallTrace

    now = timezone.now()
    memories = list(Memory.objects.filter(project=project).values_list("id", "session_id", "content"))
    with transaction.atomic():
        GraphChange.objects.bulk_create(
            (GraphChange(project=project, session_id=s, actor="engine", op="memory.created", object_type="memory",
                         object_id=m, after={"id": m, "content": c}, created_at=now) for m, s, c in memories),
            batch_size=5000)
        ids = [m for m, _, _ in memories]
        text = {m: c for m, _, c in memories}
        traces = []
        for i in range(200):
            picked = rng.sample(ids, 12)
            content = {m: text[m] for m in picked}
            traces.append(RecallTrace(project=project, actor="bench", query=f"bench query {i}", params={},
                                      ranking=[{"memory_id": m, "content": content[m]} for m in picked[:10]],
                                      context="\n".join(content[m] for m in picked[:10]),
                                      context_lines=[{"memory_id": m, "text": content[m]} for m in picked[:10]],
                                      touched_ids=picked, returned_ids=picked[:10]))
        RecallTrace.objects.bulk_create(traces)
    return len(memories)


def run(total: int = 20_000, forget: int = 10_000) -> dict:
    from django.db import connection
    from django.db.models import Count

    from administration.forgetting import VACUUMED_TABLES
    from memory.engine.maintenance.forget import ForgetFilter, forget_run, forget_selection
    from memory.engine.maintenance.verify import distinctive_strings, residues_scan
    from memory.engine.projects import project_create
    from memory.engine.vector_index import space_for
    from memory.models import Memory
    from memory.providers import get_embedder

    from . import recall_scale

    recall_scale.project_delete(SLUG)
    project = project_create(name="Bench forget", slug=SLUG)
    embedder = get_embedder()
    space = space_for(embedder)
    rng, nrng = random.Random(5), np.random.default_rng(5)
    build_s, _ = _timed(recall_scale.grow, project, space, recall_scale.pool_build(embedder),
                        recall_scale.State(), total, rng, nrng)
    changes = _history(project, rng)
    per_session = dict(Memory.objects.filter(project=project).values("session_id").annotate(n=Count("id"))
                       .values_list("session_id", "n"))
    sessions, picked = [], 0
    for session_id in sorted(per_session):  # whole sessions, up to about `forget` memories
        if picked >= forget:
            break
        sessions.append(session_id)
        picked += per_session[session_id]
    selection = ForgetFilter(session_ids=tuple(sessions))
    ids = forget_selection(project, selection, mode="hard")
    gc_settle()
    strings_s, strings = _timed(distinctive_strings, project, set(ids))
    forget_s, report = _timed(forget_run, project=project, actor="bench", selection=selection, mode="hard",
                              expect_memories=len(ids))
    started = time.perf_counter()
    with connection.cursor() as cursor:
        for table in VACUUMED_TABLES:
            cursor.execute(f"VACUUM (ANALYZE) {table}")
    vacuum_s = round(time.perf_counter() - started, 2)
    scan_s, scan = _timed(residues_scan, project, strings)
    result = {
        "total_memories": total, "forgotten_memories": len(ids), "sessions_forgotten": len(sessions),
        "change_rows_before": changes, "build_s": build_s, "forget_s": forget_s, "target_s": TARGET_SECONDS,
        "met": forget_s <= TARGET_SECONDS, "counts": report.counts, "distinctive_strings_s": strings_s,
        "vacuum_s": vacuum_s, "scan_s": scan_s, "scan": {"strings": scan.strings, "tables": scan.tables,
                                                            "residues": len(scan.residues),
                                                            "where": dict(Counter(f"{r['table']}.{r['column']}"
                                                                                  for r in scan.residues))},
        "remaining_memories": Memory.objects.filter(project=project).count(),
    }
    recall_scale.project_delete(SLUG)
    return result


def main() -> None:
    from .setup_django import setup

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--total", type=int, default=20_000)
    parser.add_argument("--forget", type=int, default=10_000)
    args = parser.parse_args()
    setup()
    print(json.dumps(run(args.total, args.forget), indent=2))


if __name__ == "__main__":
    main()
