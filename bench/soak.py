"""`make soak`: many agents post at once while the LLM misbehaves and the database restarts; nothing may be lost.

    python -m bench.soak                                   20 agents × 250 interactions (8-10 minutes here)
    python -m bench.soak --agents 4 --per-agent 50         a quick run (the report says it was reduced)
    python -m bench.soak --failure-rate 0 --restart-at 0   no LLM failures, no database restart
    python -m bench.soak --keep                            leave the soak cluster running for a look
    python -m bench.soak --report                          rewrite docs/reliability.md from the last figures

What runs: a throw-away PostgreSQL cluster of its own (var/soak-pgdata, so restarting it disturbs no
test run sharing the embedded server; `--shared-server` uses a soak database on that server instead),
migrated, with one project, one session per agent and one token; a local OpenAI-compatible server
(bench/soak_openai.py) whose chat answers fail, hang past the client timeout or answer validly at
random; uvicorn and procrastinate workers in queue mode pointed at both; agent threads
(bench/soak_agents.py) that retry with the same idempotency keys. Once, after `--restart-at` of the
interactions are accepted, the database is stopped and started again; the server and the workers must
recover on their own. After the posts, the queue drains; then every stored row is checked against
what was sent. The figures go to docs/reliability.md; logs (the server's, the workers', PostgreSQL's) to
var/artifacts/soak-*.log. The exit code is 1 if anything was lost, stored twice or with other content,
refused, left pending or failed, if the server answered a 500 (or a 503 for an interaction it had
stored), if the server or a worker died, or if idle workers no longer start a new job at once after
the run.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import fcntl
import functools
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "var" / "artifacts"
SOAK_PGDATA = ROOT / "var" / "soak-pgdata"
SOAK_DB = "contextweaver_soak"
PROJECT_SLUG = "soak"
DOC = ROOT / "docs" / "reliability.md"
RESULTS = ARTIFACTS / "soak-results.json"  # the figures docs/reliability.md shows (runs that write it)
LAST_RESULTS = ARTIFACTS / "soak-results-last.json"  # the last run's, --no-doc runs included
RUN_LOCK = ROOT / "var" / ".soak.lock"
HISTORY = ARTIFACTS / "soak-history.jsonl"  # one line per run: failures that come and go show up here
LOG_STAMP = len("12:34:56.789 ")  # Child writes each log line after this timestamp
CHAINED = ("Traceback", "The above exception", "During handling", "+", "|")
RESTART_TAIL_S = 30.0
# A worker that hears NOTIFY starts a job in milliseconds; one that only polls, at its next poll (every 5 s).
PICKUP_LIMIT_MS = 500
HURRY = threading.Event()  # set by a second Ctrl+C: stop children with SIGKILL at once
JOB_THREADS = min(32, (os.cpu_count() or 1) + 4)  # asyncio's default executor, where procrastinate runs sync jobs
DEFAULTS = {"agents": 20, "per_agent": 250, "failure_rate": 0.3, "timeout_rate": 0.1}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Soak test: agents post through LLM failures and a database restart.")
    p.add_argument("--agents", type=int, default=DEFAULTS["agents"], help="simulated agents, one session each (20)")
    p.add_argument("--per-agent", type=int, default=DEFAULTS["per_agent"], help="interactions per agent (250)")
    p.add_argument("--failure-rate", type=float, default=DEFAULTS["failure_rate"],
                   help="share of LLM chat requests answered HTTP 500 or 429, half each (0.3)")
    p.add_argument("--timeout-rate", type=float, default=DEFAULTS["timeout_rate"],
                   help="share of LLM chat requests that hang past the client timeout (0.1)")
    p.add_argument("--llm-timeout", type=int, default=2, help="CW_LLM_TIMEOUT of the server and workers, s (2)")
    p.add_argument("--workers", type=int, default=2, help="procrastinate worker processes (2)")
    p.add_argument("--concurrency", type=int, default=JOB_THREADS,
                   help="jobs each worker runs at once; they mostly wait for the LLM. procrastinate runs sync "
                   f"jobs in the default thread pool, min(32, CPUs + 4) threads, so more gains nothing ({JOB_THREADS})")
    p.add_argument("--think", type=float, default=0.2, help="mean pause of an agent between posts, s (0.2)")
    p.add_argument("--batch-share", type=float, default=0.15, help="share of posts that are batches (0.15)")
    p.add_argument("--batch-size", type=int, default=5, help="interactions per batch post (5)")
    p.add_argument("--restart-at", type=float, default=0.4,
                   help="restart the database once this share of the interactions is accepted; 0: never (0.4)")
    p.add_argument("--db-down", type=float, default=3.0, help="seconds the database stays stopped (3)")
    p.add_argument("--give-up", type=float, default=300.0, help="a client's patience for one interaction, s (300)")
    p.add_argument("--drain-timeout", type=float, default=900.0, help="how long to wait for the queue to drain, s")
    p.add_argument("--embedder", choices=("minilm", "hashing"), default="minilm",
                   help="CW_EMBEDDER of every process (minilm: the model in each worker, cores/workers threads each; "
                   "hashing: no model, about as fast here since the LLM's waits set the pace)")
    p.add_argument("--probes", type=int, default=8,
                   help="single POSTs to an idle system before and after the run, to time a worker's pickup (8)")
    p.add_argument("--seed", type=int, default=1, help="seed of the texts, the clients and the flaky LLM (1)")
    p.add_argument("--shared-server", action="store_true",
                   help=f"use a database {SOAK_DB!r} on the shared embedded server (restarts it for everyone!)")
    p.add_argument("--keep", action="store_true", help="keep the soak database (or cluster) afterwards")
    p.add_argument("--no-doc", action="store_true", help="do not rewrite docs/reliability.md")
    p.add_argument("--report", action="store_true",
                   help="run nothing; rewrite docs/reliability.md from var/artifacts/soak-results.json")
    return p.parse_args(argv)


# -- processes ----------------------------------------------------------------------------------------
class Child:
    """A child process whose output goes, timestamped, to var/artifacts/soak-<name>.log."""

    def __init__(self, name: str, command: list[str], env: dict[str, str]) -> None:
        self.name = name
        self.log_path = ARTIFACTS / f"soak-{name}.log"
        self.log: IO[str] = open(self.log_path, "w", encoding="utf-8")  # noqa: SIM115 - closed in finish()
        # Own session: a Ctrl+C reaches only the soak, which stops children in order (workers first).
        self.process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, text=True, errors="replace", start_new_session=True)
        self.exited_at: float | None = None
        self._pump = threading.Thread(target=self._copy, name=f"log-{name}", daemon=True)
        self._pump.start()

    def _copy(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            stamp = datetime.datetime.now().strftime("%H:%M:%S.%f")[:-3]
            self.log.write(f"{stamp} {line}")
            self.log.flush()

    def alive(self) -> bool:
        if self.process.poll() is None:
            return True
        self.exited_at = self.exited_at or time.time()
        return False

    def note(self, message: str) -> None:
        """A line of the soak's own in the child's log, so the log shows when the soak acted."""
        self.log.write(f"{datetime.datetime.now().strftime('%H:%M:%S.%f')[:-3]} [soak] {message}\n")
        self.log.flush()

    def terminate(self) -> None:
        if self.process.poll() is None:
            self.note("stopping (SIGTERM)")
            self.process.terminate()

    def finish(self, deadline: float) -> None:
        """Wait for the exit until `deadline` (monotonic) or a second Ctrl+C, then SIGKILL; close the log.

        A worker finishes its jobs in flight first (a batch with its LLM calls can take 20 s)."""
        while self.process.poll() is None and time.monotonic() < deadline and not HURRY.is_set():
            time.sleep(0.1)
        if self.process.poll() is None:
            self.note("still running; SIGKILL")
            self.process.kill()
            self.process.wait()
        self._pump.join(timeout=5)
        self.note(f"exited with code {self.process.returncode}")
        self.log.close()
        if self.process.stdout is not None:
            self.process.stdout.close()


def stop_children(children: list[Child], timeout: float = 20.0) -> None:
    """SIGTERM to all at once, then wait for all: a worker's graceful stop takes seconds, so in turn it adds up."""
    for child in children:
        with contextlib.suppress(Exception):
            child.terminate()
    deadline = time.monotonic() + timeout
    for child in children:
        with contextlib.suppress(Exception):
            child.finish(deadline)


def start_web(env: dict[str, str], children: list[Child]) -> str:
    """uvicorn as serve.running_server starts it, but with its process at hand (is it still alive?)."""
    from contextweaver_site.serve import free_port, uvicorn_command, wait_until_serving

    port = free_port()
    web = Child("web", uvicorn_command(port=port), env)
    children.append(web)  # before waiting: stopped by the caller's cleanup even if it never serves
    url = f"http://127.0.0.1:{port}"
    if not wait_until_serving(url + "/login/", web.process):
        raise RuntimeError(f"the web server did not start (exit code {web.process.poll()}); see {web.log_path}")
    return url


def start_workers(env: dict[str, str], count: int, concurrency: int, children: list[Child]) -> list[Child]:
    """As memory/management/commands/demo.py starts them, with several jobs at once each."""
    command = [sys.executable, "manage.py", "procrastinate", "worker", "--queues", "ingest",
               "--concurrency", str(concurrency), "--shutdown-graceful-timeout", "5"]
    workers = []
    for n in range(count):
        workers.append(Child(f"worker-{n + 1}", command, env))
        children.append(workers[-1])
    return workers


def child_env(args: argparse.Namespace, openai_url: str, api_key: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "OPENAI_ADMIN_KEY",
                        "OPENAI_CUSTOM_HEADERS", "REDIS_URL")}
    env.update({
        "DJANGO_SETTINGS_MODULE": "contextweaver_site.settings.base", "CW_DB_NAME": SOAK_DB,
        "CW_INGEST_MODE": "queue", "CW_EMBEDDER": args.embedder, "CW_LLM": "openai", "OPENAI_BASE_URL": openai_url,
        "OPENAI_API_KEY": api_key, "CW_LLM_TIMEOUT": str(args.llm_timeout), "LOG_LEVEL": "WARNING",
        "PYTHONUNBUFFERED": "1", "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
    })
    if args.embedder == "minilm":  # workers share the cores: with all threads each they slow each other down
        env["CW_EMBED_THREADS"] = str(max(1, (os.cpu_count() or 1) // max(args.workers, 1)))
    return env


# -- the database -----------------------------------------------------------------------------------
def prepare_database(args: argparse.Namespace) -> None:
    """A fresh soak database (in a fresh cluster unless --shared-server), migrated, Django set up on it."""
    from contextweaver_site.embedded import server

    os.environ["DJANGO_SETTINGS_MODULE"] = "contextweaver_site.settings.base"
    os.environ["CW_DB_NAME"] = SOAK_DB
    os.environ["CW_EMBEDDER"] = args.embedder
    os.environ["CW_LLM"] = "none"  # this process only sets up and counts
    os.environ.pop("DATABASE_URL", None)
    if not args.shared_server:
        os.environ["CW_PGDATA"] = str(SOAK_PGDATA)
        server.destroy(SOAK_PGDATA)  # whatever an earlier interrupted run left
    sock = server.ensure_running(database=None)
    _drop_database(sock)
    server.ensure_running(database=SOAK_DB)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)


def _drop_database(sock: Path) -> None:
    import psycopg

    from contextweaver_site.embedded import server

    with psycopg.connect(host=str(sock), user=server.SUPERUSER, dbname="postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{SOAK_DB}" WITH (FORCE)')


def discard_database(args: argparse.Namespace) -> None:
    from contextweaver_site.embedded import server

    with contextlib.suppress(Exception):
        from django.db import connections

        for connection in connections.all():
            connection.close()
            if getattr(connection, "pool", None) is not None:
                connection.close_pool()
    if args.shared_server:
        _drop_database(server.ensure_running(database=None))
    else:
        with contextlib.suppress(OSError):  # the server's own log, for whoever reads a failed run's logs
            shutil.copyfile(SOAK_PGDATA / "server.log", ARTIFACTS / "soak-postgres.log")
        server.destroy(SOAK_PGDATA)
        lock = SOAK_PGDATA.parent / f".{SOAK_PGDATA.name}.lock"
        lock.unlink(missing_ok=True)
        shutil.rmtree(SOAK_PGDATA.parent / f".{SOAK_PGDATA.name}.leases", ignore_errors=True)


def with_db_retry(call: Any, attempts: int = 30) -> Any:
    """Run a query from this process, riding out a database that is restarting."""
    from django.db import InterfaceError, OperationalError, connection

    for attempt in range(attempts):
        try:
            return call()
        except (OperationalError, InterfaceError):
            connection.close()
            if attempt == attempts - 1:
                raise
            time.sleep(1)
    return None


def create_fixtures(agents: int, seed: int) -> tuple[str, list[int], int]:
    """The project, one session per agent (task from its domain), one for the pickup probes, and the token
    they share."""
    from memory.engine.projects import project_create, session_create, token_issue

    from .soak_texts import agent_task

    project = project_create(name="soak", slug=PROJECT_SLUG)
    sessions = [session_create(project=project, title=f"agent {n}", task=agent_task(seed, n)[1], actor="soak").pk
                for n in range(agents)]
    probe = session_create(project=project, title="pickup probes", actor="soak").pk
    return token_issue(project=project, name="soak agents")[1], sessions, probe


# -- the restart ------------------------------------------------------------------------------------------
class Restarter(threading.Thread):
    """Stops the database once `threshold` interactions are accepted, waits `down` s, starts it again."""

    def __init__(self, stats: Any, threshold: int, down: float, stop: threading.Event) -> None:
        super().__init__(name="db-restart", daemon=True)
        self.stats, self.threshold, self.down, self.stop = stats, threshold, down, stop
        self.began: float | None = None  # when the stop began
        self.stopped: float | None = None  # when the server was down
        self.up: float | None = None  # when it was running again
        self.restarted_by_app = False
        self.error: str | None = None

    def run(self) -> None:
        from contextweaver_site.embedded import server

        while not self.stop.is_set() and self.stats.accepted_count < self.threshold:
            self.stop.wait(0.2)
        if self.stop.is_set():
            return
        try:
            print(f"restarting the database ({self.stats.accepted_count} interactions accepted)…", flush=True)
            self.began = time.time()
            server.stop()
            self.stopped = time.time()
            self.stop.wait(self.down)
            self.restarted_by_app = server.is_running()  # a process that needed it started it (db/base.py)
            server.ensure_running(database=None)
            self.up = time.time()
            print(f"database back after {self.up - self.began:.1f} s", flush=True)
        except Exception as exc:  # noqa: BLE001 - reported, and the run goes on
            self.error = f"{type(exc).__name__}: {exc}"
            print(f"database restart failed: {self.error}", flush=True)


class LockSampler(threading.Thread):
    """Once a second, which backends of the soak database wait for a lock and on what statement.

    Processing runs the LLM inside its transaction, so a row one batch has written (a new entity, the
    embedding space on a fresh database) can keep another session's batch waiting for many LLM calls.
    """

    def __init__(self, stop: threading.Event) -> None:
        super().__init__(name="lock-sampler", daemon=True)
        self.stop = stop
        self.samples = self.with_waiters = self.waiting_total = self.active_total = 0
        self.max_waiting = 0
        self.statements: Counter[str] = Counter()  # what the waiting backends were running
        self.lock_types: Counter[str] = Counter()

    def run(self) -> None:
        import psycopg

        from contextweaver_site.embedded import server

        conn = None
        while not self.stop.wait(1.0):
            try:
                if conn is None or conn.closed:
                    conn = psycopg.connect(host=str(server.socket_dir()), user=server.SUPERUSER, dbname=SOAK_DB,
                                           autocommit=True, connect_timeout=2)
                rows = conn.execute(
                    "SELECT a.wait_event_type = 'Lock', coalesce(l.locktype, ''), left(regexp_replace(a.query, "
                    "'\\s+', ' ', 'g'), 90) FROM pg_stat_activity a LEFT JOIN pg_locks l ON l.pid = a.pid "
                    "AND NOT l.granted WHERE a.datname = %s AND a.state = 'active' AND a.pid <> pg_backend_pid() "
                    "AND a.query NOT LIKE 'LISTEN%%'", [SOAK_DB]).fetchall()
            except Exception:  # noqa: BLE001 - the database restarts during the soak; sample again later
                conn = None
                continue
            waiting = [(locktype, query) for is_lock, locktype, query in rows if is_lock]
            self.samples += 1
            self.active_total += len(rows)
            self.waiting_total += len(waiting)
            self.with_waiters += bool(waiting)
            self.max_waiting = max(self.max_waiting, len(waiting))
            self.statements.update(query for _, query in waiting)
            self.lock_types.update(locktype or "gone" for locktype, _ in waiting)  # granted before we looked
        if conn is not None:
            conn.close()

    def summary(self) -> dict[str, Any]:
        n = max(self.samples, 1)
        return {"samples": self.samples, "share_with_waiters": round(self.with_waiters / n, 3),
                "mean_active": round(self.active_total / n, 2), "mean_waiting": round(self.waiting_total / n, 2),
                "max_waiting": self.max_waiting, "lock_types": dict(self.lock_types),
                "top_statements": self.statements.most_common(5)}


# -- the run ----------------------------------------------------------------------------------------------
def run(args: argparse.Namespace) -> dict[str, Any]:
    from tests.openai_server import API_KEY

    from . import soak_probe
    from .run_all import Neighbours
    from .soak_agents import Agent, Item, Stats
    from .soak_openai import FlakyOpenAI
    from .soak_texts import agent_turns

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    started = time.time()
    children: list[Child] = []
    fake: FlakyOpenAI | None = None
    stop = threading.Event()
    try:
        print("setting up the soak database…", flush=True)
        prepare_database(args)
        token, sessions, probe_session = create_fixtures(args.agents, args.seed)
        fake = FlakyOpenAI(failure_rate=args.failure_rate, timeout_rate=args.timeout_rate,
                           hang_seconds=args.llm_timeout + 1.5, seed=args.seed).start()
        env = child_env(args, fake.base_url, API_KEY)
        url = start_web(env, children)
        workers = start_workers(env, args.workers, args.concurrency, children)
        setup_s = time.time() - started
        probe = functools.partial(soak_probe.probe_pickup, url=url, token=token, session_id=probe_session,
                                  project_slug=PROJECT_SLUG, count=args.probes)
        probe_began = time.time()
        pickup_before = probe(label="before") if soak_probe.wait_for_workers(len(workers)) else []
        probe_s = time.time() - probe_began
        print(f"server at {url}, {len(workers)} workers; {args.agents} agents × {args.per_agent} interactions",
              flush=True)

        stats = Stats()
        run_id = f"{int(started)}"
        agents = []
        for n, session_id in enumerate(sessions):
            items = [Item(f"soak-{run_id}-a{n}-{i}", turn) for i, turn in enumerate(agent_turns(args.seed, n,
                                                                                                args.per_agent))]
            agents.append(Agent(index=n, base_url=url, path=f"/api/projects/{PROJECT_SLUG}/sessions/{session_id}"
                                f"/interactions/", token=token, items=items, stats=stats, stop=stop, seed=args.seed,
                                think_s=args.think, batch_share=args.batch_share, batch_size=args.batch_size,
                                give_up_s=args.give_up))
        total = args.agents * args.per_agent
        restarter = (Restarter(stats, max(1, int(total * args.restart_at)), args.db_down, stop)
                     if args.restart_at else None)
        sampler = LockSampler(stop)
        sampler.start()
        neighbours = Neighbours().__enter__()  # whether a test run shares the CPU (it slows the drain)
        posting_began = time.time()
        for agent in agents:
            agent.start()
        if restarter:
            restarter.start()
        while any(agent.is_alive() for agent in agents):
            time.sleep(5)
            with stats.lock:
                print(f"  {time.time() - posting_began:5.0f} s: {len(stats.accepted)}/{total} accepted, "
                      f"{stats.retries} retries, {dict(stats.statuses.most_common(4))}", flush=True)
        posting_s = time.time() - posting_began
        if restarter:
            restarter.join(timeout=args.db_down + 120)
        drain = wait_for_drain(args.drain_timeout, workers)
        probe_began = time.time()
        pickup_after = probe(label="after") if drain["workers_alive"] else []
        probe_s += time.time() - probe_began
        figures = collect(args, stats, agents, sessions, restarter, fake, children, drain)
        figures["pickup"] = {"before": soak_probe.summary(pickup_before), "after": soak_probe.summary(pickup_after)}
        figures["locks"] = sampler.summary()
        neighbours.__exit__(None, None, None)
        figures["neighbours"] = {"share": round(neighbours.busy / max(neighbours.samples, 1), 2),
                                 "seen": sorted(neighbours.seen)[:5], "load": [round(x, 2) for x in os.getloadavg()]}
        figures["timings"] = {"setup_s": round(setup_s, 1), "probes_s": round(probe_s, 1),
                              "posting_s": round(posting_s, 1), "drain_s": drain["seconds"],
                              "wall_s": round(time.time() - started, 1)}
        return figures
    finally:
        stop.set()
        for signum in (signal.SIGINT, signal.SIGTERM):  # a second Ctrl+C hurries the cleanup, never skips it
            signal.signal(signum, _hurry)
        if children:
            print("stopping the workers, the server and the fake LLM…", flush=True)
        stop_children([c for c in children if c.name != "web"])  # workers first: they finish jobs in flight
        stop_children([c for c in children if c.name == "web"])
        if fake is not None:
            fake.stop()
        if args.keep:
            print(f"kept the soak database {SOAK_DB!r}" + ("" if args.shared_server else f" in {SOAK_PGDATA}"))
        else:
            with contextlib.suppress(Exception):
                discard_database(args)


def wait_for_drain(timeout: float, workers: list[Any]) -> dict[str, Any]:
    """Until no interaction is pending and no job is queued or running (retries of failed ones included)."""
    from memory.models import Interaction, InteractionStatus

    began = time.time()
    deadline = began + timeout
    last_print = 0.0
    while True:
        pending = with_db_retry(lambda: Interaction.objects.filter(status=InteractionStatus.PENDING).count())
        jobs = with_db_retry(_open_jobs)
        alive = sum(worker.alive() for worker in workers)
        done = pending == 0 and jobs == 0
        if done or time.time() > deadline or not alive:
            return {"seconds": round(time.time() - began, 1), "drained": done, "pending_left": pending,
                    "open_jobs_left": jobs, "workers_alive": alive}
        if time.time() - last_print > 10:
            print(f"  draining: {pending} interactions pending, {jobs} jobs open", flush=True)
            last_print = time.time()
        time.sleep(1)


def _open_jobs() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM procrastinate_jobs WHERE status IN ('todo', 'doing')")
        return cursor.fetchone()[0]


# -- the figures --------------------------------------------------------------------------------------------
def collect(args: argparse.Namespace, stats: Any, agents: list[Any], sessions: list[int], restarter: Restarter | None,
            fake: Any, children: list[Child], drain: dict[str, Any]) -> dict[str, Any]:
    from django.db import connection
    from django.db.models import Count

    from memory.models import Edge, Interaction, Memory

    from .setup_django import percentile

    expected = {item.key: item.turn for agent in agents for item in agent.items}
    rows = list(Interaction.objects.filter(session_id__in=sessions).values_list(
        "idempotency_key", "kind", "content", "status", "scores", "processed_at", "attempts", "error"))
    stored = Counter(key for key, *_ in rows)
    twice = sorted(key for key, n in stored.items() if n > 1)
    mismatched = sorted(key for key, kind, content, *_ in rows
                        if key in expected and (expected[key].kind, expected[key].content) != (kind, content))
    with stats.lock:
        sent, accepted = set(stats.sent), set(stats.accepted)
        statuses = dict(stats.statuses)
        errors, successes, latencies = list(stats.errors), list(stats.successes), list(stats.latencies_ms)
    lost = sorted(sent - set(stored))
    unknown = sorted(set(stored) - set(expected))
    by_status = Counter(status for *_, status, _s, _p, _a, _e in rows)
    judges = Counter((scores or {}).get("judge", "none") for *_, scores, _p, _a, _e in rows)
    llm_fallbacks = sum(1 for *_, scores, _p, _a, _e in rows if (scores or {}).get("llm_error"))
    retried_rows = sum(1 for *_, attempts, _e in rows if attempts)
    failure_errors = Counter(error.split(":", 1)[0] for *_, status, _s, _p, _a, error in rows if status == "failed")
    with connection.cursor() as cursor:
        cursor.execute("SELECT status, count(*), sum(CASE WHEN attempts > 1 THEN 1 ELSE 0 END) "
                       "FROM procrastinate_jobs GROUP BY status")
        jobs = {status: {"jobs": n, "retried": int(retried or 0)} for status, n, retried in cursor.fetchall()}
    edges = dict(Edge.objects.filter(target__session_id__in=sessions).values_list("origin").annotate(n=Count("id"))
                 .values_list("origin", "n"))
    with connection.cursor() as cursor:  # entity_resolve appends evidence: is any entry there twice?
        cursor.execute("SELECT count(*), coalesce(max(jsonb_array_length(evidence)), 0), coalesce(sum("
                       "jsonb_array_length(evidence) - (SELECT count(DISTINCT x) FROM jsonb_array_elements(evidence) x)"
                       "), 0) FROM memory_entity")
        entities, longest_evidence, repeated_evidence = cursor.fetchone()
    restart = restart_figures(restarter, errors, successes, rows)
    logs = {child.name: log_figures(child.log_path) for child in children}
    five_xx = {label: n for label, n in statuses.items() if label[:1] == "5"}
    return {
        "date": datetime.date.today().isoformat(),
        "parameters": {k: v for k, v in vars(args).items() if k not in ("keep", "no_doc", "report")},
        "reduced": any(getattr(args, k) != v for k, v in DEFAULTS.items()),
        "interactions": {
            "planned": len(expected), "sent": len(sent), "accepted": len(accepted), "stored": len(stored),
            "stored_twice": len(twice), "stored_twice_keys": twice[:20], "content_mismatch": len(mismatched),
            "content_mismatch_keys": mismatched[:20], "lost": len(lost), "lost_keys": lost[:20],
            "unknown_rows": len(unknown), "rejected_4xx": len(stats.rejected), "given_up": len(stats.given_up),
            "by_status": dict(by_status), "judged_by": dict(judges), "llm_fallbacks": llm_fallbacks,
            "with_failed_attempts": retried_rows, "failure_errors": dict(failure_errors),
            "memories": Memory.objects.filter(session_id__in=sessions).count(), "edges_by_origin": edges,
            "entities": entities,
            "longest_entity_evidence": longest_evidence, "repeated_entity_evidence": int(repeated_evidence),
        },
        "http": {
            "requests": stats.requests, "retries": stats.retries, "duplicates_answered": stats.duplicates,
            "duplicates_on_first_try": stats.duplicates_first_try, "by_status": statuses, "5xx": five_xx,
            "stored_despite": dict(stats.stored_despite),
            "accept_p50_ms": round(percentile(latencies, 50), 1) if latencies else None,
            "accept_p95_ms": round(percentile(latencies, 95), 1) if latencies else None,
            "accept_max_ms": round(max(latencies), 1) if latencies else None,
        },
        "restart": restart, "llm": fake.summary(), "jobs": jobs, "drain": drain, "logs": logs,
        "agents_crashed": [f"{a.name}: {a.crashed!r}" for a in agents if a.crashed],
        "children_exited": {c.name: c.process.returncode for c in children if not c.alive()},
        "machine": machine(),
    }


def restart_figures(restarter: Restarter | None, errors: list[tuple[float, float, str]],
                    successes: list[tuple[float, float]], rows: list[tuple]) -> dict[str, Any] | None:
    """How long the API and the workers took to come back after the database restart began."""
    if restarter is None or restarter.began is None:
        return None
    began, stopped, up = restarter.began, restarter.stopped or restarter.began, restarter.up
    first_ok = min((answered for sent, answered in successes if sent >= stopped), default=None)
    # Errors up to 30 s after the database was back belong to the restart: a request can wait for the
    # pool up to CW_DB_POOL_TIMEOUT (10 s), and a connection broken by the restart can still be handed out.
    window_end = max(first_ok or 0.0, up or began) + RESTART_TAIL_S
    in_window = [(answered, label) for sent, answered, label in errors if began <= answered <= window_end]
    during = Counter(label for _, label in in_window)
    last_error = max((answered for answered, _ in in_window), default=None)
    outside = Counter(label for sent, answered, label in errors
                      if not began <= answered <= window_end and label[:1] == "5")
    processed_after = [p.timestamp() for *_, p, _a, _e in rows if p is not None and up and p.timestamp() > up]
    first_processed = min(processed_after, default=None)
    return {
        "db_stop_s": round(stopped - began, 2), "db_down_s": round(up - began, 2) if up else None,
        "restarted_by_app": restarter.restarted_by_app, "error": restarter.error,
        "api_recovered_s": round(first_ok - began, 2) if first_ok else None,
        "api_recovered_after_db_up_s": round(first_ok - up, 2) if first_ok and up else None,
        "workers_resumed_after_db_up_s": round(first_processed - up, 2) if first_processed and up else None,
        "last_error_s": round(last_error - began, 2) if last_error else None,
        "errors_during": dict(during), "5xx_outside_restart": dict(outside),
    }


def log_figures(path: Path) -> dict[str, Any]:
    """Counts of what the logs say went wrong, and the first traceback's last lines (for a bug report)."""
    text = path.read_text(errors="replace") if path.exists() else ""
    lines = text.splitlines()
    first_tb = next((i for i, line in enumerate(lines) if "Traceback (most recent call last)" in line), None)
    excerpt: list[str] = []
    if first_tb is not None:
        # The exception line ends a traceback: the first line after it not indented (after the timestamp).
        end = next((n for n in range(first_tb + 1, len(lines)) if not lines[n][LOG_STAMP:].startswith(" ")
                    and not lines[n][LOG_STAMP:].startswith(CHAINED)), len(lines) - 1)
        excerpt = [lines[max(0, first_tb - 1)], *lines[first_tb:end + 1][-12:]]
    return {"lines": len(lines), "tracebacks": text.count("Traceback (most recent call last)"),
            "unhandled_errors": text.count("unhandled error"), "database_unavailable": text.count("database unavail"),
            "llm_scorer_fallbacks": text.count("LLM scorer failed"),
            "llm_inference_fallbacks": text.count("LLM relation inference failed"),
            "batch_fallbacks": text.count("processing them one by one"),
            "deadlocks": text.count("DeadlockDetected: deadlock detected"),
            "cut_by_restart": text.count("AdminShutdown: terminating connection"), "first_traceback": excerpt}


def machine() -> dict[str, Any]:
    from .run_all import machine as describe

    uname = subprocess.run(["uname", "-a"], capture_output=True, text=True).stdout.strip() or " ".join(platform.uname())
    return {"uname": uname, "cpus": os.cpu_count(), "summary": describe()}


def checks(figures: dict[str, Any]) -> list[tuple[str, bool, str]]:
    """(what, passed, detail): the run fails if any does not pass."""
    i, h, d = figures["interactions"], figures["http"], figures["drain"]
    restart = figures["restart"]
    five_hundred = sum(n for label, n in h["5xx"].items() if label.startswith("500"))
    # A client timeout or a dropped connection may come after the commit: only a server's answer makes a claim.
    # A 503 database_unavailable may too (the connection broke after the commit): it says so and asks for a
    # retry with the same key, which then gets the stored row; any other error answer would be a lie.
    stored_despite = h.get("stored_despite", {})
    claimed = {label: n for label, n in stored_despite.items()
               if label[:1] in "45" and not label.startswith("503 database_unavailable")}
    result = [
        ("nothing lost (every interaction sent is stored)", i["lost"] == 0, f"{i['lost']} lost"),
        ("each idempotency key stored exactly once", i["stored_twice"] == 0, f"{i['stored_twice']} stored twice"),
        ("stored content is what was sent", i["content_mismatch"] == 0 and i["unknown_rows"] == 0,
         f"{i['content_mismatch']} differ, {i['unknown_rows']} unknown rows"),
        ("every interaction accepted (no 4xx, no client gave up)", i["accepted"] == i["sent"] == i["planned"],
         f"{i['accepted']} of {i['planned']} accepted, {i['rejected_4xx']} refused, {i['given_up']} given up"),
        ("no duplicate answer on a first try", h["duplicates_on_first_try"] == 0, str(h["duplicates_on_first_try"])),
        ("no error answer but a retry-with-the-key 503 for an interaction that was stored", not claimed,
         ", ".join(f"{n} after {label}" for label, n in sorted(stored_despite.items())) or "none"),
        ("queue drained: nothing left pending", d["drained"],
         f"{d['pending_left']} pending, {d['open_jobs_left']} jobs open, {d['workers_alive']} workers alive"),
        ("no interaction ended failed", i["by_status"].get("failed", 0) == 0, f"{i['by_status'].get('failed', 0)}"),
        ("no HTTP 500", five_hundred == 0, f"{five_hundred}"),
        ("no agent thread crashed", not figures["agents_crashed"], "; ".join(figures["agents_crashed"])),
        ("server and workers stayed up", not figures["children_exited"],
         ", ".join(f"{name} exited with {code}" for name, code in figures["children_exited"].items())),
    ]
    before, after = figures["pickup"]["before"], figures["pickup"]["after"]
    if after["probes"]:
        heard = after["p50_ms"] is not None and after["p50_ms"] < PICKUP_LIMIT_MS and not after["not_started"]
        result.append((f"idle workers start a new job at once after the run (pickup p50 < {PICKUP_LIMIT_MS} ms)",
                       heard, f"before: p50 {before['p50_ms']} ms, max {before['max_ms']} ms; after: p50 "
                       f"{after['p50_ms']} ms, max {after['max_ms']} ms, {after['not_started']} not started"))
    if restart is not None:
        result.append(("API recovered after the database restart", restart["api_recovered_s"] is not None,
                       f"{restart['api_recovered_s']} s"))
        result.append(("workers resumed after the database restart",
                       restart["workers_resumed_after_db_up_s"] is not None,
                       f"{restart['workers_resumed_after_db_up_s']} s after the database was up"))
    return result


# -- the report ---------------------------------------------------------------------------------------------
def write_doc(figures: dict[str, Any], results: list[tuple[str, bool, str]]) -> None:
    from .run_all import para

    p, i, h, llm = figures["parameters"], figures["interactions"], figures["http"], figures["llm"]
    t, r, m = figures["timings"], figures["restart"], figures["machine"]
    processed = sum(n for status, n in i["by_status"].items() if status != "pending")
    size = f"{p['agents']} agents × {p['per_agent']} interactions"
    lines = [
        "# Reliability: the soak test",
        "",
        "`make soak` (`python -m bench.soak`, source in `bench/soak*.py`) runs the real server, real queue",
        "workers and many agents at once against a misbehaving LLM and a database that restarts, and checks",
        "afterwards that every interaction sent was stored exactly once and processed. This page is written",
        "by the script; the figures below are from its last run.",
        "",
        "## What is exercised",
        "",
        "- **A throw-away database**: a PostgreSQL cluster of its own (`var/soak-pgdata`, the embedded",
        "  server's binaries; `--shared-server` uses a database on the shared embedded server instead),",
        "  migrated, one project, one session per agent, one agent token. Dropped at the end unless `--keep`.",
        "- **The deployed shape**: uvicorn (`contextweaver_site.serve.uvicorn_command`) with",
        "  `CW_INGEST_MODE=queue`, and procrastinate workers (`manage.py procrastinate worker --queues ingest`,",
        "  several jobs at once each), with " + (
            "MiniLM embeddings (`CW_EMBEDDER=minilm`, one model thread per worker): the LLM's waits, not the"
            "\n  model, set the pace here (`--embedder hashing` runs without the model)."
            if p.get("embedder") == "minilm" else
            "the offline hashing embedder (`CW_EMBEDDER=hashing`): the soak is about failures and the LLM's"
            "\n  waits set the pace (`--embedder minilm` runs the model in each worker)."),
        "- **A flaky LLM** (`bench/soak_openai.py`, a subclass of the tests' local OpenAI server): each chat",
        "  request independently gets HTTP 500 or 429 (half each, `retry-after-ms: 100`), hangs past the",
        "  client timeout (`CW_LLM_TIMEOUT`), or a schema-valid answer for the prompt it carries (scores and",
        "  dimensions for the selective filter, links for edge inference). The OpenAI client retries twice;",
        "  when all three tries fail the pipeline falls back to the offline rules.",
        "- **Careful agents** (`bench/soak_agents.py`): threads that post single interactions (key in the",
        "  `Idempotency-Key` header) and batches (key per item), all with one agent token, with varied turns",
        "  (`bench/soak_texts.py`: preferences, constraints, tool calls and results, decisions, some",
        "  chit-chat and small talk). Every failure is retried with the same key: connection errors and",
        "  timeouts, 429 and 503 after their `Retry-After`, other 5xx with exponential back-off and jitter. A",
        "  retry answered `200 duplicate: true` counts as accepted.",
        "- **A database restart** once, after `--restart-at` of the interactions are accepted: `pg_ctl stop",
        "  -m fast`, `--db-down` seconds, start. Server and workers must recover on their own. A request",
        "  meanwhile waits for a pooled connection (up to `CW_DB_POOL_TIMEOUT`, 10 s) or, if the restart cut",
        "  its connection, is answered 503 with `Retry-After`. The agents post all their turns within about a",
        "  minute, so the restart hits the workers with most of the backlog still ahead of them.",
        "- **Pickup probes** (`bench/soak_probe.py`): before the agents start and after the drain, single",
        "  interactions posted to an idle system, one at a time; the time from each job's `deferred` to its",
        "  `started` event says whether the workers still hear PostgreSQL's NOTIFY (milliseconds) or only",
        "  find jobs at their 5 s poll.",
        "- **The checks**: after the posts the queue must drain (no interaction pending, no job open); then",
        "  every stored row is compared with what was sent (by idempotency key). The script exits 1 if any",
        "  check below fails. Logs: `var/artifacts/soak-web.log`, `soak-worker-N.log`, `soak-postgres.log`; figures in",
        "  `var/artifacts/soak-results.json`.",
        "",
        "Run it with `make soak` (8-10 minutes on 2 cores). A quicker run: `python -m bench.soak --agents 4",
        "--per-agent 50`; other knobs: `--failure-rate`, `--timeout-rate`, `--llm-timeout`, `--workers`,",
        "`--concurrency`, `--embedder`, `--restart-at` (0: no restart), `--db-down`, `--think`, `--probes`, `--seed`,",
        "`--no-doc`;"
        " `--report` rewrites this page from the last run's figures.",
        "",
        f"## Last run: {size}{' (reduced)' if figures['reduced'] else ''}",
        "",
        *para(f"Measured {figures['date']} on {m['summary']}; `uname -a`: `{m['uname']}`. Wall time",
              f"**{t['wall_s'] / 60:.1f} min** (setup {t['setup_s']:.0f} s, posting {t['posting_s']:.0f} s, drain",
              f"after the last post {t['drain_s']:.0f} s, pickup probes {t.get('probes_s', 0):.0f} s). LLM:",
              f"{p['failure_rate']:.0%} of chat requests failed,",
              f"{p['timeout_rate']:.0%} hung past the {p['llm_timeout']} s timeout; {p['workers']} workers ×",
              f"{p['concurrency']} jobs; seed {p['seed']}.",
              f"**Noisy**: a test run shared the machine for {figures['neighbours']['share']:.0%} of the run."
              if figures["neighbours"]["share"] else ""),
        "| check | result | |",
        "|---|---|---|",
        *[f"| {what} | {'pass' if ok else '**FAIL**'} | {detail} |" for what, ok, detail in results],
        "",
        "| interactions | |",
        "|---|---|",
        f"| sent (unique idempotency keys) | {i['sent']:,} |",
        f"| accepted (a 2xx, first try or retry) | {i['accepted']:,} |",
        f"| stored | {i['stored']:,} (twice: {i['stored_twice']}, lost: {i['lost']}) |",
        f"| processed | {processed:,}: kept {i['by_status'].get('kept', 0):,}, filtered "
        f"{i['by_status'].get('filtered', 0):,}, failed {i['by_status'].get('failed', 0):,}; pending "
        f"{i['by_status'].get('pending', 0):,} |",
        f"| judged by the LLM / by the rules | {i['judged_by'].get('llm', 0):,} / {i['judged_by'].get('rules', 0):,}"
        f" (of which {i['llm_fallbacks']:,} because the LLM failed) |",
        f"| with a failed processing attempt before succeeding | {i['with_failed_attempts']:,} |",
        f"| memories, edges (by origin) | {i['memories']:,}, "
        f"{', '.join(f'{k} {v:,}' for k, v in sorted(i['edges_by_origin'].items()))} |",
        "",
        "| HTTP | |",
        "|---|---|",
        f"| requests | {h['requests']:,}, of which retries {h['retries']:,} |",
        f"| duplicates answered (retries of stored interactions) | {h['duplicates_answered']:,}"
        + "".join(f"; {n} after a {label}" for label, n in sorted(h.get("stored_despite", {}).items())) + " |",
        f"| answers by status | {', '.join(f'{k}: {v:,}' for k, v in sorted(h['by_status'].items()))} |",
        f"| 5xx | {', '.join(f'{k}: {v:,}' for k, v in sorted(h['5xx'].items())) or 'none'} |",
        f"| 2xx answer time p50 / p95 / max | {h['accept_p50_ms']} / {h['accept_p95_ms']} / {h['accept_max_ms']} ms |",
        "",
    ]
    if r:
        last_error = "" if r["last_error_s"] is None else f"; the last {r['last_error_s']} s after the stop began"
        lines += [
            "| database restart | |",
            "|---|---|",
            f"| stop (fast shutdown) took | {r['db_stop_s']} s |",
            f"| down (stop began → started again) | {r['db_down_s']} s"
            f"{' (a process of the app had started it already)' if r['restarted_by_app'] else ''} |",
            f"| API recovered (stop began → first 2xx to a request sent after the stop) | **{r['api_recovered_s']} s**"
            f" ({r['api_recovered_after_db_up_s']} s after the database was up) |",
            f"| workers resumed (database up → first interaction processed) | "
            f"{r['workers_resumed_after_db_up_s']} s |",
            f"| client errors meanwhile (up to {RESTART_TAIL_S:.0f} s after the database was up) | "
            f"{', '.join(f'{k}: {v}' for k, v in sorted(r['errors_during'].items())) or 'none'}{last_error} |",
            f"| 5xx outside the restart | "
            f"{', '.join(f'{k}: {v}' for k, v in r['5xx_outside_restart'].items()) or 'none'} |",
            "",
        ]
    pickup = figures["pickup"]
    if pickup["before"]["probes"] or pickup["after"]["probes"]:
        lines += [
            f"| idle worker pickup: job deferred → started, {p['probes']} single POSTs, each 1 s after the previous "
            "job ended | p50 (ms) | max (ms)"
            " | not started in 15 s |",
            "|---|---|---|---|",
            *[f"| {label} | {v['p50_ms']} | {v['max_ms']} | {v['not_started']} |" for label, v in (
                ("before the run", pickup["before"]),
                ("after the run" + (" (and the restart)" if r else ""), pickup["after"])) if v["probes"]],
            "",
        ]
    worker_logs = [v for k, v in figures["logs"].items() if k.startswith("worker")]
    lines += [
        "| LLM (as the fake server saw it) | |",
        "|---|---|",
        f"| chat requests | {llm['chat_requests']:,}: answered {llm['answered']:,}, HTTP 500 {llm['http_500']:,}, "
        f"HTTP 429 {llm['http_429']:,}, timed out {llm['timed_out']:,} |",
        f"| calls the pipeline gave up on (all tries failed → rules) | scoring "
        f"{sum(w['llm_scorer_fallbacks'] for w in worker_logs):,}, edge inference "
        f"{sum(w['llm_inference_fallbacks'] for w in worker_logs):,} (worker logs) |",
        "",
        *observation_lines(figures),
        *lock_lines(figures["locks"]),
        "| process log | lines | tracebacks | `database unavailable` | batches redone one by one |",
        "|---|---|---|---|---|",
        *[f"| {name} | {v['lines']:,} | {v['tracebacks']} | {v['database_unavailable']} | {v['batch_fallbacks']} |"
          for name, v in figures["logs"].items()],
        "",
    ]
    lines += known_issue_lines(results)
    lines += history_lines()
    DOC.write_text("\n".join(lines))
    print(f"wrote {DOC}")


def _hurry(_signum: int, _frame: Any) -> None:
    """Ctrl+C during the cleanup: kill the children instead of waiting for them."""
    HURRY.set()


def _interrupted(_signum: int, _frame: Any) -> None:
    """SIGTERM as Ctrl+C: the run's finally stops every process it started."""
    raise KeyboardInterrupt


# What a failed check has meant so far, for the checks that failed here; keyed by the start of the check's name.
KNOWN_ISSUES = {
    "idle workers start a new job at once": (
        "After a database restart the workers may no longer hear of new jobs",
        "procrastinate (3.10) listens for new jobs on a connection of its own. The restart closes it; when the",
        "listener's one attempt to reconnect comes while the server is still down, its task ends with that error,",
        "and nothing restarts it: the worker's side-task monitor returns as soon as the first side task ends, and",
        "the periodic deferrer (there are no periodic tasks) ends at start. The error is logged only when the",
        "worker stops (`listener error: ConnectorException` in the worker logs). Until the workers are restarted",
        "they find every new job at their poll, up to `--fetch-job-polling-interval` (5 s) late. (Even with a live",
        "listener, a job that waited for its session's lock starts at the next poll: no notification comes when a",
        "lock is released. That is why the end of a drain goes at about one job per poll.)",
    ),
    "no error answer": (  # the check's name before and after the 503's wording changed
        "An error answer for an interaction that was stored",
        "A retry with the same idempotency key was answered `duplicate: true` after the try before it got an",
        "error. The connection can break after `interactions_accept` has committed: in the view's read-back of",
        "the rows (`Interaction.objects.filter(pk__in=ids)…`) or when the COMMIT's acknowledgement is lost. The",
        "503 `database_unavailable` said \"nothing was written\" then (the runs that failed here); it now asks",
        "for a retry with the same key, which gets the stored row, and the check accepts it. Any other error",
        "answer for a stored interaction still fails it: a client without a key would store it twice.",
    ),
    "no HTTP 500": (
        "A 500 when the connection broke while the job was queued",
        "`engine.ingest._schedule_processing` queues the job with procrastinate's `defer`, which wraps the",
        "psycopg `OperationalError` of a broken connection in its own `ConnectorException`. `api/errors.py`",
        "mapped only Django's `OperationalError`/`InterfaceError` to 503, so the client got a 500 without",
        "`Retry-After` (`unhandled error in InteractionListAcceptApi` in the web log); it maps",
        "`ConnectorException` to the same 503 now. The transaction was rolled back, so a retry was safe.",
    ),
}


def known_issue_lines(results: list[tuple[str, bool, str]], limit: int = 10) -> list[str]:
    """An explanation for each known way a check has failed, in this run or a recent one."""
    from .run_all import para

    entries = [json.loads(line) for line in HISTORY.read_text().splitlines() if line.strip()][-limit:] \
        if HISTORY.exists() else []
    lines: list[str] = []
    for prefix, (title, *text) in KNOWN_ISSUES.items():
        now = any(not ok and what.startswith(prefix) for what, ok, _ in results)
        runs = sum(any(f.startswith(prefix) for f in e["failed"]) for e in entries)
        if now or runs:
            lines += [f"### {title}", "",
                      *para(*text, f"(Failed in {runs} of the last {len(entries)} runs below"
                            f"{', this one included' if now else ''}.)")]
    return (["## What the failed checks mean", "", *lines]) if lines else []


def history_entry(figures: dict[str, Any]) -> dict[str, Any]:
    """What a run's line in the history keeps: its size, how long it took, and what failed."""
    p = figures["parameters"]
    workers = [v for k, v in figures["logs"].items() if k.startswith("worker")]
    return {"date": figures["date"], "agents": p["agents"], "per_agent": p["per_agent"],
            "embedder": p.get("embedder", "hashing"), "wall_min": round(figures["timings"]["wall_s"] / 60, 1),
            "noisy": figures.get("neighbours", {}).get("share", 0),
            "failed": [f"{c['check']}: {c['detail']}" for c in figures["checks"] if not c["passed"]],
            "http_5xx": figures["http"]["5xx"], "deadlocks": sum(w["deadlocks"] for w in workers)}


def history_lines(limit: int = 10) -> list[str]:
    """The last runs on this machine (var/artifacts/soak-history.jsonl), newest first."""
    if not HISTORY.exists():
        return []
    entries = [json.loads(line) for line in HISTORY.read_text().splitlines() if line.strip()][-limit:][::-1]
    lines = ["## Recent runs on this machine", "",
             "| date | size | embedder | wall (min) | 5xx answered | deadlocks | failed checks |",
             "|---|---|---|---|---|---|---|"]
    for e in entries:
        five_xx = ", ".join(f"{k}: {v}" for k, v in sorted(e["http_5xx"].items())) or "none"
        failed = "; ".join(f.replace("|", "/") for f in e["failed"]) or "none"
        lines.append(f"| {e['date']} | {e['agents']} × {e['per_agent']} | {e['embedder']} | {e['wall_min']}"
                     f"{' (noisy)' if e['noisy'] else ''} | {five_xx} | {e['deadlocks']} | {failed} |")
    return [*lines, ""]


def observation_lines(figures: dict[str, Any]) -> list[str]:
    """What went wrong without breaking a check: batches redone, and how entities grew."""
    from .run_all import para

    i = figures["interactions"]
    workers = [v for k, v in figures["logs"].items() if k.startswith("worker")]
    redone = sum(w["batch_fallbacks"] for w in workers)
    deadlocks, cut = sum(w["deadlocks"] for w in workers), sum(w["cut_by_restart"] for w in workers)
    return [
        "| observations | |",
        "|---|---|",
        f"| batches rolled back, then processed one interaction at a time (their LLM calls made again) | {redone}: "
        f"{deadlocks} deadlocks between two batches, {cut} connections cut by the restart (worker logs) |",
        f"| entities; longest `evidence` list; evidence entries that repeat another of the same entity | "
        f"{i['entities']:,}; {i['longest_entity_evidence']}; {i['repeated_entity_evidence']:,} |",
        "",
    ] + (para(
        "**Deadlocks**: two batches of different sessions each created an entity (`entity_unique_name`) the",
        "other then needed, inside transactions that also wait for the LLM; PostgreSQL aborts one, and its",
        "interactions are redone one at a time. Nothing is lost; the work and the LLM calls are done twice.",
    ) if deadlocks else []) + (para(
        "**Repeated evidence**: `engine.entities.entity_resolve` looks an exact name up by `normalized_name`",
        "only, so a name already stored as an alias goes the similar-entity way again at each mention: the",
        "same `{alias, similarity, rule}` entry is appended to the entity's `evidence` and the row saved once",
        "more (the `UPDATE memory_entity` among the lock waits below). The list grows with every mention.",
    ) if i["repeated_entity_evidence"] else [])


def lock_lines(locks: dict[str, Any]) -> list[str]:
    """The lock-wait samples, as a table of what the waiting statements were."""
    from .run_all import para

    lines = para(
        f"Lock waits (sampled every second from `pg_stat_activity`): in {locks['share_with_waiters']:.0%} of",
        f"{locks['samples']} samples a statement of the app was waiting for a lock; {locks['mean_waiting']}",
        f"waiting on average, {locks['max_waiting']} at most (by lock type:",
        f"{', '.join(f'{k} {v}' for k, v in sorted(locks['lock_types'].items())) or 'none'}).",
    )
    lines += para(
        "A batch runs its LLM calls inside its transaction, so a statement waiting here is usually held up by",
        "another session's batch that wrote the same row (an entity both mention) and has not committed yet.",
    )
    if locks["top_statements"]:
        lines += ["| waiting statement (start) | samples |", "|---|---|",
                  *[f"| `{query.replace('|', '/')}` | {n} |" for query, n in locks["top_statements"]], ""]
    return lines


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.report:
        figures = json.loads(RESULTS.read_text())
        write_doc(figures, [(c["check"], c["passed"], c["detail"]) for c in figures["checks"]])
        return 0
    signal.signal(signal.SIGTERM, _interrupted)
    RUN_LOCK.parent.mkdir(parents=True, exist_ok=True)
    with open(RUN_LOCK, "a") as lock:
        try:  # two soaks would share var/soak-pgdata and the log files
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print("another soak is running on this checkout; wait for it to finish", file=sys.stderr)
            return 2
        try:
            figures = run(args)
        except KeyboardInterrupt:
            print("interrupted; every process the soak started is stopped", file=sys.stderr)
            return 130
    results = checks(figures)
    figures["checks"] = [{"check": what, "passed": ok, "detail": detail} for what, ok, detail in results]
    LAST_RESULTS.write_text(json.dumps(figures, indent=1, default=str))
    if not args.no_doc:
        RESULTS.write_text(LAST_RESULTS.read_text())
    with HISTORY.open("a") as history:
        history.write(json.dumps(history_entry(figures)) + "\n")
    if not args.no_doc:
        write_doc(figures, results)
    for what, ok, detail in results:
        print(f"{'pass' if ok else 'FAIL'}  {what}: {detail}")
    print(f"figures in {LAST_RESULTS}")
    return 0 if all(ok for _, ok, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main())
