"""The forget page's live progress: ws/projects/<slug>/forget/ (the project's admins only).

Server → client `{"type": "jobs", "jobs": [<job>…]}` (newest first, job_json's shape) on connect and
whenever a job's state, phase or counter changed. The job may run in a worker process and writes its
progress outside its own transaction, so the table is polled (every POLL_SECONDS, only while a page
is open); the login (memory/live/revocation.py) and access are asked again at each poll, so an admin
who lost the role, logged out or was deactivated is closed with 4403; a logout of the socket's Django
session or the account's deactivation also closes it at once (group `user.<id>`).
Close codes as for the session socket: 4403 not logged in or not allowed (a member below admin), 4404 no
such project, or one the user is not a member of (the same code: it does not tell which slugs exist).
"""

from __future__ import annotations

import asyncio
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from memory.access import NotAllowed, UnknownProject, access_to
from memory.live import listener, revocation
from memory.models import Project, Role

from .forgetting import jobs_json
from .models import ForgetJob

CLOSE_FORBIDDEN = 4403
CLOSE_NOT_FOUND = 4404
POLL_SECONDS = 0.3
JOBS_SHOWN = 20


def _jobs_seen_by(user: Any, slug: str, session_key: str | None = None, *, recheck: bool = False) -> list[dict]:
    """The project's latest jobs, if the user may administer it (else NotAllowed / UnknownProject).

    A project the user is not a member of is UnknownProject, as one that does not exist. With `recheck`
    the login is read again from the session (`revocation.login_user`) instead of trusting `user`."""
    if recheck:
        fresh = revocation.login_user(session_key)
        if fresh is None or fresh.pk != user.pk:
            raise NotAllowed("Log in first.")
        user = fresh
    if user is None or not user.is_authenticated or not user.is_active:
        raise NotAllowed("Log in first.")
    project = Project.objects.filter(slug=slug).first()
    if project is None:
        raise UnknownProject(f"No project {slug!r}.")
    try:
        access = access_to(project, user=user)
    except NotAllowed:
        raise UnknownProject(f"No project {slug!r}.") from None
    access.require(Role.ADMIN, agents=False)
    return jobs_json(list(ForgetJob.objects.filter(project=access.project).order_by("-id")[:JOBS_SHOWN]))


class ForgetJobsConsumer(AsyncJsonWebsocketConsumer):
    poller: asyncio.Task | None = None
    user_group: str | None = None
    ended = False

    async def connect(self) -> None:
        listener.ensure_started()  # revocations (logout, deactivation) arrive through it with "notify"
        self.slug = self.scope["url_route"]["kwargs"]["project_slug"]
        self.user = self.scope.get("user")
        self.session_key = revocation.scope_session_key(self.scope)
        self.session_tag = revocation.session_tag(self.session_key)
        await self.accept()
        jobs = await self._read(recheck=False)
        if jobs is None:
            return
        self.user_group = revocation.user_group(self.user.pk)  # logout, deactivation: closed at once
        await self.channel_layer.group_add(self.user_group, self.channel_name)
        self.sent = jobs
        await self.send_json({"type": "jobs", "jobs": jobs})
        self.poller = asyncio.ensure_future(self._poll())

    async def _read(self, *, recheck: bool = True) -> list[dict] | None:
        """The jobs, or None after closing the socket because the user may not see them. Once open, any
        refusal closes with 4403 (the user knew the project)."""
        try:
            return await database_sync_to_async(_jobs_seen_by)(self.user, self.slug, self.session_key,
                                                                recheck=recheck)
        except NotAllowed:
            await self._end(CLOSE_FORBIDDEN)
        except UnknownProject:
            await self._end(CLOSE_FORBIDDEN if recheck else CLOSE_NOT_FOUND)
        return None

    async def _end(self, code: int) -> None:
        if not self.ended:
            self.ended = True
            await self.close(code=code)

    async def live_revoked(self, event: dict[str, Any]) -> None:
        """The user logged out (this socket's Django session, or all of them) or was deactivated or deleted."""
        if revocation.concerns(event, self.session_tag):
            if self.poller is not None:
                self.poller.cancel()
            await self._end(CLOSE_FORBIDDEN)

    async def _poll(self) -> None:
        while True:
            await asyncio.sleep(POLL_SECONDS)
            jobs = await self._read()
            if jobs is None or self.ended:
                return
            if jobs != self.sent:
                self.sent = jobs
                await self.send_json({"type": "jobs", "jobs": jobs})

    async def disconnect(self, code: int) -> None:
        if self.poller is not None:
            self.poller.cancel()
        if self.user_group is not None:
            await self.channel_layer.group_discard(self.user_group, self.channel_name)

    async def receive_json(self, content: Any, **kwargs) -> None:
        await self.send_json({"type": "error", "error": "this socket only sends; it expects nothing"})
