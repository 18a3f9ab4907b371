"""Accept-and-persist latency of POST /interactions/ against a real uvicorn server (queue mode)."""

from __future__ import annotations

import http.client
import json
import os
import time
from urllib.parse import urlsplit

from contextweaver_site.serve import running_server

from .setup_django import BENCH_DB, percentile


def run(requests: int = 1000) -> dict:
    from memory.engine.projects import project_create, session_create, token_issue
    from memory.models import Project

    Project.objects.filter(slug="bench-accept").delete()
    project = project_create(name="bench accept", slug="bench-accept")
    session = session_create(project=project, title="latency", actor="bench")
    raw = token_issue(project=project)[1]
    env = {**os.environ, "CW_DB_NAME": BENCH_DB, "CW_INGEST_MODE": "queue"}
    with running_server(env) as url:
        conn = http.client.HTTPConnection(urlsplit(url).hostname, urlsplit(url).port)
        path = f"/api/projects/{project.slug}/sessions/{session.pk}/interactions/"
        headers = {"Authorization": f"Bearer {raw}", "Content-Type": "application/json"}
        latencies = []
        for i in range(requests + 20):
            body = json.dumps({"kind": "user_input", "content": f"Interaction {i}: the budget is {i} EUR per night"})
            t0 = time.perf_counter()
            conn.request("POST", path, body=body, headers=headers)
            response = conn.getresponse()
            response.read()
            elapsed = (time.perf_counter() - t0) * 1000
            if response.status != 202:
                raise RuntimeError(f"unexpected status {response.status}")
            if i >= 20:  # warm-up excluded
                latencies.append(elapsed)
    return {"requests": requests, "p50_ms": round(percentile(latencies, 50), 2),
            "p95_ms": round(percentile(latencies, 95), 2), "p99_ms": round(percentile(latencies, 99), 2)}
