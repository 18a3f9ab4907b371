"""The forget page's live progress: ws/projects/<slug>/forget/ (the project's admins only).

Server → client `{"type": "jobs", "jobs": [<job>…]}` (newest first, job_json's shape) on connect and
whenever a job's state, phase or counter changed. The job may run in a worker process and writes its
progress outside its own transaction, so the table is polled (every POLL_SECONDS, only while a page
is open); access is asked again at each poll, so an admin who lost the role is closed with 4403.
Close codes as for the session socket: 4403 not allowed, 4404 no such project.
"""

from __future__ import annotations

import asyncio
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from memory.access import NotAllowed, UnknownProject, project_access
from memory.models import Role

from .forgetting import jobs_json
from .models import ForgetJob

CLOSE_FORBIDDEN = 4403
CLOSE_NOT_FOUND = 4404
POLL_SECONDS = 0.3
JOBS_SHOWN = 20


def _jobs_seen_by(user: Any, slug: str) -> list[dict]:
    """The project's latest jobs, if the user may administer it (else NotAllowed / UnknownProject)."""
    if user is None or not user.is_authenticated or not user.is_active:
        raise NotAllowed("Log in first.")
    access = project_access(slug, user=user).require(Role.ADMIN, agents=False)
    return jobs_json(list(ForgetJob.objects.filter(project=access.project).order_by("-id")[:JOBS_SHOWN]))


class ForgetJobsConsumer(AsyncJsonWebsocketConsumer):
    poller: asyncio.Task | None = None

    async def connect(self) -> None:
        self.slug = self.scope["url_route"]["kwargs"]["project_slug"]
        await self.accept()
        jobs = await self._read()
        if jobs is None:
            return
        self.sent = jobs
        await self.send_json({"type": "jobs", "jobs": jobs})
        self.poller = asyncio.ensure_future(self._poll())

    async def _read(self) -> list[dict] | None:
        """The jobs, or None after closing the socket because the user may not see them."""
        try:
            return await database_sync_to_async(_jobs_seen_by)(self.scope.get("user"), self.slug)
        except NotAllowed:
            await self.close(code=CLOSE_FORBIDDEN)
        except UnknownProject:
            await self.close(code=CLOSE_NOT_FOUND)
        return None

    async def _poll(self) -> None:
        while True:
            await asyncio.sleep(POLL_SECONDS)
            jobs = await self._read()
            if jobs is None:
                return
            if jobs != self.sent:
                self.sent = jobs
                await self.send_json({"type": "jobs", "jobs": jobs})

    async def disconnect(self, code: int) -> None:
        if self.poller is not None:
            self.poller.cancel()

    async def receive_json(self, content: Any, **kwargs) -> None:
        await self.send_json({"type": "error", "error": "this socket only sends; it expects nothing"})
