"""The embedded PostgreSQL lifecycle, on a throw-away cluster of its own (real processes)."""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg
import pytest

from contextweaver_site.embedded import server

ROOT = Path(__file__).resolve().parent.parent
OTHER_USER = "nobody"


def _throw_away(path: Path) -> None:
    server.destroy(path)
    for leftover in path.parent.glob(f".{path.name}*"):
        shutil.rmtree(leftover, ignore_errors=True) if leftover.is_dir() else leftover.unlink()


@pytest.fixture(scope="module")
def cluster_dir():
    path = ROOT / "var" / f"test-cluster-{os.getpid()}"
    try:
        yield path
    finally:
        _throw_away(path)


@pytest.fixture(scope="module")
def long_cluster():
    """A running cluster whose data dir path is too long for a socket: it uses /tmp/cw-pg-<hash>."""
    path = ROOT / "var" / f"test-longsock-{os.getpid()}-{'x' * 90}"
    env_before = os.environ.get("CW_PGDATA")
    try:
        os.environ["CW_PGDATA"] = str(path)  # ensure_running reads the data dir from there
        try:
            sock = server.ensure_running(database=None)
        finally:
            if env_before is None:
                os.environ.pop("CW_PGDATA", None)
            else:
                os.environ["CW_PGDATA"] = env_before
        yield path, sock
    finally:
        _throw_away(path)
        assert not server.socket_dir(path).exists()


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


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
    assert server.socket_dir(cluster_dir) == cluster_dir.resolve()  # socket in the data dir
    assert _mode(cluster_dir) == 0o700 and _mode(cluster_dir / ".s.PGSQL.5432") == 0o700
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


def test_fallback_socket_folder_and_socket_are_private(long_cluster):
    pgdata, sock = long_cluster
    assert sock == server.socket_dir(pgdata) and str(sock).startswith("/tmp/cw-pg-")
    assert _mode(sock) == 0o700
    assert _mode(sock / ".s.PGSQL.5432") == 0o700
    assert os.lstat(sock).st_uid == server._server_owner()[0]
    # The current process (root bypasses permissions; otherwise it is the server's own user) connects.
    with psycopg.connect(host=str(sock), user="postgres", dbname="postgres") as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)


def _skip(reason: str) -> None:
    """These checks need a second local user (root can act as `nobody`); say why when one is missing."""
    print(f"SKIP: {reason}")
    pytest.skip(reason)


def test_other_local_user_cannot_reach_the_fallback_socket(long_cluster):
    if os.geteuid() != 0:
        _skip("needs root to run psql as another unprivileged user")
    try:
        pwd.getpwnam(OTHER_USER)
    except KeyError:
        _skip(f"no user {OTHER_USER!r} to play the other local user")
    if shutil.which("runuser") is None:
        _skip("runuser (util-linux) is not installed")
    _pgdata, sock = long_cluster
    psql = str(server.POSTGRES_BIN_PATH / "psql")

    def as_other(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["runuser", "-u", OTHER_USER, "--", psql, *args],
                              capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)

    control = as_other("--version")  # the other user can run psql, so a failure below is the socket's
    assert control.returncode == 0, control.stderr
    attempt = as_other("-h", str(sock), "-U", "postgres", "-d", "postgres", "-c", "SELECT 1")
    assert attempt.returncode != 0, attempt.stdout
    assert "Permission denied" in attempt.stderr, attempt.stderr


def test_existing_loose_socket_folder_is_tightened(tmp_path):
    sock = tmp_path / "cw-pg-loose"
    sock.mkdir()
    uid, gid = server._server_owner()
    os.chown(sock, uid, gid)  # a no-op unless root, where the server runs as pgserver
    sock.chmod(0o755)
    server._secure_socket_dir(sock)
    assert _mode(sock) == 0o700 and os.lstat(sock).st_uid == uid


def test_new_socket_folder_is_created_private(tmp_path):
    sock = tmp_path / "cw-pg-new"
    server._secure_socket_dir(sock)
    assert _mode(sock) == 0o700 and os.lstat(sock).st_uid == server._server_owner()[0]


def test_socket_folder_of_another_user_is_refused(tmp_path):
    if os.geteuid() != 0:
        _skip("needs root to make a folder owned by another user")
    try:
        other = pwd.getpwnam(OTHER_USER)
    except KeyError:
        _skip(f"no user {OTHER_USER!r} to own the folder")
    sock = tmp_path / "cw-pg-planted"
    sock.mkdir(mode=0o777)
    os.chown(sock, other.pw_uid, other.pw_gid)
    with pytest.raises(server.EmbeddedServerError, match="belongs to nobody"):
        server._secure_socket_dir(sock)
    assert os.lstat(sock).st_uid == other.pw_uid  # left alone, not taken over


def test_symlinked_socket_folder_is_refused(tmp_path):
    target = tmp_path / "elsewhere"
    target.mkdir()
    sock = tmp_path / "cw-pg-link"
    sock.symlink_to(target)
    with pytest.raises(server.EmbeddedServerError, match="not a plain directory"):
        server._secure_socket_dir(sock)


def _system_user_or_skip() -> pwd.struct_passwd:
    """As root the database runs as `pgserver`; these checks are about that user's identity."""
    if os.geteuid() != 0:
        _skip("the database runs as a separate system user only when we are root; not root")
    try:
        return pwd.getpwnam(server.SYSTEM_USER)
    except KeyError:
        _skip(f"no user {server.SYSTEM_USER!r} yet (made on the first start as root)")


def test_database_processes_run_with_the_system_users_own_group_only(monkeypatch):
    """`user=` alone keeps root's group 0, whose bits then govern every root-owned folder."""
    entry = _system_user_or_skip()
    id_bin = shutil.which("id")
    assert id_bin, "coreutils id is needed"
    monkeypatch.setattr(server, "POSTGRES_BIN_PATH", Path(id_bin).parent)  # same helper as initdb/pg_ctl

    def ids(flag: str) -> list[int]:
        return [int(part) for part in server._pg("id", flag).stdout.split()]

    assert ids("-u") == [entry.pw_uid]
    assert ids("-g") == [entry.pw_gid]
    assert ids("-G") == [entry.pw_gid]  # no supplementary groups, root's 0 least of all


def _proc_ids(pid: int) -> dict[str, list[int]]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("Uid", "Gid", "Groups"):
            fields[key] = [int(part) for part in value.split()]
    return fields


def test_fresh_server_starts_under_a_private_root_folder():
    """A checkout in a `mktemp -d` folder (0700, root's) must initialise and start as root."""
    entry = _system_user_or_skip()
    top = Path(tempfile.mkdtemp(prefix="cw-private-"))
    pgdata = top / "clone" / "var" / "pgdata"
    try:
        assert _mode(top) == 0o700 and os.lstat(top).st_uid == 0
        start = _cli(pgdata, "start")
        out = start.communicate(timeout=300)[0]
        assert start.returncode == 0, out
        assert server.is_running(pgdata)
        # The folder opened only as far as needed: traverse for the server's user, no listing.
        assert _mode(top) & 0o044 == 0
        postmaster = int((pgdata / "postmaster.pid").read_text().split()[0])
        ids = _proc_ids(postmaster)
        assert set(ids["Uid"]) == {entry.pw_uid}
        assert set(ids["Gid"]) == {entry.pw_gid} and ids["Groups"] == []
        sock = server.socket_dir(pgdata)
        with psycopg.connect(host=str(sock), user="postgres", dbname="contextweaver", autocommit=True) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            assert conn.execute("SELECT '[1,2]'::vector <-> '[1,3]'::vector").fetchone() == (1.0,)
        stop = _cli(pgdata, "stop")
        assert "stopped" in stop.communicate(timeout=120)[0] and stop.returncode == 0
        assert not server.is_running(pgdata)
    finally:
        _throw_away(pgdata)
        shutil.rmtree(top, ignore_errors=True)


def test_parent_folder_in_the_servers_group_gets_group_traverse_only(monkeypatch):
    """With the server in its own group, a folder of that group is governed by its group bits:
    o+x would not let the server through, g+x does (and nothing is made listable)."""
    entry = _system_user_or_skip()
    top = Path(tempfile.mkdtemp(prefix="cw-group-"))
    try:
        os.chown(top, 0, entry.pw_gid)
        top.chmod(0o700)
        pgdata = top / "pgdata"
        pgdata.mkdir()
        server._prepare_for_system_user(pgdata)
        assert _mode(top) == 0o710
        monkeypatch.setattr(server, "POSTGRES_BIN_PATH", Path(shutil.which("ls")).parent)
        assert server._pg("ls", "-d", str(pgdata), check=False).returncode == 0
    finally:
        shutil.rmtree(top, ignore_errors=True)
