"""Live view: one websocket per session, streaming the session's change-log events."""

from __future__ import annotations

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from .engine.events import session_group
from .models import AgentSession, Membership

CLOSE_FORBIDDEN = 4403


class SessionGraphConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self) -> None:
        self.session_id = int(self.scope["url_route"]["kwargs"]["session_id"])
        user = self.scope.get("user")
        if user is None or not user.is_authenticated or not await self._may_view(user):
            await self.close(code=CLOSE_FORBIDDEN)
            return
        self.group = session_group(self.session_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def graph_changed(self, event: dict) -> None:
        await self.send_json(
            {"type": "changes", "changes": event["changes"], "last_change_id": event["last_change_id"]}
        )

    @database_sync_to_async
    def _may_view(self, user) -> bool:
        session = AgentSession.objects.filter(pk=self.session_id).only("project_id").first()
        if session is None:
            return False
        return user.is_superuser or Membership.objects.filter(project_id=session.project_id, user=user).exists()
