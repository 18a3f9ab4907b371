"""Real parts for the live-view tests: a uvicorn server, a redis-server, writer subprocesses, sockets.

No test here; the test_live_* modules import these fixtures. Everything runs against the test
database pytest-django created, so the server and the writers (separate processes) are pointed
at it with CW_DB_NAME, and tests use transactional databases so their rows are committed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from contextweaver_site.serve import uvicorn_command

BASE_DIR = Path(settings.BASE_DIR)
READY_LINE = "live: listening on cw_changes"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_port(port: int, process: subprocess.Popen, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.1)
    return False


def child_env(**extra: str) -> dict[str, str]:
    """Environment of a server or writer process: test settings on this run's test database."""
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "CW_LIVE_TRANSPORT")}
    env.update({"DJANGO_SETTINGS_MODULE": "contextweaver_site.settings.test",
                "CW_DB_NAME": connection.settings_dict["NAME"], "CW_EMBEDDER": "hashing",
                "PYTHONUNBUFFERED": "1", "LOG_LEVEL": "INFO", "CW_DB_POOL_SIZE": "10"})
    env.update(extra)
    return env


@dataclass
class Server:
    port: int
    process: subprocess.Popen
    log: Path

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def ws_url(self, session_id: int) -> str:
        return f"ws://127.0.0.1:{self.port}/ws/sessions/{session_id}/"

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


def start_server(tmp_dir: Path, *, wait_for_listener: bool, **env: str) -> Server:
    port = free_port()
    log = tmp_dir / f"uvicorn-{port}.log"
    command = [*uvicorn_command(port=port, log_level="info"), "--lifespan", "on"]
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=BASE_DIR, env=child_env(**env), stdout=out, stderr=subprocess.STDOUT)
    server = Server(port, process, log)
    if not _wait_port(port, process, timeout=120):
        stop_process(process)
        raise RuntimeError(f"uvicorn did not start:\n{server.log_text()}")
    if wait_for_listener:
        deadline = time.monotonic() + 30
        while READY_LINE not in server.log_text():
            if time.monotonic() > deadline:
                stop_process(process)
                raise RuntimeError(f"the change listener did not start:\n{server.log_text()}")
            time.sleep(0.1)
    return server


def stop_process(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def live_server_process(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[Server]:
    """uvicorn with the embedded default: in-memory channel layer + the PostgreSQL NOTIFY bridge."""
    with django_db_blocker.unblock():
        server = start_server(tmp_path_factory.mktemp("live"), wait_for_listener=True)
    yield server
    stop_process(server.process)


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory) -> Iterator[str]:
    """A private redis-server on a free port in a temporary directory, stopped afterwards."""
    binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    if not os.path.exists(binary):
        reason = "redis-server is not installed (scripts/system-deps.sh installs it)"
        print(f"SKIP: {reason}")
        pytest.skip(reason)
    port = free_port()
    folder = tmp_path_factory.mktemp("redis")
    with (folder / "redis.log").open("wb") as out:
        process = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder), "--save", "",
             "--appendonly", "no", "--daemonize", "no", "--protected-mode", "yes"],
            stdout=out, stderr=subprocess.STDOUT,
        )
    if not _wait_port(port, process, timeout=20):
        stop_process(process)
        raise RuntimeError(f"redis-server did not start: {(folder / 'redis.log').read_text()}")
    yield f"redis://127.0.0.1:{port}/0"
    stop_process(process)


@pytest.fixture(scope="module")
def redis_server_process(django_db_setup, django_db_blocker, redis_url, tmp_path_factory) -> Iterator[Server]:
    """uvicorn with REDIS_URL: channels-redis layer, every process publishes directly."""
    with django_db_blocker.unblock():
        server = start_server(tmp_path_factory.mktemp("live-redis"), wait_for_listener=False, REDIS_URL=redis_url)
    yield server
    stop_process(server.process)


def run_writer(code: str, **env: str) -> subprocess.CompletedProcess:
    """Run Python in another process (`manage.py shell -c`) against the test database."""
    result = subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=BASE_DIR, env=child_env(**env),
                            capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def session_cookie(user) -> str:
    client = Client()
    client.force_login(user)
    return client.cookies[settings.SESSION_COOKIE_NAME].value


def open_socket(server: Server, session_id: int, cookie: str | None) -> ClientConnection:
    headers = {"Cookie": f"{settings.SESSION_COOKIE_NAME}={cookie}"} if cookie else {}
    return connect(server.ws_url(session_id), origin=server.origin, additional_headers=headers, open_timeout=20,
                   max_size=2**24)


def close_code(ws: ClientConnection, timeout: float = 10) -> int | None:
    """The code the server closed with (the socket is accepted first, then closed)."""
    try:
        while True:
            ws.recv(timeout=timeout)
    except ConnectionClosed as closed:
        return closed.rcvd.code if closed.rcvd else None


def receive_until(ws: ClientConnection, done: Callable[[list[dict[str, Any]]], bool], timeout: float = 30
                  ) -> list[dict[str, Any]]:
    """Messages received until done(messages) holds; fails with what arrived after `timeout` seconds."""
    messages: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while not done(messages):
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"timed out; received {json.dumps(messages)[:3000]}")
        try:
            messages.append(json.loads(ws.recv(timeout=left)))
        except TimeoutError:
            continue
    return messages


def change_ids(messages: list[dict[str, Any]]) -> list[int]:
    return [c["id"] for m in messages if m["type"] == "changes" for c in m["changes"]]


def caught_up(messages: list[dict[str, Any]]) -> bool:
    return any(m["type"] == "caught_up" for m in messages)


def catch_up(ws: ClientConnection, after: int, timeout: float = 30) -> list[dict[str, Any]]:
    ws.send(json.dumps({"type": "catch_up", "after": after}))
    return receive_until(ws, caught_up, timeout)
