"""Appending to the change log, in the caller's transaction, in commit order.

Ids come from a sequence, so two concurrent transactions could commit their changes out of id
order and a reader polling "after id N" would skip the late one. To make the id order the commit
order, a writer takes a per-project transaction-level advisory lock before its first change; it
is released at commit, so changes of one project are numbered in the order they become visible.
"""

from __future__ import annotations

from typing import Any

from django.db import connection
from django.utils import timezone
from psycopg.types.json import Jsonb

from ..models import AgentSession, GraphChange, Project
from . import events

ENGINE_ACTOR = "engine"
LOCK_NAMESPACE = 0x4357  # "CW": keeps our advisory locks apart from other users of the database
# Lock and append in one round trip: the lock is taken in FROM, before the row (and its id) is made.
_APPEND = (
    f"INSERT INTO {GraphChange._meta.db_table} "
    "(project_id, session_id, actor, op, object_type, object_id, before, after, created_at) "
    "SELECT %s, %s, %s, %s, %s, %s, %s, %s, %s FROM (SELECT pg_advisory_xact_lock(%s, %s)) AS lock RETURNING id"
)


def change_record(
    *, project: Project, session: AgentSession | None, actor: str, op: str, object_type: str,
    object_id: int | None, before: dict[str, Any] | None = None, after: dict[str, Any] | None = None,
) -> GraphChange:
    """Append one change; it is published to live listeners only after the commit."""
    if not connection.in_atomic_block:
        raise RuntimeError("change_record must run inside the transaction of the change it records")
    change = GraphChange(project=project, session=session, actor=actor, op=op, object_type=object_type,
                         object_id=object_id, before=before, after=after, created_at=timezone.now())
    with connection.cursor() as cursor:
        cursor.execute(_APPEND, [
            project.pk, session.pk if session else None, actor, op, object_type, object_id,
            None if before is None else Jsonb(before), None if after is None else Jsonb(after), change.created_at,
            LOCK_NAMESPACE, project.pk,
        ])
        change.id = cursor.fetchone()[0]
    events.publish_on_commit(change)
    return change
