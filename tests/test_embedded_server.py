"""The embedded PostgreSQL lifecycle, on a throw-away cluster of its own (real processes)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from contextweaver_site.embedded import server

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def cluster_dir():
    path = ROOT / "var" / f"test-cluster-{os.getpid()}"
    yield path
    server.destroy(path)
    for leftover in path.parent.glob(f".{path.name}*"):
        shutil.rmtree(leftover, ignore_errors=True) if leftover.is_dir() else leftover.unlink()


def _cli(cluster: Path, *args: str, **kwargs) -> subprocess.Popen:
    env = {**os.environ, "CW_PGDATA": str(cluster)}
    return subprocess.Popen([sys.executable, "-m", "contextweaver_site.embedded", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kwargs)


def _postmasters(cluster: Path) -> int:
    out = subprocess.run(["pgrep", "-f", f"postgres -D {cluster}"], capture_output=True, text=True).stdout
    return len(out.split())


def test_racing_processes_start_one_server(cluster_dir):
    procs = [_cli(cluster_dir, "start") for _ in range(4)]
    outputs = [p.communicate(timeout=180)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    assert server.is_running(cluster_dir)
    assert _postmasters(cluster_dir) == 1
    with psycopg.connect(host=str(server.socket_dir(cluster_dir)), user="postgres", dbname="contextweaver") as conn:
        assert conn.execute("SELECT name FROM pg_available_extensions WHERE name = 'vector'").fetchone()


def test_holder_does_not_stop_a_server_it_did_not_start(cluster_dir):
    server_was_running = server.is_running(cluster_dir)
    holder = _cli(cluster_dir, "run", "--", sys.executable, "-c", "print('inside')")
    assert "inside" in holder.communicate(timeout=60)[0]
    assert server_was_running and server.is_running(cluster_dir)


def test_holder_that_started_the_server_stops_it(cluster_dir):
    server.stop(cluster_dir)
    holder = _cli(cluster_dir, "run", "--", sys.executable, "-c", "print('inside')")
    out = holder.communicate(timeout=120)[0]
    assert holder.returncode == 0 and "inside" in out
    assert not server.is_running(cluster_dir)


def test_killed_holder_leaves_server_that_stop_cleans_up(cluster_dir):
    holder = _cli(cluster_dir, "run", "--", sys.executable, "-c", "import time; time.sleep(60)", start_new_session=True)
    deadline = time.monotonic() + 60
    while not server.is_running(cluster_dir) and time.monotonic() < deadline:
        time.sleep(0.2)
    os.killpg(holder.pid, signal.SIGKILL)  # no exit hooks run
    holder.wait(timeout=10)
    assert server.is_running(cluster_dir), "a SIGKILLed holder cannot stop the server"
    # The stale lease of the dead pid does not stop a later holder from owning a clean stop.
    assert server.stop(cluster_dir) is True
    assert _postmasters(cluster_dir) == 0
    again = _cli(cluster_dir, "run", "--", sys.executable, "-c", "print('ok')")
    assert "ok" in again.communicate(timeout=120)[0]
    assert not server.is_running(cluster_dir)


def test_status_reports_stopped_with_exit_code(cluster_dir):
    status = _cli(cluster_dir, "status")
    out = status.communicate(timeout=30)[0]
    assert status.returncode == 3 and "stopped" in out


def test_long_data_dir_uses_short_socket_folder(tmp_path):
    long_dir = tmp_path / ("x" * 120) / "pgdata"
    sock = server.socket_dir(long_dir)
    assert sock != long_dir and len(str(sock / ".s.PGSQL.5432")) <= server.MAX_SOCKET_PATH
