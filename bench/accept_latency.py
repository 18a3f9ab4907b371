"""Accept-and-persist latency of POST /interactions/ against a real uvicorn server (queue mode)."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from .setup_django import BENCH_DB, percentile

ROOT = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(port: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("benchmark server did not start")


def run(requests: int = 1000) -> dict:
    from memory.engine.projects import project_create, session_create, token_issue
    from memory.models import Project

    Project.objects.filter(slug="bench-accept").delete()
    project = project_create(name="bench accept", slug="bench-accept")
    session = session_create(project=project, title="latency", actor="bench")
    raw = token_issue(project=project)[1]
    port = _free_port()
    env = {**os.environ, "CW_DB_NAME": BENCH_DB, "CW_INGEST_MODE": "queue"}
    server = subprocess.Popen([sys.executable, "-m", "uvicorn", "contextweaver_site.asgi:application", "--port",
                               str(port), "--log-level", "warning"], cwd=ROOT, env=env)
    try:
        _wait_for(port)
        conn = http.client.HTTPConnection("127.0.0.1", port)
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
    finally:
        server.terminate()
        server.wait(timeout=30)
    return {"requests": requests, "p50_ms": round(percentile(latencies, 50), 2),
            "p95_ms": round(percentile(latencies, 95), 2), "p99_ms": round(percentile(latencies, 99), 2)}
