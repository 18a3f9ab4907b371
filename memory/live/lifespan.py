"""ASGI lifespan: start the PostgreSQL bridge when the server starts, stop it when it stops.

uvicorn speaks lifespan; servers that do not (daphne) start the bridge on the first websocket
instead (SessionGraphConsumer.connect), so either way one listener runs per server process.
"""

from __future__ import annotations

import logging

from . import listener

logger = logging.getLogger(__name__)


async def lifespan_app(scope, receive, send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            try:
                listener.ensure_started()
            except Exception as exc:  # noqa: BLE001 - the site works without live updates
                logger.exception("live: could not start the change listener")
                await send({"type": "lifespan.startup.failed", "message": str(exc)})
                return
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await listener.stop()
            await send({"type": "lifespan.shutdown.complete"})
            return
