"""Live view: one websocket per session, streaming the session's change-log events (docs/live.md).

Protocol (JSON text frames):
- server → client `{"type": "changes", "changes": [<change snapshot>…], "last_change_id": N}`
- client → server `{"type": "catch_up", "after": N}`: every change of the session with id > N, in id
  order, in "changes" pages of ≤ 500, then `{"type": "caught_up", "last_change_id": M}`.
- server → client `{"type": "error", "error": "…"}` for a message it does not understand.

Close codes: 4403 not logged in (also sent the moment the login ends: logout, deactivation, an expired
or flushed session; and when an open socket's user loses the membership); 4404 no such session, or one
the user may not read (the same code, so it does not tell which ids exist in other projects).
The socket is accepted before it is closed with these codes, so browsers see the code (a refused
handshake would only show as a failed connection).

A socket lives no longer than its login (memory/live/revocation.py): it joins `user.<id>`, closed at once
by a logout of its Django session or the account's deactivation, and it asks the session again before
each message of changes it sends.

Ordering: a consumer handles one message at a time, so live events that arrive during a catch-up
wait in the channel-layer queue and are handled after it; changes already sent (by the catch-up or
earlier) are not sent again. Clients should still dedup by change id (reconnects overlap).
"""

from __future__ import annotations

from collections import deque
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from . import metrics
from .engine.events import project_wide_group, session_group
from .engine.snapshots import change_snapshot
from .live import listener, revocation, subscriptions
from .live.access import NotAllowed, UnknownSession, Watch, session_watch
from .reads.changes import change_rows
from .selectors import change_list

CLOSE_FORBIDDEN = 4403
CLOSE_NOT_FOUND = 4404
CATCH_UP_PAGE = 500
REMEMBERED_IDS = 5000  # ids already sent, to drop repeats (catch-up vs live, re-sent batches)


class SessionGraphConsumer(AsyncJsonWebsocketConsumer):
    watch: Watch | None = None
    ended = False  # closed because access ended: nothing more is sent

    async def connect(self) -> None:
        listener.ensure_started()  # no-op unless the PostgreSQL bridge is this deployment's transport
        session_id = int(self.scope["url_route"]["kwargs"]["session_id"])
        self.user = self.scope.get("user")
        self.session_key = revocation.scope_session_key(self.scope)
        self.session_tag = revocation.session_tag(self.session_key)
        code = None
        try:
            self.watch = await database_sync_to_async(session_watch)(self.user, session_id)
        except NotAllowed:
            code = CLOSE_FORBIDDEN
        except UnknownSession:
            code = CLOSE_NOT_FOUND
        if code is not None:
            await self.accept()
            await self.close(code=code)
            return
        self.sent_ids: set[int] = set()
        self.sent_order: deque[int] = deque()
        self.high = 0  # the largest change id sent so far
        self.group = session_group(session_id)
        subscriptions.watch(self.watch.project_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        self.wide_group = project_wide_group(self.watch.project_id)  # entity renames and merges
        await self.channel_layer.group_add(self.wide_group, self.channel_name)
        self.user_group = revocation.user_group(self.user.pk)  # logout, deactivation
        await self.channel_layer.group_add(self.user_group, self.channel_name)
        await self.accept()
        metrics.websocket_clients.inc()
        self.counted = True

    async def disconnect(self, code: int) -> None:
        if getattr(self, "counted", False):
            metrics.websocket_clients.dec()
            self.counted = False
        if self.watch is not None and hasattr(self, "group"):
            subscriptions.unwatch(self.watch.project_id)
            await self.channel_layer.group_discard(self.group, self.channel_name)
            await self.channel_layer.group_discard(self.wide_group, self.channel_name)
            await self.channel_layer.group_discard(self.user_group, self.channel_name)

    async def receive_json(self, content: Any, **kwargs) -> None:
        if self.watch is None or self.ended:
            return
        if not isinstance(content, dict) or content.get("type") != "catch_up":
            await self.send_json({"type": "error", "error": 'expected {"type": "catch_up", "after": N}'})
            return
        after = content.get("after", 0)
        if not isinstance(after, int) or isinstance(after, bool) or after < 0:
            await self.send_json({"type": "error", "error": "after must be a non-negative integer"})
            return
        await self._catch_up(after)

    async def graph_changed(self, event: dict[str, Any]) -> None:
        """A live group message (engine.events): forward the changes this client has not had yet.

        A change of this user's membership is not forwarded: the access rule is asked again, and a user
        who lost access is disconnected (4403) at once; a changed role changes what the socket masks."""
        if self.watch is None or self.ended:
            return
        members = {c["object_id"] for c in event["changes"] if c["object_type"] == "membership"}
        if getattr(self.user, "pk", None) in members:
            try:
                self.watch = await database_sync_to_async(session_watch)(self.user, self.watch.session_id)
            except (NotAllowed, UnknownSession):
                await self._end()
                return
        changes = [c for c in event["changes"] if c["object_type"] != "membership"] if members else event["changes"]
        if changes:
            await self._send_changes(changes)

    async def live_revoked(self, event: dict[str, Any]) -> None:
        """The user logged out (this socket's Django session, or all of them) or was deactivated or deleted."""
        if revocation.concerns(event, self.session_tag):
            await self._end()

    async def _end(self, code: int = CLOSE_FORBIDDEN) -> None:
        if not self.ended:
            self.ended = True
            await self.close(code=code)

    async def _still_allowed(self) -> bool:
        """Ask the login again before sending content (revocation.login_user): closes the socket and says
        False when it ended. A superuser flag changed since is asked of the access rule again."""
        user = await database_sync_to_async(revocation.login_user)(self.session_key)
        if user is None or user.pk != self.user.pk:
            await self._end()
            return False
        if user.is_superuser != self.user.is_superuser:
            try:
                self.watch = await database_sync_to_async(session_watch)(user, self.watch.session_id)
            except (NotAllowed, UnknownSession):
                await self._end()
                return False
        self.user = user
        return True

    async def _catch_up(self, after: int) -> None:
        last = after
        while True:
            page = await database_sync_to_async(_change_page)(self.watch.session_id, last)
            if not page:
                break
            await self._send_changes(page)
            if self.ended:
                return
            last = page[-1]["id"]
            if len(page) < CATCH_UP_PAGE:
                break
        # Everything up to `last` is sent; so is anything up to an id sent live before (per-project
        # commit order: it committed before our read, and so did every smaller id of the session).
        if self.ended:
            return
        await self.send_json({"type": "caught_up", "last_change_id": max(last, self.high)})

    async def _send_changes(self, changes: list[dict[str, Any]]) -> None:
        fresh = [c for c in changes if c["id"] not in self.sent_ids]
        if not fresh or self.ended or not await self._still_allowed():
            return
        if not self.watch.may_see_sensitive:
            fresh = await database_sync_to_async(change_rows)(self.watch, fresh)
        self._remember(c["id"] for c in fresh)
        last_id = max(c["id"] for c in fresh)
        self.high = max(self.high, last_id)
        await self.send_json({"type": "changes", "changes": fresh, "last_change_id": last_id})

    def _remember(self, ids) -> None:
        for change_id in ids:
            self.sent_ids.add(change_id)
            self.sent_order.append(change_id)
        while len(self.sent_order) > REMEMBERED_IDS:
            self.sent_ids.discard(self.sent_order.popleft())


def _change_page(session_id: int, after: int) -> list[dict[str, Any]]:
    return [change_snapshot(c) for c in change_list(session_id=session_id, after_id=after, limit=CATCH_UP_PAGE)]
