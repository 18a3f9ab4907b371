"""The PostgreSQL bridge: change-log commits in any process → this web server's websockets.

Used when `settings.LIVE_TRANSPORT == "notify"` (the embedded default, with an in-memory channel
layer that cannot cross processes). A statement trigger on the change log (migration 0004) runs
`pg_notify('cw_changes', '{"p": project, "s": session, "lo": min id, "hi": max id}')` inside the
writer's transaction; PostgreSQL delivers it only if that transaction commits, and in commit order.

One listener runs per web-server process (started at ASGI startup or by the first websocket). It
keeps a dedicated autocommit psycopg connection in LISTEN, queues what arrives, and for each batch
reads the changes back from the change log (`project = p AND cursor(p) < id <= hi`) and sends
them to the session/project groups of its own channel layer. Notifications stay tiny (no 8000-byte
limit to worry about) and the log stays the only source of content.

Per project it remembers the last id it has handled (`cursor`): a notification range never
yields a change twice, and after a lost connection it re-reads everything past the cursor of the
projects watched here, so an outage of the listener loses nothing either. Projects nobody in this
process watches are not read at all, only their cursor moves.

Once listening, it tells `engine.events` to stop publishing locally, so changes made *in* this
process also take the NOTIFY path: one path, one copy, commit order.

An edge change also goes to the sessions its ends live in, when they are not the change's own session
(`crossing_messages`): a supersede across sessions is recorded with the new memory's session, and the old
memory's open page draws the edge (and its far end as a ghost) as it happens.

The same connection listens on `cw_auth` too: a logout or a deactivated account in any process
(memory/live/revocation.py) closes that user's sockets in this one (group `user.<id>`). Nothing is
re-read for those after a reconnect: the sockets ask the login again before they send anything.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import random
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import psycopg
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import connections
from django.db.models import Max
from psycopg.conninfo import make_conninfo

from ..engine import events
from ..engine.snapshots import change_snapshot
from ..models import GraphChange, Memory
from . import revocation, subscriptions

logger = logging.getLogger(__name__)

CHANNEL = "cw_changes"
PAGE = 500  # changes read per query
HEALTH_CHECK_SECONDS = 30.0  # an idle connection is pinged this often, so a dead one is noticed
BACKOFF_FIRST, BACKOFF_MAX = 0.5, 30.0
LIBPQ_OPTIONS = ("sslmode", "sslrootcert", "sslcert", "sslkey", "passfile", "service", "connect_timeout",
                 "options", "application_name", "target_session_attrs")


@dataclass(frozen=True)
class Notice:
    project_id: int
    session_id: int | None
    lo: int
    hi: int


def parse_notice(payload: str) -> Notice | None:
    try:
        data = json.loads(payload)
        return Notice(int(data["p"]), int(data["s"]) if data.get("s") is not None else None,
                      int(data["lo"]), int(data["hi"]))
    except (ValueError, KeyError, TypeError):
        logger.warning("ignoring malformed %s payload %r", CHANNEL, payload)
        return None


def conninfo(purpose: str = "live") -> str:
    """libpq connection string of the default database (the same one Django uses); also for other side
    connections that must not share the caller's transaction (a forget job's progress)."""
    db = connections["default"].settings_dict
    params: dict[str, Any] = {"dbname": db["NAME"], "user": db.get("USER") or None,
                              "password": db.get("PASSWORD") or None, "host": db.get("HOST") or None,
                              "port": db.get("PORT") or None}
    params.update({k: v for k, v in (db.get("OPTIONS") or {}).items() if k in LIBPQ_OPTIONS})
    # Named after the process, so an operator (or a test) can tell one server's listener from another's.
    params.setdefault("application_name", f"contextweaver-{purpose}-{os.getpid()}")
    return make_conninfo(**{k: v for k, v in params.items() if v is not None})


def _project_ranges(notices: Iterable[Notice]) -> dict[int, int]:
    """The highest change id announced per project in a batch."""
    highest: dict[int, int] = {}
    for notice in notices:
        highest[notice.project_id] = max(highest.get(notice.project_id, 0), notice.hi)
    return highest


def _read_changes(project_id: int, after: int, upto: int | None) -> list[dict[str, Any]]:
    rows = GraphChange.objects.filter(project_id=project_id, id__gt=after)
    if upto is not None:
        rows = rows.filter(id__lte=upto)
    return [change_snapshot(c) for c in rows.order_by("id")[:PAGE]]


def _edge_ends(change: dict[str, Any]) -> set[int]:
    return {end for snapshot in (change.get("before"), change.get("after")) if isinstance(snapshot, dict)
            for end in (snapshot.get("source_id"), snapshot.get("target_id")) if isinstance(end, int)}


def crossing_messages(snapshots: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Group messages for the edge changes whose ends live in other sessions than the change's own (one query
    for the ends' sessions): those sessions' pages draw the edge too. Same shape as `events.group_messages`."""
    edges = [c for c in snapshots if c["object_type"] == "edge"]
    ends = set().union(*(_edge_ends(c) for c in edges)) if edges else set()
    if not ends:
        return {}
    home = dict(Memory.objects.filter(pk__any_of=ends).values_list("id", "session_id"))
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for change in edges:
        for session_id in sorted({home.get(end) for end in _edge_ends(change)} - {None, change["session_id"]}):
            grouped[events.session_group(session_id)].append(change)
    return {group: [{"type": events.EVENT_TYPE, "changes": chunk, "last_change_id": chunk[-1]["id"]}
                    for chunk in (changes[i:i + events.MAX_BATCH] for i in range(0, len(changes), events.MAX_BATCH))]
            for group, changes in grouped.items()}


def _current_max_id() -> int:
    return GraphChange.objects.aggregate(m=Max("id"))["m"] or 0


class ChangeListener:
    """LISTEN on one connection, deliver batches from a queue; reconnect with back-off."""

    def __init__(self, layer: Any) -> None:
        self.layer = layer
        self.cursors: dict[int, int] = {}  # project id → last change id handled
        self.floor = 0  # the newest change id when we first listened: older ones were never ours
        self.queue: asyncio.Queue[Notice] = asyncio.Queue()
        self.listening = asyncio.Event()
        self.delivered = 0  # changes sent to groups, for tests and logs

    async def run(self) -> None:
        worker = asyncio.create_task(self._deliver_forever(), name="cw-live-deliver")
        try:
            await self._listen_forever()
        finally:
            worker.cancel()

    async def _listen_forever(self) -> None:
        attempt = 0
        first = True
        while True:
            try:
                if first:
                    self.floor = await database_sync_to_async(_current_max_id)()  # also starts the embedded DB
                async with await psycopg.AsyncConnection.connect(conninfo(), autocommit=True) as conn:
                    await conn.execute(f"LISTEN {CHANNEL}")
                    await conn.execute(f"LISTEN {revocation.CHANNEL}")  # logouts, deactivations: close sockets
                    events.bridge_attach(True)
                    self.listening.set()
                    if not first:
                        await self._refill()
                    first, attempt = False, 0
                    logger.info("live: listening on %s", CHANNEL)
                    await self._receive(conn)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - keep the bridge alive; clients catch up from the log
                self.listening.clear()
                delay = min(BACKOFF_MAX, BACKOFF_FIRST * 2 ** attempt) * random.uniform(0.75, 1.25)
                attempt += 1
                logger.warning("live: listener connection lost (%s); reconnecting in %.1f s", exc, delay)
                await asyncio.sleep(delay)

    async def _receive(self, conn: psycopg.AsyncConnection) -> None:
        while True:
            async for notify in conn.notifies(timeout=HEALTH_CHECK_SECONDS):
                if notify.channel == revocation.CHANNEL:
                    await self._revoke(notify.payload)
                    continue
                notice = parse_notice(notify.payload)
                if notice is not None:
                    self.queue.put_nowait(notice)
            await conn.execute("SELECT 1")  # idle for a while: make sure the connection still works

    async def _revoke(self, payload: str) -> None:
        """A logout or deactivation (memory/live/revocation.py): close that user's sockets in this process."""
        notice = revocation.parse_notice(payload)
        if notice is None:
            return
        try:
            await revocation.deliver(self.layer, *notice)
        except Exception:  # noqa: BLE001 - the sockets still stop at their next send (revocation.login_user)
            logger.exception("live: closing the sockets of user %s failed", notice[0])

    async def _refill(self) -> None:
        """After a reconnect: whatever committed while we were deaf, for the projects watched here."""
        for project_id in subscriptions.watched_projects():
            await self._deliver_project(project_id, upto=None)

    async def _deliver_forever(self) -> None:
        while True:
            batch = [await self.queue.get()]
            while not self.queue.empty():
                batch.append(self.queue.get_nowait())
            for project_id, upto in _project_ranges(batch).items():
                try:
                    await self._deliver_project(project_id, upto=upto)
                except asyncio.CancelledError:
                    raise
                except Exception:  # noqa: BLE001 - the cursor did not move: the next notice retries
                    logger.exception("live: delivering changes of project %s failed", project_id)

    async def _send_crossing(self, snapshots: list[dict[str, Any]]) -> None:
        """Edge changes to the sessions of their ends too (after the changes' own groups, in id order)."""
        try:
            messages = await database_sync_to_async(crossing_messages)(snapshots)
        except Exception:  # noqa: BLE001 - an extra delivery; those pages show the edge on their next load
            logger.exception("live: finding the sessions of %d change(s)' edge ends failed", len(snapshots))
            return
        for group, batch in messages.items():
            for message in batch:
                try:
                    await self.layer.group_send(group, message)
                except Exception:  # noqa: BLE001 - the change is committed; the page reads it on reload
                    logger.exception("live: sending an edge change to %s failed", group)

    async def _deliver_project(self, project_id: int, *, upto: int | None) -> None:
        after = self.cursors.get(project_id, self.floor)
        if not subscriptions.is_watched(project_id):
            if upto is not None:
                self.cursors[project_id] = max(after, upto)
            return
        while True:
            snapshots = await database_sync_to_async(_read_changes)(project_id, after, upto)
            if not snapshots:
                break
            await events.send_snapshots(self.layer, snapshots)
            await self._send_crossing(snapshots)
            self.delivered += len(snapshots)
            after = snapshots[-1]["id"]
            self.cursors[project_id] = after
            if len(snapshots) < PAGE:
                break
        if upto is not None:
            self.cursors[project_id] = max(after, upto)


_listener: ChangeListener | None = None
_task: asyncio.Task | None = None


def enabled() -> bool:
    return getattr(settings, "LIVE_TRANSPORT", "layer") == "notify"


def ensure_started() -> ChangeListener | None:
    """Start this process's listener on the running event loop, once. No-op unless transport is notify."""
    global _listener, _task
    if not enabled():
        return None
    loop = asyncio.get_running_loop()
    if _task is not None and not _task.done() and _task.get_loop() is loop:
        return _listener
    _listener = ChangeListener(get_channel_layer())
    _task = loop.create_task(_listener.run(), name="cw-live-listener")
    return _listener


async def stop() -> None:
    global _listener, _task
    task, _task, _listener = _task, None, None
    events.bridge_attach(False)
    if task is not None and not task.done():
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass


def is_running() -> bool:
    return _listener is not None and _listener.listening.is_set()
