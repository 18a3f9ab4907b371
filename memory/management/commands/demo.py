"""manage.py demo: migrate, load the demo sessions, print a login, serve, and keep an agent streaming."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from contextweaver_site.serve import uvicorn_command
from memory.demo.bootstrap import DemoLogin, demo_logins, demo_project, demo_token, missing_scenarios, scenario_load
from memory.mirror.targets import configured_name


class Command(BaseCommand):
    help = ("Run the demo: database, demo data, web server, queue worker, a simulated agent, and the graph mirror "
            "when NEO4J_URI or CW_MIRROR_FALKORDB_URL is set.")

    def add_arguments(self, parser):
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--load-only", action="store_true", help="Prepare data and exit")
        parser.add_argument("--no-agent", action="store_true", help="Do not start the simulated agent")
        parser.add_argument("--no-large", action="store_true",
                            help="Do not build the large session (several thousand memories) in the background")
        parser.add_argument("--interval", type=float, default=4.0, help="Seconds between simulated interactions")

    def handle(self, *args, host, port, load_only, no_agent, no_large, interval, **options):
        self.stdout.write("Migrating the database…")
        call_command("migrate", interactive=False, verbosity=0)
        project = demo_project()
        token = demo_token(project)
        logins = demo_logins(project)
        self._load(project)
        if load_only:
            self._banner(host, port, logins, token, project.slug)
            return
        self._serve(host, port, token, project.slug, no_agent, no_large, interval, logins)

    def _load(self, project) -> None:
        todo = missing_scenarios(project)
        if not todo:
            self.stdout.write("Demo sessions already loaded.")
            return
        total = sum(len(s.interactions) for s in todo)
        self.stdout.write(f"Loading {len(todo)} demo sessions ({total} interactions) through the pipeline…")
        with tqdm(total=total, unit="interaction") as bar:
            for scenario in todo:
                scenario_load(project, scenario, progress=bar.update)

    def _banner(self, host, port, logins: list[DemoLogin], token, slug) -> None:
        line = "=" * 64
        accounts = "".join(f" {login.role + ':':9} {login.username:14} password {login.password}\n" for login in logins)
        self.stdout.write(self.style.SUCCESS(
            f"\n{line}\n ContextWeaver demo: http://{host}:{port}/\n log in as (passwords kept in var/):\n{accounts}"
            f" API docs: http://{host}:{port}/api/docs/\n agent token for project '{slug}':\n   {token}\n{line}\n"
        ))

    def _serve(self, host, port, token, slug, no_agent, no_large, interval, logins: list[DemoLogin]) -> None:
        manage = [sys.executable, str(Path(settings.BASE_DIR) / "manage.py")]
        token_file = Path(settings.VAR_DIR) / "demo_token"
        commands = {
            "web": uvicorn_command(host=host, port=port),
            "worker": [*manage, "procrastinate", "worker", "--queues", "ingest,maintenance"],
        }
        if configured_name():  # NEO4J_URI or CW_MIRROR_FALKORDB_URL set: keep the graph mirror following too
            commands["mirror"] = [*manage, "graph_mirror"]
        if not no_agent:
            commands["agent"] = [*manage, "simulate_agent", "--base-url", f"http://{host}:{port}",
                                 "--token-file", str(token_file), "--project", slug, "--live", "--language", "both",
                                 "--loops", "0", "--interval", str(interval)]
        if not no_large:  # after the login is printed, so the first login is not delayed
            commands["large"] = [*manage, "demo_large_session", "--project", slug, "--base-url", f"http://{host}:{port}"]
        children: dict[str, subprocess.Popen] = {}
        stopping = False

        def stop(signum, _frame):
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        # From another shell: kill -INT "$(cat var/demo.pid)" stops the demo as Ctrl+C does (README).
        _pid_file().write_text(f"{os.getpid()}\n")
        children["web"] = subprocess.Popen(commands.pop("web"))
        self.stdout.write("Starting the web server (loading the embedding model)…")
        if not _wait_for_port(host, port, children["web"]):
            self._stop(children)
            raise CommandError(f"the web server did not start on {host}:{port}; is the port in use?")
        for name, command in commands.items():
            children[name] = subprocess.Popen(command)
        self._banner(host, port, logins, token, slug)
        self.stdout.write("Press Ctrl+C to stop.")
        try:
            while not stopping:
                for name, child in children.items():
                    if child.poll() is not None and name not in ("agent", "large"):
                        self.stderr.write(f"{name} exited with code {child.returncode}; stopping the demo.")
                        stopping = True
                time.sleep(0.5)
        finally:
            self._stop(children)

    def _stop(self, children: dict[str, subprocess.Popen]) -> None:
        for child in children.values():
            if child.poll() is None:
                child.send_signal(signal.SIGINT)
        deadline = time.monotonic() + 15
        for child in children.values():
            try:
                child.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.kill()
        _pid_file().unlink(missing_ok=True)
        self.stdout.write("Demo stopped.")


def _pid_file() -> Path:
    return Path(settings.VAR_DIR) / "demo.pid"


def _wait_for_port(host: str, port: int, server: subprocess.Popen, timeout: float = 120) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and server.poll() is None:
        try:
            with socket.create_connection((host, port), timeout=1):
                return True
        except OSError:
            time.sleep(0.5)
    return False
