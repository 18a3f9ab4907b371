"""The only publisher of live events. Events leave only after the transaction commits.

Each change goes to its session group (`session.<id>`) and its project group (`project.<id>`).
Clients order by change id and fill gaps from the change log, so delivery may be at-most-once.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

from .snapshots import change_snapshot

if TYPE_CHECKING:
    from ..models import GraphChange

logger = logging.getLogger(__name__)


def session_group(session_id: int) -> str:
    return f"session.{session_id}"


def project_group(project_id: int) -> str:
    return f"project.{project_id}"


def publish_on_commit(change: GraphChange) -> None:
    """Queue the change for publication once (and only if) its transaction commits."""
    transaction.on_commit(lambda: publish([change]))


def publish(changes: list[GraphChange]) -> None:
    """Send committed changes to their groups; a broken channel layer never fails the caller."""
    layer = get_channel_layer()
    if layer is None:
        return
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for change in sorted(changes, key=lambda c: c.id):
        payload = change_snapshot(change)
        groups[project_group(change.project_id)].append(payload)
        if change.session_id:
            groups[session_group(change.session_id)].append(payload)
    async_to_sync(_send_all)(layer, groups)  # one event-loop round trip for all groups


async def _send_all(layer: Any, groups: dict[str, list[dict[str, Any]]]) -> None:
    for group, payloads in groups.items():
        message = {"type": "graph.changed", "changes": payloads, "last_change_id": payloads[-1]["id"]}
        try:
            await layer.group_send(group, message)
        except Exception:  # noqa: BLE001 - the change is committed; the log lets clients catch up
            logger.exception("publishing %d change(s) to %s failed", len(payloads), group)
