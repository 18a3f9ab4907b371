"""How ContextWeaver's ASGI app is served by uvicorn: one command line for the demo, tests and benchmarks.

uvicorn's own protections are set here (docs/production.md has the reverse proxy in front of it):
idle keep-alive connections close after KEEP_ALIVE_SECONDS; beyond LIMIT_CONCURRENCY open
connections and tasks uvicorn answers 503 at once instead of queueing without bound; a slow body is
cut off by the app itself (request_guard.py, REQUEST_BODY_TIMEOUT).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent.parent
KEEP_ALIVE_SECONDS = 5
LIMIT_CONCURRENCY = int(os.environ.get("CW_LIMIT_CONCURRENCY", "1000"))


def uvicorn_command(*, host: str = "127.0.0.1", port: int, log_level: str = "warning") -> list[str]:
    return [sys.executable, "-m", "uvicorn", "contextweaver_site.asgi:application", "--host", host,
            "--port", str(port), "--log-level", log_level, "--timeout-keep-alive", str(KEEP_ALIVE_SECONDS),
            "--limit-concurrency", str(LIMIT_CONCURRENCY), "--timeout-graceful-shutdown", "10"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_serving(url: str, process: subprocess.Popen, *, timeout: float = 120) -> bool:
    """True once `url` answers; False if the process died or the time ran out."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return True
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                return False
            time.sleep(0.3)


@contextlib.contextmanager
def running_server(env: dict[str, str], *, log: IO | None = None) -> Iterator[str]:
    """A uvicorn process with this environment, on a free port; yields its base URL, stops it after."""
    port = free_port()
    process = subprocess.Popen(uvicorn_command(port=port), cwd=ROOT, env=env, stdout=log,
                               stderr=subprocess.STDOUT if log else None)
    url = f"http://127.0.0.1:{port}"
    try:
        if not wait_until_serving(url + "/login/", process):
            raise RuntimeError(f"the server did not start (exit code {process.poll()})"
                               + (f"; see {log.name}" if log and hasattr(log, "name") else ""))
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
