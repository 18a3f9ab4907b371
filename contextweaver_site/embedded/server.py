"""Lifecycle of the embedded PostgreSQL + pgvector server (binaries from the PyPI package pgserver).

We use pgserver only for its binaries (initdb, pg_ctl, postgres with the vector extension) and
manage the server ourselves, because pgserver's own bookkeeping (a pid list in the data dir,
cleaned by atexit hooks) goes stale whenever a process dies without its hooks.

Rules, on purpose:
- Start: whichever process first needs the database starts the server (under an exclusive file
  lock, so two racing processes start it once); everyone else attaches to the running server.
- Stop: only explicitly (`python -m contextweaver_site.embedded stop`), or by a *holder*
  (`python -m contextweaver_site.embedded run -- CMD`) that started the server itself and is the
  last live holder when CMD ends. Holders leave a lease file named after their pid; leases of
  dead pids are ignored, so a SIGKILLed holder never blocks a later stop.
- After a crash: postgres' own postmaster.pid check decides whether a server is running;
  `pg_ctl status` is the source of truth, never our leases.
- As root: postgres refuses to run as root, so it runs as the system user `pgserver` (created
  if missing), with that user's own primary group and no supplementary groups: `user=` alone
  would keep root's group 0, so root's group bits (not the "other" ones) would decide what the
  server can reach, and it would hold root's group for nothing. The data dir is chowned to it
  and each parent folder gets the execute bit (traverse only, no read) of the class that applies
  to that user: owner if it owns the folder, group if the folder is in its group, else other
  (o+x; e.g. a checkout under /root or a `mktemp -d` folder, both 0700 and root's).
- Private socket: the cluster uses trust authentication, so whoever can open the unix socket is
  the `postgres` superuser. The socket file is 0700, and so is its folder: the data dir (0700
  from initdb) or, for long data dir paths, `/tmp/cw-pg-<hash>`, which must belong to the user
  the server runs as (a folder planted in /tmp by anyone else is refused).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import os
import pwd
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

SYSTEM_USER = "pgserver"
SUPERUSER = "postgres"
DEFAULT_DATABASE = "contextweaver"
BASE_DIR = Path(__file__).resolve().parent.parent.parent
MAX_SOCKET_PATH = 100  # sun_path is 108 bytes; keep a margin


def _pgserver_bin() -> Path:
    # Located without importing pgserver: its __init__ touches platformdirs and warns.
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("the PyPI package pgserver is not installed (pip install pgserver==0.1.4)")
    return Path(list(spec.submodule_search_locations)[0]) / "pginstall" / "bin"


POSTGRES_BIN_PATH = _pgserver_bin()


class EmbeddedServerError(RuntimeError):
    """The embedded PostgreSQL server could not be started or reached."""


def data_dir() -> Path:
    """Where the cluster lives: $CW_PGDATA, or var/pgdata under the project."""
    return Path(os.environ.get("CW_PGDATA") or BASE_DIR / "var" / "pgdata").resolve()


def socket_dir(pgdata: Path | None = None) -> Path:
    """The unix socket folder: the data dir itself unless its path is too long for a socket."""
    pgdata = pgdata or data_dir()
    if len(str(pgdata / ".s.PGSQL.5432")) <= MAX_SOCKET_PATH:
        return pgdata
    digest = hashlib.sha256(str(pgdata).encode()).hexdigest()[:12]
    return Path("/tmp") / f"cw-pg-{digest}"


def _run_as() -> dict:
    """subprocess arguments that drop root to the system user: its uid, its own primary group
    and no supplementary groups (`user=` alone keeps root's gid 0 and groups). Empty unless root."""
    if os.geteuid() != 0:
        return {}
    uid, gid = _server_owner()
    return {"user": uid, "group": gid, "extra_groups": []}


def _pg(binary: str, *args: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run a PostgreSQL binary, as the unprivileged system user when we are root."""
    return subprocess.run(
        [str(POSTGRES_BIN_PATH / binary), *args],
        **_run_as(),
        check=check,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def is_running(pgdata: Path | None = None) -> bool:
    """True when a postmaster for this data dir is alive (pg_ctl checks postmaster.pid)."""
    pgdata = pgdata or data_dir()
    if not (pgdata / "PG_VERSION").exists():
        return False
    return _pg("pg_ctl", "status", "-D", str(pgdata), check=False).returncode == 0


@contextlib.contextmanager
def _start_lock(pgdata: Path) -> Iterator[None]:
    lock_path = pgdata.parent / f".{pgdata.name}.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _server_owner() -> tuple[int, int]:
    """uid and gid the postgres processes run as: `pgserver` when we are root, else ourselves."""
    if os.geteuid() == 0:
        entry = pwd.getpwnam(SYSTEM_USER)
        return entry.pw_uid, entry.pw_gid
    return os.geteuid(), os.getegid()


def _secure_socket_dir(sock: Path) -> None:
    """Create the fallback socket folder (in world-writable /tmp) private to the server's user.

    Created 0700, re-chmodded to 0700 if it exists with a looser mode, and refused if it is a
    symlink, not a directory, or owned by another user (someone could have planted it to see or
    spoof the socket). As root, a root-owned folder is ours (made before the chown to `pgserver`).
    Checks run on an open descriptor (O_NOFOLLOW), so the folder cannot be swapped in between.
    """
    uid, gid = _server_owner()
    with contextlib.suppress(FileExistsError):
        os.mkdir(sock, 0o700)
    try:
        fd = os.open(sock, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as exc:
        raise EmbeddedServerError(
            f"socket folder {sock} is not a plain directory ({exc.strerror}); remove it and retry"
        ) from exc
    try:
        info = os.fstat(fd)
        if info.st_uid != uid:
            if info.st_uid == 0 and os.geteuid() == 0:
                os.fchown(fd, uid, gid)
            else:
                owner = _user_name(info.st_uid)
                raise EmbeddedServerError(
                    f"socket folder {sock} belongs to {owner}, not to {_user_name(uid)} who runs the "
                    "embedded PostgreSQL; refusing to use it (anyone who can reach the socket is the "
                    "database superuser). Remove it and retry."
                )
        if stat.S_IMODE(info.st_mode) != 0o700:
            os.fchmod(fd, 0o700)
    finally:
        os.close(fd)


def _user_name(uid: int) -> str:
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def _traverse_bit(info: os.stat_result, uid: int, gid: int) -> int:
    """The execute bit that governs whether `uid` (in group `gid` only) may traverse a folder.

    Exactly one permission class applies to a process: owner if it owns the file, else group if
    it is in the file's group, else other. Setting o+x on a folder of the server's own group would
    not help it (the group bits win), hence the three cases.
    """
    if info.st_uid == uid:
        return stat.S_IXUSR
    if info.st_gid == gid:
        return stat.S_IXGRP
    return stat.S_IXOTH


def _prepare_for_system_user(pgdata: Path) -> None:
    """As root: create the system user and let it reach and own what it needs."""
    if os.geteuid() != 0:
        return
    try:
        entry = pwd.getpwnam(SYSTEM_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", SYSTEM_USER], check=True)
        entry = pwd.getpwnam(SYSTEM_USER)
    for folder in [*pgdata.parents, *POSTGRES_BIN_PATH.parents]:
        info = folder.stat()
        bit = _traverse_bit(info, entry.pw_uid, entry.pw_gid)
        if not info.st_mode & bit:
            folder.chmod(stat.S_IMODE(info.st_mode) | bit)
    os.chown(pgdata, entry.pw_uid, entry.pw_gid)


def _initdb(pgdata: Path) -> None:
    _pg(
        "initdb", "-D", str(pgdata), "--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8",
        "-U", SUPERUSER, timeout=300,
    )


def _start(pgdata: Path, sock: Path) -> None:
    log = pgdata / "server.log"
    options = (f'-h "" -k {sock} -c unix_socket_permissions=0700'
               " -c max_connections=200 -c shared_buffers=256MB")
    result = _pg("pg_ctl", "start", "-w", "-t", "60", "-D", str(pgdata), "-l", str(log),
                 "-o", options, check=False, timeout=90)
    if result.returncode != 0:
        tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
        raise EmbeddedServerError(f"pg_ctl start failed: {result.stdout}\n--- server.log ---\n{tail}")


def _ensure_database(sock: Path, name: str) -> None:
    import psycopg

    with psycopg.connect(host=str(sock), user=SUPERUSER, dbname="postgres", autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{name}"')


def ensure_running(database: str | None = DEFAULT_DATABASE) -> Path:
    """Start the server if nobody has, create `database` if given; return the socket folder.

    Safe to call from many processes at once: the check-and-start runs under a file lock.
    """
    pgdata = data_dir()
    sock = socket_dir(pgdata)
    if is_running(pgdata) and (sock / ".s.PGSQL.5432").exists():
        if sock != pgdata:
            _secure_socket_dir(sock)  # also tightens a folder left loose by an older version
        if database:
            _ensure_database(sock, database)
        return sock
    with _start_lock(pgdata):
        if not is_running(pgdata):
            pgdata.mkdir(parents=True, exist_ok=True)
            _prepare_for_system_user(pgdata)
            if sock != pgdata:
                _secure_socket_dir(sock)
            if not (pgdata / "PG_VERSION").exists():
                _initdb(pgdata)
            _start(pgdata, sock)
        if database:
            _ensure_database(sock, database)
    return sock


def stop(pgdata: Path | None = None) -> bool:
    """Stop the server (fast shutdown). Returns whether one was running."""
    pgdata = pgdata or data_dir()
    with _start_lock(pgdata):
        if not is_running(pgdata):
            return False
        _pg("pg_ctl", "stop", "-w", "-m", "fast", "-t", "60", "-D", str(pgdata), timeout=90)
        return True


def destroy(pgdata: Path | None = None) -> None:
    """Stop the server and delete its data dir and fallback socket folder (throw-away clusters)."""
    pgdata = pgdata or data_dir()
    stop(pgdata)
    shutil.rmtree(pgdata, ignore_errors=True)
    sock = socket_dir(pgdata)
    if sock != pgdata and not sock.is_symlink():
        shutil.rmtree(sock, ignore_errors=True)


def _lease_dir(pgdata: Path) -> Path:
    return pgdata.parent / f".{pgdata.name}.leases"


def _live_leases(pgdata: Path) -> list[int]:
    folder = _lease_dir(pgdata)
    if not folder.exists():
        return []
    alive = []
    for lease in folder.iterdir():
        pid = int(lease.name) if lease.name.isdigit() else -1
        if pid > 0 and _pid_alive(pid):
            alive.append(pid)
        else:
            lease.unlink(missing_ok=True)
    return alive


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextlib.contextmanager
def hold() -> Iterator[Path]:
    """Keep the server up while the block runs; stop it afterwards if we started it and
    no other live holder remains."""
    pgdata = data_dir()
    started_here = not is_running(pgdata)
    sock = ensure_running()
    lease = _lease_dir(pgdata) / str(os.getpid())
    lease.parent.mkdir(parents=True, exist_ok=True)
    lease.touch()
    try:
        yield sock
    finally:
        lease.unlink(missing_ok=True)
        if started_here and not _live_leases(pgdata):
            stop(pgdata)


