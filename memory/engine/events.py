"""The only publisher of live events. Events leave only after the transaction commits.

Each change goes to its session group (`session.<id>`) and its project group (`project.<id>`); a
session-less entity change also to `project-wide.<id>`, which every session page of the project joins.
How a change reaches browsers in *other* processes depends on `settings.LIVE_TRANSPORT`
(docs/live.md):

- "layer" (with REDIS_URL): every process sends straight into the shared channel layer here.
- "notify" (embedded default, in-memory layer): a trigger on the change log runs `pg_notify` in the
  writer's transaction, so PostgreSQL delivers a small notification at commit to the web server's
  listener (`memory.live.listener`), which reads the changes back and sends them to its layer.
  In the process that runs that listener this module sends nothing itself: every change, local or
  not, takes the one NOTIFY path, so none is delivered twice and all arrive in commit order.
  Elsewhere (workers, commands, tests) it still sends to the process's own in-memory layer, which
  reaches consumers in that same process only.

Clients order by change id and fill gaps from the change log, so delivery may be at-most-once.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from typing import TYPE_CHECKING, Any

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.db import transaction

from .snapshots import change_snapshot

if TYPE_CHECKING:
    from ..models import GraphChange

logger = logging.getLogger(__name__)

EVENT_TYPE = "graph.changed"  # handled by SessionGraphConsumer.graph_changed
MAX_BATCH = 500  # changes per group message, like a catch-up page


def session_group(session_id: int) -> str:
    return f"session.{session_id}"


def project_group(project_id: int) -> str:
    return f"project.{project_id}"


# Changes with no session that every open page of the project must see (an entity renamed or merged
# changes the names on memories of many sessions). Session pages join this group besides their own.
# Not entity.deleted: forgetting deletes entities whose names came from the forgotten text.
# Membership changes go there too: a session socket whose user lost access closes (memory/consumers.py).
PROJECT_WIDE_OPS = frozenset({"entity.updated", "entity.merged", "entity.created", "member.removed",
                              "member.role_changed"})


def project_wide_group(project_id: int) -> str:
    return f"project-wide.{project_id}"


def _project_wide(session_id: int | None, op: str) -> bool:
    return session_id is None and op in PROJECT_WIDE_OPS


def publish_on_commit(changes: list[GraphChange]) -> None:
    """Queue the changes for publication once (and only if) their transaction commits."""
    transaction.on_commit(lambda: publish(changes))


PUBLISH_READ_ROWS = 5000  # change rows read back per publication


def publish_stored_on_commit(change_ids: list[int]) -> None:
    """Changes the server wrote itself (`changelog.changes_append_select`): read back and published once
    their transaction commits, only if someone in this process's layer may listen."""
    if change_ids:
        transaction.on_commit(lambda: _publish_stored(change_ids))


def _publish_stored(change_ids: list[int]) -> None:
    if _bridge_delivers():
        return
    layer = get_channel_layer()
    if layer is None or (isinstance(layer, InMemoryChannelLayer) and not any(layer.groups.values())):
        return
    from ..models import GraphChange

    for start in range(0, len(change_ids), PUBLISH_READ_ROWS):
        publish(list(GraphChange.objects.filter(pk__any_of=change_ids[start:start + PUBLISH_READ_ROWS]).order_by("id")))


def publish(changes: list[GraphChange]) -> None:
    """Send committed changes to their groups; a broken channel layer never fails the caller."""
    if _bridge_delivers():
        return
    layer = get_channel_layer()
    if layer is None or _nobody_listens(layer, changes):
        return
    async_to_sync(send_snapshots)(layer, [change_snapshot(c) for c in changes])  # one event-loop round trip


def _nobody_listens(layer: Any, changes: list[GraphChange]) -> bool:
    """A process-local layer with no member in any target group (a worker, a command): skip the send,
    which would cost an event-loop round trip per change for nothing."""
    if not isinstance(layer, InMemoryChannelLayer):
        return False
    groups = {project_group(c.project_id) for c in changes} | {session_group(c.session_id) for c in changes
                                                                 if c.session_id}
    groups |= {project_wide_group(c.project_id) for c in changes if _project_wide(c.session_id, c.op)}
    return not any(layer.groups.get(group) for group in groups)


_bridged = False  # set by memory.live.listener in the process that runs the PostgreSQL bridge


def bridge_attach(active: bool) -> None:
    """Called by the listener when it takes over (or gives back) delivery in this process."""
    global _bridged
    _bridged = active


def _bridge_delivers() -> bool:
    return _bridged


def group_messages(snapshots: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The messages to send per group: changes in id order, at most MAX_BATCH per message."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for payload in sorted(snapshots, key=lambda c: c["id"]):
        groups[project_group(payload["project_id"])].append(payload)
        if payload["session_id"]:
            groups[session_group(payload["session_id"])].append(payload)
        elif _project_wide(None, payload["op"]):
            groups[project_wide_group(payload["project_id"])].append(payload)
    messages: dict[str, list[dict[str, Any]]] = {}
    for group, payloads in groups.items():
        messages[group] = [
            {"type": EVENT_TYPE, "changes": chunk, "last_change_id": chunk[-1]["id"]}
            for chunk in (payloads[i:i + MAX_BATCH] for i in range(0, len(payloads), MAX_BATCH))
        ]
    return messages


async def send_snapshots(layer: Any, snapshots: list[dict[str, Any]]) -> None:
    """Send change snapshots to their session and project groups, in id order."""
    for group, messages in group_messages(snapshots).items():
        for message in messages:
            try:
                await layer.group_send(group, message)
            except Exception:  # noqa: BLE001 - the change is committed; the log lets clients catch up
                logger.exception("publishing %d change(s) to %s failed", len(message["changes"]), group)
