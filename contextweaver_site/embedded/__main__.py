"""Command line for the embedded server, usable before Django is configured.

    python -m contextweaver_site.embedded start|stop|status
    python -m contextweaver_site.embedded run -- CMD ...   # hold the server while CMD runs
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from . import server


def _run(command: list[str]) -> int:
    """Run CMD while holding the server; forward SIGINT/SIGTERM so CMD can shut down cleanly."""
    if not command:
        print("usage: python -m contextweaver_site.embedded run -- CMD ...", file=sys.stderr)
        return 2
    with server.hold():
        child = subprocess.Popen(command)
        forward = lambda signum, _frame: child.send_signal(signum)  # noqa: E731
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, forward)
        return child.wait()


def main(argv: list[str]) -> int:
    action = argv[0] if argv else "status"
    if action == "start":
        print(f"embedded PostgreSQL running, socket in {server.ensure_running()}")
    elif action == "stop":
        print("embedded PostgreSQL stopped" if server.stop() else "embedded PostgreSQL was not running")
    elif action == "status":
        running = server.is_running()
        print(f"embedded PostgreSQL {'running' if running else 'stopped'} (data dir {server.data_dir()})")
        return 0 if running else 3
    elif action == "run":
        rest = argv[1:]
        return _run(rest[1:] if rest[:1] == ["--"] else rest)
    else:
        print(f"unknown action {action!r}; use start, stop, status or run -- CMD", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main(sys.argv[1:]))
